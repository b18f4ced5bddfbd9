//! `kind: io_summary`: a number from the block traces, its metrics (`IoMetric`) and the
//! shape it must have (one value or one ratio: `IoShape`).

use crate::spec::claim::{CheckError, CheckSchema, Expect, Selection, Stat};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// A column of `io_summary` (one row per traced step and iteration), or a number derived
/// from its columns.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum IoMetric {
    Requests,
    Reads,
    Writes,
    Bytes,
    /// Data requests that do not start where the previous one ended.
    Seeks,
    /// The sum of the seeks' distances, in bytes.
    SeekDistanceBytes,
    DurationS,
    SeeksPerS,
    MbPerS,
    /// `seek_distance_bytes ÷ seeks`: how far the average seek goes.
    MeanSeekBytes,
}

impl IoMetric {
    pub const ALL: [IoMetric; 10] = [
        IoMetric::Requests,
        IoMetric::Reads,
        IoMetric::Writes,
        IoMetric::Bytes,
        IoMetric::Seeks,
        IoMetric::SeekDistanceBytes,
        IoMetric::DurationS,
        IoMetric::SeeksPerS,
        IoMetric::MbPerS,
        IoMetric::MeanSeekBytes,
    ];

    /// The name as written in a claim (and, except `mean_seek_bytes`, the column).
    pub fn name(self) -> &'static str {
        match self {
            IoMetric::Requests => "requests",
            IoMetric::Reads => "reads",
            IoMetric::Writes => "writes",
            IoMetric::Bytes => "bytes",
            IoMetric::Seeks => "seeks",
            IoMetric::SeekDistanceBytes => "seek_distance_bytes",
            IoMetric::DurationS => "duration_s",
            IoMetric::SeeksPerS => "seeks_per_s",
            IoMetric::MbPerS => "mb_per_s",
            IoMetric::MeanSeekBytes => "mean_seek_bytes",
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            IoMetric::Requests | IoMetric::Reads | IoMetric::Writes => "requests",
            IoMetric::Seeks => "seeks",
            IoMetric::Bytes | IoMetric::SeekDistanceBytes | IoMetric::MeanSeekBytes => "bytes",
            IoMetric::DurationS => "s",
            IoMetric::SeeksPerS => "seeks/s",
            IoMetric::MbPerS => "MB/s",
        }
    }
}

/// `kind: io_summary`: a number from the block traces (`trace: io`) of the selected
/// points, one sample per traced step and iteration. Either one value (`select`: the
/// `stat` of the metric) or a ratio of two (`numerator` ÷ `denominator`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct IoSummaryCheck {
    pub metric: IoMetric,
    #[serde(default)]
    pub stat: Stat,
    /// The traced step (its label, the `capture` column); default: every traced step.
    #[serde(default)]
    pub step: Option<String>,
    /// One value: the rows to summarise.
    #[serde(default)]
    pub select: Option<Selection>,
    /// A ratio: the rows above the line …
    #[serde(default)]
    pub numerator: Option<Selection>,
    /// … and below it.
    #[serde(default)]
    pub denominator: Option<Selection>,
    /// Only a disk model (`medium:`) makes seeks cost what they did on a disk: without
    /// one on the bundle's devices the claim is not applicable.
    #[serde(default)]
    pub needs_medium: bool,
    #[serde(default)]
    pub expect: Expect,
    #[serde(default)]
    pub at_scale: IndexMap<String, f64>,
    /// Default: `x` for a ratio, the metric's unit for one value.
    #[serde(default)]
    pub unit: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
    /// The fewest replicates a side for a tier other than `inconclusive` (default 3;
    /// `min_samples` is its old name).
    #[serde(default, alias = "min_samples")]
    pub min_replicates: Option<usize>,
}

impl IoSummaryCheck {
    pub fn unit(&self) -> &str {
        match (&self.unit, &self.select) {
            (Some(u), _) => u,
            (None, Some(_)) => self.metric.unit(),
            (None, None) => "x",
        }
    }

    /// One value or one ratio, not both and not half of one.
    pub(crate) fn shape(&self) -> Result<(), IoShape> {
        match (&self.select, &self.numerator, &self.denominator) {
            (Some(_), None, None) | (None, Some(_), Some(_)) => Ok(()),
            (Some(_), _, _) => Err(IoShape::Both),
            (None, Some(_), None) => Err(IoShape::NoDenominator),
            (None, None, Some(_)) => Err(IoShape::NoNumerator),
            (None, None, None) => Err(IoShape::Neither),
        }
    }
}

/// How an `io_summary` check fails to be one value or one ratio.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IoShape {
    #[error("an io_summary check has either `select` (one value) or `numerator` and `denominator` (a ratio), not both")]
    Both,
    #[error("an io_summary check with a `numerator` needs a `denominator`")]
    NoDenominator,
    #[error("an io_summary check with a `denominator` needs a `numerator`")]
    NoNumerator,
    #[error(
        "an io_summary check needs `select` (one value) or `numerator` and `denominator` (a ratio)"
    )]
    Neither,
}

impl IoShape {
    /// What would be right.
    pub const HELP: &'static str =
        "write `select: {…}` for one value, or `numerator: {…}` and `denominator: {…}` for a ratio";

    /// The key to point at.
    pub fn key(self) -> &'static str {
        match self {
            IoShape::Both => "select",
            IoShape::NoDenominator => "numerator",
            IoShape::NoNumerator => "denominator",
            IoShape::Neither => "io_summary",
        }
    }
}

impl CheckSchema for IoSummaryCheck {
    fn expect(&self) -> &Expect {
        &self.expect
    }
    fn selections(&self) -> Vec<(&'static str, &Selection)> {
        [
            ("select", &self.select),
            ("numerator", &self.numerator),
            ("denominator", &self.denominator),
        ]
        .into_iter()
        .filter_map(|(k, s)| s.as_ref().map(|s| (k, s)))
        .collect()
    }
    fn validate(&self) -> Result<(), CheckError> {
        self.shape().map_err(CheckError::IoShape)
    }
    fn same_sides(&self) -> bool {
        self.numerator.is_some() && self.numerator == self.denominator
    }
}
