//! What to check before `fslab run` (issue 41): a short list, each item with its post
//! line, of what the draft guessed (every `# guess:` of a device, an axis, a var or a
//! step), what it could not fill in (`FILL_IN`), the host paths it replaced and what it
//! left out. Written at the end of the draft ([`render`]) and printed by `fslab import` on
//! stderr, so that a user knows the edits before running it.

use super::draft::Experiment;
use super::step::{Action, Step};
use super::{Note, NoteKind};

/// One item to check: the post line it comes from (0: the post as a whole) and what.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub line: usize,
    pub what: String,
}

/// The line a comment names first (`line 79: …`, `# line 12: …`).
fn line_in(comment: &str) -> Option<usize> {
    let rest = &comment[comment.find("line ")? + 5..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The `guess:` parts of a comment (`line 3: mkfs …; guess: …`), without the word.
fn guesses(comment: &str) -> Vec<String> {
    let Some(at) = comment.find("guess:") else {
        return Vec::new();
    };
    vec![comment[at + 6..].trim().to_string()]
}

/// A step as a user would recognise it in the draft.
fn step_name(s: &Step) -> String {
    let text = match &s.action {
        Action::Run { command, .. } => command.clone(),
        Action::Words { argv, .. } => {
            // `sh -c 'cd "$1" …' sh DIR CMD…`: the command, not the wrapper
            if argv.len() > 5 && argv[0] == "sh" && argv[2].starts_with("cd ") {
                argv[5..].join(" ")
            } else {
                argv.join(" ")
            }
        }
        Action::Mount { device, .. } => format!("mount: {device}"),
        Action::Mkdir(p) => format!("mkdir: {p}"),
        Action::Sync => "sync".into(),
        Action::DropCaches => "drop_caches".into(),
        Action::Umount => "umount".into(),
    };
    let short: String = text.chars().take(60).collect();
    let more = if short.len() < text.len() { " …" } else { "" };
    let when = s
        .when
        .as_ref()
        .map(|(k, v)| format!(" (when {k}: {})", v.join(", ")))
        .unwrap_or_default();
    format!("`{short}{more}`{when}")
}

/// The list for a draft: its guesses and FILL_IN values, then the trace's guesses (host
/// paths replaced, options read) and what it did not map that no item says yet, each
/// once, in the post's order.
pub fn checks(exp: &Experiment, fallback: bool, notes: &[Note]) -> Vec<Check> {
    let mut out: Vec<Check> = Vec::new();
    if fallback {
        out.push(Check {
            line: 0,
            what: "the full draft does not load: this is the fallback, its steps are comments and its workload is a placeholder; replace with the post's timed command (see the trace)".into(),
        });
    }
    // devices, then axes, that share one reason are one item
    let grouped = |line: usize, name: String, why: String, out: &mut Vec<Check>| {
        let tail = format!(": {why}");
        match out
            .iter_mut()
            .find(|c| c.line == line && c.what.ends_with(&tail))
        {
            Some(c) => {
                let head = c.what[..c.what.len() - tail.len()].to_string();
                c.what = format!("{head}, {name}{tail}");
            }
            None => out.push(Check {
                line,
                what: format!("{name}{tail}"),
            }),
        }
    };
    for d in &exp.devices {
        if !d.size_from_post {
            grouped(
                d.line,
                format!("device `{}` ({})", d.name, d.size),
                d.why.trim_start_matches("guess: ").to_string(),
                &mut out,
            );
        }
    }
    for a in &exp.matrix {
        for g in guesses(&a.why) {
            grouped(
                a.line,
                format!("axis `{}: [{}]`", a.name, a.values.join(", ")),
                g,
                &mut out,
            );
        }
    }
    for a in &exp.candidates {
        for g in guesses(&a.why) {
            out.push(Check {
                line: a.line,
                what: format!(
                    "axis `{}: [{}]` is only a comment (the prose suggests it): {g}",
                    a.name,
                    a.values.join(", ")
                ),
            });
        }
    }
    for (name, value, why) in &exp.vars {
        let line = line_in(why).unwrap_or(0);
        if value == "FILL_IN" {
            out.push(Check {
                line,
                what: format!("var `{name}` is FILL_IN: {}", guesses(why).join("; ")),
            });
        } else {
            for g in guesses(why) {
                out.push(Check {
                    line,
                    what: format!("var `{name}: {value}`: {g}"),
                });
            }
        }
    }
    let steps = exp
        .setup
        .iter()
        .chain(exp.workload.iter())
        .chain(exp.workload_variants.iter())
        .chain(exp.capture.iter())
        .chain(exp.teardown.iter());
    for s in steps {
        for g in guesses(&s.comment) {
            out.push(Check {
                line: line_in(&s.comment).unwrap_or(s.line),
                what: format!("{}: {g}", step_name(s)),
            });
        }
    }
    // the script a reply's draft comes from (the `# guess:` above `workload:`)
    let from = super::replies::header(exp.scripts.as_ref());
    if let Some(g) = guesses(from.trim()).pop() {
        out.push(Check {
            line: exp.workload.as_ref().map_or(0, |w| w.line),
            what: format!("workload: {g}"),
        });
    }
    // the trace's own: host paths replaced, what was left out
    for n in notes.iter().filter(|n| n.kind != NoteKind::Recognised) {
        let what = n.what.trim_start_matches("guess: ");
        // what a draft item says already (the part after the last `guess:`: a matrix
        // axis's note repeats its comment), and how a filesystem was made (its mkfs step)
        let said = what.rsplit("guess: ").next().unwrap_or(what);
        let key: String = said.chars().take(40).collect();
        if out.iter().any(|c| c.what.contains(&key))
            || (n.kind == NoteKind::Guess
                && (what.starts_with("the post does not show how")
                    || what.starts_with("a matrix axis candidate")))
        {
            continue;
        }
        let not = if n.kind == NoteKind::Unmapped {
            "not carried: "
        } else {
            ""
        };
        out.push(Check {
            line: n.line,
            what: format!("{not}{what}"),
        });
    }
    out.sort_by_key(|c| c.line);
    let mut seen: Vec<(usize, String)> = Vec::new();
    out.retain(|c| {
        let k = (c.line, c.what.clone());
        let new = !seen.contains(&k);
        seen.push(k);
        new
    });
    out
}

/// The list as comments at the end of the draft; empty when there is nothing to check.
pub fn render(checks: &[Check]) -> String {
    if checks.is_empty() {
        return String::new();
    }
    let mut y = format!(
        "\n# What to check before `fslab run` ({} items: what the import guessed or could not carry, with the post's line):\n",
        checks.len()
    );
    for c in checks {
        let at = if c.line == 0 {
            "the post".to_string()
        } else {
            format!("line {}", c.line)
        };
        let one: String = c
            .what
            .chars()
            .map(|ch| if ch == '\n' { ' ' } else { ch })
            .collect();
        y.push_str(&format!("#   {at}: {one}\n"));
    }
    y
}

/// The draft `yaml` with the list of `exp`'s checks at its end (when the draft still
/// loads so: the list is comments, it always should), and the list.
pub fn finish(
    yaml: Option<String>,
    exp: Option<&Experiment>,
    fallback: bool,
    notes: &[Note],
    id: &str,
) -> (Option<String>, Vec<Check>) {
    let (Some(yaml), Some(exp)) = (yaml.clone(), exp) else {
        return (yaml, Vec::new());
    };
    let checks = checks(exp, fallback, notes);
    let with = format!("{yaml}{}", render(&checks));
    match crate::spec::Experiment::from_str_named(&with, &format!("{id}.yaml")) {
        Ok(_) => (Some(with), checks),
        Err(_) => (Some(yaml), checks),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_and_the_guess_of_a_comment() {
        assert_eq!(line_in("line 79: guess: the post …"), Some(79));
        assert_eq!(line_in("no line"), None);
        assert_eq!(guesses("line 3: mkfs; guess: the size"), ["the size"]);
        assert!(guesses("line 3: mkfs").is_empty());
        let r = render(&[Check {
            line: 4,
            what: "var `x` is FILL_IN: the post never sets it".into(),
        }]);
        assert!(
            r.contains("# What to check before `fslab run` (1 items"),
            "{r}"
        );
        assert!(r.contains("#   line 4: var `x` is FILL_IN"), "{r}");
        assert_eq!(render(&[]), "");
    }
}
