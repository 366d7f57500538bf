//! `--barrier NAME --clients N [--barrier-timeout S]`: the run's start gate when several
//! bmk processes (on one host or many) start one run together. The command line reads
//! the options into [`BarrierSettings`]; this module joins the barrier and places the
//! agreed instant on this host's clock.
//!
//! Once this process's workers are all initialised, it registers at the barrier in the
//! target database (`bmk_sql::Barrier`), waits for the others, and releases its workers
//! at the instant they agreed on, read on the database server's clock.
//!
//! # From the server's instant to this host's clock
//! After the barrier has started, the client reads the server's clock a few times,
//! noting this host's monotonic clock just before each query is sent (`sent`) and just
//! after its answer arrives (`received`). The server read its clock somewhere in
//! between, so the sample with the shortest round trip `rtt` places the server's time
//! `server_us` at `sent + rtt/2` on the local clock, wrong by at most `rtt/2` (plus the
//! server clock's microsecond resolution). The agreed start `start_us` then lies at
//! `sent + rtt/2 + (start_us - server_us)` locally, within the same bound; the engine
//! sleeps until then and counts the run's time from it. Two clients therefore start
//! within the sum of their half round trips of each other, plus however late the
//! operating system wakes each of them; neither clock needs to be synchronised with
//! the other or with the server, and the monotonic clock's drift over the second of
//! lead is negligible. The bound is printed and written to the results file.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bmk_engine::{StartAt, StartGate};
use bmk_results::results_file::{BarrierRecord, StartRecord};
use bmk_sql::{AgreedStart, Barrier, BarrierSpec, ClockSample, Driver, DriverConfig};

/// What `--barrier` asks for.
#[derive(Debug, Clone)]
pub struct BarrierSettings {
    /// The barrier's name.
    pub name: String,
    /// Clients that start together.
    pub clients: u32,
    /// How long to wait for them.
    pub timeout: Duration,
    /// Where the barrier table lives: the run's own database.
    pub driver: DriverConfig,
    /// This client's identity.
    pub client: String,
}

/// The engine's start gate for `--barrier`; after the run, [`DatabaseGate::finish`]
/// marks this client done.
pub struct DatabaseGate {
    settings: BarrierSettings,
    /// Whether the barrier's progress is printed (the run's notices).
    notices: bool,
    barrier: Option<Barrier>,
    record: Option<BarrierRecord>,
}

impl DatabaseGate {
    /// A gate that joins the barrier of `settings` when the workers are ready, saying
    /// its progress on stdout when `notices` is set.
    pub fn new(settings: BarrierSettings, notices: bool) -> DatabaseGate {
        DatabaseGate {
            settings,
            notices,
            barrier: None,
            record: None,
        }
    }

    /// What the results file says about the start, once the barrier was passed;
    /// `released` is when this process released its workers (the system's clock).
    pub fn start_record(&self, released: Option<SystemTime>) -> Option<StartRecord> {
        Some(StartRecord::passed(self.record.clone()?, released?))
    }

    /// Marks this client's run done at the barrier (it stays registered, so that a
    /// late client still sees that the run took place) and closes its connection.
    pub fn finish(&mut self) -> Result<(), String> {
        match self.barrier.take() {
            Some(b) => b.finish().map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }

    fn say(&self, line: &str) {
        if self.notices {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    }
}

impl StartGate for DatabaseGate {
    fn open(&mut self, interrupt: &AtomicUsize) -> Result<StartAt, String> {
        let s = &self.settings;
        let conn = Driver::new(s.driver.clone())
            .connect(0)
            .map_err(|e| format!("barrier '{}': cannot connect: {e}", s.name))?;
        let spec = BarrierSpec {
            name: s.name.clone(),
            clients: s.clients,
            client: s.client.clone(),
        };
        let mut barrier = Barrier::join(conn, s.driver.kind, spec).map_err(|e| e.to_string())?;
        self.say(&format!(
            "Barrier '{}': client {} registered, waiting for {} clients (up to {} s)",
            s.name,
            s.client,
            s.clients,
            s.timeout.as_secs()
        ));
        let stop = || interrupt.load(Ordering::Relaxed) != 0;
        let agreed = barrier.wait(s.timeout, &stop).map_err(|e| e.to_string())?;
        let placed = place(&agreed);
        let late = Instant::now().saturating_duration_since(placed.local);
        let mut line = format!(
            "Barrier '{}': {} clients passed; measuring starts at {} on the server's clock (placed within ±{:.3} ms here)",
            s.name,
            agreed.clients.len(),
            server_time(agreed.start_us),
            placed.error.as_secs_f64() * 1e3
        );
        if late > Duration::from_millis(1) {
            line.push_str(&format!(
                "; this client saw it {:.1} ms late, so its first interval is shorter",
                late.as_secs_f64() * 1e3
            ));
        }
        self.say(&line);
        self.record = Some(BarrierRecord {
            name: s.name.clone(),
            client: s.client.clone(),
            clients: agreed.clients.clone(),
            server_start: server_time(agreed.start_us),
            server_start_unix_us: agreed.start_us,
            placement_error_ms: placed.error.as_secs_f64() * 1e3,
        });
        self.barrier = Some(barrier);
        Ok(StartAt::At(placed.local))
    }
}

/// The agreed start on this host's monotonic clock, and how far off it may be.
struct Placed {
    local: Instant,
    error: Duration,
}

/// Places the server's `start_us` on the local clock through the clock sample with the
/// shortest round trip (see the module's documentation).
fn place(agreed: &AgreedStart) -> Placed {
    let best: &ClockSample = agreed
        .samples
        .iter()
        .min_by_key(|c| c.received.saturating_duration_since(c.sent))
        .expect("the barrier reads the clock at least once");
    let rtt = best.received.saturating_duration_since(best.sent);
    let server_here = best.sent + rtt / 2;
    let ahead_us = agreed.start_us - best.server_us;
    let offset = Duration::from_micros(ahead_us.unsigned_abs());
    let local = if ahead_us >= 0 {
        server_here + offset
    } else {
        server_here.checked_sub(offset).unwrap_or(server_here)
    };
    Placed {
        local,
        error: rtt / 2 + Duration::from_micros(1),
    }
}

/// Microseconds since the Unix epoch as RFC 3339 with microseconds.
fn server_time(us: i64) -> String {
    let t = UNIX_EPOCH + Duration::from_micros(us.max(0) as u64);
    let ms = bmk_report::host::rfc3339_utc(t);
    // rfc3339_utc stops at milliseconds; the start is known to the microsecond.
    match ms.strip_suffix('Z') {
        Some(head) => format!("{head}{:03}Z", us.rem_euclid(1000)),
        None => ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shortest_round_trip_places_the_start() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let agreed = AgreedStart {
            start_us: 10_000_000,
            samples: vec![
                ClockSample {
                    sent: t0,
                    received: t0 + ms(10),
                    server_us: 9_000_000,
                },
                // Sent 20 ms later, answered in 2 ms: the server read 9.030 s at
                // t0 + 21 ms, so 10 s is at t0 + 991 ms.
                ClockSample {
                    sent: t0 + ms(20),
                    received: t0 + ms(22),
                    server_us: 9_030_000,
                },
            ],
            clients: vec![],
        };
        let p = place(&agreed);
        assert_eq!(p.local, t0 + ms(991));
        assert_eq!(p.error, ms(1) + Duration::from_micros(1));
    }

    #[test]
    fn server_times_keep_microseconds() {
        assert_eq!(
            server_time(1_764_115_267_123_456),
            "2025-11-26T00:01:07.123456Z"
        );
    }
}
