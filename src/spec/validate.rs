//! Checks on a deserialised experiment: names, references, counts, devices, steps and
//! requirements, each error located in the file.

use super::locate::{closest, suggest, Locator};
use super::*;
use crate::parse::Kind;

/// Device paths an experiment may name literally (they are not storage).
pub const HARMLESS_DEV_PATHS: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/fd/",
    "/dev/shm",
];

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
fn step_range(loc: &Locator<'_>, section: &str, index: usize) -> Option<std::ops::Range<usize>> {
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
    check_repeat(&c)?;
    super::claim::check_claims(def, loc)?;
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

/// Devices: plain names, sizes that parse or use known variables.
fn check_devices(c: &Checker<'_>) -> Result<(), SpecError> {
    let (def, loc, names) = (c.def, c.loc, &c.names);
    // Devices: plain names, sizes that parse or use known variables.
    for (name, dev) in &def.devices {
        let block = loc.section("devices").and_then(|r| loc.block(r, name));
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || name.is_empty() {
            return Err(c.fail(
                c.key_in_section("devices", name),
                format!("device name `{name}` is not a plain name"),
                Some("use letters, digits and `_` (it is written `{{dev.NAME}}`)".into()),
            ));
        }
        let size_pos = block
            .clone()
            .and_then(|b| loc.value_in(b, "size"))
            .unwrap_or_else(|| c.key_in_section("devices", name));
        if dev.size.contains("{{") {
            let t = Template::parse(&dev.size).map_err(|m| loc.at_pos(size_pos, m.to_string()))?;
            for n in t.names() {
                if !names.is_var(n) {
                    let pos = block
                        .clone()
                        .and_then(|b| loc.template_use_in(b, n))
                        .unwrap_or(size_pos);
                    return Err(c.fail(
                        pos,
                        format!("undefined name `{{{{{n}}}}}` in the size of device `{name}`"),
                        suggest(n, names.vars().into_iter()).or_else(|| {
                            Some(format!(
                                "a size may use vars and matrix axes; define `{n}` under `vars:`, e.g. `{n}: 1GiB`"
                            ))
                        }),
                    ));
                }
            }
        } else {
            parse_size(&dev.size).map_err(|m| c.fail(size_pos, m.to_string(), None))?;
        }
        let medium_pos = block
            .clone()
            .and_then(|b| loc.value_in(b, "medium"))
            .unwrap_or(size_pos);
        if let Some(super::media::MediumSpec::Var(t)) = &dev.medium {
            let t = Template::parse(t).map_err(|m| loc.at_pos(medium_pos, m.to_string()))?;
            let undefined = t.names().find(|n| !names.is_var(n)).map(str::to_string);
            if let Some(n) = undefined {
                return Err(c.fail(
                    medium_pos,
                    format!("undefined name `{{{{{n}}}}}` in the medium of device `{name}`"),
                    Some(format!("define `{n}` under `vars:`, e.g. `{n}: hdd-2008`")),
                ));
            }
        }
        if let Some(p) = dev.medium.as_ref().and_then(|m| m.params()) {
            let pos = medium_pos;
            p.validate().map_err(|e| {
                c.fail(
                    pos,
                    format!("medium of device `{name}`: {e}"),
                    Some("see docs/media.md for the model and its parameters".into()),
                )
            })?;
        }
    }
    Ok(())
}

/// Variable and axis names, and the matrix axes' values.
fn check_names(c: &Checker<'_>) -> Result<(), SpecError> {
    let (def, loc) = (c.def, c.loc);
    // Variable and axis names.
    for (kind, section, keys) in [
        (
            "matrix axis",
            "matrix",
            def.matrix.keys().collect::<Vec<_>>(),
        ),
        ("variable", "vars", def.vars.keys().collect::<Vec<_>>()),
    ] {
        for name in keys {
            let pos = c.key_in_section(section, name);
            if !plain_name(name) {
                return Err(c.fail(
                    pos,
                    format!("{kind} name `{name}` is not a plain name"),
                    Some("use letters, digits, `_` and `-` (it is written `{{NAME}}` and names a column)".into()),
                ));
            }
            if let Some((_, what)) = BUILTIN_NAMES.iter().find(|(b, _)| *b == name.as_str()) {
                return Err(c.fail(
                    pos,
                    format!("{kind} `{name}` has the name of one fslab provides: {what}"),
                    Some(format!("rename it, e.g. `my_{name}`")),
                ));
            }
            if crate::store::RUN_COLUMNS.contains(&name.as_str()) {
                return Err(c.fail(
                    pos,
                    format!(
                        "{kind} `{name}` has the name of a column fslab writes in runs.parquet"
                    ),
                    Some(format!(
                        "rename it, e.g. `my_{name}`; fslab's own columns are {}",
                        crate::store::RUN_COLUMNS.join(", ")
                    )),
                ));
            }
        }
    }
    for name in def.matrix.keys() {
        if def.vars.contains_key(name) {
            return Err(c.fail(
                c.key_in_section("vars", name),
                format!("`{name}` is both a variable and a matrix axis"),
                Some("keep it in one place: a matrix axis with one value, or a var".into()),
            ));
        }
    }
    for (name, values) in &def.matrix {
        let block = loc.section("matrix").and_then(|r| loc.block(r, name));
        if values.is_empty() {
            return Err(c.fail(
                c.key_in_section("matrix", name),
                format!("matrix axis `{name}` has no values"),
                Some(format!("give at least one value, e.g. `{name}: [a, b]`")),
            ));
        }
        for (i, v) in values.iter().enumerate() {
            let label = v.label();
            if let Some(first) = values[..i].iter().find(|w| w.label() == label) {
                let pos = block
                    .clone()
                    .and_then(|b| {
                        let from = loc
                            .value_in(b.clone(), name)
                            .map_or(b.start, |(l, c)| loc.offset(l, c));
                        loc.token_in(from..b.end, &label, 1)
                    })
                    .unwrap_or_else(|| c.key_in_section("matrix", name));
                let same = if first == v {
                    String::new()
                } else {
                    format!(
                        " (`{}` and `{}` make the same point)",
                        yaml_text(first),
                        yaml_text(v)
                    )
                };
                return Err(c.fail(
                    pos,
                    format!("matrix axis `{name}` lists `{label}` twice{same}, which would make duplicate points"),
                    Some("remove one: a point is named by its values' text".into()),
                ));
            }
        }
    }
    Ok(())
}

/// Tools: plain names of their own, each choice a command using vars, axes and `{{fslab}}` only.
fn check_tools(c: &Checker<'_>) -> Result<(), SpecError> {
    let (def, loc, names) = (c.def, c.loc, &c.names);
    // Tools: plain names of their own, each choice a command using vars, axes and
    // `{{fslab}}` only.
    let tools_section = loc.section("tools");
    for name in def.tools.keys() {
        let clash = if def.vars.contains_key(name) {
            Some("a var")
        } else if def.matrix.contains_key(name) {
            Some("a matrix axis")
        } else if BUILTIN_NAMES.iter().any(|(b, _)| b == name) {
            Some("a built-in name")
        } else {
            None
        };
        if let Some(what) = clash {
            return Err(c.fail(
                c.key_in_section("tools", name),
                format!("tool `{name}` is also {what}"),
                Some("give the tool its own name".into()),
            ));
        }
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(c.fail(
                c.key_in_section("tools", name),
                format!("tool name `{name}` is not a plain name"),
                Some("use letters, digits and `_` (it is written `{{NAME}}`)".into()),
            ));
        }
    }
    for (name, tool) in &def.tools {
        let tool_block = tools_section.clone().and_then(|r| loc.block(r, name));
        let tool_pos = c.key_in_section("tools", name);
        let choices_block = tool_block.clone().and_then(|b| loc.block(b, "choices"));
        if tool.choices.is_empty() {
            return Err(c.fail(
                tool_block
                    .clone()
                    .and_then(|b| loc.value_in(b, "choices"))
                    .unwrap_or(tool_pos),
                format!("tool `{name}` has no choices"),
                Some("list at least one command under `choices:`".into()),
            ));
        }
        for (i, choice) in tool.choices.iter().enumerate() {
            let what = format!("tool `{name}` choice {}", i + 1);
            let item = choices_block.clone().and_then(|b| loc.item(b, i));
            let item_pos = item
                .as_ref()
                .map(|r| loc.start_of(r))
                .or_else(|| tool_block.clone().and_then(|b| loc.key_in(b, "choices")))
                .unwrap_or(tool_pos);
            let Some(cmd) = choice.command() else {
                return Err(c.fail(
                    item_pos,
                    format!("{what} has no `run:` command"),
                    Some("give the choice a command: `- run: PROGRAM ARGS`, or just `- PROGRAM ARGS`".into()),
                ));
            };
            let cmd_pos = match choice {
                ToolChoiceDef::Full(_) => item
                    .clone()
                    .and_then(|r| loc.value_in(r, "run"))
                    .unwrap_or(item_pos),
                ToolChoiceDef::Command(_) => item_pos,
            };
            if let CommandSpec::Line(line) = cmd {
                if let Err(e) = Template::parse(line) {
                    return Err(c.fail(cmd_pos, format!("{what}: {e}"), Some(template_help(&e))));
                }
            }
            let templates = cmd.templates().map_err(|m| {
                c.fail(
                    cmd_pos,
                    format!("{what}: {m}"),
                    Some("quotes pair up as in a shell (no shell runs); give the command as a list of words".into()),
                )
            })?;
            if templates.is_empty() {
                return Err(c.fail(
                    cmd_pos,
                    format!("{what} is an empty command"),
                    Some("give the program to run, e.g. `- fsstress`".into()),
                ));
            }
            for t in &templates {
                for n in t.names() {
                    if !(names.is_var(n) || n == "fslab") {
                        let pos = item
                            .clone()
                            .and_then(|r| loc.template_use_in(r, n))
                            .unwrap_or(cmd_pos);
                        return Err(c.fail(
                            pos,
                            format!("{what}: undefined name `{{{{{n}}}}}`"),
                            suggest(n, names.vars().into_iter().chain(["fslab"])).or_else(|| Some(
                                "tool choices are resolved when the plan is made: they may use vars, matrix axes and `{{fslab}}` only"
                                    .into(),
                            )),
                        ));
                    }
                }
            }
            let requires = item.clone().and_then(|r| loc.block(r, "requires"));
            for (j, r) in choice.requires().iter().enumerate() {
                let at = requires.clone().and_then(|b| loc.item(b, j));
                validate_requirement(r, &what, names, at, item_pos, loc)?;
            }
        }
    }
    Ok(())
}

/// The experiment-wide `requires:`.
fn check_requires(c: &Checker<'_>) -> Result<(), SpecError> {
    let (def, loc, names) = (c.def, c.loc, &c.names);
    let requires = loc.section("requires");
    for (i, r) in def.requires.iter().enumerate() {
        let at = requires.clone().and_then(|b| loc.item(b, i));
        validate_requirement(
            r,
            &format!("requires entry {}", i + 1),
            names,
            at,
            c.section_start("requires"),
            loc,
        )?;
    }
    Ok(())
}

/// `exclude:` names matrix axes only.
fn check_excludes(c: &Checker<'_>) -> Result<(), SpecError> {
    let (def, loc) = (c.def, c.loc);
    for (i, ex) in def.exclude.iter().enumerate() {
        let item = loc.section("exclude").and_then(|r| loc.item(r, i));
        for k in ex.keys() {
            if !def.matrix.contains_key(k) {
                let pos = item
                    .clone()
                    .and_then(|r| loc.key_in(r, k))
                    .unwrap_or_else(|| c.key_in_section("exclude", k));
                return Err(c.fail(
                    pos,
                    format!(
                        "exclude entry {} names `{k}`, which is not a matrix axis",
                        i + 1
                    ),
                    suggest(k, def.matrix.keys().map(String::as_str)).or_else(|| {
                        Some(format!(
                            "matrix axes: {}",
                            def.matrix.keys().cloned().collect::<Vec<_>>().join(", ")
                        ))
                    }),
                ));
            }
        }
    }
    Ok(())
}

/// Profiles set known variables; the default profile exists.
fn check_profiles(c: &Checker<'_>) -> Result<(), SpecError> {
    let (def, loc, names) = (c.def, c.loc, &c.names);
    for (pname, settings) in &def.profiles {
        let block = loc.section("profiles").and_then(|r| loc.block(r, pname));
        for k in settings.keys() {
            if !names.is_var(k) {
                let pos = block
                    .clone()
                    .and_then(|b| loc.key_in(b, k))
                    .unwrap_or_else(|| c.key_in_section("profiles", k));
                return Err(c.fail(
                    pos,
                    format!(
                        "profile `{pname}` sets `{k}`, which is neither a var nor a matrix axis"
                    ),
                    suggest(k, names.vars().into_iter()).or_else(|| {
                        Some(format!(
                            "a profile sets existing names: {}",
                            names.vars().join(", ")
                        ))
                    }),
                ));
            }
        }
    }
    if let Some(p) = &def.default_profile {
        if !def.profiles.contains_key(p) {
            let known = def.profiles.keys().cloned().collect::<Vec<_>>().join(", ");
            return Err(c.fail(
                c.value_in_section("default_profile", "default_profile"),
                format!("default_profile `{p}` is not defined under `profiles`"),
                suggest(p, def.profiles.keys().map(String::as_str)).or_else(|| {
                    Some(if known.is_empty() {
                        "define it under `profiles:`, or remove `default_profile`".into()
                    } else {
                        format!("profiles: {known}")
                    })
                }),
            ));
        }
    }
    Ok(())
}

/// Every step of every phase.
fn check_steps(c: &Checker<'_>) -> Result<(), SpecError> {
    let (def, loc, names) = (c.def, c.loc, &c.names);
    let sections: [(&str, &[Step]); 5] = [
        ("setup", &def.setup),
        ("before_each", &def.workload.before_each),
        ("workload", std::slice::from_ref(&def.workload)),
        ("capture", &def.capture),
        ("teardown", &def.teardown),
    ];
    for (section, steps) in sections {
        for (i, step) in steps.iter().enumerate() {
            validate_step(step, section, i, names, loc)?;
        }
    }
    Ok(())
}

/// The workload's `repeat:` (a count, or adaptive bounds) and `replicates:` (a count).
fn check_repeat(c: &Checker<'_>) -> Result<(), SpecError> {
    let (def, loc, names) = (c.def, c.loc, &c.names);
    if let Some(v) = &def.workload.replicates {
        let pos = loc
            .section("workload")
            .and_then(|w| loc.value_in(w, "replicates"))
            .unwrap_or_else(|| c.section_start("workload"));
        check_count(v, "replicates", names, pos, loc)?;
    }
    if let Some(r) = &def.workload.repeat {
        let workload = loc.section("workload");
        let pos = workload
            .clone()
            .and_then(|w| loc.value_in(w, "repeat"))
            .unwrap_or_else(|| c.section_start("workload"));
        match r {
            RepeatSpec::Count(v) => check_count(v, "repeat", names, pos, loc)?,
            RepeatSpec::Adaptive(a) => {
                let block = workload.and_then(|w| loc.block(w, "repeat"));
                let at = |k: &str| {
                    block
                        .clone()
                        .and_then(|b| loc.value_in(b, k))
                        .unwrap_or(pos)
                };
                check_count(&a.min, "min", names, at("min"), loc)?;
                check_count(&a.max, "max", names, at("max"), loc)?;
                if let (Some(min), Some(max)) = (a.min.as_u64(), a.max.as_u64()) {
                    if min > max {
                        return Err(c.fail(
                            at("max"),
                            format!("`repeat`: `max` ({max}) is below `min` ({min})"),
                            Some("e.g. `repeat: { min: 3, max: 20, target_cv: 2 }`".into()),
                        ));
                    }
                }
                if !(a.target_cv > 0.0 && a.target_cv.is_finite()) {
                    return Err(c.fail(
                        at("target_cv"),
                        format!(
                            "`repeat`: `target_cv` is a percentage above 0, not {}",
                            a.target_cv
                        ),
                        Some(
                            "e.g. `target_cv: 2` (stop once the steady-state CV is at most 2%)"
                                .into(),
                        ),
                    ));
                }
                if let Some(m) = &a.metric {
                    const METRICS: [&str; 3] = ["wall_s", "user_s", "sys_s"];
                    if !METRICS.contains(&m.as_str()) {
                        return Err(c.fail(
                            at("metric"),
                            format!(
                                "`repeat`: `metric` must be wall_s, user_s or sys_s, not `{m}`"
                            ),
                            suggest(m, METRICS.iter().copied()),
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

const ACTIONS: &str = "run, mount, umount, mkdir, drop_caches, sync";

fn validate_step(
    step: &Step,
    section: &str,
    i: usize,
    names: &Names<'_>,
    loc: &Locator<'_>,
) -> Result<(), SpecError> {
    let def = names.def;
    let what = if section == "workload" {
        "the workload".to_string()
    } else {
        format!("{section} step {}", i + 1)
    };
    let range = step_range(loc, section, i);
    let fallback = loc
        .section(if section == "before_each" {
            "workload"
        } else {
            section
        })
        .map(|r| loc.start_of(&r))
        .unwrap_or((0, 0));
    let step_pos = range.as_ref().map_or(fallback, |r| loc.start_of(r));
    let key_pos = |k: &str| {
        range
            .clone()
            .and_then(|r| loc.key_in(r, k))
            .unwrap_or(step_pos)
    };
    let value_pos = |k: &str| {
        range
            .clone()
            .and_then(|r| loc.value_in(r, k))
            .unwrap_or(step_pos)
    };
    let fail = |pos: (usize, usize), msg: String, help: Option<String>| {
        let mut e = loc.at_pos(pos, msg);
        e.help = help;
        e
    };
    let actions: Vec<&str> = [
        ("run", step.run.is_some()),
        ("mount", step.mount.is_some()),
        ("umount", step.umount.is_some()),
        ("mkdir", step.mkdir.is_some()),
        ("drop_caches", step.drop_caches.is_some()),
        ("sync", step.sync.is_some()),
    ]
    .into_iter()
    .filter(|(_, b)| *b)
    .map(|(a, _)| a)
    .collect();
    match actions.as_slice() {
        [_] => {}
        [] => {
            return Err(fail(
                step_pos,
                format!("{what} has no action"),
                Some(format!("give it one of: {ACTIONS}")),
            ))
        }
        [.., last] => {
            let listed = actions[..actions.len() - 1]
                .iter()
                .map(|a| format!("`{a}`"))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(fail(
                key_pos(last),
                format!(
                    "{what} has {} actions, {listed} and `{last}`",
                    actions.len()
                ),
                Some("a step does one thing: split it into one step per action".into()),
            ));
        }
    }
    if section != "workload"
        && (step.repeat.is_some() || step.replicates.is_some() || !step.before_each.is_empty())
    {
        let key = if step.repeat.is_some() {
            "repeat"
        } else if step.replicates.is_some() {
            "replicates"
        } else {
            "before_each"
        };
        return Err(fail(
            key_pos(key),
            format!("{what}: `{key}` belongs to the workload only"),
            Some(if key == "repeat" {
                "move it under `workload:`; to run a step several times use `times:`".into()
            } else {
                "move it under `workload:`".into()
            }),
        ));
    }
    if section != "workload" && step.counters.is_some() {
        return Err(fail(
            key_pos("counters"),
            format!("{what}: `counters` belongs to the workload only (they are read around each timed iteration)"),
            Some("move it under `workload:`, e.g. `counters: [xfs, diskstats]`".into()),
        ));
    }
    if section == "workload" && step.run.is_none() {
        return Err(fail(
            key_pos(actions.first().copied().unwrap_or("workload")),
            format!(
                "the workload must be a `run:` command (it is what is timed), not `{}`",
                step.action()
            ),
            Some("e.g. `run: fs_mark -d {{mnt}} -n 1000`; mounts and other preparation go under `setup:`".into()),
        ));
    }
    if let Some(t) = step.timeout {
        if !(t.is_finite() && t > 0.0) {
            return Err(fail(
                value_pos("timeout"),
                format!("{what}: `timeout` must be a number of seconds > 0, not `{t}`"),
                Some("e.g. `timeout: 600`".into()),
            ));
        }
    }
    if let Some(kind) = &step.parse {
        if kind != "blockmap" && kind.parse::<Kind>().is_err() {
            let known: Vec<&str> = Kind::ALL
                .iter()
                .map(|k| k.name())
                .chain(["blockmap"])
                .collect();
            return Err(fail(
                value_pos("parse"),
                format!("{what}: unknown parse kind `{kind}`"),
                suggest(kind, known.iter().copied())
                    .or(Some(format!("known kinds: {}", known.join(", ")))),
            ));
        }
    }
    for k in step.when.keys() {
        if !names.is_var(k) {
            return Err(fail(
                key_pos(k),
                format!("{what}: `when` names `{k}`, which is neither a var nor a matrix axis"),
                suggest(k, names.vars().into_iter()),
            ));
        }
    }
    if let Some(t) = &step.times {
        check_count(t, "times", names, value_pos("times"), loc)?;
    }
    // A mount names a declared device (or `{{dev.NAME}}`).
    let mounted = match &step.mount {
        Some(MountSpec::Device(d)) => Some((d, value_pos("mount"))),
        Some(MountSpec::Full(f)) => Some((&f.device, value_pos("device"))),
        None => None,
    };
    if let Some((d, pos)) = mounted {
        if !d.contains("{{") && !def.devices.contains_key(d) {
            let declared: Vec<&str> = def.devices.keys().map(String::as_str).collect();
            return Err(fail(
                pos,
                format!("{what} mounts `{d}`, which is not a device declared under `devices:`"),
                suggest(d, declared.iter().copied()).or_else(|| {
                    Some(if declared.is_empty() {
                        "declare it, e.g. `devices: { data: { size: 1GiB } }`".into()
                    } else {
                        format!("declared devices: {}", declared.join(", "))
                    })
                }),
            ));
        }
    }
    // Template syntax over the whole command line first: `{{a + 1}}` would otherwise be
    // split into words and reported as a stray `{{`.
    if let Some(CommandSpec::Line(line)) = &step.run {
        if let Err(e) = Template::parse(line) {
            let at = e.at().unwrap_or(0);
            let pos = range
                .clone()
                .and_then(|r| {
                    let snippet: String = line[at..].chars().take(24).collect();
                    loc.find_in(r.clone(), &snippet)
                        .or_else(|| loc.find_in(r, "{{"))
                })
                .unwrap_or(step_pos);
            return Err(fail(pos, format!("{what}: {e}"), Some(template_help(&e))));
        }
    }
    let templates = step.templates().map_err(|m| {
        fail(
            value_pos("run"),
            format!("{what}: {m}"),
            Some("quotes pair up as in a shell (no shell runs); put a lone `'` inside double quotes, or give the command as a list of words".into()),
        )
    })?;
    for t in &templates {
        for name in t.names() {
            let ok = if let Some(dev) = name
                .strip_prefix("dev.")
                .or_else(|| name.strip_prefix("image."))
            {
                def.devices.contains_key(dev)
            } else if name == "iteration" {
                section == "workload" || section == "before_each"
            } else {
                names.is_var(name)
                    || def.tools.contains_key(name)
                    || BUILTIN_NAMES.iter().any(|(b, _)| *b == name)
            };
            let pos = range
                .clone()
                .and_then(|r| loc.template_use_in(r, name))
                .unwrap_or(step_pos);
            if !ok {
                let candidates = names.all();
                let help = if name == "iteration" {
                    Some("`{{iteration}}` exists only in the workload and before_each".into())
                } else if let Some(dev) = name
                    .strip_prefix("dev.")
                    .or_else(|| name.strip_prefix("image."))
                {
                    let declared: Vec<&str> = def.devices.keys().map(String::as_str).collect();
                    suggest(dev, declared.iter().copied())
                        .map(|_| {
                            let c = closest(dev, declared.iter().copied()).unwrap_or_default();
                            format!("did you mean `{}{c}`?", &name[..name.len() - dev.len()])
                        })
                        .or_else(|| {
                            Some(format!(
                                "declare it under `devices:`, e.g. `{dev}: {{ size: 1GiB }}`"
                            ))
                        })
                } else {
                    suggest(name, candidates.iter().map(String::as_str)).or_else(|| {
                        Some(format!(
                            "define it under `vars:` or `matrix:`, or use one of: {}",
                            candidates.join(", ")
                        ))
                    })
                };
                return Err(fail(
                    pos,
                    format!("undefined name `{{{{{name}}}}}` in {section}"),
                    help,
                ));
            }
            let whole_word = matches!(t.pieces.as_slice(), [Piece::Var(_)]);
            if !whole_word && names.may_be_list(name) {
                return Err(fail(
                    pos,
                    format!(
                        "{what}: `{{{{{name}}}}}` is a list and can only stand as a whole word, not inside `{}`",
                        t.raw
                    ),
                    Some(format!(
                        "write `{{{{{name}}}}}` as its own word (it becomes one argument per item), or make `{name}` a single value"
                    )),
                ));
            }
        }
        for piece in &t.pieces {
            let Piece::Lit(lit) = piece else { continue };
            let mut rest = lit.as_str();
            while let Some(i) = rest.find("/dev/") {
                let tail = &rest[i..];
                let end = tail
                    .find([',', ' ', ':', ';', '=', '"', '\''])
                    .unwrap_or(tail.len());
                let path = &tail[..end];
                if !HARMLESS_DEV_PATHS.iter().any(|h| path.starts_with(h)) {
                    let pos = range
                        .clone()
                        .and_then(|r| loc.find_in(r, path))
                        .unwrap_or(step_pos);
                    return Err(fail(
                        pos,
                        format!("{what} names the device `{path}` directly"),
                        Some(
                            "experiment files name logical devices only: declare one under `devices:` and write `{{dev.NAME}}`; \
                             a real device can only be mapped by the user (`fslab run --device NAME=/dev/...` plus the local config)"
                                .into(),
                        ),
                    ));
                }
                rest = &tail[end.max(1)..];
            }
        }
    }
    let requires = range.clone().and_then(|r| loc.block(r, "requires"));
    for (j, r) in step.requires.iter().enumerate() {
        let at = requires.clone().and_then(|b| loc.item(b, j));
        validate_requirement(r, &what, names, at, key_pos("requires"), loc)?;
    }
    Ok(())
}

/// A `requires:` entry: exactly one of `tool:` (a program, with a version that parses)
/// or `kernel:` (a known feature or `fs:TYPE`); `when:` names vars and axes. `range` is
/// the entry's item when it can be found; `fallback` where to point otherwise.
fn validate_requirement(
    r: &Requirement,
    what: &str,
    names: &Names<'_>,
    range: Option<std::ops::Range<usize>>,
    fallback: (usize, usize),
    loc: &Locator<'_>,
) -> Result<(), SpecError> {
    let def = names.def;
    let start = range.as_ref().map_or(fallback, |r| loc.start_of(r));
    let key_pos = |k: &str| {
        range
            .clone()
            .and_then(|r| loc.key_in(r, k))
            .unwrap_or(start)
    };
    let value_pos = |k: &str| {
        range
            .clone()
            .and_then(|r| loc.value_in(r, k))
            .unwrap_or(start)
    };
    let fail = |pos: (usize, usize), msg: String, help: Option<String>| {
        let mut e = loc.at_pos(pos, format!("{what}: {msg}"));
        e.help = help;
        e
    };
    match (&r.tool, &r.kernel) {
        (Some(_), Some(_)) => {
            return Err(fail(
                key_pos("kernel"),
                "a requirement names exactly one of `tool:` or `kernel:`, this one both".into(),
                Some("split it into two entries".into()),
            ))
        }
        (None, None) => {
            return Err(fail(
                start,
                "a requirement names exactly one of `tool:` or `kernel:`".into(),
                Some(
                    "e.g. `{ tool: mkfs.xfs, min_version: \"6.10\" }` or `{ kernel: xfs_rt }`"
                        .into(),
                ),
            ))
        }
        (None, Some(k)) => {
            for key in ["min_version", "package"] {
                let given = if key == "package" {
                    r.package.is_some()
                } else {
                    r.min_version.is_some()
                };
                if given {
                    return Err(fail(
                        key_pos(key),
                        format!("`kernel: {k}` takes no `{key}`"),
                        Some("`min_version` and `package` belong to a `tool:` requirement".into()),
                    ));
                }
            }
            let known = KERNEL_FEATURES.iter().any(|(n, _)| n == k)
                || k.strip_prefix("fs:").is_some_and(|t| {
                    !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                });
            if !known {
                let features: Vec<&str> = KERNEL_FEATURES.iter().map(|(n, _)| *n).collect();
                return Err(fail(
                    value_pos("kernel"),
                    format!("unknown kernel feature `{k}`"),
                    suggest(k, features.iter().copied()).or_else(|| {
                        Some(format!(
                            "known: {}, or fs:TYPE (e.g. fs:xfs)",
                            features.join(", ")
                        ))
                    }),
                ));
            }
        }
        (Some(t), None) => {
            let tpl =
                Template::parse(t).map_err(|m| fail(value_pos("tool"), m.to_string(), None))?;
            for n in tpl.names() {
                if !(def.tools.contains_key(n) || names.is_var(n) || n == "fslab") {
                    let known: Vec<&str> = def
                        .tools
                        .keys()
                        .map(String::as_str)
                        .chain(names.vars())
                        .chain(["fslab"])
                        .collect();
                    return Err(fail(
                        range
                            .clone()
                            .and_then(|r| loc.template_use_in(r, n))
                            .unwrap_or_else(|| value_pos("tool")),
                        format!(
                            "`tool: {t}` names `{{{{{n}}}}}`, which is not a tool, var or matrix axis"
                        ),
                        suggest(n, known.iter().copied()),
                    ));
                }
            }
            if let Some(v) = &r.min_version {
                if crate::host::Version::parse(v).is_none() {
                    return Err(fail(
                        value_pos("min_version"),
                        format!("`min_version: {v}` is not a version"),
                        Some("write it as numbers and dots, quoted: \"6.10\"".into()),
                    ));
                }
            }
        }
    }
    for k in r.when.keys() {
        if !names.is_var(k) {
            let pos = range
                .clone()
                .and_then(|r| loc.block(r.clone(), "when").or(Some(r)))
                .and_then(|r| loc.key_in(r, k))
                .unwrap_or(start);
            return Err(fail(
                pos,
                format!("`when` names `{k}`, which is neither a var nor a matrix axis"),
                suggest(k, names.vars().into_iter()),
            ));
        }
    }
    Ok(())
}

/// Help for a `{{...}}` syntax error.
fn template_help(e: &TemplateError) -> String {
    if matches!(e, TemplateError::BadFormat { .. }) {
        "an integer format is an optional `0`, an optional width and `d`, `x` or `X`: `{{i:02x}}`, `{{i:04d}}`".into()
    } else {
        "write a reference as `{{name}}`; fslab has no expressions (an integer can be formatted: `{{name:02x}}`)".into()
    }
}
