//! SVG charts drawn with `plotters`' SVG backend: line charts of values against users
//! or against time, with optional highlighted points (stalls), a shaded span of x (a
//! level's steady window) and shaded gaps (intervals in which nothing completed, whose
//! latency is unknown, not zero). A users axis of powers of two is drawn on a log2
//! scale. The legend sits in a strip below the plot, never on the data. Text is left to
//! the browser's fonts (plotters' built-in text measurement, no system font is read),
//! so the same chart comes out on any machine.

use plotters::prelude::*;

use crate::Error;

/// Chart size in pixels.
pub const WIDTH: u32 = 640;
/// Chart height in pixels, without the legend strip.
pub const HEIGHT: u32 = 300;
/// Height of one row of the legend strip below the plot.
const LEGEND_ROW: u32 = 22;

/// Line colours, in series order (colour-blind friendly, after Okabe and Ito).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(240, 228, 66),
    RGBColor(0, 0, 0),
];

/// A line chart to draw.
#[derive(Debug, Clone, Default)]
pub struct LineChart {
    /// Title above the plot.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// (name, points) of each line.
    pub series: Vec<(String, Vec<(f64, f64)>)>,
    /// Points drawn as red crosses on top (e.g. stalled intervals).
    pub marks: Vec<(f64, f64)>,
    /// Name of the marks in the legend.
    pub marks_label: String,
    /// A span of x shaded behind the lines, with its name in the legend.
    pub band: Option<(f64, f64, String)>,
    /// Spans of x shaded grey: intervals in which nothing completed, so a line has no
    /// value there (its points are NaN) rather than a zero.
    pub gaps: Vec<(f64, f64)>,
    /// How the x axis is drawn.
    pub x_scale: XScale,
    /// Vertical lines at x with a label at their top (the start of each level on a
    /// sweep's timeline, labelled with its users).
    pub verticals: Vec<(f64, String)>,
}

/// The x axis's scale.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum XScale {
    /// Evenly spaced values.
    #[default]
    Linear,
    /// Powers of two evenly spaced (1, 2, 4 … 1024 users), each labelled with its
    /// value; for x values that are all powers of two.
    Log2,
    /// Percentiles (0–100) spread by their nines: 0, 90, 99, 99.9 … evenly spaced,
    /// where a latency distribution's tail lives.
    Nines,
}

impl XScale {
    /// [`XScale::Log2`] when `xs` are at least three distinct powers of two (where a
    /// linear axis squashes 1, 2, 4 against 64), else [`XScale::Linear`].
    pub fn for_users(xs: &[f64]) -> XScale {
        let mut distinct: Vec<u64> = Vec::new();
        for &x in xs {
            if !(x >= 1.0 && x.fract() == 0.0 && (x as u64).is_power_of_two()) {
                return XScale::Linear;
            }
            if !distinct.contains(&(x as u64)) {
                distinct.push(x as u64);
            }
        }
        if distinct.len() >= 3 {
            XScale::Log2
        } else {
            XScale::Linear
        }
    }

    fn to_axis(self, x: f64) -> f64 {
        match self {
            XScale::Linear => x,
            XScale::Log2 => x.log2(),
            // The 100th percentile would be infinitely far: it is drawn at the last
            // nine a chart can label.
            XScale::Nines => -(1.0 - x.min(MAX_NINES_PCT) / 100.0).log10(),
        }
    }
}

/// The highest percentile a [`XScale::Nines`] axis reaches (five nines).
pub const MAX_NINES_PCT: f64 = 99.999;

/// The percentile at `nines` on a [`XScale::Nines`] axis (1 → 90, 2 → 99).
pub fn nines_percentile(nines: f64) -> f64 {
    100.0 * (1.0 - 10f64.powf(-nines))
}

/// `99.9%` for 3 nines; `0%` for none.
fn nines_label(nines: f64) -> String {
    let pct = nines_percentile(nines);
    // Whole nines only: 90, 99, 99.9 need 0, 0, 1 decimals.
    let decimals = (nines.round() as usize).saturating_sub(2);
    format!("{pct:.decimals$}%")
}

/// One entry of the legend strip.
enum LegendKey {
    Line(RGBColor),
    Cross,
    Area(RGBAColor),
}

/// The finite runs of `points`: a NaN value ends a run, so a line is broken where its
/// value is unknown instead of being drawn through a made-up zero.
fn finite_runs(points: &[(f64, f64)]) -> Vec<Vec<(f64, f64)>> {
    let mut runs = vec![Vec::new()];
    for &(x, y) in points {
        if y.is_finite() {
            runs.last_mut().expect("never empty").push((x, y));
        } else if !runs.last().expect("never empty").is_empty() {
            runs.push(Vec::new());
        }
    }
    runs.retain(|r| !r.is_empty());
    runs
}

fn chart_error(title: &str, e: impl std::fmt::Display) -> Error {
    Error::Chart {
        chart: title.to_string(),
        message: e.to_string(),
    }
}

/// Axis range covering `values` with a little margin; a flat or empty range is widened.
fn range(values: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if from_zero {
        lo = lo.min(0.0);
    }
    if hi - lo < 1e-12 {
        hi = lo + if lo.abs() > 0.0 { lo.abs() * 0.1 } else { 1.0 };
    }
    let pad = (hi - lo) * 0.05;
    (if from_zero && lo >= 0.0 { lo } else { lo - pad }, hi + pad)
}

/// How many labels an axis asks plotters for.
const Y_TICKS: usize = 6;
const X_TICKS: usize = 8;

/// How an axis writes its tick values: one unit for the whole axis (none, k, M) and as
/// many decimals as the step between ticks needs, so that neighbouring ticks never read
/// the same (a server counter between 14,100 and 14,600 reads 14.1k … 14.6k, not 14k on
/// every tick).
#[derive(Debug, Clone, Copy, PartialEq)]
struct TickFormat {
    divisor: f64,
    suffix: &'static str,
    decimals: usize,
}

impl TickFormat {
    /// The format for an axis from `lo` to `hi` with about `ticks` labels.
    fn for_axis(lo: f64, hi: f64, ticks: usize) -> TickFormat {
        let top = lo.abs().max(hi.abs());
        let (divisor, suffix) = if top >= 1e6 {
            (1e6, "M")
        } else if top >= 1e4 {
            (1e3, "k")
        } else {
            (1.0, "")
        };
        let step = nice_step((hi - lo) / ticks.max(1) as f64) / divisor;
        // The tolerance keeps a step of exactly 0.1 at one decimal (log10 is inexact).
        let decimals = if step > 0.0 && step < 1.0 {
            (-step.log10() - 1e-9).ceil().clamp(0.0, 6.0) as usize
        } else {
            0
        };
        TickFormat {
            divisor,
            suffix,
            decimals,
        }
    }

    fn label(&self, v: f64) -> String {
        // Zero is zero in any unit ("0", not "0k").
        if v == 0.0 {
            return "0".to_string();
        }
        format!("{:.*}{}", self.decimals, v / self.divisor, self.suffix)
    }
}

/// `raw` rounded up to 1, 2 or 5 times a power of ten: the step a chart library picks
/// for its ticks (or a finer one, which only costs a decimal); 0 for an empty range.
fn nice_step(raw: f64) -> f64 {
    if !raw.is_finite() || raw <= 0.0 {
        return 0.0;
    }
    let power = 10f64.powf(raw.log10().floor());
    let m = raw / power;
    let nice = if m <= 1.0 + 1e-9 {
        1.0
    } else if m <= 2.0 + 1e-9 {
        2.0
    } else if m <= 5.0 + 1e-9 {
        5.0
    } else {
        10.0
    };
    nice * power
}

impl LineChart {
    /// The entries of the legend strip: every line, the marks, the band and the gaps.
    fn legend(&self) -> Vec<(String, LegendKey)> {
        let mut keys: Vec<(String, LegendKey)> = Vec::new();
        if let Some((_, _, name)) = &self.band {
            keys.push((name.clone(), LegendKey::Area(BAND.mix(0.12))));
        }
        for (i, (name, _)) in self.series.iter().enumerate() {
            keys.push((name.clone(), LegendKey::Line(PALETTE[i % PALETTE.len()])));
        }
        if !self.marks.is_empty() {
            keys.push((self.marks_label.clone(), LegendKey::Cross));
        }
        if !self.gaps.is_empty() {
            keys.push(("nothing completed".into(), LegendKey::Area(GAP.mix(0.35))));
        }
        // A single line needs no legend: the title names it.
        if keys.len() == 1 && matches!(keys[0].1, LegendKey::Line(_)) {
            keys.clear();
        }
        keys
    }

    /// The chart as an SVG document.
    pub fn to_svg(&self) -> Result<String, Error> {
        let err = |e: &dyn std::fmt::Display| chart_error(&self.title, e);
        let legend = self.legend();
        // Legend entries laid out left to right, wrapping: a rough width per entry
        // from its text length (the browser's font decides the real one).
        let entry_width = |name: &str| 30 + 7 * name.chars().count() as u32;
        let mut rows = if legend.is_empty() { 0 } else { 1 };
        let mut used = 0;
        for (name, _) in &legend {
            let w = entry_width(name);
            if used > 0 && used + w > WIDTH - 16 {
                rows += 1;
                used = 0;
            }
            used += w;
        }
        let height = HEIGHT + rows * LEGEND_ROW;
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
            root.fill(&WHITE).map_err(|e| err(&e))?;
            let (plot_area, legend_area) = root.split_vertically(HEIGHT);
            let scale = self.x_scale;
            let xs = self
                .series
                .iter()
                .flat_map(|s| s.1.iter().map(|p| scale.to_axis(p.0)))
                .chain(
                    self.gaps
                        .iter()
                        .flat_map(|g| [g.0, g.1])
                        .map(|x| scale.to_axis(x)),
                );
            let ys = self
                .series
                .iter()
                .flat_map(|s| s.1.iter().map(|p| p.1))
                .chain(self.marks.iter().map(|p| p.1));
            // Users counts (and whole seconds) are whole numbers: no tick at 1.5 users.
            let whole_x = self
                .series
                .iter()
                .flat_map(|s| s.1.iter())
                .all(|p| p.0.fract() == 0.0);
            let (x0, x1) = range(xs, false);
            let band_style = BAND.mix(0.12);
            let gap_style = GAP.mix(0.35);
            let x_labels = if whole_x || scale != XScale::Linear {
                ((x1 - x0).floor() as usize + 1).clamp(2, X_TICKS)
            } else {
                X_TICKS
            };
            let (y0, y1) = range(ys, true);
            let x_format = TickFormat::for_axis(x0, x1, x_labels);
            let y_format = TickFormat::for_axis(y0, y1, Y_TICKS);
            let mut chart = ChartBuilder::on(&plot_area)
                .caption(&self.title, ("sans-serif", 16))
                .margin(8)
                .x_label_area_size(34)
                .y_label_area_size(56)
                .build_cartesian_2d(x0..x1, y0..y1)
                .map_err(|e| err(&e))?;
            let x_label = |v: &f64| -> String {
                match scale {
                    // Only whole powers carry a label: 2^k written as its value.
                    XScale::Log2 if v.fract().abs() < 1e-9 => {
                        format!("{}", 2f64.powf(v.round()))
                    }
                    XScale::Log2 => String::new(),
                    XScale::Nines if v.fract().abs() < 1e-9 => nines_label(v.round()),
                    XScale::Nines => String::new(),
                    XScale::Linear if whole_x && v.fract() != 0.0 => String::new(),
                    XScale::Linear => x_format.label(*v),
                }
            };
            chart
                .configure_mesh()
                .x_desc(&self.x_label)
                .y_desc(&self.y_label)
                .x_labels(x_labels)
                .y_labels(Y_TICKS)
                .x_label_formatter(&x_label)
                .y_label_formatter(&|v| y_format.label(*v))
                .light_line_style(RGBColor(235, 235, 235))
                .draw()
                .map_err(|e| err(&e))?;
            if let Some((from, to, _)) = &self.band {
                let (from, to) = (scale.to_axis(*from).max(x0), scale.to_axis(*to).min(x1));
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(from, y0), (to, y1)],
                        band_style.filled(),
                    )))
                    .map_err(|e| err(&e))?;
            }
            for (x, label) in &self.verticals {
                let x = scale.to_axis(*x);
                if !(x0..=x1).contains(&x) {
                    continue;
                }
                let grey = RGBColor(120, 120, 120);
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(x, y0), (x, y1)],
                        grey.stroke_width(1),
                    )))
                    .map_err(|e| err(&e))?;
                chart
                    .draw_series(std::iter::once(Text::new(
                        label.clone(),
                        (x, y1),
                        ("sans-serif", 11).into_font().color(&grey),
                    )))
                    .map_err(|e| err(&e))?;
            }
            chart
                .draw_series(self.gaps.iter().map(|&(from, to)| {
                    let (from, to) = (scale.to_axis(from).max(x0), scale.to_axis(to).min(x1));
                    Rectangle::new([(from, y0), (to, y1)], gap_style.filled())
                }))
                .map_err(|e| err(&e))?;
            for (i, (_, points)) in self.series.iter().enumerate() {
                let color = PALETTE[i % PALETTE.len()];
                let style = ShapeStyle::from(&color).stroke_width(2);
                let points: Vec<(f64, f64)> =
                    points.iter().map(|&(x, y)| (scale.to_axis(x), y)).collect();
                let many = points.len() > 40;
                for run in finite_runs(&points) {
                    chart
                        .draw_series(LineSeries::new(run.iter().copied(), style))
                        .map_err(|e| err(&e))?;
                    if !many {
                        chart
                            .draw_series(run.iter().map(|&p| Circle::new(p, 3, color.filled())))
                            .map_err(|e| err(&e))?;
                    }
                }
            }
            chart
                .draw_series(
                    self.marks
                        .iter()
                        .map(|&(x, y)| Cross::new((scale.to_axis(x), y), 6, RED.stroke_width(3))),
                )
                .map_err(|e| err(&e))?;
            draw_legend(&legend_area, &legend, entry_width).map_err(|e| err(&e))?;
            root.present().map_err(|e| err(&e))?;
        }
        Ok(svg)
    }
}

/// Colour of the steady window's band.
const BAND: RGBColor = RGBColor(0, 158, 115);
/// Colour of the spans in which nothing completed.
const GAP: RGBColor = RGBColor(150, 150, 150);

/// Draws `legend` into `area` (the strip below the plot), left to right, wrapping.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    legend: &[(String, LegendKey)],
    entry_width: impl Fn(&str) -> u32,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (mut x, mut y) = (64i32, (LEGEND_ROW / 2) as i32);
    for (name, key) in legend {
        let w = entry_width(name) as i32;
        if x > 64 && x + w > (WIDTH - 8) as i32 {
            x = 64;
            y += LEGEND_ROW as i32;
        }
        match key {
            LegendKey::Line(color) => area.draw(&PathElement::new(
                vec![(x, y), (x + 18, y)],
                color.stroke_width(2),
            ))?,
            LegendKey::Cross => area.draw(&Cross::new((x + 9, y), 5, RED.stroke_width(2)))?,
            LegendKey::Area(color) => area.draw(&Rectangle::new(
                [(x, y - 6), (x + 18, y + 6)],
                color.filled(),
            ))?,
        }
        area.draw(&Text::new(
            name.as_str(),
            (x + 24, y - 7),
            ("sans-serif", 12).into_font(),
        ))?;
        x += w;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_lines_marks_and_labels_as_svg() {
        let chart = LineChart {
            title: "TPS".into(),
            x_label: "seconds".into(),
            y_label: "TPS".into(),
            series: vec![("TPS".into(), vec![(1.0, 100.0), (2.0, 40.0), (3.0, 105.0)])],
            marks: vec![(2.0, 40.0)],
            marks_label: "stall".into(),
            band: Some((1.5, 3.0, "steady window".into())),
            ..LineChart::default()
        };
        let svg = chart.to_svg().unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..60]);
        assert!(svg.contains("<polyline"));
        assert!(svg.contains(">\nTPS\n</text>"));
        assert!(svg.contains(">\nstall\n</text>"));
        assert!(svg.contains(">\nsteady window\n</text>"));
        assert!(svg.contains("<rect"), "the band is a shaded rectangle");
        assert!(!svg.contains("http://") || svg.contains("xmlns=\"http://www.w3.org/2000/svg\""));
    }

    #[test]
    fn a_users_axis_has_whole_ticks_only() {
        let chart = LineChart {
            title: "TPS vs users".into(),
            x_label: "users".into(),
            y_label: "TPS".into(),
            series: vec![("TPS".into(), vec![(1.0, 100.0), (2.0, 180.0), (3.0, 240.0)])],
            ..LineChart::default()
        };
        let svg = chart.to_svg().unwrap();
        for half in ["1.5", "2.5"] {
            assert!(!svg.contains(&format!(">\n{half}\n</text>")), "{svg}");
        }
        for whole in ["1", "2", "3"] {
            assert!(
                svg.contains(&format!(">\n{whole}\n</text>")),
                "no tick {whole}"
            );
        }
    }

    #[test]
    fn tick_labels_have_the_decimals_their_step_needs() {
        // A server counter moving little: every tick reads differently.
        let f = TickFormat::for_axis(14_050.0, 14_650.0, 6);
        let labels: Vec<String> = [14_100.0, 14_200.0, 14_300.0]
            .iter()
            .map(|v| f.label(*v))
            .collect();
        assert_eq!(labels, ["14.1k", "14.2k", "14.3k"]);
        // Wide ranges keep short whole labels.
        assert_eq!(
            TickFormat::for_axis(0.0, 50_000.0, 6).label(45_000.0),
            "45k"
        );
        assert_eq!(
            TickFormat::for_axis(0.0, 2.4e6, 6).label(1_234_567.0),
            "1.2M"
        );
        assert_eq!(
            TickFormat::for_axis(1.2e6, 1.26e6, 6).label(1.23e6),
            "1.23M"
        );
        assert_eq!(TickFormat::for_axis(0.0, 600.0, 6).label(250.0), "250");
        // Latencies in ms: as many decimals as the step.
        assert_eq!(TickFormat::for_axis(0.0, 6.0, 6).label(2.0), "2");
        assert_eq!(TickFormat::for_axis(0.0, 3.0, 6).label(2.5), "2.5");
        assert_eq!(TickFormat::for_axis(0.2, 0.26, 6).label(0.25), "0.25");
        assert_eq!(TickFormat::for_axis(0.0, 0.6, 6).label(0.1), "0.1");
        assert_eq!(TickFormat::for_axis(0.0, 50_000.0, 6).label(0.0), "0");
        // An empty range does not divide by zero.
        assert_eq!(TickFormat::for_axis(5.0, 5.0, 6).label(5.0), "5");
    }

    #[test]
    fn gaps_break_the_lines_and_the_legend_sits_below_the_plot() {
        let chart = LineChart {
            title: "latency".into(),
            x_label: "seconds".into(),
            y_label: "ms".into(),
            series: vec![
                (
                    "p95".into(),
                    vec![(1.0, 2.0), (2.0, f64::NAN), (3.0, 4.0), (4.0, 5.0)],
                ),
                (
                    "p99".into(),
                    vec![(1.0, 3.0), (2.0, f64::NAN), (3.0, 6.0), (4.0, 7.0)],
                ),
            ],
            gaps: vec![(1.0, 2.0)],
            ..LineChart::default()
        };
        let svg = chart.to_svg().unwrap();
        // Each line is two runs (1, then 3–4), none through a zero; plus its legend key.
        let lines: Vec<&str> = svg
            .lines()
            .filter(|l| l.contains("<polyline") && l.contains("stroke-width=\"2\""))
            .collect();
        assert_eq!(lines.len(), 2 * 2 + 2, "{svg}");
        assert!(
            lines.iter().all(|l| !l.contains(",257 ")),
            "a point at y = 0: {svg}"
        );
        assert!(svg.contains(">\nnothing completed\n</text>"));
        let height = HEIGHT + LEGEND_ROW;
        assert!(
            svg.contains(&format!("height=\"{height}\"")),
            "{}",
            &svg[..200]
        );
        // Legend text lies below the plot area.
        let y_of = |label: &str| -> u32 {
            let at = svg.find(&format!(">\n{label}\n</text>")).unwrap();
            let tag = &svg[svg[..at].rfind("<text").unwrap()..at];
            let y = tag.split("y=\"").nth(1).unwrap();
            y[..y.find('"').unwrap()].parse().unwrap()
        };
        assert!(y_of("p99") > HEIGHT, "legend inside the plot");
    }

    #[test]
    fn powers_of_two_get_a_log2_axis_labelled_with_their_values() {
        assert_eq!(XScale::for_users(&[1.0, 2.0, 4.0, 64.0]), XScale::Log2);
        assert_eq!(XScale::for_users(&[1.0, 2.0]), XScale::Linear);
        assert_eq!(XScale::for_users(&[1.0, 3.0, 4.0]), XScale::Linear);
        let chart = LineChart {
            title: "TPS vs users".into(),
            x_label: "users".into(),
            y_label: "TPS".into(),
            series: vec![(
                "TPS".into(),
                vec![(1.0, 10.0), (4.0, 35.0), (16.0, 90.0), (64.0, 100.0)],
            )],
            x_scale: XScale::Log2,
            ..LineChart::default()
        };
        let svg = chart.to_svg().unwrap();
        for tick in ["1", "2", "4", "8", "16", "32", "64"] {
            assert!(
                svg.contains(&format!(">\n{tick}\n</text>")),
                "no tick {tick}"
            );
        }
        assert!(!svg.contains(">\n1.5\n</text>"));
    }

    #[test]
    fn a_nines_axis_spreads_the_tail() {
        assert_eq!(XScale::Nines.to_axis(90.0), 1.0);
        assert!((XScale::Nines.to_axis(99.9) - 3.0).abs() < 1e-9);
        assert!((XScale::Nines.to_axis(100.0) - 5.0).abs() < 1e-9);
        let labels: Vec<String> = (0..5).map(|n| nines_label(n as f64)).collect();
        assert_eq!(labels, ["0%", "90%", "99%", "99.9%", "99.99%"]);
    }

    #[test]
    fn steps_are_rounded_up_to_one_two_or_five() {
        assert_eq!(nice_step(83.0), 100.0);
        assert_eq!(nice_step(100.0), 100.0);
        assert_eq!(nice_step(0.13), 0.2);
        assert_eq!(nice_step(4.2), 5.0);
        assert_eq!(nice_step(0.0), 0.0);
    }
}
