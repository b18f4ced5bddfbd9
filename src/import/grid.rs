//! Runs of the same commands that vary two or more things, each on its own: `dbench -D
//! /xfs 32`, `-D /xfs 1`, `-D /ext4 32`, `-D /ext4 1` are the points of two axes, `fs:
//! [xfs, ext4]` × `value: [32, 1]`, not four variants. The words that change together
//! (`mkfs.xfs` and `/mnt/xfs` in one run, `mkfs.ext4` and `/mnt/ext4` in another) are one
//! axis; the axes must make a full grid (every combination run once). A word that names a
//! filesystem (`/xfs`, `/mnt/ext4/t`, `mkfs.xfs`) makes the axis `fs` whose values are the
//! filesystems, the word written with `${fs}`; a `key=value` word names its axis after the
//! key, a flag's value after the flag. A word of an axis that cannot be written with its
//! variable (`-f` with `mkfs.xfs`, `-F` with `mkfs.ext4`) makes its command one per value
//! of that axis, in a `case` branch over it (each step with its `when:`).

use super::filesystems::named_in;
use super::naming::is_device;
use super::programs::last_positional;
use super::shell::{unquote, CaseArm, Cmd, Loop, LoopKind, Node};

/// One axis of the grid: the words (command, word) that change with it, its name and
/// the value each run has.
struct Factor {
    cells: Vec<(usize, usize)>,
    name: String,
    labels: Vec<String>,
}

/// Which run each run is like in `vals` (the first run with the same value).
fn signature(vals: &[String]) -> Vec<usize> {
    vals.iter()
        .map(|v| vals.iter().position(|u| u == v).unwrap_or(0))
        .collect()
}

/// `v` with the whole-word occurrences of `label` written as `${name}`; None when it has
/// none.
fn template(v: &str, label: &str, name: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = v;
    let mut any = false;
    while let Some(i) = rest.find(label) {
        let before = rest[..i].chars().last();
        let after = rest[i + label.len()..].chars().next();
        let edge = |c: Option<char>| c.is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_');
        out.push_str(&rest[..i]);
        if edge(before) && edge(after) {
            out.push_str(&format!("${{{name}}}"));
            any = true;
        } else {
            out.push_str(label);
        }
        rest = &rest[i + label.len()..];
    }
    out.push_str(rest);
    any.then_some(out)
}

/// A word that names what a command acts on and no filesystem: a device, or an
/// absolute path (other disks and directories of the post's machine are no axis).
fn is_target(w: &str) -> bool {
    let v = w.rsplit_once('=').map_or(w, |(_, v)| v);
    is_device(v) || (v.starts_with('/') && v.len() > 1 && named_in(v).is_none())
}

/// The name and the runs' values of an axis whose words are `vals` (per cell, per run):
/// `fs` when each run's words name one filesystem, else a `key=` they share, else the
/// flag before them, else `value`.
fn name_axis(
    cells: &[(usize, usize)],
    vals: &[Vec<String>],
    runs: &[Vec<&Cmd>],
) -> (String, Vec<String>) {
    let count = runs.len();
    // a filesystem: one cell names one per run, each value its own
    for v in vals {
        let fs: Option<Vec<&str>> = v.iter().map(|w| named_in(w)).collect();
        if let Some(fs) = fs {
            if signature(&fs.iter().map(|s| s.to_string()).collect::<Vec<_>>()) == signature(v) {
                return ("fs".into(), fs.into_iter().map(str::to_string).collect());
            }
        }
    }
    let ok = |n: &str| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    for v in vals {
        if let Some((k, _)) = v[0].split_once('=') {
            if v.iter().all(|w| w.starts_with(&format!("{k}="))) {
                let name = k.trim_start_matches('-').replace('-', "_");
                if ok(&name) {
                    return (
                        name,
                        v.iter().map(|w| w[k.len() + 1..].to_string()).collect(),
                    );
                }
            }
        }
    }
    for ((i, w), v) in cells.iter().zip(vals) {
        let prev: Vec<&str> = (0..count)
            .filter_map(|k| runs[k][*i].words.get(w.wrapping_sub(1)).map(String::as_str))
            .collect();
        if *w > 1
            && prev.len() == count
            && prev.iter().all(|p| *p == prev[0])
            && prev[0].starts_with('-')
        {
            let name = prev[0].trim_start_matches('-').replace('-', "_");
            if ok(&name) {
                return (name, v.clone());
            }
        }
    }
    // the last word of a benchmark whose last argument has a name (dbench's clients)
    for ((i, w), v) in cells.iter().zip(vals) {
        let c = runs[0][*i];
        let program = c.words.get(c.program_index()).map(|p| unquote(p));
        if *w + 1 == c.words.len() {
            if let Some(name) = program.as_deref().and_then(last_positional) {
                return (name.into(), v.clone());
            }
        }
    }
    ("value".into(), vals[0].clone())
}

/// The grid of axes the runs make (`runs[k]`: the commands of run `k`, alike in
/// programs); `head` says where the runs are. None when the changed words are not a
/// full grid of at least two axes (one axis of filesystems is enough), or name other
/// disks and directories only.
pub(super) fn grid(runs: &[Vec<&Cmd>], head: &str) -> Option<Loop> {
    let count = runs.len();
    let period = runs.first()?.len();
    let differ: Vec<usize> = (0..period)
        .filter(|&i| runs.iter().any(|r| r[i].words != runs[0][i].words))
        .collect();
    if differ.is_empty() {
        return None;
    }
    let mut cells: Vec<(usize, usize)> = Vec::new();
    for &i in &differ {
        let n = runs[0][i].words.len();
        if runs.iter().any(|r| r[i].words.len() != n) {
            return None;
        }
        cells.extend(
            (0..n)
                .filter(|&w| runs.iter().any(|r| r[i].words[w] != runs[0][i].words[w]))
                .map(|w| (i, w)),
        );
    }
    let value = |(i, w): (usize, usize)| -> Vec<String> {
        runs.iter().map(|r| unquote(&r[i].words[w])).collect()
    };
    // the cells that change together are one axis
    // (the runs' signature, the cells that have it)
    type Group = (Vec<usize>, Vec<(usize, usize)>);
    let mut groups: Vec<Group> = Vec::new();
    for &c in &cells {
        let s = signature(&value(c));
        match groups.iter_mut().find(|(g, _)| *g == s) {
            Some(g) => g.1.push(c),
            None => groups.push((s, vec![c])),
        }
    }
    let mut factors: Vec<Factor> = Vec::new();
    for (_, cs) in groups {
        let vals: Vec<Vec<String>> = cs.iter().map(|&c| value(c)).collect();
        let (name, labels) = name_axis(&cs, &vals, runs);
        if name != "fs" && vals.iter().flatten().all(|w| is_target(w)) {
            return None;
        }
        factors.push(Factor {
            cells: cs,
            name,
            labels,
        });
    }
    if factors.len() < 2 && factors.iter().all(|f| f.name != "fs") {
        return None;
    }
    // distinct names (`value`, `value_2`)
    for i in 1..factors.len() {
        let base = factors[i].name.clone();
        let mut n = 2;
        while factors[..i].iter().any(|f| f.name == factors[i].name) {
            factors[i].name = format!("{base}_{n}");
            n += 1;
        }
    }
    // a full grid: every combination of the axes' values run once
    let distinct = |f: &Factor| {
        let mut d: Vec<&String> = Vec::new();
        for l in &f.labels {
            if !d.contains(&l) {
                d.push(l);
            }
        }
        d.into_iter().cloned().collect::<Vec<String>>()
    };
    let product: usize = factors.iter().map(|f| distinct(f).len()).product();
    let mut combos: Vec<Vec<&String>> = (0..count)
        .map(|k| factors.iter().map(|f| &f.labels[k]).collect())
        .collect();
    combos.sort();
    combos.dedup();
    if product != count || combos.len() != count {
        return None;
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    };
    if factors
        .iter()
        .any(|f| f.labels.iter().any(|l| !label_ok(l)))
    {
        return None;
    }
    // the slowest-changing axis outermost, as the post ran them
    let changes = |f: &Factor| {
        (1..count)
            .filter(|&k| f.labels[k] != f.labels[k - 1])
            .count()
    };
    factors.sort_by_key(changes);
    let line = runs[0][0].line;
    // each command: its words written with the axes' variables; a word that cannot be
    // makes the command one per value of its axis
    let mut body: Vec<Node> = Vec::new();
    for (i, shared) in runs[0].iter().enumerate() {
        if !differ.contains(&i) {
            body.push(Node::Cmd((*shared).clone()));
            continue;
        }
        let mut split: Option<usize> = None;
        for (fi, f) in factors.iter().enumerate() {
            for &(_, w) in f.cells.iter().filter(|(ci, _)| *ci == i) {
                let t0 = template(&unquote(&runs[0][i].words[w]), &f.labels[0], &f.name);
                let same = (0..count).all(|k| {
                    template(&unquote(&runs[k][i].words[w]), &f.labels[k], &f.name)
                        .is_some_and(|t| Some(&t) == t0.as_ref())
                });
                if !same {
                    if split.is_some_and(|s| s != fi) {
                        return None;
                    }
                    split = Some(fi);
                }
            }
        }
        let write = |k: usize, skip: Option<usize>| -> Cmd {
            let mut c = runs[k][i].clone();
            for (fi, f) in factors.iter().enumerate() {
                if Some(fi) == skip {
                    continue;
                }
                for &(_, w) in f.cells.iter().filter(|(ci, _)| *ci == i) {
                    if let Some(t) = template(&unquote(&c.words[w]), &f.labels[k], &f.name) {
                        c.words[w] = t;
                    }
                }
            }
            c
        };
        match split {
            None => body.push(Node::Cmd(write(0, None))),
            Some(fi) => {
                let f = &factors[fi];
                let values = distinct(f);
                for (j, v) in values.iter().enumerate() {
                    let k = f.labels.iter().position(|l| l == v).unwrap_or(0);
                    let mut c = write(k, Some(fi));
                    c.case.get_or_insert_with(|| {
                        Box::new(CaseArm {
                            line,
                            arm_line: c.line,
                            word: format!("${}", f.name),
                            patterns: vec![v.clone()],
                            earlier: values[..j].to_vec(),
                            unless: Vec::new(),
                        })
                    });
                    body.push(Node::Cmd(c));
                }
            }
        }
    }
    let names: Vec<String> = factors.iter().map(|f| format!("`{}`", f.name)).collect();
    let mut out: Option<Loop> = None;
    for f in factors.iter().rev() {
        let inner = match out.take() {
            Some(l) => vec![Node::Loop(l)],
            None => std::mem::take(&mut body),
        };
        out = Some(Loop {
            line,
            var: f.name.clone(),
            kind: LoopKind::List(distinct(f)),
            head: format!("guess: {head}: a grid of {}", names.join(" × ")),
            body: inner,
            timed: false,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::grid;
    use crate::import::shell::{Cmd, LoopKind, Node};

    fn cmd(l: &str) -> Cmd {
        Cmd::new(1, l.split(' ').map(String::from).collect())
    }

    #[test]
    fn filesystems_and_clients_are_two_axes() {
        let c: Vec<Cmd> = [
            "dbench -s -D /xfs 32",
            "dbench -s -D /xfs 1",
            "dbench -s -D /ext4 32",
            "dbench -s -D /ext4 1",
        ]
        .iter()
        .map(|l| cmd(l))
        .collect();
        let runs: Vec<Vec<&Cmd>> = c.iter().map(|x| vec![x]).collect();
        let l = grid(&runs, "runs").unwrap();
        assert_eq!(l.var, "fs");
        assert_eq!(l.kind, LoopKind::List(vec!["xfs".into(), "ext4".into()]));
        let Node::Loop(inner) = &l.body[0] else {
            panic!("{:?}", l.body)
        };
        assert_eq!(inner.var, "clients");
        assert_eq!(inner.kind, LoopKind::List(vec!["32".into(), "1".into()]));
        let Node::Cmd(d) = &inner.body[0] else {
            panic!()
        };
        assert_eq!(d.words, ["dbench", "-s", "-D", "/${fs}", "${clients}"]);
    }

    #[test]
    fn a_word_that_cannot_be_written_with_the_axis_makes_one_command_per_value() {
        let c: Vec<Cmd> = [
            "mkfs.xfs -f /dev/sdb",
            "fs_mark -d /mnt/xfs/t -t 4",
            "mkfs.xfs -f /dev/sdb",
            "fs_mark -d /mnt/xfs/t -t 16",
            "mkfs.ext4 -F /dev/sdb",
            "fs_mark -d /mnt/ext4/t -t 4",
            "mkfs.ext4 -F /dev/sdb",
            "fs_mark -d /mnt/ext4/t -t 16",
        ]
        .iter()
        .map(|l| cmd(l))
        .collect();
        let runs: Vec<Vec<&Cmd>> = c.chunks(2).map(|r| r.iter().collect()).collect();
        let l = grid(&runs, "runs").unwrap();
        assert_eq!(l.var, "fs");
        let Node::Loop(inner) = &l.body[0] else {
            panic!()
        };
        assert_eq!(inner.var, "t");
        let cmds: Vec<&Cmd> = inner
            .body
            .iter()
            .filter_map(|n| match n {
                Node::Cmd(c) => Some(c),
                _ => None,
            })
            .collect();
        assert_eq!(cmds.len(), 3);
        assert_eq!(cmds[0].words, ["mkfs.xfs", "-f", "/dev/sdb"]);
        assert_eq!(cmds[0].case.as_ref().unwrap().patterns, ["xfs"]);
        assert_eq!(cmds[1].words, ["mkfs.ext4", "-F", "/dev/sdb"]);
        assert_eq!(
            cmds[2].words,
            ["fs_mark", "-d", "/mnt/${fs}/t", "-t", "${t}"]
        );
    }

    #[test]
    fn no_grid_when_a_combination_is_missing_or_only_disks_change() {
        let c: Vec<Cmd> = [
            "dbench -D /xfs 32",
            "dbench -D /xfs 1",
            "dbench -D /ext4 32",
        ]
        .iter()
        .map(|l| cmd(l))
        .collect();
        let runs: Vec<Vec<&Cmd>> = c.iter().map(|x| vec![x]).collect();
        assert!(grid(&runs, "runs").is_none());
        let c: Vec<Cmd> = ["dd if=/dev/sda bs=1M", "dd if=/dev/sdb bs=1M"]
            .iter()
            .map(|l| cmd(l))
            .collect();
        let runs: Vec<Vec<&Cmd>> = c.iter().map(|x| vec![x]).collect();
        assert!(grid(&runs, "runs").is_none());
        // one axis that is no filesystem: the other rules'
        let c: Vec<Cmd> = ["dbench -D /srv 32", "dbench -D /srv 1"]
            .iter()
            .map(|l| cmd(l))
            .collect();
        let runs: Vec<Vec<&Cmd>> = c.iter().map(|x| vec![x]).collect();
        assert!(grid(&runs, "runs").is_none());
    }
}
