//! The machine-readable verdicts of the sanity checks: `checks.json`, written by
//! `bmk report` into the results directory beside `report.html`, and the counts in
//! `run.json`'s `checks` (`{"fail": N, "warn": N}`), so that a script (a CI job, a
//! sweep driver) can refuse a bad run without reading the page.
//!
//! `checks.json` is an array with one object per finding, in the report's order:
//!
//! ```json
//! [{"check": "errors", "level": 1, "severity": "fail", "value": 98.99,
//!   "threshold": 1.0, "message": "errors: level-0001 (4 users): ..."}]
//! ```
//!
//! An empty array means every check ran and none triggered.

use std::path::Path;

use bmk_results::atomic_file;
use bmk_results::results_dir::{CheckCounts, RUN_FILE};
use serde::Serialize;

use crate::checks::{Finding, Severity};
use crate::Error;

/// The file name of the verdicts in a results directory.
pub const CHECKS_FILE: &str = "checks.json";

/// One finding as `checks.json` stores it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// The check's stable id (`errors`, `stall`, ...).
    pub check: &'static str,
    /// The level's 1-based run-order index, or `null` for a finding about the run.
    pub level: Option<u32>,
    /// `fail` or `warn`.
    pub severity: Severity,
    /// The number that tripped the check, if it has one.
    pub value: Option<f64>,
    /// The limit it crossed.
    pub threshold: Option<f64>,
    /// The line the report shows.
    pub message: String,
}

impl From<&Finding> for Verdict {
    fn from(f: &Finding) -> Verdict {
        // JSON has no NaN or infinity: a number that is not finite is left out.
        let finite = |v: Option<f64>| v.filter(|x| x.is_finite());
        Verdict {
            check: f.kind.id(),
            level: f.level_index,
            severity: f.severity,
            value: finite(f.value),
            threshold: finite(f.threshold),
            message: f.line(),
        }
    }
}

/// Failures and warnings among `verdicts`.
pub fn counts(verdicts: &[Verdict]) -> CheckCounts {
    CheckCounts {
        fail: verdicts
            .iter()
            .filter(|v| v.severity == Severity::Fail)
            .count() as u32,
        warn: verdicts
            .iter()
            .filter(|v| v.severity == Severity::Warn)
            .count() as u32,
    }
}

/// Writes `checks.json` into `dir` (atomically) and, when `dir` has a `run.json`,
/// rewrites it with the counts in `checks`. `run.json` is edited as a JSON object, so
/// fields this version does not know are kept.
pub fn write(dir: &Path, verdicts: &[Verdict]) -> Result<(), Error> {
    atomic_file::replace_json(&dir.join(CHECKS_FILE), &verdicts)?;

    let run_path = dir.join(RUN_FILE);
    let Ok(run_text) = std::fs::read_to_string(&run_path) else {
        return Ok(());
    };
    let mut run: serde_json::Value =
        serde_json::from_str(&run_text).map_err(|e| json_error(&run_path, e))?;
    let Some(obj) = run.as_object_mut() else {
        return Ok(());
    };
    let c = counts(verdicts);
    obj.insert(
        "checks".into(),
        serde_json::to_value(c).map_err(|e| json_error(&run_path, e))?,
    );
    Ok(atomic_file::replace_json(&run_path, &run)?)
}

fn json_error(path: &Path, source: serde_json::Error) -> Error {
    Error::Results(bmk_results::Error::Json {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::CheckKind;

    fn finding(severity: Severity, value: Option<f64>) -> Finding {
        Finding {
            kind: CheckKind::Stall,
            level: Some("level-0002 (4 users)".into()),
            level_index: Some(2),
            message: "3 stalled interval(s)".into(),
            severity,
            value,
            threshold: Some(10.0),
        }
    }

    #[test]
    fn checks_json_and_the_counts_in_run_json() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(RUN_FILE),
            r#"{"schema":"bmk-run","status":"completed","a_field_of_a_later_version":[1,2]}"#,
        )
        .unwrap();
        let v: Vec<Verdict> = [
            finding(Severity::Fail, Some(3.0)),
            finding(Severity::Warn, Some(f64::NAN)),
        ]
        .iter()
        .map(Verdict::from)
        .collect();
        write(dir.path(), &v).unwrap();
        let checks: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join(CHECKS_FILE)).unwrap())
                .unwrap();
        assert_eq!(
            checks,
            serde_json::json!([
                {"check": "stall", "level": 2, "severity": "fail", "value": 3.0,
                 "threshold": 10.0, "message": "stalls: level-0002 (4 users): 3 stalled interval(s)"},
                {"check": "stall", "level": 2, "severity": "warn", "value": null,
                 "threshold": 10.0, "message": "stalls: level-0002 (4 users): 3 stalled interval(s)"}
            ])
        );
        let run: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join(RUN_FILE)).unwrap())
                .unwrap();
        assert_eq!(run["checks"], serde_json::json!({"fail": 1, "warn": 1}));
        assert_eq!(run["a_field_of_a_later_version"], serde_json::json!([1, 2]));

        // No finding: an empty array, and zero counts.
        write(dir.path(), &[]).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join(CHECKS_FILE)).unwrap(),
            "[]\n"
        );
        let run: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join(RUN_FILE)).unwrap())
                .unwrap();
        assert_eq!(run["checks"], serde_json::json!({"fail": 0, "warn": 0}));
    }

    #[test]
    fn a_level_folder_without_run_json_gets_checks_json_only() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &[Verdict::from(&finding(Severity::Warn, None))]).unwrap();
        assert!(dir.path().join(CHECKS_FILE).is_file());
        assert!(!dir.path().join(RUN_FILE).exists());
    }
}
