//! Commands that label a table's rows (a wiki's `| pgbench -h … -i -s 150 benchmark |
//! done in 24.46 s | …`, under a `Command` header): each row's numbers are that command's,
//! so the commands are the post's experiment and their lines are reported ones, as a
//! command whose output stands below it (`pick::reported`). A row label is a command when
//! the header's first cell says so (`Command`, `Cmd`) and it starts with a program's
//! name, or when it starts with a program fslab knows (or a known benchmark) and goes on
//! with an option (`-s`).

use super::block::{Block, BlockKind};
use super::mail::PostLine;
use super::programs::{Program, OTHER_WORKLOADS};
use super::shell::{Cmd, Node};
use super::tables::Table;

/// Whether `label` reads as a command line (`header_says`: the header names the column
/// as commands).
fn is_command(label: &str, header_says: bool) -> bool {
    let words: Vec<&str> = label.split_whitespace().collect();
    let Some(first) = words.first() else {
        return false;
    };
    let name_like = first
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_-.+/".contains(c))
        && first.starts_with(|c: char| c.is_ascii_lowercase() || c == '/' || c == '.');
    let p = Program::of(first);
    let known = (p.is_known() && !matches!(p, Program::Util)) || OTHER_WORKLOADS.contains(first);
    let option = words[1..].iter().any(|w| w.starts_with('-') && w.len() > 1);
    name_like && option && (header_says || known)
}

/// Add the commands of the tables' row labels to `blocks` (one block per table, in the
/// post's order); their post lines (the numbers beside them report them).
pub(super) fn add(tables: &[Table], lines: &[PostLine], blocks: &mut Vec<Block>) -> Vec<usize> {
    let (new, reported) = commands(tables, lines);
    for b in new {
        let at = blocks
            .iter()
            .position(|o| o.line > b.line)
            .unwrap_or(blocks.len());
        blocks.insert(at, b);
    }
    reported
}

/// The commands of the tables' row labels as blocks (one per table), and their post
/// lines. A table counts when most of its rows with a number are labelled by commands.
fn commands(tables: &[Table], lines: &[PostLine]) -> (Vec<Block>, Vec<usize>) {
    let mut blocks = Vec::new();
    let mut reported = Vec::new();
    for t in tables {
        let header_says = t.row_axis.as_deref().is_some_and(|h| {
            matches!(
                h.trim().to_ascii_lowercase().as_str(),
                "command" | "commands" | "cmd"
            )
        });
        let measured: Vec<&(usize, String, Vec<String>)> = t
            .rows
            .iter()
            .filter(|(_, _, cells)| {
                cells
                    .iter()
                    .any(|c| c.chars().any(|ch| ch.is_ascii_digit()))
            })
            .collect();
        let cmds: Vec<Cmd> = measured
            .iter()
            .filter(|(_, label, _)| is_command(label, header_says))
            .map(|(k, label, _)| {
                Cmd::new(
                    lines[*k].n,
                    label.split_whitespace().map(str::to_string).collect(),
                )
            })
            .collect();
        if cmds.is_empty() || cmds.len() * 2 < measured.len() {
            continue;
        }
        reported.extend(cmds.iter().map(|c| c.line));
        blocks.push(Block {
            kind: BlockKind::Bare,
            line: cmds[0].line,
            depth: lines[t.rows[0].0].depth,
            nodes: cmds.into_iter().map(Node::Cmd).collect(),
        });
    }
    (blocks, reported)
}

#[cfg(test)]
mod tests {
    use super::is_command;

    #[test]
    fn a_row_label_that_is_a_command() {
        assert!(is_command("pgbench -h 127.0.0.1 -i -s 150 benchmark", true));
        assert!(is_command("fio --rw=randread --bs=4k", false));
        // prose labels, and a program's name alone
        assert!(!is_command("with -o discard", false));
        assert!(!is_command("etalon without raid", true));
        assert!(!is_command("fio", true));
        assert!(!is_command("Raid0 -s 4", true));
    }
}
