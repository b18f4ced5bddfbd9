//! Matrix expansion: experiment × profile × `--set` overrides → points. Runs nothing.

pub mod executes;
pub mod guard;

use crate::host::{
    check_kernel, check_program, check_version, Asked, Findings, Host, LocalHost, Version, Wanted,
};
pub use crate::spec::DevicePlan;
use crate::spec::{parse_size, Experiment, RepeatSpec, Requirement, Step, Template, Value};
use indexmap::IndexMap;
use serde::Serialize;
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("{experiment}: no profile `{given}`; profiles: {known}")]
    UnknownProfile {
        experiment: String,
        given: String,
        known: String,
    },
    #[error("--set {name}=…: `{name}` is neither a var nor a matrix axis of {experiment}{hint}")]
    UnknownVariable {
        experiment: String,
        name: String,
        hint: String,
    },
    #[error("--set `{0}`: expected NAME=VALUE")]
    BadOverride(String),
    #[error("{experiment}: {what} is `{value}`, which is not a whole number ≥ 1")]
    BadCount {
        experiment: String,
        what: String,
        value: String,
    },
    #[error("{experiment}: device `{device}` size: {message}")]
    BadSize {
        experiment: String,
        device: String,
        message: String,
    },
    #[error("{experiment}: device `{device}` medium: {message}")]
    BadMedium {
        experiment: String,
        device: String,
        message: String,
    },
    #[error("{experiment}: tool `{tool}`: {message}")]
    BadTool {
        experiment: String,
        tool: String,
        message: String,
    },
    /// A resolved word of a step names a device the point did not provision.
    #[error("{0}")]
    DeviceInStep(Box<guard::DeviceRefusal>),
    #[error("{experiment}: every point of the matrix is excluded; nothing to run")]
    Empty { experiment: String },
}

/// One point of the matrix with every variable resolved.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub index: usize,
    /// `axis=value,...` over every matrix axis, e.g. `fs=ext4`.
    pub id: String,
    /// The matrix values of this point, in axis order.
    pub matrix: IndexMap<String, Value>,
    /// Every variable visible to commands: vars, then matrix values.
    pub vars: IndexMap<String, Value>,
    /// Timed iterations (the minimum when repetition is adaptive).
    pub repeat: u32,
    /// At most this many iterations (equal to `repeat` unless adaptive).
    pub repeat_max: u32,
    /// Adaptive repetition: stop once the steady-state CV (percent) reaches this.
    pub target_cv_pct: Option<f64>,
    /// The runs column the CV is computed on.
    pub repeat_metric: String,
    /// Leading iterations left out of the CV.
    pub repeat_warmup: u32,
    /// Independent replicates (fresh devices and setup each), default 1.
    pub replicates: u32,
    pub devices: Vec<DevicePlan>,
}

/// The phases of a point, in run order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Setup,
    BeforeEach,
    Workload,
    Capture,
    Teardown,
}

impl Phase {
    pub const ALL: [Phase; 5] = [
        Phase::Setup,
        Phase::BeforeEach,
        Phase::Workload,
        Phase::Capture,
        Phase::Teardown,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Phase::Setup => "setup",
            Phase::BeforeEach => "before_each",
            Phase::Workload => "workload",
            Phase::Capture => "capture",
            Phase::Teardown => "teardown",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub experiment: Experiment,
    pub profile: Option<String>,
    pub overrides: IndexMap<String, Value>,
    pub points: Vec<Point>,
    /// The choice made for each of the experiment's `tools:` (in their order).
    pub tools: IndexMap<String, ResolvedTool>,
    /// Steps that reach host paths outside their point (`guard`), to be shown wherever
    /// the plan is: `fslab plan`, `doctor` and `run`.
    pub warnings: Vec<guard::HostPathWarning>,
}

/// Which alternative of a `tools:` entry the plan uses.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ResolvedTool {
    /// Index into the tool's `choices`; None when given with `--set`.
    pub choice: Option<usize>,
    /// The command's words as written (before per-point substitution).
    pub command: Vec<String>,
    /// The program it starts, resolved (`/usr/bin/fsstress`, `/…/fslab`).
    pub program: String,
    /// The program is installed (false: no choice was available; the first is kept so
    /// that the doctor reports it missing).
    pub found: bool,
    /// Set when this is not the program the source used (from the choice's `stand_in`).
    pub stand_in: Option<String>,
    /// The choice's `note`, and why earlier choices were passed over.
    pub notes: Vec<String>,
}

impl ResolvedTool {
    /// The command with `{{fslab}}` shown as `fslab`.
    pub fn command_line(&self) -> String {
        self.command.join(" ").replace("{{fslab}}", "fslab")
    }

    /// A few words: `fsstress: fslab stress (stand-in)`.
    pub fn short(&self, name: &str) -> String {
        let mut s = format!("{name}: {}", self.command_line());
        if self.stand_in.is_some() {
            s.push_str(" (stand-in)");
        }
        if !self.found {
            s.push_str(" (not installed)");
        }
        s
    }

    /// One line for people: `fsstress: fslab stress (stand-in: …); passed over: …`.
    pub fn describe(&self, name: &str) -> String {
        let mut s = format!("{name}: {} [{}]", self.command_line(), self.program);
        match (&self.stand_in, self.choice) {
            (Some(si), _) => s.push_str(&format!(" (stand-in: {si})")),
            (None, None) => s.push_str(" (given with --set)"),
            _ => {}
        }
        if !self.found {
            s.push_str(" (not installed)");
        }
        for n in &self.notes {
            s.push_str(&format!("; {n}"));
        }
        s
    }
}

/// The fslab executable that `{{fslab}}` names: `$FSLAB_BIN` when set; else the running
/// program when it is `fslab` itself; else `fslab` next to the running program or one
/// directory up (a test binary in `target/debug/deps/`); else `fslab` on `PATH`; else the
/// bare name `fslab`. Taken when the plan is made, so children run the same file.
pub fn fslab_executable() -> PathBuf {
    if let Some(p) = std::env::var_os("FSLAB_BIN").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    if let Ok(exe) = std::env::current_exe() {
        if exe.file_name().is_some_and(|n| n == "fslab") {
            return exe;
        }
        for dir in exe
            .parent()
            .into_iter()
            .chain(exe.parent().and_then(|d| d.parent()))
        {
            let c = dir.join("fslab");
            if c.is_file() {
                return c;
            }
        }
    }
    crate::host::which("fslab").unwrap_or_else(|| PathBuf::from("fslab"))
}

impl Plan {
    /// Expand `exp` for `profile` (None: the experiment's default) and `overrides`.
    /// Tool choices are made by looking at this machine (PATH and versions only).
    pub fn new(
        exp: &Experiment,
        profile: Option<&str>,
        overrides: &[(String, Value)],
    ) -> Result<Plan, PlanError> {
        let host = LocalHost::new();
        Plan::with_host(exp, profile, overrides, &host)
    }

    /// [`Plan::new`] asking `host` which tools exist.
    pub fn with_host(
        exp: &Experiment,
        profile: Option<&str>,
        overrides: &[(String, Value)],
        host: &dyn Host,
    ) -> Result<Plan, PlanError> {
        let def = &exp.def;
        let mut tool_overrides: IndexMap<String, Vec<String>> = IndexMap::new();
        let mut vars = def.vars.clone();
        let mut axes = def.matrix.clone();
        let profile = profile.or(exp.default_profile()).map(str::to_string);
        let mut apply = |name: &str, value: &Value| -> bool {
            if let Some(axis) = axes.get_mut(name) {
                *axis = match value {
                    Value::List(items) => items.clone(),
                    scalar => vec![scalar.clone()],
                };
                true
            } else if let Some(v) = vars.get_mut(name) {
                *v = value.clone();
                true
            } else {
                false
            }
        };
        if let Some(p) = &profile {
            let settings = def
                .profiles
                .get(p)
                .ok_or_else(|| PlanError::UnknownProfile {
                    experiment: def.id.clone(),
                    given: p.clone(),
                    known: if def.profiles.is_empty() {
                        "(none defined)".into()
                    } else {
                        def.profiles.keys().cloned().collect::<Vec<_>>().join(", ")
                    },
                })?;
            for (k, v) in settings {
                apply(k, v);
            }
        }
        let mut applied = IndexMap::new();
        for (k, v) in overrides {
            if def.tools.contains_key(k) {
                let words = match v {
                    Value::List(items) => items.iter().map(Value::label).collect(),
                    Value::Str(s) => shell_words::split(s)
                        .map_err(|_| PlanError::BadOverride(format!("{k}={s}")))?,
                    other => vec![other.label()],
                };
                if words.is_empty() {
                    return Err(PlanError::BadOverride(format!("{k}=")));
                }
                tool_overrides.insert(k.clone(), words);
                applied.insert(k.clone(), v.clone());
                continue;
            }
            if !apply(k, v) {
                let known: Vec<&str> = def
                    .matrix
                    .keys()
                    .chain(def.vars.keys())
                    .chain(def.tools.keys())
                    .map(String::as_str)
                    .collect();
                let best = known
                    .iter()
                    .map(|c| (strsim::jaro_winkler(k, c), *c))
                    .filter(|(s, _)| *s > 0.75)
                    .max_by(|a, b| a.0.total_cmp(&b.0));
                return Err(PlanError::UnknownVariable {
                    experiment: def.id.clone(),
                    name: k.clone(),
                    hint: match best {
                        Some((_, c)) => format!("; did you mean `{c}`?"),
                        None => format!("; known: {}", known.join(", ")),
                    },
                });
            }
            applied.insert(k.clone(), v.clone());
        }

        let fslab = Value::Str(fslab_executable().display().to_string());
        let tools = resolve_tools(exp, &vars, &tool_overrides, &fslab, host);
        let mut points = Vec::new();
        for combo in cartesian(&axes) {
            let excluded = def.exclude.iter().any(|ex| {
                ex.iter()
                    .all(|(k, cond)| combo.get(k).is_some_and(|v| v.matches(cond)))
            });
            if excluded {
                continue;
            }
            let id = if combo.is_empty() {
                "default".to_string()
            } else {
                combo
                    .iter()
                    .map(|(k, v)| format!("{k}={}", v.label()))
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let mut all = vars.clone();
            all.extend(combo.clone());
            all.entry("fslab".to_string())
                .or_insert_with(|| fslab.clone());
            for (name, t) in &tools {
                let look = |n: &str| {
                    if n == "fslab" {
                        Some(fslab.clone())
                    } else {
                        all.get(n).cloned()
                    }
                };
                let mut words = Vec::new();
                for w in &t.command {
                    let rendered = Template::parse(w)
                        .and_then(|tpl| tpl.render(&look))
                        .map_err(|m| PlanError::BadTool {
                            experiment: def.id.clone(),
                            tool: name.clone(),
                            message: m.to_string(),
                        })?;
                    words.extend(rendered.into_iter().map(Value::Str));
                }
                all.insert(name.clone(), Value::List(words));
            }
            let lookup = |n: &str| all.get(n).cloned();
            let bad = |what: &str, v: &Value| PlanError::BadCount {
                experiment: def.id.clone(),
                what: what.into(),
                value: v.label(),
            };
            let (repeat, repeat_max, target_cv_pct, repeat_metric, repeat_warmup) =
                match &def.workload_at(&all).repeat {
                    None => (1, 1, None, "wall_s".to_string(), 1),
                    Some(RepeatSpec::Count(v)) => {
                        let n = count(v, &lookup).ok_or_else(|| bad("workload.repeat", v))?;
                        (n, n, None, "wall_s".to_string(), 1)
                    }
                    Some(RepeatSpec::Adaptive(a)) => {
                        let min = count(&a.min, &lookup)
                            .ok_or_else(|| bad("workload.repeat.min", &a.min))?;
                        let max = count(&a.max, &lookup)
                            .ok_or_else(|| bad("workload.repeat.max", &a.max))?;
                        (
                            min,
                            max.max(min),
                            Some(a.target_cv),
                            a.metric.clone().unwrap_or_else(|| "wall_s".into()),
                            a.warmup.unwrap_or(1),
                        )
                    }
                };
            let replicates = match &def.workload_at(&all).replicates {
                None => 1,
                Some(v) => count(v, &lookup).ok_or_else(|| bad("workload.replicates", v))?,
            };
            let mut devices = Vec::new();
            for (name, spec) in &def.devices {
                let size_text = Template::parse(&spec.size)
                    .and_then(|t| t.render(&lookup))
                    .map(|w| w.join(" "))
                    .map_err(|m| PlanError::BadSize {
                        experiment: def.id.clone(),
                        device: name.clone(),
                        message: m.to_string(),
                    })?;
                let size_bytes = parse_size(&size_text).map_err(|m| PlanError::BadSize {
                    experiment: def.id.clone(),
                    device: name.clone(),
                    message: m.to_string(),
                })?;
                let medium = match &spec.medium {
                    Some(m) => Some(m.resolve(&lookup).map_err(|m| PlanError::BadMedium {
                        experiment: def.id.clone(),
                        device: name.clone(),
                        message: m.to_string(),
                    })?),
                    None => None,
                };
                devices.push(DevicePlan {
                    name: name.clone(),
                    size_bytes,
                    backing: spec.backing,
                    medium,
                    throttle: spec.throttle,
                });
            }
            points.push(Point {
                index: points.len(),
                id,
                matrix: combo,
                vars: all,
                repeat,
                repeat_max,
                target_cv_pct,
                repeat_metric,
                repeat_warmup,
                replicates,
                devices,
            });
        }
        if points.is_empty() {
            return Err(PlanError::Empty {
                experiment: def.id.clone(),
            });
        }
        let mut plan = Plan {
            experiment: exp.clone(),
            profile,
            overrides: applied,
            points,
            tools,
            warnings: Vec::new(),
        };
        plan.warnings = guard::check(&plan, host)?;
        Ok(plan)
    }

    /// The steps of `phase` that apply at `point` (its `when:` conditions hold).
    pub fn steps<'a>(&'a self, point: &Point, phase: Phase) -> Vec<&'a Step> {
        let def = &self.experiment.def;
        let all: Vec<&Step> = match phase {
            Phase::Setup => def.setup.iter().collect(),
            Phase::BeforeEach => def.workload_at(&point.vars).before_each.iter().collect(),
            Phase::Workload => vec![def.workload_at(&point.vars)],
            Phase::Capture => def.capture.iter().collect(),
            Phase::Teardown => def.teardown.iter().collect(),
        };
        all.into_iter()
            .filter(|s| {
                s.when
                    .iter()
                    .all(|(k, cond)| point.vars.get(k).is_some_and(|v| v.matches(cond)))
            })
            .collect()
    }

    /// Matrix axes in order (after profile and overrides).
    pub fn axes(&self) -> Vec<String> {
        self.experiment.def.matrix.keys().cloned().collect()
    }
}

/// Choose an alternative for every `tools:` entry: the `--set` command, else the first
/// choice whose program is installed and whose `requires:` hold, else the first choice.
fn resolve_tools(
    exp: &Experiment,
    vars: &IndexMap<String, Value>,
    overrides: &IndexMap<String, Vec<String>>,
    fslab: &Value,
    host: &dyn Host,
) -> IndexMap<String, ResolvedTool> {
    let mut out = IndexMap::new();
    let program_of = |first: &str| -> String {
        Template::parse(first)
            .ok()
            .map(|t| {
                t.render_partial(&|n| {
                    if n == "fslab" {
                        Some(fslab.clone())
                    } else {
                        vars.get(n).cloned()
                    }
                })
            })
            .and_then(|w| w.into_iter().next())
            .unwrap_or_else(|| first.to_string())
    };
    for (name, def) in &exp.def.tools {
        if let Some(words) = overrides.get(name) {
            let program = program_of(&words[0]);
            let found = host.which(&program).is_some();
            out.insert(
                name.clone(),
                ResolvedTool {
                    choice: None,
                    command: words.clone(),
                    program,
                    found,
                    stand_in: None,
                    notes: Vec::new(),
                },
            );
            continue;
        }
        let mut passed_over: Vec<String> = Vec::new();
        let mut not_installed: Vec<String> = Vec::new();
        let mut chosen: Option<ResolvedTool> = None;
        let mut first: Option<ResolvedTool> = None;
        for (i, choice) in def.choices.iter().enumerate() {
            let Some(words) = choice
                .command()
                .and_then(|c| c.templates().ok())
                .map(|ts| ts.into_iter().map(|t| t.raw).collect::<Vec<_>>())
            else {
                continue;
            };
            let Some(head) = words.first() else { continue };
            let program = program_of(head);
            let path = host.which(&program);
            let mut problems = Vec::new();
            if path.is_some() {
                for r in choice.requires() {
                    let mut found = Findings::default();
                    check_requirement(r, vars, host, &mut found);
                    problems.extend(found.problems);
                }
            }
            let mut notes: Vec<String> = choice.note().map(str::to_string).into_iter().collect();
            let candidate = ResolvedTool {
                choice: Some(i),
                command: words.clone(),
                program: path
                    .as_ref()
                    .map_or(program.clone(), |p| p.display().to_string()),
                found: path.is_some(),
                stand_in: choice.stand_in().map(str::to_string),
                notes: Vec::new(),
            };
            if first.is_none() {
                first = Some(candidate.clone());
            }
            if path.is_none() {
                not_installed.push(format!("`{program}`"));
                continue;
            }
            if !problems.is_empty() {
                passed_over.push(
                    problems
                        .iter()
                        .map(|p| p.message.clone())
                        .collect::<Vec<_>>()
                        .join("; "),
                );
                continue;
            }
            if !not_installed.is_empty() {
                passed_over.insert(0, format!("not installed: {}", not_installed.join(", ")));
            }
            if !passed_over.is_empty() {
                notes.push(format!("passed over: {}", passed_over.join("; ")));
            }
            chosen = Some(ResolvedTool { notes, ..candidate });
            break;
        }
        if chosen.is_none() && !not_installed.is_empty() {
            passed_over.insert(0, format!("not installed: {}", not_installed.join(", ")));
        }
        if let Some(t) = chosen.or_else(|| {
            first.map(|mut t| {
                t.notes.push(format!(
                    "no choice is available here ({})",
                    passed_over.join("; ")
                ));
                t
            })
        }) {
            out.insert(name.clone(), t);
        }
    }
    out
}

/// Check one `requires:` entry for these variables (its `tool:` may be a template),
/// looking its program up by name (used for tool choices, resolved before there are
/// points).
pub fn check_requirement(
    r: &Requirement,
    vars: &IndexMap<String, Value>,
    host: &dyn Host,
    found: &mut Findings,
) {
    check_requirement_at(r, vars, None, host, found);
}

/// What a point runs (see [`executes::executed`]) and the requiring step's own command
/// (None for an experiment-wide requirement).
pub type PointRuns<'a> = (&'a [executes::Executed], Option<&'a executes::Executed>);

/// Check one `requires:` entry at a point: a `tool:` requirement is checked against the
/// executable the point runs under that name ([`executes::runs_for`]); one for a program
/// no step of the point starts is noted and not checked. With `runs` None the name is
/// looked up as it is.
pub fn check_requirement_at(
    r: &Requirement,
    vars: &IndexMap<String, Value>,
    runs: Option<PointRuns<'_>>,
    host: &dyn Host,
    found: &mut Findings,
) {
    let why = r
        .reason
        .as_ref()
        .map(|w| format!(" ({w})"))
        .unwrap_or_default();
    if let Some(tool) = &r.tool {
        let program = Template::parse(tool)
            .ok()
            .map(|t| t.render_partial(&|n| vars.get(n).cloned()))
            .and_then(|w| w.into_iter().next())
            .unwrap_or_else(|| tool.clone());
        let min = r.min_version.as_deref().and_then(Version::parse);
        let wanted = match &min {
            Some(m) => format!("`{program}` ≥ {m}"),
            None => format!("`{program}`"),
        };
        // The executable the point will run under this name.
        let asked = match runs {
            Some((runs, own)) if !program.contains('/') => {
                match executes::runs_for(runs, own, &program) {
                    Some(e) => Some(e),
                    None => {
                        found.note(format!(
                            "requirement {wanted}{why}: no step of this point runs `{program}`; not checked"
                        ));
                        return;
                    }
                }
            }
            _ => None,
        };
        let word = asked.map_or(program.as_str(), |e| e.word.as_str());
        let Some(path) = host.which(word) else {
            check_program(word, r.package.as_deref(), host, found);
            return;
        };
        let via = match (asked, crate::tools::owner_of(&path)) {
            (Some(e), _) if e.tool.is_some() => e.via(),
            (_, Some(t)) => format!("provisioned by fslab: {} {}", t.name, t.version),
            _ => "PATH".to_string(),
        };
        if let Some(min) = &min {
            check_version(
                Wanted {
                    program: &program,
                    min,
                    package: r.package.as_deref(),
                    why: &why,
                },
                Asked {
                    path: &path,
                    via: &via,
                    given_as: asked.filter(|e| e.given).and_then(|e| e.tool.as_deref()),
                },
                host,
                found,
            );
        }
        return;
    }
    if let Some(feature) = &r.kernel {
        check_kernel(feature, &why, host, found);
    }
}

/// A step's repetition count (`times:`) at a point.
pub fn step_times(step: &Step, point: &Point) -> Option<u32> {
    match &step.times {
        None => Some(1),
        Some(v) => count(v, &|n: &str| point.vars.get(n).cloned()),
    }
}

fn count(v: &Value, lookup: &dyn Fn(&str) -> Option<Value>) -> Option<u32> {
    let resolved = match v {
        Value::Str(s) => Value::Str(Template::parse(s).ok()?.render(lookup).ok()?.join(" ")),
        other => other.clone(),
    };
    resolved
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n >= 1)
}

fn cartesian(axes: &IndexMap<String, Vec<Value>>) -> Vec<IndexMap<String, Value>> {
    let mut out = vec![IndexMap::new()];
    for (name, values) in axes {
        let mut next = Vec::with_capacity(out.len() * values.len());
        for partial in &out {
            for v in values {
                let mut p = partial.clone();
                p.insert(name.clone(), v.clone());
                next.push(p);
            }
        }
        out = next;
    }
    out
}

/// Parse `NAME=VALUE` from the command line.
pub fn parse_override(text: &str) -> Result<(String, Value), PlanError> {
    let (k, v) = text
        .split_once('=')
        .ok_or_else(|| PlanError::BadOverride(text.to_string()))?;
    let k = k.trim();
    if k.is_empty() {
        return Err(PlanError::BadOverride(text.to_string()));
    }
    Ok((k.to_string(), Value::from_cli(v)))
}

impl Experiment {
    /// The plan for `profile` (None: the default profile) with no overrides.
    pub fn plan(&self, profile: Option<&str>) -> Result<Plan, PlanError> {
        Plan::new(self, profile, &[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXP: &str = r#"
id: t
title: T
devices:
  data: { size: "{{size}}" }
vars:
  size: 512MiB
  files: 100
matrix:
  fs: [ext4, xfs]
  bs: [1024, 4096]
exclude:
  - { fs: xfs, bs: 1024 }
profiles:
  quick: { files: 10 }
  published: { files: 1000000, fs: [ext4, xfs, btrfs] }
setup:
  - run: mkfs.xfs -f {{dev.data}}
    when: { fs: xfs }
  - run: mkfs.ext4 -F -b {{bs}} {{dev.data}}
    when: { fs: [ext4] }
workload:
  run: fs_mark -d {{mnt}} -n {{files}}
  repeat: 3
"#;

    fn exp() -> Experiment {
        Experiment::from_str_named(EXP, "t.yaml").unwrap()
    }

    #[test]
    fn expands_the_product_minus_excludes() {
        let plan = Plan::new(&exp(), None, &[]).unwrap();
        assert_eq!(plan.profile.as_deref(), Some("quick"));
        let ids: Vec<&str> = plan.points.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(
            ids,
            ["fs=ext4,bs=1024", "fs=ext4,bs=4096", "fs=xfs,bs=4096"]
        );
        assert_eq!(plan.points[0].vars["files"], Value::Int(10));
        assert_eq!(plan.points[0].repeat, 3);
        assert_eq!(plan.points[0].devices[0].size_bytes, 512 * 1024 * 1024);
    }

    #[test]
    fn profiles_and_overrides_replace_axes_and_vars() {
        let plan = Plan::new(
            &exp(),
            Some("published"),
            &[parse_override("bs=4096").unwrap()],
        )
        .unwrap();
        let ids: Vec<&str> = plan.points.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(
            ids,
            ["fs=ext4,bs=4096", "fs=xfs,bs=4096", "fs=btrfs,bs=4096"]
        );
        assert_eq!(plan.points[0].vars["files"], Value::Int(1_000_000));
    }

    /// A workload variant is the whole workload of the points its `when:` selects: its
    /// command, `before_each`, `repeat` and `replicates`; elsewhere `workload:` runs.
    #[test]
    fn a_workload_variant_replaces_the_workload_where_its_when_holds() {
        let text = EXP.replace(
            "  repeat: 3\n",
            "  repeat: 3\nworkload_variants:\n  - run: fslab files truncate {{mnt}} --count {{files}} --size 4k\n    when: { fs: xfs }\n    repeat: 2\n    replicates: 4\n    before_each:\n      - sync: true\n",
        );
        let exp = Experiment::from_str_named(&text, "t.yaml").unwrap();
        let plan = Plan::new(&exp, None, &[]).unwrap();
        let (ext4, xfs) = (&plan.points[0], &plan.points[2]);
        let run = |p: &Point| match &plan.steps(p, Phase::Workload)[0].run {
            Some(crate::spec::CommandSpec::Line(l)) => l.clone(),
            other => panic!("{other:?}"),
        };
        assert!(run(ext4).starts_with("fs_mark"));
        assert!(run(xfs).starts_with("fslab files truncate"));
        assert_eq!((ext4.repeat, ext4.replicates), (3, 1));
        assert_eq!((xfs.repeat, xfs.replicates), (2, 4));
        assert!(plan.steps(ext4, Phase::BeforeEach).is_empty());
        assert_eq!(plan.steps(xfs, Phase::BeforeEach).len(), 1);
    }

    #[test]
    fn when_selects_steps() {
        let plan = Plan::new(&exp(), None, &[]).unwrap();
        let xfs = &plan.points[2];
        let steps = plan.steps(xfs, Phase::Setup);
        assert_eq!(steps.len(), 1);
        assert!(
            matches!(&steps[0].run, Some(crate::spec::CommandSpec::Line(l)) if l.starts_with("mkfs.xfs"))
        );
    }

    #[test]
    fn bad_profile_and_unknown_override_are_errors() {
        assert!(matches!(
            Plan::new(&exp(), Some("nope"), &[]),
            Err(PlanError::UnknownProfile { .. })
        ));
        let err = Plan::new(&exp(), None, &[parse_override("file=3").unwrap()]).unwrap_err();
        assert!(err.to_string().contains("did you mean `files`"), "{err}");
    }
}
