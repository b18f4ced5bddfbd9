//! `kind: ratio`: `stat(metric)` over the rows `numerator` selects ÷ the same over
//! `denominator`, and where the post's numbers are (`published`).

use super::{default_runs, default_value, default_wall, default_x, runs_column};
use crate::spec::claim::{CheckSchema, Expect, Selection, Stat};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// `kind: ratio`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RatioCheck {
    #[serde(default = "default_runs")]
    pub table: String,
    #[serde(default = "default_wall")]
    pub metric: String,
    #[serde(default)]
    pub stat: Stat,
    pub numerator: Selection,
    pub denominator: Selection,
    #[serde(default)]
    pub expect: Expect,
    #[serde(default)]
    pub at_scale: IndexMap<String, f64>,
    #[serde(default = "default_x")]
    pub unit: String,
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub published: Option<PublishedRatio>,
    /// The fewest replicates a side for a tier other than `inconclusive` (default 3;
    /// `min_samples` is its old name).
    #[serde(default, alias = "min_samples")]
    pub min_replicates: Option<usize>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedRatio {
    pub dataset: String,
    #[serde(default = "default_value")]
    pub metric: String,
    #[serde(default)]
    pub stat: Stat,
    pub numerator: Selection,
    pub denominator: Selection,
}

impl CheckSchema for RatioCheck {
    fn expect(&self) -> &Expect {
        &self.expect
    }
    fn selections(&self) -> Vec<(&'static str, &Selection)> {
        vec![
            ("numerator", &self.numerator),
            ("denominator", &self.denominator),
        ]
    }
    fn runs_metric(&self) -> Option<&str> {
        runs_column(&self.table, &self.metric)
    }
    fn same_sides(&self) -> bool {
        self.numerator == self.denominator
    }
}
