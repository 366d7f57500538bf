//! Whole runs, byte for byte: a test whose events take known virtual times runs on the
//! engine's virtual clock, and what the engine hands its observer is printed with the
//! same [`Reporter`] calls the CLI makes (intermediate lines, checkpoint reports, the
//! `--histogram` output and the final report). The text is compared with the goldens
//! in `tests/runs/`. Each run covers up to ten virtual seconds in milliseconds, with no
//! server and no sleeping, and gives the same bytes on a busy machine as on an idle
//! one.
//!
//! These tests sit here rather than in the CLI because everything they check happens
//! in the engine (when each report falls due and what it holds) and in this crate (how
//! it is printed); the CLI only adds fixed lines around them (the header, `Threads
//! started!`), which its own tests check against the real binary.
//!
//! To rewrite the goldens after a deliberate change of output, run the tests with
//! `BMK_BLESS=1` and review the difference before committing it.
//!
//! At one instant the controller runs before the workers (the virtual clock's tie
//! rule): an event that ends exactly when a report is due is counted in the next one.

use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Once};
use std::time::Duration;

use bmk_engine::rand::RandConfig;
use bmk_engine::virtual_clock::VirtualClock;
use bmk_engine::{
    Counter, CumulativeStats, EventFlow, IntervalStats, Observer, RunConfig, RunOutcome, RunStatus,
    Worker, WorkerContext, WorkerError, Workload,
};
use bmk_report::{Layout, ReportConfig, Reporter};

/// What the events of a scripted test do: event `n` (0-based) of worker `tid` takes
/// `latency(tid, n)` and then bumps counters with `count(tid, n, ctx)`.
#[derive(Clone, Copy)]
struct Script {
    latency: fn(u32, u64) -> Duration,
    count: fn(u32, u64, &WorkerContext),
}

struct ScriptedTest {
    clock: Arc<VirtualClock>,
    script: Script,
}

struct ScriptedWorker {
    tid: u32,
    done: u64,
    clock: Arc<VirtualClock>,
    script: Script,
}

impl Worker for ScriptedWorker {
    fn event(&mut self, ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
        self.clock.sleep((self.script.latency)(self.tid, self.done));
        (self.script.count)(self.tid, self.done, ctx);
        self.done += 1;
        Ok(EventFlow::Continue)
    }
}

impl Workload for ScriptedTest {
    fn create_worker(&self, tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        Ok(Box::new(ScriptedWorker {
            tid,
            done: 0,
            clock: self.clock.clone(),
            script: self.script,
        }))
    }
}

/// Prints what the engine hands out as the CLI's observer does, into a buffer.
struct Printer {
    reporter: Reporter,
    out: Vec<u8>,
}

impl Observer for Printer {
    fn interval(&mut self, stats: &IntervalStats) {
        self.reporter.interval(&mut self.out, stats).unwrap();
    }
    fn checkpoint(&mut self, at: f64, stats: &CumulativeStats) {
        self.reporter.checkpoint(&mut self.out, at, stats).unwrap();
    }
}

/// Runs `script` under `config` on a virtual clock and prints the run's reports in
/// `report`'s format, with the `--histogram` output when `histogram` is set.
fn print_run(
    config: RunConfig,
    report: ReportConfig,
    histogram: bool,
    script: Script,
) -> (RunOutcome, String) {
    // The rate scheduler draws its arrivals from its thread's generator, seeded from
    // the process-wide seed: the same for every test of this file.
    static SEED: Once = Once::new();
    SEED.call_once(|| {
        bmk_engine::rand::configure(RandConfig {
            seed: 1,
            ..RandConfig::default()
        })
    });
    let clock = VirtualClock::new();
    let test = Arc::new(ScriptedTest {
        clock: clock.clone(),
        script,
    });
    let mut printer = Printer {
        reporter: Reporter::new(&report),
        out: Vec::new(),
    };
    let outcome = clock.run(config, test, &mut printer, &AtomicUsize::new(0));
    let Printer {
        mut reporter,
        mut out,
    } = printer;
    if histogram {
        reporter
            .histogram(&mut out, &outcome.stats.histogram)
            .unwrap();
    }
    reporter.final_report(&mut out, &outcome.stats).unwrap();
    (outcome, String::from_utf8(out).expect("reports are UTF-8"))
}

/// Compares `text` with `tests/runs/NAME.txt` (or writes it there with `BMK_BLESS`).
#[track_caller]
fn matches_golden(name: &str, text: &str) {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "runs", name]
        .iter()
        .collect::<PathBuf>()
        .with_extension("txt");
    if std::env::var_os("BMK_BLESS").is_some() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (BMK_BLESS=1 writes it)", path.display()));
    if text != want {
        let mut msg = format!("{} differs:\n", path.display());
        for (i, (got, want)) in text.lines().zip(want.lines()).enumerate() {
            if got != want {
                msg.push_str(&format!(
                    "line {}:\n  got:  {got:?}\n  want: {want:?}\n",
                    i + 1
                ));
            }
        }
        panic!("{msg}--- got ---\n{text}");
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn no_counts(_: u32, _: u64, _: &WorkerContext) {}

/// An OLTP-like transaction: 10 reads, 4 writes, BEGIN and COMMIT; worker 1's every
/// fifth event also hits an ignored error (a deadlock it retried).
fn oltp_counts(tid: u32, n: u64, ctx: &WorkerContext) {
    ctx.count_n(Counter::Read, 10);
    ctx.count_n(Counter::Write, 4);
    ctx.count_n(Counter::Other, 2);
    ctx.count(Counter::Transaction);
    if tid == 1 && n % 5 == 4 {
        ctx.count(Counter::Error);
    }
}

#[test]
fn sql_workload_with_intermediate_reports() {
    let config = RunConfig {
        threads: 2,
        time: Some(secs(5)),
        report_interval: Some(secs(1)),
        ..RunConfig::default()
    };
    let report = ReportConfig {
        layout: Layout::Db,
        report_interval: 1.0,
        ..ReportConfig::default()
    };
    // Worker 0: 10 ms per transaction; worker 1: 20 and 40 ms in turn. The first
    // second has 99 + 33 transactions (those ending at 1.000 s are the next second's),
    // 6 of worker 1's with an error; the run 500 + 167, both workers busy all 5 s.
    let script = Script {
        latency: |tid, n| match tid {
            0 => ms(10),
            _ => ms(20 + 20 * (n % 2)),
        },
        count: oltp_counts,
    };
    let (outcome, text) = print_run(config, report, false, script);
    assert_eq!(outcome.status, RunStatus::Completed);
    matches_golden("sql_intervals", &text);
}

#[test]
fn warm_up_then_checkpoints_between_intermediate_reports() {
    let config = RunConfig {
        threads: 2,
        time: Some(secs(3)),
        warmup: secs(1),
        report_interval: Some(ms(500)),
        checkpoints: vec![ms(1500), ms(2500)],
        ..RunConfig::default()
    };
    let report = ReportConfig {
        layout: Layout::Events,
        report_interval: 0.5,
        ..ReportConfig::default()
    };
    // Worker 0: 5 ms per event; worker 1: 8 ms, and 50 ms every tenth event (a
    // 122 ms cycle from the release). The first half second after warm-up: 99 + 41
    // events; worker 1's 50 ms event under way at the time limit ends the run 26 ms
    // late (0.5260 s in the last span).
    let script = Script {
        latency: |tid, n| match (tid, n % 10) {
            (0, _) => ms(5),
            (_, 9) => ms(50),
            _ => ms(8),
        },
        count: no_counts,
    };
    let (outcome, text) = print_run(config, report, false, script);
    assert_eq!(outcome.status, RunStatus::Completed);
    matches_golden("warmup_checkpoints", &text);
}

#[test]
fn rate_mode_with_a_queue_that_builds_up() {
    let config = RunConfig {
        threads: 1,
        time: Some(secs(3)),
        rate: 150.0,
        report_interval: Some(secs(1)),
        ..RunConfig::default()
    };
    let report = ReportConfig {
        layout: Layout::Db,
        report_interval: 1.0,
        rate_mode: true,
        ..ReportConfig::default()
    };
    // 10 ms per transaction serves 100 of the 150 arrivals a second: the queue and
    // the latency grow by about 50 arrivals, a third of a second, per second. The
    // arrival times come from the seeded generator, so this golden changes when the
    // generator or its seeding does.
    let script = Script {
        latency: |_, _| ms(10),
        count: oltp_counts,
    };
    let (outcome, text) = print_run(config, report, false, script);
    assert_eq!(outcome.status, RunStatus::Completed);
    matches_golden("rate", &text);
}

#[test]
fn forced_shutdown_reports_what_was_measured() {
    let config = RunConfig {
        threads: 2,
        time: Some(secs(2)),
        forced_shutdown: Some(secs(1)),
        report_interval: Some(secs(1)),
        ..RunConfig::default()
    };
    let report = ReportConfig {
        layout: Layout::Events,
        report_interval: 1.0,
        ..ReportConfig::default()
    };
    // Worker 1's sixth event hangs (an hour): the run gives up on it one second after
    // the time limit, with 20 + 5 events measured over 3 s.
    let script = Script {
        latency: |tid, n| match (tid, n) {
            (1, 5) => secs(3600),
            _ => ms(100),
        },
        count: no_counts,
    };
    let (outcome, text) = print_run(config, report, false, script);
    assert_eq!(outcome.status, RunStatus::ForcedShutdown);
    matches_golden("forced_shutdown", &text);
}

#[test]
fn event_limit_with_histogram_and_several_percentiles() {
    let config = RunConfig {
        threads: 3,
        events: 600,
        time: None,
        ..RunConfig::default()
    };
    let report = ReportConfig {
        layout: Layout::Events,
        percentiles: vec![50.0, 99.0],
        ..ReportConfig::default()
    };
    // 1 to 5 ms in turn, worker 2 starting its cycle at 4 ms: 200 events of each
    // worker, 120 of each latency, in 0.6 s.
    let script = Script {
        latency: |tid, n| ms(1 + (n + 3 * (tid as u64 / 2)) % 5),
        count: no_counts,
    };
    let (outcome, text) = print_run(config, report, true, script);
    assert!(outcome.event_limit_reached);
    matches_golden("event_limit_histogram", &text);
}
