//! Report hooks: the `stat` tables handed to `sysbench.hooks.report_*` and the stock
//! printers `sysbench.report_default`, `report_csv` and `report_json`, which accept
//! whatever `stat` table a script passes them.
//!
//! The `stat` table is `bmk-report`'s [`ReportStat`], and the CSV line is its format;
//! this module converts between Lua tables and that struct and writes the result to
//! standard output. The text line and the JSON element are laid out here: they are what
//! sysbench's Lua printers print, which differs from the built-in reports of
//! `bmk-report` (see [`print_text`], [`print_json`]).

use std::cell::RefCell;
use std::io::Write;

use bmk_engine::{CumulativeStats, IntervalStats};
use bmk_report::printf::fixed;
use bmk_report::{Layout, LineOptions, ReportStat};
use mlua::{Lua, Table};

/// Per-state settings of the printers.
pub(crate) struct ReportSettings {
    /// Layout, `--percentile`, time decimals and rate mode of text lines.
    pub line: LineOptions,
    /// Whether `report_json` has opened its array.
    pub json_open: RefCell<bool>,
}

impl ReportSettings {
    pub(crate) fn new(percentile: f64, interval: f64, rate_mode: bool) -> ReportSettings {
        ReportSettings {
            line: LineOptions::new(Layout::Db, percentile, interval, rate_mode),
            json_open: RefCell::new(false),
        }
    }
}

/// The `stat` table of an intermediate report.
pub(crate) fn interval_table(lua: &Lua, s: &IntervalStats, percentile: f64) -> mlua::Result<Table> {
    let stat = ReportStat::from_interval(s, percentile);
    let t = stat_table(lua, &stat)?;
    t.set("queue_length", stat.queue_length as f64)?;
    t.set("concurrency", stat.concurrency as f64)?;
    Ok(t)
}

/// The `stat` table of the final report. Every worker has ended by then, so as in
/// sysbench no thread is running.
pub(crate) fn cumulative_table(
    lua: &Lua,
    s: &CumulativeStats,
    percentile: f64,
) -> mlua::Result<Table> {
    let stat = ReportStat::from_cumulative(s, 0, percentile);
    let t = stat_table(lua, &stat)?;
    t.set("latency_min", stat.latency_min)?;
    t.set("latency_max", stat.latency_max)?;
    t.set("latency_avg", stat.latency_avg)?;
    t.set("latency_sum", stat.latency_sum)?;
    Ok(t)
}

fn stat_table(lua: &Lua, s: &ReportStat) -> mlua::Result<Table> {
    let t = lua.create_table_with_capacity(0, 16)?;
    t.set("threads_running", s.threads_running)?;
    t.set("time_interval", s.time_interval)?;
    t.set("time_total", s.time_total)?;
    t.set("latency_pct", s.latency_pct)?;
    t.set("events", s.events as f64)?;
    t.set("reads", s.reads as f64)?;
    t.set("writes", s.writes as f64)?;
    t.set("other", s.other as f64)?;
    t.set("errors", s.errors as f64)?;
    t.set("reconnects", s.reconnects as f64)?;
    Ok(t)
}

/// Reads a script-supplied `stat` table (missing fields are 0).
fn read_stat(t: &Table) -> mlua::Result<ReportStat> {
    let num = |k: &str| -> mlua::Result<f64> { Ok(t.get::<Option<f64>>(k)?.unwrap_or(0.0)) };
    let count = |k: &str| -> mlua::Result<u64> { Ok(num(k)?.max(0.0).round() as u64) };
    Ok(ReportStat {
        threads_running: count("threads_running")? as u32,
        time_total: num("time_total")?,
        time_interval: num("time_interval")?,
        events: count("events")?,
        reads: count("reads")?,
        writes: count("writes")?,
        other: count("other")?,
        errors: count("errors")?,
        reconnects: count("reconnects")?,
        latency_pct: num("latency_pct")?,
        queue_length: count("queue_length")?,
        concurrency: count("concurrency")?,
        latency_min: num("latency_min")?,
        latency_max: num("latency_max")?,
        latency_avg: num("latency_avg")?,
        latency_sum: num("latency_sum")?,
        ..ReportStat::default()
    })
}

/// `sysbench.report_default(stat)`: the SQL report line as sysbench's Lua printer
/// words it, which differs from the built-in one: `err/s` without a colon, the
/// percentile as an integer, and no `queue length` line in rate mode. (The time has
/// decimals only with a sub-second `--report-interval`, a bmk extension.) A plain
/// print, as in sysbench: shown at any `--verbosity`.
pub(crate) fn print_text(stat: &Table, settings: &ReportSettings) -> mlua::Result<()> {
    let s = read_stat(stat)?;
    emit(&format!(
        "{}thds: {} tps: {:4.2} qps: {:4.2} (r/w/o: {:4.2}/{:4.2}/{:4.2}) \
         lat (ms,{}%): {:4.2} err/s {:4.2} reconn/s: {:4.2}\n",
        bmk_report::printf::time_prefix(s.time_total, settings.line.time_decimals),
        s.threads_running,
        s.per_sec(s.events),
        s.per_sec(s.queries()),
        s.per_sec(s.reads),
        s.per_sec(s.writes),
        s.per_sec(s.other),
        settings.line.percentile as u32,
        s.latency_pct * 1e3,
        s.per_sec(s.errors),
        s.per_sec(s.reconnects),
    ));
    Ok(())
}

/// `sysbench.report_csv(stat)`: one CSV line, no header.
pub(crate) fn print_csv(stat: &Table, settings: &ReportSettings) -> mlua::Result<()> {
    let stat = read_stat(stat)?;
    emit(&bmk_report::csv::intermediate(
        &stat,
        settings.line.time_decimals,
    ));
    Ok(())
}

/// `sysbench.report_json(stat)`: the next element of a JSON array, as sysbench's
/// printer lays it out: the array opens on a line of its own, each element is an
/// indented object of one field a line with `time` padded to four columns, elements
/// are separated by `,` and a line break, and the array closes with the state
/// ([`close_json`]).
pub(crate) fn print_json(stat: &Table, settings: &ReportSettings) -> mlua::Result<()> {
    let s = read_stat(stat)?;
    let lead = if settings.json_open.replace(true) {
        ",\n"
    } else {
        "[\n"
    };
    let r = |v: f64| fixed(v, 4, 2);
    let time = fixed(s.time_total, 4, settings.line.time_decimals);
    emit(&format!(
        "{lead}  {{\n    \"time\": {time},\n    \"threads\": {},\n    \"tps\": {},\n    \
         \"qps\": {{\n      \"total\": {},\n      \"reads\": {},\n      \"writes\": {},\n      \
         \"other\": {}\n    }},\n    \"latency\": {},\n    \"errors\": {},\n    \
         \"reconnects\": {}\n  }}",
        s.threads_running,
        r(s.per_sec(s.events)),
        r(s.per_sec(s.queries())),
        r(s.per_sec(s.reads)),
        r(s.per_sec(s.writes)),
        r(s.per_sec(s.other)),
        r(s.latency_pct * 1e3),
        r(s.per_sec(s.errors)),
        r(s.per_sec(s.reconnects)),
    ));
    Ok(())
}

/// Closes an open JSON array (after the last element).
pub(crate) fn close_json(settings: &ReportSettings) {
    if settings.json_open.replace(false) {
        emit("\n]\n");
    }
}

/// Writes to standard output and flushes, so lines interleave correctly with output
/// printed by Lua's own `print`.
pub(crate) fn emit(s: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(s.as_bytes());
    let _ = out.flush();
}

extern "C" {
    #[link_name = "stdout"]
    static mut C_STDOUT: *mut libc::FILE;
}

/// C's `stdout` stream, which Lua's `io.write` uses.
pub(crate) fn c_stdout() -> *mut libc::FILE {
    // SAFETY: reading the pointer glibc initialised before main.
    unsafe { C_STDOUT }
}

/// Lua's `print`, replaced so that one call is one write: lines printed by several
/// worker threads at once never interleave (C stdio locks per `fwrite`, and the stock
/// `print` writes each argument separately).
pub(crate) fn print(lua: &Lua, args: mlua::Variadic<mlua::Value>) -> mlua::Result<()> {
    let tostring: mlua::Function = lua.globals().get("tostring")?;
    let mut line = Vec::with_capacity(64);
    for (i, v) in args.iter().enumerate() {
        if i > 0 {
            line.push(b'\t');
        }
        let s: mlua::LuaString = tostring.call(v)?;
        line.extend_from_slice(&s.as_bytes());
    }
    line.push(b'\n');
    // SAFETY: fwrite on the process's stdout stream with a valid buffer; glibc locks
    // the stream for the duration of the call.
    unsafe {
        libc::fwrite(line.as_ptr().cast(), 1, line.len(), c_stdout());
    }
    Ok(())
}
