//! The same commands run several times with several arguments changed together
//! (`run_test 1024 128` / `run_test 4096 256`, or `mkfs.xfs -b size=1k …; time fs_mark …`
//! then `mkfs.xfs -b size=4k -n size=8k …; time fs_mark …`): a loop over variants whose
//! values name them, where a command the runs share is one command and a command that
//! differs is one per variant, in a `case` branch of its own: what
//! `for variant in a b; do case $variant in a) …;; b) …;; esac; …; done` would be.

use super::{unquote, CaseArm, Cmd, Loop, LoopKind, Node};

/// The variable of a loop over variants.
pub const VARIANT: &str = "variant";

/// Names for the variants from the words only each run has (`size=1k`,
/// `size=4k -n size=8k` → `size-1k`, `size-4k_n_size-8k`); letters `a`, `b`, … when those
/// are empty, alike or long.
pub fn names(runs: &[Vec<String>]) -> Vec<String> {
    let own: Vec<Vec<&String>> = runs
        .iter()
        .map(|r| {
            r.iter()
                .filter(|w| !runs.iter().all(|o| o.contains(w)))
                .collect()
        })
        .collect();
    let mut out: Vec<String> = own
        .iter()
        .map(|ws| {
            let parts: Vec<String> = ws
                .iter()
                .map(|w| {
                    unquote(w)
                        .trim_start_matches('-')
                        .chars()
                        .map(|c| {
                            if c.is_ascii_alphanumeric() || c == '.' {
                                c
                            } else {
                                '-'
                            }
                        })
                        .collect::<String>()
                        .trim_matches('-')
                        .to_string()
                })
                .filter(|p| !p.is_empty())
                .collect();
            parts.join("_")
        })
        .collect();
    let bad = out
        .iter()
        .enumerate()
        .any(|(i, n)| n.is_empty() || n.len() > 32 || out[..i].contains(n));
    if bad {
        out = (0..runs.len())
            .map(|i| {
                let c = (b'a' + (i % 26) as u8) as char;
                if i < 26 {
                    c.to_string()
                } else {
                    format!("{c}{}", i / 26)
                }
            })
            .collect();
    }
    out
}

/// One body from the runs' bodies (alike in shape: the same nodes, commands of the same
/// programs): a node the runs share once, a node that differs once per run with its
/// [`CaseArm`] over `$variant`. None when the bodies are not alike.
pub fn merge(bodies: &[Vec<Node>], names: &[String], line: usize) -> Option<Vec<Node>> {
    merge_over(VARIANT, bodies, names, line)
}

/// [`merge`] over the loop variable `var`.
pub fn merge_over(
    var: &str,
    bodies: &[Vec<Node>],
    names: &[String],
    line: usize,
) -> Option<Vec<Node>> {
    let first = bodies.first()?;
    if bodies.iter().any(|b| b.len() != first.len()) {
        return None;
    }
    let mut out = Vec::new();
    for (i, n) in first.iter().enumerate() {
        let at: Vec<&Node> = bodies.iter().map(|b| &b[i]).collect();
        if at.iter().all(|m| alike(m, n)) {
            out.push(n.clone());
            continue;
        }
        if !at.iter().all(|m| same_shape(m, n)) {
            return None;
        }
        for (j, m) in at.iter().enumerate() {
            let arm = CaseArm {
                line,
                arm_line: line_of(m).unwrap_or(line),
                word: format!("${var}"),
                patterns: vec![names[j].clone()],
                earlier: names[..j].to_vec(),
                unless: Vec::new(),
            };
            out.push(with_arm((*m).clone(), &arm));
        }
    }
    Some(out)
}

/// The loop over the variants: `head` says where the runs are, with `guess:`.
pub fn variant_loop(body: Vec<Node>, names: Vec<String>, line: usize, head: String) -> Loop {
    Loop {
        line,
        var: VARIANT.into(),
        kind: LoopKind::List(names),
        head,
        body,
        timed: false,
    }
}

/// Whether two nodes do the same (their lines aside).
fn alike(a: &Node, b: &Node) -> bool {
    match (a, b) {
        (Node::Cmd(x), Node::Cmd(y)) => {
            x.words == y.words
                && x.timed == y.timed
                && x.heredoc.as_ref().map(|d| d.text()) == y.heredoc.as_ref().map(|d| d.text())
        }
        (Node::Loop(x), Node::Loop(y)) => {
            x.kind == y.kind
                && x.var == y.var
                && x.body.len() == y.body.len()
                && x.body.iter().zip(&y.body).all(|(p, q)| alike(p, q))
        }
        (
            Node::Assign {
                name: n1,
                value: v1,
                ..
            },
            Node::Assign {
                name: n2,
                value: v2,
                ..
            },
        ) => n1 == n2 && v1 == v2,
        _ => false,
    }
}

/// Whether two nodes are the same kind of thing (commands of one program, loops).
fn same_shape(a: &Node, b: &Node) -> bool {
    match (a, b) {
        (Node::Cmd(x), Node::Cmd(y)) => program(x) == program(y) && x.timed == y.timed,
        (Node::Loop(_), Node::Loop(_)) => true,
        _ => false,
    }
}

fn program(c: &Cmd) -> String {
    c.words
        .get(c.program_index())
        .map(|w| unquote(w))
        .unwrap_or_default()
}

fn line_of(n: &Node) -> Option<usize> {
    match n {
        Node::Cmd(c) => Some(c.line),
        Node::Loop(l) => Some(l.line),
        _ => None,
    }
}

/// The node with its commands in the branch `arm` (a command already in a branch keeps it).
fn with_arm(n: Node, arm: &CaseArm) -> Node {
    match n {
        Node::Cmd(mut c) => {
            c.case.get_or_insert_with(|| Box::new(arm.clone()));
            Node::Cmd(c)
        }
        Node::Loop(mut l) => {
            l.body = l.body.into_iter().map(|b| with_arm(b, arm)).collect();
            Node::Loop(l)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::names;

    fn w(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    #[test]
    fn variant_names_from_the_words_only_each_run_has() {
        assert_eq!(
            names(&[
                w("mkfs.xfs -f -b size=1k /dev/sdb"),
                w("mkfs.xfs -f -b size=4k -n size=8k /dev/sdb")
            ]),
            ["size-1k", "size-4k_n_size-8k"]
        );
        assert_eq!(
            names(&[w("1024 128"), w("4096 256")]),
            ["1024_128", "4096_256"]
        );
        // nothing of its own, or the same name twice: letters
        assert_eq!(names(&[w("a b"), w("a b c")]), ["a", "b"]);
    }
}
