//! `needs: { attr_forks: … }`: whether XFS attributes spilled out of the inodes, counted
//! per selected point and replicate in the `fsmap` table (distinct inodes that own an
//! `attr` fork extent).
//!
//! A capture is a picture of one moment: after the workload's last run, unless its rows
//! carry an iteration. A count taken after run 10 says nothing about the state during
//! run 1 (later runs add and remove files), so a claim that reads only earlier runs gets
//! "not shown", with the moment the count is from, never "present" or "absent".

use super::error::MeasureError;
use super::evidence::Evidence;
use super::select::{sel_label, select, table};
use super::units::replicate_keys;
use crate::analysis::{i64_values, str_values};
use crate::spec::claim::{AttrForks, Cond, Selection};
use crate::spec::Value as SpecValue;
use polars::prelude::DataFrame;
use std::collections::{BTreeMap, BTreeSet};

/// Per (point, replicate): the point's id and its inodes with an attr fork extent.
type Counts = BTreeMap<(i64, i64), (String, u64)>;

/// Per (point, replicate): the run after which its capture was taken (None: unknown).
type Moments = BTreeMap<(i64, i64), Option<i64>>;

/// What the `fsmap` capture shows about a claim's attr-fork need.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Spill {
    Present,
    /// Not met, with the counts.
    Absent(String),
    /// The counts are from another moment than the runs the claim reads.
    Unshown(String),
}

/// The last run (iteration) a claim's selections read; None when one of them reads to
/// the workload's last run (no `iteration` condition, or no upper bound).
fn last_read(reads: &[(&str, &Selection)]) -> Option<i64> {
    let mut last = Some(0);
    for (_, sel) in reads {
        let this = match sel.get("iteration") {
            Some(Cond::Value(v)) => highest(v),
            Some(Cond::Range(r)) => r.max,
            None => None,
        };
        last = match (last, this) {
            (Some(a), Some(b)) => Some(a.max(b.floor() as i64)),
            _ => None,
        };
    }
    last.filter(|l| *l > 0)
}

/// The highest run an `iteration:` value names (`1`, `[1, 2]`); None when it names none.
fn highest(v: &SpecValue) -> Option<f64> {
    match v {
        SpecValue::Int(i) => Some(*i as f64),
        SpecValue::Float(f) => Some(*f),
        SpecValue::Str(t) => t.trim().parse().ok(),
        SpecValue::List(items) => items
            .iter()
            .map(highest)
            .collect::<Option<Vec<f64>>>()?
            .into_iter()
            .reduce(f64::max),
        SpecValue::Bool(_) => None,
    }
}

/// Per (point, replicate): the run after which its `fsmap` was captured (the rows' own
/// iteration, else the last run of that replicate in `runs`); None when unknown.
fn captured_after(ev: &Evidence, fsmap: &DataFrame) -> Moments {
    let keys = replicate_keys(fsmap);
    let own = i64_values(fsmap, "needs", "iteration").unwrap_or_else(|_| vec![None; keys.len()]);
    let mut last_run: BTreeMap<(i64, i64), i64> = BTreeMap::new();
    // Every run that ran before the capture, failed ones too (`table` keeps only ok).
    if let Some(runs) = ev.tables.get("runs") {
        let rk = replicate_keys(runs);
        if let Ok(its) = i64_values(runs, "needs", "iteration") {
            for (k, it) in rk.into_iter().zip(its) {
                if let Some(it) = it {
                    let e = last_run.entry(k).or_insert(it);
                    *e = (*e).max(it);
                }
            }
        }
    }
    let mut out = Moments::new();
    for (k, it) in keys.into_iter().zip(own) {
        let at = it.or_else(|| last_run.get(&k).copied());
        let e = out.entry(k).or_insert(at);
        *e = match (*e, at) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
    }
    out
}

/// Inodes with an attr fork extent per (point, replicate) of the selection, and the run
/// after which each was captured.
fn counts(ev: &Evidence, need: &AttrForks) -> Result<(Counts, Moments), MeasureError> {
    let df = table(ev, "fsmap").map_err(|e| {
        MeasureError::MissingData(format!(
            "{e}; capture `xfs_io -c fsmap {{{{mnt}}}}` with `parse: xfs_io-fsmap` after the workload"
        ))
    })?;
    let df = select(&df, &need.select, "needs: attr_forks")?;
    if df.height() == 0 {
        return Err(MeasureError::MissingData(format!(
            "the fsmap table has no rows for {}",
            sel_label(&need.select)
        )));
    }
    let when = captured_after(ev, &df);
    let keys = replicate_keys(&df);
    let ids = str_values(&df, "needs", "point_id")?;
    let forks = str_values(&df, "needs", "fork")?;
    // The column's type depends on its first rows (null for special owners): read text.
    let inodes = str_values(&df, "needs", "inode")?;
    let mut seen: BTreeMap<(i64, i64), (String, BTreeSet<u64>)> = BTreeMap::new();
    for i in 0..df.height() {
        let slot = seen
            .entry(keys[i])
            .or_insert_with(|| (ids[i].clone().unwrap_or_default(), BTreeSet::new()));
        if forks[i].as_deref() == Some("attr") {
            if let Some(ino) = inodes[i].as_deref().and_then(|v| v.parse::<u64>().ok()) {
                slot.1.insert(ino);
            }
        }
    }
    let counts = seen
        .into_iter()
        .map(|(k, (id, s))| (k, (id, s.len() as u64)))
        .collect();
    Ok((counts, when))
}

/// The counts as the reason gives them: `102 (parent=1,link=1) in each of 8 replicates`
/// when every replicate of one point has the same, else one `N (point)` a replicate.
fn listed<'a>(counts: impl Iterator<Item = &'a (String, u64)>) -> String {
    let all: Vec<&(String, u64)> = counts.collect();
    match all.first() {
        Some(first) if all.len() > 1 && all.iter().all(|c| c == first) => {
            format!(
                "{} ({}) in each of {} replicates",
                first.1,
                first.0,
                all.len()
            )
        }
        _ => all
            .iter()
            .map(|(id, n)| format!("{n} ({id})"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Whether the attr-fork need is met during the runs the claim reads (`reads`: its
/// check's selections), with the counts; an error when the bundle cannot show it.
pub(super) fn found(
    ev: &Evidence,
    need: &AttrForks,
    reads: &[(&str, &Selection)],
) -> Result<Spill, MeasureError> {
    let (counts, when) = counts(ev, need)?;
    let listed = listed(counts.values());
    if let Some(last) = last_read(reads) {
        let after: BTreeSet<Option<i64>> = counts
            .keys()
            .map(|k| when.get(k).copied().flatten())
            .collect();
        let moment =
            |a: &Option<i64>| a.map_or("an unknown run".to_string(), |r| format!("run {r}"));
        if after.iter().any(|a| a.is_none_or(|r| r > last)) {
            let moments = after.iter().map(moment).collect::<Vec<_>>().join(", ");
            let reads = if last == 1 {
                "run 1".to_string()
            } else {
                format!("runs up to {last}")
            };
            return Ok(Spill::Unshown(format!(
                "the inodes with an attr fork extent were counted after {moments} of each replicate (fsmap: {listed}), and the claim reads {reads}: later runs add and remove files, so the count during the runs it reads is not in the bundle (capture it after run {last}, e.g. with `--set runs={last}`)"
            )));
        }
    }
    let fewest = counts.values().map(|(_, n)| *n).min().unwrap_or(0);
    let most = counts.values().map(|(_, n)| *n).max().unwrap_or(0);
    let mut why = Vec::new();
    if let Some(min) = need.min_inodes.filter(|m| fewest < *m) {
        why.push(format!(
            "the claim rests on attributes spilled out of the inode (at least {min} inodes with an attr fork extent), and {} has as few as {fewest}",
            sel_label(&need.select)
        ));
    }
    if let Some(max) = need.max_inodes.filter(|m| most > *m) {
        why.push(format!(
            "the claim rests on attributes kept in the inode (at most {max} inodes with an attr fork extent), and {} has {most}",
            sel_label(&need.select)
        ));
    }
    Ok(if why.is_empty() {
        Spill::Present
    } else {
        Spill::Absent(format!(
            "{}; inodes with an attr fork extent per replicate (fsmap): {listed}",
            why.join("; ")
        ))
    })
}
