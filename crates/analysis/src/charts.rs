//! SVG charts drawn with `plotters`' SVG backend: line charts of values against users
//! or against time, with optional highlighted points (stalls) and a shaded span of x
//! (a level's steady window). Text is left to the
//! browser's fonts (plotters' built-in text measurement, no system font is read), so
//! the same chart comes out on any machine.

use plotters::prelude::*;

use crate::Error;

/// Chart size in pixels.
pub const WIDTH: u32 = 640;
/// Chart height in pixels.
pub const HEIGHT: u32 = 300;

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
    /// The chart as an SVG document.
    pub fn to_svg(&self) -> Result<String, Error> {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
            root.fill(&WHITE).map_err(|e| chart_error(&self.title, e))?;
            let xs = self.series.iter().flat_map(|s| s.1.iter().map(|p| p.0));
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
            let band_style = RGBColor(0, 158, 115).mix(0.12);
            let x_labels = if whole_x {
                ((x1 - x0).floor() as usize + 1).clamp(2, X_TICKS)
            } else {
                X_TICKS
            };
            let (y0, y1) = range(ys, true);
            let x_format = TickFormat::for_axis(x0, x1, x_labels);
            let y_format = TickFormat::for_axis(y0, y1, Y_TICKS);
            let mut chart = ChartBuilder::on(&root)
                .caption(&self.title, ("sans-serif", 16))
                .margin(8)
                .x_label_area_size(34)
                .y_label_area_size(56)
                .build_cartesian_2d(x0..x1, y0..y1)
                .map_err(|e| chart_error(&self.title, e))?;
            chart
                .configure_mesh()
                .x_desc(&self.x_label)
                .y_desc(&self.y_label)
                .x_labels(x_labels)
                .y_labels(Y_TICKS)
                .x_label_formatter(&|v| {
                    if whole_x && v.fract() != 0.0 {
                        String::new()
                    } else {
                        x_format.label(*v)
                    }
                })
                .y_label_formatter(&|v| y_format.label(*v))
                .light_line_style(RGBColor(235, 235, 235))
                .draw()
                .map_err(|e| chart_error(&self.title, e))?;
            if let Some((from, to, name)) = &self.band {
                let (from, to) = (from.max(x0), to.min(x1));
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(from, y0), (to, y1)],
                        band_style.filled(),
                    )))
                    .map_err(|e| chart_error(&self.title, e))?
                    .label(name.as_str())
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 5), (x + 16, y + 5)], band_style.filled())
                    });
            }
            for (i, (name, points)) in self.series.iter().enumerate() {
                let color = PALETTE[i % PALETTE.len()];
                let style = ShapeStyle::from(&color).stroke_width(2);
                let many = points.len() > 40;
                chart
                    .draw_series(LineSeries::new(points.iter().copied(), style))
                    .map_err(|e| chart_error(&self.title, e))?
                    .label(name.as_str())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
                    });
                if !many {
                    chart
                        .draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))
                        .map_err(|e| chart_error(&self.title, e))?;
                }
            }
            if !self.marks.is_empty() {
                chart
                    .draw_series(
                        self.marks
                            .iter()
                            .map(|&p| Cross::new(p, 6, RED.stroke_width(3))),
                    )
                    .map_err(|e| chart_error(&self.title, e))?
                    .label(self.marks_label.as_str())
                    .legend(|(x, y)| Cross::new((x + 8, y), 5, RED.stroke_width(2)));
            }
            if self.series.len() > 1 || !self.marks.is_empty() || self.band.is_some() {
                chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::LowerRight)
                    .background_style(WHITE.mix(0.85))
                    .border_style(RGBColor(180, 180, 180))
                    .label_font(("sans-serif", 12))
                    .draw()
                    .map_err(|e| chart_error(&self.title, e))?;
            }
            root.present().map_err(|e| chart_error(&self.title, e))?;
        }
        Ok(svg)
    }
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
    fn steps_are_rounded_up_to_one_two_or_five() {
        assert_eq!(nice_step(83.0), 100.0);
        assert_eq!(nice_step(100.0), 100.0);
        assert_eq!(nice_step(0.13), 0.2);
        assert_eq!(nice_step(4.2), 5.0);
        assert_eq!(nice_step(0.0), 0.0);
    }
}
