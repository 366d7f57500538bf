//! Bounding a blocking connect: the handshake runs on a helper thread and the caller
//! gives up after the connect timeout, so a server that accepts TCP connections but
//! never answers cannot hang the benchmark.

use std::sync::mpsc;
use std::time::Duration;

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

#[cfg(test)]
mod tests {
    use super::*;

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
