//! Values that reach a command: a `vars:` value, a matrix axis value or a profile's
//! setting that a step or a tool choice uses must not name a device, and a tool
//! choice must not name one literally. (`--set` values and what several values make
//! together are checked on the resolved words, when the plan is made.)

use super::steps::StepAt;
use super::Checker;
use crate::spec::devpath::{device_paths, LOGICAL_DEVICES_ONLY};
use crate::spec::{Piece, SpecError, Step, Value};

/// Where a name's values come from in the file.
struct Source<'v> {
    /// `vars.filename`, `matrix.filename`, `profile \`big\``.
    whence: String,
    /// The top-level section and the key path to the value's block.
    section: &'static str,
    block: Option<&'v str>,
    value: &'v Value,
}

/// Every scalar text of a value (list items one by one).
fn texts(v: &Value) -> Vec<String> {
    match v {
        Value::List(items) => items.iter().flat_map(texts).collect(),
        other => vec![other.to_string()],
    }
}

/// The names each step uses, with the step's description, in run order.
fn step_users<'d>(c: &'d Checker<'_>) -> Vec<(StepAt<'d>, &'d Step)> {
    let (def, loc) = (c.def, c.loc);
    let mut out = Vec::new();
    let sections: [(&str, &[Step]); 5] = [
        ("setup", &def.setup),
        ("before_each", &def.workload.before_each),
        ("workload", std::slice::from_ref(&def.workload)),
        ("capture", &def.capture),
        ("teardown", &def.teardown),
    ];
    for (section, steps) in sections {
        for (i, step) in steps.iter().enumerate() {
            out.push((StepAt::new(section, i, loc), step));
        }
    }
    for (v, variant) in def.workload_variants.iter().enumerate() {
        let block = loc
            .section("workload_variants")
            .and_then(|r| loc.item(r, v));
        out.push((StepAt::variant(v, None, block.clone(), loc), variant));
        for (i, step) in variant.before_each.iter().enumerate() {
            let range = block
                .clone()
                .and_then(|b| loc.block(b, "before_each"))
                .and_then(|b| loc.item(b, i));
            out.push((StepAt::variant(v, Some(i), range, loc), step));
        }
    }
    out
}

/// No value a step or a tool can use names a device; no tool choice names one.
pub(super) fn check_value_devices(c: &Checker<'_>) -> Result<(), SpecError> {
    let (def, loc) = (c.def, c.loc);
    // Who uses each name: a step (its description) or a tool choice.
    let mut users: Vec<(String, String)> = Vec::new();
    for (at, step) in step_users(c) {
        let Ok(templates) = step.templates() else {
            continue;
        };
        for t in &templates {
            for n in t.names() {
                users.push((n.to_string(), at.what.clone()));
            }
        }
    }
    for (tname, tool) in &def.tools {
        for (i, choice) in tool.choices.iter().enumerate() {
            let Some(Ok(templates)) = choice.command().map(|c| c.templates()) else {
                continue;
            };
            let what = format!("tool `{tname}` choice {}", i + 1);
            for t in &templates {
                for n in t.names() {
                    users.push((n.to_string(), what.clone()));
                }
                for piece in &t.pieces {
                    let Piece::Lit(lit) = piece else { continue };
                    if let Some(path) = device_paths(lit).into_iter().next() {
                        let pos = loc
                            .section("tools")
                            .and_then(|r| loc.block(r, tname))
                            .and_then(|b| loc.find_in(b, path))
                            .unwrap_or_else(|| c.key_in_section("tools", tname));
                        return Err(c.fail(
                            pos,
                            format!("{what} names the device `{path}` directly"),
                            Some(LOGICAL_DEVICES_ONLY.into()),
                        ));
                    }
                }
            }
        }
    }
    for (name, used_by) in &users {
        for src in sources(c, name) {
            for text in texts(src.value) {
                let Some(path) = device_paths(&text).into_iter().next() else {
                    continue;
                };
                let within = loc.section(src.section).and_then(|r| match src.block {
                    Some(b) => loc.block(r, b),
                    None => Some(r),
                });
                let key_block = within.clone().and_then(|r| loc.block(r, name)).or(within);
                let pos = key_block
                    .clone()
                    .and_then(|r| loc.find_in(r, path))
                    .or_else(|| key_block.and_then(|r| loc.key_in(r, name)))
                    .unwrap_or_else(|| c.section_start(src.section));
                return Err(c.fail(
                    pos,
                    format!(
                        "{used_by} uses `{{{{{name}}}}}`, and {} gives it `{text}`, which names the device `{path}`",
                        src.whence
                    ),
                    Some(LOGICAL_DEVICES_ONLY.into()),
                ));
            }
        }
    }
    Ok(())
}

/// Every value `name` can take from the file.
fn sources<'d>(c: &'d Checker<'_>, name: &str) -> Vec<Source<'d>> {
    let def = c.def;
    let mut out = Vec::new();
    if let Some(v) = def.vars.get(name) {
        out.push(Source {
            whence: format!("`vars.{name}`"),
            section: "vars",
            block: None,
            value: v,
        });
    }
    if let Some(axis) = def.matrix.get(name) {
        for v in axis {
            out.push(Source {
                whence: format!("the matrix axis `{name}`"),
                section: "matrix",
                block: None,
                value: v,
            });
        }
    }
    for (p, settings) in &def.profiles {
        if let Some(v) = settings.get(name) {
            out.push(Source {
                whence: format!("profile `{p}`"),
                section: "profiles",
                block: Some(p.as_str()),
                value: v,
            });
        }
    }
    out
}
