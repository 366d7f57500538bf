//! `bmk report --export`: every chart of a report as a CSV of the values it draws and
//! as an SVG file, for gnuplot, R, a spreadsheet or another document.
//!
//! The CSVs are tidy (one value a row) and carry the run's scenario and target, the
//! level and its users, so the files of several runs can be concatenated and filtered.
//! Like `summary.csv`, fields are never quoted: names have their separators replaced,
//! so the files also read with `cut` and `awk`. A value the chart leaves out (an
//! interval that completed nothing) has no row.

use crate::charts::XScale;
use crate::report::{Chart, Report};
use bmk_results::load::RunData;
use bmk_results::results_dir::csv_name;

/// One file to write: its name and its contents.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportFile {
    /// File name, no directory (`03-sweep-timeline-throughput.csv`).
    pub name: String,
    /// The contents.
    pub contents: String,
}

/// Where a chart sits in the report: its level and users, when it is a level's.
struct Place<'a> {
    level: &'a str,
    users: Option<u32>,
}

/// The files of `report` (built from `run`): for each chart in page order, `NN-title.csv`
/// and `NN-title.svg`.
pub fn files(report: &Report, run: &RunData) -> Vec<ExportFile> {
    let manifest = run.manifest.as_ref();
    let scenario = manifest
        .and_then(|m| m.scenario.as_deref())
        .unwrap_or_default();
    let target = manifest
        .and_then(|m| m.target.as_deref())
        .unwrap_or_default();
    let mut charts: Vec<(&Chart, Place)> = Vec::new();
    for c in report.scalability.iter().chain(&report.timeline) {
        let whole_run = Place {
            level: "",
            users: None,
        };
        charts.push((c, whole_run));
    }
    for l in &report.levels {
        for c in l.charts.iter().chain(&l.metric_charts) {
            charts.push((
                c,
                Place {
                    level: &l.name,
                    users: Some(l.steady.users),
                },
            ));
        }
    }
    let mut out = Vec::with_capacity(charts.len() * 2);
    for (i, (chart, place)) in charts.iter().enumerate() {
        let stem = format!("{:02}-{}", i + 1, slug(&chart.title));
        out.push(ExportFile {
            name: format!("{stem}.csv"),
            contents: csv(chart, place, scenario, target),
        });
        out.push(ExportFile {
            name: format!("{stem}.svg"),
            contents: chart.svg.clone(),
        });
    }
    out
}

/// `Sweep timeline: throughput` → `sweep-timeline-throughput`.
fn slug(title: &str) -> String {
    let mut out = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

/// What the x values of `chart` are, as a column name: `time_s` for seconds, `users`
/// (then the row's users column holds them), `percentile`, else `x`.
fn x_column(chart: &Chart) -> &'static str {
    let label = chart.data.x_label.as_str();
    if chart.data.x_scale == XScale::Nines {
        "percentile"
    } else if label == "users" {
        "users"
    } else if label.starts_with("seconds") {
        "time_s"
    } else {
        "x"
    }
}

/// The chart's values, a row each: scenario, target, level, users, x, series, value,
/// unit.
fn csv(chart: &Chart, place: &Place, scenario: &str, target: &str) -> String {
    let x_col = x_column(chart);
    let mut out = if x_col == "users" {
        "scenario,target,level,users,series,value,unit\n".to_string()
    } else {
        format!("scenario,target,level,users,{x_col},series,value,unit\n")
    };
    let unit = csv_name(&chart.data.y_label);
    let (scenario, target) = (csv_name(scenario), csv_name(target));
    let users = place.users.map(|u| u.to_string()).unwrap_or_default();
    for (name, points) in &chart.data.series {
        let name = csv_name(name);
        for &(x, y) in points.iter().filter(|p| p.1.is_finite()) {
            if x_col == "users" {
                out.push_str(&format!(
                    "{scenario},{target},{},{x},{name},{y},{unit}\n",
                    place.level
                ));
            } else {
                out.push_str(&format!(
                    "{scenario},{target},{},{users},{x},{name},{y},{unit}\n",
                    place.level
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_become_file_names() {
        assert_eq!(
            slug("level-0001 (8 users): latency"),
            "level-0001-8-users-latency"
        );
        assert_eq!(
            slug("bmk processes' CPU (100 % = one core)"),
            "bmk-processes-cpu-100-one-core"
        );
    }
}
