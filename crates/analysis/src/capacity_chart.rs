//! The capacity search's chart on the report page: each probe of `bmk kit search` as a
//! point of throughput (x) against the latency its first latency objective bounds (y),
//! numbered in the order the probes ran and coloured by verdict, with the objective's
//! limit drawn across and the answer ringed. It shows how the search closed in, which
//! the per-level table alone does not.

use plotters::prelude::*;

use bmk_results::load::RunData;
use bmk_results::results_dir::ObjectiveRecord;

use crate::Error;

/// One probe as the chart draws it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbePoint {
    /// Its number in run order (the level's index).
    pub number: u32,
    /// Events per second.
    pub tps: f64,
    /// The plotted latency, ms.
    pub latency_ms: f64,
    /// `meets`, `fails`, `no-gain` or `rejected`.
    pub verdict: String,
    /// Whether it is the search's answer.
    pub answer: bool,
}

/// The latency metric the chart plots, and its limit: the first latency objective, else
/// the 99th percentile without a limit.
fn plotted(objectives: &[ObjectiveRecord]) -> (String, Option<f64>) {
    objectives
        .iter()
        .find(|o| o.metric != "errors")
        .map(|o| (o.metric.clone(), Some(o.limit)))
        .unwrap_or_else(|| ("p99".to_string(), None))
}

/// The probes of a search run, in run order, with the plotted metric's name and limit;
/// `None` for a run that is not a search.
pub fn probes(run: &RunData) -> Option<(Vec<ProbePoint>, String, Option<f64>)> {
    let m = run.manifest.as_ref()?;
    let search = m.search.as_ref()?;
    let (metric, limit) = plotted(&search.objectives);
    let answer = m.answer.as_ref().and_then(|a| a.level.clone());
    let mut points = Vec::new();
    for level in &run.levels {
        let (Some(result), Some(probe)) = (&level.result, &level.info.probe) else {
            continue;
        };
        let f = &result.final_stats;
        let latency_ms = match metric.as_str() {
            "avg" => f.latency.avg_ms,
            "max" => f.latency.max_ms,
            p => p
                .strip_prefix('p')
                .and_then(|p| p.parse::<f64>().ok())
                .and_then(|p| f.latency.percentile_ms(p))
                .unwrap_or(0.0),
        };
        points.push(ProbePoint {
            number: level.info.index,
            tps: f.events_per_sec,
            latency_ms,
            verdict: probe.verdict.clone(),
            answer: answer.as_deref() == Some(level.name().as_str()),
        });
    }
    Some((points, metric, limit))
}

fn verdict_color(verdict: &str) -> RGBColor {
    match verdict {
        "meets" => RGBColor(0, 158, 115),
        "fails" => RGBColor(213, 94, 0),
        "no-gain" => RGBColor(230, 159, 0),
        _ => RGBColor(120, 120, 120),
    }
}

fn chart_error(e: impl std::fmt::Display) -> Error {
    Error::Chart {
        chart: TITLE.to_string(),
        message: e.to_string(),
    }
}

/// The chart's title.
pub const TITLE: &str = "Capacity search: throughput vs latency, probes in run order";

/// What the report shows of a capacity search: the answer in words and the chart.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CapacityView {
    /// The answer, one sentence (`bmk report`'s text too).
    pub answer: String,
    /// The chart's title.
    pub title: String,
    /// The chart (an SVG document), when a probe finished.
    pub svg: Option<String>,
}

/// The answer of a search run in words, or `None` for a run that is not a search.
pub fn answer_text(run: &RunData) -> Option<String> {
    let m = run.manifest.as_ref()?;
    let search = m.search.as_ref()?;
    let unit = |v: f64| {
        if search.by == "rate" {
            format!("{v}/s")
        } else {
            format!("{v} users")
        }
    };
    let objectives: Vec<&str> = search.objectives.iter().map(|o| o.text.as_str()).collect();
    let Some(a) = &m.answer else {
        return Some(format!(
            "Capacity search by {} for {}: no answer recorded (the search did not end).",
            search.by,
            objectives.join(", ")
        ));
    };
    let found = match (a.load, &a.level) {
        (Some(load), Some(level)) => format!(
            "{} ({level}): {:.2} TPS, avg {:.3} ms, p95 {:.3} ms, p99 {:.3} ms",
            unit(load),
            a.tps.unwrap_or(0.0),
            a.avg_ms.unwrap_or(0.0),
            a.p95_ms.unwrap_or(0.0),
            a.p99_ms.unwrap_or(0.0)
        ),
        _ => "none".to_string(),
    };
    let above = match (a.upper_load, &a.upper_level) {
        (Some(load), Some(level)) => format!("; above it {} ({level})", unit(load)),
        _ => String::new(),
    };
    Some(format!(
        "Capacity search by {} for {}: {found}{above}, in {} probes. {}.",
        search.by,
        objectives.join(", "),
        a.probes,
        a.reason
    ))
}

/// The report's view of a search run, or `None` for a run that is not one.
pub fn view(run: &RunData) -> Result<Option<CapacityView>, Error> {
    let Some(answer) = answer_text(run) else {
        return Ok(None);
    };
    Ok(Some(CapacityView {
        answer,
        title: TITLE.to_string(),
        svg: chart(run)?,
    }))
}

/// The chart of a search run as an SVG document, or `None` for a run that is not one
/// (or has no probe).
pub fn chart(run: &RunData) -> Result<Option<String>, Error> {
    let Some((points, metric, limit)) = probes(run) else {
        return Ok(None);
    };
    if points.is_empty() {
        return Ok(None);
    }
    draw(&points, &metric, limit).map(Some)
}

/// Draws `points` (throughput against `metric`), the limit as a dashed line.
pub fn draw(points: &[ProbePoint], metric: &str, limit: Option<f64>) -> Result<String, Error> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (crate::charts::WIDTH, crate::charts::HEIGHT))
            .into_drawing_area();
        root.fill(&WHITE).map_err(chart_error)?;
        let x1 = points.iter().map(|p| p.tps).fold(0.0, f64::max).max(1.0) * 1.1;
        // A probe far past the limit (a queue that grew for the whole level) would
        // squash the others: the axis stops at 3 times the limit, and such a probe is
        // drawn just below its top edge.
        let tallest = points.iter().map(|p| p.latency_ms).fold(0.0, f64::max);
        let y1 = match limit {
            Some(l) => tallest.min(3.0 * l).max(l) * 1.15,
            None => tallest * 1.1,
        }
        .max(1e-3);
        // Where a probe off the scale is drawn: inside the plot, below its top edge.
        let top = y1 * 0.92;
        let mut chart = ChartBuilder::on(&root)
            .caption(TITLE, ("sans-serif", 16))
            .margin(8)
            .x_label_area_size(34)
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..x1, 0.0..y1)
            .map_err(chart_error)?;
        // Tick values as short as they read (`500`, `2.5`), not `500.0`.
        let tick = |v: &f64| {
            let s = format!("{v:.2}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        };
        chart
            .configure_mesh()
            .x_desc("TPS")
            .y_desc(format!("{metric} ms"))
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(chart_error)?;
        if let Some(l) = limit {
            let red = RGBColor(180, 0, 0);
            let dashes: Vec<PathElement<(f64, f64)>> = (0..40)
                .filter(|i| i % 2 == 0)
                .map(|i| {
                    let a = x1 * i as f64 / 40.0;
                    let b = x1 * (i + 1) as f64 / 40.0;
                    PathElement::new(vec![(a, l), (b, l)], red.stroke_width(2))
                })
                .collect();
            chart
                .draw_series(dashes)
                .map_err(chart_error)?
                .label(format!("objective: {metric} ≤ {l} ms"))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], red.stroke_width(2))
                });
        }
        // The path the search took, thin, under the points.
        let path: Vec<(f64, f64)> = points
            .iter()
            .map(|p| (p.tps, p.latency_ms.min(top)))
            .collect();
        chart
            .draw_series(LineSeries::new(
                path,
                RGBColor(190, 190, 190).stroke_width(1),
            ))
            .map_err(chart_error)?;
        for verdict in ["meets", "fails", "no-gain", "rejected"] {
            let color = verdict_color(verdict);
            let these: Vec<&ProbePoint> = points.iter().filter(|p| p.verdict == verdict).collect();
            if these.is_empty() {
                continue;
            }
            chart
                .draw_series(
                    these
                        .iter()
                        .map(|p| Circle::new((p.tps, p.latency_ms.min(top)), 5, color.filled())),
                )
                .map_err(chart_error)?
                .label(verdict)
                .legend(move |(x, y)| Circle::new((x + 8, y), 5, color.filled()));
        }
        chart
            .draw_series(
                points.iter().filter(|p| p.answer).map(|p| {
                    Circle::new((p.tps, p.latency_ms.min(top)), 10, BLACK.stroke_width(2))
                }),
            )
            .map_err(chart_error)?;
        // Each number beside its point, up and to the right, clear of the answer's ring.
        chart
            .draw_series(points.iter().map(|p| {
                EmptyElement::at((p.tps, p.latency_ms.min(top)))
                    + Text::new(
                        p.number.to_string(),
                        (9, -19),
                        ("sans-serif", 13).into_font(),
                    )
            }))
            .map_err(chart_error)?;
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .label_font(("sans-serif", 12))
            .draw()
            .map_err(chart_error)?;
        root.present().map_err(chart_error)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_are_numbered_coloured_and_the_objective_drawn() {
        let p = |number: u32, tps: f64, latency_ms: f64, verdict: &str, answer: bool| ProbePoint {
            number,
            tps,
            latency_ms,
            verdict: verdict.into(),
            answer,
        };
        let points = [
            p(1, 40.0, 13.0, "meets", false),
            p(2, 80.0, 30.0, "meets", false),
            p(3, 100.0, 900.0, "fails", false),
            p(4, 87.0, 45.0, "meets", true),
        ];
        let svg = draw(&points, "avg", Some(50.0)).unwrap();
        for n in ["1", "2", "3", "4"] {
            assert!(
                svg.contains(&format!(">\n{n}\n</text>")),
                "probe {n} numbered"
            );
        }
        assert!(
            svg.contains("objective: avg ≤ 50 ms"),
            "the objective in the legend"
        );
        assert!(svg.contains(">\nfails\n</text>") && svg.contains(">\nmeets\n</text>"));
        assert!(
            !svg.contains(">\nrejected\n</text>"),
            "no legend for an absent verdict"
        );
        // The answer is ringed: one circle of radius 10.
        assert_eq!(svg.matches("r=\"10\"").count(), 1, "{svg}");
    }

    #[test]
    fn the_first_latency_objective_is_plotted() {
        let o = |metric: &str, limit: f64| ObjectiveRecord {
            text: String::new(),
            metric: metric.into(),
            limit,
            strict: false,
        };
        assert_eq!(
            plotted(&[o("errors", 0.1), o("p95", 20.0)]),
            ("p95".into(), Some(20.0))
        );
        assert_eq!(plotted(&[o("errors", 0.1)]), ("p99".into(), None));
    }
}
