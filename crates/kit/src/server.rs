//! The benchmark's database server as the kit sees it, through a connection of its
//! own: which driver configuration the run's options describe, the server's version
//! and variables at the start, and queries turned into capture tables.

use std::collections::BTreeMap;

use bmk_results::capture::Table;
use bmk_results::results_dir::ServerInfo;
use bmk_sql::{Connection, Driver, DriverConfig, DriverKind};

use crate::error::KitError;

/// The driver configuration that options (`name` → raw value, `-` separators) describe,
/// or `None` for a run that uses no database (`--db-driver` unset and no SQL test).
pub fn driver_config(get: &dyn Fn(&str) -> Option<String>) -> Result<DriverConfig, KitError> {
    let name = get("db-driver").unwrap_or_else(|| "mysql".to_string());
    let kind = DriverKind::ALL
        .into_iter()
        .find(|k| k.name() == name)
        .ok_or_else(|| KitError::Usage(format!("unknown --db-driver '{name}'")))?;
    DriverConfig::from_options(kind, get).map_err(|e| KitError::Server(e.to_string()))
}

/// Where the server is reached, without credentials.
pub fn address(cfg: &DriverConfig) -> String {
    match cfg.kind {
        DriverKind::Mysql => match cfg.mysql.sockets.first() {
            Some(s) => s.clone(),
            None => format!(
                "{}:{}",
                cfg.mysql
                    .hosts
                    .first()
                    .map(String::as_str)
                    .unwrap_or("localhost"),
                cfg.mysql.ports.first().copied().unwrap_or(3306)
            ),
        },
        DriverKind::Pgsql => format!("{}:{}", cfg.pgsql.host, cfg.pgsql.port),
        DriverKind::Sqlite => cfg.sqlite.db.display().to_string(),
    }
}

/// Opens the kit's own connection.
pub fn connect(cfg: &DriverConfig) -> Result<Box<dyn Connection>, KitError> {
    Driver::new(cfg.clone())
        .connect(0)
        .map_err(|e| KitError::Server(e.to_string()))
}

/// Runs `sql` and returns its rows as a capture table (empty when it returns none).
pub fn query_table(conn: &mut dyn Connection, sql: &str) -> Result<Table, KitError> {
    let rs = conn
        .query(sql)
        .map_err(|e| KitError::Server(format!("{sql}: {e}")))?;
    // Drain further result sets so the connection is ready for the next statement.
    while conn.more_results() {
        let _ = conn.next_result();
    }
    let Some(rs) = rs else {
        return Ok(Table::default());
    };
    let text = |b: Option<&[u8]>| b.map(|b| String::from_utf8_lossy(b).into_owned());
    Ok(Table {
        columns: rs.columns.to_vec(),
        rows: rs
            .rows()
            .map(|r| r.into_iter().map(text).collect())
            .collect(),
    })
}

/// The first value of the first row of `sql`.
pub fn query_value(conn: &mut dyn Connection, sql: &str) -> Result<Option<String>, KitError> {
    let t = query_table(conn, sql)?;
    Ok(t.rows.first().and_then(|r| r.first().cloned()).flatten())
}

/// The statement that lists the server's settings at the start.
pub fn variables_query(kind: DriverKind) -> Option<&'static str> {
    match kind {
        DriverKind::Mysql => Some("SHOW GLOBAL VARIABLES"),
        DriverKind::Pgsql => Some("SELECT * FROM pg_settings ORDER BY name"),
        DriverKind::Sqlite => None,
    }
}

/// Name → value of a settings table (`SHOW GLOBAL VARIABLES`: the first two columns;
/// `pg_settings`: `name` and `setting`).
pub fn settings_map(table: &Table) -> BTreeMap<String, String> {
    let (k, v) = match (table.column("name"), table.column("setting")) {
        (Some(k), Some(v)) => (k, v),
        _ => (0, 1),
    };
    table
        .rows
        .iter()
        .filter_map(|r| {
            let key = r.get(k)?.clone()?;
            let value = r.get(v).cloned().flatten().unwrap_or_default();
            Some((key, value))
        })
        .collect()
}

/// Version and settings of the server, read on `conn`. The settings table is returned
/// too, for the raw capture file.
pub fn describe(
    cfg: &DriverConfig,
    conn: &mut dyn Connection,
) -> Result<(ServerInfo, Option<Table>), KitError> {
    let version_sql = match cfg.kind {
        DriverKind::Sqlite => "SELECT sqlite_version()",
        _ => "SELECT version()",
    };
    let version = query_value(conn, version_sql)?;
    let table = match variables_query(cfg.kind) {
        Some(sql) => Some(query_table(conn, sql)?),
        None => None,
    };
    let info = ServerInfo {
        driver: cfg.kind.name().to_string(),
        version,
        address: Some(address(cfg)),
        variables: table.as_ref().map(settings_map).unwrap_or_default(),
    };
    Ok((info, table))
}
