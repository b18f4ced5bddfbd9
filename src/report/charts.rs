//! Charts that start from a runs or `io` frame: `analysis` computes the frame each
//! chart draws, `plot` draws it. Here, a layer above both:
//! - the `Chart` constructors that notebooks and programs call on a bundle's frames
//!   ([`Chart::iterations`], [`Chart::distribution`], [`Chart::io_trace`],
//!   [`Chart::io_compare`]): each computes, then calls plot's drawing constructor;
//! - [`bundle_charts`]: which charts a report of a bundle gets, with their captions.

use super::ReportError;
use crate::analysis::io_trace::{common_bin, trace_frames};
use crate::analysis::{distribution_frame, iteration_frame, AnalysisError, StatsOptions};
use crate::plot::{Chart, IoTrace, PlotError};
use crate::store::{Bundle, Manifest};
use polars::prelude::DataFrame;

/// A chart that could not be made: its frame could not be computed, or drawn.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error(transparent)]
    Analysis(#[from] AnalysisError),
    #[error(transparent)]
    Plot(#[from] PlotError),
}

impl ChartError {
    /// Nothing to draw (no point has a value): a report leaves such a chart out.
    pub fn is_empty(&self) -> bool {
        matches!(self, ChartError::Plot(PlotError::Empty(_)))
    }
}

impl Chart {
    /// The metric against the iteration number, one line per point (ok iterations
    /// only), from a runs frame (`analysis::iteration_frame`, then
    /// [`Chart::iteration_lines`]).
    pub fn iterations(runs: &DataFrame, metric: &str) -> Result<Chart, ChartError> {
        Ok(Chart::iteration_lines(
            &iteration_frame(runs, metric)?,
            metric,
        )?)
    }

    /// Every iteration of every point as a dot over a box plot of the steady state
    /// (quartiles, whiskers at the furthest value within 1.5 IQR), warm-up and outliers
    /// (modified z-score) marked apart, from a runs frame
    /// (`analysis::distribution_frame`, then [`Chart::distribution_of`]).
    pub fn distribution(runs: &DataFrame, opts: &StatsOptions) -> Result<Chart, ChartError> {
        Ok(Chart::distribution_of(&distribution_frame(runs, opts)?)?)
    }

    /// The trace of one step: three panels against time (offset, MB/s, seeks/s), from an
    /// `io.parquet` frame of one point (or of several, with `point_id` choosing one).
    /// Of several traced runs it draws one: the point's lowest traced iteration
    /// (`analysis::io_trace::first_run`), named in the label.
    pub fn io_trace(io: &DataFrame, point_id: Option<&str>) -> Result<Chart, ChartError> {
        let label = point_id.unwrap_or("trace");
        let t = trace(io, point_id, label, None)?;
        Ok(Chart::io_traces(format!("Block I/O: {label}"), vec![t]))
    }

    /// Two points side by side, on the same time bins and scales (e.g. ext3 and ext4):
    /// each is (point id, label).
    pub fn io_compare(
        io: &DataFrame,
        left: (&str, &str),
        right: (&str, &str),
    ) -> Result<Chart, ChartError> {
        let bin = common_bin(io, &[left.0, right.0])?;
        let traces = vec![
            trace(io, Some(left.0), left.1, Some(bin))?,
            trace(io, Some(right.0), right.1, Some(bin))?,
        ];
        Ok(Chart::io_traces(
            format!("Block I/O: {} vs {}", left.1, right.1),
            traces,
        ))
    }
}

/// The charted run of one point, labelled with the run it is when there are several.
fn trace(
    io: &DataFrame,
    point_id: Option<&str>,
    label: &str,
    bin_s: Option<f64>,
) -> Result<IoTrace, ChartError> {
    let f = trace_frames(io, point_id, bin_s)?;
    if f.requests.height() == 0 {
        return Err(PlotError::Empty(format!(
            "no block requests{}",
            point_id
                .map(|p| format!(" for point {p}"))
                .unwrap_or_default()
        ))
        .into());
    }
    let label = match &f.run_label {
        Some(r) => format!("{label} ({r})"),
        None => label.to_string(),
    };
    Ok(IoTrace::from_frames(
        &label,
        &f.requests,
        &f.rates,
        f.bin_s,
    )?)
}

/// What the charts of a report are made from.
pub struct ChartInputs<'a> {
    pub bundle: &'a Bundle,
    pub runs: &'a DataFrame,
    /// The per-point statistics of the report's metric (`analysis::stats_frame`).
    pub stats: &'a DataFrame,
    /// The statistics options of the report's metric.
    pub options: &'a StatsOptions,
    /// The bundle compared with, and its runs.
    pub other: Option<(&'a Bundle, &'a DataFrame)>,
}

/// A chart, or nothing when it has nothing to draw.
fn keep(r: Result<Chart, ChartError>) -> Result<Option<Chart>, ChartError> {
    match r {
        Ok(c) => Ok(Some(c)),
        Err(e) if e.is_empty() => Ok(None),
        Err(e) => Err(e),
    }
}

/// The charts of a report, with their captions: the means, the iterations, the
/// distribution, both runs relative to their first point (with a comparison), the
/// extent layout (with an `extents` table), the block traces (with an `io` table). A
/// chart with nothing to draw (e.g. no point has a steady state) is left out.
pub fn bundle_charts(i: &ChartInputs) -> Result<Vec<(String, Chart)>, ReportError> {
    let metric = &i.options.metric;
    let mut charts = Vec::new();
    for (caption, chart) in [
        (
            "Steady-state mean per point with its 95 % confidence interval; the triangle is the first iteration.",
            Chart::mean_ci(i.stats).map_err(ChartError::from),
        ),
        (
            "Every iteration in order: warm-up and drift.",
            Chart::iterations(i.runs, metric),
        ),
        (
            "Distribution per point: box of the steady state (quartiles, whiskers within 1.5 IQR), every iteration as a dot.",
            Chart::distribution(i.runs, i.options),
        ),
    ] {
        if let Some(c) = keep(chart)? {
            charts.push((caption.to_string(), c));
        }
    }
    if let Some((o, o_runs)) = i.other {
        let base_stats = crate::analysis::point_stats(o_runs, i.options)?;
        // The first point in plan order, as the statistics list them.
        let first_id = crate::frames::str_values(i.stats, "stats", "point_id")
            .ok()
            .and_then(|ids| ids.into_iter().flatten().next());
        if let Some(baseline) = first_id {
            match Chart::normalised(
                &[
                    (o.label().as_str(), &base_stats, "mean"),
                    (i.bundle.label().as_str(), i.stats, "mean"),
                ],
                &baseline,
            ) {
                Ok(chart) => charts.push((
                    format!("Both runs, each relative to its own {baseline}, so that different machines compare."),
                    chart,
                )),
                Err(PlotError::Data(_)) | Err(PlotError::Empty(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    if let Some(extents) = i.bundle.table_if_present("extents")? {
        if let Some(chart) = keep(Chart::extents(&extents).map_err(ChartError::from))? {
            charts.push((
                "Extent layout: where each file's data lies on the device.".to_string(),
                chart,
            ));
        }
    }
    if let Some(io) = i.bundle.table_if_present("io")? {
        charts.extend(io_charts(&io, i.bundle.manifest())?);
    }
    Ok(charts)
}

/// The seekwatcher-style charts of a bundle's block traces (`trace: io`): the first two
/// traced points side by side, then each traced point on its own.
fn io_charts(io: &DataFrame, m: &Manifest) -> Result<Vec<(String, Chart)>, ReportError> {
    let mut traced: Vec<String> = Vec::new();
    for p in crate::frames::str_values(io, "report", "point_id")
        .map_err(AnalysisError::from)?
        .into_iter()
        .flatten()
    {
        if !traced.contains(&p) {
            traced.push(p);
        }
    }
    // In plan order.
    let mut traced: Vec<(usize, String)> = traced
        .into_iter()
        .map(|p| {
            let i = m
                .points
                .iter()
                .position(|q| q.id == p)
                .unwrap_or(usize::MAX);
            (i, p)
        })
        .collect();
    traced.sort();
    let medium = m
        .environment
        .devices
        .iter()
        .filter_map(|d| {
            d.medium
                .as_ref()
                .filter(|md| md.substitution)
                .map(|md| format!("{} on the {} disk model", d.name, md.model))
        })
        .collect::<Vec<_>>();
    let on = if medium.is_empty() {
        "the loop devices as they are (no disk model)".to_string()
    } else {
        medium.join(", ")
    };
    let mut out = Vec::new();
    if let [(_, a), (_, b), ..] = traced.as_slice() {
        if let Some(c) = keep(Chart::io_compare(io, (a, a), (b, b)))? {
            out.push((
                format!("Block I/O of {a} and {b} side by side, seekwatcher-style (position on the device, throughput, seeks per second against time), on {on}; each side is the point's first traced iteration."),
                c,
            ));
        }
    }
    for (_, p) in &traced {
        if let Some(c) = keep(Chart::io_trace(io, Some(p)))? {
            out.push((
                format!("Block I/O of {p}: every request's position, the read (blue) and write (red) throughput and the seeks per second, on {on}."),
                c,
            ));
        }
    }
    Ok(out)
}
