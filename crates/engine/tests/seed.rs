//! `--rand-seed`: a non-zero seed makes every worker thread's random stream repeat
//! exactly from one run to the next; threads get different streams; seed 0 does not
//! repeat.

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

use bmk_engine::rand::{self, Distribution, RandConfig};
use bmk_engine::{
    run, EventFlow, Observer, RunConfig, RunStatus, Worker, WorkerContext, WorkerError, Workload,
};

/// Records, per thread, the numbers drawn in `thread_init` and in the thread's events.
#[derive(Default)]
struct Recorder {
    draws: Mutex<Vec<Vec<u32>>>,
}

struct Drawing {
    tid: usize,
    recorder: Arc<Recorder>,
}

impl Worker for Drawing {
    fn event(&mut self, _ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
        let v = rand::default(1, 1_000_000);
        self.recorder.draws.lock().unwrap()[self.tid].push(v);
        Ok(EventFlow::Continue)
    }
}

struct DrawTest(Arc<Recorder>);

impl Workload for DrawTest {
    fn create_worker(&self, tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        let first: Vec<u32> = (0..50).map(|_| rand::uniform(1, 1_000_000)).collect();
        self.0.draws.lock().unwrap()[tid as usize].extend(first);
        Ok(Box::new(Drawing {
            tid: tid as usize,
            recorder: self.0.clone(),
        }))
    }
}

struct Quiet;
impl Observer for Quiet {}

const THREADS: usize = 3;

fn draws(seed: u64, default: Distribution) -> Vec<Vec<u32>> {
    rand::configure(RandConfig {
        seed,
        default,
        ..RandConfig::default()
    });
    let recorder = Arc::new(Recorder {
        draws: Mutex::new(vec![Vec::new(); THREADS]),
    });
    let config = RunConfig {
        threads: THREADS as u32,
        events: 300,
        time: None,
        ..RunConfig::default()
    };
    let outcome = run(
        config,
        Arc::new(DrawTest(recorder.clone())),
        &mut Quiet,
        &AtomicUsize::new(0),
    );
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(outcome.stats.events, 300);
    let draws = recorder.draws.lock().unwrap().clone();
    draws
}

/// How threads share the events is up to the scheduler, so a thread's stream in one
/// run must be a prefix of (or extend) its stream in the other.
fn same_stream(a: &[u32], b: &[u32]) -> bool {
    let n = a.len().min(b.len());
    a[..n] == b[..n]
}

#[test]
fn a_fixed_seed_repeats_every_threads_stream() {
    for dist in [
        Distribution::Uniform,
        Distribution::Pareto,
        Distribution::Zipfian,
    ] {
        let a = draws(42, dist);
        let b = draws(42, dist);
        for t in 0..THREADS {
            assert!(a[t].len() >= 50 && b[t].len() >= 50);
            assert!(
                same_stream(&a[t], &b[t]),
                "{dist:?}: thread {t} drew differently with the same seed"
            );
        }
        // Threads do not share one stream.
        assert_ne!(a[0][..50], a[1][..50]);
        assert_ne!(a[1][..50], a[2][..50]);
        // Another seed, other numbers.
        let c = draws(43, dist);
        assert_ne!(a[0][..50], c[0][..50], "{dist:?}");
    }
    // Seed 0 seeds from the clock: two runs differ.
    let x = draws(0, Distribution::Uniform);
    let y = draws(0, Distribution::Uniform);
    assert_ne!(x[0][..50], y[0][..50]);
}
