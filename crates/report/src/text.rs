//! Intermediate report lines in sysbench's text layout.
//!
//! One call renders one `--report-interval` sample as complete lines (each ending in
//! `\n`): the DB line (`tps`/`qps`), the event line (`eps`) or the fileio line (MiB/s),
//! and in rate mode the `queue length` line after it. With `--percentile=0` the latency
//! part stays, as sysbench prints it: ` lat (ms,0%): …` with the interval's lowest
//! latency, so that parsers of the line keep working. The time
//! prefix is `[ %.0fs ]`, or with as many decimals as a sub-second interval needs
//! ([`crate::printf::time_decimals`]). Final reports live in [`crate::final_text`].

use crate::final_text;
use crate::format::{Cumulative, Format};
use crate::histogram::{self, Bucket};
use crate::layout::{FinalOptions, Layout, LineOptions};
use crate::printf::{fixed, percentile_label, time_prefix};
use crate::summary::{FinalStats, ReportStat, MIB};

/// The intermediate text report for one sample: one line, plus the rate-mode line.
pub fn intermediate(stat: &ReportStat, opts: &LineOptions) -> String {
    let prefix = time_prefix(stat.time_total, opts.time_decimals);
    let mut out = prefix.clone();
    match opts.layout {
        Layout::Db => db_line(&mut out, stat, opts.percentile),
        Layout::FileIo => fileio_line(&mut out, stat, opts.percentile),
        Layout::Events | Layout::Cpu | Layout::Memory { .. } => {
            events_line(&mut out, stat, opts.percentile)
        }
    }
    out.push('\n');
    if opts.rate_mode {
        let sep = if opts.layout == Layout::Db { "," } else { "" };
        out.push_str(&format!(
            "{prefix}queue length: {}{sep} concurrency: {}\n",
            stat.queue_length, stat.concurrency
        ));
    }
    out
}

/// `%4.2f`, the width sysbench uses for every rate.
fn rate(value: f64) -> String {
    fixed(value, 4, 2)
}

fn db_line(out: &mut String, s: &ReportStat, percentile: f64) {
    out.push_str(&format!(
        "thds: {} tps: {} qps: {} (r/w/o: {}/{}/{})",
        s.threads_running,
        rate(s.per_sec(s.events)),
        rate(s.per_sec(s.queries())),
        rate(s.per_sec(s.reads)),
        rate(s.per_sec(s.writes)),
        rate(s.per_sec(s.other)),
    ));
    out.push_str(&format!(
        " lat (ms,{}%): {}",
        percentile_label(percentile),
        rate(s.latency_pct * 1e3)
    ));
    out.push_str(&format!(
        " err/s: {} reconn/s: {}",
        rate(s.per_sec(s.errors)),
        rate(s.per_sec(s.reconnects))
    ));
}

fn events_line(out: &mut String, s: &ReportStat, percentile: f64) {
    out.push_str(&format!(
        "thds: {} eps: {}",
        s.threads_running,
        rate(s.per_sec(s.events))
    ));
    out.push_str(&format!(
        " lat (ms,{}%): {}",
        percentile_label(percentile),
        rate(s.latency_pct * 1e3)
    ));
}

fn fileio_line(out: &mut String, s: &ReportStat, percentile: f64) {
    out.push_str(&format!(
        "reads: {} MiB/s writes: {} MiB/s fsyncs: {}/s",
        rate(s.per_sec(s.bytes_read) / MIB),
        rate(s.per_sec(s.bytes_written) / MIB),
        rate(s.per_sec(s.other)),
    ));
    out.push_str(&format!(
        " latency (ms,{}%): {}",
        percentile_label(percentile),
        fixed(s.latency_pct * 1e3, 4, 3)
    ));
}

/// sysbench's text output for `--report-format=text`.
#[derive(Debug, Default)]
pub struct TextFormat;

impl Format for TextFormat {
    fn interval(&mut self, stat: &ReportStat, opts: &LineOptions) -> String {
        intermediate(stat, opts)
    }

    fn cumulative(
        &mut self,
        report: &Cumulative,
        stats: &FinalStats,
        opts: &FinalOptions,
    ) -> String {
        match report {
            Cumulative::Final => final_text::render(stats, opts),
            Cumulative::Checkpoint { at, time_decimals } => {
                final_text::checkpoint(*at, *time_decimals, stats, opts)
            }
        }
    }

    fn histogram(&mut self, rows: &[Bucket]) -> String {
        histogram::render_buckets(rows)
    }
}
