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
//! - [`reshape`], [`views`], [`io_trace`]: frames reshaped for tables and charts;
//! - [`text_grid`]: plain-text grids for terminals.
//!
//! Analysis never draws: charts live in the `plot` module, which uses this one.

pub mod adaptive;
pub mod claims;
pub mod compare;
pub mod interval;
pub mod io_trace;
pub mod reshape;
pub mod stats;
pub mod text_grid;
pub mod tiers;
pub mod views;

pub use adaptive::{should_continue, Decision, RepeatPolicy, StopReason};
pub use compare::{
    compare_runs, environment_diff, Basis, CompareOptions, Comparison, ComparisonRow, EnvDiff,
    Significance, DEFAULT_THRESHOLD_PCT,
};
pub use reshape::{filter_eq, group_mean, overlay, ratio_across, relative_to, with_point_id};
pub use stats::{
    holm_adjust, is_warmup, point_stats, point_stats_rows, samples_by_point, summarize,
    welch_t_test, with_outliers, NoTest, PointSamples, PointStatsRow, Resolution, ResolutionSource,
    StatsOptions, Summary, Unit, Warmup, WelchTest,
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

/// The unit of a metric column, from its name's suffix (`wall_s` → `s`).
pub fn metric_unit(metric: &str) -> &'static str {
    let suffixes: &[(&str, &str)] = &[
        ("_ms", "ms"),
        ("_us", "µs"),
        ("_ns", "ns"),
        ("_s", "s"),
        ("_bytes", "B"),
        ("_kib", "KiB"),
        ("_mib", "MiB"),
        ("_per_s", "/s"),
        ("_pct", "%"),
    ];
    // Longest suffix first so that `_per_s` wins over `_s`.
    let mut best: Option<(&str, &str)> = None;
    for (suffix, unit) in suffixes {
        if metric.ends_with(suffix) && best.is_none_or(|(b, _)| suffix.len() > b.len()) {
            best = Some((suffix, unit));
        }
    }
    best.map(|(_, u)| u).unwrap_or("")
}

/// A readable label for a metric: `wall_s` → `wall time (s)`, `files_per_s` →
/// `files per second (1/s)`, `wall_s_rel` ([`reshape::relative_to`]) → `wall time,
/// relative to the baseline (×)`.
pub fn metric_label(metric: &str) -> String {
    if let Some(base) = metric.strip_suffix("_rel") {
        let label = metric_label(base);
        let name = label
            .rsplit_once(" (")
            .map_or(label.as_str(), |(n, _)| n)
            .to_string();
        return format!("{name}, relative to the baseline (×)");
    }
    match metric {
        "wall_s" => return "wall time (s)".to_string(),
        "user_s" => return "user CPU time (s)".to_string(),
        "sys_s" => return "system CPU time (s)".to_string(),
        "real_s" => return "real time (s)".to_string(),
        _ => {}
    }
    if let Some(base) = metric.strip_suffix("_per_s") {
        return format!("{} per second (1/s)", base.replace('_', " "));
    }
    let unit = metric_unit(metric);
    if unit.is_empty() {
        return metric.replace('_', " ");
    }
    let base = metric
        .rsplit_once('_')
        .map(|(b, _)| b)
        .unwrap_or(metric)
        .replace('_', " ");
    format!("{base} ({unit})")
}

/// Format a number with `sig` significant digits, without exponent for everyday magnitudes.
pub fn fmt_sig(v: f64, sig: usize) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let mag = v.abs().log10().floor() as i32;
    if !(-4..15).contains(&mag) {
        return format!("{:.*e}", sig.saturating_sub(1), v);
    }
    let decimals = (sig as i32 - 1 - mag).max(0) as usize;
    format!("{v:.decimals$}")
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

    #[test]
    fn units_and_labels() {
        assert_eq!(metric_unit("wall_s"), "s");
        assert_eq!(metric_unit("files_per_s"), "/s");
        assert_eq!(metric_unit("iterations"), "");
        assert_eq!(metric_label("sys_s"), "system CPU time (s)");
        assert_eq!(metric_label("real_s"), "real time (s)");
        assert_eq!(metric_label("files_per_s"), "files per second (1/s)");
        assert_eq!(metric_label("fsck_ms"), "fsck (ms)");
        assert_eq!(
            metric_label("wall_s_rel"),
            "wall time, relative to the baseline (×)"
        );
    }

    #[test]
    fn significant_digits() {
        assert_eq!(fmt_sig(14.0963, 4), "14.10");
        assert_eq!(fmt_sig(0.0012345, 3), "0.00123");
        assert_eq!(fmt_sig(123456.0, 3), "123456");
        assert_eq!(fmt_sig(-2.5, 2), "-2.5");
    }
}
