//! What the draft leaves out of a post's shell, said with its line: loops whose iterations
//! could not be read, `if` branches other than `then`, shell the draft cannot express
//! (`case` it could not read, variables set per branch), functions never called.

use super::commands::Block;
use super::shell::{self, walk, Node};
use super::{Note, NoteKind};

/// Loops whose iterations could not be read, and `if` branches the draft does not keep.
pub(super) fn loops_and_branches(nodes: &[Node], notes: &mut Vec<Note>) {
    for n in nodes {
        match n {
            Node::Loop(l) => {
                if l.kind == shell::LoopKind::Unknown {
                    notes.push(Note::new(
                        l.line,
                        NoteKind::Unmapped,
                        &format!(
                            "`{}`: a loop whose iterations could not be read; its commands run once in the draft",
                            l.head
                        ),
                    ));
                }
                loops_and_branches(&l.body, notes);
            }
            Node::Else { line, head, body } => {
                let mut cmds = Vec::new();
                walk(body, &mut Vec::new(), &mut |c, _| {
                    cmds.push(format!("`{}`", c.text()))
                });
                notes.push(Note::new(
                    *line,
                    NoteKind::Unmapped,
                    &format!(
                        "the `{head}` branch is not in the draft, which keeps the `then` branch ({})",
                        if cmds.is_empty() { "no command".to_string() } else { cmds.join(", ") }
                    ),
                ));
            }
            Node::Unread { line, what, body } => {
                let mut cmds = Vec::new();
                walk(body, &mut Vec::new(), &mut |c, _| {
                    cmds.push(format!("`{}`", c.text()))
                });
                notes.push(Note::new(
                    *line,
                    NoteKind::Unmapped,
                    &if cmds.is_empty() {
                        what.clone()
                    } else {
                        format!(
                            "{what}; its commands are not in the draft ({})",
                            cmds.join(", ")
                        )
                    },
                ));
            }
            Node::Cmd(_) | Node::Assign { .. } | Node::Func { .. } => {}
        }
    }
}

/// The functions some command was inlined from, with the line of each call.
fn called(nodes: &[Node], out: &mut Vec<(String, usize)>) {
    walk(nodes, &mut Vec::new(), &mut |c, _| {
        if let Some(k) = &c.called {
            out.push((k.name.clone(), k.line));
        }
    });
}

/// The definitions in nodes (at any depth), with their lines.
fn definitions<'a>(nodes: &'a [Node], out: &mut Vec<(usize, &'a str, &'a [Node])>) {
    for n in nodes {
        match n {
            Node::Func { line, name, body } => {
                out.push((*line, name, body));
                definitions(body, out);
            }
            Node::Loop(l) => definitions(&l.body, out),
            Node::Else { body, .. } | Node::Unread { body, .. } => definitions(body, out),
            Node::Cmd(_) | Node::Assign { .. } => {}
        }
    }
}

/// Shell functions the post defines: where their bodies were inlined, or that they are
/// never called (their commands are in no step).
pub(super) fn uncalled_functions(blocks: &[Block], notes: &mut Vec<Note>) {
    let mut calls = Vec::new();
    let mut defs = Vec::new();
    for b in blocks {
        called(&b.nodes, &mut calls);
        definitions(&b.nodes, &mut defs);
    }
    for (line, name, body) in defs {
        let mut at: Vec<String> = calls
            .iter()
            .filter(|c| c.0 == name)
            .map(|c| c.1.to_string())
            .collect();
        at.dedup();
        if !at.is_empty() {
            notes.push(Note::new(
                line,
                NoteKind::Recognised,
                &format!(
                    "the shell function `{name}`: its body is inlined where it is called (line {})",
                    at.join(", line ")
                ),
            ));
            continue;
        }
        let mut cmds = Vec::new();
        walk(body, &mut Vec::new(), &mut |c, _| {
            cmds.push(format!("`{}`", c.text()))
        });
        notes.push(Note::new(
            line,
            NoteKind::Unmapped,
            &format!(
                "the shell function `{name}` is never called in the post: its commands are not in the draft ({})",
                if cmds.is_empty() { "no command".to_string() } else { cmds.join(", ") }
            ),
        ));
    }
}
