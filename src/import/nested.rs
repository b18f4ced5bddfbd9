//! Nested counting loops (`for i in `seq 1 1000`; do for j in `seq 1 10`; do mkdir
//! cg_"${i}"_"${j}"`): the command runs the product of the counts. A step's `{{i}}` counts
//! one loop only, so when the command uses a variable of the loops, the draft keeps the
//! post's loops around it in one `sh -c` step; when it uses none, the step gets
//! `times:` with the product. For the timed workload, the loops outside the timed region
//! (`for r in 1 2 3; do time for i in …`) count its `repeat:` instead ([`split`]).

use super::shell::{Loop, LoopKind};
use super::step::{Action, Times};

/// What nested counting loops make of one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Nest {
    /// No loop variable in the command: `times:` the product of the counts.
    Times(u64),
    /// The command uses a loop variable: the loops, kept as a shell loop.
    Script,
}

/// The counting loops (`{A..B}`, `seq`, `for ((…))`) around a command, outermost first.
fn counting<'a>(loops: &[&'a Loop]) -> Vec<&'a Loop> {
    loops
        .iter()
        .copied()
        .filter(|lp| matches!(lp.kind, LoopKind::Range(..) | LoopKind::Count(_)))
        .collect()
}

fn count(lp: &Loop) -> u64 {
    match lp.kind {
        LoopKind::Range(a, b) => u64::try_from((b - a + 1).max(0)).unwrap_or(0),
        LoopKind::Count(n) => n,
        _ => 0,
    }
}

/// Does a word use `$var` or `${var}`?
pub fn uses(word: &str, var: &str) -> bool {
    if word.contains(&format!("${{{var}}}")) {
        return true;
    }
    let needle = format!("${var}");
    word.match_indices(&needle).any(|(at, _)| {
        !word[at + needle.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// Two or more counting loops around a command with `words`: how the draft repeats it.
pub fn nest(loops: &[&Loop], words: &[String]) -> Option<Nest> {
    let counted = counting(loops);
    if counted.len() < 2 {
        return None;
    }
    let used = counted
        .iter()
        .any(|lp| words.iter().any(|w| uses(w, &lp.var)));
    if used {
        return Some(Nest::Script);
    }
    counted
        .iter()
        .try_fold(1u64, |acc, lp| acc.checked_mul(count(lp)))
        .map(Nest::Times)
}

/// The post's counting loops around `command`, as one shell script.
pub fn script(loops: &[&Loop], command: &str) -> String {
    let counted = counting(loops);
    let mut s = String::new();
    for lp in &counted {
        let (a, b) = match lp.kind {
            LoopKind::Range(a, b) => (a, b),
            // `for ((i=0;i<N;i++))`, `seq N`: the loop's own count, from 0
            _ => (0, i64::try_from(count(lp)).unwrap_or(i64::MAX) - 1),
        };
        s.push_str(&format!("for {} in $(seq {a} {b}); do ", lp.var));
    }
    s.push_str(command);
    for _ in &counted {
        s.push_str("; done");
    }
    s
}

/// `times` counted by `lp` (the loop whose variable is the step's `{{i}}`): `for i in
/// $(seq 1 1000)` or `{1..1000}` naming `cg_$i` runs `{{i}}` from 1, as the post named them.
pub fn counted(times: Option<u64>, lp: Option<&Loop>, words: &[String]) -> Option<Times> {
    let from = match lp.map(|lp| (&lp.kind, lp)) {
        Some((LoopKind::Range(a, _), lp)) if words.iter().any(|w| uses(w, &lp.var)) => *a,
        _ => 0,
    };
    times.map(|count| Times { count, from })
}

/// The counting loops around a command, split where the post's timing starts: `outer`
/// (outside the timed region: each of its runs is one timed run, so they count the
/// workload's `repeat:`) and `inner` (inside it, or all of them when the command is not
/// the timed workload: the step's `times:`, or its loops kept in `sh -c`). `for r in 1 2
/// 3; do time for i in $(seq 1 1000); do …` is `repeat: 3` over `times: 1000`.
pub fn split<'a>(loops: &[&'a Loop], timed_workload: bool, cmd_timed: bool) -> [Vec<&'a Loop>; 2] {
    let counted = counting(loops);
    if !timed_workload || !cmd_timed {
        return [Vec::new(), counted];
    }
    // the outermost timed loop starts the timed region; `time CMD` alone: no loop is in it
    let at = counted
        .iter()
        .position(|lp| lp.timed)
        .unwrap_or(counted.len());
    let inner = counted[at..].to_vec();
    let mut outer = counted;
    outer.truncate(at);
    [outer, inner]
}

/// How many times the `outer` loops run the timed region (None: no loop).
pub fn runs(outer: &[&Loop]) -> Option<u64> {
    if outer.is_empty() {
        return None;
    }
    outer
        .iter()
        .try_fold(1u64, |acc, lp| acc.checked_mul(count(lp)))
}

/// A repetition loop's variable in the workload (`for r in $(seq 1 3); do time fs_mark -d
/// /mnt/run$r`): `{{iteration}}`, which counts the timed runs from 1; a loop from 0 is a
/// `# guess:` (its values are one less).
pub fn iterate(outer: &[&Loop], action: &mut Action, comment: &mut String) {
    let heads: Vec<String> = outer.iter().map(|lp| format!("`{}`", lp.head)).collect();
    if !heads.is_empty() {
        let heads = heads.join(" and ");
        comment.push_str(&format!(
            "; each run of {heads} is one timed run (`repeat:`)"
        ));
    }
    let (Some(lp), Action::Run { command, .. }) = (outer.last(), action) else {
        return;
    };
    if !uses(command, &lp.var) {
        return;
    }
    for form in [format!("${{{}}}", lp.var), format!("${}", lp.var)] {
        *command = command.replace(&form, "{{iteration}}");
    }
    match lp.kind {
        LoopKind::Range(1, _) => {}
        _ => comment.push_str(&format!(
            "; guess: ${} → {{{{iteration}}}}, which counts from 1 (`{}` does not)",
            lp.var, lp.head
        )),
    }
}

/// The step's `times:` under `nest`.
pub fn times(nest: Option<&Nest>, times: Option<u64>) -> Option<u64> {
    match nest {
        Some(Nest::Times(n)) => Some(*n),
        Some(Nest::Script) => None,
        None => times,
    }
}

/// Under [`Nest::Script`], a command becomes `sh -c` with the post's loops around it.
pub fn wrap(nest: Option<&Nest>, loops: &[&Loop], action: &mut Action, comment: &mut String) {
    if let (
        Some(Nest::Script),
        Action::Run {
            name,
            command,
            parse,
        },
    ) = (nest, &*action)
    {
        comment.push_str("; the post's nested loops kept in `sh -c` (`{{i}}` counts one loop)");
        let argv = ["sh", "-c", &script(loops, command)].map(String::from);
        *action = Action::Words {
            name: name.clone(),
            argv: argv.to_vec(),
            parse: *parse,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lp(var: &str, kind: LoopKind) -> Loop {
        Loop {
            line: 1,
            var: var.into(),
            kind,
            head: String::new(),
            body: Vec::new(),
            timed: false,
        }
    }

    #[test]
    fn a_variable_of_the_loops_keeps_them_as_a_script() {
        let (i, j) = (
            lp("i", LoopKind::Range(1, 1000)),
            lp("j", LoopKind::Range(1, 10)),
        );
        let w = vec!["mkdir".to_string(), "cg_\"${i}\"_\"${j}\"".to_string()];
        assert_eq!(nest(&[&i, &j], &w), Some(Nest::Script));
        assert_eq!(
            script(&[&i, &j], "mkdir cg_\"${i}\"_\"${j}\""),
            "for i in $(seq 1 1000); do for j in $(seq 1 10); do mkdir cg_\"${i}\"_\"${j}\"; done; done"
        );
    }

    #[test]
    fn no_variable_multiplies_the_counts() {
        let (i, j) = (lp("i", LoopKind::Count(3)), lp("j", LoopKind::Range(1, 10)));
        let w = vec!["sync".to_string(), "$id".to_string()];
        assert_eq!(nest(&[&i, &j], &w), Some(Nest::Times(30)));
        assert_eq!(nest(&[&j], &w), None);
        assert!(!uses("$ij", "i") && uses("a$i/b", "i"));
    }
}
