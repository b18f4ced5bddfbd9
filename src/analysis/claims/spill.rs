//! `needs: { attr_forks: … }`: whether XFS attributes spilled out of the inodes, counted
//! per selected point and replicate in the `fsmap` table (distinct inodes that own an
//! `attr` fork extent).

use super::error::MeasureError;
use super::evidence::Evidence;
use super::select::{sel_label, select, table};
use super::units::replicate_keys;
use crate::analysis::str_values;
use crate::spec::claim::AttrForks;
use std::collections::{BTreeMap, BTreeSet};

/// Per (point, replicate): the point's id and its inodes with an attr fork extent.
type Counts = BTreeMap<(i64, i64), (String, u64)>;

/// Inodes with an attr fork extent per (point, replicate) of the selection.
fn counts(ev: &Evidence, need: &AttrForks) -> Result<Counts, MeasureError> {
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
    Ok(seen
        .into_iter()
        .map(|(k, (id, s))| (k, (id, s.len() as u64)))
        .collect())
}

/// Why the attr-fork need is not met (None when it is), with the counts; an error when
/// the bundle cannot show it either way.
pub(super) fn absent(ev: &Evidence, need: &AttrForks) -> Result<Option<String>, MeasureError> {
    let counts = counts(ev, need)?;
    let listed = counts
        .values()
        .map(|(id, n)| format!("{n} ({id})"))
        .collect::<Vec<_>>()
        .join(", ");
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
    Ok((!why.is_empty()).then(|| {
        format!(
            "{}; inodes with an attr fork extent per replicate (fsmap): {listed}",
            why.join("; ")
        )
    }))
}
