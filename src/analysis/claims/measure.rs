//! What several kinds of check share in measuring: a ratio of two sides with the
//! replicate as the unit (`units`), and a column's values.

use super::error::MeasureError;
use super::units::{mean, Replication, SampleUnit, Side};
use super::words::{level_words, stat_name};
use crate::analysis::f64_values;
use crate::analysis::interval::{bootstrap, fieller_welch, Interval, NoInterval};
use crate::spec::claim::Stat;
use polars::prelude::DataFrame;

/// A ratio of two sides and how it was computed.
pub(super) struct SidesRatio {
    pub(super) value: f64,
    /// Each side's number (the mean over replicates, or the statistic over the rows).
    pub(super) sides: (f64, f64),
    pub(super) interval: Result<Interval, NoInterval>,
    pub(super) replication: Replication,
}

impl SidesRatio {
    /// How the number and its interval were computed, for a reader who recomputes it.
    pub(super) fn recipe(&self, stat: Stat, metric: &str) -> String {
        match self.replication.unit {
            SampleUnit::Replicate => format!(
                "{} of `{metric}` per (point, replicate), then the mean over the replicates; {} Fieller–Welch interval over the replicates",
                stat_name(stat),
                self.interval
                    .as_ref()
                    .map_or_else(|_| "95 %".to_string(), |i| level_words(i.level))
            ),
            _ => format!(
                "{} of `{metric}` over the pooled rows; interval over the rows ({})",
                stat_name(stat),
                self.replication.unit.label()
            ),
        }
    }
}

/// numerator ÷ denominator with replicates as the unit when both sides have two or
/// more; else the statistic over the pooled rows, labelled as the iteration unit. The
/// interval is at `level` (`Evidence::level`).
pub(super) fn ratio_of_sides(
    n: &Side,
    d: &Side,
    stat: Stat,
    den_label: &str,
    level: f64,
) -> Result<SidesRatio, MeasureError> {
    let reps = (n.replicates(), d.replicates());
    if reps.0 >= 2 && reps.1 >= 2 {
        let (Some(a), Some(b)) = (mean(&n.per_replicate), mean(&d.per_replicate)) else {
            return Err(MeasureError::MissingData("nothing to summarise".into()));
        };
        if b == 0.0 {
            return Err(MeasureError::NoNumber(format!(
                "the denominator ({den_label}) is 0"
            )));
        }
        return Ok(SidesRatio {
            value: a / b,
            sides: (a, b),
            interval: fieller_welch(&n.per_replicate, &d.per_replicate, level),
            replication: Replication {
                unit: SampleUnit::Replicate,
                replicates: reps,
                samples: reps,
            },
        });
    }
    let (Some(a), Some(b)) = (stat.apply(&n.rows), stat.apply(&d.rows)) else {
        return Err(MeasureError::MissingData("nothing to summarise".into()));
    };
    if b == 0.0 {
        return Err(MeasureError::NoNumber(format!(
            "the denominator ({den_label}) is 0"
        )));
    }
    let interval = match stat {
        Stat::Mean => fieller_welch(&n.rows, &d.rows, level),
        s => bootstrap(
            &n.rows,
            &d.rows,
            &|x, y| Some(s.apply(x)? / s.apply(y)?),
            level,
            2000,
            0x5eed,
        ),
    };
    Ok(SidesRatio {
        value: a / b,
        sides: (a, b),
        interval,
        replication: Replication {
            unit: SampleUnit::Iteration,
            replicates: reps,
            samples: (n.rows.len(), d.rows.len()),
        },
    })
}

pub(super) fn values_opt(
    df: &DataFrame,
    col: &str,
    what: &str,
) -> Result<Vec<Option<f64>>, MeasureError> {
    f64_values(df, "claims", col).map_err(|e| MeasureError::column(e, what, col))
}
