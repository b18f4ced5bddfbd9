//! Steps: one action each, in the right section, over names the experiment defines;
//! and the workload's `repeat:` and `replicates:`.

use super::{
    check_count, closest, step_range, suggest, validate_requirement, Checker, Locator, Names,
};
use crate::parse::Kind;
use crate::spec::devpath::{device_paths, LOGICAL_DEVICES_ONLY};
use crate::spec::{
    CommandSpec, MountSpec, Piece, RepeatSpec, SpecError, Step, Template, TemplateError, Value,
    BUILTIN_NAMES,
};

/// Every step of every phase.
pub(super) fn check_steps(c: &Checker<'_>) -> Result<(), SpecError> {
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
    for (v, variant) in def.workload_variants.iter().enumerate() {
        let block = loc
            .section("workload_variants")
            .and_then(|r| loc.item(r, v));
        let at = StepAt::variant(v, None, block.clone(), loc);
        if variant.when.is_empty() {
            return Err(at.fail(
                at.step_pos,
                format!(
                    "{} has no `when:`: it would replace the workload everywhere",
                    at.what
                ),
                Some(
                    "say where it runs, e.g. `when: { loop: one-process }` over a matrix axis"
                        .into(),
                ),
            ));
        }
        check_step_at(variant, &at, names)?;
        for (i, step) in variant.before_each.iter().enumerate() {
            let range = block
                .clone()
                .and_then(|b| loc.block(b, "before_each"))
                .and_then(|b| loc.item(b, i));
            check_step_at(step, &StepAt::variant(v, Some(i), range, loc), names)?;
        }
        for (key, value) in [
            ("replicates", variant.replicates.as_ref()),
            (
                "repeat",
                match &variant.repeat {
                    Some(RepeatSpec::Count(n)) => Some(n),
                    _ => None,
                },
            ),
        ] {
            if let Some(n) = value {
                check_count(n, key, names, at.value_pos(key), loc)?;
            }
        }
    }
    Ok(())
}

/// The workload's `repeat:` (a count, or adaptive bounds) and `replicates:` (a count).
pub(super) fn check_repeat(c: &Checker<'_>) -> Result<(), SpecError> {
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

/// Where a step is in the file and how messages name it.
pub(super) struct StepAt<'a> {
    /// `the workload`, `setup step 2`, …
    pub(super) what: String,
    pub(super) section: &'a str,
    /// The step's lines, when they can be found.
    pub(super) range: Option<std::ops::Range<usize>>,
    /// Where the step starts (or its section, when the step cannot be found).
    pub(super) step_pos: (usize, usize),
    pub(super) loc: &'a Locator<'a>,
}

impl<'a> StepAt<'a> {
    pub(super) fn new(section: &'a str, i: usize, loc: &'a Locator<'a>) -> Self {
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
        StepAt {
            what,
            section,
            range,
            step_pos,
            loc,
        }
    }

    /// Workload variant `v` (0-based) itself, or its `before_each` step `i`: checked as
    /// the workload and a `before_each` step are.
    pub(super) fn variant(
        v: usize,
        before_each: Option<usize>,
        range: Option<std::ops::Range<usize>>,
        loc: &'a Locator<'a>,
    ) -> Self {
        let (what, section) = match before_each {
            None => (format!("workload variant {}", v + 1), "workload"),
            Some(i) => (
                format!("before_each step {} of workload variant {}", i + 1, v + 1),
                "before_each",
            ),
        };
        let fallback = loc
            .section("workload_variants")
            .map(|r| loc.start_of(&r))
            .unwrap_or((0, 0));
        StepAt {
            what,
            section,
            step_pos: range.as_ref().map_or(fallback, |r| loc.start_of(r)),
            range,
            loc,
        }
    }

    pub(super) fn key_pos(&self, k: &str) -> (usize, usize) {
        self.range
            .clone()
            .and_then(|r| self.loc.key_in(r, k))
            .unwrap_or(self.step_pos)
    }

    pub(super) fn value_pos(&self, k: &str) -> (usize, usize) {
        self.range
            .clone()
            .and_then(|r| self.loc.value_in(r, k))
            .unwrap_or(self.step_pos)
    }

    pub(super) fn fail(&self, pos: (usize, usize), msg: String, help: Option<String>) -> SpecError {
        let mut e = self.loc.at_pos(pos, msg);
        e.help = help;
        e
    }
}

/// One step of `section` (its `i`th): each check points at the offending key or value.
pub(super) fn validate_step(
    step: &Step,
    section: &str,
    i: usize,
    names: &Names<'_>,
    loc: &Locator<'_>,
) -> Result<(), SpecError> {
    check_step_at(step, &StepAt::new(section, i, loc), names)
}

/// The checks of one step, located by `at`.
fn check_step_at(step: &Step, at: &StepAt<'_>, names: &Names<'_>) -> Result<(), SpecError> {
    check_action(step, at)?;
    check_fields(step, at, names)?;
    check_mount(step, at, names)?;
    check_command(step, at, names)?;
    check_step_requires(step, at, names)
}

/// One action per step, and the keys only the workload has (`repeat`, `replicates`,
/// `before_each`, `counters`) only there; the workload is a `run:`.
fn check_action(step: &Step, at: &StepAt<'_>) -> Result<(), SpecError> {
    let what = &at.what;
    let section = at.section;
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
            return Err(at.fail(
                at.step_pos,
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
            return Err(at.fail(
                at.key_pos(last),
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
        return Err(at.fail(
            at.key_pos(key),
            format!("{what}: `{key}` belongs to the workload only"),
            Some(if key == "repeat" {
                "move it under `workload:`; to run a step several times use `times:`".into()
            } else {
                "move it under `workload:`".into()
            }),
        ));
    }
    if section != "workload" && step.counters.is_some() {
        return Err(at.fail(
            at.key_pos("counters"),
            format!("{what}: `counters` belongs to the workload only (they are read around each timed iteration)"),
            Some("move it under `workload:`, e.g. `counters: [xfs, diskstats]`".into()),
        ));
    }
    if section == "workload" && step.run.is_none() {
        return Err(at.fail(
            at.key_pos(actions.first().copied().unwrap_or("workload")),
            format!(
                "the workload must be a `run:` command (it is what is timed), not `{}`",
                step.action()
            ),
            Some("e.g. `run: fs_mark -d {{mnt}} -n 1000`; mounts and other preparation go under `setup:`".into()),
        ));
    }
    Ok(())
}

/// `timeout`, `parse`, `when`, `times` and `times_from`.
fn check_fields(step: &Step, at: &StepAt<'_>, names: &Names<'_>) -> Result<(), SpecError> {
    let what = &at.what;
    let loc = at.loc;
    if let Some(t) = step.timeout {
        if !(t.is_finite() && t > 0.0) {
            return Err(at.fail(
                at.value_pos("timeout"),
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
            return Err(at.fail(
                at.value_pos("parse"),
                format!("{what}: unknown parse kind `{kind}`"),
                suggest(kind, known.iter().copied())
                    .or(Some(format!("known kinds: {}", known.join(", ")))),
            ));
        }
    }
    for k in step.when.keys() {
        if !names.is_var(k) {
            return Err(at.fail(
                at.key_pos(k),
                format!("{what}: `when` names `{k}`, which is neither a var nor a matrix axis"),
                suggest(k, names.vars().into_iter()),
            ));
        }
    }
    if let Some(t) = &step.times {
        check_count(t, "times", names, at.value_pos("times"), loc)?;
    }
    match (&step.times_from, &step.times) {
        (None | Some(Value::Int(_)), Some(_)) | (None, None) => {}
        (Some(Value::Int(n)), None) => {
            return Err(at.fail(
                at.key_pos("times_from"),
                format!("{what}: `times_from: {n}` without `times`: it gives the first `{{{{i}}}}` of a step run several times"),
                Some(format!("e.g. `times: 1000` with `times_from: {n}`, or remove `times_from`")),
            ));
        }
        (Some(v), _) => {
            return Err(at.fail(
                at.value_pos("times_from"),
                format!("{what}: `times_from` must be a whole number (the first `{{{{i}}}}`), not `{v}`"),
                Some("e.g. `times: 1000` with `times_from: 1` gives `{{i}}` = 1 … 1000".into()),
            ));
        }
    }
    Ok(())
}

/// A mount names a declared device (or `{{dev.NAME}}`).
fn check_mount(step: &Step, at: &StepAt<'_>, names: &Names<'_>) -> Result<(), SpecError> {
    let what = &at.what;
    let def = names.def;
    let mounted = match &step.mount {
        Some(MountSpec::Device(d)) => Some((d, at.value_pos("mount"))),
        Some(MountSpec::Full(f)) => Some((&f.device, at.value_pos("device"))),
        None => None,
    };
    if let Some((d, pos)) = mounted {
        if !d.contains("{{") && !def.devices.contains_key(d) {
            let declared: Vec<&str> = def.devices.keys().map(String::as_str).collect();
            return Err(at.fail(
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
    Ok(())
}

/// The command: template syntax, shell-like quoting, names the experiment defines (lists
/// only as whole words), and no device path written directly.
fn check_command(step: &Step, at: &StepAt<'_>, names: &Names<'_>) -> Result<(), SpecError> {
    let what = &at.what;
    let section = at.section;
    let def = names.def;
    let loc = at.loc;
    // Template syntax over the whole command line first: `{{a + 1}}` would otherwise be
    // split into words and reported as a stray `{{`.
    if let Some(CommandSpec::Line(line)) = &step.run {
        if let Err(e) = Template::parse(line) {
            let offset = e.at().unwrap_or(0);
            let pos = at
                .range
                .clone()
                .and_then(|r| {
                    let snippet: String = line[offset..].chars().take(24).collect();
                    loc.find_in(r.clone(), &snippet)
                        .or_else(|| loc.find_in(r, "{{"))
                })
                .unwrap_or(at.step_pos);
            return Err(at.fail(pos, format!("{what}: {e}"), Some(template_help(&e))));
        }
    }
    let templates = step.templates().map_err(|m| {
        at.fail(
            at.value_pos("run"),
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
            let pos = at
                .range
                .clone()
                .and_then(|r| loc.template_use_in(r, name))
                .unwrap_or(at.step_pos);
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
                return Err(at.fail(
                    pos,
                    format!("undefined name `{{{{{name}}}}}` in {section}"),
                    help,
                ));
            }
            let whole_word = matches!(t.pieces.as_slice(), [Piece::Var(_)]);
            if !whole_word && names.may_be_list(name) {
                return Err(at.fail(
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
            if let Some(path) = device_paths(lit).into_iter().next() {
                let pos = at
                    .range
                    .clone()
                    .and_then(|r| loc.find_in(r, path))
                    .unwrap_or(at.step_pos);
                return Err(at.fail(
                    pos,
                    format!("{what} names the device `{path}` directly"),
                    Some(LOGICAL_DEVICES_ONLY.into()),
                ));
            }
        }
    }
    Ok(())
}

/// The step's own `requires:`.
fn check_step_requires(step: &Step, at: &StepAt<'_>, names: &Names<'_>) -> Result<(), SpecError> {
    let what = &at.what;
    let loc = at.loc;
    let requires = at.range.clone().and_then(|r| loc.block(r, "requires"));
    for (j, r) in step.requires.iter().enumerate() {
        let item = requires.clone().and_then(|b| loc.item(b, j));
        validate_requirement(r, what, names, item, at.key_pos("requires"), loc)?;
    }
    Ok(())
}

/// Help for a `{{...}}` syntax error.
pub(super) fn template_help(e: &TemplateError) -> String {
    if matches!(e, TemplateError::BadFormat { .. }) {
        "an integer format is an optional `0`, an optional width and `d`, `x` or `X`: `{{i:02x}}`, `{{i:04d}}`".into()
    } else {
        "write a reference as `{{name}}`; fslab has no expressions (an integer can be formatted: `{{name:02x}}`)".into()
    }
}
