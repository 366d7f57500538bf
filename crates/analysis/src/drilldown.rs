//! From a notch to its cause: for each interval of a level that stalled or completed
//! nothing, what the server was doing at that moment, from the raw samples the kit
//! captured then — the processlist's sessions counted by state and listed, the lines
//! of `SHOW ENGINE INNODB STATUS` that explain a stall (checkpoint age, pending reads
//! and flushes, semaphore waits, history list), PostgreSQL's `pg_stat_activity` wait
//! events. Shown on the page itself: no server is needed to read it afterwards.

use serde::Serialize;

use bmk_results::capture::{self, Sample, Table};
use bmk_results::load::Level;

use crate::series::LevelSeries;

/// At most this many sessions are listed per notch (the counts cover all of them).
const MAX_SESSIONS: usize = 30;
/// A session's statement is cut to this many characters.
const MAX_STATEMENT: usize = 160;

/// InnoDB status lines worth showing beside a stall, by the words they start with or
/// contain.
const INNODB_LINES: [&str; 9] = [
    "Log sequence number",
    "Last checkpoint at",
    "Pending",
    "History list length",
    "has waited at",
    "OS WAIT ARRAY INFO",
    "Mutex spin waits",
    "RW-shared spins",
    "RW-excl spins",
];

/// One stalled or empty interval and the server's samples taken during it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Notch {
    /// HTML anchor: `level-0002-t3`.
    pub anchor: String,
    /// Seconds since the level's measured start at the interval's end.
    pub at_s: f64,
    /// `nothing completed` or `stall (12.0 TPS)`.
    pub why: String,
    /// Sessions by state (`Execute: Waiting for table metadata lock`), most first.
    pub states: Vec<(String, usize)>,
    /// Sessions listed: the processlist's, or `pg_stat_activity`'s, columns as below.
    pub session_columns: Vec<String>,
    /// The listed sessions' fields.
    pub sessions: Vec<Vec<String>>,
    /// Seconds into the level of the session sample shown (it falls in the interval).
    pub sessions_at_s: Option<f64>,
    /// The InnoDB status lines that matter, from the sample taken in the interval.
    pub innodb: Vec<String>,
}

/// The notches of `level`: its stalled intervals and the intervals that completed no
/// event, in time order.
pub fn notches(level: &Level) -> Vec<Notch> {
    let s = LevelSeries::of(level);
    let start_s = level.info.start_unix_ns as f64 / 1e9;
    let processlist = level.server_capture(capture::MYSQL_PROCESSLIST);
    let activity = level.server_capture(capture::PG_STAT_ACTIVITY);
    let innodb = level.server_capture(capture::MYSQL_INNODB_STATUS);
    let mut out = Vec::new();
    for (i, line) in level.intervals.iter().enumerate() {
        let r = &line.record;
        let why = if r.events == 0 {
            "nothing completed".to_string()
        } else if s.stalls.contains(&i) {
            format!("stall ({:.1} TPS)", r.tps)
        } else {
            continue;
        };
        let end_s = line.end_unix_ns as f64 / 1e9;
        let span = (end_s - r.interval_s, end_s);
        let mut notch = Notch {
            anchor: format!("{}-t{}", level.name(), r.time_s.round()),
            at_s: r.time_s,
            why,
            ..Notch::default()
        };
        if let Some(text) = &processlist {
            if let Some(sample) = sample_in(text, span) {
                notch.sessions_at_s = Some(sample.unix_s() - start_s);
                mysql_sessions(&Table::parse(sample.body), &mut notch);
            }
        } else if let Some(text) = &activity {
            if let Some(sample) = sample_in(text, span) {
                notch.sessions_at_s = Some(sample.unix_s() - start_s);
                pg_sessions(&Table::parse(sample.body), &mut notch);
            }
        }
        if let Some(text) = &innodb {
            if let Some(sample) = sample_in(text, span) {
                notch.innodb = innodb_excerpt(sample.body);
            }
        }
        out.push(notch);
    }
    out
}

/// The sample of `text` nearest the middle of `span` (Unix seconds) among those taken
/// within it, or within half a second of its ends (a sampler's tick can land a moment
/// after the interval it belongs to).
fn sample_in(text: &str, span: (f64, f64)) -> Option<Sample<'_>> {
    let middle = (span.0 + span.1) / 2.0;
    capture::samples(text)
        .into_iter()
        .filter(|s| (span.0 - 0.5..=span.1 + 0.5).contains(&s.unix_s()))
        .min_by(|a, b| {
            (a.unix_s() - middle)
                .abs()
                .total_cmp(&(b.unix_s() - middle).abs())
        })
}

/// Counts `keys` (most first, then by name).
fn counted(keys: impl Iterator<Item = String>) -> Vec<(String, usize)> {
    let mut m: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for k in keys {
        *m.entry(k).or_default() += 1;
    }
    let mut v: Vec<(String, usize)> = m.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

fn field(t: &Table, row: &[Option<String>], name: &str) -> String {
    t.column(name)
        .and_then(|i| row.get(i))
        .and_then(|v| v.clone())
        .unwrap_or_default()
}

fn cut(s: &str) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(MAX_STATEMENT) {
        Some((at, _)) => format!("{}…", &one_line[..at]),
        None => one_line,
    }
}

/// `SHOW FULL PROCESSLIST`: sessions by command and state, the sampler's own left out.
fn mysql_sessions(t: &Table, notch: &mut Notch) {
    let rows: Vec<&Vec<Option<String>>> = t
        .rows
        .iter()
        .filter(|r| !field(t, r, "Info").starts_with("SHOW FULL PROCESSLIST"))
        .collect();
    notch.states = counted(rows.iter().map(|r| {
        let (cmd, state) = (field(t, r, "Command"), field(t, r, "State"));
        if state.is_empty() {
            cmd
        } else {
            format!("{cmd}: {state}")
        }
    }));
    // Waiting sessions first (longest first), idle ones last.
    let mut listed: Vec<&Vec<Option<String>>> = rows.clone();
    listed.sort_by_key(|r| {
        let idle = field(t, r, "Command") == "Sleep";
        let time: i64 = field(t, r, "Time").parse().unwrap_or(0);
        (idle, -time)
    });
    list_sessions(
        t,
        &listed,
        &["Id", "db", "Command", "Time", "State", "Info"],
        notch,
    );
}

/// Lists the first [`MAX_SESSIONS`] of `rows` in `notch`, with `columns`.
fn list_sessions(t: &Table, rows: &[&Vec<Option<String>>], columns: &[&str], notch: &mut Notch) {
    notch.session_columns = columns.iter().map(|c| c.to_string()).collect();
    notch.sessions = rows
        .iter()
        .take(MAX_SESSIONS)
        .map(|r| columns.iter().map(|c| cut(&field(t, r, c))).collect())
        .collect();
}

/// `pg_stat_activity`: client backends by state and wait event, the sampler's own left
/// out.
fn pg_sessions(t: &Table, notch: &mut Notch) {
    let rows: Vec<&Vec<Option<String>>> = t
        .rows
        .iter()
        .filter(|r| {
            field(t, r, "backend_type") == "client backend"
                && !field(t, r, "query").contains("pg_stat_activity")
        })
        .collect();
    notch.states = counted(rows.iter().map(|r| {
        let state = field(t, r, "state");
        match (field(t, r, "wait_event_type"), field(t, r, "wait_event")) {
            (ty, ev) if !ty.is_empty() => format!("{state}: {ty}/{ev}"),
            _ => state,
        }
    }));
    list_sessions(
        t,
        &rows,
        &[
            "pid",
            "datname",
            "state",
            "wait_event_type",
            "wait_event",
            "query",
        ],
        notch,
    );
}

/// The lines of an InnoDB status sample that explain a stall.
fn innodb_excerpt(body: &str) -> Vec<String> {
    let t = Table::parse(body);
    let text = t
        .column("Status")
        .and_then(|i| t.rows.first()?.get(i)?.clone())
        .unwrap_or_else(|| body.to_string());
    text.lines()
        .map(str::trim)
        .filter(|l| INNODB_LINES.iter().any(|k| l.contains(k)))
        .take(24)
        .map(cut)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processlist_sessions_are_counted_by_state_waiting_first() {
        let body = "Id\tUser\tHost\tdb\tCommand\tTime\tState\tInfo\n\
                    1\troot\tlocalhost\tsb\tQuery\t0\tstarting\tSHOW FULL PROCESSLIST\n\
                    2\troot\tlocalhost\tsb\tSleep\t9\t\tNULL\n\
                    3\troot\tlocalhost\tsb\tExecute\t2\tWaiting for table metadata lock\tSELECT c FROM sbtest1 WHERE id=?\n\
                    4\troot\tlocalhost\tsb\tExecute\t3\tWaiting for table metadata lock\tSELECT c FROM sbtest1 WHERE id=?\n";
        let mut n = Notch::default();
        mysql_sessions(&Table::parse(body), &mut n);
        assert_eq!(
            n.states,
            vec![
                ("Execute: Waiting for table metadata lock".to_string(), 2),
                ("Sleep".to_string(), 1)
            ]
        );
        let ids: Vec<&str> = n.sessions.iter().map(|s| s[0].as_str()).collect();
        assert_eq!(ids, ["4", "3", "2"]);
    }

    #[test]
    fn pg_sessions_are_counted_by_wait_event() {
        let body = "pid\tdatname\tstate\twait_event_type\twait_event\tquery\tbackend_type\n\
                    10\tsb\tactive\tLock\ttransactionid\tUPDATE sbtest1 SET k=k+1 WHERE id=$1\tclient backend\n\
                    11\tsb\tactive\tLock\ttransactionid\tUPDATE sbtest1 SET k=k+1 WHERE id=$1\tclient backend\n\
                    12\tsb\tidle\tClient\tClientRead\tCOMMIT\tclient backend\n\
                    13\t\t\tActivity\tCheckpointerMain\t\tcheckpointer\n";
        let mut n = Notch::default();
        pg_sessions(&Table::parse(body), &mut n);
        assert_eq!(
            n.states,
            vec![
                ("active: Lock/transactionid".to_string(), 2),
                ("idle: Client/ClientRead".to_string(), 1)
            ]
        );
        assert_eq!(n.sessions.len(), 3);
    }

    #[test]
    fn long_statements_are_cut_on_one_line() {
        let long = format!("SELECT\n  {}", "x, ".repeat(100));
        let c = cut(&long);
        assert!(c.ends_with('…') && !c.contains('\n'));
        assert_eq!(c.chars().count(), MAX_STATEMENT + 1);
    }
}
