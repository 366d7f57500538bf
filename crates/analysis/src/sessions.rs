//! What the server's sessions were doing over time, from the sampled session lists:
//! MySQL/MariaDB's processlist counted by state, PostgreSQL's client backends counted
//! by wait event type. A stall shows here as sessions piling into one state (`Waiting
//! for table metadata lock`, `Lock`), which the rates of counters cannot show.

use std::collections::BTreeMap;

use bmk_results::capture::{self, Table};

/// At most this many states get a line of their own; the rest are summed as `other`.
const MAX_STATES: usize = 6;

/// One line: a state's name and its (Unix seconds, sessions) points.
pub type StateLine = (String, Vec<(f64, f64)>);

/// Sessions per state at each sample of `text`, `key` naming a row's state (`None`
/// leaves the row out). The states with the most sessions over the level get a line
/// each, the rest one `other` line; every line has a point at every sample (0 when no
/// session was in that state).
fn by_state(
    text: &str,
    key: impl Fn(&Table, &[Option<String>]) -> Option<String>,
) -> Vec<StateLine> {
    let samples: Vec<(f64, BTreeMap<String, f64>)> = capture::samples(text)
        .iter()
        .map(|s| {
            let t = Table::parse(s.body);
            let mut counts: BTreeMap<String, f64> = BTreeMap::new();
            for row in &t.rows {
                if let Some(k) = key(&t, row) {
                    *counts.entry(k).or_default() += 1.0;
                }
            }
            (s.unix_s(), counts)
        })
        .collect();
    let mut totals: BTreeMap<&str, f64> = BTreeMap::new();
    for (_, counts) in &samples {
        for (k, n) in counts {
            *totals.entry(k.as_str()).or_default() += n;
        }
    }
    let mut ranked: Vec<(&str, f64)> = totals.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let shown: Vec<&str> = ranked.iter().take(MAX_STATES).map(|r| r.0).collect();
    let mut lines: Vec<StateLine> = shown
        .iter()
        .map(|name| {
            let points = samples
                .iter()
                .map(|(t, c)| (*t, c.get(*name).copied().unwrap_or(0.0)))
                .collect();
            (name.to_string(), points)
        })
        .collect();
    if ranked.len() > MAX_STATES {
        let points = samples
            .iter()
            .map(|(t, c)| {
                let rest: f64 = c
                    .iter()
                    .filter(|(k, _)| !shown.contains(&k.as_str()))
                    .map(|(_, n)| n)
                    .sum();
                (*t, rest)
            })
            .collect();
        lines.push(("other".to_string(), points));
    }
    lines
}

fn field<'a>(t: &Table, row: &'a [Option<String>], name: &str) -> Option<&'a str> {
    row.get(t.column(name)?)?.as_deref()
}

/// `SHOW FULL PROCESSLIST` samples: sessions by state (by command when the state is
/// empty: `Sleep`), the sampler's own statement left out.
pub fn mysql_states(text: &str) -> Vec<StateLine> {
    by_state(text, |t, row| {
        let info = field(t, row, "Info").unwrap_or_default();
        if info.starts_with("SHOW FULL PROCESSLIST") {
            return None;
        }
        let state = field(t, row, "State").unwrap_or_default();
        Some(if state.is_empty() {
            field(t, row, "Command").unwrap_or("?").to_string()
        } else {
            state.to_string()
        })
    })
}

/// `pg_stat_activity` samples: client backends by wait event type, `running` for an
/// active backend that waits on nothing, `idle` for idle ones (the sampler's own query
/// left out).
pub fn pg_wait_types(text: &str) -> Vec<StateLine> {
    by_state(text, |t, row| {
        if field(t, row, "backend_type") != Some("client backend")
            || field(t, row, "query").is_some_and(|q| q.contains("pg_stat_activity"))
        {
            return None;
        }
        let state = field(t, row, "state").unwrap_or_default();
        Some(match field(t, row, "wait_event_type") {
            Some(w) if !w.is_empty() && w != "Client" => w.to_string(),
            _ if state == "active" => "running".to_string(),
            _ => state.to_string(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processlist_states_are_counted_per_sample() {
        let text = "TS 1000.000000000 1970-01-01 00:16:40\nId\tCommand\tState\tInfo\n1\tQuery\tstarting\tSHOW FULL PROCESSLIST\n2\tExecute\tWaiting for table metadata lock\tSELECT 1\n3\tExecute\tWaiting for table metadata lock\tSELECT 1\n4\tSleep\t\tNULL\n\
                    TS 1001.000000000 1970-01-01 00:16:41\nId\tCommand\tState\tInfo\n2\tExecute\tSending data\tSELECT 1\n4\tSleep\t\tNULL\n";
        let lines = mysql_states(text);
        assert_eq!(
            lines,
            vec![
                ("Sleep".to_string(), vec![(1000.0, 1.0), (1001.0, 1.0)]),
                (
                    "Waiting for table metadata lock".to_string(),
                    vec![(1000.0, 2.0), (1001.0, 0.0)]
                ),
                (
                    "Sending data".to_string(),
                    vec![(1000.0, 0.0), (1001.0, 1.0)]
                ),
            ]
        );
    }

    #[test]
    fn pg_backends_are_counted_by_wait_event_type() {
        let text = "TS 1000.000000000 1970-01-01 00:16:40\nstate\twait_event_type\tquery\tbackend_type\nactive\tLock\tUPDATE\tclient backend\nactive\t\tSELECT\tclient backend\nidle\tClient\tCOMMIT\tclient backend\nactive\t\tSELECT * FROM pg_stat_activity\tclient backend\n\tActivity\t\tcheckpointer\n";
        let lines = pg_wait_types(text);
        let names: Vec<&str> = lines.iter().map(|l| l.0.as_str()).collect();
        assert_eq!(names, ["Lock", "idle", "running"]);
    }
}
