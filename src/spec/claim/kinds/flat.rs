//! `kind: flat`: a metric that should not depend on one column (`across`), how its
//! flatness is measured (`statistic`), and where the post's numbers are (`published`).

use super::{default_runs, default_value, default_wall, default_x, runs_column};
use crate::spec::claim::{CheckSchema, Expect, Selection, Stat};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// How a `flat` check measures flatness.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FlatStatistic {
    #[default]
    MaxOverMin,
    LogSlope,
}

/// `kind: flat`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlatCheck {
    #[serde(default = "default_runs")]
    pub table: String,
    #[serde(default = "default_wall")]
    pub metric: String,
    #[serde(default)]
    pub stat: Stat,
    #[serde(default)]
    pub select: Selection,
    /// The column (usually a matrix axis) the metric should not depend on.
    pub across: String,
    /// How "flat" is measured: `max_over_min` (default), the largest group ÷ the
    /// smallest, which grows with noise and with the number of groups; or `log_slope`,
    /// the slope of ln(metric) on ln(across) (a size or a number), per block of
    /// replicates with a Student-t interval over them: 0 is flat, and 0.0376 is a
    /// factor 1.2 over a 128× range.
    #[serde(default)]
    pub statistic: FlatStatistic,
    #[serde(default)]
    pub expect: Expect,
    #[serde(default)]
    pub at_scale: IndexMap<String, f64>,
    #[serde(default = "default_x")]
    pub unit: String,
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub published: Option<PublishedFlat>,
    /// The fewest replicates per group for a tier other than `inconclusive` (default 5;
    /// `min_samples` is its old name).
    #[serde(default, alias = "min_samples")]
    pub min_replicates: Option<usize>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedFlat {
    pub dataset: String,
    #[serde(default = "default_value")]
    pub metric: String,
    #[serde(default)]
    pub stat: Stat,
    #[serde(default)]
    pub select: Selection,
    pub across: String,
}

impl CheckSchema for FlatCheck {
    fn expect(&self) -> &Expect {
        &self.expect
    }
    fn selections(&self) -> Vec<(&'static str, &Selection)> {
        vec![("select", &self.select)]
    }
    fn runs_metric(&self) -> Option<&str> {
        runs_column(&self.table, &self.metric)
    }
}
