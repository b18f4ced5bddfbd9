//! seekwatcher-style charts of block-request traces (`io.parquet`): three panels against
//! time (position on the device, throughput, seeks per second), reads and writes in
//! different colours; [`Chart::io_compare`] puts two points side by side on the same
//! scales. The rates come from [`crate::analysis::io_trace`].

use super::{Chart, ChartData, PlotError};
use crate::analysis::io_trace::{self, IoBins};
use crate::parse::block_trace::IoOp;
use polars::prelude::DataFrame;

/// One point's trace, ready to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct IoTrace {
    pub label: String,
    /// (seconds since the step started, offset on the device in MB) of each request.
    pub reads: Vec<(f64, f64)>,
    pub writes: Vec<(f64, f64)>,
    pub bins: IoBins,
}

impl IoTrace {
    fn from_frame(
        df: &DataFrame,
        point_id: Option<&str>,
        label: &str,
        bin_s: Option<f64>,
    ) -> Result<IoTrace, PlotError> {
        let (run, run_label) = io_trace::first_run(df, point_id)?;
        let rows = io_trace::rows_from_frame(&run, point_id)?;
        if rows.is_empty() {
            return Err(PlotError::Empty(format!(
                "no block requests{}",
                point_id
                    .map(|p| format!(" for point {p}"))
                    .unwrap_or_default()
            )));
        }
        let span = rows
            .iter()
            .map(|r| r.t_s)
            .filter(|t| t.is_finite())
            .fold(0.0, f64::max);
        let bins = io_trace::bins(&rows, bin_s.unwrap_or_else(|| io_trace::default_bin(span)));
        let mut reads = Vec::new();
        let mut writes = Vec::new();
        for r in &rows {
            let p = (r.t_s, (r.sector * 512) as f64 / 1e6);
            match r.op {
                IoOp::Read => reads.push(p),
                IoOp::Write => writes.push(p),
                _ => {}
            }
        }
        Ok(IoTrace {
            label: match run_label {
                Some(r) => format!("{label} ({r})"),
                None => label.to_string(),
            },
            reads,
            writes,
            bins,
        })
    }
}

impl Chart {
    /// The trace of one step: three panels against time (offset, MB/s, seeks/s), from an
    /// `io.parquet` frame of one point (or of several, with `point_id` choosing one).
    /// Of several traced runs it draws one: the point's lowest traced iteration
    /// ([`io_trace::first_run`]), named in the label.
    pub fn io_trace(io: &DataFrame, point_id: Option<&str>) -> Result<Chart, PlotError> {
        let label = point_id.unwrap_or("trace");
        let t = IoTrace::from_frame(io, point_id, label, None)?;
        Ok(Chart {
            title: format!("Block I/O: {label}"),
            size: (1000, 900),
            data: ChartData::Io { traces: vec![t] },
        })
    }

    /// Two points side by side, on the same time bins and scales (e.g. ext3 and ext4).
    pub fn io_compare(
        io: &DataFrame,
        left: (&str, &str),
        right: (&str, &str),
    ) -> Result<Chart, PlotError> {
        let rows = |p| {
            io_trace::first_run(io, Some(p))
                .and_then(|(run, _)| io_trace::rows_from_frame(&run, Some(p)))
        };
        let span = [left.0, right.0]
            .into_iter()
            .map(|p| {
                rows(p).map(|r| {
                    r.iter()
                        .map(|x| x.t_s)
                        .filter(|t| t.is_finite())
                        .fold(0.0, f64::max)
                })
            })
            .collect::<Result<Vec<f64>, _>>()?
            .into_iter()
            .fold(0.0, f64::max);
        let bin = io_trace::default_bin(span);
        let traces = vec![
            IoTrace::from_frame(io, Some(left.0), left.1, Some(bin))?,
            IoTrace::from_frame(io, Some(right.0), right.1, Some(bin))?,
        ];
        Ok(Chart {
            title: format!("Block I/O: {} vs {}", left.1, right.1),
            size: (1600, 900),
            data: ChartData::Io { traces },
        })
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
