//! Per-thread random numbers and the sysbench distributions.
//!
//! Every thread draws from its own xoshiro256** generator, so drawing never takes a
//! lock. With a non-zero `--rand-seed` S, thread T's generator is seeded from a fixed
//! function of (S, T), which makes a run's choices repeat exactly. The distributions
//! (`uniform`, `gaussian`, `special`, `pareto`, `zipfian`) map to integers in `[a, b]`.
//! `unique()` is the one draw shared across threads: a bijection of a global counter.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

use rand_core::{Rng as _, SeedableRng};
use rand_distr::Distribution as _;
use rand_xoshiro::Xoshiro256StarStar;

mod template;
pub use template::{fill_template, Template};

/// The distribution `default(a, b)` uses (`--rand-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distribution {
    /// Every value equally likely.
    Uniform,
    /// Bell-shaped around the middle of the range.
    Gaussian,
    /// sysbench 1.0's default: a hot fraction of the range gets most draws.
    Special,
    /// 80/20-style skew towards the low end (`--rand-pareto-h`).
    Pareto,
    /// Zipf's law over the range (`--rand-zipfian-exp`).
    Zipfian,
}

impl Distribution {
    /// Parses a `--rand-type` value.
    pub fn parse(s: &str) -> Option<Distribution> {
        Some(match s.to_ascii_lowercase().as_str() {
            "uniform" => Distribution::Uniform,
            "gaussian" => Distribution::Gaussian,
            "special" => Distribution::Special,
            "pareto" => Distribution::Pareto,
            "zipfian" => Distribution::Zipfian,
            _ => return None,
        })
    }
}

/// Process-wide random settings, fixed before workers start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RandConfig {
    /// Seed; 0 means "from the clock".
    pub seed: u64,
    /// The distribution of `default()`.
    pub default: Distribution,
    /// Pareto `h` (share of the range that gets `1-h` of the draws).
    pub pareto_h: f64,
    /// Zipfian exponent (theta).
    pub zipfian_exp: f64,
    /// `special`: number of uniform draws summed for the hot part.
    pub special_iter: u32,
    /// `special`: percentage of the range that is hot.
    pub special_pct: f64,
    /// `special`: percentage of draws that land in the hot part.
    pub special_res: f64,
}

impl Default for RandConfig {
    fn default() -> Self {
        RandConfig {
            seed: 0,
            default: Distribution::Uniform,
            pareto_h: 0.2,
            zipfian_exp: 0.8,
            special_iter: 12,
            special_pct: 1.0,
            special_res: 75.0,
        }
    }
}

static CONFIG: RwLock<Option<RandConfig>> = RwLock::new(None);
/// The effective seed (the clock-derived one when the user gave 0).
static EFFECTIVE_SEED: AtomicU64 = AtomicU64::new(0);
static UNIQUE_COUNTER: AtomicU32 = AtomicU32::new(0);
/// Bumped by `configure` so threads re-read the configuration lazily.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// Installs the process-wide settings. Call before any thread draws.
pub fn configure(mut config: RandConfig) {
    if config.seed == 0 {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x5eed);
        config.seed = now ^ (std::process::id() as u64).rotate_left(32);
    }
    EFFECTIVE_SEED.store(config.seed, Ordering::Relaxed);
    *CONFIG.write().unwrap_or_else(|p| p.into_inner()) = Some(config);
    GENERATION.fetch_add(1, Ordering::Release);
}

fn config() -> RandConfig {
    CONFIG
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .unwrap_or_default()
}

struct ThreadRand {
    rng: Xoshiro256StarStar,
    config: RandConfig,
    generation: u64,
    zipf_cache: Option<(u64, f64, rand_distr::Zipf<f64>)>,
}

/// Thread id used to seed the next generator created on this thread.
const MAIN_THREAD_ID: u64 = u64::MAX;

thread_local! {
    static THREAD_ID: std::cell::Cell<u64> = const { std::cell::Cell::new(MAIN_THREAD_ID) };
    static RAND: RefCell<Option<ThreadRand>> = const { RefCell::new(None) };
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn new_thread_rand() -> ThreadRand {
    let generation = GENERATION.load(Ordering::Acquire);
    let config = config();
    let tid = THREAD_ID.with(|t| t.get());
    let seed = splitmix(EFFECTIVE_SEED.load(Ordering::Relaxed) ^ splitmix(tid));
    ThreadRand {
        rng: Xoshiro256StarStar::seed_from_u64(seed),
        config,
        generation,
        zipf_cache: None,
    }
}

/// The generator of a worker of an event loop while another worker of the loop runs.
///
/// The workers of a loop share its thread; each still draws from a generator of its
/// own, seeded as it would be on a thread of its own, so that `--rand-seed` gives every
/// worker the same numbers with loops as without. The loop swaps it in before it runs
/// the worker and out afterwards ([`WorkerRand::swap`]): a copy of a few words.
pub(crate) struct WorkerRand {
    id: u64,
    rand: Option<ThreadRand>,
}

impl WorkerRand {
    /// Worker `tid`'s generator, made on its first draw.
    pub(crate) fn new(tid: u32) -> WorkerRand {
        WorkerRand {
            id: tid as u64,
            rand: None,
        }
    }

    /// Exchanges this generator with the thread's.
    #[inline]
    pub(crate) fn swap(&mut self) {
        THREAD_ID.with(|t| self.id = t.replace(self.id));
        RAND.with(|r| std::mem::swap(&mut *r.borrow_mut(), &mut self.rand));
    }
}

/// Binds this thread's generator to worker `tid` and reseeds it from (seed, tid).
pub fn seed_thread(tid: u32) {
    THREAD_ID.with(|t| t.set(tid as u64));
    RAND.with(|r| *r.borrow_mut() = Some(new_thread_rand()));
}

#[inline]
fn with<R>(f: impl FnOnce(&mut ThreadRand) -> R) -> R {
    RAND.with(|cell| {
        let mut slot = cell.borrow_mut();
        let stale = match slot.as_ref() {
            None => true,
            Some(t) => t.generation != GENERATION.load(Ordering::Relaxed),
        };
        if stale {
            *slot = Some(new_thread_rand());
        }
        f(slot.as_mut().expect("generator just created"))
    })
}

#[inline]
fn double_of(bits: u64) -> f64 {
    (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

impl ThreadRand {
    #[inline]
    fn double(&mut self) -> f64 {
        double_of(self.rng.next_u64())
    }

    #[inline]
    fn uniform(&mut self, a: u32, b: u32) -> u32 {
        if b <= a {
            return a;
        }
        let span = (b - a) as u64 + 1;
        a + (self.double() * span as f64) as u32
    }

    fn gaussian(&mut self, a: u32, b: u32) -> u32 {
        if b <= a {
            return a;
        }
        // Irwin–Hall: the mean of 12 uniform draws is close to normal, centred on the
        // middle of the range and always inside it.
        let sum: f64 = (0..12).map(|_| self.double()).sum();
        let span = (b - a) as f64 + 1.0;
        (a as f64 + (span * sum / 12.0).min(span - 1.0)) as u32
    }

    /// sysbench 1.0's `special`: one uniform draw `r` picks the part. Scaled to a range
    /// `100 / (100 - res)` times wider than `[a, b]`, it falls inside the range for
    /// `100 - res` percent of the draws, which then take the mean of `iter` fresh
    /// draws (a bell around the centre). The other `res` percent map `r` itself onto
    /// the `pct` percent of the range around its centre: since `r` is already known to
    /// be large there, only the upper part of that slice is reached, as in sysbench.
    fn special(&mut self, a: u32, b: u32) -> u32 {
        if b <= a {
            return a;
        }
        let t = (b - a) as f64;
        let res = self.config.special_res;
        let pct = self.config.special_pct;
        let r = self.double();
        // At res = 100 the width is infinite and every draw is a hot one.
        let widened = t * (100.0 / (100.0 - res));
        let offset = if r * widened < t {
            let iter = self.config.special_iter.max(1);
            let sum: f64 = (0..iter).map(|_| self.double()).sum();
            sum * t / f64::from(iter)
        } else {
            r * (t * pct / 100.0 + 1.0) + t / 2.0 - t * pct / 200.0
        };
        // Float to integer saturates at 0; a percentage above 100 could pass `b`.
        a.saturating_add(offset as u32).min(b)
    }

    fn pareto(&mut self, a: u32, b: u32) -> u32 {
        if b <= a {
            return a;
        }
        let h = self.config.pareto_h;
        let power = h.ln() / (1.0 - h).ln();
        let span = (b - a) as f64 + 1.0;
        (a as f64 + (span * self.double().powf(power)).min(span - 1.0)) as u32
    }

    fn zipfian(&mut self, a: u32, b: u32) -> u32 {
        if b <= a {
            return a;
        }
        let n = (b - a) as u64 + 1;
        let theta = self.config.zipfian_exp;
        let rebuild = !matches!(&self.zipf_cache, Some((cn, ct, _)) if *cn == n && *ct == theta);
        if rebuild {
            let dist = rand_distr::Zipf::new(n as f64, theta).expect("validated exponent");
            self.zipf_cache = Some((n, theta, dist));
        }
        let (_, _, dist) = self.zipf_cache.as_ref().expect("built above");
        let rank = dist.sample(&mut self.rng) as u64;
        a + (rank.clamp(1, n) - 1) as u32
    }

    fn by(&mut self, d: Distribution, a: u32, b: u32) -> u32 {
        match d {
            Distribution::Uniform => self.uniform(a, b),
            Distribution::Gaussian => self.gaussian(a, b),
            Distribution::Special => self.special(a, b),
            Distribution::Pareto => self.pareto(a, b),
            Distribution::Zipfian => self.zipfian(a, b),
        }
    }
}

/// Integer uniformly in `[a, b]`.
#[inline]
pub fn uniform(a: u32, b: u32) -> u32 {
    with(|r| r.uniform(a, b))
}

/// Integer in `[a, b]` from the `--rand-type` distribution.
#[inline]
pub fn default(a: u32, b: u32) -> u32 {
    with(|r| {
        let d = r.config.default;
        r.by(d, a, b)
    })
}

/// Integer in `[a, b]` from distribution `d`.
pub fn draw(d: Distribution, a: u32, b: u32) -> u32 {
    with(|r| r.by(d, a, b))
}

/// 64 random bits.
#[inline]
pub fn uniform_u64() -> u64 {
    with(|r| r.rng.next_u64())
}

/// Double in `[0, 1)`.
#[inline]
pub fn uniform_double() -> f64 {
    with(|r| r.double())
}

/// A 32-bit value never returned twice in a run, by any thread (until 2^32 draws).
pub fn unique() -> u32 {
    let n = UNIQUE_COUNTER.fetch_add(1, Ordering::Relaxed);
    let key = EFFECTIVE_SEED.load(Ordering::Relaxed) as u32;
    // Each step (xor with a constant, odd multiply, xorshift) is a bijection on u32,
    // so distinct counter values give distinct results in a seed-dependent order.
    let mut x = n ^ key;
    x = x.wrapping_mul(0x9e37_79b1);
    x ^= x >> 15;
    x = x.wrapping_mul(0x85eb_ca6b);
    x ^= x >> 13;
    x
}

/// Values [`unique_in`] has returned in this process.
static RETURNED_IN_RANGE: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

/// A uniform value in `[a, b]` that no thread has had from this function before, or
/// `None` once every value of the range has been returned (sysbench 1.0's
/// `sb_rand_uniq`, which spins forever then). Behind one lock: it backs a legacy
/// global that scripts call while inserting rows, not a per-query path.
pub fn unique_in(a: u32, b: u32) -> Option<u32> {
    let (a, b) = (a.min(b), a.max(b));
    let pick = with(|r| r.by(Distribution::Uniform, a, b));
    let mut taken = RETURNED_IN_RANGE.lock().unwrap_or_else(|p| p.into_inner());
    // The first free value at or after the draw, else the first from `a`.
    let free_from = |from: u32, to: u32| {
        let mut want = from as u64;
        for &v in taken.range(from..=to) {
            if v as u64 != want {
                break;
            }
            want += 1;
        }
        (want <= to as u64).then_some(want as u32)
    };
    let found = free_from(pick, b).or_else(|| free_from(a, pick))?;
    taken.insert(found);
    Some(found)
}

const ALNUM: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";

/// `template` with `#` and `@` replaced (see [`fill_template`]).
pub fn string(template: &str) -> String {
    let mut out = template.as_bytes().to_vec();
    fill_template(template.as_bytes(), &mut out);
    // Only ASCII bytes replaced ASCII bytes, so the result is still valid UTF-8.
    String::from_utf8(out).expect("ASCII replacement keeps UTF-8")
}

/// Fills `out[..len]` with random `0-9a-z` characters, `len` uniform in `[min, max]`;
/// returns `len`. As in sysbench, `max == 0` gives an empty string and `min > max`
/// (what a negative length becomes on its way through the C interface) is taken as
/// `min = 1`. Never writes beyond `out`.
pub fn fill_varstring(out: &mut [u8], min: u32, max: u32) -> usize {
    if max == 0 {
        return 0;
    }
    let min = if min > max { 1 } else { min };
    with(|r| {
        let len = (r.uniform(min, max) as usize).min(out.len());
        for b in &mut out[..len] {
            *b = ALNUM[(r.double() * 36.0) as usize];
        }
        len
    })
}

/// A random string of `0-9a-z` with a length uniform in `[min, max]`.
pub fn varstring(min: u32, max: u32) -> String {
    let mut buf = vec![0u8; max as usize];
    let len = fill_varstring(&mut buf, min, max);
    buf.truncate(len);
    String::from_utf8(buf).expect("ASCII")
}

/// The seed in effect (useful for reports: "from seed (N)" versus clock).
pub fn effective_seed() -> u64 {
    EFFECTIVE_SEED.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_seed_repeats_per_thread() {
        configure(RandConfig {
            seed: 42,
            ..RandConfig::default()
        });
        let draw = |tid| {
            std::thread::spawn(move || {
                seed_thread(tid);
                (0..100).map(|_| uniform(1, 1_000_000)).collect::<Vec<_>>()
            })
            .join()
            .unwrap()
        };
        assert_eq!(draw(3), draw(3));
        assert_ne!(draw(3), draw(4));
    }

    #[test]
    fn distributions_stay_in_range() {
        seed_thread(0);
        for d in [
            Distribution::Uniform,
            Distribution::Gaussian,
            Distribution::Special,
            Distribution::Pareto,
            Distribution::Zipfian,
        ] {
            for _ in 0..10_000 {
                let v = draw(d, 10, 20);
                assert!((10..=20).contains(&v), "{d:?} gave {v}");
            }
            assert_eq!(draw(d, 5, 5), 5);
        }
    }

    #[test]
    fn special_gathers_around_the_centre() {
        seed_thread(0);
        let draws: Vec<u32> = (0..10_000)
            .map(|_| draw(Distribution::Special, 1, 1001))
            .collect();
        // With the defaults (res 75, pct 1), three draws in four land in the top
        // three quarters of the 1% slice around the centre: 1 + [497.75, 506).
        let hot = draws.iter().filter(|v| (498..=506).contains(*v)).count();
        assert!((7_000..8_000).contains(&hot), "{hot} hot draws");
        // The rest is the mean of 12 draws: never far from the centre either.
        assert!(draws.iter().all(|v| (150..=850).contains(v)), "{draws:?}");
        let mean = draws.iter().map(|&v| f64::from(v)).sum::<f64>() / draws.len() as f64;
        assert!((480.0..520.0).contains(&mean), "mean {mean}");
    }

    #[test]
    fn templates_and_varstrings() {
        let s = string("###-@@@");
        assert_eq!(s.len(), 7);
        assert!(s[..3].bytes().all(|b| b.is_ascii_digit()));
        assert_eq!(&s[3..4], "-");
        assert!(s[4..].bytes().all(|b| b.is_ascii_lowercase()));
        for _ in 0..100 {
            let v = varstring(3, 8);
            assert!((3..=8).contains(&v.len()));
        }
    }

    #[test]
    fn varstrings_never_outgrow_their_buffer() {
        // A negative length from Lua reaches the C interface as a huge unsigned one.
        assert_eq!(varstring(u32::MAX, 0), "");
        let mut buf = [0u8; 5];
        for _ in 0..100 {
            let n = fill_varstring(&mut buf, u32::MAX, 5);
            assert!((1..=5).contains(&n), "{n}");
        }
        assert!(fill_varstring(&mut buf[..2], 3, 5) <= 2);
    }

    #[test]
    fn unique_is_a_permutation_prefix() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..100_000 {
            assert!(seen.insert(unique()));
        }
    }

    #[test]
    fn unique_in_returns_each_value_of_its_range_once() {
        // A range no other test uses: the set of returned values is process-wide.
        let (a, b) = (4_000_000_001, 4_000_000_010);
        let mut got: Vec<u32> = (0..10).map(|_| unique_in(a, b).unwrap()).collect();
        got.sort_unstable();
        assert_eq!(got, (a..=b).collect::<Vec<_>>());
        assert_eq!(unique_in(a, b), None);
        assert_eq!(unique_in(b, a), None, "bounds in either order");
        assert_eq!(unique_in(a - 1, b), Some(a - 1));
    }
}
