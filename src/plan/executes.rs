//! Which executable a point really runs for a program name.
//!
//! A requirement names a program (`requires: { tool: mkfs.xfs, min_version: "6.10" }`).
//! It is checked against what the point will execute under that name:
//! - the `--set` command of a `tools:` entry whose choices run that program;
//! - else the entry's chosen alternative;
//! - else a step that starts the program itself.
//!
//! A bare name then resolves as the run resolves it: a provisioned tool
//! (`fslab tools install`) first, then `PATH`. A requirement for a program that no step
//! of the point starts is reported and not checked.

use super::{Phase, Plan, Point};
use crate::spec::Template;
use serde::Serialize;

/// A program a point starts, and the names a requirement may use for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Executed {
    /// The first word of the command as the point runs it (`mkfs.xfs`, `/path/to/script`).
    pub word: String,
    /// The `tools:` entry the command comes from (`mkfs_xfs`).
    pub tool: Option<String>,
    /// That entry was given with `--set`.
    pub given: bool,
    /// Program names this stands for: its own file name and, for a `tools:` entry, the
    /// file names of all of the entry's choices.
    pub names: Vec<String>,
}

impl Executed {
    /// How the point came to run it: `given with --set mkfs_xfs`, `chosen for mkfs_xfs`,
    /// `run by a step`.
    pub fn via(&self) -> String {
        match (&self.tool, self.given) {
            (Some(t), true) => format!("given with --set {t}"),
            (Some(t), false) => format!("chosen for {t}"),
            (None, _) => "run by a step".to_string(),
        }
    }
}

/// The file name of a program word (`/usr/sbin/mkfs.xfs` → `mkfs.xfs`).
pub fn file_name(word: &str) -> &str {
    std::path::Path::new(word)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(word)
}

/// Every program the steps of `point` start (first words known before the run).
pub fn executed(plan: &Plan, point: &Point) -> Vec<Executed> {
    let def = &plan.experiment.def;
    let look = |n: &str| point.vars.get(n).cloned();
    let mut out: Vec<Executed> = Vec::new();
    for phase in Phase::ALL {
        for step in plan.steps(point, phase) {
            let Some(word) = step.program(&look) else {
                continue;
            };
            let Some(first) = step
                .argv_templates()
                .ok()
                .and_then(|a| a.into_iter().next())
            else {
                continue;
            };
            // `{{tool}}` standing as the command's first word.
            let tool = plan
                .tools
                .keys()
                .find(|t| first.raw.trim() == format!("{{{{{t}}}}}"))
                .cloned();
            let mut names = vec![file_name(&word).to_string()];
            if let Some(t) = &tool {
                for choice in def
                    .tools
                    .get(t)
                    .map(|d| d.choices.as_slice())
                    .unwrap_or(&[])
                {
                    let head = choice
                        .command()
                        .and_then(|c| c.templates().ok())
                        .and_then(|ts| ts.into_iter().next());
                    if let Some(head) = head {
                        let w = Template::parse(&head.raw)
                            .map(|t| t.render_partial(&look))
                            .ok()
                            .and_then(|w| w.into_iter().next())
                            .unwrap_or(head.raw);
                        names.push(file_name(&w).to_string());
                    }
                }
            }
            let mut unique: Vec<String> = Vec::new();
            for n in names {
                if !unique.contains(&n) {
                    unique.push(n);
                }
            }
            let names = unique;
            let given = tool
                .as_ref()
                .and_then(|t| plan.tools.get(t))
                .is_some_and(|r| r.choice.is_none());
            let e = Executed {
                word,
                tool,
                given,
                names,
            };
            if !out.contains(&e) {
                out.push(e);
            }
        }
    }
    out
}

/// The executable the point runs for `program` (a bare name): `own` (the requiring
/// step's command) when it stands for that name; else a `tools:` entry given with
/// `--set`, else a chosen one, else a step that starts the program itself.
pub fn runs_for<'a>(
    executed: &'a [Executed],
    own: Option<&'a Executed>,
    program: &str,
) -> Option<&'a Executed> {
    let name = file_name(program);
    let stands = |e: &&Executed| e.names.iter().any(|n| n == name);
    own.filter(stands)
        .or_else(|| executed.iter().filter(stands).find(|e| e.given))
        .or_else(|| executed.iter().filter(stands).find(|e| e.tool.is_some()))
        .or_else(|| executed.iter().find(stands))
}
