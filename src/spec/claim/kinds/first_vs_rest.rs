//! `kind: first_vs_rest`: the first run of each replicate against the runs that follow
//! it, and where the post's numbers are (`published`).

use super::{default_run, default_runs, default_value, default_wall, default_x, runs_column};
use crate::spec::claim::{CheckSchema, Expect, Selection};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// `kind: first_vs_rest`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FirstVsRestCheck {
    #[serde(default = "default_runs")]
    pub table: String,
    #[serde(default = "default_wall")]
    pub metric: String,
    #[serde(default)]
    pub select: Selection,
    #[serde(default)]
    pub expect: Expect,
    #[serde(default)]
    pub at_scale: IndexMap<String, f64>,
    #[serde(default = "default_x")]
    pub unit: String,
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub published: Option<PublishedFirstVsRest>,
    /// The fewest replicates for a tier other than `inconclusive` (default 3; each
    /// replicate has one first run; `min_samples` is its old name).
    #[serde(default, alias = "min_samples")]
    pub min_replicates: Option<usize>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedFirstVsRest {
    pub dataset: String,
    #[serde(default = "default_value")]
    pub metric: String,
    #[serde(default)]
    pub select: Selection,
    /// Columns that tell the series apart (each is one "point").
    #[serde(default)]
    pub by: Vec<String>,
    /// The column that numbers the runs.
    #[serde(default = "default_run")]
    pub iteration: String,
}

impl CheckSchema for FirstVsRestCheck {
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
