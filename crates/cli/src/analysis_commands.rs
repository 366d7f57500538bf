//! `bmk merge`, `bmk report` and `bmk compare`: the subcommands that read finished runs.
//! This module only parses their arguments (one clap definition per subcommand, below),
//! calls the results model and the analysis crate and prints or writes what it returns.

use std::path::{Path, PathBuf};

use anyhow::Result;
use bmk_results::{MergeOptions, RunData};
use clap::{CommandFactory, Parser};

use crate::user_error::user_error;

fn fail(message: impl Into<String>) -> anyhow::Error {
    user_error(message)
}

/// A failure of the results model or the analysis, worded for the user.
fn analysis_error(e: impl std::fmt::Display) -> anyhow::Error {
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

/// The findings that make level `index` of the results directory `dir` unfit as a
/// capacity-search probe, one line each: the checks that say its numbers do not
/// measure the load it was given (errors above the failing share, stalls, no steady
/// state, a server restart, a level that did not complete). Warnings about the host or
/// the data do not reject a probe: they concern every level alike.
pub fn probe_rejections(dir: &Path, index: u32) -> Result<Vec<String>, String> {
    use bmk_analysis::checks::{CheckKind, Severity};
    let run = RunData::read(dir).map_err(|e| e.to_string())?;
    Ok(bmk_analysis::checks::run_checks(&run)
        .iter()
        .filter(|f| f.level_index == Some(index))
        .filter(|f| match f.kind {
            CheckKind::Stall
            | CheckKind::NeverSteady
            | CheckKind::ServerRestart
            | CheckKind::UnfinishedLevel
            | CheckKind::UnusableLevel => true,
            CheckKind::Errors => f.severity == Severity::Fail,
            _ => false,
        })
        .map(|f| format!("{}: {}", f.kind.title(), f.message))
        .collect())
}

/// `bmk merge`'s arguments.
#[derive(Parser, Debug)]
#[command(
    name = "bmk merge",
    about = "Merges the results of processes or hosts that ran the same benchmark at the same time into one exact result",
    long_about = None,
    after_help = "Examples:\n  bmk merge host1.json host2.json --results=all.json\n  bmk merge run-a/ run-b/ --results-dir=merged\n\nSee docs/report.md.",
    disable_version_flag = true,
    term_width = 100,
    args_override_self = true
)]
struct MergeArgs {
    /// Results files (--results=FILE.json of each process) or results directories; two or more
    #[arg(value_name = "FILE|DIR")]
    inputs: Vec<PathBuf>,
    /// Merge even when the inputs' test or workload options differ or their measured
    /// windows did not overlap in time (e.g. a read-only and a write-only client).
    /// Example: bmk merge --mixed reads.json writes.json
    #[arg(long)]
    mixed: bool,
    /// Merge even when a client of the run is missing or stopped early; the result is
    /// then the others' alone, and is said to be partial.
    /// Example: bmk merge --partial --results-dir=merged client-*/
    #[arg(long)]
    partial: bool,
    /// Merge inputs that are the same run (the same results file twice, or two copies
    /// of one directory), which would count every event twice.
    /// Example: bmk merge --allow-duplicates a.json copy-of-a.json
    #[arg(long = "allow-duplicates")]
    allow_duplicates: bool,
    /// Write the merged result as one results file (inputs with one level only).
    /// Example: --results=all.json
    #[arg(long, value_name = "FILE.json")]
    results: Option<String>,
    /// Write a new results directory, level by level, with the first input's server
    /// captures. Example: --results-dir=merged
    #[arg(long = "results-dir", value_name = "DIR")]
    results_dir: Option<String>,
}

/// `bmk report`'s arguments.
#[derive(Parser, Debug)]
#[command(
    name = "bmk report",
    about = "Writes one self-contained HTML report of a results directory (charts, per-level table, sanity checks) and prints its summary",
    long_about = None,
    after_help = "Examples:\n  bmk report results/20261128T0900-OLTP_RW_1M_1tab-trx\n  bmk report run.json --output=run.html\n\nSee docs/report.md.",
    disable_version_flag = true,
    term_width = 100,
    args_override_self = true
)]
struct ReportArgs {
    /// A results directory (from 'bmk kit run' or 'bmk kit sweep') or a results file
    #[arg(value_name = "DIR")]
    inputs: Vec<PathBuf>,
    /// Where to write the page [default: DIR/report.html, or FILE.html for a results
    /// file]. Example: --output=/tmp/report.html
    #[arg(long, value_name = "FILE.html")]
    output: Option<String>,
    /// Also write every chart into DIR, as a CSV of its values (tidy: scenario, target,
    /// level, users, time or users, series, value, unit) and as an SVG file. Example:
    /// --export=/tmp/charts
    #[arg(long, value_name = "DIR")]
    export: Option<PathBuf>,
    /// Serve the page over HTTP instead of writing it, rendered again as the directory
    /// changes (a sweep still running: the page reloads itself every 2 s), until
    /// Ctrl-C. PORT listens on 127.0.0.1. Example: --serve=8080
    #[arg(long, value_name = "[HOST:]PORT")]
    serve: Option<String>,
}

/// `bmk compare`'s arguments.
#[derive(Parser, Debug)]
#[command(
    name = "bmk compare",
    about = "Compares two or more runs level by level: the change against the first (A), its 95 % confidence interval and a verdict",
    long_about = None,
    after_help = "Examples:\n  bmk compare results/before results/after\n  bmk compare before/ after/ --output=cmp.html --fail-if-slower=5\n\nSee docs/report.md.",
    disable_version_flag = true,
    term_width = 100,
    args_override_self = true
)]
struct CompareArgs {
    /// Results directories or files; the first is A, the others are compared with it
    #[arg(value_name = "DIR_A DIR_B")]
    inputs: Vec<PathBuf>,
    /// Also write the comparison as a page with overlaid charts.
    /// Example: --output=compare.html
    #[arg(long, value_name = "FILE.html")]
    output: Option<String>,
    /// Exit with status 2 when some level of a side is significantly slower than A by
    /// more than PCT % (for CI). Example: --fail-if-slower=5
    #[arg(long = "fail-if-slower", value_name = "PCT")]
    fail_if_slower: Option<String>,
    /// Compare runs of different workloads, scenarios or data sizes, which are refused
    /// otherwise (their throughputs measure different work).
    /// Example: bmk compare --mixed oltp-rw/ tpcc/
    #[arg(long)]
    mixed: bool,
}

/// Parses `args` with `P`: `--help` prints and returns `Err(Ok(0))`; a usage error is
/// one line naming the command, with clap's suggestion when it has one.
fn parse<P: Parser>(args: &[String]) -> std::result::Result<P, Result<i32>> {
    let argv = std::iter::once(String::new()).chain(args.iter().cloned());
    P::try_parse_from(argv).map_err(|e| match e.kind() {
        clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
            print!("{}", e.render());
            Ok(0)
        }
        _ => {
            let mut cmd = P::command();
            Err(fail(bmk_kit::args::usage_line(&mut cmd, &e)))
        }
    })
}

/// Runs `bmk COMMAND ARGS...` when COMMAND is `merge`, `report` or `compare`.
pub fn dispatch(args: &[String]) -> Option<Result<i32>> {
    let (command, rest) = args.split_first()?;
    match command.as_str() {
        "merge" => Some(merge(rest)),
        "report" => Some(report(rest)),
        "compare" => Some(compare(rest)),
        _ => None,
    }
}

/// The help of `bmk COMMAND`, for `bmk help COMMAND`.
pub fn help_of(command: &str) -> Option<String> {
    let mut cmd = match command {
        "merge" => MergeArgs::command(),
        "report" => ReportArgs::command(),
        "compare" => CompareArgs::command(),
        _ => return None,
    };
    Some(cmd.render_help().to_string())
}

/// The usage line of `bmk COMMAND`.
fn usage(mut cmd: clap::Command) -> String {
    cmd.render_usage().to_string().replace("Usage: ", "usage: ")
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

fn merge(args: &[String]) -> Result<i32> {
    let a: MergeArgs = match parse(args) {
        Ok(a) => a,
        Err(done) => return done,
    };
    if a.inputs.len() < 2 {
        return Err(fail(format!(
            "bmk merge: give two or more inputs ({})",
            usage(MergeArgs::command())
        )));
    }
    let inputs = read_inputs("merge", &a.inputs)?;
    let merged = bmk_results::merge_runs(
        &inputs,
        MergeOptions {
            mixed: a.mixed,
            partial: a.partial,
            allow_duplicates: a.allow_duplicates,
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
            println!(
                "{} ({}):",
                level.name(),
                bmk_results::load::users(level.info.users)
            );
        }
        println!(
            "Merged {} results: {} threads over a common window of {:.3}s\n",
            level.info.processes, f.threads, f.time_total_s
        );
        print!("{}", bmk_results::dir_writer::final_report_text(result));
    }
    if let Some(path) = &a.results {
        if several {
            return Err(fail(
                "bmk merge: --results writes one level; these inputs have several: use --results-dir=DIR",
            ));
        }
        let file = merged
            .levels
            .first()
            .and_then(bmk_results::dir_writer::level_results_file)
            .ok_or_else(|| fail("bmk merge: nothing to write"))?;
        bmk_results::dir_writer::write_results_file(Path::new(path), &file)
            .map_err(analysis_error)?;
    }
    if let Some(dir) = &a.results_dir {
        bmk_results::dir_writer::write_results_dir(Path::new(dir), &merged, inputs.first())
            .map_err(analysis_error)?;
    }
    Ok(0)
}

fn report(args: &[String]) -> Result<i32> {
    let a: ReportArgs = match parse(args) {
        Ok(a) => a,
        Err(done) => return done,
    };
    let [path] = a.inputs.as_slice() else {
        return Err(fail(format!(
            "bmk report: give one results directory ({})",
            usage(ReportArgs::command())
        )));
    };
    if let Some(raw) = &a.serve {
        if a.output.is_some() {
            return Err(fail("bmk report: --serve and --output exclude each other"));
        }
        if a.export.is_some() {
            return Err(fail("bmk report: --serve and --export exclude each other"));
        }
        let addr = crate::report_server::parse_addr(raw).map_err(fail)?;
        let interrupt = crate::signals::install()?;
        return crate::report_server::serve(addr, path, &interrupt);
    }
    let run = RunData::read(path).map_err(analysis_error)?;
    let report = bmk_analysis::report::Report::build(&run).map_err(analysis_error)?;
    let html = bmk_analysis::page::render("report", &report).map_err(analysis_error)?;
    let out = match &a.output {
        Some(o) => PathBuf::from(o),
        None if path.is_dir() => path.join("report.html"),
        None => path.with_extension("html"),
    };
    bmk_results::atomic_file::replace(&out, html.as_bytes()).map_err(analysis_error)?;
    // The verdicts and steady windows go beside the run's files (a results directory or
    // a level folder); a lone results file has no directory of its own to hold them.
    if path.is_dir() {
        bmk_analysis::steady::write_steady(path, &report.steady).map_err(analysis_error)?;
        bmk_analysis::verdicts::write(path, &report.verdicts).map_err(analysis_error)?;
    }
    if let Some(dir) = &a.export {
        let files = bmk_analysis::export::files(&report, &run);
        std::fs::create_dir_all(dir)
            .map_err(|e| fail(format!("bmk report: cannot create {}: {e}", dir.display())))?;
        for f in &files {
            bmk_results::atomic_file::replace(&dir.join(&f.name), f.contents.as_bytes())
                .map_err(analysis_error)?;
        }
        eprintln!("exported {} charts to {}", files.len() / 2, dir.display());
    }
    print!("{}", report.text_summary());
    println!("\nreport written to {}", out.display());
    Ok(0)
}

/// Exit code of `bmk compare --fail-if-slower` when a side is slower.
const SLOWER_EXIT: i32 = 2;

fn compare(args: &[String]) -> Result<i32> {
    let a: CompareArgs = match parse(args) {
        Ok(a) => a,
        Err(done) => return done,
    };
    let limit = match &a.fail_if_slower {
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
    if a.inputs.len() < 2 {
        return Err(fail(format!(
            "bmk compare: give two or more results directories ({})",
            usage(CompareArgs::command())
        )));
    }
    let runs = read_inputs("compare", &a.inputs)?;
    let opts = bmk_analysis::compare::CompareOptions { mixed: a.mixed };
    let cmp = bmk_analysis::compare::compare(&runs, opts).map_err(analysis_error)?;
    print!("{}", cmp.text_summary());
    if let Some(out) = &a.output {
        let html = bmk_analysis::page::render("compare", &cmp).map_err(analysis_error)?;
        bmk_results::atomic_file::replace(Path::new(out), html.as_bytes())
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
