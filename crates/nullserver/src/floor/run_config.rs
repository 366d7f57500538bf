//! What a floor run is given and what it reports back, shared by the request loop
//! ([`super::run`]) and the connect loop ([`super::connect`]).

use std::net::SocketAddr;
use std::time::Duration;

use super::workload::Workload;
use crate::server::Kind;

/// What the floor client runs.
#[derive(Debug, Clone)]
pub struct FloorConfig {
    /// The server.
    pub addr: SocketAddr,
    /// Its protocol.
    pub protocol: Kind,
    /// Connections, each with one request in flight.
    pub connections: usize,
    /// How long to run.
    pub time: Duration,
    /// The event.
    pub workload: Workload,
    /// Width of the range selects.
    pub range: i32,
    /// Report events per second at this interval (through `run`'s callback).
    pub report_interval: Option<Duration>,
}

/// What a run did.
#[derive(Debug, Clone, Copy)]
pub struct Outcome {
    /// Events completed.
    pub events: u64,
    /// Requests answered.
    pub queries: u64,
    /// Time from the first request to the end.
    pub elapsed: Duration,
}
