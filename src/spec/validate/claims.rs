//! `claims:`: unique ids, and every `check:` reads as a check (else an error at the
//! offending key, with what would be right).

use super::Locator;
use crate::spec::claim::{
    parse_check, Check, Cond, ScaleSpec, Selection, TruncatePathNeeds, KERNEL_AXIS as KERNEL,
};
use crate::spec::{Claim, ExperimentDef, SpecError, Value as SpecValue};
use indexmap::IndexMap;
use std::ops::Range;

/// Every claim's `check:` reads as a check, and claim ids are unique: else an error at
/// the offending key (or the `check:` of the claim), with what would be right.
pub(super) fn check_claims(def: &ExperimentDef, loc: &Locator<'_>) -> Result<(), SpecError> {
    if let Some(sc) = &def.scale_check {
        if !def.vars.contains_key(&sc.var) {
            let pos = loc
                .section("scale_check")
                .and_then(|r| loc.value_in(r, "var"))
                .unwrap_or((0, 0));
            let mut e = loc.at_pos(
                pos,
                format!(
                    "`scale_check: var: {}` is not a var of the experiment",
                    sc.var
                ),
            );
            e.help = Some(format!(
                "name one of `vars:` whose value is a scale of the workload: {}",
                var_names(def)
            ));
            return Err(e);
        }
    }
    if let Some(sc) = &def.scale {
        check_scale(def, sc, loc)?;
    }
    for var in def.post_reading.iter().flat_map(|r| r.keys()) {
        if !def.vars.contains_key(var) {
            let pos = loc
                .section("post_reading")
                .map(|r| {
                    loc.value_in(r.clone(), var)
                        .unwrap_or_else(|| loc.start_of(&r))
                })
                .unwrap_or((0, 0));
            let mut e = loc.at_pos(
                pos,
                format!("`post_reading: {var}` is not a var of the experiment"),
            );
            e.help = Some(format!(
                "name the `vars:` whose values make the workload run as the post's tools ran it: {}",
                var_names(def)
            ));
            return Err(e);
        }
    }
    let section = loc.section("claims");
    let mut seen: IndexMap<&str, usize> = IndexMap::new();
    for (i, claim) in def.claims.iter().enumerate() {
        let item = section.clone().and_then(|r| loc.item(r, i));
        let at_start = || {
            item.as_ref()
                .map(|r| loc.start_of(r))
                .or_else(|| section.as_ref().map(|r| loc.start_of(r)))
                .unwrap_or((0, 0))
        };
        if let Some(first) = seen.insert(claim.id.as_str(), i) {
            let pos = item
                .clone()
                .and_then(|r| loc.value_in(r, "id"))
                .unwrap_or_else(at_start);
            let mut e = loc.at_pos(pos, format!("claim id `{}` is used twice", claim.id));
            e.help = Some(format!(
                "claim {} already has it; each claim needs its own id (verdicts are keyed by it)",
                first + 1
            ));
            return Err(e);
        }
        if let Some(a) = claim.needs.as_ref().and_then(|n| n.attr_forks.as_ref()) {
            if a.min_inodes.is_none() && a.max_inodes.is_none() {
                let pos = item
                    .clone()
                    .and_then(|r| loc.block(r, "needs"))
                    .and_then(|r| loc.key_in(r, "attr_forks"))
                    .unwrap_or_else(at_start);
                let mut e = loc.at_pos(
                    pos,
                    format!(
                        "claim `{}`: `needs: attr_forks` gives neither `min_inodes` nor `max_inodes`",
                        claim.id
                    ),
                );
                e.help = Some(
                    "say what the mechanism needs: `min_inodes: N` (at least N inodes with an attr fork extent: the spill regime) or `max_inodes: N` (attrs kept in the inode)".into(),
                );
                return Err(e);
            }
        }
        if let Some(r) = claim.needs.as_ref().and_then(|n| n.reading.as_ref()) {
            let known = |k: &str| def.vars.contains_key(k);
            if let Some(k) = r.when.keys().find(|k| !known(k)) {
                let pos = item
                    .clone()
                    .and_then(|r| loc.block(r, "needs"))
                    .and_then(|r| loc.block(r, "reading"))
                    .and_then(|r| loc.key_in(r, k))
                    .unwrap_or_else(at_start);
                let mut e = loc.at_pos(
                    pos,
                    format!(
                        "claim `{}`: `needs: reading: when:` names `{k}`, which is not a var",
                        claim.id
                    ),
                );
                e.help = Some(format!(
                    "a reading is chosen by the bundle's vars (a profile sets them): {}",
                    var_names(def)
                ));
                return Err(e);
            }
        }
        let Some(raw) = &claim.check else { continue };
        let message = match parse_check(raw.raw()) {
            Ok(check) => {
                check_kernel_pins(def, claim, &check, item.clone(), loc)?;
                if let Some(TruncatePathNeeds::Sides { .. }) =
                    claim.needs.as_ref().and_then(|n| n.truncate_path)
                {
                    if !check.selections().iter().any(|(s, _)| *s == "numerator") {
                        let pos = item
                            .clone()
                            .and_then(|r| loc.block(r, "needs"))
                            .and_then(|r| loc.key_in(r, "truncate_path"))
                            .unwrap_or_else(at_start);
                        let mut e = loc.at_pos(
                            pos,
                            format!(
                                "claim `{}`: `needs: truncate_path` names a path per side (`numerator`, `denominator`), and its `{}` check has no such sides",
                                claim.id,
                                check.kind()
                            ),
                        );
                        e.help = Some(
                            "give one path for every selected point (`truncate_path: converted`), or use a `ratio` check whose numerator and denominator took the two paths".into(),
                        );
                        return Err(e);
                    }
                }
                continue;
            }
            Err(e) => e.to_string(),
        };
        let block = item.clone().and_then(|r| loc.block(r, "check"));
        let within = block.clone().or(item.clone());
        let named = |prefix: &str| {
            message
                .split(prefix)
                .nth(1)
                .and_then(|r| r.split('`').next())
                .map(str::to_string)
        };
        let pos = if let Some(k) = named("unknown field `") {
            within.clone().and_then(|r| loc.key_in(r, &k))
        } else if let Some(v) = named("unknown variant `") {
            // The word itself (a metric, a stat), else the kind.
            within
                .clone()
                .and_then(|r| loc.find_in(r, &v))
                .or_else(|| within.clone().and_then(|r| loc.value_in(r, "kind")))
        } else if message.contains("field `kind`") {
            within.clone().and_then(|r| loc.value_in(r, "kind"))
        } else if let Some(k) = ["`expect`", "`numerator`", "`denominator`", "`select`"]
            .iter()
            .find(|k| message.starts_with(**k))
        {
            within
                .clone()
                .and_then(|r| loc.key_in(r, k.trim_matches('`')))
        } else {
            None
        }
        .or_else(|| block.as_ref().map(|r| loc.start_of(r)))
        .unwrap_or_else(at_start);
        let mut e = loc.at_pos(pos, format!("claim `{}`: `check:`: {message}", claim.id));
        e.help = crate::spec::locate::did_you_mean(&message).or_else(|| {
            Some(format!(
                "a check is a mapping with `kind` ({}) and that kind's keys; see src/analysis/claims/mod.rs",
                Check::KINDS.join(", ")
            ))
        });
        return Err(e);
    }
    Ok(())
}

/// A claim that pins `kernel` in a selection (a claim about one kernel, or one that
/// compares kernels: it is then checked once, as written, instead of once per kernel)
/// names values of the experiment's `kernel` axis: else an error at the value.
fn check_kernel_pins(
    def: &ExperimentDef,
    claim: &Claim,
    check: &Check,
    item: Option<Range<usize>>,
    loc: &Locator<'_>,
) -> Result<(), SpecError> {
    let mut sels: Vec<(&str, &Selection)> = check.selections();
    if let Some(n) = &claim.needs {
        sels.extend(n.contrast.iter().map(|c| ("contrast", &c.select)));
        sels.extend(n.attr_forks.iter().map(|a| ("attr_forks", &a.select)));
    }
    let axis = def.matrix.get(KERNEL);
    let known: Vec<String> = axis
        .map(|vs| vs.iter().map(SpecValue::label).collect())
        .unwrap_or_default();
    for (key, sel) in sels {
        let Some(cond) = sel.get(KERNEL) else {
            continue;
        };
        let named: Vec<String> = match cond {
            Cond::Value(SpecValue::List(vs)) => vs.iter().map(SpecValue::label).collect(),
            Cond::Value(v) => vec![v.label()],
            Cond::Range(_) => vec!["a range".into()],
        };
        let Some(bad) = named.iter().find(|k| !known.contains(k)) else {
            continue;
        };
        // The value where it is written in the claim's check, else its selection's key.
        let section = if matches!(key, "contrast" | "attr_forks") {
            "needs"
        } else {
            "check"
        };
        let within = item
            .clone()
            .and_then(|r| loc.block(r.clone(), section).or(Some(r)));
        let pos = within
            .clone()
            .and_then(|r| loc.find_in(r, &format!("{KERNEL}: {bad}")))
            .or_else(|| within.clone().and_then(|r| loc.key_in(r, key)))
            .or_else(|| within.clone().map(|r| loc.start_of(&r)))
            .unwrap_or((0, 0));
        let mut e = loc.at_pos(
            pos,
            match axis {
                Some(_) => format!(
                    "claim `{}`: `{key}` pins `kernel: {bad}`, which is not a value of the `kernel` axis",
                    claim.id
                ),
                None => format!(
                    "claim `{}`: `{key}` pins `kernel: {bad}`, and the experiment has no `kernel` axis",
                    claim.id
                ),
            },
        );
        e.help = Some(match axis {
            Some(_) => format!(
                "name one of the axis' kernels ({}); a claim that does not pin `kernel` is checked once per kernel (docs/kernels.md)",
                known.join(", ")
            ),
            None => "add `kernel: [host, …]` to `matrix:` to put kernels side by side, or leave `kernel` out of the selection".into(),
        });
        return Err(e);
    }
    Ok(())
}

/// `scale:`: each total's factors are vars, and the published fill is a share with a basis.
fn check_scale(def: &ExperimentDef, sc: &ScaleSpec, loc: &Locator<'_>) -> Result<(), SpecError> {
    let at = |key: &str| {
        loc.section("scale")
            .and_then(|r| loc.value_in(r, key))
            .unwrap_or((0, 0))
    };
    for (name, factors) in &sc.totals {
        if factors.len() < 2 {
            let mut e = loc.at_pos(
                at(name),
                format!("`scale: totals: {name}` has {} factor(s)", factors.len()),
            );
            e.help = Some(
                "a total is the product of two or more vars, e.g. `files_total: [files, loops]`"
                    .into(),
            );
            return Err(e);
        }
        if let Some(bad) = factors.iter().find(|f| !def.vars.contains_key(f.as_str())) {
            let mut e = loc.at_pos(
                at(name),
                format!(
                    "`scale: totals: {name}` names `{bad}`, which is not a var of the experiment"
                ),
            );
            e.help = Some(format!("name vars of `vars:`: {}", var_names(def)));
            return Err(e);
        }
        if def.vars.contains_key(name) {
            let mut e = loc.at_pos(
                at(name),
                format!("`scale: totals: {name}` has the name of a var"),
            );
            e.help = Some("give the total its own name, e.g. `files_total`".into());
            return Err(e);
        }
    }
    if let Some(f) = &sc.fill {
        if !(f.inodes > 0.0 && f.inodes <= 1.0) {
            let mut e = loc.at_pos(
                at("fill"),
                format!("`scale: fill: inodes: {}` is not a share", f.inodes),
            );
            e.help = Some(
                "the post's share of inodes in use, above 0 and at most 1 (0.75 for 75 %)".into(),
            );
            return Err(e);
        }
        if f.basis.trim().is_empty() {
            let mut e = loc.at_pos(
                at("fill"),
                "`scale: fill:` has an empty `basis`".to_string(),
            );
            e.help = Some("say where the post's share comes from (its own output, or the assumption it rests on)".into());
            return Err(e);
        }
    }
    Ok(())
}

/// The experiment's vars, for a help line that lists the names a key may take.
fn var_names(def: &ExperimentDef) -> String {
    def.vars
        .keys()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}
