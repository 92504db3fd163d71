//! SVG plots of a sweep (`--plot DIR`): GFLOPS, evictions and misses against the swept
//! parameter, one line with point markers per series (`policy/mode`), drawn with plotters' SVG
//! backend. The misses plot adds the Belady lower bound when the records carry it.
//!
//! The SVG backend writes text as `<text>` elements, so no font files are needed; the layout
//! (label areas, legend box) uses plotters' built-in estimate of text sizes.

use std::fs;
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::drawing::DrawingAreaErrorKind;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use crate::error::{Error, Result};
use crate::record::{PARAMETERS, Record};

/// Width and height of every plot, in pixels.
const SIZE: (u32, u32) = (960, 640);

/// The label of the Belady lower bound in the misses plot.
const LOWER_BOUND_LABEL: &str = "lower bound (belady)";

/// One line of a plot: its legend label and its points, sorted by x.
struct Line {
    label: String,
    points: Vec<(f64, f64)>,
    /// Drawn dashed in black (a bound rather than a measured series).
    dashed: bool,
}

/// Everything one plot shows.
struct Chart<'a> {
    title: String,
    x_desc: &'a str,
    y_desc: &'a str,
    lines: Vec<Line>,
}

/// One metric to plot: the file stem, the y-axis label, and how to read it from a record.
struct Metric {
    stem: &'static str,
    y_desc: &'static str,
    value: fn(&Record) -> f64,
}

const METRICS: [Metric; 3] = [
    Metric {
        stem: "gflops",
        y_desc: "GFLOPS",
        value: |r| r.gflops,
    },
    Metric {
        stem: "evictions",
        y_desc: "evictions",
        value: |r| r.evictions as f64,
    },
    Metric {
        stem: "misses",
        y_desc: "misses",
        value: |r| r.misses as f64,
    },
];

/// Writes SVG plots of `records` against the swept parameter `swept` into `dir`, creating
/// `dir` if needed: `gflops-vs-<swept>.svg`, `evictions-vs-<swept>.svg` and
/// `misses-vs-<swept>.svg` (with the Belady lower bound when the records carry it), one line
/// per `policy/mode` series. Returns the paths written, in that order.
///
/// # Errors
///
/// [`Error::Usage`] when there are no records or a record carries no value for `swept`
/// (see [`Record::parameter`]); [`Error::Io`], with the file's path, when the directory
/// cannot be created, a plot cannot be drawn, or a file cannot be written.
pub fn write_plots(dir: &Path, records: &[Record], swept: &str) -> Result<Vec<PathBuf>> {
    let Some(first) = records.first() else {
        return Err(Error::Usage("--plot: there are no records to plot".into()));
    };
    let xs = records
        .iter()
        .map(|r| {
            r.parameter(swept).ok_or_else(|| {
                Error::Usage(format!(
                    "--plot: cannot plot against `{swept}`: the records carry no such parameter \
                     (plots draw one of {}, with a value in every record)",
                    PARAMETERS.join(", ")
                ))
            })
        })
        .collect::<Result<Vec<f64>>>()?;
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;

    let context = context(first, records, swept);
    let mut written = Vec::with_capacity(METRICS.len());
    // A plot that fails takes those written before it along: all of them or none.
    let discard = |written: &[PathBuf]| {
        for p in written {
            let _ = fs::remove_file(p);
        }
    };
    for metric in &METRICS {
        let mut lines = series_lines(records, &xs, metric.value);
        if metric.stem == "misses"
            && let Some(bound) = lower_bound_line(records, &xs)
        {
            lines.push(bound);
        }
        let chart = Chart {
            title: format!("{} against {swept}{context}", metric.y_desc),
            x_desc: swept,
            y_desc: metric.y_desc,
            lines,
        };
        let path = dir.join(format!("{}-vs-{swept}.svg", metric.stem));
        let svg = render(&chart).map_err(|e| {
            discard(&written);
            Error::io(
                &path,
                io::Error::other(format!("drawing the plot failed: {e}")),
            )
        })?;
        written.push(path.clone());
        fs::write(&path, svg).map_err(|e| {
            discard(&written);
            Error::io(&path, e)
        })?;
    }
    Ok(written)
}

/// One line per series, in the order the series first appear, with the finite points
/// `(x, value(record))` sorted by x.
fn series_lines(records: &[Record], xs: &[f64], value: fn(&Record) -> f64) -> Vec<Line> {
    let mut lines: Vec<Line> = Vec::new();
    for (r, &x) in records.iter().zip(xs) {
        let label = r.series();
        let i = match lines.iter().position(|l| l.label == label) {
            Some(i) => i,
            None => {
                lines.push(Line {
                    label,
                    points: Vec::new(),
                    dashed: false,
                });
                lines.len() - 1
            }
        };
        let y = value(r);
        if let Some(line) = lines.get_mut(i)
            && x.is_finite()
            && y.is_finite()
        {
            line.points.push((x, y));
        }
    }
    for line in &mut lines {
        line.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    lines
}

/// The Belady lower bound on misses at each x (the smallest one given there), when any record
/// carries it.
fn lower_bound_line(records: &[Record], xs: &[f64]) -> Option<Line> {
    let mut points: Vec<(f64, f64)> = Vec::new();
    for (r, &x) in records.iter().zip(xs) {
        let Some(bound) = r.miss_lower_bound else {
            continue;
        };
        if !x.is_finite() {
            continue;
        }
        let y = bound as f64;
        match points.iter_mut().find(|p| p.0 == x) {
            Some(p) => p.1 = p.1.min(y),
            None => points.push((x, y)),
        }
    }
    if points.is_empty() {
        return None;
    }
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    Some(Line {
        label: LOWER_BOUND_LABEL.into(),
        points,
        dashed: true,
    })
}

/// What was run, for the titles: the parameters other than the swept one that are the same in
/// every record, and the backend, as ` (N=64, vector size 16, ..., host backend)`, or nothing.
fn context(first: &Record, records: &[Record], swept: &str) -> String {
    let constant = |name: &str| -> Option<f64> {
        if name == swept {
            return None;
        }
        let v = first.parameter(name)?;
        records
            .iter()
            .all(|r| r.parameter(name) == Some(v))
            .then_some(v)
    };
    let mut parts = Vec::new();
    let same_dist = records.iter().all(|r| r.dist == first.dist);
    if same_dist && first.dist == "file" {
        parts.push("workload file".to_string());
    } else {
        if let Some(n) = constant("tensor-size") {
            parts.push(format!("N={n}"));
        }
        if let Some(v) = constant("vector-size") {
            parts.push(format!("vector size {v}"));
        }
        if let Some(r) = constant("repeat") {
            parts.push(format!("repeat {r}"));
        }
        if same_dist && !first.dist.is_empty() {
            parts.push(first.dist.clone());
        }
    }
    if let Some(v) = constant("vectors") {
        parts.push(format!("{v} vectors"));
    }
    if let Some(o) = constant("oversub") {
        parts.push(format!("oversub {o}"));
    }
    if records.iter().all(|r| r.backend == first.backend) && !first.backend.is_empty() {
        parts.push(format!("{} backend", first.backend));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

/// The axes' ranges: x from the smallest to the largest x (padded when they are equal), y from
/// 0 to 1.1 times the largest y (or 1 when every y is 0).
fn ranges(lines: &[Line]) -> (Range<f64>, Range<f64>) {
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0_f64);
    for &(x, y) in lines.iter().flat_map(|l| &l.points) {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    if x0 > x1 {
        // No points at all.
        (x0, x1) = (0.0, 1.0);
    }
    if x0 == x1 {
        let pad = if x0 == 0.0 { 1.0 } else { x0.abs() * 0.1 };
        (x0, x1) = (x0 - pad, x1 + pad);
    }
    let y_max = if y1 > 0.0 { y1 * 1.1 } else { 1.0 };
    (x0..x1, 0.0..y_max)
}

/// Where the legend goes: top left when the lines rise overall (the top left is then empty),
/// top right otherwise.
fn legend_position(lines: &[Line]) -> SeriesLabelPosition {
    let (first, last) = lines
        .iter()
        .filter_map(|l| Some((l.points.first()?.1, l.points.last()?.1)))
        .fold((0.0, 0.0), |(f, l), (a, b)| (f + a, l + b));
    if last > first {
        SeriesLabelPosition::UpperLeft
    } else {
        SeriesLabelPosition::UpperRight
    }
}

/// Draws `chart` into an SVG document.
fn render(chart: &Chart<'_>) -> std::result::Result<String, DrawingAreaErrorKind<io::Error>> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        draw(&root, chart)?;
        root.present()?;
    }
    Ok(svg)
}

/// Draws `chart` on `root`: title, axes with labels, one line with markers per series, legend.
fn draw(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    chart: &Chart<'_>,
) -> std::result::Result<(), DrawingAreaErrorKind<io::Error>> {
    root.fill(&WHITE)?;
    let (x_range, y_range) = ranges(&chart.lines);
    let mut ctx = ChartBuilder::on(root)
        .caption(&chart.title, ("sans-serif", 22))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(x_range, y_range)?;
    ctx.configure_mesh()
        .x_desc(chart.x_desc)
        .y_desc(chart.y_desc)
        .axis_desc_style(("sans-serif", 18))
        .label_style(("sans-serif", 14))
        .draw()?;

    let mut colour = 0;
    for line in &chart.lines {
        let points = line.points.iter().copied();
        if line.dashed {
            let style = BLACK.stroke_width(2);
            ctx.draw_series(DashedLineSeries::new(points, 8, 6, style))?
                .label(line.label.as_str())
                .legend(move |(x, y)| {
                    DashedPathElement::new(vec![(x, y), (x + 24, y)], 6, 4, style)
                });
            ctx.draw_series(
                line.points
                    .iter()
                    .map(|&p| Cross::new(p, 4, BLACK.stroke_width(2))),
            )?;
        } else {
            let color = Palette99::pick(colour).to_rgba();
            colour += 1;
            ctx.draw_series(LineSeries::new(points, color.stroke_width(2)))?
                .label(line.label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(2))
                });
            ctx.draw_series(PointSeries::of_element(
                line.points.iter().copied(),
                4,
                color.filled(),
                &|c, s, st| Circle::new(c, s, st),
            ))?;
        }
    }
    ctx.configure_series_labels()
        .position(legend_position(&chart.lines))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 16))
        .draw()?;
    Ok(())
}
