//! A reply that quotes a script and shows another (the replier's own, modified, or a
//! later version quoted less deep): the draft is the least-quoted script (the replier's
//! own when it is unquoted), and the other scripts' commands are written under it as
//! comments, each with its line, never run and never dropped silently. A script here is
//! the command blocks at one quote depth; it counts when it holds a command that can be a
//! workload (a timed command, a benchmark, a program that is not preparation).

use super::commands::Block;
use super::programs::Program;
use super::shell::walk;
use super::step::Step;
use super::{Note, NoteKind};

/// The command blocks at one quote depth.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    pub depth: usize,
    /// The lines of its first and last command.
    pub first: usize,
    pub last: usize,
    /// Its commands as written (`time` kept), with their lines.
    pub commands: Vec<(usize, String)>,
}

impl Script {
    fn of(blocks: &[&Block]) -> Script {
        let mut commands = Vec::new();
        for b in blocks {
            walk(&b.nodes, &mut Vec::new(), &mut |c, _| {
                let time = if c.timed { "time " } else { "" };
                commands.push((c.line, format!("{time}{}", c.text())));
            });
        }
        let first = blocks.iter().map(|b| b.line).min().unwrap_or(0);
        let last = commands.iter().map(|c| c.0).max().unwrap_or(first);
        Script {
            depth: blocks.first().map_or(0, |b| b.depth),
            first,
            last,
            commands,
        }
    }

    /// "lines 20–31, unquoted", "lines 37–51, quoted 4 deep".
    pub fn describe(&self) -> String {
        let q = match self.depth {
            0 => "unquoted: the replier's own".to_string(),
            d => format!("quoted {d} deep"),
        };
        format!("lines {}–{}, {q}", self.first, self.last)
    }
}

/// The script the draft is made of and the others the post shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    pub kept: Script,
    /// Each other script with only the commands the kept one does not run.
    pub others: Vec<Script>,
}

/// Whether blocks hold a command that can be a workload.
fn holds_a_workload(blocks: &[&Block]) -> bool {
    let mut found = false;
    for b in blocks {
        walk(&b.nodes, &mut Vec::new(), &mut |c, _| {
            let program = c.program();
            found |= c.timed || !(program.is_setup() || matches!(program, Program::Script(_)));
        });
    }
    found
}

/// Keep the least-quoted script when the post shows scripts at two or more quote depths;
/// the blocks of the others leave `blocks` and come back as [`Split::others`]. Blocks at a
/// depth that holds no workload (a `# uname -r` of the replier's) stay.
pub fn prefer<'a>(
    blocks: Vec<&'a Block>,
    notes: &mut Vec<Note>,
) -> (Vec<&'a Block>, Option<Split>) {
    let mut depths: Vec<usize> = blocks.iter().map(|b| b.depth).collect();
    depths.sort_unstable();
    depths.dedup();
    let at =
        |d: usize| -> Vec<&'a Block> { blocks.iter().copied().filter(|b| b.depth == d).collect() };
    let scripts: Vec<usize> = depths
        .into_iter()
        .filter(|d| holds_a_workload(&at(*d)))
        .collect();
    let [kept_depth, ..] = scripts[..] else {
        return (blocks, None);
    };
    if scripts.len() < 2 {
        return (blocks, None);
    }
    let kept = Script::of(&at(kept_depth));
    let others: Vec<Script> = scripts[1..]
        .iter()
        .map(|d| {
            let mut s = Script::of(&at(*d));
            s.commands
                .retain(|(_, text)| !kept.commands.iter().any(|(_, k)| k == text));
            s
        })
        .collect();
    for o in &others {
        notes.push(Note::new(
            o.first,
            NoteKind::Unmapped,
            &format!(
                "another script of the post ({}), not run: the draft is the least-quoted one ({}); its {} command(s) that the draft does not run are written under the draft as comments",
                o.describe(),
                kept.describe(),
                o.commands.len()
            ),
        ));
    }
    let kept_blocks = blocks
        .into_iter()
        .filter(|b| !scripts[1..].contains(&b.depth))
        .collect();
    (kept_blocks, Some(Split { kept, others }))
}

fn why(split: &Split) -> String {
    let others: Vec<String> = split
        .others
        .iter()
        .map(|o| format!("the other at {}", o.describe()))
        .collect();
    format!(
        "the workload is the least-quoted script's ({}); {}, is written at the end as comments",
        split.kept.describe(),
        others.join(", ")
    )
}

/// Say at the workload which script it comes from and where the others are.
pub fn say(split: Option<&Split>, workload: Option<&Step>, notes: &mut Vec<Note>) {
    if let (Some(split), Some(w)) = (split, workload) {
        notes.push(Note::new(w.line, NoteKind::Guess, &why(split)));
    }
}

/// The `# guess:` comment above `workload:`.
pub fn header(split: Option<&Split>) -> String {
    split.map_or(String::new(), |s| format!("# guess: {}\n", why(s)))
}

/// The other scripts as YAML comments.
pub fn comments(split: Option<&Split>) -> String {
    let mut y = String::new();
    for o in split.map_or(&[][..], |s| &s.others[..]) {
        y.push_str(&format!(
            "\n# guess: another script of the post ({}), not run: the draft is the least-quoted one\n# ({}). Its commands that the draft does not run:\n",
            o.describe(),
            split.map(|s| s.kept.describe()).unwrap_or_default()
        ));
        for (line, text) in &o.commands {
            y.push_str(&format!("#   line {line}: {}\n", text.replace('\n', " ")));
        }
    }
    y
}
