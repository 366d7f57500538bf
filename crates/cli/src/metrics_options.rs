//! `--metrics-addr` and `--metrics-push` read into typed values, for the run's
//! settings; what they start is `metrics_sink`'s.

use std::net::SocketAddr;

use bmk_engine::options::OptionSet;

use crate::metrics_endpoint;
use crate::metrics_push::PushTarget;
use crate::settings::SettingsError;

/// `--metrics-addr` and `--metrics-push`, checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricsOptions {
    /// Where to serve `/metrics`.
    pub addr: Option<SocketAddr>,
    /// Where to push.
    pub push: Option<PushTarget>,
}

impl MetricsOptions {
    /// Reads the options; a malformed value is an error naming the option.
    pub fn from_options(opts: &OptionSet) -> Result<MetricsOptions, SettingsError> {
        let given = |name: &str| opts.string(name).filter(|v| !v.trim().is_empty());
        Ok(MetricsOptions {
            addr: given("metrics-addr")
                .map(|a| metrics_endpoint::parse_addr(&a))
                .transpose()
                .map_err(SettingsError)?,
            push: given("metrics-push")
                .map(|u| PushTarget::parse(&u))
                .transpose()
                .map_err(SettingsError)?,
        })
    }

    /// Whether the run exports metrics at all.
    pub fn any(&self) -> bool {
        self.addr.is_some() || self.push.is_some()
    }
}
