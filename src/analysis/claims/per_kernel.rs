//! One verdict per kernel (issue 29): a claim checked over a bundle whose experiment has a
//! `kernel` matrix axis (`kernel: [host, uml-bookworm, uml-trixie]`) gives one verdict
//! per kernel its selections reach, each computed on that kernel's points alone: its own
//! tier, reason, number, interval, `needs:` (a truncate path is one kernel's) and
//! substitutions (a host point has no guest). Kernels are never pooled by default: two
//! kernels that take different paths through the filesystem are two measurements, not
//! one sample.
//!
//! A claim that names `kernel` in any of its selections (a cross-kernel comparison:
//! `numerator: { kernel: uml-trixie }`, `denominator: { kernel: uml-bookworm }`) is
//! checked once, as written, over the whole bundle. So are the claims that measure
//! nothing (`not_measured:`, no `check:`, or a `check:` that cannot be read): their
//! verdict is the same on every kernel.

use super::error::ClaimsError;
use super::evidence::Evidence;
use super::scale::check_over_scales;
use super::select::text_matches;
use super::verdict::{check_claim, ClaimVerdict, Inapplicable};
use crate::analysis::tiers::Tier;
use crate::spec::claim::{CheckSpec, Selection, KERNEL_AXIS};
use crate::spec::Claim;
use crate::store::{value_label, Bundle, Manifest, PointRecord};
use polars::prelude::{BooleanChunked, DataFrame, DataType};
use std::collections::{BTreeMap, BTreeSet};

/// Check every claim of the bundle's experiment (as embedded in the bundle).
pub fn check_bundle(b: &Bundle) -> Result<Vec<ClaimVerdict>, ClaimsError> {
    let exp = crate::spec::Experiment::from_str_named(
        &b.manifest().experiment.yaml,
        &b.path().join("experiment.yaml").display().to_string(),
    )?;
    let ev = Evidence::from_bundle(b)?;
    Ok(check_claims(&exp.def.claims, &ev))
}

/// Check every claim but the drafts (`draft: true`, from `fslab import`: not yet read into
/// a check, never evaluated). Over a bundle with a `kernel` matrix axis, a claim that does
/// not pin `kernel` gives one verdict per kernel its selections reach, each on that
/// kernel's points alone.
pub fn check_claims(claims: &[Claim], ev: &Evidence) -> Vec<ClaimVerdict> {
    let mut views = Views::new(ev);
    claims
        .iter()
        .filter(|c| !c.draft)
        .flat_map(|c| views.check(c))
        .collect()
}

/// [`check_over_scales`] once per kernel the claim is split by (in every bundle of the
/// series, each restricted to that kernel's points), or once as written.
pub(super) fn check_over_scales_per_kernel(
    claim: &Claim,
    var: &str,
    evs: &[&Evidence],
) -> Vec<ClaimVerdict> {
    let mut kernels: Vec<String> = Vec::new();
    for ev in evs {
        for k in kernels_for(claim, ev) {
            if !kernels.contains(&k) {
                kernels.push(k);
            }
        }
    }
    if kernels.is_empty() {
        return check_over_scales(claim, var, evs).into_iter().collect();
    }
    let mut out = Vec::new();
    for k in kernels {
        let views: Result<Vec<Evidence>, ClaimsError> =
            evs.iter().map(|ev| restrict(ev, &k)).collect();
        match views {
            Ok(views) => {
                let refs: Vec<&Evidence> = views.iter().collect();
                if let Some(mut v) = check_over_scales(claim, var, &refs) {
                    v.kernel = Some(k);
                    out.push(v);
                }
            }
            Err(e) => {
                if let Some(v) = evs.first().map(|ev| check_claim(claim, ev)) {
                    out.push(unsplittable(v, &k, &e));
                }
            }
        }
    }
    out
}

/// One bundle's evidence and its per-kernel views, each made once.
struct Views<'a> {
    ev: &'a Evidence,
    views: BTreeMap<String, Result<Evidence, ClaimsError>>,
}

impl<'a> Views<'a> {
    fn new(ev: &'a Evidence) -> Views<'a> {
        Views {
            ev,
            views: BTreeMap::new(),
        }
    }

    /// The claim's verdicts: one per kernel it is split by, else one as written.
    fn check(&mut self, claim: &Claim) -> Vec<ClaimVerdict> {
        let kernels = kernels_for(claim, self.ev);
        if kernels.is_empty() {
            return vec![check_claim(claim, self.ev)];
        }
        kernels
            .into_iter()
            .map(|k| {
                let ev = self.ev;
                let view = self
                    .views
                    .entry(k.clone())
                    .or_insert_with(|| restrict(ev, &k));
                match view {
                    Ok(view) => {
                        let mut v = check_claim(claim, view);
                        v.kernel = Some(k);
                        v
                    }
                    Err(e) => unsplittable(check_claim(claim, ev), &k, e),
                }
            })
            .collect()
    }
}

/// A verdict for a kernel whose rows could not be told apart from the others': not
/// applicable, with why, and none of the pooled numbers.
fn unsplittable(mut v: ClaimVerdict, kernel: &str, e: &ClaimsError) -> ClaimVerdict {
    v.kernel = Some(kernel.to_string());
    v.tier = Tier::NotApplicable;
    v.not_applicable = Some(Inapplicable::NoData);
    v.grounds = None;
    v.reason =
        format!("the rows of kernel={kernel} cannot be told apart from the other kernels': {e}");
    v.measured = None;
    v.interval = None;
    v.no_interval = Some("no rows of this kernel alone".into());
    v.replication = None;
    v.at_this_scale = None;
    v.details.clear();
    v
}

/// Every selection a claim makes on the bundle: its check's (measured side) and its
/// `needs:`' (a contrast's, the attr forks'). None when it has no readable check.
fn claim_selections(claim: &Claim) -> Option<Vec<Selection>> {
    let check = claim.check.as_ref()?.read()?;
    let mut out: Vec<Selection> = check
        .selections()
        .into_iter()
        .map(|(_, s)| s.clone())
        .collect();
    if let Some(n) = &claim.needs {
        out.extend(n.contrast.iter().map(|c| c.select.clone()));
        out.extend(n.attr_forks.iter().map(|a| a.select.clone()));
    }
    Some(out)
}

/// The points of `m` a claim's check selects (by their matrix values; a selection's
/// other columns, such as `iteration`, pick rows, not points), restricted to one
/// kernel's points for a verdict about one kernel: the points `fslab run
/// --until-decided` gives more replicates while the verdict is undecided. Every point
/// when the check selects on no matrix axis; none without a readable check.
pub fn points_of(claim: &Claim, kernel: Option<&str>, m: &Manifest) -> Vec<usize> {
    let Some(check) = claim.check.as_ref().and_then(CheckSpec::read) else {
        return Vec::new();
    };
    let measured: Vec<&Selection> = check.selections().into_iter().map(|(_, s)| s).collect();
    let label = |p: &PointRecord, axis: &str| p.vars.get(axis).map(value_label);
    let selects = |p: &PointRecord, sel: &Selection| {
        sel.iter()
            .filter(|(k, _)| m.matrix_axes.contains(k))
            .all(|(k, c)| text_matches(label(p, k).as_deref(), c))
    };
    m.points
        .iter()
        .filter(|p| kernel.is_none_or(|k| label(p, KERNEL_AXIS).as_deref() == Some(k)))
        .filter(|p| measured.is_empty() || measured.iter().any(|s| selects(p, s)))
        .map(|p| p.index)
        .collect()
}

/// What a claim's check expects of its number (None without a readable check).
pub fn expect_of(claim: &Claim) -> Option<crate::spec::claim::Expect> {
    let check = claim.check.as_ref().and_then(CheckSpec::read)?;
    Some(check.stated().expect.clone())
}

/// Whether the claim names `kernel` in a selection: a comparison across kernels, or a
/// claim about one, checked as written.
pub fn pins_kernel(claim: &Claim) -> bool {
    claim_selections(claim).is_some_and(|sels| sels.iter().any(|s| s.contains_key(KERNEL_AXIS)))
}

/// The kernels a claim gets a verdict on, in the order of the bundle's points: every
/// value of the `kernel` axis that has a point the claim's check selects (by its matrix
/// values). Empty (one verdict, as written) when the bundle has no `kernel` axis, the
/// claim pins `kernel`, measures nothing (`not_measured:`, no readable check), or
/// selects no point at all (its verdict then says so).
pub(super) fn kernels_for(claim: &Claim, ev: &Evidence) -> Vec<String> {
    let m = &ev.manifest;
    if !m.matrix_axes.iter().any(|a| a == KERNEL_AXIS) || claim.not_measured.is_some() {
        return Vec::new();
    }
    let Some(sels) = claim_selections(claim) else {
        return Vec::new();
    };
    if sels.iter().any(|s| s.contains_key(KERNEL_AXIS)) {
        return Vec::new();
    }
    let Some(check) = claim.check.as_ref().and_then(CheckSpec::read) else {
        return Vec::new();
    };
    let measured: Vec<&Selection> = check.selections().into_iter().map(|(_, s)| s).collect();
    let label = |p: &PointRecord, axis: &str| p.vars.get(axis).map(value_label);
    let selects = |p: &PointRecord, sel: &Selection| {
        sel.iter()
            .filter(|(k, _)| m.matrix_axes.contains(k))
            .all(|(k, c)| text_matches(label(p, k).as_deref(), c))
    };
    let mut out: Vec<String> = Vec::new();
    for p in &m.points {
        let Some(k) = label(p, KERNEL_AXIS) else {
            continue;
        };
        let reached = measured.is_empty() || measured.iter().any(|s| selects(p, s));
        if reached && !out.contains(&k) {
            out.push(k);
        }
    }
    out
}

/// The evidence of one kernel: its points, the rows of every table that belong to them
/// (by `point_index`, which every table the runner writes carries; a table without it
/// cannot be split and is left out of the view), and its guest (none for `host`, whose
/// points ran on the host's kernel; for a guest, the manifest's `environment.kernel`
/// becomes the guest's release, the kernel that ran them).
pub(super) fn restrict(ev: &Evidence, kernel: &str) -> Result<Evidence, ClaimsError> {
    let manifest = restrict_manifest(&ev.manifest, kernel);
    let keep: BTreeSet<i64> = manifest.points.iter().map(|p| p.index as i64).collect();
    let mut tables = BTreeMap::new();
    for (name, df) in &ev.tables {
        if let Some(rows) = rows_of(df, &keep)? {
            tables.insert(name.clone(), rows);
        }
    }
    Ok(Evidence {
        manifest,
        tables,
        vars: ev.vars.clone(),
        published: ev.published.clone(),
        scale: ev.scale.clone(),
    })
}

/// The manifest as one kernel's points alone saw it.
fn restrict_manifest(m: &Manifest, kernel: &str) -> Manifest {
    let mut m = m.clone();
    m.points
        .retain(|p| p.vars.get(KERNEL_AXIS).map(value_label).as_deref() == Some(kernel));
    m.environment.guests.retain(|g| g.name == kernel);
    if let Some(g) = m.environment.guests.first() {
        if !g.release.is_empty() {
            m.environment.kernel = g.release.clone();
        }
    }
    m
}

/// The rows of `df` whose `point_index` is in `keep`; None when it has no such column.
fn rows_of(df: &DataFrame, keep: &BTreeSet<i64>) -> Result<Option<DataFrame>, ClaimsError> {
    let Ok(col) = df.column("point_index") else {
        return Ok(None);
    };
    let idx = col.cast(&DataType::Int64)?;
    let mask: BooleanChunked = idx
        .i64()?
        .iter()
        .map(|i| Some(i.is_some_and(|i| keep.contains(&i))))
        .collect();
    Ok(Some(df.filter(&mask)?))
}
