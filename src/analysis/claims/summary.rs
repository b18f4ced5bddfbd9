//! One answer per claim over the sections of several bundles (`fslab claims --summary`,
//! the top of REPRODUCTION.md): for each claim of a post, the section and bundle whose
//! evidence decides, its tier, and why in a few words (a typed [`Why`]).
//!
//! **Which evidence decides.** Every verdict of the claim in every section (one per kernel
//! where a section's claims are split by kernel) is a candidate; [`best`] takes the one
//! whose [`Standing`] ranks first, comparing in this order ([`rank`]):
//! 1. what the evidence could tell: a measured number (any tier but *not applicable*, or
//!    *not applicable (reduced scale)*, which has its number at its own scale) over a
//!    mechanism shown absent (`needs:` not met), over a mechanism the bundle cannot
//!    show, over nothing (the points did not run, no data, untestable, not measured);
//! 2. the published scale over a decision from the trend over several scales
//!    (`scale_check:`), over no published scale to compare, over a reduced scale;
//! 3. more replicates a side over fewer (the fewer of the two sides; an interval over the
//!    iterations of one filesystem counts its one replicate);
//! 4. the post's reading of the workload (`post_reading:` of the experiment: the values
//!    under which the workload runs as the post's own tools most likely ran it) over the
//!    other reading;
//! 5. a section with an independent rerun over one without;
//! 6. the first section given.
//!
//! The tier a candidate gives is never compared: the rule picks the evidence, then says
//! what it gives. The tier of the answer is the section's (the one both reruns support).

use super::sections::{Reading, Section};
use super::select::sel_label;
use super::verdict::{ClaimVerdict, Grounds, Inapplicable, ScaleStanding};
use crate::analysis::interval::Interval;
use crate::analysis::power::Power;
use crate::analysis::tiers::Tier;
use crate::spec::claim::{Allocator, Needs, TruncatePathNeed, TruncatePathNeeds};
use serde::Serialize;

/// What a candidate's evidence could tell about the claim, the least first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bearing {
    /// Nothing: the points did not run, no data, untestable, not measured, not checked.
    Nothing,
    /// The bundle cannot show whether the claim's mechanism was there.
    MechanismUnshown,
    /// The claim's mechanism is shown absent.
    MechanismAbsent,
    /// A number measured with the mechanism there (at any scale).
    Measured,
}

/// Which reading of the workload a candidate's bundle ran, the least preferred first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadingKind {
    /// Not the post's reading (`post_reading:`).
    Other,
    /// The experiment does not say which reading is the post's.
    Undeclared,
    /// The post's reading.
    Post,
}

impl From<&Reading> for ReadingKind {
    fn from(r: &Reading) -> ReadingKind {
        match r {
            Reading::Post(_) => ReadingKind::Post,
            Reading::Other { .. } => ReadingKind::Other,
            Reading::Undeclared => ReadingKind::Undeclared,
        }
    }
}

/// What the rule compares of a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Standing {
    pub bearing: Bearing,
    pub scale: ScaleStanding,
    /// Replicates a side (the fewer of the two sides; 0 without a number).
    pub replicates: usize,
    pub reading: ReadingKind,
    /// The section has an independent rerun.
    pub rerun: bool,
}

/// The scale, the least preferred first.
fn scale_rank(s: ScaleStanding) -> u8 {
    match s {
        ScaleStanding::Reduced => 0,
        ScaleStanding::NotCompared => 1,
        ScaleStanding::Trend => 2,
        ScaleStanding::Published => 3,
    }
}

/// The rule's key: a larger key is better evidence (compared field by field, in the
/// order of the module's rule).
pub fn rank(s: &Standing) -> (Bearing, u8, usize, ReadingKind, bool) {
    (
        s.bearing,
        scale_rank(s.scale),
        s.replicates,
        s.reading,
        s.rerun,
    )
}

/// The index of the best candidate (the first of those that rank highest); None when
/// there are none.
pub fn best(candidates: &[Standing]) -> Option<usize> {
    let mut out: Option<usize> = None;
    for (i, s) in candidates.iter().enumerate() {
        if out.is_none_or(|b| rank(s) > rank(&candidates[b])) {
            out = Some(i);
        }
    }
    out
}

/// What a verdict's evidence could tell.
pub fn bearing(v: &ClaimVerdict) -> Bearing {
    match (v.tier, v.not_applicable) {
        (Tier::NotApplicable, Some(Inapplicable::ReducedScale)) => Bearing::Measured,
        (Tier::NotApplicable, Some(Inapplicable::MechanismAbsent)) => Bearing::MechanismAbsent,
        (Tier::NotApplicable, Some(Inapplicable::MechanismUnshown)) => Bearing::MechanismUnshown,
        (Tier::NotApplicable, _) => Bearing::Nothing,
        _ => Bearing::Measured,
    }
}

/// A verdict's standing in a section that ran `reading`, with or without a rerun.
pub fn standing(v: &ClaimVerdict, reading: ReadingKind, rerun: bool) -> Standing {
    Standing {
        bearing: bearing(v),
        scale: v.scale_standing,
        replicates: v.replication.map_or(0, |r| r.fewest_replicates()),
        reading,
        rerun,
    }
}

/// What a claim's mechanism needs (`needs:`), as the summary names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Need {
    /// ext3's own allocator.
    Ext3Allocator,
    /// The same check over this other selection must differ.
    Contrast(String),
    /// At least this many inodes with an attr fork extent.
    AttrForksAtLeast(u64),
    /// At most this many.
    AttrForksAtMost(u64),
    /// The truncate path every selected point must take.
    TruncatePath(TruncatePathNeed),
    /// The truncate path of each side.
    TruncatePaths {
        numerator: TruncatePathNeed,
        denominator: TruncatePathNeed,
    },
    /// Flush latency on a real medium.
    FlushLatency,
}

/// The needs of a claim, in the order `needs:` lists its keys.
pub fn needs(n: &Needs) -> Vec<Need> {
    let mut out = Vec::new();
    if n.allocator == Some(Allocator::Ext3) {
        out.push(Need::Ext3Allocator);
    }
    if let Some(c) = &n.contrast {
        out.push(Need::Contrast(sel_label(&c.select)));
    }
    if let Some(a) = &n.attr_forks {
        if let Some(m) = a.min_inodes {
            out.push(Need::AttrForksAtLeast(m));
        }
        if let Some(m) = a.max_inodes {
            out.push(Need::AttrForksAtMost(m));
        }
    }
    match n.truncate_path {
        Some(TruncatePathNeeds::Every(p)) => out.push(Need::TruncatePath(p)),
        Some(TruncatePathNeeds::Sides {
            numerator,
            denominator,
        }) => out.push(Need::TruncatePaths {
            numerator,
            denominator,
        }),
        None => {}
    }
    if n.flush_latency {
        out.push(Need::FlushLatency);
    }
    out
}

/// Why the answer's tier, typed (rendered in a few words by `super::summary_render`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Why {
    /// The section's two reruns give different tiers (as written).
    RerunsDisagree { first: String, second: String },
    /// Both reruns below the published scale, giving different tiers at their own scale.
    ReducedScaleRerunsDisagree,
    /// Below the published scale, not decided from a trend: the tier at its own scale.
    ReducedScale { at_this_scale: Option<Tier> },
    /// The mechanism the claim's `needs:` names is absent (`absent`) or cannot be shown.
    Mechanism { absent: bool, needs: Vec<Need> },
    /// Not applicable for another reason.
    Inapplicable(Inapplicable),
    /// What decided the tier.
    Grounds(Grounds),
    /// A decided tier whose grounds the verdict does not record.
    Unrecorded,
}

/// Why a section gives a verdict its tier.
pub fn why(sec: &Section, v: &ClaimVerdict) -> Why {
    if let Some(a) = sec.settled(v).agreement.filter(|a| !a.same_tier) {
        return if a.tier_a == a.tier_b {
            Why::ReducedScaleRerunsDisagree
        } else {
            Why::RerunsDisagree {
                first: a.tier_a.clone(),
                second: a.tier_b.clone(),
            }
        };
    }
    match (v.tier, v.not_applicable) {
        (Tier::NotApplicable, Some(Inapplicable::ReducedScale)) => Why::ReducedScale {
            at_this_scale: v.at_this_scale,
        },
        (Tier::NotApplicable, Some(i @ Inapplicable::MechanismAbsent))
        | (Tier::NotApplicable, Some(i @ Inapplicable::MechanismUnshown)) => Why::Mechanism {
            absent: i == Inapplicable::MechanismAbsent,
            needs: sec.needs.get(&v.id).map(needs).unwrap_or_default(),
        },
        (Tier::NotApplicable, i) => Why::Inapplicable(i.unwrap_or(Inapplicable::Unchecked)),
        _ => v.grounds.clone().map_or(Why::Unrecorded, Why::Grounds),
    }
}

/// One claim's answer.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    pub experiment: String,
    pub id: String,
    /// fslab's own variant (no quote from the post): listed apart, never counted.
    pub variant: bool,
    /// The post's number (the claim's recipe over the published data).
    pub published: Option<f64>,
    pub expected: String,
    /// The deciding section (1-based, as `fslab claims --md` numbers them), its bundle,
    /// and the kernel of a per-kernel verdict.
    pub section: usize,
    pub bundle: String,
    pub kernel: Option<String>,
    pub measured: Option<f64>,
    pub interval: Option<Interval>,
    /// The tier the deciding section supports (both its reruns).
    pub tier: Tier,
    pub tier_label: String,
    pub why: Why,
    pub standing: Standing,
    /// How many verdicts of the claim (sections × kernels) the answer was chosen from.
    pub candidates: usize,
    /// Which reading of the post the deciding verdict assumes (`needs: reading:`), in
    /// its words; None when the claim names no reading.
    pub reading: Option<String>,
    /// What the deciding verdict's design could detect at 90 % power; None where it has
    /// no interval over replicates (the section says why).
    pub power: Option<Power>,
    /// The claim's unit (of a detectable difference).
    pub unit: String,
}

/// One answer per claim of every experiment in the sections: experiments in the order
/// they first appear, claims in their order there.
pub fn summarise(sections: &[Section]) -> Vec<Answer> {
    let mut keys: Vec<(String, String)> = Vec::new();
    for sec in sections {
        for v in &sec.verdicts {
            let k = (sec.experiment().to_string(), v.id.clone());
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    keys.sort_by_key(|(exp, _)| {
        sections
            .iter()
            .position(|s| s.experiment() == exp)
            .unwrap_or(usize::MAX)
    });
    keys.into_iter()
        .filter_map(|(exp, id)| answer(sections, &exp, &id))
        .collect()
}

fn answer(sections: &[Section], exp: &str, id: &str) -> Option<Answer> {
    let candidates: Vec<(&Section, &ClaimVerdict)> = sections
        .iter()
        .filter(|s| s.experiment() == exp)
        .flat_map(|s| {
            s.verdicts
                .iter()
                .filter(|v| v.id == id)
                .map(move |v| (s, v))
        })
        .collect();
    let standings: Vec<Standing> = candidates
        .iter()
        .map(|(s, v)| standing(v, ReadingKind::from(&s.reading), s.rerun.is_some()))
        .collect();
    let i = best(&standings)?;
    let (sec, v) = candidates[i];
    let settled = sec.settled(v);
    Some(Answer {
        experiment: exp.to_string(),
        id: id.to_string(),
        variant: v.variant,
        published: v.published,
        expected: v.expected.clone(),
        section: sec.index,
        bundle: sec.bundle(),
        kernel: v.kernel.clone(),
        measured: v.measured,
        interval: v.interval,
        tier: settled.tier,
        tier_label: settled.tier_label.to_string(),
        why: why(sec, v),
        standing: standings[i],
        candidates: candidates.len(),
        reading: v.reading.clone(),
        power: v.power,
        unit: v.unit.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(bearing: Bearing, scale: ScaleStanding, replicates: usize) -> Standing {
        Standing {
            bearing,
            scale,
            replicates,
            reading: ReadingKind::Undeclared,
            rerun: true,
        }
    }

    #[test]
    fn the_published_scale_wins_over_more_replicates_at_a_reduced_one() {
        // Seed 000: 8 replicates at n = 100,000 against 3 at the post's n = 400,000.
        let c = [
            at(Bearing::Measured, ScaleStanding::Reduced, 8),
            at(Bearing::Measured, ScaleStanding::Published, 3),
        ];
        assert_eq!(best(&c), Some(1));
        // A decision from the trend over the scales ranks between the two.
        let c = [
            at(Bearing::Measured, ScaleStanding::Reduced, 8),
            at(Bearing::Measured, ScaleStanding::Trend, 8),
        ];
        assert_eq!(best(&c), Some(1));
        let c = [
            at(Bearing::Measured, ScaleStanding::Trend, 8),
            at(Bearing::Measured, ScaleStanding::Published, 3),
        ];
        assert_eq!(best(&c), Some(1));
    }

    #[test]
    fn more_replicates_win_at_the_same_scale() {
        // Seed 003: one replicate (an interval over iterations) against five.
        let c = [
            at(Bearing::Measured, ScaleStanding::Published, 1),
            at(Bearing::Measured, ScaleStanding::Published, 5),
        ];
        assert_eq!(best(&c), Some(1));
    }

    #[test]
    fn the_posts_reading_wins_between_otherwise_equal_evidence() {
        let mut today = at(Bearing::Measured, ScaleStanding::Published, 3);
        today.reading = ReadingKind::Other;
        let mut post = today;
        post.reading = ReadingKind::Post;
        assert_eq!(best(&[today, post]), Some(1));
        // But not over more replicates: the reading comes after them in the rule.
        let mut more = today;
        more.replicates = 5;
        assert_eq!(best(&[post, more]), Some(1));
        // Nor over the published scale.
        let mut reduced_post = post;
        reduced_post.scale = ScaleStanding::Reduced;
        assert_eq!(best(&[reduced_post, today]), Some(1));
    }

    #[test]
    fn a_measured_number_wins_over_a_mechanism_shown_absent_over_one_not_shown() {
        let c = [
            at(Bearing::Nothing, ScaleStanding::Published, 0),
            at(Bearing::MechanismUnshown, ScaleStanding::Published, 3),
            at(Bearing::MechanismAbsent, ScaleStanding::Published, 3),
        ];
        assert_eq!(best(&c), Some(2));
        // A measured number below the published scale says more than a mechanism absent
        // at it: the latter cannot test the claim at all.
        let c = [
            at(Bearing::MechanismAbsent, ScaleStanding::Published, 3),
            at(Bearing::Measured, ScaleStanding::Reduced, 8),
        ];
        assert_eq!(best(&c), Some(1));
    }

    #[test]
    fn a_rerun_breaks_a_tie_and_then_the_first_given_wins() {
        let mut alone = at(Bearing::Measured, ScaleStanding::Published, 5);
        alone.rerun = false;
        let paired = at(Bearing::Measured, ScaleStanding::Published, 5);
        assert_eq!(best(&[alone, paired]), Some(1));
        assert_eq!(best(&[paired, paired]), Some(0));
        assert_eq!(best(&[]), None);
    }

    #[test]
    fn needs_are_named_in_the_order_of_the_keys() {
        let n: Needs = serde_yaml::from_str(
            "allocator: ext3\ncontrast: { select: { fs: ext4 }, min_difference: 0.1 }\nattr_forks: { select: { parent: 1 }, min_inodes: 100 }\n",
        )
        .unwrap();
        assert_eq!(
            needs(&n),
            vec![
                Need::Ext3Allocator,
                Need::Contrast("fs=ext4".into()),
                Need::AttrForksAtLeast(100)
            ]
        );
    }
}
