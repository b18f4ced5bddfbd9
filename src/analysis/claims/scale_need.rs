//! The scale one claim is judged at in one bundle: every numeric variable of the
//! published profile (raised by the claim's `at_scale`), less the workload's run count
//! for a claim that reads only first runs, with the experiment's derived totals
//! (`scale: totals:`) compared in place of their factors, and its measured fill
//! (`scale: fill:`) against the post's.

use super::evidence::{published_vars, repeat_var, Evidence};
use super::fill::inode_fill;
use super::words::num;
use crate::spec::claim::Check;
use crate::spec::Value as SpecValue;
use indexmap::IndexMap;

/// A measured share counts as the post's when it is at least this part of it.
const FILL_TOLERANCE: f64 = 0.95;

/// What a claim's scale is compared on, in one bundle.
pub(super) struct ScaleNeed {
    /// Name → (the published value, its label).
    pub(super) required: IndexMap<String, (f64, String)>,
    /// The bundle's values of the same names (its vars and its derived totals).
    pub(super) here: IndexMap<String, SpecValue>,
    /// Said beside the scale: what was not compared and why, the fill as measured.
    pub(super) notes: Vec<String>,
    /// Gaps that are not a variable's (a fill below the post's, or unknown).
    pub(super) measured_gaps: Vec<String>,
}

impl ScaleNeed {
    /// Why the bundle is below the claim's scale (None when it is not).
    pub(super) fn gap(&self) -> Option<String> {
        let mut gaps: Vec<String> = scale_gap(&self.required, &self.here).into_iter().collect();
        gaps.extend(self.measured_gaps.iter().cloned());
        (!gaps.is_empty()).then(|| gaps.join(", "))
    }
}

/// The scale `check` needs in `ev`.
pub(super) fn scale_needed(
    check: &Check,
    at_scale: &IndexMap<String, f64>,
    ev: &Evidence,
) -> ScaleNeed {
    let mut need = ScaleNeed {
        required: scale_required(at_scale, published_vars(&ev.manifest).as_ref()),
        here: ev.vars.clone(),
        notes: Vec::new(),
        measured_gaps: Vec::new(),
    };
    if check.first_iteration_only() {
        if let Some(var) = repeat_var(&ev.manifest).filter(|v| !at_scale.contains_key(v)) {
            if let Some((_, label)) = need.required.shift_remove(&var) {
                need.notes.push(format!(
                    "`{var}` ({label} published) is not compared: the claim reads only the first run of each filesystem, which ends before the second starts"
                ));
            }
        }
    }
    let Some(spec) = &ev.scale else {
        return need;
    };
    for (name, factors) in &spec.totals {
        totals(&mut need, name, factors);
    }
    if let Some(fill) = &spec.fill {
        match inode_fill(ev) {
            Ok(fills) => {
                let shares: Vec<f64> = fills.iter().map(|f| f.share()).collect();
                let lo = shares.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = shares.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let here = if (hi - lo) * 100.0 < 0.05 {
                    format!("{} %", num(lo * 100.0))
                } else {
                    format!("{}–{} %", num(lo * 100.0), num(hi * 100.0))
                };
                let text = format!(
                    "inodes in use {here} here (`geometry` of dumpe2fs -h after the workload, {} filesystems), {} % published ({})",
                    fills.len(),
                    num(fill.inodes * 100.0),
                    fill.basis
                );
                if lo >= fill.inodes * FILL_TOLERANCE {
                    need.notes.push(text);
                } else {
                    need.measured_gaps.push(text);
                }
            }
            Err(e) => need.measured_gaps.push(format!(
                "cannot tell the fill of this bundle ({} % of inodes in use published, {}): {e}",
                num(fill.inodes * 100.0),
                fill.basis
            )),
        }
    }
    need
}

/// Compare the product of `factors` as `name` instead of each factor, when the published
/// profile has all of them.
fn totals(need: &mut ScaleNeed, name: &str, factors: &[String]) {
    let published: Option<Vec<f64>> = factors
        .iter()
        .map(|f| need.required.get(f).map(|(v, _)| *v))
        .collect();
    let Some(published) = published else {
        return;
    };
    for f in factors {
        need.required.shift_remove(f);
    }
    let product: f64 = published.iter().product();
    need.required.insert(
        name.to_string(),
        (
            product,
            format!("{} ({})", num(product), factors.join(" × ")),
        ),
    );
    let here: Option<f64> = factors
        .iter()
        .map(|f| need.here.get(f).and_then(scalar))
        .collect::<Option<Vec<f64>>>()
        .map(|v| v.iter().product());
    match here {
        Some(h) => {
            need.here.insert(name.to_string(), SpecValue::Float(h));
        }
        None => {
            need.here.shift_remove(name);
        }
    }
}

/// The scale a claim needs: every numeric variable of the published profile (a claim
/// below the post's scale is not checked at the post's scale), raised where the claim's
/// own `at_scale` asks for more. An `at_scale` can never lower it.
pub(super) fn scale_required(
    at_scale: &IndexMap<String, f64>,
    published: Option<&IndexMap<String, SpecValue>>,
) -> IndexMap<String, (f64, String)> {
    let mut out: IndexMap<String, (f64, String)> = IndexMap::new();
    for (k, v) in published.into_iter().flatten() {
        if let Some(x) = scalar(v) {
            out.insert(k.clone(), (x, v.label()));
        }
    }
    for (k, want) in at_scale {
        let slot = out.entry(k.clone()).or_insert((*want, num(*want)));
        if *want > slot.0 {
            *slot = (*want, num(*want));
        }
    }
    out
}

/// A variable's value as a number: integers, floats, and sizes (`8GiB`, `1TB`).
pub(super) fn scalar(v: &SpecValue) -> Option<f64> {
    match v {
        SpecValue::Int(i) => Some(*i as f64),
        SpecValue::Float(f) => Some(*f),
        SpecValue::Str(s) => s
            .trim()
            .parse::<f64>()
            .ok()
            .or_else(|| crate::spec::parse_size(s).ok().map(|b| b as f64)),
        _ => None,
    }
}

/// Why the bundle is below the scale a claim needs (None when it is not).
pub(super) fn scale_gap(
    required: &IndexMap<String, (f64, String)>,
    vars: &IndexMap<String, SpecValue>,
) -> Option<String> {
    let mut gaps = Vec::new();
    for (k, (want, label)) in required {
        let Some(here) = vars.get(k) else {
            gaps.push(format!(
                "cannot tell `{k}` of this bundle ({label} published)"
            ));
            continue;
        };
        match scalar(here) {
            Some(h) if h >= *want => {}
            Some(_) => gaps.push(format!("{k}={} here, {label} published", here.label())),
            None => gaps.push(format!(
                "cannot read `{k}`={} of this bundle as a number ({label} published)",
                here.label()
            )),
        }
    }
    (!gaps.is_empty()).then(|| gaps.join(", "))
}
