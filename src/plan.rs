//! Matrix expansion: experiment × profile × `--set` overrides → points. Runs nothing.

use crate::spec::{parse_size, Backing, Experiment, Step, Template, Value};
use indexmap::IndexMap;
use serde::Serialize;

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
    #[error("{experiment}: every point of the matrix is excluded; nothing to run")]
    Empty { experiment: String },
}

/// One device a point needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DevicePlan {
    pub name: String,
    pub size_bytes: u64,
    pub backing: Backing,
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
    pub repeat: u32,
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
}

impl Plan {
    /// Expand `exp` for `profile` (None: the experiment's default) and `overrides`.
    pub fn new(
        exp: &Experiment,
        profile: Option<&str>,
        overrides: &[(String, Value)],
    ) -> Result<Plan, PlanError> {
        let def = &exp.def;
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
            if !apply(k, v) {
                let known: Vec<&str> = def
                    .matrix
                    .keys()
                    .chain(def.vars.keys())
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
            let lookup = |n: &str| all.get(n).cloned();
            let repeat_value = def.workload.repeat.clone().unwrap_or(Value::Int(1));
            let repeat = count(&repeat_value, &lookup).ok_or_else(|| PlanError::BadCount {
                experiment: def.id.clone(),
                what: "workload.repeat".into(),
                value: repeat_value.label(),
            })?;
            let mut devices = Vec::new();
            for (name, spec) in &def.devices {
                let size_text = Template::parse(&spec.size)
                    .and_then(|t| t.render(&lookup))
                    .map(|w| w.join(" "))
                    .map_err(|m| PlanError::BadSize {
                        experiment: def.id.clone(),
                        device: name.clone(),
                        message: m,
                    })?;
                let size_bytes = parse_size(&size_text).map_err(|m| PlanError::BadSize {
                    experiment: def.id.clone(),
                    device: name.clone(),
                    message: m,
                })?;
                devices.push(DevicePlan {
                    name: name.clone(),
                    size_bytes,
                    backing: spec.backing,
                });
            }
            points.push(Point {
                index: points.len(),
                id,
                matrix: combo,
                vars: all,
                repeat,
                devices,
            });
        }
        if points.is_empty() {
            return Err(PlanError::Empty {
                experiment: def.id.clone(),
            });
        }
        Ok(Plan {
            experiment: exp.clone(),
            profile,
            overrides: applied,
            points,
        })
    }

    /// The steps of `phase` that apply at `point` (its `when:` conditions hold).
    pub fn steps<'a>(&'a self, point: &Point, phase: Phase) -> Vec<&'a Step> {
        let def = &self.experiment.def;
        let all: Vec<&Step> = match phase {
            Phase::Setup => def.setup.iter().collect(),
            Phase::BeforeEach => def.workload.before_each.iter().collect(),
            Phase::Workload => vec![&def.workload],
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

impl Plan {
    /// Run this plan (see [`crate::run::run`]).
    pub fn run(
        &self,
        opts: &crate::run::RunOptions,
    ) -> Result<crate::store::Bundle, crate::run::RunError> {
        crate::run::run(self, opts)
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
