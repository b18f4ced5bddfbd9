//! The same commands run again with other arguments, one after the other at prompts or in
//! a script (`mkfs.xfs -b size=1k /dev/sdb; mount …; time fs_mark …; umount …` then
//! `mkfs.xfs -b size=4k -n size=8k /dev/sdb; mount …; time fs_mark …`): the runs are the
//! points of a matrix axis. One word changed (`parent=0` / `parent=1`) gives a loop over
//! its values, named from it (`parent`); several changed together give a loop over
//! `variant`, whose values name the runs (`shell::variants`), the commands that differ one
//! per run in a `case` branch. Either way the loop's head says `guess:` and where the runs
//! are. A final run may leave out trailing `umount`/`sync` commands. Runs are looked for
//! among the top-level commands, inside each loop's body (and so in a function's body,
//! inlined where it is called), inside one `case` branch and inside one `if` branch
//! (`&&`/`||` chains are read as lines of their own); the loop stands where the first run
//! did.

use super::block::{Block, BlockKind};
use super::filesystems::is_filesystem;
use super::grid::grid;
use super::naming::is_device;
use super::programs::Program;
use super::shell::variants::{merge, merge_over, names, variant_loop};
use super::shell::{unquote, CaseArm, Cmd, Loop, LoopKind, Node};

/// Where a command stands: its block, the loops it is in (each an index in the list
/// above it), its index in its list.
type At = (usize, Vec<usize>, usize);

/// Whether a command can be one of a run's: not a script's run (`./t.sh 0`, `./t.sh 1`
/// are its arguments' matrix), not a shell.
fn eligible(c: &Cmd) -> bool {
    !matches!(c.program(), Program::Script(_)) && !matches!(c.argv()[0].as_str(), "sh" | "bash")
}

/// The `if` a command runs under (its `then` branch, or its condition); an `&&`/`||`
/// chain's condition is none: runs of chains (`mkfs … && mount … && time fs_mark …`) are
/// runs as on lines of their own.
fn under_if(c: &Cmd) -> Option<&str> {
    c.cond
        .as_deref()
        .filter(|k| !k.ends_with("&&`") && !k.ends_with("||`"))
}

/// The commands of `nodes` one after the other (split where another construct stands,
/// and where the `case` branch changes), and those of each loop body on their own,
/// however deep.
fn gather(
    nodes: &[Node],
    bi: usize,
    path: &[usize],
    runs: &mut Vec<Vec<At>>,
    arm: &mut (Option<Box<CaseArm>>, Option<String>),
) {
    for (ni, n) in nodes.iter().enumerate() {
        match n {
            Node::Cmd(c) if eligible(c) => {
                // a run stays in one `case` branch and under one `if`
                let here = (c.case.clone(), under_if(c).map(str::to_string));
                if here != *arm {
                    runs.push(Vec::new());
                    *arm = here;
                }
                if let Some(r) = runs.last_mut() {
                    r.push((bi, path.to_vec(), ni));
                }
            }
            Node::Assign { .. } | Node::Func { .. } => {}
            Node::Loop(l) => {
                runs.push(Vec::new());
                let mut inner = path.to_vec();
                inner.push(ni);
                gather(&l.body, bi, &inner, runs, &mut (None, None));
                runs.push(Vec::new());
            }
            _ => runs.push(Vec::new()),
        }
    }
}

/// The list of nodes a command's place names.
fn list<'a>(blocks: &'a [Block], bi: usize, path: &[usize]) -> &'a [Node] {
    let mut nodes: &[Node] = &blocks[bi].nodes;
    for &p in path {
        if let Node::Loop(l) = &nodes[p] {
            nodes = &l.body;
        }
    }
    nodes
}

fn list_mut<'a>(blocks: &'a mut [Block], bi: usize, path: &[usize]) -> &'a mut Vec<Node> {
    let mut nodes: &mut Vec<Node> = &mut blocks[bi].nodes;
    for &p in path {
        nodes = match &mut nodes[p] {
            Node::Loop(l) => &mut l.body,
            _ => unreachable!("a path names loops"),
        };
    }
    nodes
}

/// Find the longest run of repeated commands in the blocks, among their top-level
/// commands, inside a loop's body (a function's body is inlined where it is called) or
/// inside one `case` branch, and make it a loop where it stands.
pub fn repeated_runs(blocks: &mut [Block], shown: &[usize]) {
    let mut runs: Vec<Vec<At>> = vec![Vec::new()];
    let mut arm = (None, None);
    for (bi, b) in blocks.iter().enumerate() {
        if b.kind == BlockKind::Inline {
            continue;
        }
        gather(&b.nodes, bi, &[], &mut runs, &mut arm);
    }
    let cmd = |blocks: &[Block], (bi, path, ni): &At| match &list(blocks, *bi, path)[*ni] {
        Node::Cmd(c) => Some(c.clone()),
        _ => None,
    };
    // (how many commands it covers, the run's commands, where)
    type Best = (usize, Vec<At>, Found);
    let mut best: Option<Best> = None;
    for r in &runs {
        let cmds: Vec<Cmd> = r.iter().filter_map(|at| cmd(blocks, at)).collect();
        if let Some(f) = find(&cmds, shown) {
            let cover = f.end - f.start;
            if best.as_ref().is_none_or(|b| cover > b.0) {
                best = Some((cover, r.clone(), f));
            }
        }
    }
    let Some((_, at, f)) = best else {
        return;
    };
    let cmds: Vec<Cmd> = at.iter().filter_map(|a| cmd(blocks, a)).collect();
    let Some(l) = build(&cmds, &f) else {
        return;
    };
    // the loop where the first run starts; the runs' commands leave
    let region = &at[f.start..f.end];
    for (bi, path, ni) in region.iter().skip(1).rev() {
        list_mut(blocks, *bi, path).remove(*ni);
    }
    let (bi, path, ni) = &region[0];
    list_mut(blocks, *bi, path)[*ni] = Node::Loop(l);
}

/// Runs found in a list of commands: `start..end` holds `count` runs of `period`
/// commands (the last may lack trailing `umount`/`sync`).
#[derive(Debug, Clone, PartialEq)]
struct Found {
    start: usize,
    end: usize,
    period: usize,
    count: usize,
}

/// The program a run's command runs, `mkfs.xfs` and `mkfs.ext4` alike (`mkfs`): runs
/// that make another filesystem are runs of the same commands.
fn program(c: &Cmd) -> String {
    let p = c
        .words
        .get(c.program_index())
        .map(|w| unquote(w))
        .unwrap_or_default();
    match p.strip_prefix("mkfs.") {
        Some(fs) if is_filesystem(fs) => "mkfs".into(),
        _ => p,
    }
}

/// The most commands a run of repeats is looked for in, and the longest run: a post is
/// not a program to search.
const MAX_COMMANDS: usize = 512;
const MAX_PERIOD: usize = 64;

/// (`shown`: the lines of commands whose output the post shows below them; such a
/// command is a run's measured one, like a timed command or a benchmark)
fn find(cmds: &[Cmd], shown: &[usize]) -> Option<Found> {
    let out = |i: usize| shown.contains(&cmds[i].line);
    let n = cmds.len().min(MAX_COMMANDS);
    let mut best: Option<Found> = None;
    for start in 0..n {
        for period in 1..(n - start).min(MAX_PERIOD + 1) {
            let like = |i: usize, j: usize| {
                program(&cmds[i]) == program(&cmds[j])
                    && cmds[i].timed == cmds[j].timed
                    && out(i) == out(j)
            };
            let mut count = 1;
            let mut end = start + period;
            loop {
                let next = start + count * period;
                let full = (0..period).all(|i| next + i < n && like(start + i, next + i));
                if full {
                    count += 1;
                    end = next + period;
                    continue;
                }
                // a last run without its trailing umount/sync
                let have = (0..period)
                    .take_while(|i| next + i < n && like(start + i, next + i))
                    .count();
                let rest_is_teardown = (have..period)
                    .all(|i| matches!(cmds[start + i].program(), Program::Umount | Program::Sync));
                if have > 0 && have < period && rest_is_teardown {
                    count += 1;
                    end = next + have;
                }
                break;
            }
            if count < 2 {
                continue;
            }
            let seg = |k: usize, i: usize| start + k * period + i;
            let differs = (0..period).any(|i| {
                (1..count)
                    .any(|k| seg(k, i) < end && cmds[seg(k, i)].words != cmds[seg(0, i)].words)
            });
            let timed = (0..period).any(|i| {
                cmds[start + i].timed || cmds[start + i].program().is_benchmark() || out(start + i)
            });
            if !differs || !timed {
                continue;
            }
            let f = Found {
                start,
                end,
                period,
                count,
            };
            if best
                .as_ref()
                .is_none_or(|b| f.end - f.start > b.end - b.start)
            {
                best = Some(f);
            }
        }
    }
    best
}

/// The loop the runs make.
fn build(cmds: &[Cmd], f: &Found) -> Option<Loop> {
    let at = |k: usize, i: usize| {
        let j = f.start + k * f.period + i;
        // a last run without its trailing umount: the first run's
        cmds.get(j)
            .filter(|_| j < f.end)
            .unwrap_or(&cmds[f.start + i])
    };
    let lines: Vec<String> = (0..f.count)
        .map(|k| format!("line {}", at(k, 0).line))
        .collect();
    let where_ = format!(
        "the post runs the same {} commands {} times ({}), with other arguments",
        f.period,
        f.count,
        lines.join(", ")
    );
    let differ: Vec<usize> = (0..f.period)
        .filter(|i| (1..f.count).any(|k| at(k, *i).words != at(0, *i).words))
        .collect();
    // runs that differ only in what they act on (`dd if=/dev/sda`, `dd if=/dev/sdb`, `dd
    // of=/data/f`): other disks or directories of the post's machine, not a parameter
    // the draft can vary (its points have their own devices); no axis
    let changed: Vec<String> = differ
        .iter()
        .flat_map(|&i| {
            let all: Vec<&Cmd> = (0..f.count).map(|k| at(k, i)).collect();
            all.iter()
                .flat_map(|c| c.words.iter())
                .filter(|w| !all.iter().all(|c| c.words.contains(w)))
                .map(|w| unquote(w))
                .collect::<Vec<_>>()
        })
        .collect();
    // several things varied each on its own (`-D /xfs 32`, `-D /xfs 1`, `-D /ext4 32`, …),
    // or the filesystem: a grid of axes (`grid`)
    if cmds[f.start..f.end].iter().all(|c| c.case.is_none()) {
        let runs: Vec<Vec<&Cmd>> = (0..f.count)
            .map(|k| (0..f.period).map(|i| at(k, i)).collect())
            .collect();
        if let Some(l) = grid(&runs, &where_) {
            return Some(l);
        }
    }
    if !changed.is_empty() && changed.iter().all(|w| is_target(w)) {
        return None;
    }
    // one word of one command changed: a loop over its values
    if let [i] = differ.as_slice() {
        let first = at(0, *i);
        let same_len = (0..f.count).all(|k| at(k, *i).words.len() == first.words.len());
        let words: Vec<usize> = (0..first.words.len())
            .filter(|w| same_len && (1..f.count).any(|k| at(k, *i).words[*w] != first.words[*w]))
            .collect();
        if let [w] = words.as_slice() {
            let vals: Vec<String> = (0..f.count)
                .map(|k| unquote(&at(k, *i).words[*w]))
                .collect();
            // `parent=0`, `--bs=512`: the words before `=` (the option's dashes kept in
            // the command, not in the axis's name)
            let key = vals[0]
                .split_once('=')
                .map(|(k, _)| k.to_string())
                .filter(|k| {
                    let name = k.trim_start_matches('-');
                    vals.iter().all(|v| v.starts_with(&format!("{k}=")))
                        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                        && !name.is_empty()
                });
            let flag = first.words[..*w]
                .last()
                .map(|p| p.trim_start_matches('-').replace('-', "_"))
                .filter(|p| {
                    first.words[*w - 1].starts_with('-')
                        && !p.is_empty()
                        && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                });
            let var = key
                .as_deref()
                .map(|k| k.trim_start_matches('-').to_string())
                .or(flag)
                .unwrap_or_else(|| "value".into());
            let mut values: Vec<String> = Vec::new();
            for v in &vals {
                let v = match &key {
                    Some(k) => v[k.len() + 1..].to_string(),
                    None => v.clone(),
                };
                if !values.contains(&v) {
                    values.push(v);
                }
            }
            let mut body: Vec<Node> = (0..f.period).map(|j| Node::Cmd(at(0, j).clone())).collect();
            let word = match &key {
                Some(k) => format!("{k}=${var}"),
                None => format!("${var}"),
            };
            if let Node::Cmd(c) = &mut body[*i] {
                c.words[*w].clone_from(&word);
            }
            // a chain's condition names the first run's word: the loop's
            for n in &mut body {
                if let Node::Cmd(Cmd { cond: Some(k), .. }) = n {
                    *k = k.replace(&first.words[*w], &word);
                }
            }
            return Some(Loop {
                line: first.line,
                var,
                kind: LoopKind::List(values),
                head: format!("guess: {where_}: `{}` changes", first.words[*w]),
                body,
                timed: false,
            });
        }
    }
    // one option there in some runs and not in others (`dd … conv=fdatasync` after `dd …`,
    // `mount -o discard …` after `mount …`): a loop over its values, "" where it is left out
    if let [i] = differ.as_slice() {
        if let Some((var, values)) =
            option_or_not(&(0..f.count).map(|k| at(k, *i)).collect::<Vec<_>>())
        {
            if cmds[f.start..f.end].iter().all(|c| c.case.is_none()) {
                let bodies: Vec<Vec<Node>> = (0..f.count)
                    .map(|k| (0..f.period).map(|j| Node::Cmd(at(k, j).clone())).collect())
                    .collect();
                let line = at(0, 0).line;
                // the runs in the post's order, each once
                let mut names: Vec<String> = Vec::new();
                let mut keep: Vec<Vec<Node>> = Vec::new();
                for (v, b) in values.iter().zip(bodies) {
                    if !names.contains(v) {
                        names.push(v.clone());
                        keep.push(b);
                    }
                }
                let body = merge_over(&var, &keep, &names, line)?;
                let mut l = variant_loop(
                    body,
                    names,
                    line,
                    format!("guess: {where_}: `{var}` given in some, left out in others"),
                );
                l.var = var;
                return Some(l);
            }
        }
    }
    // several changed: a loop over the runs, named from the words only each has; not in
    // a `case` branch (a command is in one branch: the variants' would take its place)
    if cmds[f.start..f.end].iter().any(|c| c.case.is_some()) {
        return None;
    }
    // several changed: a loop over the runs, named from the words only each has
    let runs: Vec<Vec<String>> = (0..f.count)
        .map(|k| {
            differ
                .iter()
                .flat_map(|i| at(k, *i).words.iter().skip(1).cloned())
                .collect()
        })
        .collect();
    let names = names(&runs);
    let bodies: Vec<Vec<Node>> = (0..f.count)
        .map(|k| (0..f.period).map(|i| Node::Cmd(at(k, i).clone())).collect())
        .collect();
    let line = at(0, 0).line;
    let body = merge(&bodies, &names, line)?;
    Some(variant_loop(
        body,
        names,
        line,
        format!("guess: {where_}; each value names a run"),
    ))
}

/// A word that names what a command acts on: a device or an absolute path, alone or
/// as an option's value (`if=/dev/sda`, `--filename=/data/f`, `-D /srv`).
fn is_target(w: &str) -> bool {
    let v = w.rsplit_once('=').map_or(w, |(_, v)| v);
    is_device(v) || (v.starts_with('/') && v.len() > 1)
}

/// Two words alike in a run: the same, or the same file numbered per run (`of=test1.dat`,
/// `of=test2.dat`: each run wrote its own file; the first run's name is kept).
fn alike(a: &str, b: &str) -> bool {
    let bare = |w: &str| {
        w.chars()
            .filter(|c| !c.is_ascii_digit())
            .collect::<String>()
    };
    let file = |w: &str| {
        let name = w.rsplit(['=', '/']).next().unwrap_or(w);
        name.contains('.') && name.chars().any(|c| c.is_ascii_alphabetic())
    };
    a == b || (file(a) && file(b) && bare(a) == bare(b))
}

/// The runs of one command that differ only in an option some give and others leave out,
/// at one place among the words (`conv=fdatasync`, `-o discard`): the axis's name (the
/// option's key or flag; `mount_options` for mount's `-o`) and each run's value (`""`
/// where it is left out). None when the runs differ otherwise or all give it.
fn option_or_not(runs: &[&Cmd]) -> Option<(String, Vec<String>)> {
    let first = &runs[0].words;
    let shortest = runs.iter().map(|c| c.words.len()).min()?;
    let prefix = (0..shortest)
        .take_while(|&w| runs.iter().all(|c| alike(&c.words[w], &first[w])))
        .count();
    let suffix = (0..shortest - prefix)
        .take_while(|&w| {
            runs.iter()
                .all(|c| alike(&c.words[c.words.len() - 1 - w], &first[first.len() - 1 - w]))
        })
        .count();
    let segs: Vec<&[String]> = runs
        .iter()
        .map(|c| &c.words[prefix..c.words.len() - suffix])
        .collect();
    if !segs.iter().any(|s| s.is_empty()) || segs.iter().all(|s| s.is_empty()) {
        return None;
    }
    let given: Vec<&&[String]> = segs.iter().filter(|s| !s.is_empty()).collect();
    let is_name =
        |n: &str| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let (var, values): (String, Vec<String>) = match given[0] {
        [w] => {
            let (key, _) = unquote(w)
                .split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))?;
            let name = key.trim_start_matches('-').replace('-', "_");
            let vals = segs
                .iter()
                .map(|s| match s {
                    [] => Some(String::new()),
                    [w] => unquote(w)
                        .strip_prefix(&format!("{key}="))
                        .map(str::to_string),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()?;
            (name, vals)
        }
        [flag, _] if flag.starts_with('-') => {
            let vals = segs
                .iter()
                .map(|s| match s {
                    [] => Some(String::new()),
                    [f, v] if f == flag => Some(unquote(v)),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()?;
            let name = match (runs[0].program(), flag.as_str()) {
                (Program::Mount, "-o") => "mount_options".to_string(),
                _ => flag.trim_start_matches('-').replace('-', "_"),
            };
            (name, vals)
        }
        _ => return None,
    };
    (is_name(&var) && values.iter().all(|v| !v.contains(char::is_whitespace)))
        .then_some((var, values))
}

#[cfg(test)]
mod tests {
    use super::{build, find, Found};
    use crate::import::shell::Cmd;
    use crate::import::shell::{LoopKind, Node};

    fn cmds(s: &[&str]) -> Vec<Cmd> {
        s.iter()
            .enumerate()
            .map(|(i, l)| {
                let mut c = Cmd::new(i + 1, l.split(' ').map(String::from).collect());
                c.timed = l.starts_with("time ");
                c
            })
            .collect()
    }

    #[test]
    fn runs_of_the_same_programs() {
        let c = cmds(&[
            "umount /mnt",
            "mkfs.xfs -b size=1k /dev/sdb",
            "mount /dev/sdb /mnt",
            "time fs_mark -d /mnt/x",
            "umount /mnt",
            "mkfs.xfs -b size=4k -n size=8k /dev/sdb",
            "mount /dev/sdb /mnt",
            "time fs_mark -d /mnt/x",
        ]);
        assert_eq!(
            find(&c, &[]),
            // the umount before the first mkfs starts the runs as well
            Some(Found {
                start: 0,
                end: 8,
                period: 4,
                count: 2
            })
        );
        // the same commands again, nothing changed: no axis
        let c = cmds(&[
            "mkfs.xfs /dev/sdb",
            "time sync",
            "mkfs.xfs /dev/sdb",
            "time sync",
        ]);
        assert_eq!(find(&c, &[]), None);
        // nothing timed: no experiment's runs
        let c = cmds(&[
            "mkfs.xfs -b size=1k /dev/sdb",
            "mkfs.xfs -b size=4k /dev/sdb",
        ]);
        assert_eq!(find(&c, &[]), None);
    }

    #[test]
    fn runs_on_other_disks_or_directories_are_no_axis() {
        let c = cmds(&[
            "time dd if=/dev/sdc of=/dev/null bs=1M count=64",
            "time dd if=/dev/sdd of=/dev/null bs=1M count=64",
            "time dd if=/dev/zero of=/srv/big/f bs=1M count=64",
        ]);
        let f = find(&c, &[]).unwrap();
        assert_eq!(build(&c, &f), None);
        // a parameter changed as well: an axis
        let c = cmds(&[
            "time dd if=/dev/sdc of=/dev/null bs=1M",
            "time dd if=/dev/sdd of=/dev/null bs=4M",
        ]);
        let f = find(&c, &[]).unwrap();
        assert!(build(&c, &f).is_some());
    }

    #[test]
    fn an_option_given_or_left_out() {
        let c = cmds(&[
            "dd if=/dev/zero of=t1.dat bs=1M",
            "dd if=/dev/zero of=t2.dat bs=1M conv=fdatasync",
            "mount /dev/sdb /mnt",
            "mount -o discard /dev/sdb /mnt",
        ]);
        assert_eq!(
            super::option_or_not(&[&c[0], &c[1]]),
            Some(("conv".into(), vec!["".into(), "fdatasync".into()]))
        );
        assert_eq!(
            super::option_or_not(&[&c[2], &c[3]]),
            Some(("mount_options".into(), vec!["".into(), "discard".into()]))
        );
        // each run given some value: not this rule; another word changed too: none
        let d = cmds(&["dd of=a bs=1M", "dd of=b bs=1M conv=fsync"]);
        assert_eq!(super::option_or_not(&[&d[0], &d[1]]), None);
        assert!(super::alike("of=test1.dat", "of=test2.dat"));
        assert!(!super::alike("bs=1", "bs=2"));
    }

    #[test]
    fn an_option_with_dashes_names_the_axis_without_them() {
        let c = cmds(&[
            "time fio --filename=/dev/sdb --bs=512 --name=j",
            "time fio --filename=/dev/sdb --bs=4K --name=j",
        ]);
        let f = find(&c, &[]).unwrap();
        let l = build(&c, &f).unwrap();
        assert_eq!(l.var, "bs");
        assert_eq!(l.kind, LoopKind::List(vec!["512".into(), "4K".into()]));
        let Node::Cmd(body) = &l.body[0] else {
            panic!("{:?}", l.body)
        };
        assert_eq!(body.words[3], "--bs=$bs");
    }
}
