//! SVG plots of a run, drawn with plotters' SVG backend (text as `<text>` elements, no fonts
//! needed):
//!
//! * [`memory_svg`]: device memory over time: bytes in use, pooled and pinned, the budget, and
//!   the report's peaks marked;
//! * [`timeline_svg`]: the timeline as a picture: one lane per stream with its copies and
//!   GEMMs as bars (the same work as the Chrome trace's stream tracks), above the memory
//!   curve. It stands in for a screenshot of the trace in Perfetto's UI where that UI cannot be
//!   loaded.

use std::io;
use std::path::Path;

use memhc_core::EventLog;
use memhc_core::backend::timeline::WorkSpan;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::{Result, TraceError};
use crate::replay::{MemorySample, Replay};
use crate::report::Peak;
use crate::work::{Work, WorkItem, items};

/// Width and height of the memory plot, in pixels.
const SIZE: (u32, u32) = (1200, 560);

const IN_USE: RGBColor = RGBColor(31, 119, 180);
const POOLED: RGBColor = RGBColor(255, 127, 14);
const PINNED: RGBColor = RGBColor(44, 160, 44);
const COMPUTE: RGBColor = RGBColor(148, 103, 189);
const H2D: RGBColor = RGBColor(214, 39, 40);
const D2H: RGBColor = RGBColor(23, 190, 207);

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type DrawResult = std::result::Result<(), Box<dyn std::error::Error>>;
/// One series of the memory plot: its label, colour and value.
type Series = (&'static str, RGBColor, fn(&MemorySample) -> u64);

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// Writes the memory-over-time plot of `replay` (budget `budget` bytes, `peaks` marked) to
/// `path`, titled `title`.
pub fn memory_svg(
    path: &Path,
    title: &str,
    replay: &Replay,
    budget: u64,
    peaks: &[Peak],
) -> Result<()> {
    let area = SVGBackend::new(path, SIZE).into_drawing_area();
    let end = span_ms(replay, &[]);
    draw_memory(&area, title, replay, budget, peaks, end)
        .and_then(|()| Ok(area.present()?))
        .map_err(|e| TraceError::io(path, io::Error::other(format!("drawing failed: {e}"))))
}

/// Writes the timeline picture of `log` (work timed by `spans`) to `path`, titled `title`.
pub fn timeline_svg(path: &Path, title: &str, log: &EventLog, spans: &[WorkSpan]) -> Result<()> {
    let replay = Replay::of(log);
    let work = items(log, spans);
    let lanes = log.launch_streams + u32::from(log.copy_stream.is_some());
    let height = 220 + 40 * lanes.max(1) + 320;
    let area = SVGBackend::new(path, (SIZE.0, height)).into_drawing_area();
    let drawn = (|| -> DrawResult {
        area.fill(&WHITE)?;
        let (top, bottom) = area.split_vertically(height - 320);
        let end = span_ms(&replay, &work);
        draw_lanes(&top, title, log, &work, lanes, end)?;
        draw_memory(&bottom, "device memory", &replay, log.budget, &[], end)?;
        area.present()?;
        Ok(())
    })();
    drawn.map_err(|e| TraceError::io(path, io::Error::other(format!("drawing failed: {e}"))))
}

/// The end of the time axis: the last event or the end of the last work, in ms.
fn span_ms(replay: &Replay, work: &[WorkItem]) -> f64 {
    let last = replay.samples.last().map_or(0, |s| s.t_ns);
    let work_end = work.iter().map(|w| w.end_ns).max().unwrap_or(0);
    ms(last.max(work_end)).max(1e-3)
}

fn draw_lanes(
    area: &Area<'_>,
    title: &str,
    log: &EventLog,
    work: &[WorkItem],
    lanes: u32,
    end: f64,
) -> DrawResult {
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(110)
        .build_cartesian_2d(0.0..end * 1.02, 0.0..f64::from(lanes.max(1)))?;
    let copy = log.copy_stream;
    chart
        .configure_mesh()
        .x_desc("time (ms)")
        .y_labels(lanes.max(1) as usize * 2 + 1)
        .y_label_formatter(&|y| {
            let lane = y.floor() as u32;
            if (y - y.floor() - 0.5).abs() > 0.26 || lane >= lanes {
                return String::new();
            }
            match copy {
                Some(c) if c == lane => "copy stream".into(),
                _ => format!("stream {lane}"),
            }
        })
        .disable_y_mesh()
        .draw()?;
    let bars = work.iter().map(|w| {
        let lane = f64::from(w.stream);
        // Zero-length (untimed) work still gets a visible sliver.
        let (x0, x1) = (
            ms(w.start_ns),
            ms(w.end_ns).max(ms(w.start_ns) + end * 1e-4),
        );
        let (colour, y0, y1) = match w.work {
            Work::Gemm => (COMPUTE, lane + 0.15, lane + 0.85),
            Work::CopyH2D => (H2D, lane + 0.15, lane + 0.5),
            Work::CopyD2H => (D2H, lane + 0.5, lane + 0.85),
        };
        Rectangle::new([(x0, y0), (x1, y1)], colour.filled())
    });
    chart.draw_series(bars)?;
    for (label, colour) in [("gemm", COMPUTE), ("copy in", H2D), ("copy out", D2H)] {
        chart
            .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())?
            .label(label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], colour.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    Ok(())
}

fn draw_memory(
    area: &Area<'_>,
    title: &str,
    replay: &Replay,
    budget: u64,
    peaks: &[Peak],
    end: f64,
) -> DrawResult {
    area.fill(&WHITE)?;
    let top = replay
        .samples
        .iter()
        .map(|s| s.held().max(s.pinned))
        .max()
        .unwrap_or(0)
        .max(budget);
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(110)
        .build_cartesian_2d(0.0..end * 1.02, 0.0..mib(top).max(1e-3) * 1.08)?;
    chart
        .configure_mesh()
        .x_desc("time (ms)")
        .y_desc("device MiB")
        .draw()?;
    // Step lines: a value holds until the next sample.
    let steps = |value: fn(&MemorySample) -> u64| {
        let mut points = Vec::with_capacity(replay.samples.len() * 2 + 1);
        let mut last = 0.0;
        points.push((0.0, 0.0));
        for s in &replay.samples {
            let (x, y) = (ms(s.t_ns), mib(value(s)));
            points.push((x, last));
            points.push((x, y));
            last = y;
        }
        points.push((end, last));
        points
    };
    let series: [Series; 3] = [
        ("in use + pooled", POOLED, |s| s.held()),
        ("in use", IN_USE, |s| s.in_use),
        ("pinned by the launch", PINNED, |s| s.pinned),
    ];
    for (label, colour, value) in series {
        chart
            .draw_series(LineSeries::new(steps(value), colour.stroke_width(2)))?
            .label(label)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], colour.stroke_width(2)));
    }
    if budget > 0 {
        chart
            .draw_series(LineSeries::new(
                [(0.0, mib(budget)), (end, mib(budget))],
                BLACK.stroke_width(1),
            ))?
            .label("budget")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], BLACK.stroke_width(1)));
    }
    for (i, p) in peaks.iter().enumerate() {
        let at = (ms(p.t_ns), mib(p.in_use));
        chart.draw_series(std::iter::once(Circle::new(at, 6, RED.filled())))?;
        let label = format!("peak {}", i + 1);
        chart.draw_series(std::iter::once(Text::new(label, at, ("sans-serif", 14))))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()?;
    Ok(())
}
