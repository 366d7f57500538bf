//! The final (and checkpoint) report in sysbench's text layout.
//!
//! Column positions are part of the contract — people parse these lines with awk:
//! values of the SQL statistics and Throughput blocks start at column 41, latency values
//! end at column 53, fairness values start at column 35. The blocks, in order:
//!
//! * `SQL statistics:` (DB layout only);
//! * `CPU speed:` (cpu) or `Total operations` / `MiB transferred` (memory);
//! * `Throughput:` — events/s, time elapsed, events; for fileio instead the
//!   `read:`/`write:`/`fsync:` IOPS lines;
//! * `Latency (ms):` — min, avg, max, one `NNth percentile:` line per shown percentile
//!   (`--percentile` plus bmk's `--percentiles`, ascending; a fractional percentile
//!   prints as `99.9th`), sum;
//! * `Schedule lag (ms):` — `mean lag:` and `max lag:` (rate mode only, bmk extension;
//!   the labels differ from the latency block's so `awk '/max:/'` still matches once);
//! * `Threads fairness:` (not for fileio).
//!
//! Every block ends with a blank line. The text printed before the report (the
//! `Threads started!` banner) is the caller's.

use crate::layout::{FinalOptions, Layout};
use crate::printf::{decimals, fixed, label, left, percentile_label, right_aligned, time_prefix};
use crate::summary::{FinalStats, MIB};

/// Where values start in the SQL statistics and Throughput blocks.
const VALUE_COLUMN: usize = 41;
/// Where latency values end.
const LATENCY_END: usize = 53;
/// Where fairness values start.
const FAIRNESS_COLUMN: usize = 35;

/// The final report.
pub fn render(stats: &FinalStats, opts: &FinalOptions) -> String {
    let mut out = String::new();
    if opts.layout == Layout::Db {
        sql_statistics(&mut out, stats);
    }
    match opts.layout {
        Layout::Cpu => {
            out.push_str("CPU speed:\n");
            out.push_str(&format!(
                "    events per second: {}\n\n",
                fixed(stats.events_per_sec, 8, 2)
            ));
        }
        Layout::Memory {
            block_size,
            transfers,
        } => {
            out.push_str(&format!(
                "Total operations: {} ({} per second)\n\n",
                stats.events,
                fixed(stats.events_per_sec, 8, 2)
            ));
            if transfers {
                let mib = stats.events as f64 * block_size as f64 / MIB;
                let rate = if stats.time_total_s > 0.0 {
                    mib / stats.time_total_s
                } else {
                    0.0
                };
                out.push_str(&format!(
                    "{} MiB transferred ({} MiB/sec)\n\n",
                    fixed(mib, 4, 2),
                    fixed(rate, 4, 2)
                ));
            }
        }
        _ => {}
    }
    // sysbench's fileio report opens with a blank line of its own.
    if opts.layout == Layout::FileIo {
        out.push('\n');
    }
    if opts.layout == Layout::FileIo && opts.sysbench_1_0 {
        fileio_operations_1_0(&mut out, stats);
    } else if opts.layout == Layout::FileIo {
        fileio_throughput(&mut out, stats);
    }
    // sysbench opens its own part of the report with a blank line, which the SQL and
    // cpu blocks' closing blank lines stand for; after nothing (threads, mutex) or after
    // memory's lines, which end with their own, it shows.
    if matches!(opts.layout, Layout::Events | Layout::Memory { .. }) {
        out.push('\n');
    }
    if opts.sysbench_1_0 {
        general_statistics(&mut out, stats);
    } else if opts.layout != Layout::FileIo {
        throughput(&mut out, stats);
    }
    latency(&mut out, stats, opts);
    if let Some(lag) = &stats.lag {
        out.push_str("Schedule lag (ms):\n");
        latency_line(&mut out, "         mean lag:", lag.mean_ms);
        latency_line(&mut out, "         max lag:", lag.max_ms);
        if lag.dropped_arrivals > 0 {
            // Not latency but load: the arrivals the workers fell so far behind that
            // the queue could hold no more of them.
            out.push_str(&right_aligned(
                "         dropped arrivals (queue full):",
                &lag.dropped_arrivals.to_string(),
                LATENCY_END,
            ));
            out.push('\n');
        }
        out.push('\n');
    }
    if opts.layout != Layout::FileIo || opts.sysbench_1_0 {
        let f = &stats.fairness;
        out.push_str("Threads fairness:\n");
        out.push_str(&format!(
            "{}{}/{}\n",
            label("    events (avg/stddev):", FAIRNESS_COLUMN),
            decimals(f.events_avg, 4),
            fixed(f.events_stddev, 3, 2)
        ));
        out.push_str(&format!(
            "{}{}/{}\n",
            label("    execution time (avg/stddev):", FAIRNESS_COLUMN),
            decimals(f.time_avg_s, 4),
            fixed(f.time_stddev_s, 3, 2)
        ));
        out.push('\n');
    }
    out
}

/// A checkpoint report: `[ Ns ] Checkpoint report:` and the cumulative report.
pub fn checkpoint(
    at: f64,
    time_decimals: usize,
    stats: &FinalStats,
    opts: &FinalOptions,
) -> String {
    format!(
        "{}Checkpoint report:\n{}",
        time_prefix(at, time_decimals),
        render(stats, opts)
    )
}

fn value_line(out: &mut String, name: &str, value: &str) {
    out.push_str(&label(name, VALUE_COLUMN));
    out.push_str(value);
    out.push('\n');
}

/// `count (rate per sec.)` with the count left-aligned in 6 columns (`%-6llu`).
fn count_rate(count: u64, rate: f64) -> String {
    format!("{} ({} per sec.)", left(count, 6), decimals(rate, 2))
}

fn sql_statistics(out: &mut String, s: &FinalStats) {
    let c = &s.counters;
    out.push_str("SQL statistics:\n");
    out.push_str("    queries performed:\n");
    value_line(out, "        read:", &c.reads.to_string());
    value_line(out, "        write:", &c.writes.to_string());
    value_line(out, "        other:", &c.other.to_string());
    value_line(out, "        total:", &c.queries().to_string());
    value_line(
        out,
        "    transactions:",
        &count_rate(s.events, s.per_sec(s.events)),
    );
    value_line(
        out,
        "    queries:",
        &count_rate(c.queries(), s.per_sec(c.queries())),
    );
    value_line(
        out,
        "    ignored errors:",
        &count_rate(c.errors, s.per_sec(c.errors)),
    );
    value_line(
        out,
        "    reconnects:",
        &count_rate(c.reconnects, s.per_sec(c.reconnects)),
    );
    out.push('\n');
}

fn throughput(out: &mut String, s: &FinalStats) {
    out.push_str("Throughput:\n");
    value_line(out, "    events/s (eps):", &decimals(s.events_per_sec, 4));
    value_line(
        out,
        "    time elapsed:",
        &format!("{}s", decimals(s.time_total_s, 4)),
    );
    value_line(out, "    total number of events:", &s.events.to_string());
    out.push('\n');
}

/// sysbench 1.0.20's fileio blocks: rates of operations and of bytes.
fn fileio_operations_1_0(out: &mut String, s: &FinalStats) {
    const COLUMN: usize = 34;
    let c = &s.counters;
    let line = |out: &mut String, name: &str, v: f64| {
        out.push_str(&label(name, COLUMN));
        out.push_str(&fixed(v, 4, 2));
        out.push('\n');
    };
    out.push_str("File operations:\n");
    line(out, "    reads/s:", s.per_sec(c.reads));
    line(out, "    writes/s:", s.per_sec(c.writes));
    line(out, "    fsyncs/s:", s.per_sec(c.other));
    out.push_str("\nThroughput:\n");
    line(out, "    read, MiB/s:", s.per_sec(c.bytes_read) / MIB);
    line(out, "    written, MiB/s:", s.per_sec(c.bytes_written) / MIB);
    out.push('\n');
}

/// sysbench 1.0.20's block in place of `Throughput:` (for fileio, after it).
fn general_statistics(out: &mut String, s: &FinalStats) {
    out.push_str("General statistics:\n");
    value_line(
        out,
        "    total time:",
        &format!("{}s", decimals(s.time_total_s, 4)),
    );
    value_line(out, "    total number of events:", &s.events.to_string());
    out.push('\n');
}

fn fileio_throughput(out: &mut String, s: &FinalStats) {
    let c = &s.counters;
    let io_line = |out: &mut String, name: &str, ops: u64, bytes: u64| {
        let bytes_per_sec = s.per_sec(bytes);
        out.push_str(&format!(
            "         {name} IOPS={} {} MiB/s ({} MB/s)\n",
            fixed(s.per_sec(ops), 4, 2),
            fixed(bytes_per_sec / MIB, 4, 2),
            fixed(bytes_per_sec / 1e6, 4, 2),
        ));
    };
    out.push_str("Throughput:\n");
    io_line(out, "read: ", c.reads, c.bytes_read);
    io_line(out, "write:", c.writes, c.bytes_written);
    out.push_str(&format!(
        "         fsync: IOPS={}\n",
        fixed(s.per_sec(c.other), 4, 2)
    ));
    out.push('\n');
}

fn latency_line(out: &mut String, name: &str, ms: f64) {
    out.push_str(&right_aligned(name, &decimals(ms, 2), LATENCY_END));
    out.push('\n');
}

fn latency(out: &mut String, s: &FinalStats, opts: &FinalOptions) {
    let l = &s.latency;
    out.push_str("Latency (ms):\n");
    latency_line(out, "         min:", l.min_ms);
    latency_line(out, "         avg:", l.avg_ms);
    latency_line(out, "         max:", l.max_ms);
    let shown = opts.shown_percentiles();
    if shown.is_empty() {
        out.push_str(&format!(
            "{:<VALUE_COLUMN$}disabled\n",
            "         percentile stats:"
        ));
    }
    for p in shown {
        let name = format!("        {:>3}th percentile:", percentile_label(p));
        latency_line(out, &name, l.percentile_ms(p).unwrap_or(0.0));
    }
    latency_line(out, "         sum:", l.sum_ms);
    out.push('\n');
}
