//! seekwatcher-style charts of block-request traces: three panels against time
//! (position on the device, throughput, seeks per second), reads and writes in
//! different colours; several traces side by side share the scales. Each trace comes
//! computed (the requests and the rates per time bin, as the block-trace frames of the
//! statistics module give them); this file only draws.

use super::{f64_col, str_col, Chart, ChartData, PlotError};
use polars::prelude::DataFrame;

/// The rates of a trace per time bin.
#[derive(Debug, Clone, PartialEq)]
pub struct IoRates {
    pub bin_s: f64,
    /// The start of each bin, in seconds since the step started.
    pub t_s: Vec<f64>,
    pub read_mb_s: Vec<f64>,
    pub write_mb_s: Vec<f64>,
    pub seeks_per_s: Vec<f64>,
}

/// One point's trace, ready to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct IoTrace {
    pub label: String,
    /// (seconds since the step started, offset on the device in MB) of each request.
    pub reads: Vec<(f64, f64)>,
    pub writes: Vec<(f64, f64)>,
    pub bins: IoRates,
}

impl IoTrace {
    /// A trace from its frames: `requests` (columns `t_s`, `offset_mb`, `op`: only
    /// `read` and `write` are drawn) and `rates` (one row per bin of `bin_s` seconds:
    /// `t_s`, `read_mb_s`, `write_mb_s`, `seeks_per_s`). No request is an empty chart.
    pub fn from_frames(
        label: &str,
        requests: &DataFrame,
        rates: &DataFrame,
        bin_s: f64,
    ) -> Result<IoTrace, PlotError> {
        if requests.height() == 0 {
            return Err(PlotError::Empty(format!("no block requests in {label}")));
        }
        let t = f64_col(requests, "t_s")?;
        let offset = f64_col(requests, "offset_mb")?;
        let op = str_col(requests, "op")?;
        let mut reads = Vec::new();
        let mut writes = Vec::new();
        for i in 0..requests.height() {
            let p = (t[i].unwrap_or(f64::NAN), offset[i].unwrap_or(0.0));
            match op[i].as_deref() {
                Some("read") => reads.push(p),
                Some("write") => writes.push(p),
                _ => {}
            }
        }
        let rate = |c: &str| -> Result<Vec<f64>, PlotError> {
            Ok(f64_col(rates, c)?
                .into_iter()
                .map(|v| v.unwrap_or(0.0))
                .collect())
        };
        Ok(IoTrace {
            label: label.to_string(),
            reads,
            writes,
            bins: IoRates {
                bin_s,
                t_s: rate("t_s")?,
                read_mb_s: rate("read_mb_s")?,
                write_mb_s: rate("write_mb_s")?,
                seeks_per_s: rate("seeks_per_s")?,
            },
        })
    }
}

impl Chart {
    /// Traces side by side, one column of three panels each (offset, MB/s, seeks/s),
    /// on the same time and value scales.
    pub fn io_traces(title: impl Into<String>, traces: Vec<IoTrace>) -> Chart {
        let width = 400 + 600 * traces.len().max(1) as u32;
        Chart {
            title: title.into(),
            size: (width, 900),
            data: ChartData::Io { traces },
        }
    }
}

/// The legend entries of an I/O chart.
pub(super) fn series_names(traces: &[IoTrace]) -> Vec<String> {
    let mut v = Vec::new();
    if traces.iter().any(|t| !t.reads.is_empty()) {
        v.push("read".to_string());
    }
    if traces.iter().any(|t| !t.writes.is_empty()) {
        v.push("write".to_string());
    }
    v.push("seeks/s".to_string());
    v
}

use super::fonts::FAMILY;
use plotters::coord::Shift;
use plotters::prelude::*;

type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

// The fslab palette's blue, red and green (Tableau 10).
const READ: RGBColor = RGBColor(0x4E, 0x79, 0xA7);
const WRITE: RGBColor = RGBColor(0xE1, 0x57, 0x59);
const SEEK: RGBColor = RGBColor(0x59, 0xA1, 0x4F);
const GRID: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);

fn top(x: f64) -> f64 {
    if x > 0.0 {
        x * 1.08
    } else {
        1.0
    }
}

/// Draw one column of three panels per trace, sharing the time axis and the scales.
pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    traces: &[IoTrace],
) -> DrawResult<DB> {
    let root = root.titled(title, (FAMILY, 27))?;
    let t_max = traces
        .iter()
        .flat_map(|t| t.bins.t_s.last().map(|s| s + t.bins.bin_s))
        .fold(0.0, f64::max);
    let mb_max = traces
        .iter()
        .flat_map(|t| t.reads.iter().chain(&t.writes).map(|p| p.1))
        .fold(0.0, f64::max);
    let rate_max = traces
        .iter()
        .flat_map(|t| t.bins.read_mb_s.iter().chain(&t.bins.write_mb_s).copied())
        .fold(0.0, f64::max);
    let seek_max = traces
        .iter()
        .flat_map(|t| t.bins.seeks_per_s.iter().copied())
        .fold(0.0, f64::max);
    let columns = root.split_evenly((1, traces.len().max(1)));
    for (col, t) in columns.iter().zip(traces) {
        let col = col.titled(&t.label, (FAMILY, 22))?;
        let panels = col.split_evenly((3, 1));
        // Offset on the device against time.
        let mut c = ChartBuilder::on(&panels[0])
            .margin(8)
            .x_label_area_size(36)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..top(t_max), 0.0..top(mb_max))?;
        c.configure_mesh()
            .light_line_style(GRID.mix(0.3))
            .bold_line_style(GRID)
            .y_desc("offset (MB)")
            .label_style((FAMILY, 14))
            .axis_desc_style((FAMILY, 16))
            .draw()?;
        c.draw_series(t.reads.iter().map(|&p| Circle::new(p, 2, READ.filled())))?
            .label("read")
            .legend(|(x, y)| Circle::new((x + 8, y), 4, READ.filled()));
        c.draw_series(t.writes.iter().map(|&p| Circle::new(p, 2, WRITE.filled())))?
            .label("write")
            .legend(|(x, y)| Circle::new((x + 8, y), 4, WRITE.filled()));
        c.configure_series_labels()
            .label_font((FAMILY, 14))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .draw()?;
        // Throughput.
        let mut c = ChartBuilder::on(&panels[1])
            .margin(8)
            .x_label_area_size(36)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..top(t_max), 0.0..top(rate_max))?;
        c.configure_mesh()
            .light_line_style(GRID.mix(0.3))
            .bold_line_style(GRID)
            .y_desc("MB/s")
            .label_style((FAMILY, 14))
            .axis_desc_style((FAMILY, 16))
            .draw()?;
        let b = &t.bins;
        c.draw_series(LineSeries::new(
            b.t_s.iter().copied().zip(b.read_mb_s.iter().copied()),
            READ.stroke_width(2),
        ))?;
        c.draw_series(LineSeries::new(
            b.t_s.iter().copied().zip(b.write_mb_s.iter().copied()),
            WRITE.stroke_width(2),
        ))?;
        // Seeks per second.
        let mut c = ChartBuilder::on(&panels[2])
            .margin(8)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..top(t_max), 0.0..top(seek_max))?;
        c.configure_mesh()
            .light_line_style(GRID.mix(0.3))
            .bold_line_style(GRID)
            .x_desc("time since the step started (s)")
            .y_desc("seeks/s")
            .label_style((FAMILY, 14))
            .axis_desc_style((FAMILY, 16))
            .draw()?;
        c.draw_series(LineSeries::new(
            b.t_s.iter().copied().zip(b.seeks_per_s.iter().copied()),
            SEEK.stroke_width(2),
        ))?;
    }
    Ok(())
}
