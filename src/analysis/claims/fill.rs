//! How full each filesystem of a bundle was after its workload: the share of inodes in
//! use per (point, replicate), from `dumpe2fs -h` in the `geometry` table
//! (`inode_count` − `free_inodes`, over `inode_count`).

use super::error::MeasureError;
use super::evidence::Evidence;
use super::select::table;
use super::units::replicate_keys;
use crate::analysis::{f64_values, str_values};
use std::collections::BTreeMap;

/// A point's id, its `inode_count` and its `free_inodes`, as far as printed.
type Counts = (String, Option<f64>, Option<f64>);

/// One filesystem's share of inodes in use.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct InodeFill {
    pub(super) point_id: String,
    pub(super) replicate: i64,
    pub(super) used: f64,
    pub(super) count: f64,
}

impl InodeFill {
    pub(super) fn share(&self) -> f64 {
        self.used / self.count
    }
}

/// The share of inodes in use of every (point, replicate) with both numbers; an error
/// when the bundle has none.
pub(super) fn inode_fill(ev: &Evidence) -> Result<Vec<InodeFill>, MeasureError> {
    let df = table(ev, "geometry").map_err(|e| {
        MeasureError::MissingData(format!(
            "{e}; capture `dumpe2fs -h {{{{dev.data}}}}` with `parse: dumpe2fs` after the workload"
        ))
    })?;
    let keys = replicate_keys(&df);
    let ids = str_values(&df, "fill", "point_id")?;
    let names = str_values(&df, "fill", "key")?;
    let numbers = f64_values(&df, "fill", "number")?;
    // (point, replicate) → (id, inode_count, free_inodes); the last row of each wins,
    // which is the latest capture when a point printed its geometry more than once.
    let mut seen: BTreeMap<(i64, i64), Counts> = BTreeMap::new();
    for i in 0..df.height() {
        let slot = seen
            .entry(keys[i])
            .or_insert_with(|| (ids[i].clone().unwrap_or_default(), None, None));
        match (names[i].as_deref(), numbers[i]) {
            (Some("inode_count"), Some(n)) => slot.1 = Some(n),
            (Some("free_inodes"), Some(n)) => slot.2 = Some(n),
            _ => {}
        }
    }
    let out: Vec<InodeFill> = seen
        .into_iter()
        .filter_map(|((_, replicate), (point_id, count, free))| {
            let (count, free) = (count?, free?);
            (count > 0.0 && free <= count).then_some(InodeFill {
                point_id,
                replicate,
                used: count - free,
                count,
            })
        })
        .collect();
    if out.is_empty() {
        return Err(MeasureError::MissingData(
            "the geometry table has no `inode_count` with `free_inodes` (dumpe2fs -h after the workload)".into(),
        ));
    }
    Ok(out)
}
