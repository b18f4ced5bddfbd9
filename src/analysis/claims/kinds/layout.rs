//! `kind: layout`: per point, the largest file's discontiguity (the share of its
//! consecutive block pairs that are not physically adjacent); the point furthest from
//! `expect` decides.

use super::{ClaimKind, Stated};
use crate::analysis::claims::error::MeasureError;
use crate::analysis::claims::evidence::{Evidence, Measure};
use crate::analysis::claims::measure::values_opt;
use crate::analysis::claims::select::{explain_empty, incomplete_points, sel_label, select, table};
use crate::analysis::claims::units::{Replication, SampleUnit};
use crate::analysis::claims::words::num;
use crate::analysis::interval::NoInterval;
use crate::analysis::str_values;
use crate::blockmap::summary::file_summary;
use crate::extent::Extent;
use crate::spec::claim::{Check, Expect, LayoutCheck, PublishedLayout, Selection};
use std::collections::BTreeMap;

impl ClaimKind for LayoutCheck {
    fn stated(&self) -> Stated<'_> {
        Stated {
            expect: &self.expect,
            at_scale: &self.at_scale,
            unit: "discontiguous block pairs / block pairs",
            note: self.note.as_deref(),
        }
    }

    fn measure(&self, ev: &Evidence) -> Result<Measure, MeasureError> {
        measure_layout(self, ev)
    }

    fn published(&self, ev: &Evidence) -> Option<Result<f64, MeasureError>> {
        self.published
            .as_ref()
            .map(|p| published_layout(p, &self.expect, ev))
    }

    fn with_select(&self, sel: Selection) -> Option<Check> {
        let mut c = self.clone();
        c.select = sel;
        Some(Check::Layout(c))
    }
}

/// One block run of a file: logical start, physical start, length (all in blocks).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Run {
    pub logical: f64,
    pub physical: f64,
    pub length: f64,
}

/// Blocks, the share of consecutive block pairs (in logical order) that are not
/// physically adjacent, and the contiguous pieces, over one listing. Several segments
/// (a listing with its middle left out) are measured each on its own and summed.
///
/// The pieces are blockmap's fragments ([`file_summary`], filefrag's rule) of the runs
/// taken as extents in block units; each fragment boundary is one discontiguous pair
/// among the `blocks - 1` pairs of a segment.
pub fn discontiguity(segments: &[Vec<Run>]) -> Option<(f64, f64, usize)> {
    let mut pairs = 0.0;
    let mut breaks = 0.0;
    let mut blocks = 0.0;
    let mut fragments = 0usize;
    for seg in segments {
        if seg.is_empty() {
            continue;
        }
        let rows: Vec<Extent> = seg
            .iter()
            .enumerate()
            .map(|(i, r)| Extent {
                index: i as u64,
                logical_bytes: r.logical.round() as u64,
                physical_bytes: Some(r.physical.round() as u64),
                length_bytes: r.length.round() as u64,
                ..Extent::default()
            })
            .collect();
        let refs: Vec<&Extent> = rows.iter().collect();
        let summary = file_summary("", &refs);
        let n: f64 = seg.iter().map(|r| r.length).sum();
        blocks += n;
        pairs += n - 1.0;
        fragments += summary.fragments as usize;
        breaks += summary.fragments.saturating_sub(1) as f64;
    }
    (pairs > 0.0).then(|| (breaks / pairs, blocks, fragments))
}

fn measure_layout(c: &LayoutCheck, ev: &Evidence) -> Result<Measure, MeasureError> {
    let df = table(ev, &c.table)?;
    let rows = select(&df, &c.select, &format!("the `{}` table", c.table))?;
    if rows.height() == 0 {
        return Err(explain_empty(ev, &c.table, &c.select));
    }
    let what = format!("the `{}` table", c.table);
    let pidx = values_opt(&rows, "point_index", &what)?;
    let pid = str_values(&rows, "claims", "point_id")?;
    let capture =
        str_values(&rows, "claims", "capture").unwrap_or_else(|_| vec![None; rows.height()]);
    let inode = str_values(&rows, "claims", "inode").unwrap_or_else(|_| vec![None; rows.height()]);
    let path = str_values(&rows, "claims", "path").unwrap_or_else(|_| vec![None; rows.height()]);
    let flags = str_values(&rows, "claims", "flags").unwrap_or_else(|_| vec![None; rows.height()]);
    let logical = values_opt(&rows, "logical_bytes", &what)?;
    let physical = values_opt(&rows, "physical_bytes", &what)?;
    let length = values_opt(&rows, "length_bytes", &what)?;
    let bs = c.block_bytes.max(1) as f64;
    // point → file → runs
    let mut files: BTreeMap<(i64, String), BTreeMap<String, Vec<Run>>> = BTreeMap::new();
    for r in 0..rows.height() {
        if flags[r]
            .as_deref()
            .is_some_and(|f| f.split(',').any(|x| x.trim() == "metadata"))
        {
            continue;
        }
        let (Some(l), Some(p), Some(n)) = (logical[r], physical[r], length[r]) else {
            continue;
        };
        let point = (
            pidx[r].unwrap_or(-1.0) as i64,
            pid[r].clone().unwrap_or_default(),
        );
        let file = format!(
            "{}:{}:{}",
            capture[r].clone().unwrap_or_default(),
            inode[r].clone().unwrap_or_default(),
            path[r].clone().unwrap_or_default()
        );
        files
            .entry(point)
            .or_default()
            .entry(file)
            .or_default()
            .push(Run {
                logical: l / bs,
                physical: p / bs,
                length: n / bs,
            });
    }
    if files.is_empty() {
        return Err(MeasureError::MissingData(
            "no data extents in the selection".into(),
        ));
    }
    let mut vals = Vec::new();
    let mut details = Vec::new();
    let mut too_small = Vec::new();
    for ((_, id), fs) in &files {
        let Some((name, runs)) = fs.iter().max_by(|a, b| {
            let sa: f64 = a.1.iter().map(|r| r.length).sum();
            let sb: f64 = b.1.iter().map(|r| r.length).sum();
            sa.total_cmp(&sb)
        }) else {
            continue;
        };
        let blocks: f64 = runs.iter().map(|r| r.length).sum();
        let label = name
            .split(':')
            .nth(2)
            .filter(|s| !s.is_empty())
            .map_or_else(
                || format!("inode {}", name.split(':').nth(1).unwrap_or("?")),
                str::to_string,
            );
        if blocks < c.min_blocks as f64 || blocks < 2.0 {
            too_small.push(format!(
                "{id}: largest file ({label}) has {} blocks",
                num(blocks)
            ));
            continue;
        }
        if let Some((d, b, frags)) = discontiguity(std::slice::from_ref(runs)) {
            vals.push(d);
            details.push(format!(
                "{id}: largest file {label}: {} blocks in {frags} contiguous runs, discontiguity {}",
                num(b),
                num(d)
            ));
        }
    }
    if vals.is_empty() {
        return Err(MeasureError::NoNumber(format!(
            "the files are too small to show a layout (need ≥ {} blocks): {}",
            c.min_blocks.max(2),
            too_small.join("; ")
        )));
    }
    details.extend(too_small);
    let value = c
        .expect
        .decisive(&vals)
        .ok_or_else(|| MeasureError::NoNumber("no finite values".into()))?;
    // The block map is read once per point: no samples to resample. The number decides
    // by itself, and the verdict says that it has no interval and why.
    Ok(Measure {
        value,
        details,
        interval: Err(NoInterval::DeterministicLayout),
        replication: Replication {
            unit: SampleUnit::Reading,
            replicates: (1, 1),
            samples: (1, 1),
        },
        min_replicates: 1,
        recipe: format!(
            "`{}` rows {} without `metadata` extents; per point the largest file by blocks ({} bytes a block); its discontiguous block pairs ÷ its block pairs (filefrag's fragment rule); the point furthest from `expect` decides",
            c.table,
            sel_label(&c.select),
            c.block_bytes
        ),
        incomplete: incomplete_points(ev, &c.table, &c.select),
    })
}

fn published_layout(
    p: &PublishedLayout,
    expect: &Expect,
    ev: &Evidence,
) -> Result<f64, MeasureError> {
    let df = (ev.published)(&p.dataset)?;
    let rows = select(&df, &p.select, &format!("published dataset {}", p.dataset))?;
    let what = format!("published dataset {}", p.dataset);
    let column = |source| MeasureError::Column {
        what: what.clone(),
        source,
    };
    let kind = str_values(&rows, "claims", "kind").map_err(column)?;
    let seg = str_values(&rows, "claims", "segment").map_err(column)?;
    let fs = str_values(&rows, "claims", "fs").unwrap_or_else(|_| vec![None; rows.height()]);
    let l = values_opt(&rows, "logical_start", &what)?;
    let ph = values_opt(&rows, "physical_start", &what)?;
    let n = values_opt(&rows, "length", &what)?;
    let mut by_fs: BTreeMap<String, BTreeMap<String, Vec<Run>>> = BTreeMap::new();
    for r in 0..rows.height() {
        if kind[r].as_deref() != Some("data") {
            continue;
        }
        let (Some(l), Some(p), Some(n)) = (l[r], ph[r], n[r]) else {
            continue;
        };
        by_fs
            .entry(fs[r].clone().unwrap_or_default())
            .or_default()
            .entry(seg[r].clone().unwrap_or_default())
            .or_default()
            .push(Run {
                logical: l,
                physical: p,
                length: n,
            });
    }
    let vals: Vec<f64> = by_fs
        .values()
        .filter_map(|segs| {
            let v: Vec<Vec<Run>> = segs.values().cloned().collect();
            discontiguity(&v).map(|d| d.0)
        })
        .collect();
    expect
        .decisive(&vals)
        .ok_or_else(|| MeasureError::NoNumber("no published block listing in the selection".into()))
}
