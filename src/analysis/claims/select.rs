//! Selecting rows: tables by name, conditions on columns, why a selection is empty.

use super::error::MeasureError;
use super::evidence::Evidence;
use super::words::num;
use crate::analysis::{f64_values, str_values};
use crate::spec::claim::{Cond, Selection};
use crate::spec::Value as SpecValue;
use crate::store::{PointStatus, RunStatus};
use indexmap::IndexMap;
use polars::prelude::{BooleanChunked, DataFrame};

pub(super) fn cond_label(c: &Cond) -> String {
    match c {
        Cond::Value(v) => v.label(),
        Cond::Range(r) => match (r.min, r.max) {
            (Some(a), Some(b)) => format!("{}..{}", num(a), num(b)),
            (Some(a), None) => format!("≥{}", num(a)),
            (None, Some(b)) => format!("≤{}", num(b)),
            (None, None) => "any".into(),
        },
    }
}

pub(super) fn sel_label(sel: &Selection) -> String {
    if sel.is_empty() {
        return "all rows".into();
    }
    sel.iter()
        .map(|(k, c)| format!("{k}={}", cond_label(c)))
        .collect::<Vec<_>>()
        .join(",")
}

pub(super) fn text_matches(cell: Option<&str>, cond: &Cond) -> bool {
    let Some(cell) = cell else { return false };
    match cond {
        Cond::Range(r) => cell
            .trim()
            .parse::<f64>()
            .is_ok_and(|x| r.min.is_none_or(|m| x >= m) && r.max.is_none_or(|m| x <= m)),
        Cond::Value(SpecValue::List(options)) => options
            .iter()
            .any(|o| text_matches(Some(cell), &Cond::Value(o.clone()))),
        Cond::Value(v) => {
            let want = v.label();
            if cell == want {
                return true;
            }
            matches!((cell.trim().parse::<f64>(), want.trim().parse::<f64>()), (Ok(a), Ok(b)) if a == b)
        }
    }
}

use crate::store::value_label as json_label;

/// The table with the manifest's matrix values added as columns (when missing) and, for
/// runs, only the `ok` rows.
pub(super) fn table(ev: &Evidence, name: &str) -> Result<DataFrame, MeasureError> {
    let df = ev.tables.get(name).ok_or_else(|| {
        let have: Vec<&str> = ev.tables.keys().map(String::as_str).collect();
        MeasureError::MissingData(format!(
            "the bundle has no `{name}` table (it has: {})",
            if have.is_empty() {
                "none".to_string()
            } else {
                have.join(", ")
            }
        ))
    })?;
    // The matrix values as columns, from the manifest (as `Bundle::table_with_axes`).
    let mut df = crate::store::with_axes(df.clone(), &ev.manifest)?;
    if name == "runs" {
        if let Ok(status) = str_values(&df, "runs", "status") {
            let mask: BooleanChunked = status
                .iter()
                .map(|s| Some(RunStatus::is_ok_str(s.as_deref())))
                .collect();
            df = df.filter(&mask)?;
        }
    }
    Ok(df)
}

pub(super) fn select(
    df: &DataFrame,
    sel: &Selection,
    what: &str,
) -> Result<DataFrame, MeasureError> {
    let mut mask = vec![true; df.height()];
    for (col, cond) in sel {
        let cells =
            str_values(df, "claims", col).map_err(|e| MeasureError::column(e, what, col))?;
        for (m, c) in mask.iter_mut().zip(cells.iter()) {
            *m = *m && text_matches(c.as_deref(), cond);
        }
    }
    let mask: BooleanChunked = mask.into_iter().map(Some).collect();
    Ok(df.filter(&mask)?)
}

/// Why a selection of a bundle table has no rows: the matching points were unsupported,
/// failed, absent from the plan, or simply produced no rows.
pub(super) fn explain_empty(ev: &Evidence, table: &str, sel: &Selection) -> MeasureError {
    let axes = &ev.manifest.matrix_axes;
    let points: Vec<_> = ev
        .manifest
        .points
        .iter()
        .filter(|p| {
            sel.iter()
                .filter(|(k, _)| axes.contains(k))
                .all(|(k, c)| text_matches(p.vars.get(k).map(json_label).as_deref(), c))
        })
        .collect();
    if points.is_empty() {
        return MeasureError::NotRun(format!(
            "no point of this bundle has {} (the profile or --set left it out)",
            sel_label(sel)
        ));
    }
    // Points with the same status and reason are named together.
    let mut groups: IndexMap<(PointStatus, Option<String>), Vec<&str>> = IndexMap::new();
    for p in points.iter().filter(|p| p.status != PointStatus::Ok) {
        groups
            .entry((p.status, p.reason.clone()))
            .or_default()
            .push(p.id.as_str());
    }
    let not_ok: Vec<String> = groups
        .iter()
        .map(|((status, reason), ids)| {
            let label = match status {
                PointStatus::Unsupported => "unsupported here".to_string(),
                other => other.to_string(),
            };
            format!(
                "{} {label}{}",
                ids.join(", "),
                reason
                    .as_ref()
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default()
            )
        })
        .collect();
    if !not_ok.is_empty() {
        let unsupported = points.iter().any(|p| p.status == PointStatus::Unsupported);
        let head = if unsupported {
            "unsupported here"
        } else {
            "no data"
        };
        return MeasureError::NotRun(format!("{head}: {}", not_ok.join("; ")));
    }
    MeasureError::MissingData(format!(
        "no rows of `{table}` match {} although the points ran",
        sel_label(sel)
    ))
}

/// The points a selection names (by their matrix values) that did not give it ok rows:
/// missing, failed, unsupported, or (e.g. iteration 1 failed) without a row it selects.
pub(super) fn incomplete_points(ev: &Evidence, table_name: &str, sel: &Selection) -> Vec<String> {
    let rows = table(ev, table_name).ok();
    let mut out = Vec::new();
    for p in &ev.manifest.points {
        let named = sel.iter().all(|(k, cond)| match p.vars.get(k) {
            Some(v) => text_matches(Some(&json_label(v)), cond),
            None => true,
        });
        if !named {
            continue;
        }
        if p.status != PointStatus::Ok {
            let why = p
                .reason
                .as_deref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default();
            out.push(format!("point {} is {}{why}", p.id, p.status));
            continue;
        }
        let mut own = sel.clone();
        own.insert(
            "point_index".into(),
            Cond::Value(SpecValue::Int(p.index as i64)),
        );
        let has_rows = rows
            .as_ref()
            .and_then(|df| select(df, &own, table_name).ok())
            .is_some_and(|df| df.height() > 0);
        if !has_rows {
            out.push(format!(
                "point {} has no ok rows for {}",
                p.id,
                sel_label(sel)
            ));
        }
    }
    out
}

/// The rows of a bundle table that a selection names (maybe none).
pub(super) fn selected_rows(
    ev: &Evidence,
    table_name: &str,
    sel: &Selection,
) -> Result<DataFrame, MeasureError> {
    let df = table(ev, table_name)?;
    select(&df, sel, &format!("the `{table_name}` table"))
}

/// Published values in seconds when the dataset says their time unit.
pub(super) fn published_values(df: &DataFrame, metric: &str) -> Result<Vec<f64>, MeasureError> {
    let v = f64_values(df, "published", metric)?;
    let units = str_values(df, "published", "unit").ok();
    let mut out = Vec::new();
    for (i, x) in v.iter().enumerate() {
        let Some(x) = x else { continue };
        let factor = match units.as_ref().and_then(|u| u[i].as_deref()) {
            Some("ms") => 0.001,
            Some("min") => 60.0,
            Some("h") => 3600.0,
            _ => 1.0,
        };
        out.push(x * factor);
    }
    Ok(out)
}

pub(super) fn published_selected(
    ev: &Evidence,
    dataset: &str,
    metric: &str,
    sel: &Selection,
) -> Result<Vec<f64>, MeasureError> {
    let df = (ev.published)(dataset)?;
    let rows = select(&df, sel, &format!("published dataset {dataset}"))?;
    let v = published_values(&rows, metric)?;
    if v.is_empty() {
        return Err(MeasureError::NoNumber(format!(
            "published dataset {dataset} has no rows with {}",
            sel_label(sel)
        )));
    }
    Ok(v)
}
