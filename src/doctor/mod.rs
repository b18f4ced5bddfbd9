//! Preflight: can each point of a plan run on this machine, and if not, why?
//!
//! For every point the doctor looks at the steps that run there and checks
//! - every program a `run:` step starts is installed (else: *missing tool*, with the
//!   Debian package that provides it);
//! - every `requires:` entry that applies at the point (experiment-wide, the step's, and
//!   a `when:` of its own): `tool:` installed and at least `min_version` (else: *too old*),
//!   `kernel: xfs_rt` / `kernel: loop` / `kernel: fs:TYPE` available (else: *missing
//!   kernel feature*).
//!
//! Kernel features are read from the kernel configuration (`/boot/config-$(uname -r)` or
//! `/proc/config.gz`) and `/proc/filesystems`; when the configuration cannot be read (or
//! with [`Probe::Always`]) realtime XFS is tried for real on two small loop devices.
//! Anything the doctor cannot decide is a note, not a problem: the point runs.
//!
//! `fslab run` asks the doctor first and records unsupported points in the bundle with
//! status `unsupported` and the reason, then runs the others.

//!
//! The questions asked of the machine and the checks built on them live in
//! [`crate::host`]; the doctor applies them to every point of a plan and adds the one
//! probe that needs loop devices ([`ProbingHost`]).

mod media;
mod probe;

pub use crate::host::{
    debian_package, ConfigValue, Host, Probe, ProbeResult, Problem, ProblemKind, Version,
};
pub use probe::ProbingHost;

use crate::host::{check_program, Findings};
use crate::plan::{check_requirement_at, executes, Phase, Plan, Point};
use crate::spec::Value;
use polars::prelude::*;
use serde::Serialize;
use std::fmt;

/// The verdict for one point.
#[derive(Debug, Clone, Serialize)]
pub struct PointCheck {
    pub index: usize,
    pub id: String,
    pub problems: Vec<Problem>,
    /// What the doctor could not decide or wants known (tool choices, unknown versions).
    pub notes: Vec<String>,
}

impl PointCheck {
    pub fn runnable(&self) -> bool {
        self.problems.is_empty()
    }

    /// All problems in one line (None when the point can run).
    pub fn reason(&self) -> Option<String> {
        if self.problems.is_empty() {
            None
        } else {
            Some(
                self.problems
                    .iter()
                    .map(Problem::to_string)
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        }
    }
}

/// The doctor's verdict for a whole plan.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub experiment: String,
    pub profile: Option<String>,
    pub kernel: String,
    /// How each of the experiment's `tools:` was resolved, one line each.
    pub tools: Vec<String>,
    pub points: Vec<PointCheck>,
}

impl Report {
    pub fn runnable(&self) -> usize {
        self.points.iter().filter(|p| p.runnable()).count()
    }

    pub fn point(&self, index: usize) -> Option<&PointCheck> {
        self.points.iter().find(|p| p.index == index)
    }

    /// One row per point: `point_index`, `point_id`, `runnable`, `problems` (count),
    /// `reason`, `notes`.
    pub fn to_frame(&self) -> PolarsResult<DataFrame> {
        let idx: Vec<i64> = self.points.iter().map(|p| p.index as i64).collect();
        let ids: Vec<&str> = self.points.iter().map(|p| p.id.as_str()).collect();
        let ok: Vec<bool> = self.points.iter().map(PointCheck::runnable).collect();
        let n: Vec<i64> = self
            .points
            .iter()
            .map(|p| p.problems.len() as i64)
            .collect();
        let reason: Vec<Option<String>> = self.points.iter().map(PointCheck::reason).collect();
        let notes: Vec<String> = self.points.iter().map(|p| p.notes.join("; ")).collect();
        DataFrame::new_infer_height(vec![
            Column::new("point_index".into(), idx),
            Column::new("point_id".into(), ids),
            Column::new("runnable".into(), ok),
            Column::new("problems".into(), n),
            Column::new("reason".into(), reason),
            Column::new("notes".into(), notes),
        ])
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} (profile {}), kernel {}: {} of {} points can run here",
            self.experiment,
            self.profile.as_deref().unwrap_or("-"),
            self.kernel,
            self.runnable(),
            self.points.len()
        )?;
        for t in &self.tools {
            writeln!(f, "  tool {t}")?;
        }
        // Points with the same verdict, problems and notes are one group: its points are
        // listed, then what they share, once (the six realtime points of xfs-rt-truncate
        // share one long reason). Groups come in the order of their first point.
        let mut groups: Vec<(&PointCheck, Vec<&PointCheck>)> = Vec::new();
        for p in &self.points {
            let same = groups
                .iter()
                .position(|(g, _)| g.problems == p.problems && g.notes == p.notes);
            match same {
                Some(i) => groups[i].1.push(p),
                None => groups.push((p, vec![p])),
            }
        }
        for (first, members) in groups {
            let mark = if first.runnable() {
                "ok         "
            } else {
                "unsupported"
            };
            for (i, p) in members.iter().enumerate() {
                let mark = if i == 0 { mark } else { "           " };
                writeln!(f, "  {mark} {} [{}]", p.index, p.id)?;
            }
            for pr in &first.problems {
                writeln!(f, "      ✗ {pr}")?;
            }
            for n in &first.notes {
                writeln!(f, "      · {n}")?;
            }
        }
        Ok(())
    }
}

/// Check every point of `plan` against `host`.
pub fn check(plan: &Plan, host: &dyn Host) -> Report {
    check_by(plan, host, &|_| host)
}

/// Check each point of `plan` against the host it runs on (`host_of`: points of a
/// `kernel` axis run on several); the report's kernel is `main`'s.
pub fn check_by<'h>(
    plan: &Plan,
    main: &dyn Host,
    host_of: &dyn Fn(&Point) -> &'h dyn Host,
) -> Report {
    let def = &plan.experiment.def;
    let mut points = Vec::new();
    for point in &plan.points {
        let host = host_of(point);
        let mut found = Findings::default();
        for (name, t) in &plan.tools {
            found.note(t.short(name));
        }
        let runs = executes::executed(plan, point);
        for phase in Phase::ALL {
            for step in plan.steps(point, phase) {
                let program = step.program(&|n| point.vars.get(n).cloned());
                if let Some(program) = &program {
                    check_program(program, None, host, &mut found);
                }
                let own = program
                    .as_ref()
                    .and_then(|p| runs.iter().find(|e| &e.word == p));
                for r in step.requires.iter().filter(|r| r.applies(&point.vars)) {
                    check_requirement_at(r, &point.vars, Some((&runs, own)), host, &mut found);
                }
            }
        }
        for r in def.requires.iter().filter(|r| r.applies(&point.vars)) {
            check_requirement_at(r, &point.vars, Some((&runs, None)), host, &mut found);
        }
        media::check(plan, point, host, &mut found);
        points.push(PointCheck {
            index: point.index,
            id: point.id.clone(),
            problems: found.problems,
            notes: found.notes,
        });
    }
    Report {
        experiment: plan.experiment.id().to_string(),
        profile: plan.profile.clone(),
        kernel: main.kernel_release(),
        tools: plan.tools.iter().map(|(n, t)| t.describe(n)).collect(),
        points,
    }
}

/// The value a tool variable takes at a point, as words.
pub fn tool_words(point: &Point, name: &str) -> Vec<String> {
    match point.vars.get(name) {
        Some(Value::List(items)) => items.iter().map(Value::label).collect(),
        Some(v) => vec![v.label()],
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests;
