//! The per-point statistics frame ([`point_stats`]) and the runs frame with its
//! outliers flagged ([`with_outliers`]).

use super::plain::summarize;
use super::points::samples_by_point;
use super::{is_warmup, StatsOptions, Unit};
use crate::analysis::AnalysisError;
use crate::frames::from_records;
use indexmap::IndexMap;
use polars::prelude::*;
use serde::Serialize;
use serde_json::Value;

/// One row of the per-point statistics frame. See [`point_stats`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointStatsRow {
    pub experiment: String,
    pub point_id: String,
    pub point_index: i64,
    /// The point's matrix variables, one column each.
    #[serde(flatten)]
    pub vars: IndexMap<String, Value>,
    pub metric: String,
    /// What one sample of `n` is: an iteration, or a replicate's steady-state mean.
    pub unit: Unit,
    /// Replicates (fresh setups) of the point.
    pub replicates: usize,
    /// Steady-state samples (in `unit`) used for the statistics below; 0 when the
    /// point has no steady state.
    pub n: usize,
    /// True when every usable iteration is warm-up: no mean, no interval, and no
    /// "first vs mean" (the output says "no steady state").
    pub no_steady_state: bool,
    /// Usable warm-up iterations left out of the statistics.
    pub n_warmup: usize,
    /// Iterations whose status is not `ok`.
    pub n_failed: usize,
    /// The first iteration's value, reported apart.
    pub first: Option<f64>,
    /// (first − steady mean) / steady mean, in percent; only when the first iteration
    /// is warm-up and there is a steady state.
    pub first_vs_mean_pct: Option<f64>,
    pub mean: Option<f64>,
    pub median: Option<f64>,
    pub std: Option<f64>,
    pub cv_pct: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub ci_level: f64,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// Harmonic mean (meaningful for rates).
    pub hmean: Option<f64>,
    /// Geometric mean (meaningful for ratios).
    pub gmean: Option<f64>,
    /// Steady-state iterations flagged as outliers (|modified z| > threshold): the rows
    /// [`with_outliers`] flags.
    pub outliers: usize,
}

/// Typed per-point statistics; [`point_stats`] is this as a DataFrame.
pub fn point_stats_rows(
    runs: &DataFrame,
    opts: &StatsOptions,
) -> Result<Vec<PointStatsRow>, AnalysisError> {
    opts.validate()?;
    let resolution = opts.resolution();
    let points = samples_by_point(runs, &opts.metric)?;
    Ok(points
        .iter()
        .map(|p| {
            let (warm, _) = p.split(opts.warmup);
            let u = p.units(opts.warmup);
            let summary = summarize(&u.steady, opts.confidence);
            let first = p.first();
            let mean = summary.as_ref().map(|s| s.mean);
            let outliers = p
                .outlier_scores(opts.warmup, resolution)
                .iter()
                .filter(|(_, z)| z.abs() > opts.outlier_threshold)
                .count();
            PointStatsRow {
                experiment: p.experiment.clone(),
                point_id: p.point_id.clone(),
                point_index: p.point_index,
                vars: p.vars.clone(),
                metric: opts.metric.clone(),
                unit: u.unit,
                replicates: u.replicates,
                n: u.steady.len(),
                no_steady_state: u.steady.is_empty(),
                n_warmup: warm.len(),
                n_failed: p.failed(),
                first,
                first_vs_mean_pct: match (first, mean) {
                    (Some(f), Some(m)) if m != 0.0 && is_warmup(1, opts.warmup) => {
                        Some(100.0 * (f - m) / m)
                    }
                    _ => None,
                },
                mean,
                median: summary.as_ref().map(|s| s.median),
                std: summary.as_ref().and_then(|s| s.std),
                cv_pct: summary.as_ref().and_then(|s| s.cv_pct),
                min: summary.as_ref().map(|s| s.min),
                max: summary.as_ref().map(|s| s.max),
                ci_level: opts.confidence,
                ci_low: summary.as_ref().and_then(|s| s.ci.map(|c| c.0)),
                ci_high: summary.as_ref().and_then(|s| s.ci.map(|c| c.1)),
                hmean: summary.as_ref().and_then(|s| s.hmean),
                gmean: summary.as_ref().and_then(|s| s.gmean),
                outliers,
            }
        })
        .collect())
}

/// Per-point statistics of `opts.metric` as a DataFrame, one row per point in
/// `point_index` order. Columns: `experiment, point_id, point_index, <matrix
/// variables…>, metric, unit, replicates, n, no_steady_state, n_warmup, n_failed,
/// first, first_vs_mean_pct, mean, median, std, cv_pct, min, max, ci_level, ci_low,
/// ci_high, hmean, gmean, outliers`.
pub fn point_stats(runs: &DataFrame, opts: &StatsOptions) -> Result<DataFrame, AnalysisError> {
    stats_frame(&point_stats_rows(runs, opts)?)
}

/// The frame of [`point_stats`] from rows already computed by [`point_stats_rows`] (a
/// report computes the rows once and draws the frame).
pub fn stats_frame(rows: &[PointStatsRow]) -> Result<DataFrame, AnalysisError> {
    let mut df = from_records(rows)?;
    // Keep the numeric columns Float64 even when every value is null (from_records
    // would otherwise make them String).
    for name in [
        "first",
        "first_vs_mean_pct",
        "mean",
        "median",
        "std",
        "cv_pct",
        "min",
        "max",
        "ci_low",
        "ci_high",
        "hmean",
        "gmean",
    ] {
        if let Ok(col) = df.column(name) {
            if col.dtype() != &DataType::Float64 {
                let cast = col.cast(&DataType::Float64)?;
                df.with_column(cast)?;
            }
        }
    }
    Ok(df)
}

/// The runs frame with three more columns, computed per point over `ok` rows:
/// `warmup` (bool: the row is warm-up by the warm-up rule), `mod_z` (f64: modified
/// z-score of a steady-state row against the point's steady-state median and MAD; null
/// for warm-up and unusable rows) and `outlier` (bool: |mod_z| > threshold). The
/// flagged rows are exactly those [`point_stats`] counts. Nothing is dropped.
pub fn with_outliers(runs: &DataFrame, opts: &StatsOptions) -> Result<DataFrame, AnalysisError> {
    opts.validate()?;
    let resolution = opts.resolution();
    let points = samples_by_point(runs, &opts.metric)?;
    let height = runs.height();
    let mut warmup = vec![false; height];
    let mut mod_z: Vec<Option<f64>> = vec![None; height];
    let mut outlier = vec![false; height];
    for p in &points {
        for s in &p.samples {
            warmup[s.row] = is_warmup(s.iteration, opts.warmup);
        }
        for (row, z) in p.outlier_scores(opts.warmup, resolution) {
            mod_z[row] = Some(z);
            outlier[row] = z.abs() > opts.outlier_threshold;
        }
    }
    let mut out = runs.clone();
    out.with_column(Column::new("warmup".into(), warmup))?;
    out.with_column(Column::new("mod_z".into(), mod_z))?;
    out.with_column(Column::new("outlier".into(), outlier))?;
    Ok(out)
}
