//! The raw capture files of a results directory: server and OS status sampled during a
//! level, kept unfiltered so that analysis can happen later.
//!
//! A capture file is a sequence of samples. Each sample starts with a timestamp line
//!
//! ```text
//! TS 1764100805.000000000 2025-11-25 20:00:05
//! ```
//!
//! (`TS`, the wall clock as Unix seconds with 9 decimals, then the same instant as a UTC
//! date and time), followed by the sample's body: the raw contents of a `/proc` file, the
//! text of `SHOW ENGINE INNODB STATUS`, or a result set as a [`Table`]: a header line of
//! column names and one line per row, fields separated by tabs, with tab, newline,
//! carriage return and backslash escaped as `\t`, `\n`, `\r`, `\\`, and SQL NULL written
//! `NULL` (the layout of the `mysql` client's batch mode, so the files read like the
//! output of the shell loops people used to run).
//!
//! The file names are fixed here so that the sampler (the kit) and the readers (the
//! analysis) agree; `docs/results-dir.md` lists them. Nothing here samples or decides
//! what a number means.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bmk_report::host::rfc3339_utc;

/// MySQL/MariaDB `SHOW GLOBAL STATUS` (a table `Variable_name`, `Value`).
pub const MYSQL_GLOBAL_STATUS: &str = "global_status.txt";
/// MySQL/MariaDB `SHOW ENGINE INNODB STATUS` (the `Status` text, raw).
pub const MYSQL_INNODB_STATUS: &str = "innodb_status.txt";
/// MySQL/MariaDB `SHOW FULL PROCESSLIST` (a table).
pub const MYSQL_PROCESSLIST: &str = "processlist.txt";
/// MySQL/MariaDB `SHOW GLOBAL VARIABLES` at the start (a table, one sample).
pub const MYSQL_VARIABLES: &str = "variables.txt";
/// PostgreSQL `pg_stat_database` (a table).
pub const PG_STAT_DATABASE: &str = "pg_stat_database.txt";
/// PostgreSQL `pg_stat_bgwriter` (a table).
pub const PG_STAT_BGWRITER: &str = "pg_stat_bgwriter.txt";
/// PostgreSQL 17+ `pg_stat_checkpointer` (a table).
pub const PG_STAT_CHECKPOINTER: &str = "pg_stat_checkpointer.txt";
/// PostgreSQL `pg_stat_activity` (a table).
pub const PG_STAT_ACTIVITY: &str = "pg_stat_activity.txt";
/// PostgreSQL `pg_settings` at the start (a table, one sample).
pub const PG_SETTINGS: &str = "pg_settings.txt";
/// PostgreSQL `pg_stat_user_tables` of the benchmark's database (a table): per-table
/// row counters, for the unfair table groups check.
pub const PG_STAT_USER_TABLES: &str = "pg_stat_user_tables.txt";
/// MySQL `performance_schema.table_io_waits_summary_by_table` rows of the benchmark's
/// schema (a table: `OBJECT_NAME`, `COUNT_READ`, `COUNT_WRITE`, ...), when
/// `performance_schema` is on.
pub const MYSQL_TABLE_IO: &str = "table_io_waits.txt";
/// MariaDB/Percona `information_schema.TABLE_STATISTICS` rows of the benchmark's schema
/// (a table: `TABLE_NAME`, `ROWS_READ`, `ROWS_CHANGED`, ...), when `userstat` is on and
/// `performance_schema` is not.
pub const MYSQL_TABLE_STATISTICS: &str = "table_statistics.txt";
/// Server events the sampler noticed (one line per event, e.g. a restart).
pub const SERVER_EVENTS: &str = "events.txt";
/// The `/proc` files of the client host sampled under `os/`, by file name.
pub const OS_FILES: [(&str, &str); 6] = [
    ("loadavg.txt", "/proc/loadavg"),
    ("stat.txt", "/proc/stat"),
    ("meminfo.txt", "/proc/meminfo"),
    ("diskstats.txt", "/proc/diskstats"),
    ("net_dev.txt", "/proc/net/dev"),
    ("vmstat.txt", "/proc/vmstat"),
];
/// `/proc/<pid>/stat` of every bmk process running the level (one line each), so the
/// client's own CPU time can be told from the host's.
pub const OS_CLIENT_STAT: &str = "client_stat.txt";

/// The timestamp line that starts a sample taken at `t` (with its newline).
pub fn sample_header(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let stamp = rfc3339_utc(t); // 2025-11-25T20:00:05.123Z
    let date = &stamp[..10];
    let time = &stamp[11..19];
    format!("TS {}.{:09} {date} {time}\n", d.as_secs(), d.subsec_nanos())
}

/// The instant of a timestamp line, if `line` is one.
pub fn parse_header(line: &str) -> Option<SystemTime> {
    let rest = line.strip_prefix("TS ")?;
    let mut parts = rest.split(' ');
    let stamp = parts.next()?;
    let (date, time) = (parts.next()?, parts.next()?);
    if parts.next().is_some() || date.len() != 10 || time.len() != 8 {
        return None;
    }
    let (secs, nanos) = stamp.split_once('.')?;
    if nanos.len() != 9 {
        return None;
    }
    let secs: u64 = secs.parse().ok()?;
    let nanos: u32 = nanos.parse().ok()?;
    Some(UNIX_EPOCH + Duration::new(secs, nanos))
}

/// One sample of a capture file.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample<'a> {
    /// When it was taken.
    pub at: SystemTime,
    /// Its body, without the timestamp line.
    pub body: &'a str,
}

impl Sample<'_> {
    /// Seconds since the Unix epoch.
    pub fn unix_s(&self) -> f64 {
        self.at
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64()
    }
}

/// Splits the text of a capture file into its samples, in file order. Text before the
/// first timestamp line is ignored.
pub fn samples(text: &str) -> Vec<Sample<'_>> {
    let mut out: Vec<Sample<'_>> = Vec::new();
    let mut current: Option<(SystemTime, usize)> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if let Some(at) = parse_header(line.trim_end_matches(['\n', '\r'])) {
            if let Some((t, start)) = current.take() {
                out.push(Sample {
                    at: t,
                    body: &text[start..offset],
                });
            }
            current = Some((at, offset + line.len()));
        }
        offset += line.len();
    }
    if let Some((t, start)) = current {
        out.push(Sample {
            at: t,
            body: &text[start..],
        });
    }
    out
}

/// A result set in a capture file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    /// Column names.
    pub columns: Vec<String>,
    /// Rows; `None` is SQL NULL.
    pub rows: Vec<Vec<Option<String>>>,
}

impl Table {
    /// The table as sample body text (header line, then rows, each ending in `\n`).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        push_fields(&mut out, self.columns.iter().map(|c| Some(c.as_str())));
        for row in &self.rows {
            push_fields(&mut out, row.iter().map(|v| v.as_deref()));
        }
        out
    }

    /// Parses a sample body written by [`Table::to_text`].
    pub fn parse(body: &str) -> Table {
        let mut lines = body.lines().filter(|l| !l.is_empty());
        let columns = match lines.next() {
            Some(h) => h.split('\t').map(unescape).collect(),
            None => return Table::default(),
        };
        let rows = lines
            .map(|l| {
                l.split('\t')
                    .map(|f| (f != "NULL").then(|| unescape(f)))
                    .collect()
            })
            .collect();
        Table { columns, rows }
    }

    /// The index of column `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.eq_ignore_ascii_case(name))
    }

    /// For a two-column name/value table (`SHOW GLOBAL STATUS`): the value of `name`.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.rows
            .iter()
            .find(|r| r.first().and_then(|v| v.as_deref()) == Some(name))
            .and_then(|r| r.get(1))
            .and_then(|v| v.as_deref())
    }
}

fn push_fields<'a>(out: &mut String, fields: impl Iterator<Item = Option<&'a str>>) {
    for (i, f) in fields.enumerate() {
        if i > 0 {
            out.push('\t');
        }
        match f {
            None => out.push_str("NULL"),
            Some(s) => escape_into(out, s),
        }
    }
    out.push('\n');
}

fn escape_into(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip() {
        let t = UNIX_EPOCH + Duration::new(1_764_100_805, 5_000_000);
        let h = sample_header(t);
        assert_eq!(h, "TS 1764100805.005000000 2025-11-25 20:00:05\n");
        assert_eq!(parse_header(h.trim_end()), Some(t));
        assert_eq!(parse_header("TS 17 2025-11-25 20:00:05"), None);
        assert_eq!(parse_header("TSX"), None);
    }

    #[test]
    fn samples_split_on_headers_only() {
        let t1 = UNIX_EPOCH + Duration::from_secs(100);
        let t2 = UNIX_EPOCH + Duration::from_secs(105);
        let text = format!(
            "junk\n{}a b\nTS not a header\n{}c\n",
            sample_header(t1),
            sample_header(t2)
        );
        let s = samples(&text);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].body, "a b\nTS not a header\n");
        assert_eq!(s[1].body, "c\n");
        assert_eq!(s[1].unix_s(), 105.0);
    }

    #[test]
    fn tables_escape_and_keep_nulls() {
        let t = Table {
            columns: vec!["Id".into(), "Info".into()],
            rows: vec![
                vec![Some("1".into()), Some("SELECT 1\n\tFROM t\\x".into())],
                vec![Some("2".into()), None],
            ],
        };
        let text = t.to_text();
        assert_eq!(text.lines().count(), 3);
        assert_eq!(Table::parse(&text), t);
        let status = Table::parse("Variable_name\tValue\nUptime\t42\nQuestions\t7\n");
        assert_eq!(status.value("Questions"), Some("7"));
        assert_eq!(status.column("value"), Some(1));
    }
}
