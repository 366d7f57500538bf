//! What `bmk compare` refuses, leaves out and warns about before any statistics:
//! runs of unlike workloads, levels that did not complete, and runs measured on a
//! host busy with other work.

use std::collections::BTreeMap;

use crate::host_load::{self, HostLoad};
use crate::Error;
use bmk_results::load::{Level, RunData};

/// Workload options that set how much data the run works on (underscores for dashes):
/// sysbench tables and rows, TPC-C warehouses (`tables` × `scale`), dbSTRESS sets.
pub const DATA_SIZE_OPTIONS: [&str; 6] = [
    "tables",
    "table_size",
    "scale",
    "warehouses",
    "obj_tables",
    "obj_table_size",
];

/// `A (dir-name)`.
fn side_name(i: usize, run: &RunData) -> String {
    format!("{} ({})", letter(i), run.label())
}

/// `A`, `B`, ...
pub fn letter(i: usize) -> String {
    char::from(b'A' + (i % 26) as u8).to_string()
}

/// The first way in which `runs` are unlike A: a different test, a different kit
/// scenario (when both recorded one), or different data size options. `None` when
/// they all ran the same workload on the same data.
pub fn first_unlike(runs: &[RunData]) -> Option<String> {
    let first = runs.first()?;
    let sizes = |r: &RunData| -> BTreeMap<String, String> {
        r.options()
            .into_iter()
            .map(|(k, v)| (k.replace('-', "_"), v))
            .filter(|(k, _)| DATA_SIZE_OPTIONS.contains(&k.as_str()))
            .collect()
    };
    let scenario = |r: &RunData| r.manifest.as_ref().and_then(|m| m.scenario.clone());
    let base = sizes(first);
    for (i, other) in runs.iter().enumerate().skip(1) {
        let (a, b) = (side_name(0, first), side_name(i, other));
        if other.test() != first.test() {
            return Some(format!(
                "{a} ran '{}' but {b} ran '{}'",
                first.test(),
                other.test()
            ));
        }
        if let (Some(sa), Some(sb)) = (scenario(first), scenario(other)) {
            if sa != sb {
                return Some(format!("{a} is scenario '{sa}' but {b} is '{sb}'"));
            }
        }
        let theirs = sizes(other);
        for k in DATA_SIZE_OPTIONS {
            let (va, vb) = (base.get(k), theirs.get(k));
            if va != vb {
                let show = |v: Option<&String>| v.map_or("unset".to_string(), |v| v.clone());
                return Some(format!(
                    "--{} is {} in {a} but {} in {b}",
                    k.replace('_', "-"),
                    show(va),
                    show(vb)
                ));
            }
        }
    }
    None
}

/// Refuses runs that are not alike unless `mixed`; with `mixed`, returns the
/// difference so the comparison can say it compared them anyway.
pub fn check_like(runs: &[RunData], mixed: bool) -> Result<Option<String>, Error> {
    match first_unlike(runs) {
        None => Ok(None),
        Some(d) if mixed => Ok(Some(d)),
        Some(d) => Err(Error::Incompatible(format!(
            "cannot compare unlike runs: {d} (use --mixed to compare them anyway)"
        ))),
    }
}

/// Whether a level counts in a comparison: it completed and has its final result.
pub fn comparable(level: &Level) -> bool {
    level.info.status == "completed" && level.result.is_some()
}

/// `level-0003 (16 users, fatal)` for each level of `run` that is left out.
pub fn left_out(run: &RunData) -> Vec<String> {
    run.levels
        .iter()
        .filter(|l| !comparable(l))
        .map(|l| {
            let status = if l.result.is_none() && l.info.status == "completed" {
                "no result.json"
            } else {
                l.info.status.as_str()
            };
            format!("{} ({} users, {status})", l.name(), l.info.users)
        })
        .collect()
}

/// The warning for a run whose host was busy with other work during any of its
/// compared levels, or `None`.
pub fn busy_host_warning(i: usize, run: &RunData) -> Option<String> {
    let clock_ticks = run
        .manifest
        .as_ref()
        .and_then(|m| m.host.clock_ticks_per_s)
        .unwrap_or(100);
    let cores = host_load::host_cores(run);
    let local = host_load::server_is_local(run);
    let loads: Vec<(&Level, HostLoad)> = run
        .levels
        .iter()
        .filter(|l| comparable(l))
        .filter_map(|l| Some((l, host_load::of_level(l, clock_ticks, cores, local)?)))
        .collect();
    let busy: Vec<&(&Level, HostLoad)> = loads.iter().filter(|(_, h)| h.busy()).collect();
    let worst = busy
        .iter()
        .max_by(|a, b| a.1.other_pct.total_cmp(&b.1.other_pct))?;
    let server = if worst.1.server_local {
        " (the database server runs on this host and is counted in it)"
    } else {
        ""
    };
    Some(format!(
        "{}'s host was busy with other work during {} of its {} level(s): up to {:.0} % of its {cores} CPU(s) went to processes other than bmk{server}, at {} users (host {:.0} % busy, bmk {:.0} %); its numbers may reflect that load, not the database",
        side_name(i, run),
        busy.len(),
        loads.len(),
        worst.1.other_pct,
        worst.0.info.users,
        worst.1.busy_pct,
        worst.1.bmk_pct
    ))
}
