//! Checks on a deserialised experiment: names, references, counts, devices, steps and
//! requirements, each error located in the file.

use super::locate::{closest, suggest, Locator};
use crate::spec::{ExperimentDef, Piece, SpecError, Template, Value, BUILTIN_NAMES};

mod claims;
mod devices;
mod kernel;
mod matrix;
mod names;
mod requirements;
mod steps;
mod tools;
mod values;

use devices::*;
use matrix::*;
use names::*;
use requirements::*;
use steps::*;
use tools::*;

/// A name that can be written as `{{name}}` and used as a table column.
fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// A value as it is written in YAML, for messages.
fn yaml_text(v: &Value) -> String {
    match v {
        Value::List(items) => format!(
            "[{}]",
            items.iter().map(yaml_text).collect::<Vec<_>>().join(", ")
        ),
        Value::Str(s) if s.parse::<f64>().is_ok() || s.is_empty() => format!("\"{s}\""),
        other => other.to_string(),
    }
}

/// Where a step is written: its block (the workload's section, or the item of its
/// sequence) when it can be found.
pub(super) fn step_range(
    loc: &Locator<'_>,
    section: &str,
    index: usize,
) -> Option<std::ops::Range<usize>> {
    match section {
        "workload" => loc.section("workload"),
        "before_each" => loc
            .section("workload")
            .and_then(|w| loc.block(w, "before_each"))
            .and_then(|b| loc.item(b, index)),
        s => loc.section(s).and_then(|r| loc.item(r, index)),
    }
}

/// What the experiment's names are, for checks and suggestions.
struct Names<'d> {
    def: &'d ExperimentDef,
}

impl Names<'_> {
    fn is_var(&self, n: &str) -> bool {
        self.def.matrix.contains_key(n) || self.def.vars.contains_key(n)
    }

    fn vars(&self) -> Vec<&str> {
        self.def
            .matrix
            .keys()
            .chain(self.def.vars.keys())
            .map(String::as_str)
            .collect()
    }

    /// Can `{{n}}` be a list here (a list var, a list-valued axis value, or a profile
    /// that sets a var to a list)?
    fn may_be_list(&self, n: &str) -> bool {
        let d = self.def;
        matches!(d.vars.get(n), Some(Value::List(_)))
            || d.matrix
                .get(n)
                .is_some_and(|vs| vs.iter().any(|v| matches!(v, Value::List(_))))
            || (d.vars.contains_key(n)
                && d.profiles
                    .values()
                    .any(|p| matches!(p.get(n), Some(Value::List(_)))))
    }

    /// Every name a command may use, for "did you mean".
    fn all(&self) -> Vec<String> {
        let mut c: Vec<String> = self.vars().into_iter().map(str::to_string).collect();
        c.extend(self.def.devices.keys().map(|d| format!("dev.{d}")));
        c.extend(self.def.tools.keys().cloned());
        c.extend(BUILTIN_NAMES.iter().map(|(b, _)| b.to_string()));
        c
    }
}

/// A count (`repeat`, `times`): a whole number ≥ 1, or a `{{var}}` whose values are.
fn check_count(
    v: &Value,
    what: &str,
    names: &Names<'_>,
    pos: (usize, usize),
    loc: &Locator<'_>,
) -> Result<(), SpecError> {
    let bad = |shown: String, help: String| {
        let mut e = loc.at_pos(
            pos,
            format!("`{what}` must be a whole number ≥ 1 or a `{{{{var}}}}`, not {shown}"),
        );
        e.help = Some(help);
        e
    };
    let whole = |v: &Value| match v {
        Value::Int(n) => *n >= 1 && *n <= i64::from(u32::MAX),
        Value::Str(s) => s.trim().parse::<u32>().is_ok_and(|n| n >= 1),
        _ => false,
    };
    match v {
        Value::Str(s) if s.contains("{{") => {
            let t = Template::parse(s).map_err(|m| loc.at_pos(pos, m.to_string()))?;
            // A single reference to a var or an axis: check the values it can take.
            if let [Piece::Var(n)] = t.pieces.as_slice() {
                let d = names.def;
                let mut values: Vec<(String, &Value)> = Vec::new();
                if let Some(x) = d.vars.get(n) {
                    values.push((format!("vars.{n}"), x));
                }
                if let Some(axis) = d.matrix.get(n) {
                    values.extend(axis.iter().map(|x| (format!("matrix.{n}"), x)));
                }
                for (p, settings) in &d.profiles {
                    if let Some(x) = settings.get(n) {
                        values.push((format!("profile `{p}`"), x));
                    }
                }
                for (whence, x) in values {
                    let list_ok = d.matrix.contains_key(n)
                        && matches!(x, Value::List(items) if items.iter().all(&whole));
                    if !whole(x) && !list_ok {
                        return Err(bad(
                            format!(
                                "`{}` ({whence} gives `{{{{{n}}}}}` that value)",
                                yaml_text(x)
                            ),
                            format!("give `{n}` a whole number ≥ 1"),
                        ));
                    }
                }
            }
            Ok(())
        }
        v if whole(v) => Ok(()),
        Value::List(_) => Err(bad(
            format!("the list `{}`", yaml_text(v)),
            format!(
                "e.g. `{what}: 10`; a count per point comes from a `{{{{var}}}}` or a matrix axis"
            ),
        )),
        other => Err(bad(
            format!("`{}`", yaml_text(other)),
            format!("e.g. `{what}: 10`"),
        )),
    }
}

/// Where a check points in the file, and the names the experiment defines.
struct Checker<'a> {
    def: &'a ExperimentDef,
    loc: &'a Locator<'a>,
    names: Names<'a>,
}

impl Checker<'_> {
    fn fail(&self, pos: (usize, usize), msg: String, help: Option<String>) -> SpecError {
        let mut e = self.loc.at_pos(pos, msg);
        e.help = help;
        e
    }

    fn section_start(&self, s: &str) -> (usize, usize) {
        let loc = self.loc;
        loc.section(s).map(|r| loc.start_of(&r)).unwrap_or((0, 0))
    }

    fn key_in_section(&self, s: &str, key: &str) -> (usize, usize) {
        let loc = self.loc;
        loc.section(s)
            .and_then(|r| loc.key_in(r, key))
            .unwrap_or_else(|| loc.find_key(key, Some(s)))
    }

    fn value_in_section(&self, s: &str, key: &str) -> (usize, usize) {
        let loc = self.loc;
        loc.section(s)
            .and_then(|r| loc.value_in(r, key))
            .unwrap_or_else(|| self.section_start(s))
    }
}

/// `kernel: NAME` checked and turned into the `kernel` variable, before the other checks
/// (which then see `{{kernel}}` and profiles that set it as they would a var).
pub(super) fn kernel_key(def: &mut ExperimentDef, loc: &Locator<'_>) -> Result<(), SpecError> {
    kernel::check_kernel_key(&Checker {
        def,
        loc,
        names: Names { def },
    })?;
    kernel::desugar(def);
    Ok(())
}

/// Check a deserialised experiment; the first problem found is the error.
pub(super) fn validate(def: &ExperimentDef, loc: &Locator<'_>) -> Result<(), SpecError> {
    let c = Checker {
        def,
        loc,
        names: Names { def },
    };
    check_id(&c)?;
    check_devices(&c)?;
    check_names(&c)?;
    check_tools(&c)?;
    check_requires(&c)?;
    check_excludes(&c)?;
    check_profiles(&c)?;
    check_steps(&c)?;
    values::check_value_devices(&c)?;
    check_repeat(&c)?;
    claims::check_claims(def, loc)?;
    Ok(())
}

/// The experiment id is a plain name.
fn check_id(c: &Checker<'_>) -> Result<(), SpecError> {
    let def = c.def;
    if !plain_name(&def.id) {
        return Err(c.fail(
            c.value_in_section("id", "id"),
            format!("experiment id `{}` is not a plain name", def.id),
            Some("use letters, digits, `-` and `_` only (it names the results directory)".into()),
        ));
    }
    Ok(())
}
