//! Where a `case` branch's commands run in the draft: the case's word is a matrix axis
//! (`for fs in xfs ext4; do case $fs in xfs) mkfs.xfs …;;`), so the branch's steps get
//! `when: { fs: [xfs] }`; or the word is a value the post sets, so the branch runs or
//! not; or the draft cannot tell, and the branch is reported.

use super::axis::Axis;
use super::shell::{unquote, var_at, CaseArm};
use super::{Note, NoteKind};

/// The points a step runs at: `when: { axis: [values] }`, None for every point.
pub type When = Option<(String, Vec<String>)>;

/// Where each command runs, given its `case` branch (None: outside any `case`), its line
/// and text: `Some(None)` everywhere, `Some(Some((axis, values)))` with `when:`, `None` not
/// at all (a branch no point selects, or one the draft cannot place: said in `notes`).
pub fn place(
    arms: &[(Option<&CaseArm>, usize, String)],
    rename: &[(String, String)],
    axes: &[Axis],
    notes: &mut Vec<Note>,
) -> Vec<Option<When>> {
    let mut out = Vec::with_capacity(arms.len());
    for (arm, line, text) in arms {
        let Some(arm) = arm else {
            out.push(Some(None));
            continue;
        };
        out.push(match resolve(arm, rename, axes) {
            Resolved::Always => Some(None),
            Resolved::When(axis, values) => {
                notes.push(Note::new(
                    *line,
                    NoteKind::Recognised,
                    &format!(
                        "`{text}` in the `{}` branch of `case {}` (line {}): a step with `when: {{ {axis}: [{}] }}`",
                        arm.head(),
                        arm.word,
                        arm.line,
                        values.join(", ")
                    ),
                ));
                Some(Some((axis, values)))
            }
            // where no branch that sets its variable runs: no point, said by the
            // command's per-branch message
            Resolved::Never(_) if !arm.unless.is_empty() => None,
            Resolved::Never(why) => {
                notes.push(Note::new(
                    *line,
                    NoteKind::Recognised,
                    &format!("`{text}` is not a step: {why}"),
                ));
                None
            }
            Resolved::Unknown(why) => {
                notes.push(Note::new(
                    *line,
                    NoteKind::Unmapped,
                    &format!("`{text}` is not in the draft: {why}"),
                ));
                None
            }
        });
    }
    out
}

/// The workload and its variants: when the timed command the draft takes as its workload
/// (`workload`, an index into `cmds`) is in a `case` branch that runs only at some points,
/// the timed commands of that `case`'s branches that run at some points, in order (the
/// workload among them): one `workload_variants` entry each, with its `when:`. Empty when
/// the workload runs at every point. Each of `cmds` is (timed, its branch, where it runs).
pub fn workload_variants(cmds: &[(bool, Option<&CaseArm>, bool)], workload: usize) -> Vec<usize> {
    let Some((true, Some(arm), true)) = cmds.get(workload).copied() else {
        return Vec::new();
    };
    cmds.iter()
        .enumerate()
        .filter(|(_, (timed, a, when))| {
            *timed && *when && a.is_some_and(|a| a.line == arm.line && a.word == arm.word)
        })
        .map(|(i, _)| i)
        .collect()
}

/// The comment on the `workload:` the spec requires beside its variants: where it runs,
/// which is nowhere when the variants' `when:` cover their axis.
pub fn variants_default(whens: &[&When], axes: &[Axis]) -> String {
    let Some(Some((axis, _))) = whens.first() else {
        return String::new();
    };
    let taken: Vec<&String> = whens
        .iter()
        .filter_map(|w| w.as_ref().filter(|w| w.0 == *axis))
        .flat_map(|w| w.1.iter())
        .collect();
    let left: Vec<&String> = axes
        .iter()
        .find(|a| a.name == *axis)
        .map(|a| a.values.iter().filter(|v| !taken.contains(v)).collect())
        .unwrap_or_default();
    if left.is_empty() {
        format!("; every point runs its branch's entry of `workload_variants` (their `when:` cover {axis}); this one is the default the format requires")
    } else {
        let left: Vec<&str> = left.iter().map(|s| s.as_str()).collect();
        format!("; guess: the post times nothing where {axis} is {}; the draft runs this there (the other points run their `workload_variants` entry)", left.join(" or "))
    }
}

/// What a branch's commands become.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved {
    /// Every point runs them (the branch matches every value of the axis, or the set value).
    Always,
    /// Only the points where the axis has one of these values: `when: { axis: [values] }`.
    When(String, Vec<String>),
    /// No point runs them, and why.
    Never(String),
    /// The draft cannot say where they run, and why.
    Unknown(String),
}

/// Resolve a branch against the draft's axes; `rename` maps shell variables to axes.
pub fn resolve(arm: &CaseArm, rename: &[(String, String)], axes: &[Axis]) -> Resolved {
    let word = unquote(&arm.word);
    let at = format!(
        "the `{}` branch (line {}) of `case {}` (line {})",
        arm.head(),
        arm.arm_line,
        arm.word,
        arm.line
    );
    if !word.contains('$') {
        return if arm.selects(&word) {
            Resolved::Always
        } else {
            Resolved::Never(format!(
                "{at}: the word is `{word}`, which the branch does not match"
            ))
        };
    }
    let chars: Vec<char> = word.chars().collect();
    let (var, len) = if chars.first() == Some(&'$') {
        var_at(&chars[1..])
    } else {
        (String::new(), 0)
    };
    if var.is_empty() || len + 1 != chars.len() {
        return Resolved::Unknown(format!(
            "{at}: the word is not one variable, so the draft cannot tell where the branch runs"
        ));
    }
    let axis = rename
        .iter()
        .find(|r| r.0 == var)
        .and_then(|r| axes.iter().find(|a| a.name == r.1));
    let Some(axis) = axis else {
        return Resolved::Unknown(format!(
            "{at}: ${var} is neither a matrix axis nor set in the post, so the draft cannot tell where the branch runs"
        ));
    };
    let values: Vec<String> = axis
        .values
        .iter()
        .filter(|v| arm.selects(v))
        .cloned()
        .collect();
    if values.is_empty() {
        Resolved::Never(format!(
            "{at}: no value of `{}` ({}) selects it",
            axis.name,
            axis.values.join(", ")
        ))
    } else if values.len() == axis.values.len() {
        Resolved::Always
    } else {
        Resolved::When(axis.name.clone(), values)
    }
}

#[cfg(test)]
mod tests {
    use super::{resolve, Resolved};
    use crate::import::axis::Axis;
    use crate::import::shell::CaseArm;

    #[test]
    fn branches_over_an_axis_a_value_and_an_unknown() {
        let axes = [Axis {
            name: "fs".into(),
            values: vec!["xfs".into(), "ext3".into(), "ext4".into()],
            line: 1,
            why: String::new(),
        }];
        let rename = [("f".to_string(), "fs".to_string())];
        let arm = |word: &str, pats: &[&str], earlier: &[&str]| CaseArm {
            line: 2,
            arm_line: 3,
            word: word.into(),
            patterns: pats.iter().map(|s| s.to_string()).collect(),
            earlier: earlier.iter().map(|s| s.to_string()).collect(),
            unless: Vec::new(),
        };
        assert_eq!(
            resolve(&arm("\"$f\"", &["ext*"], &[]), &rename, &axes),
            Resolved::When("fs".into(), vec!["ext3".into(), "ext4".into()])
        );
        assert_eq!(
            resolve(&arm("${f}", &["*"], &["ext*"]), &rename, &axes),
            Resolved::When("fs".into(), vec!["xfs".into()])
        );
        assert_eq!(
            resolve(&arm("$f", &["*"], &[]), &rename, &axes),
            Resolved::Always
        );
        assert!(matches!(
            resolve(&arm("$f", &["btrfs"], &[]), &rename, &axes),
            Resolved::Never(_)
        ));
        assert_eq!(
            resolve(&arm("xfs", &["xfs"], &[]), &rename, &axes),
            Resolved::Always
        );
        assert!(matches!(
            resolve(&arm("ext4", &["xfs"], &[]), &rename, &axes),
            Resolved::Never(_)
        ));
        assert!(matches!(
            resolve(&arm("$other", &["xfs"], &[]), &rename, &axes),
            Resolved::Unknown(_)
        ));
        assert!(matches!(
            resolve(&arm("$f-$g", &["xfs"], &[]), &rename, &axes),
            Resolved::Unknown(_)
        ));
    }
}
