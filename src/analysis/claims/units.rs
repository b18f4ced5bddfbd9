//! The unit of replication (issue 28): a claim's samples are replicates, fresh
//! filesystems (new device, mkfs, setup), never the iterations of one filesystem.
//!
//! Iterations on one filesystem run in order on a filesystem that ages between them:
//! an interval over them covers the noise within one filesystem, not the variation from
//! one run of the experiment to the next. So the selected rows are grouped by
//! (point, replicate), each group is summarised by the check's statistic, and the
//! interval is computed over those per-replicate values. With fewer than two replicates
//! a side there is no such interval: the number is still shown, with an interval over
//! the iterations for orientation, and the tier is at best `inconclusive`.

use super::MeasureError;
use crate::analysis::interval::{Interval, Method, NoInterval};
use crate::analysis::stats::t_interval;
use crate::analysis::{f64_values, i64_values};
use crate::spec::claim::Stat;
use polars::prelude::DataFrame;
use serde::Serialize;
use std::collections::BTreeMap;

/// What one sample of a claim's number is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SampleUnit {
    /// A replicate: a fresh filesystem per sample.
    Replicate,
    /// An iteration of one filesystem: the samples share a filesystem that ages.
    Iteration,
    /// One reading per replicate of something deterministic (a block layout).
    Reading,
}

impl SampleUnit {
    pub fn label(self) -> &'static str {
        match self {
            SampleUnit::Replicate => "replicate",
            SampleUnit::Iteration => "iteration of one filesystem",
            SampleUnit::Reading => "one reading per replicate",
        }
    }
}

/// The unit of a claim's samples and how many there are a side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Replication {
    pub unit: SampleUnit,
    /// Replicates (fresh filesystems) a side: numerator, denominator (the same for a
    /// one-sided check).
    pub replicates: (usize, usize),
    /// Samples in the unit a side (iterations when the unit is the iteration).
    pub samples: (usize, usize),
}

impl Replication {
    /// `unit: replicate, 8 a side` or `unit: iteration of one filesystem (1 replicate a
    /// side, 9 iterations)`.
    pub fn label(&self) -> String {
        let side = |(a, b): (usize, usize)| {
            if a == b {
                format!("{a}")
            } else {
                format!("{a} over {b}")
            }
        };
        let reps = side(self.replicates);
        let plural = |(a, b): (usize, usize)| if a.max(b) == 1 { "" } else { "s" };
        match self.unit {
            SampleUnit::Replicate => {
                format!("unit: replicate, {reps} a side")
            }
            SampleUnit::Iteration => format!(
                "unit: iteration of one filesystem ({reps} replicate{} a side, {} iteration{})",
                plural(self.replicates),
                side(self.samples),
                plural(self.samples)
            ),
            SampleUnit::Reading => format!(
                "unit: one reading per replicate ({reps} replicate{} a side)",
                plural(self.replicates)
            ),
        }
    }

    /// The fewer replicates of the two sides.
    pub fn fewest_replicates(&self) -> usize {
        self.replicates.0.min(self.replicates.1)
    }
}

/// The selected rows of one side, grouped by (point, replicate).
#[derive(Debug, Clone, Default)]
pub(super) struct Side {
    /// One value per (point, replicate): the statistic over that replicate's rows.
    pub(super) per_replicate: Vec<f64>,
    /// Every row's value, pooled.
    pub(super) rows: Vec<f64>,
}

impl Side {
    pub(super) fn replicates(&self) -> usize {
        self.per_replicate.len()
    }
}

/// The (point, replicate) of each row: `point_index` (0 when the table has none) and
/// `replicate` (1 when the table has none: bundles of format 1, one replicate).
pub(super) fn replicate_keys(df: &DataFrame) -> Vec<(i64, i64)> {
    let points = key_column(df, "point_index", 0);
    let reps = key_column(df, "replicate", 1);
    points.into_iter().zip(reps).collect()
}

/// A key column as integers; a missing column or cell is `default`.
pub(super) fn key_column(df: &DataFrame, name: &str, default: i64) -> Vec<i64> {
    i64_values(df, "claims", name)
        .map(|v| v.into_iter().map(|x| x.unwrap_or(default)).collect())
        .unwrap_or_else(|_| vec![default; df.height()])
}

/// `metric` over the rows of `df`, grouped by (point, replicate), each group summarised
/// by `stat` (in (point, replicate) order).
pub(super) fn side(
    df: &DataFrame,
    metric: &str,
    stat: Stat,
    what: &str,
) -> Result<Side, MeasureError> {
    let values =
        f64_values(df, "claims", metric).map_err(|e| MeasureError::column(e, what, metric))?;
    let keys = replicate_keys(df);
    let mut groups: BTreeMap<(i64, i64), Vec<f64>> = BTreeMap::new();
    let mut rows = Vec::new();
    for (k, v) in keys.into_iter().zip(values) {
        if let Some(x) = v.filter(|x| x.is_finite()) {
            groups.entry(k).or_default().push(x);
            rows.push(x);
        }
    }
    Ok(Side {
        per_replicate: groups.values().filter_map(|g| stat.apply(g)).collect(),
        rows,
    })
}

/// The `level` (95 %, or a sequential look's) Student-t interval of the mean of
/// per-replicate values (or why there is none: fewer than two).
pub(super) fn student_t(values: &[f64], level: f64) -> Result<Interval, NoInterval> {
    let n = values.len();
    t_interval(values, level)
        .map(|(lo, hi)| Interval {
            lo,
            hi,
            level,
            method: Method::StudentT,
        })
        .ok_or(NoInterval::TooFewSamples {
            numerator: n,
            denominator: n,
        })
}

/// The mean of some values (None when empty).
pub(super) fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::df;

    #[test]
    fn rows_are_summarised_per_point_and_replicate() {
        let df = df!(
            "point_index" => [0i64, 0, 0, 0, 1, 1],
            "replicate" => [1i64, 1, 2, 2, 1, 1],
            "wall_s" => [1.0, 3.0, 5.0, 7.0, 10.0, f64::NAN],
        )
        .unwrap();
        let s = side(&df, "wall_s", Stat::Mean, "t").unwrap();
        // (0,1): 2; (0,2): 6; (1,1): 10 (the NaN is no sample).
        assert_eq!(s.per_replicate, vec![2.0, 6.0, 10.0]);
        assert_eq!(s.rows.len(), 5);
        assert_eq!(s.replicates(), 3);
    }

    #[test]
    fn a_table_without_replicates_is_one_replicate_per_point() {
        let df = df!("point_index" => [0i64, 0, 0], "wall_s" => [1.0, 2.0, 3.0]).unwrap();
        let s = side(&df, "wall_s", Stat::Mean, "t").unwrap();
        assert_eq!(s.per_replicate, vec![2.0]);
    }

    #[test]
    fn the_label_says_the_unit_and_the_count() {
        let r = Replication {
            unit: SampleUnit::Iteration,
            replicates: (1, 1),
            samples: (9, 9),
        };
        assert_eq!(
            r.label(),
            "unit: iteration of one filesystem (1 replicate a side, 9 iterations)"
        );
        let r = Replication {
            unit: SampleUnit::Replicate,
            replicates: (8, 6),
            samples: (8, 6),
        };
        assert_eq!(r.label(), "unit: replicate, 8 over 6 a side");
    }
}
