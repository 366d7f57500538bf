//! The capacity search's rules (`bmk kit search`): which load to probe next, how a
//! finished probe is judged, and what the answer is — the highest load whose level
//! met every objective.
//!
//! The rules are a function of the probes run so far and nothing else, so a search
//! taken up again (`--resume`) replays its finished levels through them and goes on
//! exactly where it stopped. The running of the levels is [`crate::command`]'s.
//!
//! * Grow: from `start`, double the load after every probe that meets the objectives,
//!   up to `max`.
//! * A probe that fails an objective, or brings no more throughput (a search by users:
//!   doubling the users raised throughput by less than [`MIN_GAIN`]; a search by rate:
//!   the level completed less than [`KEEP_UP`] of the offered arrivals, beyond their
//!   noise), is an upper
//!   bound: more load than that buys latency, not throughput. In a search by users
//!   a bound without gain ends the search at the load below it (the knee).
//! * Bisect: between the highest probe that met the objectives below the lowest upper
//!   bound, and that bound, until they are within `precision` of the lower one (or one
//!   user apart).
//! * A probe the sanity checks reject (errors, a stall, a server restart, a level that
//!   did not complete) is run again once; rejected again, it is an upper bound too (its
//!   load could not be shown to meet the objectives) and is reported, never used as
//!   the answer.

use crate::objective::Objective;

/// Doubling the users must raise throughput by at least this fraction, or the level
/// is past the knee of the curve.
pub const MIN_GAIN: f64 = 0.10;
/// A level of a search by rate must complete at least this share of the arrivals it
/// was offered; below it the system does not keep up (queues grow for as long as the
/// level lasts). A shortfall within three standard deviations of the number of Poisson
/// arrivals is not counted (a short level at a low rate varies by more than 15 %).
pub const KEEP_UP: f64 = 0.85;
/// The search doubles the load while it has no upper bound.
pub const GROWTH: f64 = 2.0;

/// What the search varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    /// Users (closed loop: each user sends its next event when the last one ended).
    Users,
    /// Arrivals per second (open loop: Poisson arrivals at `--rate`, latency counted
    /// from each event's planned start, so queueing counts).
    Rate,
}

impl By {
    /// `users` or `rate`.
    pub fn name(self) -> &'static str {
        match self {
            By::Users => "users",
            By::Rate => "rate",
        }
    }
}

/// A search as asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// What varies.
    pub by: By,
    /// Every probe must meet all of them.
    pub objectives: Vec<Objective>,
    /// The first load.
    pub start: f64,
    /// The highest load probed.
    pub max: f64,
    /// Stop when the bounds are within this fraction of the lower one.
    pub precision: f64,
}

/// How a probe was judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Every objective met, and throughput grew with the load.
    Meets,
    /// One or more objectives not met.
    Fails,
    /// Objectives met but no more throughput for the load (see [`MIN_GAIN`],
    /// [`KEEP_UP`]).
    NoGain,
    /// The sanity checks do not trust the level.
    Rejected,
}

impl Verdict {
    /// As written in `level.json` and `summary.csv`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Meets => "meets",
            Verdict::Fails => "fails",
            Verdict::NoGain => "no-gain",
            Verdict::Rejected => "rejected",
        }
    }
}

/// The figures of a finished probe the rules read.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Figures {
    /// Events per second.
    pub tps: f64,
    /// Mean latency, ms.
    pub avg_ms: f64,
    /// 95th percentile, ms.
    pub p95_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// Events completed.
    pub events: u64,
}

/// A finished probe.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    /// Its level folder (`level-0003`).
    pub level: String,
    /// The load it ran.
    pub load: f64,
    /// The verdict.
    pub verdict: Verdict,
    /// Why, in words.
    pub why: String,
    /// Its figures.
    pub figures: Figures,
}

/// What to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Run a probe at this load.
    Run(f64),
    /// The search is over.
    Done(Box<Answer>),
}

/// What the search found.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The highest probe that met the objectives below the bound, if any did.
    pub found: Option<Probe>,
    /// The lowest probe above it that did not, if one ran.
    pub bound: Option<Probe>,
    /// Why the search ended.
    pub reason: String,
}

/// A load as short as it reads (`40`, `87.5`, `86.25`).
pub use crate::objective::short_number as load_text;

impl Spec {
    /// A load as a probe runs it: whole users, rates to the hundredth.
    fn round(&self, v: f64) -> f64 {
        match self.by {
            By::Users => v.round().max(1.0),
            By::Rate => (v * 100.0).round() / 100.0,
        }
    }

    /// `4 users`, `87.5/s`.
    pub fn load_words(&self, v: f64) -> String {
        match self.by {
            By::Users if v == 1.0 => "1 user".to_string(),
            By::Users => format!("{} users", load_text(v)),
            By::Rate => format!("{}/s", load_text(v)),
        }
    }

    /// Judges a finished probe at `load` from its figures, the objectives' values
    /// (`None`: not measured) and the sanity checks' findings (`rejected`), given the
    /// probes before it.
    pub fn judge(
        &self,
        before: &[Probe],
        level: &str,
        load: f64,
        figures: Figures,
        values: &[Option<f64>],
        rejected: &[String],
    ) -> Probe {
        let mut why: Vec<String> = Vec::new();
        let mut met = true;
        for (o, v) in self.objectives.iter().zip(values) {
            match v {
                Some(v) => {
                    met &= o.met_by(*v);
                    why.push(o.judged(*v));
                }
                None => {
                    met = false;
                    why.push(format!("{}: not measured", o.text));
                }
            }
        }
        let verdict = if !rejected.is_empty() {
            why = vec![format!(
                "rejected by the sanity checks: {}",
                rejected.join("; ")
            )];
            Verdict::Rejected
        } else if !met {
            Verdict::Fails
        } else if let Some(short) = self.no_gain(before, load, &figures) {
            why.push(short);
            Verdict::NoGain
        } else {
            Verdict::Meets
        };
        Probe {
            level: level.to_string(),
            load,
            verdict,
            why: why.join(", "),
            figures,
        }
    }

    /// Why a probe that met the objectives still brings no more throughput, if so.
    fn no_gain(&self, before: &[Probe], load: f64, figures: &Figures) -> Option<String> {
        let tps = figures.tps;
        match self.by {
            By::Rate => {
                // Poisson arrivals vary: a short level offered few of them can complete
                // fewer than KEEP_UP of the rate by chance, so the shortfall must also
                // be more than three standard deviations of the number of arrivals.
                let events = figures.events as f64;
                let short = tps <= 0.0 || {
                    let expected = load * events / tps;
                    tps < KEEP_UP * load && expected - events > 3.0 * expected.sqrt()
                };
                short.then(|| {
                    format!(
                        "completed {tps:.2} of {} offered events/s: it does not keep up",
                        load_text(load)
                    )
                })
            }
            By::Users => {
                // Only while growing: bisection steps are too small to tell a gain
                // from noise, and the bound they work below was set in this phase.
                let (lo, hi) = bounds(before);
                if hi.is_some() {
                    return None;
                }
                let lo = lo.filter(|p| p.load < load)?;
                (tps < (1.0 + MIN_GAIN) * lo.figures.tps).then(|| {
                    format!(
                        "{tps:.2} TPS against {:.2} at {}: less than {:.0} % more throughput for {} times the users",
                        lo.figures.tps,
                        self.load_words(lo.load),
                        MIN_GAIN * 100.0,
                        load_text(load / lo.load)
                    )
                })
            }
        }
    }

    /// The next step after `probes` (in run order).
    pub fn next(&self, probes: &[Probe]) -> Step {
        if let Some(last) = probes.last() {
            if last.verdict == Verdict::Rejected && !rejected_twice(probes, probes.len() - 1) {
                return Step::Run(last.load);
            }
        }
        let (lo, hi) = bounds(probes);
        let done = |reason: String| {
            Step::Done(Box::new(Answer {
                found: lo.cloned(),
                bound: hi.cloned(),
                reason,
            }))
        };
        match (lo, hi) {
            (None, None) => Step::Run(self.round(self.start)),
            (Some(lo), None) => {
                if lo.load >= self.max {
                    done(format!(
                        "the highest load allowed ({}) meets every objective",
                        self.load_words(self.max)
                    ))
                } else {
                    Step::Run(self.round((lo.load * GROWTH).min(self.max)))
                }
            }
            (None, Some(hi)) => {
                let next = self.round(hi.load / GROWTH);
                let floor = match self.by {
                    By::Users => 1.0,
                    By::Rate => self.start / 64.0,
                };
                if hi.load <= floor || next >= hi.load {
                    done(format!(
                        "no load meets every objective: {} {}",
                        self.load_words(hi.load),
                        verdict_words(hi)
                    ))
                } else {
                    Step::Run(next)
                }
            }
            // Past the knee of a closed loop, more users only queue: the last load
            // that still raised throughput is the answer, without bisecting for a
            // gain too small to tell from noise.
            (Some(lo), Some(hi)) if self.by == By::Users && hi.verdict == Verdict::NoGain => {
                done(format!(
                    "{} meets every objective; {} {}",
                    self.load_words(lo.load),
                    self.load_words(hi.load),
                    verdict_words(hi)
                ))
            }
            (Some(lo), Some(hi)) => {
                let gap = hi.load - lo.load;
                let mid = self.round((lo.load + hi.load) / 2.0);
                if gap <= self.precision * lo.load || mid <= lo.load || mid >= hi.load {
                    done(format!(
                        "{} meets every objective and {} {} (within {} %)",
                        self.load_words(lo.load),
                        self.load_words(hi.load),
                        verdict_words(hi),
                        load_text(self.precision * 100.0)
                    ))
                } else {
                    Step::Run(mid)
                }
            }
        }
    }
}

fn verdict_words(p: &Probe) -> &'static str {
    match p.verdict {
        Verdict::Fails => "fails",
        Verdict::NoGain => "brings no more throughput",
        Verdict::Rejected => "was rejected twice by the sanity checks",
        Verdict::Meets => "meets",
    }
}

/// Whether probe `i` is a rejected repeat of a rejected probe at the same load.
fn rejected_twice(probes: &[Probe], i: usize) -> bool {
    i > 0
        && probes[i].verdict == Verdict::Rejected
        && probes[i - 1].verdict == Verdict::Rejected
        && probes[i - 1].load == probes[i].load
}

/// The highest probe that met the objectives below the lowest upper bound, and that
/// bound: a failure, a load without gain, or a probe rejected twice. Probes that met
/// the objectives above a bound (noise) do not count.
pub fn bounds(probes: &[Probe]) -> (Option<&Probe>, Option<&Probe>) {
    let hi = probes
        .iter()
        .enumerate()
        .filter(|(i, p)| match p.verdict {
            Verdict::Fails | Verdict::NoGain => true,
            Verdict::Rejected => rejected_twice(probes, *i),
            Verdict::Meets => false,
        })
        .map(|(_, p)| p)
        .min_by(|a, b| a.load.total_cmp(&b.load));
    let lo = probes
        .iter()
        .filter(|p| p.verdict == Verdict::Meets && hi.is_none_or(|h| p.load < h.load))
        .max_by(|a, b| a.load.total_cmp(&b.load));
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(by: By, slo: &str, start: f64, max: f64, precision: f64) -> Spec {
        Spec {
            by,
            objectives: vec![Objective::parse(slo).unwrap()],
            start,
            max,
            precision,
        }
    }

    /// Runs the search against a model: `latency(load)` and `tps(load)`.
    fn search(s: &Spec, model: &dyn Fn(f64) -> (f64, f64)) -> (Vec<f64>, Answer) {
        let mut probes: Vec<Probe> = Vec::new();
        loop {
            match s.next(&probes) {
                Step::Run(load) => {
                    assert!(probes.len() < 40, "runaway search: {probes:?}");
                    let (lat, tps) = model(load);
                    let figures = Figures {
                        tps,
                        avg_ms: lat,
                        events: (tps * 4.0) as u64,
                        ..Figures::default()
                    };
                    let name = format!("level-{:04}", probes.len() + 1);
                    let p = s.judge(&probes, &name, load, figures, &[Some(lat)], &[]);
                    probes.push(p);
                }
                Step::Done(a) => return (probes.iter().map(|p| p.load).collect(), *a),
            }
        }
    }

    #[test]
    fn users_grow_then_bisect_to_the_last_level_that_meets() {
        // Throughput 1000/s per user up to 8 users, flat after; latency = users / tps.
        let model = |u: f64| {
            let tps = 1000.0 * u.min(8.0) * (1.0 + u / 1000.0);
            (u / tps * 1000.0, tps)
        };
        // 1 ms per event up to 8 users; 12 users give 1.5 ms.
        let s = spec(By::Users, "avg<=1.5ms", 1.0, 64.0, 0.1);
        let (loads, a) = search(&s, &model);
        assert_eq!(loads, [1.0, 2.0, 4.0, 8.0, 16.0, 12.0, 14.0, 13.0]);
        let found = a.found.unwrap();
        assert_eq!(found.load, 12.0, "{}", a.reason);
        assert_eq!(a.bound.unwrap().load, 13.0);
        // With a throughput that stops growing, growth stops at the knee.
        let s = spec(By::Users, "avg<=100ms", 1.0, 64.0, 0.1);
        let (loads, a) = search(&s, &model);
        assert_eq!(loads, [1.0, 2.0, 4.0, 8.0, 16.0]);
        assert_eq!(a.bound.as_ref().unwrap().verdict, Verdict::NoGain);
        assert_eq!(a.found.unwrap().load, 8.0, "{loads:?} {}", a.reason);
    }

    #[test]
    fn rates_bisect_to_the_precision_and_limits_end_the_search() {
        // M/D/1 with a 10 ms service time: mean latency S (1 + rho / (2 (1 - rho))).
        let md1 = |r: f64| {
            let rho = r / 100.0;
            if rho >= 1.0 {
                (1e6, 100.0)
            } else {
                (10.0 * (1.0 + rho / (2.0 * (1.0 - rho))), r)
            }
        };
        let s = spec(By::Rate, "avg<=50ms", 40.0, 10_000.0, 0.05);
        let (loads, a) = search(&s, &md1);
        let found = a.found.unwrap().load;
        assert!((found - 88.9).abs() / 88.9 <= 0.05, "{found} {loads:?}");
        assert!(loads.len() <= 8, "{loads:?}");
        // A limit that meets the objectives is the answer.
        let s = spec(By::Rate, "avg<=50ms", 10.0, 30.0, 0.05);
        let (loads, a) = search(&s, &md1);
        assert_eq!(loads, [10.0, 20.0, 30.0]);
        assert_eq!(a.found.unwrap().load, 30.0);
        assert!(a.reason.contains("highest load allowed"), "{}", a.reason);
        // Nothing meets: the search says so.
        let s = spec(By::Rate, "avg<=5ms", 40.0, 1000.0, 0.05);
        let (_, a) = search(&s, &md1);
        assert!(
            a.found.is_none() && a.reason.starts_with("no load meets"),
            "{}",
            a.reason
        );
    }

    #[test]
    fn a_rejected_probe_runs_once_more_and_twice_rejected_bounds_the_search() {
        let s = spec(By::Users, "avg<=10ms", 1.0, 64.0, 0.1);
        let figures = Figures {
            tps: 100.0,
            avg_ms: 1.0,
            ..Figures::default()
        };
        let ok = |before: &[Probe], load: f64| {
            s.judge(
                before,
                "l",
                load,
                Figures {
                    tps: 100.0 * load,
                    ..figures
                },
                &[Some(1.0)],
                &[],
            )
        };
        let bad = |before: &[Probe], load: f64| {
            s.judge(
                before,
                "l",
                load,
                figures,
                &[Some(1.0)],
                &["stall".to_string()],
            )
        };
        let mut probes = vec![ok(&[], 1.0)];
        probes.push(bad(&probes, 2.0));
        assert_eq!(probes[1].verdict, Verdict::Rejected);
        assert!(probes[1].why.contains("stall"));
        assert_eq!(s.next(&probes), Step::Run(2.0), "repeated once");
        probes.push(bad(&probes, 2.0));
        let Step::Done(a) = s.next(&probes) else {
            panic!("a twice rejected probe at the next step up ends the search");
        };
        assert_eq!(a.found.unwrap().load, 1.0);
        assert!(a.reason.contains("rejected twice"), "{}", a.reason);
        // A repeat that passes is used.
        let mut probes = vec![ok(&[], 1.0)];
        probes.push(bad(&probes, 2.0));
        probes.push(ok(&probes, 2.0));
        assert_eq!(s.next(&probes), Step::Run(4.0));
    }

    #[test]
    fn a_rate_level_falls_short_only_beyond_the_arrivals_noise() {
        let s = spec(By::Rate, "avg<=50ms", 10.0, 1000.0, 0.05);
        let judge = |load: f64, tps: f64, secs: f64| {
            let figures = Figures {
                tps,
                events: (tps * secs) as u64,
                ..Figures::default()
            };
            s.judge(&[], "l", load, figures, &[Some(1.0)], &[]).verdict
        };
        // 10/s for 4 s: 32 events where 40 were expected is within Poisson noise.
        assert_eq!(judge(10.0, 8.0, 4.0), Verdict::Meets);
        // 1000/s for 4 s: 3200 where 4000 were expected is not.
        assert_eq!(judge(1000.0, 800.0, 4.0), Verdict::NoGain);
        assert_eq!(judge(1000.0, 990.0, 4.0), Verdict::Meets);
        assert_eq!(judge(100.0, 0.0, 4.0), Verdict::NoGain);
    }

    #[test]
    fn loads_read_short() {
        assert_eq!(load_text(40.0), "40");
        assert_eq!(load_text(87.5), "87.5");
        assert_eq!(load_text(86.254), "86.25");
    }
}
