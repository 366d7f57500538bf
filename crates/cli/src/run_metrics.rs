//! The run's live metrics (`--metrics-addr`, `--metrics-push`): one Prometheus registry
//! whose values the runner's observer sets from the engine's interval statistics on the
//! controlling thread. Workers never touch it: what a scrape or a push reads is what the
//! last interval left, so neither costs the measured events anything.
//!
//! The names, labels and bucket bounds are documented in `docs/metrics.md`.

use std::borrow::Cow;
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use hdrhistogram::Histogram;

use bmk_engine::stats::Counter as EngineCounter;
use bmk_engine::{IntervalStats, RunOutcome, RunStatus};
use bmk_results::results_dir::{LevelInfo, RunManifest, LEVEL_FILE, RUN_FILE};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Metric, Registry, Unit};

use crate::latency_buckets::LatencyBuckets;

/// The prefix of every metric name.
pub const PREFIX: &str = "bmk";

/// The latency percentiles of the last interval exported as gauges, besides the
/// run's own `--percentile`; 100 is the interval's largest latency.
pub const INTERVAL_PERCENTILES: [f64; 5] = [50.0, 95.0, 99.0, 99.9, 100.0];

/// What every metric of this run is labelled with: what the run is, never how it
/// connects (no host, user, password or command line).
#[derive(Debug, Clone, PartialEq)]
pub struct RunLabels {
    /// The kit scenario, else the test's name (a script's file name, without folders).
    pub scenario: String,
    /// The `--target` of bmk.toml, else the database driver.
    pub target: String,
    /// The level's 1-based index in a sweep (1 for a single run).
    pub level: u32,
    /// The level's users over all its processes.
    pub users: u32,
    /// Which client of a multi-client run (`--clients` above 1) or which process of a
    /// split level this is; `None` for a process that runs the level alone.
    pub client: Option<String>,
}

impl RunLabels {
    /// The labels as a registry's constant labels.
    fn pairs(&self) -> Vec<(Cow<'static, str>, Cow<'static, str>)> {
        let mut pairs = vec![
            (Cow::Borrowed("scenario"), Cow::Owned(self.scenario.clone())),
            (Cow::Borrowed("target"), Cow::Owned(self.target.clone())),
            (Cow::Borrowed("level"), Cow::Owned(self.level.to_string())),
        ];
        if let Some(client) = &self.client {
            pairs.push((Cow::Borrowed("client"), Cow::Owned(client.clone())));
        }
        pairs
    }

    /// Reads the scenario and level of a sweep's level from the files the sweep wrote
    /// into `level_dir` (`level.json`) and its parent (`run.json`) before it started
    /// this process; what cannot be read keeps its value.
    pub fn read_level_dir(&mut self, level_dir: &Path) {
        let read = bmk_results::results_dir::read_json::<LevelInfo>;
        if let Ok(level) = read(&level_dir.join(LEVEL_FILE)) {
            self.level = level.index;
            self.users = level.users;
        }
        let manifest = level_dir
            .parent()
            .map(|run| bmk_results::results_dir::read_json::<RunManifest>(&run.join(RUN_FILE)));
        if let Some(Ok(RunManifest {
            scenario: Some(scenario),
            ..
        })) = manifest
        {
            self.scenario = scenario;
        }
    }
}

/// A test's name as a label: a script's file name without its folders or `.lua`.
pub fn test_label(test: &str) -> String {
    let name = Path::new(test)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| test.to_string());
    name.strip_suffix(".lua").unwrap_or(&name).to_string()
}

type ClassLabel = [(&'static str, &'static str); 1];
type PercentileLabel = [(&'static str, String); 1];
type FloatGauge = Gauge<f64, AtomicU64>;

/// The registry and the handles the observer sets.
pub struct RunMetrics {
    registry: Arc<Registry>,
    events: Counter,
    queries: Family<ClassLabel, Counter>,
    ignored_errors: Counter,
    errors: Counter,
    reconnects: Counter,
    threads_running: Gauge,
    queue_length: Gauge,
    concurrency: Gauge,
    latency: LatencyBuckets,
    /// Every latency given to `latency` so far, so that the end of the run can add
    /// what no interval covered.
    fed: Mutex<Option<Histogram<u64>>>,
    interval_latency: Family<PercentileLabel, FloatGauge>,
    measure_start: FloatGauge,
    percentiles: Vec<f64>,
}

/// A new metric of type `M`, registered under `name` with `help`.
fn register<M: Metric + Clone + Default>(registry: &mut Registry, name: &str, help: &str) -> M {
    let metric = M::default();
    registry.register(name, help, metric.clone());
    metric
}

/// [`register`] for a metric in seconds.
fn register_seconds<M: Metric + Clone + Default>(
    registry: &mut Registry,
    name: &str,
    help: &str,
) -> M {
    let metric = M::default();
    registry.register_with_unit(name, help, Unit::Seconds, metric.clone());
    metric
}

impl RunMetrics {
    /// A registry for a run labelled `labels`, exporting the last interval's latency
    /// at [`INTERVAL_PERCENTILES`] and `extra_percentile` (the run's `--percentile`).
    pub fn new(labels: &RunLabels, extra_percentile: f64) -> RunMetrics {
        let mut registry = Registry::with_prefix_and_labels(PREFIX, labels.pairs().into_iter());
        let events: Counter = register(&mut registry, "events", "Events (transactions) completed");
        let queries: Family<ClassLabel, Counter> = register(
            &mut registry,
            "queries",
            "Statements executed, by class (read, write, other)",
        );
        let ignored_errors: Counter = register(
            &mut registry,
            "ignored_errors",
            "Errors ignored by --mysql-ignore-errors / --pgsql-ignore-errors (the event restarted)",
        );
        let errors: Counter = register(
            &mut registry,
            "errors",
            "Errors that stopped a worker (fatal), counted when the run ends",
        );
        let reconnects: Counter = register(
            &mut registry,
            "reconnects",
            "Reconnects after a lost connection",
        );
        let threads_running: Gauge = register(
            &mut registry,
            "threads_running",
            "Workers running an event loop (0 before the start and after the end)",
        );
        let level: Gauge = register(
            &mut registry,
            "level",
            "The level's 1-based index in its sweep",
        );
        let level_users: Gauge = register(
            &mut registry,
            "level_users",
            "Users (threads) of the level, over all its processes",
        );
        let queue_length: Gauge = register(
            &mut registry,
            "rate_queue_length",
            "Arrivals waiting for a worker at the last interval (--rate; 0 in a closed loop)",
        );
        let concurrency: Gauge = register(
            &mut registry,
            "rate_concurrency",
            "Workers busy with an event at the last interval (--rate; 0 in a closed loop)",
        );
        let latency: LatencyBuckets = register_seconds(
            &mut registry,
            "latency",
            "Event latency over the measured run",
        );
        let interval_latency: Family<PercentileLabel, FloatGauge> = register_seconds(
            &mut registry,
            "interval_latency",
            "Exact latency percentile of the last interval (HdrHistogram); percentile=\"100\" is its largest latency",
        );
        let measure_start: FloatGauge = register_seconds(
            &mut registry,
            "measure_start_timestamp",
            "Unix time the measured run started at (after the warm-up); 0 before",
        );
        // Fixed for the process: the registry keeps them, nothing sets them again.
        level.set(i64::from(labels.level));
        level_users.set(i64::from(labels.users));
        let mut percentiles = INTERVAL_PERCENTILES.to_vec();
        if extra_percentile > 0.0 && !percentiles.contains(&extra_percentile) {
            percentiles.push(extra_percentile);
        }
        RunMetrics {
            registry: Arc::new(registry),
            events,
            queries,
            ignored_errors,
            errors,
            reconnects,
            threads_running,
            queue_length,
            concurrency,
            latency,
            fed: Mutex::new(None),
            interval_latency,
            measure_start,
            percentiles,
        }
    }

    /// The registry, for the endpoint and the push to encode.
    pub fn registry(&self) -> Arc<Registry> {
        Arc::clone(&self.registry)
    }

    /// The workers are released (`threads` of them).
    pub fn threads_started(&self, threads: u32) {
        self.threads_running.set(i64::from(threads));
    }

    /// Measuring starts now.
    pub fn measuring(&self) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        self.measure_start.set(now);
    }

    /// One interval's statistics: counters grow by its counts, gauges take its values.
    pub fn interval(&self, stats: &IntervalStats) {
        self.events.inc_by(stats.events);
        let c = &stats.counters;
        for (class, counter) in [
            ("read", EngineCounter::Read),
            ("write", EngineCounter::Write),
            ("other", EngineCounter::Other),
        ] {
            self.queries
                .get_or_create(&[("class", class)])
                .inc_by(c.get(counter));
        }
        self.ignored_errors.inc_by(c.get(EngineCounter::Error));
        self.reconnects.inc_by(c.get(EngineCounter::Reconnect));
        self.threads_running.set(i64::from(stats.threads_running));
        self.queue_length.set(stats.queue_length as i64);
        self.concurrency.set(stats.concurrency as i64);
        self.latency.add(&stats.histogram);
        let mut fed = self.fed.lock().unwrap_or_else(|p| p.into_inner());
        match fed.as_mut() {
            Some(sum) => {
                // Same bounds as every other interval's: adding cannot fail.
                let _ = sum.add(&stats.histogram);
            }
            None => *fed = Some(stats.histogram.clone()),
        }
        drop(fed);
        for &p in &self.percentiles {
            self.interval_latency
                .get_or_create(&[("percentile", percentile_label(p))])
                .set(interval_percentile_s(stats, p));
        }
    }

    /// The run has ended: events the intervals did not cover (a run that stopped
    /// between two of them) are added so the counters end at the run's totals, and
    /// fatal errors are counted.
    pub fn finish(&self, outcome: &RunOutcome) {
        let stats = &outcome.stats;
        let top_up = |counter: &Counter, total: u64| {
            let seen = counter.get();
            if total > seen {
                counter.inc_by(total - seen);
            }
        };
        top_up(&self.events, stats.events);
        let fed = self.fed.lock().unwrap_or_else(|p| p.into_inner()).take();
        let rest = match fed {
            None => Some(stats.histogram.clone()),
            // Fails when a checkpoint restarted the run's histogram: the intervals then
            // cover more than it does, and nothing is missing.
            Some(fed) if fed.len() < stats.histogram.len() => {
                let mut rest = stats.histogram.clone();
                rest.subtract(&fed).ok().map(|_| rest)
            }
            Some(_) => None,
        };
        if let Some(rest) = rest {
            self.latency.add(&rest);
        }
        for (class, counter) in [
            ("read", EngineCounter::Read),
            ("write", EngineCounter::Write),
            ("other", EngineCounter::Other),
        ] {
            top_up(
                &self.queries.get_or_create(&[("class", class)]),
                stats.counters.get(counter),
            );
        }
        top_up(
            &self.ignored_errors,
            stats.counters.get(EngineCounter::Error),
        );
        top_up(
            &self.reconnects,
            stats.counters.get(EngineCounter::Reconnect),
        );
        if let RunStatus::Fatal(messages) | RunStatus::InitFailed(messages) = &outcome.status {
            self.errors.inc_by(messages.len().max(1) as u64);
        }
        self.threads_running.set(0);
        self.queue_length.set(0);
        self.concurrency.set(0);
    }
}

/// The interval's latency at percentile `p`, seconds (0 without events): computed from
/// nanoseconds, as a conversion from the reports' milliseconds would add float noise.
fn interval_percentile_s(stats: &IntervalStats, p: f64) -> f64 {
    let h = &stats.histogram;
    if h.is_empty() {
        return 0.0;
    }
    bmk_engine::latency::percentile_ns(h, p, h.min(), h.max()) as f64 / 1e9
}

/// `95` for 95.0, `99.9` for 99.9.
fn percentile_label(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{}", p as u64)
    } else {
        format!("{p}")
    }
}

/// The registry in the OpenMetrics text format.
pub fn encode(registry: &Registry) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail; the encoder's errors are a Writer's.
    let _ = prometheus_client::encoding::text::encode(&mut out, registry);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels() -> RunLabels {
        RunLabels {
            scenario: "OLTP_RO_1M_1tab".into(),
            target: "maria".into(),
            level: 3,
            users: 16,
            client: None,
        }
    }

    #[test]
    fn every_metric_carries_the_run_labels() {
        let metrics = RunMetrics::new(&labels(), 95.0);
        metrics.threads_started(16);
        let text = encode(&metrics.registry());
        assert!(text.ends_with("# EOF\n"), "{text}");
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            assert!(line.starts_with("bmk_"), "{line}");
            assert!(
                line.contains("scenario=\"OLTP_RO_1M_1tab\"")
                    && line.contains("target=\"maria\"")
                    && line.contains("level=\"3\""),
                "{line}"
            );
        }
        assert!(text.contains("bmk_level_users{"), "{text}");
        assert!(text.contains("} 16\n"), "{text}");
        assert!(text.contains("# TYPE bmk_events counter"), "{text}");
        assert!(
            text.contains("# TYPE bmk_latency_seconds histogram"),
            "{text}"
        );
    }

    fn hist(values_ns: &[u64]) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        for &v in values_ns {
            h.record(v).unwrap();
        }
        h
    }

    /// The value of the sample whose line starts with `start` (name and first labels).
    fn value(text: &str, start: &str, contains: &str) -> f64 {
        text.lines()
            .find(|l| l.starts_with(start) && l.contains(contains))
            .and_then(|l| l.rsplit(' ').next())
            .unwrap_or_else(|| panic!("no {start} {contains} in {text}"))
            .parse()
            .unwrap()
    }

    #[test]
    fn intervals_add_up_and_the_end_brings_the_counters_to_the_run_s_totals() {
        let metrics = RunMetrics::new(&labels(), 90.0);
        let mut counters = bmk_engine::stats::Counters::default();
        counters.0[EngineCounter::Read as usize] = 20;
        counters.0[EngineCounter::Reconnect as usize] = 1;
        metrics.interval(&IntervalStats {
            time_total: 1.0,
            time_interval: 1.0,
            threads_running: 2,
            events: 2,
            counters,
            histogram: hist(&[1_000_000, 3_000_000]),
            queue_length: 4,
            concurrency: 2,
            rate_mode: true,
        });
        let text = encode(&metrics.registry());
        assert_eq!(value(&text, "bmk_events_total{", ""), 2.0);
        assert_eq!(value(&text, "bmk_queries_total{", "class=\"read\""), 20.0);
        assert_eq!(value(&text, "bmk_reconnects_total{", ""), 1.0);
        assert_eq!(value(&text, "bmk_rate_queue_length{", ""), 4.0);
        let p100 = value(&text, "bmk_interval_latency_seconds{", "percentile=\"100\"");
        assert!((p100 - 0.003).abs() < 0.003 * 1e-3, "{p100}");
        // The run's own --percentile joins the fixed ones.
        assert!(text.contains("percentile=\"90\""), "{text}");

        let mut totals = counters;
        totals.0[EngineCounter::Read as usize] = 30;
        metrics.finish(&RunOutcome {
            status: RunStatus::Fatal(vec!["FATAL: gone".into()]),
            stats: bmk_engine::CumulativeStats {
                time_total: 1.2,
                events: 3,
                counters: totals,
                histogram: hist(&[1_000_000, 3_000_000, 7_000_000]),
                min_ns: 1_000_000,
                max_ns: 7_000_000,
                sum_ns: 11_000_000,
                threads: Vec::new(),
                lag: None,
            },
            event_limit_reached: false,
            abandoned: 0,
        });
        let text = encode(&metrics.registry());
        assert_eq!(value(&text, "bmk_events_total{", ""), 3.0);
        assert_eq!(value(&text, "bmk_queries_total{", "class=\"read\""), 30.0);
        assert_eq!(value(&text, "bmk_latency_seconds_count{", ""), 3.0);
        assert_eq!(
            value(&text, "bmk_latency_seconds_bucket{", "le=\"0.005\""),
            2.0
        );
        assert_eq!(
            value(&text, "bmk_latency_seconds_bucket{", "le=\"0.01\""),
            3.0
        );
        assert_eq!(value(&text, "bmk_errors_total{", ""), 1.0);
        assert_eq!(value(&text, "bmk_threads_running{", ""), 0.0);
    }

    #[test]
    fn test_labels_drop_folders_and_the_lua_suffix() {
        assert_eq!(test_label("/home/me/bench/my_test.lua"), "my_test");
        assert_eq!(test_label("oltp_read_write"), "oltp_read_write");
    }

    #[test]
    fn percentile_labels_read_as_written() {
        assert_eq!(percentile_label(95.0), "95");
        assert_eq!(percentile_label(99.9), "99.9");
    }
}
