//! Claim verdicts: the statements a source makes, checked against a bundle's frames.
//!
//! Each claim of an experiment (`claims:` in its YAML) has a `check:` in one of four
//! kinds. Every kind computes one *measured* number from the bundle and, with the same
//! recipe over `data/published/`, the *published* number, and compares the measured one
//! with `expect: {min, max}`:
//!
//! | kind | measured number |
//! |---|---|
//! | `ratio` | `stat(metric)` over the rows matching `numerator` ÷ the same over `denominator` |
//! | `first_vs_rest` | per point: the first iteration's metric ÷ the mean of the later ones; the point furthest from `expect` counts |
//! | `flat` | `stat(metric)` per value of the `across` column; the largest ÷ the smallest |
//! | `layout` | per point: the largest file's *discontiguity*, the share of its consecutive block pairs that are not physically adjacent (0 = one contiguous run, 1 = every block elsewhere); the point furthest from `expect` counts |
//!
//! Selections (`numerator`, `select`, …) map a column to a value, a list of values (any
//! of), or a range `{min, max}`; matrix axes can be used on every table (the runs table
//! has them as columns, the others get them from the manifest). Runs rows count only
//! when their `status` is `ok`.
//!
//! The verdict is `reproduced`, `not reproduced` or `not applicable`, always with a
//! reason. *Not applicable* when: the selected points were unsupported here or failed,
//! a table is missing, the bundle ran at a smaller scale than the claim is about
//! (`at_scale: {var: value}`: every listed var must be at least that), or (layout) the
//! largest file is smaller than `min_blocks`. A tool that ran as a stand-in (the
//! manifest's `tools`, e.g. `fslab stress` for `fsstress`) is named in every reason.
//!
//! ```yaml
//! claims:
//!   - id: first-run-overhead
//!     text: parent=1 costs at most ~10 % on the first run
//!     check:
//!       kind: ratio
//!       metric: wall_s
//!       numerator: { parent: 1, link: 1, iteration: 1 }
//!       denominator: { parent: 0, link: 1, iteration: 1 }
//!       expect: { max: 1.10 }
//!       at_scale: { n: 400000 }
//!       published:
//!         dataset: "000"
//!         numerator: { quantity: real_time, parent: 1, link_op: true, run: 1 }
//!         denominator: { quantity: real_time, parent: 0, link_op: true, run: 1 }
//! ```

use super::{f64_values, str_values, AnalysisError};
use crate::spec::{Claim, Value as SpecValue};
use crate::store::{Bundle, Manifest, StoreError};
use indexmap::IndexMap;
use polars::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

#[derive(Debug, thiserror::Error)]
pub enum ClaimsError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Spec(#[from] crate::spec::SpecError),
    #[error(transparent)]
    Polars(#[from] PolarsError),
}

/// The outcome of checking one claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Reproduced,
    NotReproduced,
    NotApplicable,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::NotReproduced => "not reproduced",
            Verdict::NotApplicable => "not applicable",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// One claim's verdict, with the numbers side by side.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimVerdict {
    pub id: String,
    pub text: String,
    pub kind: String,
    pub verdict: Verdict,
    /// The number measured in the bundle (also when not applicable, if it exists).
    pub measured: Option<f64>,
    /// The same number computed from the published data.
    pub published: Option<f64>,
    /// What the claim expects of the number, e.g. `≤ 1.1`.
    pub expected: String,
    pub unit: String,
    /// Why this verdict, in words.
    pub reason: String,
    /// Per-point values and other particulars.
    pub details: Vec<String>,
}

/// `expect:` — bounds on the measured number.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    #[serde(default)]
    pub min: Option<f64>,
    #[serde(default)]
    pub max: Option<f64>,
}

impl Expect {
    pub fn holds(&self, v: f64) -> bool {
        self.min.is_none_or(|m| v >= m) && self.max.is_none_or(|m| v <= m)
    }

    /// How far outside the bounds `v` is (0 inside), relative to the bound.
    fn miss(&self, v: f64) -> f64 {
        let below = self.min.map_or(0.0, |m| {
            if v < m {
                (m - v) / m.abs().max(1e-12)
            } else {
                0.0
            }
        });
        let above = self.max.map_or(0.0, |m| {
            if v > m {
                (v - m) / m.abs().max(1e-12)
            } else {
                0.0
            }
        });
        below.max(above)
    }

    /// Of several per-point values, the one that decides: the furthest outside the
    /// bounds, or when all hold, the closest to a bound.
    fn decisive(&self, values: &[f64]) -> Option<f64> {
        let key = |v: f64| {
            let miss = self.miss(v);
            if miss > 0.0 {
                miss
            } else {
                // Inside: negative distance to the nearest bound (closer → larger).
                let dmin = self.min.map_or(f64::INFINITY, |m| v - m);
                let dmax = self.max.map_or(f64::INFINITY, |m| m - v);
                -dmin.min(dmax)
            }
        };
        values
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .max_by(|a, b| key(*a).total_cmp(&key(*b)))
    }
}

impl fmt::Display for Expect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.min, self.max) {
            (Some(a), Some(b)) => write!(f, "between {} and {}", num(a), num(b)),
            (Some(a), None) => write!(f, "≥ {}", num(a)),
            (None, Some(b)) => write!(f, "≤ {}", num(b)),
            (None, None) => f.write_str("(anything)"),
        }
    }
}

/// A number for people: 4 significant digits, no trailing zeros after the point.
fn num(v: f64) -> String {
    let s = super::fmt_sig(v, 4);
    if s.contains('.') && !s.contains('e') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A selection condition on one column.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum Cond {
    Range(Range),
    Value(SpecValue),
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Range {
    #[serde(default)]
    pub min: Option<f64>,
    #[serde(default)]
    pub max: Option<f64>,
}

/// Column → condition; all must hold.
pub type Selection = IndexMap<String, Cond>;

/// How rows are summarised.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Stat {
    #[default]
    Mean,
    Median,
    Min,
    Max,
    Sum,
    Count,
}

impl Stat {
    fn apply(self, v: &[f64]) -> Option<f64> {
        if v.is_empty() {
            return None;
        }
        Some(match self {
            Stat::Mean => v.iter().sum::<f64>() / v.len() as f64,
            Stat::Median => {
                let mut s = v.to_vec();
                s.sort_by(f64::total_cmp);
                let n = s.len();
                if n % 2 == 1 {
                    s[n / 2]
                } else {
                    (s[n / 2 - 1] + s[n / 2]) / 2.0
                }
            }
            Stat::Min => v.iter().copied().fold(f64::INFINITY, f64::min),
            Stat::Max => v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            Stat::Sum => v.iter().sum(),
            Stat::Count => v.len() as f64,
        })
    }
}

/// The `check:` of a claim.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Check {
    Ratio(RatioCheck),
    FirstVsRest(FirstVsRestCheck),
    Flat(FlatCheck),
    Layout(LayoutCheck),
}

/// What every kind of check states besides how it measures.
struct Stated<'a> {
    expect: &'a Expect,
    at_scale: &'a IndexMap<String, f64>,
    unit: &'a str,
    note: Option<&'a str>,
}

impl Check {
    pub fn kind(&self) -> &'static str {
        match self {
            Check::Ratio(_) => "ratio",
            Check::FirstVsRest(_) => "first_vs_rest",
            Check::Flat(_) => "flat",
            Check::Layout(_) => "layout",
        }
    }

    fn stated(&self) -> Stated<'_> {
        let (expect, at_scale, unit, note) = match self {
            Check::Ratio(c) => (&c.expect, &c.at_scale, c.unit.as_str(), &c.note),
            Check::FirstVsRest(c) => (&c.expect, &c.at_scale, c.unit.as_str(), &c.note),
            Check::Flat(c) => (&c.expect, &c.at_scale, c.unit.as_str(), &c.note),
            Check::Layout(c) => (
                &c.expect,
                &c.at_scale,
                "discontiguous block pairs / block pairs",
                &c.note,
            ),
        };
        Stated {
            expect,
            at_scale,
            unit,
            note: note.as_deref(),
        }
    }

    /// The value in this bundle.
    fn measure(&self, ev: &Evidence) -> Result<Measure, String> {
        match self {
            Check::Ratio(c) => measure_ratio(c, ev),
            Check::FirstVsRest(c) => measure_first_vs_rest(c, ev),
            Check::Flat(c) => measure_flat(c, ev),
            Check::Layout(c) => measure_layout(c, ev),
        }
    }

    /// The same value from the post's numbers, when the check says where they are.
    fn published(&self, ev: &Evidence) -> Option<Result<f64, String>> {
        match self {
            Check::Ratio(c) => c.published.as_ref().map(|p| published_ratio(p, ev)),
            Check::FirstVsRest(c) => c
                .published
                .as_ref()
                .map(|p| published_first_vs_rest(p, &c.expect, ev)),
            Check::Flat(c) => c.published.as_ref().map(|p| published_flat(p, ev)),
            Check::Layout(c) => c
                .published
                .as_ref()
                .map(|p| published_layout(p, &c.expect, ev)),
        }
    }
}

fn default_runs() -> String {
    "runs".into()
}
fn default_extents() -> String {
    "extents".into()
}
fn default_wall() -> String {
    "wall_s".into()
}
fn default_value() -> String {
    "value".into()
}
fn default_run() -> String {
    "run".into()
}
fn default_block() -> u64 {
    4096
}
fn default_x() -> String {
    "x".into()
}

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

/// `kind: layout`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LayoutCheck {
    #[serde(default = "default_extents")]
    pub table: String,
    #[serde(default)]
    pub select: Selection,
    /// Bytes per block, to count blocks from extent lengths.
    #[serde(default = "default_block")]
    pub block_bytes: u64,
    /// The largest file must have at least this many blocks for the layout to say anything.
    #[serde(default)]
    pub min_blocks: u64,
    #[serde(default)]
    pub expect: Expect,
    #[serde(default)]
    pub at_scale: IndexMap<String, f64>,
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub published: Option<PublishedLayout>,
}

/// A block listing in the shape of `data/published/001_dir_blocks.csv`: `kind` (`data`
/// or `IND`), `segment`, `logical_start`, `physical_start`, `length`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedLayout {
    pub dataset: String,
    #[serde(default)]
    pub select: Selection,
}

/// Loads a published dataset by name (`"000"`, `"001-dir-blocks"` …).
pub type PublishedLoader = Box<dyn Fn(&str) -> Result<DataFrame, String>>;

/// Everything a verdict is computed from.
pub struct Evidence {
    pub manifest: Manifest,
    /// Tables by name (`runs`, `extents`, `fsck`, …).
    pub tables: BTreeMap<String, DataFrame>,
    /// The scalar variables the bundle ran with (after profile and `--set`).
    pub vars: IndexMap<String, SpecValue>,
    pub published: PublishedLoader,
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
        Ok(Evidence {
            manifest,
            tables,
            vars,
            published: Box::new(|d| crate::published::load(d).map_err(|e| e.to_string())),
        })
    }
}

/// The scalar vars of the bundle's experiment after its profile and overrides.
fn bundle_vars(m: &Manifest) -> IndexMap<String, SpecValue> {
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

/// Check every claim of the bundle's experiment (as embedded in the bundle).
pub fn check_bundle(b: &Bundle) -> Result<Vec<ClaimVerdict>, ClaimsError> {
    let exp = crate::spec::Experiment::from_str_named(
        &b.manifest().experiment.yaml,
        &b.path().join("experiment.yaml").display().to_string(),
    )?;
    let ev = Evidence::from_bundle(b)?;
    Ok(check_claims(&exp.def.claims, &ev))
}

/// [`check_bundle`] as a DataFrame (see [`verdicts_frame`]).
pub fn claims_frame(b: &Bundle) -> Result<DataFrame, ClaimsError> {
    Ok(verdicts_frame(&check_bundle(b)?)?)
}

pub fn check_claims(claims: &[Claim], ev: &Evidence) -> Vec<ClaimVerdict> {
    claims.iter().map(|c| check_claim(c, ev)).collect()
}

/// What a check computes before the verdict.
struct Measure {
    value: f64,
    details: Vec<String>,
}

/// Check one claim.
pub fn check_claim(claim: &Claim, ev: &Evidence) -> ClaimVerdict {
    let mut v = ClaimVerdict {
        id: claim.id.clone(),
        text: claim.text.clone(),
        kind: String::new(),
        verdict: Verdict::NotApplicable,
        measured: None,
        published: None,
        expected: String::new(),
        unit: String::new(),
        reason: String::new(),
        details: Vec::new(),
    };
    let Some(raw) = &claim.check else {
        v.reason = "the claim has no `check:`; it is not checked".into();
        return v;
    };
    let check: Check = match serde_yaml::from_value(raw.clone()) {
        Ok(c) => c,
        Err(e) => {
            v.reason = format!("its `check:` cannot be read: {e}");
            return v;
        }
    };
    v.kind = check.kind().to_string();
    let Stated {
        expect,
        at_scale,
        unit,
        note,
    } = check.stated();
    let (measured, published) = (check.measure(ev), check.published(ev));
    v.expected = expect.to_string();
    v.unit = unit.to_string();
    let mut extra: Vec<String> = Vec::new();
    match published {
        Some(Ok(p)) => v.published = Some(p),
        Some(Err(e)) => extra.push(format!("published value unavailable: {e}")),
        None => {}
    }
    let scale = scale_gap(at_scale, &ev.vars);
    match measured {
        Err(why) => {
            v.verdict = Verdict::NotApplicable;
            v.reason = why;
        }
        Ok(m) => {
            v.measured = Some(m.value);
            v.details = m.details;
            if let Some(gap) = scale {
                v.verdict = Verdict::NotApplicable;
                v.reason = format!(
                    "scale differs: {gap}; measured {} here only for reference",
                    num(m.value)
                );
            } else if expect.holds(m.value) {
                v.verdict = Verdict::Reproduced;
                v.reason = format!("measured {} is {expect}", num(m.value));
            } else {
                v.verdict = Verdict::NotReproduced;
                v.reason = format!("measured {}, expected {expect}", num(m.value));
            }
        }
    }
    for (name, t) in &ev.manifest.tools {
        if let Some(si) = &t.stand_in {
            extra.push(format!(
                "stand-in workload used: {name} ran as `{}` ({si})",
                t.command.replace("{{fslab}}", "fslab")
            ));
        }
    }
    if let Some(n) = note {
        extra.push(n.to_string());
    }
    for e in extra {
        v.reason.push_str("; ");
        v.reason.push_str(&e);
    }
    v
}

/// Why the bundle is not at the claim's scale (None when it is).
fn scale_gap(
    at_scale: &IndexMap<String, f64>,
    vars: &IndexMap<String, SpecValue>,
) -> Option<String> {
    let mut gaps = Vec::new();
    for (k, want) in at_scale {
        let have = vars.get(k).and_then(|v| match v {
            SpecValue::Int(i) => Some(*i as f64),
            SpecValue::Float(f) => Some(*f),
            SpecValue::Str(s) => s.trim().parse::<f64>().ok(),
            _ => None,
        });
        match have {
            Some(h) if h >= *want => {}
            Some(h) => gaps.push(format!(
                "{k}={} here, {} at the published scale",
                num(h),
                num(*want)
            )),
            None => gaps.push(format!(
                "cannot tell `{k}` of this bundle ({} at the published scale)",
                num(*want)
            )),
        }
    }
    (!gaps.is_empty()).then(|| gaps.join(", "))
}

// ---------------------------------------------------------------------------------------
// Selecting rows.

fn cond_label(c: &Cond) -> String {
    match c {
        Cond::Value(v) => v.label(),
        Cond::Range(r) => match (r.min, r.max) {
            (Some(a), Some(b)) => format!("{}..{}", num(a), num(b)),
            (Some(a), None) => format!("≥{}", num(a)),
            (None, Some(b)) => format!("≤{}", num(b)),
            (None, None) => "any".into(),
        },
    }
}

fn sel_label(sel: &Selection) -> String {
    if sel.is_empty() {
        return "all rows".into();
    }
    sel.iter()
        .map(|(k, c)| format!("{k}={}", cond_label(c)))
        .collect::<Vec<_>>()
        .join(",")
}

fn text_matches(cell: Option<&str>, cond: &Cond) -> bool {
    let Some(cell) = cell else { return false };
    match cond {
        Cond::Range(r) => cell
            .trim()
            .parse::<f64>()
            .is_ok_and(|x| r.min.is_none_or(|m| x >= m) && r.max.is_none_or(|m| x <= m)),
        Cond::Value(SpecValue::List(options)) => options
            .iter()
            .any(|o| text_matches(Some(cell), &Cond::Value(o.clone()))),
        Cond::Value(v) => {
            let want = v.label();
            if cell == want {
                return true;
            }
            matches!((cell.trim().parse::<f64>(), want.trim().parse::<f64>()), (Ok(a), Ok(b)) if a == b)
        }
    }
}

fn json_label(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The table with the manifest's matrix values added as columns (when missing) and, for
/// runs, only the `ok` rows.
fn table(ev: &Evidence, name: &str) -> Result<DataFrame, String> {
    let df = ev.tables.get(name).ok_or_else(|| {
        let have: Vec<&str> = ev.tables.keys().map(String::as_str).collect();
        format!(
            "missing data: the bundle has no `{name}` table (it has: {})",
            if have.is_empty() {
                "none".to_string()
            } else {
                have.join(", ")
            }
        )
    })?;
    let mut df = df.clone();
    if let (Ok(idx), false) = (
        super::i64_values(&df, "claims", "point_index"),
        ev.manifest.matrix_axes.is_empty(),
    ) {
        for axis in &ev.manifest.matrix_axes {
            if df.column(axis).is_ok() {
                continue;
            }
            let values: Vec<Option<String>> = idx
                .iter()
                .map(|i| {
                    i.and_then(|i| {
                        ev.manifest
                            .points
                            .iter()
                            .find(|p| p.index as i64 == i)
                            .and_then(|p| p.vars.get(axis))
                            .map(json_label)
                    })
                })
                .collect();
            df.with_column(Column::new(axis.as_str().into(), values))
                .map_err(|e| e.to_string())?;
        }
    }
    if name == "runs" {
        if let Ok(status) = str_values(&df, "runs", "status") {
            let mask: BooleanChunked = status
                .iter()
                .map(|s| Some(s.as_deref() == Some("ok")))
                .collect();
            df = df.filter(&mask).map_err(|e| e.to_string())?;
        }
    }
    Ok(df)
}

fn select(df: &DataFrame, sel: &Selection, what: &str) -> Result<DataFrame, String> {
    let mut mask = vec![true; df.height()];
    for (col, cond) in sel {
        let cells = str_values(df, "claims", col).map_err(|e| match e {
            AnalysisError::MissingColumn { available, .. } => {
                format!("missing data: {what} has no column `{col}` (columns: {available})")
            }
            other => other.to_string(),
        })?;
        for (m, c) in mask.iter_mut().zip(cells.iter()) {
            *m = *m && text_matches(c.as_deref(), cond);
        }
    }
    let mask: BooleanChunked = mask.into_iter().map(Some).collect();
    df.filter(&mask).map_err(|e| e.to_string())
}

/// Why a selection of a bundle table has no rows: the matching points were unsupported,
/// failed, absent from the plan, or simply produced no rows.
fn explain_empty(ev: &Evidence, table: &str, sel: &Selection) -> String {
    let axes = &ev.manifest.matrix_axes;
    let points: Vec<_> = ev
        .manifest
        .points
        .iter()
        .filter(|p| {
            sel.iter()
                .filter(|(k, _)| axes.contains(k))
                .all(|(k, c)| text_matches(p.vars.get(k).map(json_label).as_deref(), c))
        })
        .collect();
    if points.is_empty() {
        return format!(
            "no point of this bundle has {} (the profile or --set left it out)",
            sel_label(sel)
        );
    }
    // Points with the same status and reason are named together.
    let mut groups: IndexMap<(String, Option<String>), Vec<&str>> = IndexMap::new();
    for p in points.iter().filter(|p| p.status != "ok") {
        groups
            .entry((p.status.clone(), p.reason.clone()))
            .or_default()
            .push(p.id.as_str());
    }
    let not_ok: Vec<String> = groups
        .iter()
        .map(|((status, reason), ids)| {
            let label = match status.as_str() {
                "unsupported" => "unsupported here".to_string(),
                other => other.to_string(),
            };
            format!(
                "{} {label}{}",
                ids.join(", "),
                reason
                    .as_ref()
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default()
            )
        })
        .collect();
    if !not_ok.is_empty() {
        let unsupported = points.iter().any(|p| p.status == "unsupported");
        let head = if unsupported {
            "unsupported here"
        } else {
            "no data"
        };
        return format!("{head}: {}", not_ok.join("; "));
    }
    format!(
        "missing data: no rows of `{table}` match {} although the points ran",
        sel_label(sel)
    )
}

fn values(df: &DataFrame, metric: &str, what: &str) -> Result<Vec<f64>, String> {
    let v = f64_values(df, "claims", metric).map_err(|e| match e {
        AnalysisError::MissingColumn { available, .. } => {
            format!("missing data: {what} has no column `{metric}` (columns: {available})")
        }
        other => other.to_string(),
    })?;
    Ok(v.into_iter().flatten().filter(|x| x.is_finite()).collect())
}

fn selected_values(
    ev: &Evidence,
    table_name: &str,
    metric: &str,
    sel: &Selection,
) -> Result<Vec<f64>, String> {
    let df = table(ev, table_name)?;
    let rows = select(&df, sel, &format!("the `{table_name}` table"))?;
    let v = values(&rows, metric, &format!("the `{table_name}` table"))?;
    if v.is_empty() {
        return Err(explain_empty(ev, table_name, sel));
    }
    Ok(v)
}

/// Published values in seconds when the dataset says their time unit.
fn published_values(df: &DataFrame, metric: &str) -> Result<Vec<f64>, String> {
    let v = f64_values(df, "published", metric).map_err(|e| e.to_string())?;
    let units = str_values(df, "published", "unit").ok();
    let mut out = Vec::new();
    for (i, x) in v.iter().enumerate() {
        let Some(x) = x else { continue };
        let factor = match units.as_ref().and_then(|u| u[i].as_deref()) {
            Some("ms") => 0.001,
            Some("min") => 60.0,
            Some("h") => 3600.0,
            _ => 1.0,
        };
        out.push(x * factor);
    }
    Ok(out)
}

fn published_selected(
    ev: &Evidence,
    dataset: &str,
    metric: &str,
    sel: &Selection,
) -> Result<Vec<f64>, String> {
    let df = (ev.published)(dataset)?;
    let rows = select(&df, sel, &format!("published dataset {dataset}"))?;
    let v = published_values(&rows, metric)?;
    if v.is_empty() {
        return Err(format!(
            "published dataset {dataset} has no rows with {}",
            sel_label(sel)
        ));
    }
    Ok(v)
}

// ---------------------------------------------------------------------------------------
// The four kinds.

fn measure_ratio(c: &RatioCheck, ev: &Evidence) -> Result<Measure, String> {
    let num_v = selected_values(ev, &c.table, &c.metric, &c.numerator)?;
    let den_v = selected_values(ev, &c.table, &c.metric, &c.denominator)?;
    let (Some(n), Some(d)) = (c.stat.apply(&num_v), c.stat.apply(&den_v)) else {
        return Err("missing data: nothing to summarise".into());
    };
    if d == 0.0 {
        return Err(format!(
            "the denominator ({}) is 0",
            sel_label(&c.denominator)
        ));
    }
    Ok(Measure {
        value: n / d,
        details: vec![
            format!(
                "{} of {} over {}: {} ({} rows)",
                stat_name(c.stat),
                c.metric,
                sel_label(&c.numerator),
                num(n),
                num_v.len()
            ),
            format!(
                "{} of {} over {}: {} ({} rows)",
                stat_name(c.stat),
                c.metric,
                sel_label(&c.denominator),
                num(d),
                den_v.len()
            ),
        ],
    })
}

fn stat_name(s: Stat) -> &'static str {
    match s {
        Stat::Mean => "mean",
        Stat::Median => "median",
        Stat::Min => "min",
        Stat::Max => "max",
        Stat::Sum => "sum",
        Stat::Count => "count",
    }
}

fn published_ratio(p: &PublishedRatio, ev: &Evidence) -> Result<f64, String> {
    let n = published_selected(ev, &p.dataset, &p.metric, &p.numerator)?;
    let d = published_selected(ev, &p.dataset, &p.metric, &p.denominator)?;
    match (p.stat.apply(&n), p.stat.apply(&d)) {
        (Some(n), Some(d)) if d != 0.0 => Ok(n / d),
        _ => Err("the published denominator is 0 or empty".into()),
    }
}

/// Series of (iteration, value) per group key.
fn series(
    df: &DataFrame,
    keys: &[String],
    iteration: &str,
    metric: &str,
    what: &str,
) -> Result<BTreeMap<String, Vec<(f64, f64)>>, String> {
    let it = values_opt(df, iteration, what)?;
    let v = values_opt(df, metric, what)?;
    let key_cols: Vec<Vec<Option<String>>> = keys
        .iter()
        .map(|k| str_values(df, "claims", k).map_err(|e| format!("{what}: {e}")))
        .collect::<Result<_, _>>()?;
    let mut out: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for row in 0..df.height() {
        let (Some(i), Some(x)) = (it[row], v[row]) else {
            continue;
        };
        let key = keys
            .iter()
            .zip(&key_cols)
            .map(|(k, col)| {
                let v = col[row].clone().unwrap_or_default();
                // A point id already reads `axis=value,…`.
                if k == "point_id" {
                    v
                } else {
                    format!("{k}={v}")
                }
            })
            .collect::<Vec<_>>()
            .join(",");
        out.entry(key).or_default().push((i, x));
    }
    for s in out.values_mut() {
        s.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    Ok(out)
}

fn values_opt(df: &DataFrame, col: &str, what: &str) -> Result<Vec<Option<f64>>, String> {
    f64_values(df, "claims", col).map_err(|e| match e {
        AnalysisError::MissingColumn { available, .. } => {
            format!("missing data: {what} has no column `{col}` (columns: {available})")
        }
        other => other.to_string(),
    })
}

/// First ÷ mean of the rest, per series.
fn first_vs_rest(series: &BTreeMap<String, Vec<(f64, f64)>>) -> Vec<(String, f64, usize)> {
    series
        .iter()
        .filter(|(_, s)| s.len() >= 2)
        .filter_map(|(k, s)| {
            let first = s[0].1;
            let rest: Vec<f64> = s[1..].iter().map(|x| x.1).collect();
            let mean = rest.iter().sum::<f64>() / rest.len() as f64;
            (mean != 0.0).then(|| (k.clone(), first / mean, s.len()))
        })
        .collect()
}

fn measure_first_vs_rest(c: &FirstVsRestCheck, ev: &Evidence) -> Result<Measure, String> {
    let df = table(ev, &c.table)?;
    let rows = select(&df, &c.select, &format!("the `{}` table", c.table))?;
    if rows.height() == 0 {
        return Err(explain_empty(ev, &c.table, &c.select));
    }
    let s = series(
        &rows,
        &["point_id".to_string()],
        "iteration",
        &c.metric,
        &format!("the `{}` table", c.table),
    )?;
    let ratios = first_vs_rest(&s);
    if ratios.is_empty() {
        return Err("missing data: no point has two or more iterations to compare".into());
    }
    let vals: Vec<f64> = ratios.iter().map(|r| r.1).collect();
    let value = c
        .expect
        .decisive(&vals)
        .ok_or_else(|| "no finite values".to_string())?;
    Ok(Measure {
        value,
        details: ratios
            .iter()
            .map(|(k, r, n)| format!("{k}: first ÷ mean of the {} later = {}", n - 1, num(*r)))
            .collect(),
    })
}

fn published_first_vs_rest(
    p: &PublishedFirstVsRest,
    expect: &Expect,
    ev: &Evidence,
) -> Result<f64, String> {
    let df = (ev.published)(&p.dataset)?;
    let rows = select(&df, &p.select, &format!("published dataset {}", p.dataset))?;
    // Convert to seconds first so that mixed units compare.
    let secs = published_values(&rows, &p.metric)?;
    if secs.len() != rows.height() {
        return Err("published rows without a value".into());
    }
    let mut rows = rows;
    rows.with_column(Column::new("__v".into(), secs))
        .map_err(|e| e.to_string())?;
    let s = series(
        &rows,
        &p.by,
        &p.iteration,
        "__v",
        &format!("published dataset {}", p.dataset),
    )?;
    let vals: Vec<f64> = first_vs_rest(&s).iter().map(|r| r.1).collect();
    expect
        .decisive(&vals)
        .ok_or_else(|| "no published series with two or more runs".into())
}

fn flat_groups(
    df: &DataFrame,
    across: &str,
    metric: &str,
    stat: Stat,
    what: &str,
) -> Result<Vec<(String, f64)>, String> {
    let keys = str_values(df, "claims", across).map_err(|e| format!("{what}: {e}"))?;
    let v = values_opt(df, metric, what)?;
    let mut groups: IndexMap<String, Vec<f64>> = IndexMap::new();
    for (k, x) in keys.into_iter().zip(v) {
        if let (Some(k), Some(x)) = (k, x) {
            groups.entry(k).or_default().push(x);
        }
    }
    Ok(groups
        .into_iter()
        .filter_map(|(k, xs)| stat.apply(&xs).map(|s| (k, s)))
        .collect())
}

fn max_over_min(groups: &[(String, f64)]) -> Option<f64> {
    let max = groups.iter().map(|g| g.1).fold(f64::NEG_INFINITY, f64::max);
    let min = groups.iter().map(|g| g.1).fold(f64::INFINITY, f64::min);
    (groups.len() >= 2 && min > 0.0).then(|| max / min)
}

fn measure_flat(c: &FlatCheck, ev: &Evidence) -> Result<Measure, String> {
    let df = table(ev, &c.table)?;
    let rows = select(&df, &c.select, &format!("the `{}` table", c.table))?;
    if rows.height() == 0 {
        return Err(explain_empty(ev, &c.table, &c.select));
    }
    let groups = flat_groups(
        &rows,
        &c.across,
        &c.metric,
        c.stat,
        &format!("the `{}` table", c.table),
    )?;
    let value = max_over_min(&groups).ok_or_else(|| {
        let ran: Vec<&str> = groups.iter().map(|g| g.0.as_str()).collect();
        let why = explain_empty(ev, &c.table, &c.select);
        format!(
            "needs two or more values of `{}` with data; only {} ran ({why})",
            c.across,
            if ran.is_empty() {
                "none".to_string()
            } else {
                ran.join(", ")
            }
        )
    })?;
    Ok(Measure {
        value,
        details: groups
            .iter()
            .map(|(k, s)| {
                format!(
                    "{}={k}: {} {} = {}",
                    c.across,
                    stat_name(c.stat),
                    c.metric,
                    num(*s)
                )
            })
            .collect(),
    })
}

fn published_flat(p: &PublishedFlat, ev: &Evidence) -> Result<f64, String> {
    let df = (ev.published)(&p.dataset)?;
    let rows = select(&df, &p.select, &format!("published dataset {}", p.dataset))?;
    let secs = published_values(&rows, &p.metric)?;
    let mut rows = rows;
    rows.with_column(Column::new("__v".into(), secs))
        .map_err(|e| e.to_string())?;
    let groups = flat_groups(&rows, &p.across, "__v", p.stat, "published")?;
    max_over_min(&groups).ok_or_else(|| "fewer than two published groups".into())
}

/// One block run of a file: logical start, physical start, length (all in blocks).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Run {
    pub logical: f64,
    pub physical: f64,
    pub length: f64,
}

/// Blocks and the share of consecutive block pairs (in logical order) that are not
/// physically adjacent, over one listing. Several segments (a listing with its middle
/// left out) are measured each on its own and summed.
pub fn discontiguity(segments: &[Vec<Run>]) -> Option<(f64, f64, usize)> {
    let mut pairs = 0.0;
    let mut breaks = 0.0;
    let mut blocks = 0.0;
    let mut fragments = 0usize;
    for seg in segments {
        let mut runs = seg.clone();
        runs.sort_by(|a, b| a.logical.total_cmp(&b.logical));
        if runs.is_empty() {
            continue;
        }
        let n: f64 = runs.iter().map(|r| r.length).sum();
        blocks += n;
        pairs += n - 1.0;
        fragments += 1;
        for w in runs.windows(2) {
            let adjacent = (w[0].physical + w[0].length - w[1].physical).abs() < 0.5
                && (w[0].logical + w[0].length - w[1].logical).abs() < 0.5;
            if !adjacent {
                breaks += 1.0;
                fragments += 1;
            }
        }
    }
    (pairs > 0.0).then(|| (breaks / pairs, blocks, fragments))
}

fn measure_layout(c: &LayoutCheck, ev: &Evidence) -> Result<Measure, String> {
    let df = table(ev, &c.table)?;
    let rows = select(&df, &c.select, &format!("the `{}` table", c.table))?;
    if rows.height() == 0 {
        return Err(explain_empty(ev, &c.table, &c.select));
    }
    let what = format!("the `{}` table", c.table);
    let pidx = values_opt(&rows, "point_index", &what)?;
    let pid = str_values(&rows, "claims", "point_id").map_err(|e| e.to_string())?;
    let capture =
        str_values(&rows, "claims", "capture").unwrap_or_else(|_| vec![None; rows.height()]);
    let inode = str_values(&rows, "claims", "inode").unwrap_or_else(|_| vec![None; rows.height()]);
    let path = str_values(&rows, "claims", "path").unwrap_or_else(|_| vec![None; rows.height()]);
    let flags = str_values(&rows, "claims", "flags").unwrap_or_else(|_| vec![None; rows.height()]);
    let logical = values_opt(&rows, "logical_bytes", &what)?;
    let physical = values_opt(&rows, "physical_bytes", &what)?;
    let length = values_opt(&rows, "length_bytes", &what)?;
    let bs = c.block_bytes.max(1) as f64;
    // point → file → runs
    let mut files: BTreeMap<(i64, String), BTreeMap<String, Vec<Run>>> = BTreeMap::new();
    for r in 0..rows.height() {
        if flags[r]
            .as_deref()
            .is_some_and(|f| f.split(',').any(|x| x.trim() == "metadata"))
        {
            continue;
        }
        let (Some(l), Some(p), Some(n)) = (logical[r], physical[r], length[r]) else {
            continue;
        };
        let point = (
            pidx[r].unwrap_or(-1.0) as i64,
            pid[r].clone().unwrap_or_default(),
        );
        let file = format!(
            "{}:{}:{}",
            capture[r].clone().unwrap_or_default(),
            inode[r].clone().unwrap_or_default(),
            path[r].clone().unwrap_or_default()
        );
        files
            .entry(point)
            .or_default()
            .entry(file)
            .or_default()
            .push(Run {
                logical: l / bs,
                physical: p / bs,
                length: n / bs,
            });
    }
    if files.is_empty() {
        return Err("missing data: no data extents in the selection".into());
    }
    let mut vals = Vec::new();
    let mut details = Vec::new();
    let mut too_small = Vec::new();
    for ((_, id), fs) in &files {
        let Some((name, runs)) = fs.iter().max_by(|a, b| {
            let sa: f64 = a.1.iter().map(|r| r.length).sum();
            let sb: f64 = b.1.iter().map(|r| r.length).sum();
            sa.total_cmp(&sb)
        }) else {
            continue;
        };
        let blocks: f64 = runs.iter().map(|r| r.length).sum();
        let label = name
            .split(':')
            .nth(2)
            .filter(|s| !s.is_empty())
            .map_or_else(
                || format!("inode {}", name.split(':').nth(1).unwrap_or("?")),
                str::to_string,
            );
        if blocks < c.min_blocks as f64 || blocks < 2.0 {
            too_small.push(format!(
                "{id}: largest file ({label}) has {} blocks",
                num(blocks)
            ));
            continue;
        }
        if let Some((d, b, frags)) = discontiguity(std::slice::from_ref(runs)) {
            vals.push(d);
            details.push(format!(
                "{id}: largest file {label}: {} blocks in {frags} contiguous runs, discontiguity {}",
                num(b),
                num(d)
            ));
        }
    }
    if vals.is_empty() {
        return Err(format!(
            "the files are too small to show a layout (need ≥ {} blocks): {}",
            c.min_blocks.max(2),
            too_small.join("; ")
        ));
    }
    details.extend(too_small);
    let value = c
        .expect
        .decisive(&vals)
        .ok_or_else(|| "no finite values".to_string())?;
    Ok(Measure { value, details })
}

fn published_layout(p: &PublishedLayout, expect: &Expect, ev: &Evidence) -> Result<f64, String> {
    let df = (ev.published)(&p.dataset)?;
    let rows = select(&df, &p.select, &format!("published dataset {}", p.dataset))?;
    let what = format!("published dataset {}", p.dataset);
    let kind = str_values(&rows, "claims", "kind").map_err(|e| format!("{what}: {e}"))?;
    let seg = str_values(&rows, "claims", "segment").map_err(|e| format!("{what}: {e}"))?;
    let fs = str_values(&rows, "claims", "fs").unwrap_or_else(|_| vec![None; rows.height()]);
    let l = values_opt(&rows, "logical_start", &what)?;
    let ph = values_opt(&rows, "physical_start", &what)?;
    let n = values_opt(&rows, "length", &what)?;
    let mut by_fs: BTreeMap<String, BTreeMap<String, Vec<Run>>> = BTreeMap::new();
    for r in 0..rows.height() {
        if kind[r].as_deref() != Some("data") {
            continue;
        }
        let (Some(l), Some(p), Some(n)) = (l[r], ph[r], n[r]) else {
            continue;
        };
        by_fs
            .entry(fs[r].clone().unwrap_or_default())
            .or_default()
            .entry(seg[r].clone().unwrap_or_default())
            .or_default()
            .push(Run {
                logical: l,
                physical: p,
                length: n,
            });
    }
    let vals: Vec<f64> = by_fs
        .values()
        .filter_map(|segs| {
            let v: Vec<Vec<Run>> = segs.values().cloned().collect();
            discontiguity(&v).map(|d| d.0)
        })
        .collect();
    expect
        .decisive(&vals)
        .ok_or_else(|| "no published block listing in the selection".into())
}

// ---------------------------------------------------------------------------------------
// Presentation.

/// One row per claim: `claim`, `kind`, `verdict`, `measured`, `published`, `expected`,
/// `unit`, `reason`, `text`, `details`.
pub fn verdicts_frame(v: &[ClaimVerdict]) -> PolarsResult<DataFrame> {
    DataFrame::new_infer_height(vec![
        Column::new(
            "claim".into(),
            v.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "kind".into(),
            v.iter().map(|c| c.kind.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "verdict".into(),
            v.iter().map(|c| c.verdict.label()).collect::<Vec<_>>(),
        ),
        Column::new(
            "measured".into(),
            v.iter().map(|c| c.measured).collect::<Vec<_>>(),
        ),
        Column::new(
            "published".into(),
            v.iter().map(|c| c.published).collect::<Vec<_>>(),
        ),
        Column::new(
            "expected".into(),
            v.iter().map(|c| c.expected.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "unit".into(),
            v.iter().map(|c| c.unit.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "reason".into(),
            v.iter().map(|c| c.reason.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "text".into(),
            v.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "details".into(),
            v.iter().map(|c| c.details.join("; ")).collect::<Vec<_>>(),
        ),
    ])
}

/// The verdicts as text for a terminal.
pub fn render(v: &[ClaimVerdict]) -> String {
    let mut out = String::new();
    for c in v {
        let show = |x: Option<f64>| x.map_or_else(|| "—".to_string(), num);
        out.push_str(&format!(
            "{} — {}\n",
            c.id,
            c.verdict.label().to_uppercase()
        ));
        out.push_str(&format!("  claim:     {}\n", c.text));
        if !c.kind.is_empty() {
            out.push_str(&format!(
                "  measured:  {}   published: {}   expected: {}   ({}, {})\n",
                show(c.measured),
                show(c.published),
                c.expected,
                c.kind,
                c.unit
            ));
        }
        out.push_str(&format!("  why:       {}\n", c.reason));
        for d in &c.details {
            out.push_str(&format!("             · {d}\n"));
        }
        out.push('\n');
    }
    let count = |w: Verdict| v.iter().filter(|c| c.verdict == w).count();
    out.push_str(&format!(
        "{} claims: {} reproduced, {} not reproduced, {} not applicable\n",
        v.len(),
        count(Verdict::Reproduced),
        count(Verdict::NotReproduced),
        count(Verdict::NotApplicable)
    ));
    out
}

#[cfg(test)]
#[path = "claims_tests.rs"]
mod tests;
