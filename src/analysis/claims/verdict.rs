//! Verdicts: the evidence a bundle offers and how one claim is decided on it.

use super::error::MeasureError;
use super::evidence::Evidence;
use super::kinds::Stated;
use super::path::PathFound;
use super::scale_need::scale_needed;
use super::select::sel_label;
use super::spill::Spill;
use super::units::{Replication, SampleUnit};
use super::words::num;
use crate::analysis::interval::{Interval, NoInterval};
use crate::analysis::power::{self, Power};
use crate::analysis::sequential::Stopping;
use crate::analysis::tiers::{
    decide_on, decide_point_on, substitutions, Decided, Side, Substitution, SubstitutionKind, Tier,
};
use crate::spec::claim::{Allocator, Check, Needs};
use crate::spec::Claim;
use serde::Serialize;

/// Why a claim is `not applicable`, typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Inapplicable {
    /// The claim has no `check:`, or it cannot be read.
    Unchecked,
    /// The claim says why a run here cannot measure it (`not_measured:`).
    NotMeasured,
    /// The points it selects did not run here (unsupported, failed, left out).
    NotRun,
    /// The bundle lacks the rows or columns, or they give no number.
    NoData,
    /// The bundle cannot test it at all (e.g. seeks without a disk model).
    Untestable,
    /// The bundle ran below the published scale.
    ReducedScale,
    /// The mechanism the claim rests on is absent here (`needs:`).
    MechanismAbsent,
    /// Whether the mechanism is present cannot be told from this bundle (a `needs:`
    /// whose evidence the bundle lacks, e.g. no `fsmap` table to count attr forks in).
    MechanismUnshown,
}

impl Inapplicable {
    /// The tier as written: `not applicable (reduced scale)`, `not applicable: mechanism
    /// absent`, else `not applicable`.
    pub fn tier_label(self) -> &'static str {
        match self {
            Inapplicable::ReducedScale => "not applicable (reduced scale)",
            Inapplicable::MechanismAbsent => "not applicable: mechanism absent",
            Inapplicable::MechanismUnshown => "not applicable: mechanism not shown",
            _ => "not applicable",
        }
    }
}

/// What decided a tier other than `not applicable`, typed (the verdict's `reason` says
/// the same in words, with the numbers).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Grounds {
    /// The measured number against `expect`: its interval, or why it cannot decide.
    Decided(Decided),
    /// Some selected point is missing, failed, or gave no rows: `inconclusive`.
    Incomplete,
    /// A scale check (`super::scale`): every measured scale gave the tier the interval
    /// extrapolated to the published `var` gives (`side` of `expect`).
    Trend {
        var: String,
        published: f64,
        predicted: Interval,
        side: Side,
    },
    /// A scale check that does not decide: `inconclusive`.
    TrendUndecided(TrendGap),
}

/// Why a scale check does not decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TrendGap {
    /// The interval extrapolated to the published scale straddles `expect`.
    Straddles,
    /// Some measured scale has no interval.
    MissingIntervals,
    /// The measured scales do not all give the tier the trend predicts.
    ScalesDisagree,
}

/// Where the evidence of a verdict stands against the published scale, typed (the
/// verdict's `scale` says it in words).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ScaleStanding {
    /// At or above the published scale.
    Published,
    /// Below it, decided from the trend over several scales (`scale_check:`).
    Trend,
    /// Below it.
    Reduced,
    /// Not compared: the experiment has no `published` profile, or the claim no check.
    NotCompared,
}

/// One claim's verdict: its tier, the only verdict, with the numbers side by side and
/// everything a reader needs to recompute it.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimVerdict {
    pub id: String,
    /// The kernel this verdict is about: a claim over a bundle with a `kernel` matrix
    /// axis is checked once per kernel, on that kernel's points alone, unless it pins
    /// `kernel` itself (`super::per_kernel`). None: the claim as written, over every
    /// point it selects.
    pub kernel: Option<String>,
    pub text: String,
    /// Where the post makes the claim; None for fslab's own variants.
    pub quote: Option<String>,
    /// A claim without a quote is fslab's own variant, not the post's: it is listed apart
    /// and never counted in the post's tallies.
    pub variant: bool,
    pub kind: String,
    /// The verdict (see [`super::tiers`]).
    pub tier: Tier,
    /// Why `not applicable`, when it is.
    pub not_applicable: Option<Inapplicable>,
    /// Why this tier, in words (what every claim of the bundle shares is not repeated).
    pub reason: String,
    /// The number measured in the bundle (also when not applicable, if it exists).
    pub measured: Option<f64>,
    /// The same number computed from the published data.
    pub published: Option<f64>,
    /// What the claim expects of the number, e.g. `≤ 1.1`.
    pub expected: String,
    pub unit: String,
    /// The measured number's 95 % interval, when there is one.
    pub interval: Option<Interval>,
    /// Why the measured number has no interval, when it has none.
    pub no_interval: Option<String>,
    /// The unit of the samples and how many a side.
    pub replication: Option<Replication>,
    /// The scale this claim was checked at against the published one.
    pub scale: String,
    /// Below the published scale: the tier the bundle's own interval supports at its own
    /// scale (what two reruns of a reduced profile are compared on).
    pub at_this_scale: Option<Tier>,
    /// The table, the filter and the statistic that produced the number.
    pub recipe: String,
    /// Per-point values and other particulars.
    pub details: Vec<String>,
    /// What ran differently from the post (stand-in workload, ext3 on the ext4 driver,
    /// another medium): shared by every claim of the bundle.
    pub substitutions: Vec<String>,
    /// The claim's own note (how fslab reads the post).
    pub note: Option<String>,
    /// What decided the tier, typed; None when it is `not applicable` (then
    /// `not_applicable` says why).
    pub grounds: Option<Grounds>,
    /// Where the bundle stands against the published scale, typed.
    pub scale_standing: ScaleStanding,
    /// What the design could detect at 90 % power and what would decide the claim
    /// ([`crate::analysis::power`]); None without an interval over replicates.
    pub power: Option<Power>,
    /// Which reading of the post the verdict assumes, when the claim's `needs:` name one
    /// (`needs: reading:`): its words, or the other reading's when the bundle ran that.
    pub reading: Option<String>,
    /// The stopping rule of a bundle `fslab run --until-decided` made: its interval is
    /// the last look's repeated confidence interval ([`crate::analysis::sequential`]).
    /// None for a plain run (a fixed design, 95 %) and for a verdict without an interval
    /// over replicates.
    pub sequential: Option<Stopping>,
}

impl ClaimVerdict {
    /// The claim's name where its verdict is shown: its id, with the kernel when the
    /// verdict is one kernel's (`truncate-grows-with-extsize @ kernel=uml-trixie`).
    pub fn name(&self) -> String {
        match &self.kernel {
            Some(k) => format!("{} @ kernel={k}", self.id),
            None => self.id.clone(),
        }
    }

    /// What the verdict could have detected, for a verdict that rests on a measured
    /// interval (decided or inconclusive): the power line, or why there is none. None
    /// for a claim not applicable here, which measured nothing it could decide.
    pub fn power_line(&self) -> Option<String> {
        if self.tier == Tier::NotApplicable && self.at_this_scale.is_none() {
            return None;
        }
        if let Some(p) = &self.power {
            return Some(match &self.sequential {
                Some(s) => format!("{}; {}", p.label(&self.unit), s.label()),
                None => p.label(&self.unit),
            });
        }
        Some(match &self.replication {
            Some(r) if r.unit == SampleUnit::Iteration || r.fewest_replicates() < 2 => {
                "detectable effect unknown: no spread between replicates (fewer than 2 a side)"
                    .into()
            }
            Some(_) if self.interval.is_none() => {
                "no effect is detectable at this spread: the replicates give no bounded interval (a less noisy denominator or many more replicates are needed)".into()
            }
            _ => "detectable effect unknown".into(),
        })
    }

    /// The tier as written, with why it is not applicable where that is its own tier
    /// (`not applicable (reduced scale)`, `not applicable: mechanism absent`).
    pub fn tier_label(&self) -> &'static str {
        match (self.tier, self.not_applicable) {
            (Tier::NotApplicable, Some(why)) => why.tier_label(),
            (t, _) => t.label(),
        }
    }
}

fn inapplicable(e: &MeasureError) -> Inapplicable {
    match e {
        MeasureError::NotRun(_) => Inapplicable::NotRun,
        MeasureError::Untestable(_) => Inapplicable::Untestable,
        _ => Inapplicable::NoData,
    }
}

/// Check one claim.
pub fn check_claim(claim: &Claim, ev: &Evidence) -> ClaimVerdict {
    check_claim_at(claim, ev, &mut None)
}

/// [`check_claim`], also giving the tier the claim's number has at the bundle's own
/// scale (with why), whenever the number was compared with `expect`: a scale check
/// reads it across bundles (`super::scale`).
pub(super) fn check_claim_at(
    claim: &Claim,
    ev: &Evidence,
    at_this_scale: &mut Option<(Tier, String)>,
) -> ClaimVerdict {
    let subs = substitutions(&ev.manifest);
    let mut v = ClaimVerdict {
        id: claim.id.clone(),
        kernel: None,
        text: claim.text.clone(),
        quote: claim.quote.clone(),
        variant: claim.quote.is_none(),
        kind: String::new(),
        tier: Tier::NotApplicable,
        not_applicable: Some(Inapplicable::Unchecked),
        reason: String::new(),
        measured: None,
        published: None,
        expected: String::new(),
        unit: String::new(),
        interval: None,
        no_interval: None,
        replication: None,
        scale: String::new(),
        at_this_scale: None,
        recipe: String::new(),
        details: Vec::new(),
        substitutions: subs.iter().map(|s| s.what.clone()).collect(),
        note: None,
        grounds: None,
        scale_standing: ScaleStanding::NotCompared,
        power: None,
        reading: None,
        sequential: None,
    };
    let Some(raw) = &claim.check else {
        v.reason = "the claim has no `check:`; it is not checked".into();
        return v;
    };
    let check: &Check = match (raw.read(), raw.error()) {
        (Some(c), _) => c,
        (None, e) => {
            v.reason = match e {
                Some(e) => format!("its `check:` cannot be read: {e}"),
                None => "its `check:` cannot be read".into(),
            };
            return v;
        }
    };
    v.kind = check.kind().to_string();
    if check.same_sides() {
        v.reason = "its `numerator` and `denominator` select the same rows, so the ratio is 1 whatever was measured: the claim is mis-specified and not checked".into();
        return v;
    }
    let Stated {
        expect,
        at_scale,
        unit,
        note,
    } = check.stated();
    v.expected = expect.to_string();
    v.unit = unit.to_string();
    v.note = note.map(str::to_string);
    let mut extra: Vec<String> = Vec::new();
    match check.published(ev) {
        Some(Ok(p)) => v.published = Some(p),
        Some(Err(e)) => extra.push(format!("published value unavailable: {e}")),
        None => {}
    }
    let need = scale_needed(check, at_scale, ev);
    let gap = need.gap();
    (v.scale, v.scale_standing) = match &gap {
        Some(g) => (format!("reduced: {g}"), ScaleStanding::Reduced),
        None if need.required.is_empty() => (
            "no published scale to compare (the experiment has no `published` profile)".into(),
            ScaleStanding::NotCompared,
        ),
        None => (
            "at or above the published scale".into(),
            ScaleStanding::Published,
        ),
    };
    for note in &need.notes {
        v.scale.push_str("; ");
        v.scale.push_str(note);
    }
    let measured = check.measure(ev);
    if let Ok(m) = &measured {
        v.measured = Some(m.value);
        v.details = m.details.clone();
        v.recipe = m.recipe.clone();
        v.replication = Some(m.replication);
        match &m.interval {
            Ok(i) => v.interval = Some(*i),
            Err(e) => v.no_interval = Some(e.to_string()),
        }
    }
    let finish = |mut v: ClaimVerdict, extra: Vec<String>| {
        for e in extra {
            v.reason.push_str("; ");
            v.reason.push_str(&e);
        }
        v
    };
    if let Some(why) = &claim.not_measured {
        v.not_applicable = Some(Inapplicable::NotMeasured);
        v.reason = format!("not measured here: {why}");
        match &measured {
            Ok(m) => v.reason.push_str(&format!(
                "; this bundle's {} ({}) is shown for reference only: it is not the claim's quantity",
                check.kind(),
                num(m.value)
            )),
            Err(e) => v.reason.push_str(&format!("; and in this bundle: {e}")),
        }
        v.interval = None;
        v.no_interval = Some("not measured here".into());
        return finish(v, extra);
    }
    // A bundle run under the other reading of the post checks the claim without the
    // needs of this one (the post's mechanism there is not this reading's).
    // A bundle that does not record a variable of `when` (made before it existed) is
    // checked under the needs' own reading, and says it could not tell.
    let needs = match claim.needs.as_ref().and_then(|n| n.reading.as_ref()) {
        Some(r) => {
            let unrecorded: Vec<&str> = r
                .when
                .keys()
                .filter(|k| !ev.vars.contains_key(*k))
                .map(String::as_str)
                .collect();
            if !unrecorded.is_empty() {
                v.reading = Some(format!(
                    "{} (the bundle does not record `{}`, so its needs apply)",
                    r.says,
                    unrecorded.join("`, `")
                ));
                claim.needs.as_ref()
            } else if r.when.iter().all(|(k, want)| ev.vars.get(k) == Some(want)) {
                v.reading = Some(r.says.clone());
                claim.needs.as_ref()
            } else {
                v.reading = Some(r.otherwise.clone());
                None
            }
        }
        None => claim.needs.as_ref(),
    };
    if let Some(why) = guest_cannot_measure(claim, check, ev) {
        v.not_applicable = Some(Inapplicable::Untestable);
        v.reason = why;
        return finish(v, extra);
    }
    let m = match measured {
        Err(why) => {
            v.not_applicable = Some(inapplicable(&why));
            v.reason = why.to_string();
            return finish(v, extra);
        }
        Ok(m) => m,
    };
    if let Some((why, absent)) = needs.and_then(|n| mechanism_absent(n, check, m.value, &subs, ev))
    {
        v.reason = match why {
            Inapplicable::MechanismUnshown => format!("mechanism not shown: {absent}"),
            _ => format!("mechanism absent: {absent}"),
        };
        v.not_applicable = Some(why);
        return finish(v, extra);
    }
    if let Some(want) = claim.needs.as_ref().and_then(|n| n.truncate_path) {
        for found in super::path::found_per_side(ev, want, &check.selections()) {
            if let Ok(PathFound::Taken(said)) = found {
                v.details.push(said);
            }
        }
    }
    let substituted = !subs.is_empty();
    let (tier, decided, why) = match &m.interval {
        Err(NoInterval::DeterministicLayout) => decide_point_on(expect, m.value, substituted),
        interval => decide_on(
            expect,
            interval,
            &m.replication,
            m.min_replicates,
            substituted,
        ),
    };
    if m.replication.unit == SampleUnit::Replicate {
        v.sequential = ev.manifest.sequential.as_ref().and_then(Stopping::of);
        if let Ok(i) = &m.interval {
            v.power = power::of_interval(
                m.value,
                i,
                m.replication.replicates,
                expect,
                tier.decides(),
                ev.manifest
                    .run_order
                    .as_ref()
                    .and_then(|o| o.mean_ok_pair_seconds()),
            );
        }
    }
    *at_this_scale = Some(if m.incomplete.is_empty() {
        (tier, why.clone())
    } else {
        (
            Tier::Inconclusive,
            format!("incomplete: {}", m.incomplete.join("; ")),
        )
    });
    if gap.is_some() {
        v.at_this_scale = Some(if m.incomplete.is_empty() {
            tier
        } else {
            Tier::Inconclusive
        });
        v.not_applicable = Some(Inapplicable::ReducedScale);
        // The gap itself is the scale note (`v.scale`), said once where the bundle's
        // claims share it; the reason says only what is this claim's own.
        v.reason = format!("reduced scale (see the scale note); at this scale: {why}");
        return finish(v, extra);
    }
    if !m.incomplete.is_empty() {
        v.tier = Tier::Inconclusive;
        v.not_applicable = None;
        v.grounds = Some(Grounds::Incomplete);
        v.reason = format!("incomplete: {}", m.incomplete.join("; "));
        return finish(v, extra);
    }
    v.tier = tier;
    v.not_applicable = None;
    v.grounds = Some(Grounds::Decided(decided));
    v.reason = why;
    finish(v, extra)
}

/// Why a claim cannot be checked on a bundle whose points ran in a User-Mode Linux
/// guest (None when it can; docs/kernels.md): a claim on the split of CPU time (UML
/// charges the guest's system time to user time, so `sys_s` and `user_s` say nothing),
/// and a claim whose number rests on fsync/flush latency (`needs: { flush_latency: true
/// }`: the guest's flushes never reach the host's disk).
fn guest_cannot_measure(claim: &Claim, check: &Check, ev: &Evidence) -> Option<String> {
    let guests = &ev.manifest.environment.guests;
    if guests.is_empty() {
        return None;
    }
    let named = guests
        .iter()
        .map(|g| format!("{} `{}`", g.kind, g.name))
        .collect::<Vec<_>>()
        .join(", ");
    let caveat = |about: &str, otherwise: &'static str| {
        guests
            .first()
            .and_then(|g| g.caveats.iter().find(|c| c.contains(about)))
            .map_or(otherwise, String::as_str)
            .to_string()
    };
    if claim.needs.as_ref().is_some_and(|n| n.flush_latency) {
        return Some(format!(
            "untestable here: the claim rests on fsync/flush latency (`needs: flush_latency`), in a bundle whose points ran in {named}: guest flushes never reach the host's disk, so how long they take says nothing about a medium ({})",
            caveat(
                "flush",
                "fsync and flush latency are not measured: guest flushes never reach the host's disk"
            )
        ));
    }
    let metric = check.runs_metric()?;
    if !matches!(metric, "sys_s" | "user_s") {
        return None;
    }
    Some(format!(
        "untestable here: `{metric}` in a bundle whose points ran in {named} ({}): UML charges the guest's system time to user time, so the split of CPU time says nothing",
        caveat("system CPU", "system CPU time is not measured")
    ))
}

/// Why the claim's mechanism is absent in this bundle, or cannot be shown to be there
/// (None when it is present).
fn mechanism_absent(
    needs: &Needs,
    check: &Check,
    value: f64,
    subs: &[Substitution],
    ev: &Evidence,
) -> Option<(Inapplicable, String)> {
    let mut absent = Vec::new();
    let mut unshown = Vec::new();
    if needs.allocator == Some(Allocator::Ext3) {
        if let Some(s) = subs
            .iter()
            .find(|s| s.kind == SubstitutionKind::Ext3ByExt4Driver)
        {
            absent.push(format!(
                "the claim is about ext3's allocator, and none ran: {}",
                s.what
            ));
        }
    }
    if let Some(c) = &needs.contrast {
        match check
            .with_select(c.select.clone())
            .map(|other| other.measure(ev))
        {
            Some(Ok(other)) if (other.value - value).abs() < c.min_difference => {
                absent.push(format!(
                    "the same measure over {} gives {} against {} here, less than the {} apart the mechanism needs",
                    sel_label(&c.select),
                    num(other.value),
                    num(value),
                    num(c.min_difference)
                ));
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => unshown.push(format!(
                "the contrast over {} cannot be measured: {e}",
                sel_label(&c.select)
            )),
            None => absent.push(format!(
                "a `{}` check has no `select` to contrast",
                check.kind()
            )),
        }
    }
    if let Some(a) = &needs.attr_forks {
        match super::spill::found(ev, a, &check.selections()) {
            Ok(Spill::Present) => {}
            Ok(Spill::Absent(why)) => absent.push(why),
            Ok(Spill::Unshown(why)) => unshown.push(why),
            Err(e) => unshown.push(format!("the attr forks cannot be counted: {e}")),
        }
    }
    if let Some(want) = needs.truncate_path {
        for found in super::path::found_per_side(ev, want, &check.selections()) {
            match found {
                Ok(PathFound::Taken(_)) => {}
                Ok(PathFound::Other(why)) => absent.push(why),
                Err(e) => unshown.push(format!("the truncate path cannot be told: {e}")),
            }
        }
    }
    if !absent.is_empty() {
        absent.extend(unshown);
        return Some((Inapplicable::MechanismAbsent, absent.join("; ")));
    }
    (!unshown.is_empty()).then(|| (Inapplicable::MechanismUnshown, unshown.join("; ")))
}
