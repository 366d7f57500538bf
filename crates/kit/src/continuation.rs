//! Taking a results directory up again: `--resume DIR` goes on from the first level
//! that did not complete, `--only-level K` runs level K again. Both first check that
//! the command line asks for the same run as DIR's `run.json` recorded, and keep every
//! level folder they replace beside it, renamed `level-NNNN.1` (`.2`, ... when that
//! exists): not a level name, so reports and merges read the directory as if the
//! replaced folder were gone, and nothing measured is deleted.

use std::path::Path;

use bmk_report::redact::redact_options;
use bmk_results::results_dir::{
    level_dir_name, level_dirs, read_json, LevelInfo, RunManifest, LEVEL_FILE, RESULT_FILE,
};
use bmk_results::results_file::ResultsFile;

use crate::error::KitError;

/// How the directory is taken up.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    /// Go on from the first level that did not complete.
    Resume,
    /// Run this level (1-based) again, and nothing else.
    OnlyLevel(u32),
}

impl Mode {
    /// `resume` or `only-level`, as `run.json` records it.
    pub fn name(&self) -> &'static str {
        match self {
            Mode::Resume => "resume",
            Mode::OnlyLevel(_) => "only-level",
        }
    }
}

/// The ways `now` asks for another run than `then` recorded, each as one phrase
/// naming the option (`--time: 3 in run.json, 5 now`).
pub fn differences(then: &RunManifest, now: &RunManifest) -> Vec<String> {
    let mut out = Vec::new();
    let mut differ = |what: &str, a: String, b: String| {
        if a != b {
            out.push(format!("{what}: {a} in run.json, {b} now"));
        }
    };
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".to_string());
    differ("the scenario", opt(&then.scenario), opt(&now.scenario));
    differ("--target", opt(&then.target), opt(&now.target));
    differ("the test", then.test.clone(), now.test.clone());
    differ(
        "--capture-interval",
        then.capture_interval_s.to_string(),
        now.capture_interval_s.to_string(),
    );
    let (a, b) = (then.sweep.clone(), now.sweep.clone());
    let (a, b) = (a.unwrap_or_default(), b.unwrap_or_default());
    let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    if then.search.is_none() && now.search.is_none() {
        differ("--users", list(&a.users), list(&b.users));
        differ("--repeat", a.repeat.to_string(), b.repeat.to_string());
    }
    differ("--time", a.time_s.to_string(), b.time_s.to_string());
    differ("--warmup", a.warmup_s.to_string(), b.warmup_s.to_string());
    differ("--pause", a.pause_s.to_string(), b.pause_s.to_string());
    differ(
        "--max-users-per-process",
        a.max_users_per_process.to_string(),
        b.max_users_per_process.to_string(),
    );
    match (&then.search, &now.search) {
        (None, None) => {}
        (Some(_), None) => differ("the command", "search".into(), "sweep".into()),
        (None, Some(_)) => differ("the command", "sweep".into(), "search".into()),
        (Some(x), Some(y)) => {
            differ("--by", x.by.clone(), y.by.clone());
            let texts = |v: &[bmk_results::results_dir::ObjectiveRecord]| {
                v.iter()
                    .map(|o| o.text.clone())
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            differ("--slo", texts(&x.objectives), texts(&y.objectives));
            differ("--start", x.start.to_string(), y.start.to_string());
            differ(
                "--max-users/--max-rate",
                x.max.to_string(),
                y.max.to_string(),
            );
            differ(
                "--precision",
                x.precision.to_string(),
                y.precision.to_string(),
            );
            differ("--users", x.users.to_string(), y.users.to_string());
        }
    }
    // Options are compared as run.json stores them: secrets redacted on both sides.
    let now_options: std::collections::BTreeMap<String, String> =
        redact_options(now.options.clone()).into_iter().collect();
    let names: std::collections::BTreeSet<&String> =
        then.options.keys().chain(now_options.keys()).collect();
    // `--time` and `--warmup-time` are the plan's, compared above.
    for name in names
        .into_iter()
        .filter(|n| !["time", "warmup-time"].contains(&n.as_str()))
    {
        let shown = |v: Option<&String>| match v {
            Some(v) => format!("'{v}'"),
            None => "not set".to_string(),
        };
        differ(
            &format!("--{name}"),
            shown(then.options.get(name)),
            shown(now_options.get(name)),
        );
    }
    out
}

/// The levels of `dir` that completed, in run order, from level 1 up to the first that
/// did not (a missing folder, no `result.json`, a status other than `completed`).
pub fn completed_levels(dir: &Path) -> Vec<(LevelInfo, ResultsFile)> {
    let mut out = Vec::new();
    for index in 1.. {
        let path = dir.join(level_dir_name(index));
        let Ok(info) = read_json::<LevelInfo>(&path.join(LEVEL_FILE)) else {
            break;
        };
        let Ok(result) = ResultsFile::read(path.join(RESULT_FILE)) else {
            break;
        };
        if info.status != "completed" || result.status != "completed" {
            break;
        }
        out.push((info, result));
    }
    out
}

/// Renames the level folder `index` of `dir` to the first free `level-NNNN.K`;
/// returns `level-NNNN -> level-NNNN.K`, or `None` when there is no such folder.
pub fn move_aside(dir: &Path, index: u32) -> Result<Option<String>, KitError> {
    let name = level_dir_name(index);
    let from = dir.join(&name);
    if !from.exists() {
        return Ok(None);
    }
    for k in 1.. {
        let kept = format!("{name}.{k}");
        let to = dir.join(&kept);
        if to.exists() {
            continue;
        }
        std::fs::rename(&from, &to).map_err(|e| KitError::io(&from, e))?;
        return Ok(Some(format!("{name} -> {kept}")));
    }
    unreachable!("an unbounded range always yields")
}

/// Moves aside every level folder of `dir` from `index` on (what an interrupted run
/// left of the level it was running, and anything after it).
pub fn move_aside_from(dir: &Path, index: u32) -> Result<Vec<String>, KitError> {
    let mut moved = Vec::new();
    let last = level_dirs(dir)?
        .iter()
        .filter_map(|p| {
            p.file_name()?
                .to_str()?
                .strip_prefix("level-")?
                .parse::<u32>()
                .ok()
        })
        .max()
        .unwrap_or(0);
    for i in index..=last {
        moved.extend(move_aside(dir, i)?);
    }
    Ok(moved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bmk_results::results_dir::SweepPlan;

    #[test]
    fn a_changed_option_is_named() {
        let then = RunManifest {
            scenario: Some("OLTP_RW_500_2tab".into()),
            sweep: Some(SweepPlan {
                users: vec![1, 2, 3],
                time_s: 3.0,
                repeat: 1,
                ..SweepPlan::default()
            }),
            options: [("tables".to_string(), "2".to_string())].into(),
            ..RunManifest::default()
        };
        assert!(differences(&then, &then.clone()).is_empty());
        let mut now = then.clone();
        now.sweep.as_mut().unwrap().time_s = 5.0;
        now.options.insert("tables".into(), "4".into());
        now.options.insert("mysql-password".into(), "secret".into());
        let d = differences(&then, &now);
        assert_eq!(
            d,
            [
                "--time: 3 in run.json, 5 now",
                "--mysql-password: not set in run.json, '***' now",
                "--tables: '2' in run.json, '4' now"
            ]
        );
    }

    #[test]
    fn levels_are_moved_aside_never_over_an_earlier_copy() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["level-0001", "level-0002", "level-0002.1", "level-0003"] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
        }
        let moved = move_aside_from(dir.path(), 2).unwrap();
        assert_eq!(
            moved,
            ["level-0002 -> level-0002.2", "level-0003 -> level-0003.1"]
        );
        let left: Vec<_> = level_dirs(dir.path()).unwrap();
        assert_eq!(left, [dir.path().join("level-0001")]);
        assert!(move_aside(dir.path(), 7).unwrap().is_none());
    }
}
