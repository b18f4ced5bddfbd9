//! Whether two independent reruns of one profile agree, claim by claim (issue 28, item
//! 7): the same tier, and overlapping intervals. A claim whose tier differs between the
//! two is at best `inconclusive`.

use super::verdict::ClaimVerdict;
use super::words::num;
use crate::analysis::tiers::Tier;
use serde::Serialize;

/// One claim in two reruns.
#[derive(Debug, Clone, Serialize)]
pub struct Agreement {
    pub id: String,
    /// The kernel of a per-kernel verdict (`super::per_kernel`): the same (claim,
    /// kernel) is compared across the two reruns.
    pub kernel: Option<String>,
    /// The tier in the first and in the second rerun (as written).
    pub tier_a: String,
    pub tier_b: String,
    pub same_tier: bool,
    /// Whether the two 95 % intervals overlap (None when either has none).
    pub intervals_overlap: Option<bool>,
    /// The tier both reruns support: theirs when they agree, else `inconclusive`.
    pub tier: Tier,
    /// The tier as written (with why it is not applicable when both say so alike).
    pub tier_label: String,
    /// Why, in words.
    pub reason: String,
    /// fslab's own variant, not a claim of the post.
    pub variant: bool,
}

fn here(c: &ClaimVerdict) -> String {
    match (c.measured, c.interval) {
        (Some(m), Some(i)) => format!("{} {}", num(m), i.label()),
        (Some(m), None) => num(m),
        (None, _) => "—".into(),
    }
}

impl Agreement {
    /// The claim's name as its verdicts show it (with the kernel of a per-kernel verdict).
    pub fn name(&self) -> String {
        match &self.kernel {
            Some(k) => format!("{} @ kernel={k}", self.id),
            None => self.id.clone(),
        }
    }
}

/// The claims of `a`, each against the same claim on the same kernel in `b` (a claim, or
/// a kernel of it, missing from `b` disagrees).
pub fn agreement(a: &[ClaimVerdict], b: &[ClaimVerdict]) -> Vec<Agreement> {
    a.iter()
        .map(|x| {
            let Some(y) = b.iter().find(|y| y.id == x.id && y.kernel == x.kernel) else {
                return Agreement {
                    id: x.id.clone(),
                    kernel: x.kernel.clone(),
                    tier_a: x.tier_label().into(),
                    tier_b: "—".into(),
                    same_tier: false,
                    intervals_overlap: None,
                    tier: Tier::Inconclusive,
                    tier_label: Tier::Inconclusive.label().into(),
                    reason: match &x.kernel {
                        Some(k) => format!("the other rerun has no verdict of this claim on kernel={k}"),
                        None => "the other rerun has no such claim".into(),
                    },
                    variant: x.variant,
                };
            };
            // Below the published scale both are `not applicable (reduced scale)`: they
            // agree only if their own intervals support the same tier at that scale.
            let same_at_scale = x.at_this_scale == y.at_this_scale;
            let same = x.tier_label() == y.tier_label() && same_at_scale;
            let overlap = match (x.interval, y.interval) {
                (Some(i), Some(j)) => Some(i.lo <= j.hi && j.lo <= i.hi),
                _ => None,
            };
            let overlap_words = match overlap {
                Some(true) => "; the intervals overlap",
                Some(false) => "; the intervals do not overlap",
                None => "",
            };
            let (tier, tier_label, reason) = if same {
                (
                    x.tier,
                    x.tier_label().to_string(),
                    format!("both reruns: {}{overlap_words}", x.tier_label()),
                )
            } else if x.tier_label() == y.tier_label() {
                let at = |t: Option<Tier>| t.map_or("—", Tier::label);
                (
                    x.tier,
                    x.tier_label().to_string(),
                    format!(
                        "{}; at their own scale the reruns disagree: {} ({}) against {} ({}){overlap_words}",
                        x.reason,
                        at(x.at_this_scale),
                        here(x),
                        at(y.at_this_scale),
                        here(y)
                    ),
                )
            } else {
                (
                    Tier::Inconclusive,
                    Tier::Inconclusive.label().to_string(),
                    format!(
                        "the reruns disagree: {} ({}) against {} ({}){overlap_words}",
                        x.tier_label(),
                        here(x),
                        y.tier_label(),
                        here(y)
                    ),
                )
            };
            Agreement {
                id: x.id.clone(),
                kernel: x.kernel.clone(),
                tier_a: x.tier_label().into(),
                tier_b: y.tier_label().into(),
                same_tier: same,
                intervals_overlap: overlap,
                tier,
                tier_label,
                reason,
                variant: x.variant,
            }
        })
        .collect()
}

/// The agreement as text for a terminal.
pub fn render_agreement(v: &[Agreement]) -> String {
    let mut out = String::new();
    for a in v {
        out.push_str(&format!(
            "{} — {}\n  first:  {}\n  second: {}\n  why:    {}\n\n",
            a.name(),
            a.tier_label.to_uppercase(),
            a.tier_a,
            a.tier_b,
            a.reason
        ));
    }
    let decided = |t: Tier| {
        matches!(
            t,
            Tier::Reproduced | Tier::ReproducedWithSubstitutes | Tier::NotReproduced
        )
    };
    let post: Vec<&Agreement> = v.iter().filter(|a| !a.variant).collect();
    let per_kernel = v.iter().any(|a| a.kernel.is_some());
    out.push_str(&format!(
        "{} of {} {} give the same tier in both reruns; {} decided tiers agree, {} tiers differ\n",
        post.iter().filter(|a| a.same_tier).count(),
        post.len(),
        if per_kernel {
            "claims (counted per claim and kernel)"
        } else {
            "claims"
        },
        post.iter()
            .filter(|a| a.same_tier && decided(a.tier))
            .count(),
        post.iter().filter(|a| !a.same_tier).count()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::interval::{Interval, Method};

    fn verdict(id: &str, tier: Tier, lo: f64, hi: f64) -> ClaimVerdict {
        ClaimVerdict {
            id: id.into(),
            kernel: None,
            text: String::new(),
            quote: Some("q".into()),
            variant: false,
            kind: "ratio".into(),
            tier,
            not_applicable: None,
            reason: String::new(),
            measured: Some((lo + hi) / 2.0),
            published: None,
            expected: String::new(),
            unit: "x".into(),
            interval: Some(Interval {
                lo,
                hi,
                level: 0.95,
                method: Method::FiellerWelch,
            }),
            no_interval: None,
            replication: None,
            scale: String::new(),
            at_this_scale: None,
            recipe: String::new(),
            details: Vec::new(),
            substitutions: Vec::new(),
            note: None,
            grounds: None,
            scale_standing: super::super::verdict::ScaleStanding::Published,
            power: None,
            reading: None,
            sequential: None,
        }
    }

    #[test]
    fn a_tier_that_differs_between_reruns_is_inconclusive() {
        // Issue 28's two reruns of seed 000: later-runs-user-same flipped.
        let a = [
            verdict("user", Tier::ReproducedWithSubstitutes, 0.947, 1.099),
            verdict("same", Tier::NotReproduced, 1.135, 1.244),
        ];
        let b = [
            verdict("user", Tier::Inconclusive, 1.074, 1.225),
            verdict("same", Tier::NotReproduced, 1.232, 1.403),
        ];
        let g = agreement(&a, &b);
        assert_eq!(g[0].tier, Tier::Inconclusive);
        assert!(!g[0].same_tier);
        assert!(
            g[0].reason.starts_with("the reruns disagree"),
            "{}",
            g[0].reason
        );
        assert_eq!(g[1].tier, Tier::NotReproduced);
        assert_eq!(g[1].intervals_overlap, Some(true));
        let text = render_agreement(&g);
        assert!(text.contains("1 of 2 claims give the same tier"), "{text}");
    }

    #[test]
    fn reruns_below_the_published_scale_agree_only_on_the_tier_at_their_scale() {
        let reduced = |t: Tier, lo: f64, hi: f64| {
            let mut v = verdict("r", Tier::NotApplicable, lo, hi);
            v.not_applicable = Some(super::super::verdict::Inapplicable::ReducedScale);
            v.at_this_scale = Some(t);
            v
        };
        let g = agreement(
            &[reduced(Tier::NotReproduced, 2.3, 4.1)],
            &[reduced(Tier::Inconclusive, 1.9, 3.2)],
        );
        assert!(!g[0].same_tier);
        assert_eq!(g[0].tier_label, "not applicable (reduced scale)");
        assert!(
            g[0].reason
                .contains("at their own scale the reruns disagree: not reproduced"),
            "{}",
            g[0].reason
        );
        let g = agreement(
            &[reduced(Tier::NotReproduced, 2.3, 4.1)],
            &[reduced(Tier::NotReproduced, 2.5, 3.2)],
        );
        assert!(g[0].same_tier);
    }
}
