//! Report hooks: the `stat` tables handed to `sysbench.hooks.report_*` and the stock
//! printers `sysbench.report_default`, `report_csv` and `report_json` (spec 1 §5
//! formats), which read whatever `stat` table a script passes them.
//!
//! Printing goes to standard output, one line (or JSON object) per call.

use std::cell::Cell;
use std::io::Write;

use bmk_engine::{Counter, CumulativeStats, IntervalStats};
use mlua::{Lua, Table};

/// Per-state settings of the printers.
pub(crate) struct ReportSettings {
    /// `--percentile`, for the `lat (ms,95%)` label.
    pub percentile: f64,
    /// Whether the run is in rate mode (adds the queue-length line).
    pub rate_mode: bool,
    /// Whether a JSON array has been opened and not closed yet.
    pub json_open: Cell<bool>,
}

/// The `stat` table of an intermediate report.
pub(crate) fn interval_table(lua: &Lua, s: &IntervalStats, percentile: f64) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set("threads_running", s.threads_running)?;
    t.set("time_interval", s.time_interval)?;
    t.set("time_total", s.time_total)?;
    let pct = if percentile > 0.0 {
        s.percentile_ms(percentile) / 1e3
    } else {
        0.0
    };
    t.set("latency_pct", pct)?;
    t.set("events", s.events as f64)?;
    counters(&t, &s.counters)?;
    t.set("queue_length", s.queue_length as f64)?;
    t.set("concurrency", s.concurrency as f64)?;
    Ok(t)
}

/// The `stat` table of a cumulative (final or checkpoint) report.
pub(crate) fn cumulative_table(
    lua: &Lua,
    s: &CumulativeStats,
    percentile: f64,
) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set("threads_running", s.threads.len() as u32)?;
    t.set("time_interval", s.time_total)?;
    t.set("time_total", s.time_total)?;
    let pct = if percentile > 0.0 && s.events > 0 {
        s.percentile_ms(percentile) / 1e3
    } else {
        0.0
    };
    t.set("latency_pct", pct)?;
    t.set("events", s.events as f64)?;
    counters(&t, &s.counters)?;
    t.set("latency_min", s.min_ns as f64 / 1e9)?;
    t.set("latency_max", s.max_ns as f64 / 1e9)?;
    t.set("latency_avg", s.avg_ms() / 1e3)?;
    t.set("latency_sum", s.sum_ns as f64 / 1e9)?;
    Ok(t)
}

fn counters(t: &Table, c: &bmk_engine::Counters) -> mlua::Result<()> {
    t.set("reads", c.get(Counter::Read) as f64)?;
    t.set("writes", c.get(Counter::Write) as f64)?;
    t.set("other", c.get(Counter::Other) as f64)?;
    t.set("errors", c.get(Counter::Error) as f64)?;
    t.set("reconnects", c.get(Counter::Reconnect) as f64)?;
    Ok(())
}

/// Values a printer needs, read from a script-supplied `stat` table.
struct Line {
    time: f64,
    threads: f64,
    tps: f64,
    reads: f64,
    writes: f64,
    other: f64,
    latency_ms: f64,
    errors: f64,
    reconnects: f64,
    queue_length: f64,
    concurrency: f64,
}

impl Line {
    fn read(stat: &Table) -> mlua::Result<Line> {
        let num = |k: &str| -> mlua::Result<f64> { Ok(stat.get::<Option<f64>>(k)?.unwrap_or(0.0)) };
        let interval = num("time_interval")?;
        let per_sec = |v: f64| if interval > 0.0 { v / interval } else { 0.0 };
        Ok(Line {
            time: num("time_total")?,
            threads: num("threads_running")?,
            tps: per_sec(num("events")?),
            reads: per_sec(num("reads")?),
            writes: per_sec(num("writes")?),
            other: per_sec(num("other")?),
            latency_ms: num("latency_pct")? * 1e3,
            errors: per_sec(num("errors")?),
            reconnects: per_sec(num("reconnects")?),
            queue_length: num("queue_length")?,
            concurrency: num("concurrency")?,
        })
    }

    fn qps(&self) -> f64 {
        self.reads + self.writes + self.other
    }
}

/// `[ 1s ]`, with decimals only when the time is not a whole second.
fn time_prefix(t: f64) -> String {
    if (t - t.round()).abs() < 0.005 {
        format!("[ {t:.0}s ]")
    } else {
        let s = format!("{t:.3}");
        let s = s.trim_end_matches('0');
        format!("[ {s}s ]")
    }
}

fn percentile_label(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{}", p as i64)
    } else {
        format!("{p}")
    }
}

/// The sysbench text line(s) for `stat`.
pub(crate) fn text(stat: &Table, settings: &ReportSettings) -> mlua::Result<String> {
    let l = Line::read(stat)?;
    let prefix = time_prefix(l.time);
    let mut out = format!(
        "{prefix} thds: {:.0} tps: {:4.2} qps: {:4.2} (r/w/o: {:4.2}/{:4.2}/{:4.2}) lat (ms,{}%): {:4.2} err/s: {:4.2} reconn/s: {:4.2}\n",
        l.threads,
        l.tps,
        l.qps(),
        l.reads,
        l.writes,
        l.other,
        percentile_label(settings.percentile),
        l.latency_ms,
        l.errors,
        l.reconnects
    );
    if settings.rate_mode {
        out.push_str(&format!(
            "{prefix} queue length: {:.0}, concurrency: {:.0}\n",
            l.queue_length, l.concurrency
        ));
    }
    Ok(out)
}

/// The CSV line for `stat` (no header).
pub(crate) fn csv(stat: &Table) -> mlua::Result<String> {
    let l = Line::read(stat)?;
    Ok(format!(
        "{:.0},{:.0},{:4.2},{:4.2},{:4.2},{:4.2},{:4.2},{:4.2},{:4.2},{:4.2}\n",
        l.time,
        l.threads,
        l.tps,
        l.qps(),
        l.reads,
        l.writes,
        l.other,
        l.latency_ms,
        l.errors,
        l.reconnects
    ))
}

fn json_num(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}")
    } else {
        "0".to_string()
    }
}

/// The JSON object for `stat`, preceded by `[` (first object) or `,`.
pub(crate) fn json(stat: &Table, settings: &ReportSettings) -> mlua::Result<String> {
    let l = Line::read(stat)?;
    let sep = if settings.json_open.replace(true) {
        ",\n"
    } else {
        "[\n"
    };
    Ok(format!(
        "{sep}  {{\"time\": {:.0}, \"threads\": {:.0}, \"tps\": {}, \"qps\": {{\"total\": {}, \"reads\": {}, \"writes\": {}, \"other\": {}}}, \"latency\": {}, \"errors\": {}, \"reconnects\": {}}}",
        l.time,
        l.threads,
        json_num(l.tps),
        json_num(l.qps()),
        json_num(l.reads),
        json_num(l.writes),
        json_num(l.other),
        json_num(l.latency_ms),
        json_num(l.errors),
        json_num(l.reconnects)
    ))
}

/// Closes an open JSON array (after the last object).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        assert_eq!(time_prefix(1.0004), "[ 1s ]");
        assert_eq!(time_prefix(0.25), "[ 0.25s ]");
        assert_eq!(percentile_label(95.0), "95");
        assert_eq!(percentile_label(99.9), "99.9");
    }
}
