//! `scale_check:` — one claim measured at several scales (bundles of one profile that
//! differ in the experiment's scale variable), and decided at the published scale from
//! its trend when no bundle reached it.
//!
//! The rule, stated in every such verdict:
//! - each scale is checked as any bundle is (replicates, interval, mechanism) and gives
//!   the tier its own interval supports;
//! - the two ends of the intervals are each fitted by least squares on ln(scale) and
//!   extrapolated to the published value: the interval the trend predicts there;
//! - the claim is decisive only if that interval decides it and every measured scale
//!   gave the same tier; otherwise `inconclusive`, with the trend in the reason.
//!
//! Extrapolating beyond the largest measured scale assumes the trend goes on, which the
//! mechanism may not do (parent pointers that spill out of the inode at a larger scale,
//! for one): the verdict names the scales, the trend and the published value, so that a
//! reader can judge, and the mechanism's `needs:` are checked at every scale.

use super::evidence::Evidence;
use super::scale_need::scalar;
use super::scale_need::scale_needed;
use super::verdict::{
    check_claim_at, ClaimVerdict, Grounds, Inapplicable, ScaleStanding, TrendGap,
};
use super::words::num;
use crate::analysis::interval::{Interval, Method};
use crate::analysis::tiers::{side, Side, Tier};
use crate::spec::claim::CheckSpec;
use crate::spec::Claim;

/// One measured scale of a claim.
struct AtScale {
    scale: f64,
    verdict: ClaimVerdict,
    /// The tier the scale's own interval supports, and why.
    decided: Option<(Tier, String)>,
}

/// Least squares of `y` on `x`, evaluated at `x0` (None with fewer than two distinct x).
fn fit_at(x: &[f64], y: &[f64], x0: f64) -> Option<(f64, f64)> {
    let n = x.len() as f64;
    if x.len() < 2 {
        return None;
    }
    let mx = x.iter().sum::<f64>() / n;
    let my = y.iter().sum::<f64>() / n;
    let sxx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let slope = sxy / sxx;
    Some((my + slope * (x0 - mx), slope))
}

/// The claim checked over bundles at several values of `var` (one [`Evidence`] each, in
/// any order): the largest scale's verdict, or the trend's when it is below the
/// published scale.
pub fn check_over_scales(claim: &Claim, var: &str, evs: &[&Evidence]) -> Option<ClaimVerdict> {
    let mut at: Vec<AtScale> = evs
        .iter()
        .filter_map(|ev| {
            let scale = scalar(ev.vars.get(var)?)?;
            let mut decided = None;
            let verdict = check_claim_at(claim, ev, &mut decided);
            Some(AtScale {
                scale,
                verdict,
                decided,
            })
        })
        .collect();
    at.sort_by(|a, b| a.scale.total_cmp(&b.scale));
    let top = at.last()?;
    let mut v = top.verdict.clone();
    let scales = at
        .iter()
        .map(|a| num(a.scale))
        .collect::<Vec<_>>()
        .join(", ");
    // The published value of the scale variable, and any other gap of the largest scale.
    let ev_top = evs
        .iter()
        .find(|e| e.vars.get(var).and_then(scalar) == Some(top.scale))?;
    let Some(check) = claim.check.as_ref().and_then(CheckSpec::read) else {
        return Some(v);
    };
    let mut need = scale_needed(check, check.stated().at_scale, ev_top);
    let Some((published, _)) = need.required.shift_remove(var) else {
        return Some(v);
    };
    let per_scale: Vec<String> = at.iter().map(|a| line(var, a)).collect();
    v.details.extend(per_scale.iter().cloned());
    if top.scale >= published || v.not_applicable != Some(Inapplicable::ReducedScale) {
        // At the published scale already, or not applicable for another reason than
        // scale (not run, mechanism absent, not measured): the largest scale says it.
        return Some(v);
    }
    if let Some(other) = need.gap() {
        v.reason = format!(
            "reduced scale: {other}; the scale check covers only {var} ({var}={scales} measured); {}",
            v.reason
        );
        return Some(v);
    }
    let decided: Vec<&AtScale> = at
        .iter()
        .filter(|a| a.decided.is_some() && a.verdict.interval.is_some())
        .collect();
    v.scale = format!(
        "scale check over {var}: {scales} measured, {} published",
        num(published)
    );
    if decided.len() < 2 {
        v.reason = format!(
            "scale check over {var} needs two scales with an interval each, and has {}: {}",
            decided.len(),
            per_scale.join("; ")
        );
        return Some(v);
    }
    let x: Vec<f64> = decided.iter().map(|a| a.scale.ln()).collect();
    let lo: Vec<f64> = decided
        .iter()
        .filter_map(|a| a.verdict.interval.map(|i| i.lo))
        .collect();
    let hi: Vec<f64> = decided
        .iter()
        .filter_map(|a| a.verdict.interval.map(|i| i.hi))
        .collect();
    let x0 = published.ln();
    let (Some((lo0, lo_slope)), Some((hi0, hi_slope))) = (fit_at(&x, &lo, x0), fit_at(&x, &hi, x0))
    else {
        v.reason = format!("scale check over {var}: the scales give no trend");
        return Some(v);
    };
    let doubling = std::f64::consts::LN_2;
    let predicted = Interval {
        lo: lo0.min(hi0),
        hi: hi0.max(lo0),
        level: 0.95,
        method: decided[0]
            .verdict
            .interval
            .map_or(Method::StudentT, |i| i.method),
    };
    let expect = check.expect().clone();
    let trend = format!(
        "the interval's ends move {} and {} per doubling of {var}; extrapolated to {var}={} (published) they give [{}, {}]",
        signed(lo_slope * doubling),
        signed(hi_slope * doubling),
        num(published),
        num(predicted.lo),
        num(predicted.hi)
    );
    let substituted = !v.substitutions.is_empty();
    let extrapolated = match side(&expect, &predicted) {
        Side::Inside if substituted => Tier::ReproducedWithSubstitutes,
        Side::Inside => Tier::Reproduced,
        Side::Outside => Tier::NotReproduced,
        Side::Straddles => Tier::Inconclusive,
    };
    let tiers: Vec<Tier> = decided
        .iter()
        .filter_map(|a| a.decided.as_ref().map(|d| d.0))
        .collect();
    let same = tiers.iter().all(|t| *t == extrapolated);
    v.not_applicable = None;
    v.scale_standing = ScaleStanding::Trend;
    if extrapolated != Tier::Inconclusive && same && decided.len() == at.len() {
        v.tier = extrapolated;
        v.grounds = Some(Grounds::Trend {
            var: var.to_string(),
            published,
            predicted,
            side: side(&expect, &predicted),
        });
        v.reason = format!(
            "scale check over {var}: every measured scale is {} ({}); {trend}, which is {} {expect}",
            extrapolated.label(),
            per_scale.join("; "),
            if extrapolated == Tier::NotReproduced {
                "outside"
            } else {
                "inside"
            }
        );
    } else {
        v.tier = Tier::Inconclusive;
        let gap = if extrapolated == Tier::Inconclusive {
            TrendGap::Straddles
        } else if decided.len() < at.len() {
            TrendGap::MissingIntervals
        } else {
            TrendGap::ScalesDisagree
        };
        v.grounds = Some(Grounds::TrendUndecided(gap));
        let why = match gap {
            TrendGap::Straddles => format!("the extrapolated interval straddles {expect}"),
            TrendGap::MissingIntervals => "not every scale has an interval".to_string(),
            TrendGap::ScalesDisagree => {
                "the measured scales do not all give the tier the trend predicts".to_string()
            }
        };
        v.reason = format!(
            "scale check over {var}: {why}: {}; {trend}",
            per_scale.join("; ")
        );
    }
    Some(v)
}

fn signed(x: f64) -> String {
    if x >= 0.0 {
        format!("+{}", num(x))
    } else {
        num(x)
    }
}

/// `n=10000: 1.12 [1.05, 1.2] (95 %, Fieller–Welch), reproduced`.
fn line(var: &str, a: &AtScale) -> String {
    let value = match (a.verdict.measured, a.verdict.interval) {
        (Some(m), Some(i)) => format!("{} {}", num(m), i.label()),
        (Some(m), None) => num(m),
        (None, _) => "—".into(),
    };
    let tier = match &a.decided {
        Some((t, _)) => t.label().to_string(),
        None => a.verdict.tier_label().to_string(),
    };
    format!("{var}={}: {value}, {tier}", num(a.scale))
}

/// The scale of each bundle's variable `var`, for grouping (None: the bundle lacks it).
pub fn scale_of(ev: &Evidence, var: &str) -> Option<f64> {
    ev.vars.get(var).and_then(scalar)
}
