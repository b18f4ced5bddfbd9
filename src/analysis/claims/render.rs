//! Verdicts for people and frames.

use super::error::ClaimsError;
use super::per_kernel::check_bundle;
use super::units::Replication;
use super::verdict::{ClaimVerdict, Inapplicable};
use super::words::num;
use crate::analysis::tiers::Tier;
use crate::store::Bundle;
use indexmap::IndexMap;
use polars::prelude::{Column, DataFrame, PolarsResult};
use serde::Serialize;

/// [`check_bundle`] as a DataFrame (see [`verdicts_frame`]).
pub fn claims_frame(b: &Bundle) -> Result<DataFrame, ClaimsError> {
    Ok(verdicts_frame(&check_bundle(b)?)?)
}

/// The count of claims per tier of a bundle, as a DataFrame (see [`tier_counts_frame`]).
pub fn claims_tier_counts(b: &Bundle) -> Result<DataFrame, ClaimsError> {
    Ok(tier_counts_frame(&check_bundle(b)?)?)
}

/// One row per verdict (a claim, or a claim on one kernel: `super::per_kernel`): `claim`,
/// `kernel` (null for a verdict over every kernel), `kind`, `variant`, `tier` (with why it is not
/// applicable where that is its own tier), `not_applicable`, `reason`, `measured`,
/// `interval_lo`, `interval_hi`, `no_interval`, `published`, `expected`, `unit`,
/// `sample_unit`, `replicates_num`, `replicates_den`, `scale`, `recipe`, `text`,
/// `details`, `substitutions`. The tier is the only verdict.
pub fn verdicts_frame(v: &[ClaimVerdict]) -> PolarsResult<DataFrame> {
    let strs = |f: &dyn Fn(&ClaimVerdict) -> String| v.iter().map(f).collect::<Vec<_>>();
    let opt = |f: &dyn Fn(&ClaimVerdict) -> Option<f64>| v.iter().map(f).collect::<Vec<_>>();
    let reps = |f: &dyn Fn(&Replication) -> usize| {
        v.iter()
            .map(|c| c.replication.as_ref().map(|r| f(r) as u32))
            .collect::<Vec<_>>()
    };
    DataFrame::new_infer_height(vec![
        Column::new("claim".into(), strs(&|c| c.id.clone())),
        Column::new(
            "kernel".into(),
            v.iter().map(|c| c.kernel.as_deref()).collect::<Vec<_>>(),
        ),
        Column::new("kind".into(), strs(&|c| c.kind.clone())),
        Column::new(
            "variant".into(),
            v.iter().map(|c| c.variant).collect::<Vec<_>>(),
        ),
        Column::new("tier".into(), strs(&|c| c.tier_label().to_string())),
        Column::new(
            "not_applicable".into(),
            v.iter()
                .map(|c| c.not_applicable.map(inapplicable_name))
                .collect::<Vec<_>>(),
        ),
        Column::new("reason".into(), strs(&|c| c.reason.clone())),
        Column::new("measured".into(), opt(&|c| c.measured)),
        Column::new("interval_lo".into(), opt(&|c| c.interval.map(|i| i.lo))),
        Column::new("interval_hi".into(), opt(&|c| c.interval.map(|i| i.hi))),
        Column::new(
            "no_interval".into(),
            v.iter()
                .map(|c| c.no_interval.as_deref())
                .collect::<Vec<_>>(),
        ),
        Column::new("published".into(), opt(&|c| c.published)),
        Column::new("expected".into(), strs(&|c| c.expected.clone())),
        Column::new("unit".into(), strs(&|c| c.unit.clone())),
        Column::new(
            "sample_unit".into(),
            v.iter()
                .map(|c| c.replication.map(|r| r.unit.label()))
                .collect::<Vec<_>>(),
        ),
        Column::new("replicates_num".into(), reps(&|r| r.replicates.0)),
        Column::new("replicates_den".into(), reps(&|r| r.replicates.1)),
        Column::new("scale".into(), strs(&|c| c.scale.clone())),
        Column::new("recipe".into(), strs(&|c| c.recipe.clone())),
        Column::new("text".into(), strs(&|c| c.text.clone())),
        Column::new("details".into(), strs(&|c| c.details.join("; "))),
        Column::new(
            "substitutions".into(),
            strs(&|c| c.substitutions.join("; ")),
        ),
    ])
}

/// The JSON name of why a claim is not applicable.
fn inapplicable_name(i: Inapplicable) -> &'static str {
    match i {
        Inapplicable::Unchecked => "unchecked",
        Inapplicable::NotMeasured => "not_measured",
        Inapplicable::NotRun => "not_run",
        Inapplicable::NoData => "no_data",
        Inapplicable::Untestable => "untestable",
        Inapplicable::ReducedScale => "reduced_scale",
        Inapplicable::MechanismAbsent => "mechanism_absent",
        Inapplicable::MechanismUnshown => "mechanism_unshown",
    }
}

/// The post's claims (not fslab's variants).
pub fn post_claims(v: &[ClaimVerdict]) -> impl Iterator<Item = &ClaimVerdict> {
    v.iter().filter(|c| !c.variant)
}

/// Whether the verdicts are split by kernel (some claim has one verdict per kernel).
pub(super) fn per_kernel(v: &[ClaimVerdict]) -> bool {
    v.iter().any(|c| c.kernel.is_some())
}

/// What a tally of verdicts counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CountedPer {
    /// One verdict per claim.
    Claim,
    /// One verdict per claim and kernel: some claims are checked once per kernel of the
    /// bundle's `kernel` axis (`super::per_kernel`).
    ClaimAndKernel,
}

impl CountedPer {
    /// In words: `claim`, `claim and kernel`.
    pub fn label(self) -> &'static str {
        match self {
            CountedPer::Claim => "claim",
            CountedPer::ClaimAndKernel => "claim and kernel",
        }
    }
}

/// What a tally of these verdicts counts.
pub fn counted_per(v: &[ClaimVerdict]) -> CountedPer {
    if per_kernel(v) {
        CountedPer::ClaimAndKernel
    } else {
        CountedPer::Claim
    }
}

/// Said after a tally of verdicts split by kernel (empty otherwise).
pub(super) fn counted_note(v: &[ClaimVerdict]) -> &'static str {
    if per_kernel(v) {
        " (counted per claim and kernel: a claim that does not pin `kernel` is one row per kernel of the bundle's `kernel` axis)"
    } else {
        ""
    }
}

/// How many of the post's claims are in each tier, every tier listed (in [`Tier::ALL`]
/// order); fslab's variants are not counted.
pub fn tier_counts(v: &[ClaimVerdict]) -> IndexMap<&'static str, usize> {
    Tier::ALL
        .iter()
        .map(|t| (t.label(), post_claims(v).filter(|c| c.tier == *t).count()))
        .collect()
}

/// One row per tier: `tier`, `claims` (the count), every tier listed.
pub fn tier_counts_frame(v: &[ClaimVerdict]) -> PolarsResult<DataFrame> {
    let counts = tier_counts(v);
    DataFrame::new_infer_height(vec![
        Column::new("tier".into(), counts.keys().copied().collect::<Vec<_>>()),
        Column::new(
            "claims".into(),
            counts.values().map(|n| *n as u32).collect::<Vec<_>>(),
        ),
    ])
}

/// `fslab claims --json`: the verdicts and the count per tier.
#[derive(Debug, Serialize)]
pub struct Report<'a> {
    pub claims: &'a [ClaimVerdict],
    /// Tier label → number of verdicts, every tier listed.
    pub tiers: IndexMap<&'static str, usize>,
    /// What `tiers` counts: `claim`, or `claim_and_kernel` when claims are split by
    /// kernel (one verdict per kernel of the bundle's `kernel` axis).
    pub counted_per: CountedPer,
}

impl<'a> Report<'a> {
    pub fn new(claims: &'a [ClaimVerdict]) -> Report<'a> {
        Report {
            claims,
            tiers: tier_counts(claims),
            counted_per: counted_per(claims),
        }
    }
}

/// What every claim of a bundle shares (the substitutions, the scale when it is the
/// same for all), said once. With verdicts per kernel, each substitution is said once
/// and names the points it is about (a guest's names its kernel); a host verdict rests
/// on none of a guest's.
pub fn shared_lines(v: &[ClaimVerdict]) -> Vec<String> {
    let mut out = Vec::new();
    if !v.is_empty() {
        let mut subs: Vec<&str> = Vec::new();
        for s in v.iter().flat_map(|c| c.substitutions.iter()) {
            if !subs.contains(&s.as_str()) {
                subs.push(s);
            }
        }
        if subs.is_empty() {
            out.push("substitutions: none".to_string());
        } else if per_kernel(v) {
            out.push(
                "substitutions (each verdict rests on those of its kernel's points):".to_string(),
            );
        } else {
            out.push("substitutions (every claim rests on them):".to_string());
        }
        for s in subs {
            out.push(format!("  - {s}"));
        }
        if let Some(scale) = common_scale(v) {
            out.push(format!("scale: {scale}"));
        }
    }
    out
}

/// The scale note every checked claim shares, if they all share one.
pub(super) fn common_scale(v: &[ClaimVerdict]) -> Option<&str> {
    let mut notes = v
        .iter()
        .filter(|c| !c.scale.is_empty())
        .map(|c| c.scale.as_str());
    let first = notes.next()?;
    notes.all(|n| n == first).then_some(first)
}

/// The verdicts as text for a terminal: what the claims share once, then each claim
/// headed by its tier, the post's claims apart from fslab's variants.
pub fn render(v: &[ClaimVerdict]) -> String {
    let mut out = String::new();
    for line in shared_lines(v) {
        out.push_str(&line);
        out.push('\n');
    }
    out.push('\n');
    let common = common_scale(v);
    let one = |out: &mut String, c: &ClaimVerdict| {
        let show = |x: Option<f64>| x.map_or_else(|| "—".to_string(), num);
        out.push_str(&format!(
            "{} — {}\n",
            c.name(),
            c.tier_label().to_uppercase()
        ));
        out.push_str(&format!("  claim:     {}\n", c.text));
        if !c.kind.is_empty() {
            let here = match (c.measured, c.interval, &c.no_interval) {
                (Some(m), Some(i), _) => format!("{} {}", num(m), i.label()),
                (Some(m), None, Some(why)) => format!("{} ({why})", num(m)),
                (m, _, _) => show(m),
            };
            out.push_str(&format!(
                "  here:      {here}   published: {}   expected: {}   ({}, {})\n",
                show(c.published),
                c.expected,
                c.kind,
                c.unit
            ));
        }
        if let Some(r) = &c.replication {
            out.push_str(&format!("  {}\n", r.label()));
        }
        if let Some(r) = &c.reading {
            out.push_str(&format!("  reading:   {r}\n"));
        }
        if let Some(p) = c.power_line() {
            out.push_str(&format!("  power:     {p}\n"));
        }
        if !c.scale.is_empty() && Some(c.scale.as_str()) != common {
            out.push_str(&format!("  scale:     {}\n", c.scale));
        }
        out.push_str(&format!("  why:       {}\n", c.reason));
        if let Some(n) = &c.note {
            out.push_str(&format!("  note:      {n}\n"));
        }
        if !c.recipe.is_empty() {
            out.push_str(&format!("  from:      {}\n", c.recipe));
        }
        for d in &c.details {
            out.push_str(&format!("             · {d}\n"));
        }
        out.push('\n');
    };
    for c in post_claims(v) {
        one(&mut out, c);
    }
    let variants: Vec<&ClaimVerdict> = v.iter().filter(|c| c.variant).collect();
    if !variants.is_empty() {
        out.push_str(
            "fslab's own variants (no quote from the post; not counted with its claims):\n\n",
        );
        for c in &variants {
            one(&mut out, c);
        }
    }
    let tiers: Vec<Tier> = post_claims(v).map(|c| c.tier).collect();
    out.push_str(&crate::analysis::tiers::counts_line(&tiers));
    out.push_str(counted_note(v));
    if !variants.is_empty() {
        out.push_str(&format!(
            " (and {} variant{} of fslab's own)",
            variants.len(),
            if variants.len() == 1 { "" } else { "s" }
        ));
    }
    out.push('\n');
    out
}
