//! An axis made inside one `case` branch (the runs of the same commands in a branch, a
//! loop in it): the post runs the other branches once per their own value, not once per
//! the axis's values. The format crosses every axis with every other, so the draft writes
//! an `exclude:` entry that leaves out the other branches' points at the axis's later
//! values: they run at its first value only, as often as the post runs them.

use super::axis::Axis;
use super::{Note, NoteKind};

/// One `exclude:` entry: each axis with the values it leaves out (`{ fs: [ext4], crc:
/// [1] }`), the post line of the axis and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Exclude {
    pub entries: Vec<(String, Vec<String>)>,
    pub line: usize,
    pub why: String,
}

/// What the draft knows of one command: the variables of the loops it is in, and where it
/// runs (`when: { axis: [values] }`, a `case` branch's).
pub type Use<'a> = (Vec<&'a str>, Option<&'a (String, Vec<String>)>);

/// The `exclude:` entries for the axes that only the commands of one `case`'s branches
/// vary. `rename` maps a loop's variable to its axis.
pub fn within_branches(
    uses: &[Use<'_>],
    rename: &[(String, String)],
    matrix: &[Axis],
    notes: &mut Vec<Note>,
) -> Vec<Exclude> {
    let mut out = Vec::new();
    for a in matrix.iter().filter(|a| a.values.len() > 1) {
        let vars: Vec<&str> = rename
            .iter()
            .filter(|(_, name)| *name == a.name)
            .map(|(v, _)| v.as_str())
            .collect();
        let users: Vec<&Use<'_>> = uses
            .iter()
            .filter(|(loops, _)| loops.iter().any(|v| vars.contains(v)))
            .collect();
        // every command in the axis's loop runs in a branch of one `case` over another axis
        let Some(case_axis) = users.first().and_then(|u| u.1).map(|w| &w.0) else {
            continue;
        };
        if *case_axis == a.name || !users.iter().all(|u| u.1.is_some_and(|w| w.0 == *case_axis)) {
            continue;
        }
        let mut inside: Vec<&String> = Vec::new();
        for v in users
            .iter()
            .flat_map(|u| u.1.map(|w| w.1.iter()).into_iter().flatten())
        {
            if !inside.contains(&v) {
                inside.push(v);
            }
        }
        let Some(case) = matrix.iter().find(|m| m.name == *case_axis) else {
            continue;
        };
        let others: Vec<String> = case
            .values
            .iter()
            .filter(|v| !inside.contains(v))
            .cloned()
            .collect();
        if others.is_empty() {
            continue;
        }
        let inside: Vec<&str> = inside.iter().map(|s| s.as_str()).collect();
        let why = format!(
            "the post varies `{}` only where {case_axis} is {}: the points where {case_axis} is {} run at {}={} only, as the post runs them once",
            a.name,
            inside.join(" or "),
            others.join(" or "),
            a.name,
            a.values[0]
        );
        notes.push(Note::new(
            a.line,
            NoteKind::Recognised,
            &format!("an `exclude:` entry: {why}"),
        ));
        out.push(Exclude {
            entries: vec![
                (case_axis.clone(), others),
                (a.name.clone(), a.values[1..].to_vec()),
            ],
            line: a.line,
            why,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(name: &str, values: &[&str]) -> Axis {
        Axis {
            name: name.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
            line: 3,
            why: String::new(),
        }
    }

    #[test]
    fn an_axis_inside_one_branch_excludes_the_others_later_values() {
        let matrix = [
            axis("fs", &["xfs", "ext4", "btrfs"]),
            axis("crc", &["0", "1"]),
        ];
        let rename = [
            ("fs".to_string(), "fs".to_string()),
            ("i".into(), "crc".into()),
        ];
        let xfs = ("fs".to_string(), vec!["xfs".to_string()]);
        let ext4 = ("fs".to_string(), vec!["ext4".to_string()]);
        let mut notes = Vec::new();
        // the crc loop's commands in the xfs branch, the ext4 branch's commands outside it
        let uses: Vec<Use<'_>> = vec![
            (vec!["fs", "i"], Some(&xfs)),
            (vec!["fs", "i"], Some(&xfs)),
            (vec!["fs"], Some(&ext4)),
        ];
        let ex = within_branches(&uses, &rename, &matrix, &mut notes);
        assert_eq!(
            ex[0].entries,
            [
                (
                    "fs".to_string(),
                    vec!["ext4".to_string(), "btrfs".to_string()]
                ),
                ("crc".to_string(), vec!["1".to_string()])
            ]
        );
        assert_eq!(ex.len(), 1);
        assert_eq!(notes.len(), 1);
        // a command of the loop that runs at every point: no entry
        let uses: Vec<Use<'_>> = vec![(vec!["fs", "i"], Some(&xfs)), (vec!["fs", "i"], None)];
        assert!(within_branches(&uses, &rename, &matrix, &mut notes).is_empty());
        // the loop spans both branches: no entry
        let uses: Vec<Use<'_>> = vec![
            (vec!["fs", "i"], Some(&xfs)),
            (vec!["fs", "i"], Some(&ext4)),
        ];
        let m2 = [axis("fs", &["xfs", "ext4"]), axis("crc", &["0", "1"])];
        assert!(within_branches(&uses, &rename, &m2, &mut notes).is_empty());
    }
}
