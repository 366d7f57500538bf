//! Where a run's live metrics go: the `--metrics-addr` endpoint and the
//! `--metrics-push` gateway, both over one [`RunMetrics`] registry that the runner's
//! observer updates on the controlling thread.

use std::time::Duration;

use anyhow::Result;
use bmk_engine::{IntervalStats, RunOutcome};
use bmk_kit::sweep::LEVEL_DIR_ENV;

use crate::metrics_endpoint::MetricsEndpoint;
use crate::metrics_push::MetricsPusher;
use crate::run_metrics::{test_label, RunLabels, RunMetrics};
use crate::run_settings::RunSettings;
use crate::user_error::user_error;

/// How often the metrics are updated when the run prints no intermediate reports.
pub const DEFAULT_UPDATE: Duration = Duration::from_secs(1);

/// The labels of this process's metrics. `part` is its 1-based index when it is one
/// of the processes of a split level.
fn labels(settings: &RunSettings, part: Option<u32>) -> RunLabels {
    let opts = &settings.options;
    let system_test = bmk_systests::SystemTestKind::by_name(&settings.test_name).is_some();
    let target = opts
        .string("target")
        .filter(|t| !t.is_empty())
        .or_else(|| {
            (!system_test).then(|| opts.string("db-driver").unwrap_or_else(|| "mysql".into()))
        })
        .unwrap_or_else(|| "local".into());
    let client = match (part, &settings.barrier) {
        (Some(index), _) => Some(bmk_kit::split_gate::part_name(index)),
        (None, Some(barrier)) if barrier.clients > 1 => Some(barrier.client.clone()),
        _ => None,
    };
    let mut labels = RunLabels {
        scenario: test_label(&settings.test_name),
        target,
        level: 1,
        users: settings.config.threads,
        client,
    };
    if let Some(dir) = std::env::var_os(LEVEL_DIR_ENV) {
        labels.read_level_dir(std::path::Path::new(&dir));
    }
    labels
}

/// The run's metrics and where they go.
pub struct MetricsSink {
    metrics: RunMetrics,
    /// Kept for its thread: dropping it stops serving.
    _endpoint: Option<MetricsEndpoint>,
    pusher: Option<MetricsPusher>,
}

impl MetricsSink {
    /// Starts serving and pushing as the run's options ask; `None` when they ask for
    /// neither. Part `part` of a split level listens on the given port plus `part - 1`,
    /// so that the level's processes do not contend for one port.
    pub fn start(settings: &RunSettings, part: Option<u32>) -> Result<Option<MetricsSink>> {
        let options = &settings.metrics;
        if !options.any() {
            return Ok(None);
        }
        let labels = labels(settings, part);
        let metrics = RunMetrics::new(&labels, settings.report.percentile);
        let endpoint = match options.addr {
            Some(mut addr) => {
                if let Some(part) = part {
                    addr.set_port(addr.port().saturating_add(part.saturating_sub(1) as u16));
                }
                Some(
                    MetricsEndpoint::start(addr, metrics.registry()).map_err(|e| {
                        user_error(format!(
                            "cannot serve metrics on {addr} (--metrics-addr): {e}"
                        ))
                    })?,
                )
            }
            None => None,
        };
        let pusher = match &options.push {
            Some(target) => Some(
                MetricsPusher::start(target.clone(), &labels, metrics.registry())
                    .map_err(|e| user_error(format!("cannot start pushing metrics: {e}")))?,
            ),
            None => None,
        };
        Ok(Some(MetricsSink {
            metrics,
            _endpoint: endpoint,
            pusher,
        }))
    }

    /// The workers are released.
    pub fn threads_started(&self, threads: u32) {
        self.metrics.threads_started(threads);
    }

    /// Measuring starts.
    pub fn measuring(&self) {
        self.metrics.measuring();
    }

    /// An interval ended.
    pub fn interval(&self, stats: &IntervalStats) {
        self.metrics.interval(stats);
        if let Some(pusher) = &self.pusher {
            pusher.interval();
        }
    }

    /// The run ended: the final values, pushed once more (a failed final push is
    /// warned about on stderr; the run's outcome stands). The endpoint serves them
    /// until the sink is dropped.
    pub fn finish(&mut self, outcome: &RunOutcome) {
        self.metrics.finish(outcome);
        if let Some(pusher) = self.pusher.take() {
            if let Err(e) = pusher.finish() {
                eprintln!("WARNING: cannot push the final metrics (--metrics-push): {e}");
            }
        }
    }
}
