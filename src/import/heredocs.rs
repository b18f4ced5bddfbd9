//! A here-document in the draft. The experiment format runs no shell and has no step that
//! writes a file, so a command fed a here-document becomes a `run:` step as a list of words,
//! `sh -c` and the command with its here-document as the post wrote it (the delimiter
//! quoted, so that nothing is expanded twice): `cat > job.fio <<'EOF'` writes the job file
//! in the point's work directory, where the later `fio job.fio` finds it. `fio -` reading
//! its job from the here-document gets the job written to a file and named instead.

use super::naming::tool_name;
use super::shell::{Cmd, HereDoc};
use super::{Note, NoteKind};

/// What a command fed a here-document becomes in the draft.
#[derive(Debug, Clone, PartialEq)]
pub enum Rewrite {
    /// One `sh -c` step: `name` when it writes a file (`write_job_fio`), None when it is the
    /// command itself with its input.
    Script {
        name: Option<String>,
        argv: Vec<String>,
    },
    /// `fio -`: a setup step (`name`, `argv`) writing the job to a file, and the command
    /// reading it by name.
    Job {
        name: String,
        argv: Vec<String>,
        command: String,
    },
}

/// The draft's form of command `c` (its words `argv`, its draft text `command`) fed the
/// here-document `doc`, whose lines `body` writes with the draft's names; the messages
/// say what became of it.
pub fn rewrite(
    c: &Cmd,
    doc: &HereDoc,
    argv: &[String],
    command: &str,
    fio: bool,
    body: &dyn Fn(&str) -> String,
    notes: &mut Vec<Note>,
) -> Rewrite {
    if !doc.closed {
        notes.push(Note::new(
            c.line,
            NoteKind::Unmapped,
            &format!(
                "the here-document has no `{}` line: its body runs to the end of the block",
                doc.delim
            ),
        ));
    }
    let sh = |command: &str| {
        vec![
            "sh".to_string(),
            "-c".to_string(),
            script(command, doc, body),
        ]
    };
    let span = span(doc);
    let (what, out) = if let Some((file, _)) = writes_to(argv) {
        let base = file.rsplit('/').next().unwrap_or(&file);
        (
            format!("the file `{file}` the script writes, a `sh -c` step of the draft; its lines are not commands"),
            Rewrite::Script {
                name: Some(format!("write_{}", tool_name(base))),
                argv: sh(command),
            },
        )
    } else if fio {
        let file = job_file(c, doc);
        let mut words: Vec<String> = command.split(' ').map(str::to_string).collect();
        match words.iter().position(|w| w == "-") {
            Some(k) => words[k] = file.clone(),
            None => words.push(file.clone()),
        }
        (
            format!("the job `fio -` reads, written to `{file}` by a setup step and given to fio by name"),
            Rewrite::Job {
                name: format!("write_{}", tool_name(&file)),
                argv: sh(&format!("cat > {file}")),
                command: words.join(" "),
            },
        )
    } else {
        (
            format!(
                "what `{}` reads, kept in a `sh -c` step with the command",
                c.text()
            ),
            Rewrite::Script {
                name: None,
                argv: sh(command),
            },
        )
    };
    let kind = if doc.string {
        "a here-string (`<<<`, written as a here-document: `sh` has no `<<<`)"
    } else {
        "a here-document"
    };
    notes.push(Note::new(
        c.line,
        NoteKind::Recognised,
        &format!("{kind} ({span}): {what}"),
    ));
    out
}

/// Where `cat > FILE`, `cat >> FILE`, `tee [-a] FILE` write their input: the file and
/// whether it is appended to.
pub fn writes_to(argv: &[String]) -> Option<(String, bool)> {
    match argv.first().map(String::as_str) {
        Some("cat") => {
            let mut i = 1;
            while i < argv.len() {
                let a = &argv[i];
                if a == ">" || a == ">>" {
                    return argv.get(i + 1).map(|f| (f.clone(), a == ">>"));
                }
                if let Some(f) = a.strip_prefix(">>").filter(|f| !f.is_empty()) {
                    return Some((f.to_string(), true));
                }
                if let Some(f) = a.strip_prefix('>').filter(|f| !f.is_empty()) {
                    return Some((f.to_string(), false));
                }
                i += 1;
            }
            None
        }
        Some("tee") => {
            let append = argv.iter().any(|a| a == "-a" || a == "--append");
            argv.iter()
                .skip(1)
                .find(|a| !a.starts_with('-') && !a.starts_with('>'))
                .map(|f| (f.clone(), append))
        }
        _ => None,
    }
}

/// The file a `fio -` job read from a here-document is written to (in the point's work
/// directory), named after the line the job starts on.
pub fn job_file(c: &Cmd, doc: &HereDoc) -> String {
    format!("heredoc-{}.fio", doc.body.first().map_or(c.line, |b| b.0))
}

/// The `sh -c` script: `command <<'DELIM'`, the body (each line given to `line`, which
/// substitutes the draft's names), `DELIM`.
pub fn script(command: &str, doc: &HereDoc, line: &dyn Fn(&str) -> String) -> String {
    let mut s = format!("{command} <<'{}'\n", doc.delim);
    for l in doc.text() {
        s.push_str(&line(&l));
        s.push('\n');
    }
    s.push_str(&doc.delim);
    s
}

/// The lines of the post a here-document takes: `A–B`.
pub fn span(doc: &HereDoc) -> String {
    match (doc.body.first(), doc.body.last()) {
        (Some(a), Some(b)) if a.0 != b.0 => format!("lines {}–{}", a.0, b.0),
        (Some(a), _) => format!("line {}", a.0),
        _ => "no line".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::writes_to;

    #[test]
    fn files_written() {
        let w = |s: &str| writes_to(&s.split(' ').map(String::from).collect::<Vec<_>>());
        assert_eq!(w("cat > job.fio"), Some(("job.fio".into(), false)));
        assert_eq!(w("cat >>/tmp/x.fio"), Some(("/tmp/x.fio".into(), true)));
        assert_eq!(w("tee -a /etc/x"), Some(("/etc/x".into(), true)));
        assert_eq!(w("cat"), None);
        assert_eq!(w("fio -"), None);
    }
}
