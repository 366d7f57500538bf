//! Service-level objectives of a capacity search (`--slo 'p99<=20ms'`,
//! `--slo 'errors<=0.1%'`): parsed once, then checked against each probe's final
//! statistics.

use bmk_report::summary::FinalStats;

use crate::error::KitError;

/// A number as short as it reads, at most 2 decimals (`40`, `87.5`, `86.25`): loads
/// and limits in messages.
pub fn short_number(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// What an objective bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    /// Mean latency.
    Avg,
    /// A latency percentile (`p99` is 99.0).
    Percentile(f64),
    /// The largest latency.
    Max,
    /// Errors as a share of the attempts (events + errors), as the errors check counts
    /// them.
    Errors,
}

/// One objective: the metric at most (or below) a limit.
#[derive(Debug, Clone, PartialEq)]
pub struct Objective {
    /// The text as given, for messages and `run.json`.
    pub text: String,
    /// What is bounded.
    pub metric: Metric,
    /// The limit: milliseconds for latencies, percent for errors.
    pub limit: f64,
    /// `<` rather than `<=`.
    pub strict: bool,
}

impl Objective {
    /// Parses `p99<=20ms`, `avg < 1.5 s`, `max<=500us`, `errors<=0.1%`.
    pub fn parse(text: &str) -> Result<Objective, KitError> {
        let bad = |why: &str| {
            KitError::Usage(format!(
                "--slo '{text}': {why} (e.g. --slo 'p99<=20ms', --slo 'avg<50ms', --slo 'errors<=0.1%')"
            ))
        };
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let lower = compact.to_ascii_lowercase();
        let (name, strict, rest) = if let Some((n, r)) = lower.split_once("<=") {
            (n, false, r)
        } else if let Some((n, r)) = lower.split_once('<') {
            (n, true, r)
        } else {
            return Err(bad("an objective is METRIC<=LIMIT"));
        };
        let metric = match name {
            "avg" | "mean" => Metric::Avg,
            "max" => Metric::Max,
            "errors" | "error" => Metric::Errors,
            p if p.starts_with('p') => {
                let v: f64 = p[1..].parse().map_err(|_| {
                    bad(&format!("'{p}' is not a percentile (p50, p95, p99, p99.9)"))
                })?;
                if !(v > 0.0 && v < 100.0) {
                    return Err(bad(&format!(
                        "'{p}' is not a percentile between p0 and p100"
                    )));
                }
                Metric::Percentile(v)
            }
            other => {
                return Err(bad(&format!(
                    "unknown metric '{other}' (avg, p50, p95, p99, p99.9, max, errors)"
                )))
            }
        };
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, unit) = rest.split_at(digits);
        let value: f64 = number
            .parse()
            .map_err(|_| bad(&format!("'{number}' is not a number")))?;
        let limit = match (metric, unit) {
            (Metric::Errors, "%") => value,
            (Metric::Errors, _) => return Err(bad("an error limit is a percentage: errors<=0.1%")),
            (_, "ms") => value,
            (_, "s") => value * 1000.0,
            (_, "us") | (_, "µs") => value / 1000.0,
            _ => return Err(bad("a latency limit needs its unit: us, ms or s")),
        };
        if !limit.is_finite() || limit < 0.0 {
            return Err(bad("the limit must be a positive number"));
        }
        Ok(Objective {
            text: compact,
            metric,
            limit,
            strict,
        })
    }

    /// The metric's value in `f` (ms, or % for errors), when it was measured.
    pub fn value(&self, f: &FinalStats) -> Option<f64> {
        match self.metric {
            Metric::Avg => Some(f.latency.avg_ms),
            Metric::Max => Some(f.latency.max_ms),
            Metric::Percentile(p) => f.latency.percentile_ms(p),
            Metric::Errors => {
                let attempts = f.events + f.counters.errors;
                Some(if attempts == 0 {
                    0.0
                } else {
                    f.counters.errors as f64 / attempts as f64 * 100.0
                })
            }
        }
    }

    /// Whether `value` meets the objective.
    pub fn met_by(&self, value: f64) -> bool {
        if self.strict {
            value < self.limit
        } else {
            value <= self.limit
        }
    }

    /// The metric's name as `run.json` records it: `avg`, `max`, `p99`, `errors`.
    pub fn metric_name(&self) -> String {
        match self.metric {
            Metric::Avg => "avg".to_string(),
            Metric::Max => "max".to_string(),
            Metric::Percentile(p) => format!("p{}", short_number(p)),
            Metric::Errors => "errors".to_string(),
        }
    }

    /// The record `run.json` keeps.
    pub fn record(&self) -> bmk_results::results_dir::ObjectiveRecord {
        bmk_results::results_dir::ObjectiveRecord {
            text: self.text.clone(),
            metric: self.metric_name(),
            limit: self.limit,
            strict: self.strict,
        }
    }

    /// `p99 18.2 ms <= 20 ms`, or with `>` when it is not met.
    pub fn judged(&self, value: f64) -> String {
        let name = self.metric_name();
        let unit = match self.metric {
            Metric::Errors => " %",
            _ => " ms",
        };
        let op = match (self.met_by(value), self.strict) {
            (true, true) => "<",
            (true, false) => "<=",
            (false, true) => ">=",
            (false, false) => ">",
        };
        format!(
            "{name} {value:.3}{unit} {op} {}{unit}",
            short_number(self.limit)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objectives_parse_with_their_units() {
        let o = Objective::parse("p99<=20ms").unwrap();
        assert_eq!(
            (o.metric, o.limit, o.strict),
            (Metric::Percentile(99.0), 20.0, false)
        );
        let o = Objective::parse(" avg < 1.5 s").unwrap();
        assert_eq!((o.metric, o.limit, o.strict), (Metric::Avg, 1500.0, true));
        assert_eq!(Objective::parse("max<=500us").unwrap().limit, 0.5);
        let o = Objective::parse("errors<=0.1%").unwrap();
        assert_eq!((o.metric, o.limit), (Metric::Errors, 0.1));
        assert_eq!(
            Objective::parse("p99.9<=3ms").unwrap().metric,
            Metric::Percentile(99.9)
        );
    }

    #[test]
    fn bad_objectives_say_what_is_wrong() {
        for (text, says) in [
            ("p99=20ms", "METRIC<=LIMIT"),
            ("p99<=20", "needs its unit"),
            ("errors<=1", "percentage"),
            ("p100<=1ms", "between p0 and p100"),
            ("tps<=5ms", "unknown metric 'tps'"),
            ("avg<=xms", "'' is not a number"),
        ] {
            let e = Objective::parse(text).unwrap_err().to_string();
            assert!(e.contains(says) && e.starts_with("--slo"), "{text}: {e}");
        }
    }

    #[test]
    fn judged_lines_say_which_way() {
        let o = Objective::parse("p99<=20ms").unwrap();
        assert!(o.met_by(20.0) && !o.met_by(20.01));
        assert_eq!(o.judged(18.25), "p99 18.250 ms <= 20 ms");
        assert_eq!(o.judged(25.0), "p99 25.000 ms > 20 ms");
        assert!(!Objective::parse("avg<20ms").unwrap().met_by(20.0));
    }
}
