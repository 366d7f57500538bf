//! Bounding what the client libraries do as a whole, where their own limits are per
//! step: a connect runs on a helper thread and the caller gives up after the connect
//! timeout, so a server that accepts TCP connections but never answers, or answers a
//! byte at a time, cannot hang the benchmark; and a call on a session of the `mysql`
//! crate is watched by [`watch`], which shuts the socket down when the call outlives
//! the I/O timeout.

use std::collections::BTreeMap;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Run `f` on a helper thread and wait at most `limit` for its result. `None` on
/// timeout (the helper thread is left to finish or fail on its own; its result is
/// dropped).
pub(crate) fn run_with_deadline<T: Send + 'static>(
    limit: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (tx, rx) = mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name("bmk-sql-connect".into())
        .spawn(move || {
            let _ = tx.send(f());
        });
    match spawned {
        Ok(_) => rx.recv_timeout(limit).ok(),
        Err(_) => None,
    }
}

/// The sockets being watched, by deadline, and when the watchdog thread wakes next.
#[derive(Default)]
struct Watched {
    sockets: BTreeMap<(Instant, u64), RawFd>,
    /// When the watchdog thread wakes next (`None`: only when woken).
    wakes_at: Option<Instant>,
}

/// The process's watchdog: one thread, started at the first [`watch`].
struct Watchdog {
    state: Mutex<Watched>,
    wake: Condvar,
    next_id: AtomicU64,
}

fn watchdog() -> &'static Watchdog {
    static DOG: OnceLock<&'static Watchdog> = OnceLock::new();
    DOG.get_or_init(|| {
        let dog: &'static Watchdog = Box::leak(Box::new(Watchdog {
            state: Mutex::new(Watched::default()),
            wake: Condvar::new(),
            next_id: AtomicU64::new(0),
        }));
        std::thread::Builder::new()
            .name("bmk-sql-watchdog".into())
            .spawn(move || dog.run())
            .expect("start the socket watchdog thread");
        dog
    })
}

impl Watchdog {
    fn run(&self) {
        let mut w = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let now = Instant::now();
            while let Some((&key, &fd)) = w.sockets.first_key_value() {
                if key.0 > now {
                    break;
                }
                // SAFETY: the socket is open: its watch is removed (under this lock)
                // before its connection can close it. Shutting it down ends the
                // call's blocked read or write with an end of stream or an error.
                unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
                w.sockets.remove(&key);
            }
            // Sleep until the earliest deadline, or the one after it if that has gone
            // meanwhile (a later watch then needs no wake-up of its own).
            w.wakes_at = w.sockets.first_key_value().map(|(k, _)| k.0);
            w = match w.wakes_at {
                Some(at) => {
                    let wait = at.saturating_duration_since(now);
                    self.wake
                        .wait_timeout(w, wait)
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
                None => self.wake.wait(w).unwrap_or_else(|p| p.into_inner()),
            };
        }
    }
}

/// A call being watched: dropping it ends the watch (before the socket may close).
pub(crate) struct Watch(Option<(Instant, u64)>);

impl Drop for Watch {
    fn drop(&mut self) {
        if let Some(key) = self.0 {
            let dog = watchdog();
            let mut w = dog.state.lock().unwrap_or_else(|p| p.into_inner());
            w.sockets.remove(&key);
        }
    }
}

/// Watches a call on socket `fd` that must end within `limit` (`None`: no limit):
/// past it the socket is shut down, so that the call fails and the connection is
/// dropped as lost. For the `mysql` crate's sessions, whose reads the socket's receive
/// timeout bounds one `recv` at a time only: a server that sends a byte just within
/// it, again and again, would hold the call for ever, and the crate offers no hook
/// between its reads. One thread watches every socket of the process and is woken
/// only when a watch ends before the one it sleeps until (rarely: every watch has the
/// same limit), so a watch costs a lock, a clock read and a map entry.
pub(crate) fn watch(fd: RawFd, limit: Option<Duration>) -> Watch {
    let Some(limit) = limit else {
        return Watch(None);
    };
    let dog = watchdog();
    let key = (
        Instant::now() + limit,
        dog.next_id.fetch_add(1, Ordering::Relaxed),
    );
    let mut w = dog.state.lock().unwrap_or_else(|p| p.into_inner());
    w.sockets.insert(key, fd);
    if w.wakes_at.is_none_or(|at| at > key.0) {
        w.wakes_at = Some(key.0);
        dog.wake.notify_one();
    }
    Watch(Some(key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read as _;
    use std::os::fd::AsRawFd as _;
    use std::os::unix::net::UnixStream;

    #[test]
    fn a_call_that_outlives_its_watch_finds_its_socket_shut_down() {
        let (mut a, b) = UnixStream::pair().unwrap();
        let feeder = std::thread::spawn(move || {
            for _ in 0..40 {
                if std::io::Write::write_all(&mut &b, b"x").is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let t = Instant::now();
        let w = watch(a.as_raw_fd(), Some(Duration::from_millis(300)));
        let mut got = 0;
        while let Ok(n) = a.read(&mut [0u8; 1]) {
            if n == 0 {
                break;
            }
            got += n;
        }
        drop(w);
        let took = t.elapsed();
        assert!(got >= 3, "{got}");
        assert!(took < Duration::from_millis(900), "{took:?}");
        feeder.join().unwrap();
        // A watch ended in time leaves its socket alone.
        let (mut c, d) = UnixStream::pair().unwrap();
        drop(watch(c.as_raw_fd(), Some(Duration::from_millis(50))));
        std::thread::sleep(Duration::from_millis(200));
        std::io::Write::write_all(&mut &d, b"y").unwrap();
        assert_eq!(c.read(&mut [0u8; 1]).unwrap(), 1);
    }

    #[test]
    fn returns_result_or_times_out() {
        assert_eq!(run_with_deadline(Duration::from_secs(5), || 7), Some(7));
        let t = std::time::Instant::now();
        let r = run_with_deadline(Duration::from_millis(100), || {
            std::thread::sleep(Duration::from_secs(2));
            1
        });
        assert_eq!(r, None);
        assert!(t.elapsed() < Duration::from_secs(1));
    }
}
