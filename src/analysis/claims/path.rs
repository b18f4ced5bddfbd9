//! `needs: { truncate_path: … }`: which path the kernel took to truncate inside an
//! allocation unit, read per (point, replicate) from the `truncate_path` table (`fslab
//! files path` parsed as `truncate-path`) at the points the claim's check selects.

use super::error::MeasureError;
use super::evidence::Evidence;
use super::select::{sel_label, select, table};
use crate::analysis::str_values;
use crate::spec::claim::{Selection, TruncatePathNeed, TruncatePathNeeds};
use indexmap::IndexMap;

/// What the selected points took, per point: its paths (with how many replicates each)
/// and the first reason and evidence seen for each path.
#[derive(Debug, Default)]
struct Taken {
    paths: IndexMap<String, (usize, String, String)>,
}

/// What the selected points show about the claim's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum PathFound {
    /// Every selected point and replicate took it (the words say so, with the count).
    Taken(String),
    /// Some took another (the words name it, with the evidence).
    Other(String),
}

/// Whether every selected point and replicate took the claim's path; an error when the
/// bundle cannot show it (no table, no row for a selection, or a path the map could not
/// tell).
pub(super) fn found(
    ev: &Evidence,
    want: TruncatePathNeed,
    selections: &[&Selection],
) -> Result<PathFound, MeasureError> {
    let df = table(ev, "truncate_path").map_err(|e| {
        MeasureError::MissingData(format!(
            "{e}; capture `{{{{fslab}}}} files path {{{{mnt}}}} …` with `parse: truncate-path` after the workload"
        ))
    })?;
    let columns: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|c| c.to_string())
        .collect();
    let mut by_point: IndexMap<String, Taken> = IndexMap::new();
    for sel in selections {
        // Only the conditions on the table's columns (the matrix axes): `iteration` and
        // the like are the runs table's.
        let on_points: Selection = sel
            .iter()
            .filter(|(k, _)| columns.contains(k))
            .map(|(k, c)| (k.clone(), c.clone()))
            .collect();
        let rows = select(&df, &on_points, "the `truncate_path` table")?;
        if rows.height() == 0 {
            return Err(MeasureError::MissingData(format!(
                "the truncate_path table has no rows for {}",
                sel_label(&on_points)
            )));
        }
        let ids = str_values(&rows, "needs", "point_id")?;
        let paths = str_values(&rows, "needs", "truncate_path")?;
        let reasons = str_values(&rows, "needs", "reason")?;
        let evidence = str_values(&rows, "needs", "evidence")?;
        for i in 0..rows.height() {
            let id = ids[i].clone().unwrap_or_default();
            let path = paths[i].clone().unwrap_or_else(|| "unknown".into());
            let slot = by_point
                .entry(id)
                .or_default()
                .paths
                .entry(path)
                .or_insert((
                    0,
                    reasons[i].clone().unwrap_or_default(),
                    evidence[i].clone().unwrap_or_default(),
                ));
            slot.0 += 1;
        }
    }
    let mut other = Vec::new();
    let mut unknown = Vec::new();
    let mut replicates = 0usize;
    for (id, taken) in &by_point {
        for (path, (n, reason, evidence)) in &taken.paths {
            if path == want.name() {
                replicates += n;
                continue;
            }
            let said = format!(
                "{id} took `{path}` ({n} replicate{}: {reason}{})",
                if *n == 1 { "" } else { "s" },
                if evidence.is_empty() {
                    String::new()
                } else {
                    format!("; evidence: {evidence}")
                }
            );
            if path == "unknown" {
                unknown.push(said);
            } else {
                other.push(said);
            }
        }
    }
    if !other.is_empty() {
        other.extend(unknown);
        return Ok(PathFound::Other(format!(
            "the claim is about the `{}` truncate path, and {}",
            want.name(),
            other.join("; ")
        )));
    }
    if !unknown.is_empty() {
        return Err(MeasureError::MissingData(format!(
            "the claim is about the `{}` truncate path, and the map cannot tell which path ran: {}",
            want.name(),
            unknown.join("; ")
        )));
    }
    Ok(PathFound::Taken(format!(
        "truncate path `{}` at every selected point ({} point{}, {replicates} replicate{}; the truncate_path table)",
        want.name(),
        by_point.len(),
        if by_point.len() == 1 { "" } else { "s" },
        if replicates == 1 { "" } else { "s" }
    )))
}

/// [`found`] for each path the claim needs, on the sides of its check that need it (one
/// path for every side, or one per side of a ratio that compares two paths), in the
/// check's order of sides.
pub(super) fn found_per_side(
    ev: &Evidence,
    needs: TruncatePathNeeds,
    sides: &[(&'static str, &Selection)],
) -> Vec<Result<PathFound, MeasureError>> {
    let mut by_path: IndexMap<&'static str, (TruncatePathNeed, Vec<&Selection>)> = IndexMap::new();
    for (side, sel) in sides {
        if let Some(want) = needs.for_side(side) {
            by_path
                .entry(want.name())
                .or_insert_with(|| (want, Vec::new()))
                .1
                .push(sel);
        }
    }
    by_path
        .into_values()
        .map(|(want, sels)| found(ev, want, &sels))
        .collect()
}
