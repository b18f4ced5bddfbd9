//! A filesystem axis the prose names ("I use fio to test f2fs and ext4", "xfs vs btrfs")
//! becomes a real `fs` axis of the draft only when the post's result rows are labelled
//! by its values (`f2fs ：IOPS=41.2k`, `ext4：IOPS=3367`): then the numbers are one run
//! per filesystem, and each point makes and mounts its filesystem on a device of its own
//! (`host_paths::per_filesystem`, shared with the host paths named after filesystems) and
//! runs the workload on it (`{{mnt}}`). A filesystem the prose only mentions stays a
//! comment (`ranges`' candidate).

use super::draft::{Axis, Experiment};
use super::filesystems::is_filesystem;
use super::host_paths::per_filesystem;
use super::step::{Action, Step};
use super::workdir::run_in;
use super::{Category, Note, NoteKind, Row};

/// The first line of a measured row labelled by `value` (a setting equal to it, or having
/// it as a word).
fn labelled(rows: &[Row], value: &str) -> Option<usize> {
    rows.iter()
        .filter(|r| r.category == Category::Measurement)
        .find(|r| {
            r.settings.iter().any(|(_, v)| {
                v == value
                    || v.split(|c: char| !c.is_ascii_alphanumeric())
                        .any(|w| w == value)
            })
        })
        .map(|r| r.line)
}

/// Whether a step makes or mounts a filesystem.
fn makes_or_mounts(s: &Step) -> bool {
    match &s.action {
        Action::Mount { .. } => true,
        Action::Run { name, .. } | Action::Words { name, .. } => name == "mkfs",
        _ => false,
    }
}

/// Promote the prose's filesystem candidate to the draft's `fs` axis when the rows are
/// labelled by each of its values, the draft makes and mounts nothing of its own (the
/// post's commands say where it ran then) and its workload names no device (it measured
/// the device, not a filesystem); the candidate leaves `candidates`.
pub(super) fn promote(
    exp: &mut Experiment,
    candidates: &mut Vec<Axis>,
    rows: &[Row],
    notes: &mut Vec<Note>,
) {
    // a workload on a device (`--filename={{dev.data}}`) measured no filesystem
    let on_device = exp
        .workload
        .iter()
        .chain(exp.workload_variants.iter())
        .any(|w| match &w.action {
            Action::Run { command, .. } => command.contains("{{dev."),
            Action::Words { argv, .. } => argv.iter().any(|a| a.contains("{{dev.")),
            _ => false,
        });
    if on_device
        || exp.matrix.iter().any(|a| a.name == "fs")
        || exp.setup.iter().any(makes_or_mounts)
        || exp
            .matrix
            .iter()
            .any(|a| a.values.iter().any(|v| is_filesystem(v)))
    {
        return;
    }
    let Some(at) = candidates.iter().position(|c| {
        c.values.len() >= 2
            && c.values.iter().all(|v| is_filesystem(v))
            && c.values.iter().all(|v| labelled(rows, v).is_some())
    }) else {
        return;
    };
    let c = candidates.remove(at);
    let lines: Vec<String> = c
        .values
        .iter()
        .filter_map(|v| labelled(rows, v).map(|l| format!("`{v}` line {l}")))
        .collect();
    let why = format!(
        "guess: {}; the post's result rows are labelled by them ({})",
        c.why.trim_start_matches("guess: "),
        lines.join(", ")
    );
    exp.matrix.push(Axis {
        name: "fs".into(),
        values: c.values.clone(),
        line: c.line,
        why,
    });
    per_filesystem(exp, "fs", c.line, None, notes);
    // the workload measures the point's filesystem
    let on_mnt = |s: &Step| match &s.action {
        Action::Run { command, .. } => command.contains("{{mnt}}"),
        Action::Words { argv, .. } => argv.iter().any(|w| w.contains("{{mnt}}")),
        _ => true,
    };
    let said = format!(
        "guess: the post names no directory; the draft runs it on the point's filesystem, {{{{mnt}}}} (line {}: the `fs` axis)",
        c.line
    );
    for w in exp
        .workload
        .iter_mut()
        .chain(exp.workload_variants.iter_mut())
    {
        if !on_mnt(w) && run_in("{{mnt}}", &mut w.action) {
            w.comment.push_str(&format!("; {said}"));
            notes.push(Note::new(w.line, NoteKind::Guess, &said));
        }
    }
}
