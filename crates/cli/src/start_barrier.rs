//! `--barrier NAME --clients N [--barrier-timeout S]` and `cleanup`'s barrier table:
//! the options of a run that starts together with other bmk processes, read into the
//! kit's [`BarrierSettings`]. Joining the barrier and placing its instant on this
//! host's clock is the kit's (`bmk_kit::start_barrier`).

use std::time::Duration;

use bmk_engine::options::OptionSet;
use bmk_kit::start_barrier::BarrierSettings;
use bmk_sql::{Driver, DriverConfig, DriverKind};

use crate::settings::SettingsError;

/// The barrier settings of `opts`, or `None` when no `--barrier` is given.
pub fn settings(opts: &OptionSet) -> Result<Option<BarrierSettings>, SettingsError> {
    let clients = opts.int("clients", 1);
    let Some(name) = opts.string("barrier").filter(|n| !n.is_empty()) else {
        if clients > 1 {
            return Err(SettingsError(
                "--clients needs --barrier NAME: the barrier is how the clients start together"
                    .into(),
            ));
        }
        return Ok(None);
    };
    let kind: DriverKind = opts
        .string("db-driver")
        .unwrap_or_else(|| "mysql".into())
        .parse()
        .map_err(SettingsError)?;
    if kind == DriverKind::Sqlite {
        return Err(SettingsError(
            "--barrier needs a MySQL/MariaDB or PostgreSQL server that every client reaches (--db-driver=sqlite)".into(),
        ));
    }
    let driver =
        DriverConfig::from_options(kind, &|n| opts.raw(n)).map_err(|e| SettingsError(e.message))?;
    let host = bmk_report::host::hostname();
    let job_index = std::env::var("JOB_COMPLETION_INDEX").ok();
    Ok(Some(BarrierSettings {
        name,
        clients: clients as u32,
        timeout: Duration::from_secs(opts.int("barrier-timeout", 300) as u64),
        driver,
        client: bmk_sql::client_identity(job_index.as_deref(), &host, std::process::id()),
    }))
}

/// `cleanup`: drops the barrier table of the run's database, when it has one. Only
/// MySQL/MariaDB and PostgreSQL hold barriers; with another driver nothing is done.
pub fn drop_table(opts: &OptionSet) -> Result<(), String> {
    let kind: DriverKind = opts
        .string("db-driver")
        .unwrap_or_else(|| "mysql".into())
        .parse()?;
    if kind == DriverKind::Sqlite {
        return Ok(());
    }
    let config = DriverConfig::from_options(kind, &|n| opts.raw(n)).map_err(|e| e.message)?;
    let mut conn = Driver::new(config)
        .connect(0)
        .map_err(|e| format!("cannot remove the barrier table: {e}"))?;
    bmk_sql::drop_barrier_table(&mut *conn)
        .map_err(|e| format!("cannot remove the barrier table: {e}"))
}
