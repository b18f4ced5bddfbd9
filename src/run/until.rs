//! `fslab run --until-decided`: the plan's replicates, then looks. At each look every
//! claim is checked at the look's level of a group-sequential design
//! ([`crate::analysis::sequential::look_at`]: Lan–DeMets alpha spending over at most
//! `max_replicates` a point); while some claim is undecided and more replicates could
//! decide it, a randomised block of replicates of every point of those claims runs (the
//! block sized by the power analysis, [`next_block`], and by the budget, from the
//! replicates' own measured times), and the claims are looked at again. The manifest
//! records each look and why it stopped (`sequential`); what a block ran is on disk, and
//! its look recorded, before the next block starts.

use super::point::run_points;
use super::{approve_mappings, order, prepare, run, RunError, RunOptions};
use crate::analysis::claims::{
    check_claims, expect_of, points_of, ClaimVerdict, ClaimsError, Evidence, Grounds,
};
use crate::analysis::interval::NoInterval;
use crate::analysis::power::{of_interval_at, Needed};
use crate::analysis::sequential::{look_at, next_block, SequentialError, Spending};
use crate::analysis::tiers::{Decided, Side, Tier, DEFAULT_MIN_REPLICATES};
use crate::plan::Plan;
use crate::spec::Claim;
use crate::store::{
    Bundle, BundleStatus, BundleWriter, ClaimAtLook, ClaimState, LookRecord, Manifest, OrderEntry,
    PointStatus, RunOrder, SequentialRecord, SequentialStop,
};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// The most replicates a point gets when neither `--max-replicates` nor `--budget`
/// says.
pub const DEFAULT_MAX_REPLICATES: u32 = 20;

/// How `--until-decided` runs.
#[derive(Debug, Clone)]
pub struct UntilDecided {
    /// The overall two-sided α every claim's looks together keep.
    pub alpha: f64,
    pub spending: Spending,
    /// The power the next block is sized for (`--power`).
    pub power: f64,
    /// The most replicates a point may get (`--max-replicates`); None: from the budget
    /// (what fits after the first block, at the replicates' own times), else
    /// [`DEFAULT_MAX_REPLICATES`].
    pub max_replicates: Option<u32>,
    /// The wall time the whole run may take (`--budget`).
    pub budget: Option<Duration>,
}

impl Default for UntilDecided {
    fn default() -> Self {
        UntilDecided {
            alpha: 0.05,
            spending: Spending::OBrienFleming,
            power: crate::analysis::power::POWER,
            max_replicates: None,
            budget: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum UntilError {
    #[error("--max-replicates {max}: the plan already runs {plan} replicates of a point; give at least that many")]
    MaxBelowPlan { max: u32, plan: u32 },
    #[error("--power {0}: the power must be strictly between 0 and 1 (e.g. 0.9)")]
    Power(f64),
    #[error("--until-decided: the experiment has no claims to decide")]
    NoClaims,
    #[error("the sequential design: {0}")]
    Design(#[from] SequentialError),
    #[error("checking the claims at a look: {0}")]
    Claims(#[from] ClaimsError),
}

/// Run `plan`, then add randomised blocks of replicates until every claim is decided or
/// the budget or the most replicates is reached. `on_look` hears of each look once it
/// is recorded.
pub fn run_until_decided(
    plan: &Plan,
    opts: &RunOptions,
    ud: &UntilDecided,
    on_look: &dyn Fn(&LookRecord),
) -> Result<Bundle, RunError> {
    let plan_reps = plan
        .points
        .iter()
        .map(|p| p.replicates.max(1))
        .max()
        .unwrap_or(1);
    if let Some(max) = ud.max_replicates {
        if max < plan_reps {
            return Err(UntilError::MaxBelowPlan {
                max,
                plan: plan_reps,
            }
            .into());
        }
    }
    if !(ud.power > 0.0 && ud.power < 1.0) {
        return Err(UntilError::Power(ud.power).into());
    }
    let claims: Vec<Claim> = plan
        .experiment
        .def
        .claims
        .iter()
        .filter(|c| !c.draft)
        .cloned()
        .collect();
    if claims.is_empty() {
        return Err(UntilError::NoClaims.into());
    }
    let start = Instant::now();
    let first = run(plan, opts)?;
    let dir = first.path().to_path_buf();
    drop(first);
    let mut plan = plan.clone();
    let mut sides: Vec<usize> = Vec::new();
    let mut record: Option<SequentialRecord> = None;
    let mut max_from_budget = false;
    loop {
        let bundle = Bundle::open(&dir)?;
        let m = bundle.manifest().clone();
        let counts = replicate_counts(&m);
        let mean_s = m.run_order.as_ref().and_then(|o| o.mean_ok_pair_seconds());
        // The design is fixed at the first look: the most replicates a point may get.
        let rec = record.get_or_insert_with(|| {
            let from_budget = budget_max(ud.budget, start.elapsed(), mean_s, &m, plan_reps);
            max_from_budget = ud.max_replicates.is_none() && from_budget.is_some();
            let max = ud
                .max_replicates
                .or(from_budget)
                .unwrap_or(DEFAULT_MAX_REPLICATES.max(plan_reps));
            SequentialRecord {
                alpha: ud.alpha,
                spending: ud.spending,
                power: ud.power,
                max_replicates: max,
                budget_s: ud.budget.map(|b| b.as_secs_f64()),
                looks: Vec::new(),
                stopped: None,
                stated: String::new(),
            }
        });
        let max = rec.max_replicates as usize;
        // The replicates a point has at this look: the fewest among the points still
        // growing (all of them at the first look).
        let growing: Vec<usize> = match rec.looks.last() {
            None => counts.keys().copied().collect(),
            Some(l) => l
                .next_points
                .iter()
                .filter_map(|id| m.points.iter().find(|p| &p.id == id))
                .map(|p| p.index)
                .collect(),
        };
        let n = growing
            .iter()
            .filter_map(|i| counts.get(i))
            .min()
            .copied()
            .unwrap_or(0) as usize;
        if n == 0 || sides.last().is_some_and(|&l| n <= l) {
            // Nothing grew (every added replicate failed): the last look stands.
            rec.stopped = Some(SequentialStop::NothingOpen);
            save_record(&dir, rec)?;
            break;
        }
        sides.push(n.min(max));
        let look = look_at(&sides, max, ud.alpha, ud.spending).map_err(UntilError::from)?;
        let mut look_rec = LookRecord {
            look: sides.len(),
            replicates: n as u32,
            fraction: look.fraction,
            spent: look.spent,
            nominal_alpha: look.nominal_alpha,
            level: 1.0 - look.nominal_alpha,
            at: super::now(),
            elapsed_s: start.elapsed().as_secs_f64(),
            claims: Vec::new(),
            added: 0,
            next_points: Vec::new(),
        };
        // The claims at this look's level: the verdicts read it from the manifest.
        let mut ev = Evidence::from_bundle(&bundle).map_err(UntilError::from)?;
        let mut with_look = rec.clone();
        with_look.looks.push(look_rec.clone());
        ev.manifest.sequential = Some(with_look);
        let verdicts = check_claims(&claims, &ev);
        let mut open_points: BTreeSet<usize> = BTreeSet::new();
        let mut would: Option<usize> = None;
        for v in &verdicts {
            let claim = claims.iter().find(|c| c.id == v.id);
            let state = state_of(v);
            let at = claim.and_then(|c| would_decide_at(v, c, ud.power));
            if state == ClaimState::Open {
                if let Some(c) = claim {
                    open_points.extend(
                        points_of(c, v.kernel.as_deref(), &m)
                            .into_iter()
                            .filter(|i| ok_point(&m, *i)),
                    );
                }
                if let Some(a) = at {
                    would = Some(would.map_or(a, |w: usize| w.min(a)));
                }
            }
            look_rec.claims.push(ClaimAtLook {
                claim: v.name(),
                tier: v.tier_label().to_string(),
                state,
                replicates: v.replication.map(|r| r.fewest_replicates()),
                would_decide_at: at,
            });
        }
        let any_open = look_rec.claims.iter().any(|c| c.state == ClaimState::Open);
        let all_decided = look_rec
            .claims
            .iter()
            .all(|c| c.state == ClaimState::Decided);
        let stop = if all_decided {
            Some(SequentialStop::AllDecided)
        } else if !any_open || open_points.is_empty() {
            Some(SequentialStop::NothingOpen)
        } else if n >= max && max_from_budget {
            Some(SequentialStop::Budget)
        } else if n >= max {
            Some(SequentialStop::MaxReplicates)
        } else {
            None
        };
        let mut add = next_block(n, max, would);
        if stop.is_none() {
            // The budget: the next block's time at the replicates' own mean time.
            if let (Some(budget), Some(each)) = (ud.budget, mean_s) {
                let left = budget.as_secs_f64() - start.elapsed().as_secs_f64();
                let per_round = each * open_points.len() as f64;
                let fits = if per_round > 0.0 {
                    (left / per_round).floor().max(0.0) as usize
                } else {
                    add
                };
                add = add.min(fits);
            }
        }
        let stop = stop.or((add == 0).then_some(SequentialStop::Budget));
        if let Some(why) = stop {
            rec.looks.push(look_rec.clone());
            rec.stopped = Some(why);
            rec.stated = stated(rec);
            save_record(&dir, rec)?;
            on_look(&look_rec);
            break;
        }
        look_rec.added = add as u32;
        look_rec.next_points = open_points
            .iter()
            .filter_map(|i| m.points.get(*i).map(|p| p.id.clone()))
            .collect();
        rec.looks.push(look_rec.clone());
        rec.stated = stated(rec);
        // The block: every open point up to n + add replicates, in randomised blocks.
        let target = (n + add) as u32;
        let mut writer = BundleWriter::reopen(&dir)?;
        writer.manifest_mut().sequential = Some(rec.clone());
        let seed = writer
            .manifest()
            .run_order
            .as_ref()
            .and_then(|o| o.seed)
            .unwrap_or(0)
            .wrapping_add(rec.looks.len() as u64);
        let how = writer
            .manifest()
            .run_order
            .as_ref()
            .map_or(RunOrder::Random, |o| o.order);
        let adds: Vec<(usize, u32)> = open_points
            .iter()
            .map(|&i| {
                (
                    i,
                    target.saturating_sub(counts.get(&i).copied().unwrap_or(0)),
                )
            })
            .filter(|&(_, k)| k > 0)
            .collect();
        let pairs = order::pairs(&adds, how, seed);
        let m = writer.manifest_mut();
        for &(index, r) in &pairs {
            let have = counts.get(&index).copied().unwrap_or(0);
            let id = m
                .points
                .get(index)
                .map(|p| p.id.clone())
                .unwrap_or_default();
            if let Some(o) = m.run_order.as_mut() {
                o.pairs.push(OrderEntry {
                    point_index: index,
                    point_id: id,
                    replicate: have + r,
                    status: PointStatus::Pending,
                    ..OrderEntry::default()
                });
            }
            if let Some(p) = m.points.get_mut(index) {
                p.status = PointStatus::Pending;
            }
        }
        m.status = BundleStatus::Running;
        m.finished_at = None;
        writer.save_manifest()?;
        on_look(&look_rec);
        for &i in &open_points {
            if let Some(p) = plan.points.get_mut(i) {
                p.replicates = p.replicates.max(target);
            }
        }
        let work = prepare(opts)?;
        let mapped = approve_mappings(&plan, opts)?;
        run_points(&plan, opts, &work, &mut writer, &mapped)?;
    }
    Ok(Bundle::open(&dir)?)
}

/// Where a verdict stands for the stopping rule: decided, open (undecided, and more
/// replicates of its points could decide it), or closed.
fn state_of(v: &ClaimVerdict) -> ClaimState {
    if v.tier.decides() {
        return ClaimState::Decided;
    }
    if v.tier != Tier::Inconclusive {
        return ClaimState::Closed;
    }
    match &v.grounds {
        Some(Grounds::Decided(
            Decided::Interval(Side::Straddles)
            | Decided::TooFewReplicates { .. }
            | Decided::IterationsOnly { .. }
            | Decided::NoInterval(NoInterval::TooFewSamples { .. } | NoInterval::Unbounded),
        )) => ClaimState::Open,
        _ => ClaimState::Closed,
    }
}

/// The replicates a side that would decide an undecided verdict: the fewest a decisive
/// tier needs, or what the power analysis at `power` says at the spread seen.
fn would_decide_at(v: &ClaimVerdict, claim: &Claim, power: f64) -> Option<usize> {
    match &v.grounds {
        Some(Grounds::Decided(Decided::TooFewReplicates { need, .. }))
        | Some(Grounds::Decided(Decided::IterationsOnly { need })) => Some(*need),
        Some(Grounds::Decided(Decided::Interval(Side::Straddles))) => {
            let (value, interval, rep) = (v.measured?, v.interval?, v.replication?);
            let p = of_interval_at(
                value,
                &interval,
                rep.replicates,
                &expect_of(claim)?,
                false,
                None,
                power,
            )?;
            match p.needed {
                Needed::Replicates { per_side, .. } => Some(per_side),
                _ => None,
            }
        }
        Some(Grounds::Decided(Decided::NoInterval(NoInterval::TooFewSamples { .. }))) => {
            Some(DEFAULT_MIN_REPLICATES)
        }
        _ => None,
    }
}

fn ok_point(m: &Manifest, index: usize) -> bool {
    m.points
        .get(index)
        .is_some_and(|p| p.status == PointStatus::Ok)
}

/// Replicates that ended ok, per point.
fn replicate_counts(m: &Manifest) -> BTreeMap<usize, u32> {
    let mut out: BTreeMap<usize, u32> = BTreeMap::new();
    for e in m.run_order.iter().flat_map(|o| o.pairs.iter()) {
        if e.status == PointStatus::Ok {
            *out.entry(e.point_index).or_default() += 1;
        }
    }
    out
}

/// The most replicates a point may get under `budget`: the plan's, and as many more
/// rounds of every point that ran as fit in what is left at the mean replicate time.
/// None without a budget or a time.
fn budget_max(
    budget: Option<Duration>,
    elapsed: Duration,
    mean_s: Option<f64>,
    m: &Manifest,
    plan_reps: u32,
) -> Option<u32> {
    let (budget, each) = (budget?, mean_s?);
    let points = replicate_counts(m).len().max(1) as f64;
    let left = (budget.as_secs_f64() - elapsed.as_secs_f64()).max(0.0);
    let rounds = if each > 0.0 {
        (left / (each * points)).floor()
    } else {
        f64::from(DEFAULT_MAX_REPLICATES)
    };
    Some(plan_reps + rounds.min(1000.0) as u32)
}

/// What every verdict of the bundle states about how its replicates were added.
fn stated(r: &SequentialRecord) -> String {
    format!(
        "replicates were added in randomised blocks until each claim was decided (`fslab run --until-decided`): a group-sequential design with {}, overall α = {} over at most {} replicates a point, {} look(s); a claim decides at a look when its repeated confidence interval at that look's level lies on one side of `expect`{}",
        r.spending.label(),
        r.alpha,
        r.max_replicates,
        r.looks.len(),
        r.stopped.map(|s| format!("; stopped: {s}")).unwrap_or_default()
    )
}

fn save_record(dir: &std::path::Path, rec: &SequentialRecord) -> Result<(), RunError> {
    let mut w = BundleWriter::reopen(dir)?;
    w.manifest_mut().sequential = Some(rec.clone());
    w.save_manifest()?;
    Ok(())
}
