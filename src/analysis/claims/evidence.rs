//! The evidence a verdict is computed from (a bundle's tables, its variables, the
//! published data), and what a check measures on it before the verdict.

use super::error::ClaimsError;
use super::units::Replication;
use crate::analysis::interval::{Interval, NoInterval};
use crate::spec::claim::ScaleSpec;
use crate::spec::Value as SpecValue;
use crate::store::{Bundle, Manifest};
use indexmap::IndexMap;
use polars::prelude::DataFrame;
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

/// Loads a published dataset by name (`"000"`, `"001-dir-blocks"` …); shared by the
/// per-kernel views of one bundle's evidence (`super::per_kernel`).
pub type PublishedLoader = Rc<dyn Fn(&str) -> Result<DataFrame, crate::published::PublishedError>>;

/// Everything a verdict is computed from.
pub struct Evidence {
    pub manifest: Manifest,
    /// Tables by name (`runs`, `extents`, `fsck`, …).
    pub tables: BTreeMap<String, DataFrame>,
    /// The scalar variables the bundle ran with (after profile and `--set`).
    pub vars: IndexMap<String, SpecValue>,
    pub published: PublishedLoader,
    /// How the scale is judged (`scale:` of the experiment whose claims are checked:
    /// the bundle's copy, or today's file when the claims come from it).
    pub scale: Option<ScaleSpec>,
}

impl fmt::Debug for Evidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Evidence")
            .field("experiment", &self.manifest.experiment.id)
            .field("tables", &self.tables.keys().collect::<Vec<_>>())
            .field("vars", &self.vars)
            .finish_non_exhaustive()
    }
}

impl Evidence {
    /// The level of the intervals the claims compute: 95 %, or, for a bundle that
    /// `fslab run --until-decided` made, its last look's repeated-confidence level
    /// (`Manifest::sequential`), which keeps α over the looks it took.
    pub fn level(&self) -> f64 {
        self.manifest
            .sequential
            .as_ref()
            .and_then(|s| s.level())
            .unwrap_or(0.95)
    }

    /// Read every table of a bundle; published data from `data/published/`.
    pub fn from_bundle(b: &Bundle) -> Result<Evidence, ClaimsError> {
        let mut tables = BTreeMap::new();
        for name in b.tables()? {
            let df = if name == "runs" {
                b.runs()?
            } else {
                b.table(&name)?
            };
            tables.insert(name, df);
        }
        let manifest = b.manifest().clone();
        let vars = bundle_vars(&manifest);
        let scale =
            crate::spec::Experiment::from_str_named(&manifest.experiment.yaml, "experiment.yaml")
                .ok()
                .and_then(|e| e.def.scale);
        Ok(Evidence {
            manifest,
            tables,
            vars,
            published: Rc::new(crate::published::load),
            scale,
        })
    }
}

/// The scalar vars of the bundle's experiment after its profile and overrides.
pub(super) fn bundle_vars(m: &Manifest) -> IndexMap<String, SpecValue> {
    let Ok(exp) = crate::spec::Experiment::from_str_named(&m.experiment.yaml, "experiment.yaml")
    else {
        return IndexMap::new();
    };
    let def = exp.def;
    let mut vars = def.vars.clone();
    if let Some(p) = m.profile.as_ref().and_then(|p| def.profiles.get(p)) {
        for (k, v) in p {
            if let Some(slot) = vars.get_mut(k) {
                *slot = v.clone();
            }
        }
    }
    for (k, v) in &m.overrides {
        if let Some(slot) = vars.get_mut(k) {
            if let Ok(val) = serde_json::from_value::<SpecValue>(v.clone()) {
                *slot = val;
            }
        }
    }
    vars
}

/// The scalar vars of the bundle's experiment under its `published` profile (None when it
/// has none, or the experiment cannot be read).
pub(super) fn published_vars(m: &Manifest) -> Option<IndexMap<String, SpecValue>> {
    let exp =
        crate::spec::Experiment::from_str_named(&m.experiment.yaml, "experiment.yaml").ok()?;
    let def = exp.def;
    let profile = def.profiles.get("published")?;
    let mut vars = def.vars.clone();
    for (k, v) in profile {
        if let Some(slot) = vars.get_mut(k) {
            *slot = v.clone();
        }
    }
    Some(vars)
}

/// What the bundle ran with that differs from its experiment's `published` profile
/// (`n`: 40000 here, 400000 published), in the bundle's order (empty: the published
/// profile as it is); None when the experiment has no `published` profile, so there is
/// no published scale to compare with.
pub fn published_differences(m: &Manifest) -> Option<Vec<crate::analysis::tiers::VarDifference>> {
    published_vars(m).map(|p| crate::analysis::tiers::var_differences(&bundle_vars(m), &p))
}

/// Which workload the points of the bundle ran, from the experiment copy it ran: one line
/// for `workload:` (where no variant's `when:` held) and one per `workload_variants`
/// entry that ran, each with where and its command before substitution.
pub fn workloads_ran(m: &Manifest) -> Vec<String> {
    let Ok(exp) = crate::spec::Experiment::from_str_named(&m.experiment.yaml, "experiment.yaml")
    else {
        return Vec::new();
    };
    let def = &exp.def;
    let vars = bundle_vars(m);
    // None: `workload:`; Some(i): the i-th variant; with how many points ran it
    let mut used: Vec<(Option<usize>, usize)> = Vec::new();
    for p in &m.points {
        let mut all = vars.clone();
        for (k, v) in &p.vars {
            if let Ok(val) = serde_json::from_value::<SpecValue>(v.clone()) {
                all.insert(k.clone(), val);
            }
        }
        let w = def.workload_at(&all);
        let i = def
            .workload_variants
            .iter()
            .position(|v| std::ptr::eq(v, w));
        match used.iter_mut().find(|(j, _)| *j == i) {
            Some((_, n)) => *n += 1,
            None => used.push((i, 1)),
        }
    }
    used.sort_by_key(|(i, _)| *i);
    let run_of = |s: &crate::spec::Step| match &s.run {
        Some(crate::spec::CommandSpec::Line(l)) => l.clone(),
        Some(crate::spec::CommandSpec::Argv(a)) => a.join(" "),
        None => "(no run:)".to_string(),
    };
    used.into_iter()
        .map(|(i, n)| {
            let at = if n == m.points.len() {
                "every point".to_string()
            } else {
                format!("{n} of the {} points", m.points.len())
            };
            let Some(i) = i else {
                let why = if def.workload_variants.is_empty() {
                    ""
                } else {
                    " (no variant's `when:` holds there)"
                };
                return format!(
                    "workload: `workload:` at {at}{why}: `{}`",
                    run_of(&def.workload)
                );
            };
            let v = &def.workload_variants[i];
            let when = v
                .when
                .iter()
                .map(|(k, c)| format!("{k}={}", c.label()))
                .collect::<Vec<_>>()
                .join(", ");
            format!(
                "workload: the variant `{}` (`when: {when}`) at {at}, in place of `workload:`: `{}`",
                v.name.as_deref().unwrap_or("unnamed"),
                run_of(v)
            )
        })
        .collect()
}

/// The variable that sets how many timed runs the workload makes per filesystem (its
/// `repeat: "{{var}}"`), if it is one variable.
pub(super) fn repeat_var(m: &Manifest) -> Option<String> {
    let exp =
        crate::spec::Experiment::from_str_named(&m.experiment.yaml, "experiment.yaml").ok()?;
    let Some(crate::spec::RepeatSpec::Count(v)) = &exp.def.workload.repeat else {
        return None;
    };
    single_var(v)
}

/// The variable the workload's `replicates: "{{VAR}}"` names, if it is one variable.
pub(super) fn replicates_var(exp: &crate::spec::Experiment) -> Option<String> {
    single_var(exp.def.workload.replicates.as_ref()?)
}

/// `VAR` when a value is exactly `"{{VAR}}"`, one variable and nothing else.
fn single_var(v: &SpecValue) -> Option<String> {
    let SpecValue::Str(s) = v else {
        return None;
    };
    let inner = s.trim().strip_prefix("{{")?.strip_suffix("}}")?.trim();
    (!inner.is_empty() && inner.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then(|| inner.to_string())
}

/// What a check computes before the verdict.
pub(super) struct Measure {
    pub(super) value: f64,
    pub(super) details: Vec<String>,
    /// The 95 % interval, or why there is none.
    pub(super) interval: Result<Interval, NoInterval>,
    /// The unit of the samples and how many a side.
    pub(super) replication: Replication,
    /// The fewest replicates a side for a decisive tier.
    pub(super) min_replicates: usize,
    /// The table, the filter and the statistic.
    pub(super) recipe: String,
    /// Selected points that are missing, failed or have no ok rows for the selection.
    pub(super) incomplete: Vec<String>,
}
