//! `bmk merge`, `bmk report` and `bmk compare`: the subcommands that read finished runs.
//! This module only parses their arguments, calls the analysis crate and prints or
//! writes what it returns.

use std::path::{Path, PathBuf};

use anyhow::Result;
use bmk_analysis::{MergeOptions, RunData};

use crate::user_error::user_error;

fn fail(message: impl Into<String>) -> anyhow::Error {
    user_error(message)
}

fn analysis_error(e: bmk_analysis::Error) -> anyhow::Error {
    fail(e.to_string())
}

/// The sanity checks of the results directory `dir`, one line each (`title, level:
/// message`): what the kit prints at the end of a sweep.
pub fn check_lines(dir: &Path) -> Result<Vec<String>, String> {
    let run = RunData::read(dir).map_err(|e| e.to_string())?;
    Ok(bmk_analysis::checks::run_checks(&run)
        .iter()
        .map(|f| match &f.level {
            Some(level) => format!("{}, {level}: {}", f.kind.title(), f.message),
            None => format!("{}: {}", f.kind.title(), f.message),
        })
        .collect())
}

/// Arguments of one subcommand: paths and `--name[=value]` options.
struct Args {
    paths: Vec<PathBuf>,
    options: Vec<(String, Option<String>)>,
}

impl Args {
    /// Splits `args`; `with_value` names the options that take a value (given as
    /// `--name=VALUE` or `--name VALUE`), `flags` those that do not.
    fn parse(command: &str, args: &[String], with_value: &[&str], flags: &[&str]) -> Result<Args> {
        let mut out = Args {
            paths: Vec::new(),
            options: Vec::new(),
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let Some(opt) = a.strip_prefix("--") else {
                out.paths.push(PathBuf::from(a));
                continue;
            };
            let (name, value) = match opt.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (opt, None),
            };
            if with_value.contains(&name) {
                let value = match value {
                    Some(v) => v,
                    None => it
                        .next()
                        .cloned()
                        .ok_or_else(|| fail(format!("bmk {command}: --{name} needs a value")))?,
                };
                out.options.push((name.to_string(), Some(value)));
            } else if flags.contains(&name) && value.is_none() {
                out.options.push((name.to_string(), None));
            } else {
                let mut known: Vec<String> =
                    with_value.iter().map(|n| format!("--{n}=VALUE")).collect();
                known.extend(flags.iter().map(|n| format!("--{n}")));
                return Err(fail(format!(
                    "bmk {command}: unknown option {a} (valid: {})",
                    known.join(", ")
                )));
            }
        }
        Ok(out)
    }

    fn flag(&self, name: &str) -> bool {
        self.options.iter().any(|(n, _)| n == name)
    }

    fn value(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_deref())
    }
}

/// Runs `bmk COMMAND ARGS...` when COMMAND is one of [`COMMANDS`].
pub fn dispatch(args: &[String]) -> Option<Result<i32>> {
    let (command, rest) = args.split_first()?;
    match command.as_str() {
        "merge" => Some(merge(rest)),
        "report" => Some(report(rest)),
        "compare" => Some(compare(rest)),
        _ => None,
    }
}

fn read_inputs(command: &str, paths: &[PathBuf]) -> Result<Vec<RunData>> {
    if paths.is_empty() {
        return Err(fail(format!(
            "bmk {command}: give one or more results directories or files"
        )));
    }
    paths
        .iter()
        .map(|p| RunData::read(p).map_err(analysis_error))
        .collect()
}

const MERGE_USAGE: &str =
    "usage: bmk merge [--mixed] [--partial] [--allow-duplicates] [--results=FILE.json] [--results-dir=DIR] FILE|DIR...";

fn merge(args: &[String]) -> Result<i32> {
    let a = Args::parse(
        "merge",
        args,
        &["results", "results-dir"],
        &["mixed", "partial", "allow-duplicates", "help"],
    )?;
    if a.flag("help") {
        println!("{MERGE_USAGE}");
        return Ok(0);
    }
    if a.paths.len() < 2 {
        return Err(fail(format!(
            "bmk merge: give two or more inputs ({MERGE_USAGE})"
        )));
    }
    let inputs = read_inputs("merge", &a.paths)?;
    let merged = bmk_analysis::merge_runs(
        &inputs,
        MergeOptions {
            mixed: a.flag("mixed"),
            partial: a.flag("partial"),
            allow_duplicates: a.flag("allow-duplicates"),
            ..MergeOptions::default()
        },
    )
    .map_err(analysis_error)?;
    let several = merged.levels.len() > 1;
    for level in &merged.levels {
        let Some(result) = &level.result else {
            continue;
        };
        let f = &result.final_stats;
        if several {
            println!("{} ({} users):", level.name(), level.info.users);
        }
        println!(
            "Merged {} results: {} threads over a common window of {:.3}s\n",
            level.info.processes, f.threads, f.time_total_s
        );
        print!("{}", bmk_analysis::output::final_report_text(result));
    }
    if let Some(path) = a.value("results") {
        if several {
            return Err(fail(
                "bmk merge: --results writes one level; these inputs have several: use --results-dir=DIR",
            ));
        }
        let file = merged
            .levels
            .first()
            .and_then(bmk_analysis::output::level_results_file)
            .ok_or_else(|| fail("bmk merge: nothing to write"))?;
        bmk_analysis::output::write_results_file(Path::new(path), &file).map_err(analysis_error)?;
    }
    if let Some(dir) = a.value("results-dir") {
        bmk_analysis::output::write_results_dir(Path::new(dir), &merged, inputs.first())
            .map_err(analysis_error)?;
    }
    Ok(0)
}

const REPORT_USAGE: &str = "usage: bmk report [--output=FILE.html] DIR";

fn report(args: &[String]) -> Result<i32> {
    let a = Args::parse("report", args, &["output"], &["help"])?;
    if a.flag("help") {
        println!("{REPORT_USAGE}");
        return Ok(0);
    }
    let [path] = a.paths.as_slice() else {
        return Err(fail(format!(
            "bmk report: give one results directory ({REPORT_USAGE})"
        )));
    };
    let run = RunData::read(path).map_err(analysis_error)?;
    let report = bmk_analysis::report::Report::build(&run).map_err(analysis_error)?;
    let html = bmk_analysis::page::render("report", &report).map_err(analysis_error)?;
    let out = match a.value("output") {
        Some(o) => PathBuf::from(o),
        None if path.is_dir() => path.join("report.html"),
        None => path.with_extension("html"),
    };
    bmk_analysis::output::write_atomic(&out, html.as_bytes()).map_err(analysis_error)?;
    // The verdicts and steady windows go beside the run's files (a results directory or
    // a level folder); a lone results file has no directory of its own to hold them.
    if path.is_dir() {
        bmk_analysis::output::write_steady(path, &report.steady).map_err(analysis_error)?;
        bmk_analysis::verdicts::write(path, &report.verdicts).map_err(analysis_error)?;
    }
    print!("{}", report.text_summary());
    println!("\nreport written to {}", out.display());
    Ok(0)
}

const COMPARE_USAGE: &str =
    "usage: bmk compare [--mixed] [--output=FILE.html] [--fail-if-slower=PCT] DIR_A DIR_B...";

/// Exit code of `bmk compare --fail-if-slower` when a side is slower.
const SLOWER_EXIT: i32 = 2;

fn compare(args: &[String]) -> Result<i32> {
    let a = Args::parse(
        "compare",
        args,
        &["output", "fail-if-slower"],
        &["help", "mixed"],
    )?;
    if a.flag("help") {
        println!("{COMPARE_USAGE}");
        return Ok(0);
    }
    let limit = match a.value("fail-if-slower") {
        Some(v) => Some(
            v.trim_end_matches('%')
                .parse::<f64>()
                .ok()
                .filter(|p| p.is_finite() && *p >= 0.0)
                .ok_or_else(|| {
                    fail(format!(
                        "bmk compare: invalid --fail-if-slower value '{v}' (a percentage such as 5)"
                    ))
                })?,
        ),
        None => None,
    };
    if a.paths.len() < 2 {
        return Err(fail(format!(
            "bmk compare: give two or more results directories ({COMPARE_USAGE})"
        )));
    }
    let runs = read_inputs("compare", &a.paths)?;
    let opts = bmk_analysis::compare::CompareOptions {
        mixed: a.flag("mixed"),
    };
    let cmp = bmk_analysis::compare::compare(&runs, opts).map_err(analysis_error)?;
    print!("{}", cmp.text_summary());
    if let Some(out) = a.value("output") {
        let html = bmk_analysis::page::render("compare", &cmp).map_err(analysis_error)?;
        bmk_analysis::output::write_atomic(Path::new(out), html.as_bytes())
            .map_err(analysis_error)?;
        println!("\ncomparison written to {out}");
    }
    if let Some(limit) = limit {
        let slower = cmp.slower_than(limit);
        if !slower.is_empty() {
            eprintln!(
                "bmk compare: {} level(s) significantly slower than A by more than {limit} %",
                slower.len()
            );
            return Ok(SLOWER_EXIT);
        }
    }
    Ok(0)
}
