//! Statistics, comparisons and adaptive repetitions over result frames.
//!
//! Everything here works on eager polars [`DataFrame`]s with the bundle's `runs` layout
//! (the columns of [`crate::store::RUN_COLUMNS`], the matrix variables between
//! `point_index` and `iteration`) and its other tables, and on the bundle's
//! [`Manifest`](crate::store::Manifest); reading a bundle is `store::Bundle`'s:
//! - [`stats`]: per-point statistics (mean, median, σ, CV, Student-t interval, warm-up
//!   reported apart, MAD outliers, harmonic and geometric means) and the pure functions
//!   behind them, Welch's t-test included;
//! - [`compare`]: two runs frames (and their manifests) side by side, lkp `ncompare` style;
//! - [`adaptive`]: when to stop repeating an iteration (min, max, target CV, at least
//!   five steady-state samples);
//! - [`claims`]: claim verdicts, with [`tiers`] (what a reviewer accepts) and
//!   [`interval`] (95 % intervals of the numbers a claim compares);
//! - [`reshape`], [`views`]: frames reshaped for tables and charts;
//! - [`figures`], [`io_trace`]: the frames each chart draws (plot only draws them);
//! - [`bundle_summary`]: a bundle's facts, once, for `fslab show`, the report and the
//!   notebook display;
//! - [`calibration`]: A/A and injected-effect calibrations (false-positive rate, power,
//!   coverage, with their intervals) of compare's verdict and the tier rule;
//! - [`sequential`]: the group-sequential stopping rule (alpha spending) for adding
//!   replicates until a claim is decided;
//! - [`text_grid`]: plain-text grids for terminals.
//!
//! Analysis never draws: charts live in the `plot` module, which draws the frames
//! computed here and does not use this module.

pub mod adaptive;
pub mod bundle_summary;
pub mod calibration;
pub mod claims;
pub mod compare;
pub mod compare_axis;
pub mod figures;
pub mod interval;
pub mod io_trace;
pub mod power;
pub mod reshape;
pub mod sequential;
pub mod stats;
pub mod text_grid;
pub mod tiers;
pub mod views;

pub use adaptive::{should_continue, Decision, RepeatPolicy, StopReason};
pub use bundle_summary::{BundleSummary, PointSummary, Tally};
pub use compare::{
    compare_runs, environment_diff, Basis, CompareOptions, Comparison, ComparisonRow, EnvDiff,
    Significance, DEFAULT_THRESHOLD_PCT,
};
pub use figures::{distribution_frame, iteration_frame};
pub use reshape::{filter_eq, group_mean, overlay, ratio_across, relative_to, with_point_id};
pub use stats::{
    holm_adjust, is_warmup, point_stats, point_stats_rows, samples_by_point, stats_frame,
    summarize, welch_t_test, with_outliers, NoTest, PointSamples, PointStatsRow, Resolution,
    ResolutionSource, StatsOptions, Summary, Unit, Warmup, WelchTest,
};

/// The warm-up the runner's stopping rule used, when every adaptive point of the bundle
/// recorded the same one (the default of `--warmup` for `show`, `compare`, `report`, so
/// that the CV reported is the CV the run stopped on).
pub fn recorded_warmup(manifest: &crate::store::Manifest) -> Option<usize> {
    let mut seen: Option<usize> = None;
    for s in manifest.points.iter().flat_map(|p| &p.repeat_stops) {
        match seen {
            None => seen = Some(s.warmup),
            Some(w) if w != s.warmup => return None,
            _ => {}
        }
    }
    seen
}
/// Metric labels and significant digits live in the leaf [`crate::labels`] (charts use
/// them too); re-exported here, where notebooks and the CLI have always found them.
pub use crate::labels::{fmt_sig, metric_label, metric_unit};
pub use views::{fsck_passes, largest_file_summary, largest_files};

use crate::frames::{ColumnError, FrameError};
use crate::store::RUN_COLUMNS;
use polars::prelude::*;
use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error("the {frame} frame has no column `{column}` (columns: {available})")]
    MissingColumn {
        frame: &'static str,
        column: String,
        available: String,
    },
    #[error("column `{column}` of type {dtype} cannot be read as {wanted}")]
    ColumnType {
        column: String,
        dtype: String,
        wanted: &'static str,
    },
    #[error("invalid option: {0}")]
    InvalidOption(String),
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error(transparent)]
    Polars(#[from] PolarsError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

/// A column's values as f64 (integers and booleans are cast; strings are an error).
pub(crate) fn f64_values(
    df: &DataFrame,
    frame: &'static str,
    name: &str,
) -> Result<Vec<Option<f64>>, AnalysisError> {
    Ok(crate::frames::f64_values(df, frame, name)?)
}

/// A column's values as i64 (floats are truncated by the cast).
pub(crate) fn i64_values(
    df: &DataFrame,
    frame: &'static str,
    name: &str,
) -> Result<Vec<Option<i64>>, AnalysisError> {
    Ok(crate::frames::i64_values(df, frame, name)?)
}

/// A column's values as text (any type is rendered as polars casts it to String).
pub(crate) fn str_values(
    df: &DataFrame,
    frame: &'static str,
    name: &str,
) -> Result<Vec<Option<String>>, AnalysisError> {
    Ok(crate::frames::str_values(df, frame, name)?)
}

impl From<ColumnError> for AnalysisError {
    fn from(e: ColumnError) -> Self {
        match e {
            ColumnError::Missing {
                frame,
                column,
                available,
            } => AnalysisError::MissingColumn {
                frame,
                column,
                available,
            },
            ColumnError::Type {
                column,
                dtype,
                wanted,
            } => AnalysisError::ColumnType {
                column,
                dtype,
                wanted,
            },
            ColumnError::Polars(e) => AnalysisError::Polars(e),
        }
    }
}

/// One cell as JSON (for carrying matrix variables of any type into typed rows).
pub(crate) fn cell_json(col: &Column, row: usize) -> Value {
    match col.get(row) {
        Ok(AnyValue::Null) | Err(_) => Value::Null,
        Ok(AnyValue::Boolean(b)) => Value::Bool(b),
        Ok(AnyValue::String(s)) => Value::String(s.to_string()),
        Ok(AnyValue::StringOwned(s)) => Value::String(s.to_string()),
        Ok(AnyValue::Int8(v)) => Value::from(v),
        Ok(AnyValue::Int16(v)) => Value::from(v),
        Ok(AnyValue::Int32(v)) => Value::from(v),
        Ok(AnyValue::Int64(v)) => Value::from(v),
        Ok(AnyValue::UInt8(v)) => Value::from(v),
        Ok(AnyValue::UInt16(v)) => Value::from(v),
        Ok(AnyValue::UInt32(v)) => Value::from(v),
        Ok(AnyValue::UInt64(v)) => Value::from(v),
        Ok(AnyValue::Float32(v)) => Value::from(f64::from(v)),
        Ok(AnyValue::Float64(v)) => Value::from(v),
        Ok(other) => Value::String(other.to_string()),
    }
}

/// The matrix-variable columns of a runs frame: those between `point_index` and
/// `iteration` when both exist in that order, otherwise every column that is not one
/// of [`RUN_COLUMNS`].
pub fn variable_columns(runs: &DataFrame) -> Vec<String> {
    let names: Vec<&str> = runs.get_column_names().iter().map(|s| s.as_str()).collect();
    let pos = |n: &str| names.iter().position(|c| *c == n);
    if let (Some(a), Some(b)) = (pos("point_index"), pos("iteration")) {
        if a < b {
            return names[a + 1..b].iter().map(|s| s.to_string()).collect();
        }
    }
    names
        .iter()
        .filter(|n| !RUN_COLUMNS.contains(n))
        .map(|s| s.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variable_columns_are_between_point_index_and_iteration() {
        let df = df!(
            "experiment" => ["e"],
            "point_id" => ["fs=ext4,size=4096"],
            "point_index" => [0i64],
            "fs" => ["ext4"],
            "size" => [4096i64],
            "iteration" => [1i64],
            "wall_s" => [1.0],
        )
        .unwrap();
        assert_eq!(variable_columns(&df), ["fs", "size"]);
        let odd = df!("point_id" => ["a"], "iteration" => [1i64], "fs" => ["x"]).unwrap();
        assert_eq!(variable_columns(&odd), ["fs"]);
    }
}
