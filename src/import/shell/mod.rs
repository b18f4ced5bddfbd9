//! The shell a post's command blocks are read with, through a bash grammar
//! ([`brush_parser`], in `parse`): words and quotes, redirections and pipelines (kept
//! beside the command's words: [`Redir`], [`Piped`]), `;`/`&&` lists, `for NAME in …`, `for ((i=0;i<N;i++))`, `for i in {A..B}` and `$(seq [A [S]] B)`,
//! counting `while`/`until` loops (`i=0; while [ $i -lt 10 ]; do …; i=$((i+1)); done`),
//! `if … then … [elif/else] fi` (the `then` branch is kept, its condition noted; the other
//! branches are kept aside as [`Node::Else`]), `time CMD` and `time for …`, `NAME=value`
//! assignments substituted into later commands, `case WORD in PAT) …;; esac` (each
//! branch's commands carry their [`CaseArm`]), shell functions (inlined at each call with
//! `$1`… substituted: `functions`), here-documents (`cat > job.fio <<EOF`: the body is
//! the command's [`HereDoc`], never read as commands), `cd DIR` (the directory of the
//! commands after it: `cwd`). Every command keeps the post line it starts on.

mod around;
mod case;
pub mod cwd;
mod functions;
mod heads;
pub mod heredoc;
mod parse;
pub mod perf;
mod recover;
pub mod variants;
mod vars;

use super::programs::Program;
pub use around::{Piped, Redir};
pub use case::{glob_matches, CaseArm};
pub use functions::Call;
pub use heredoc::HereDoc;
pub use vars::{built_in_unread_loop, subst_word, substitute, var_at, vars_in, Env};

/// A loop's iteration.
#[derive(Debug, Clone, PartialEq)]
pub enum LoopKind {
    /// `for ((i=0;i<N;i++))`, `for i in $(seq N)`, a counting `while`, a list whose
    /// variable the body never uses (`for i in 1 2 3; do time …`): N iterations.
    Count(u64),
    /// `for i in {A..B}`.
    Range(i64, i64),
    /// `for x in a b c`.
    List(Vec<String>),
    /// `while …`, or a loop head that could not be read.
    Unknown,
}

/// One simple command.
#[derive(Debug, Clone, PartialEq)]
pub struct Cmd {
    /// The post line it starts on.
    pub line: usize,
    /// Words as written (quotes kept), variables set earlier substituted.
    pub words: Vec<String>,
    /// Under `time` (itself or an enclosing loop).
    pub timed: bool,
    /// Run only under a condition the draft does not keep: `line N: if [ -d /mnt ]`, or
    /// the condition of an `if` itself.
    pub cond: Option<String>,
    /// The `case` branch it is in (boxed: most commands are in none).
    pub case: Option<Box<CaseArm>>,
    /// The here-document on its standard input (`<<EOF`).
    pub heredoc: Option<HereDoc>,
    /// The call of the shell function whose body it comes from.
    pub called: Option<Call>,
    /// Why it is one of several commands, one per `case` branch: it uses a variable the
    /// branches set (`vars`).
    pub per_branch: Option<String>,
    /// The directory a `cd` before it went to (`cd /mnt/test && fs_mark -d foo`).
    pub cwd: Option<cwd::Cwd>,
    /// Its redirections (`> out.log`, `2>&1`): shell, never words of the program. A
    /// command fed a here-document keeps them among its words instead (it runs in `sh -c`).
    pub redirs: Vec<Redir>,
    /// The other commands of its pipeline (`| tee LOG`, `yes |`).
    pub piped: Vec<Piped>,
}

impl Cmd {
    /// A command with nothing around it.
    pub fn new(line: usize, words: Vec<String>) -> Cmd {
        Cmd {
            line,
            words,
            timed: false,
            cond: None,
            case: None,
            heredoc: None,
            called: None,
            per_branch: None,
            cwd: None,
            redirs: Vec::new(),
            piped: Vec::new(),
        }
    }

    /// The program word (after `sudo`, `time`, `env X=y`, `perf stat [OPTIONS]`).
    pub fn program_index(&self) -> usize {
        let mut i = 0;
        while let Some(w) = self.words.get(i) {
            if let Some(p) = perf::at(&self.words, i) {
                i += p.len;
            } else if w == "sudo" || w == "time" || w == "env" || w == "nice" || w == "taskset" {
                i += 1;
                if w == "taskset" {
                    i += 1;
                }
            } else if is_assignment(w) {
                i += 1;
            } else {
                break;
            }
        }
        i.min(self.words.len().saturating_sub(1))
    }

    /// The `perf stat …` the command runs under (`perf stat -r 6 dd …`).
    pub fn perf_stat(&self) -> Option<perf::PerfStat> {
        (0..self.program_index()).find_map(|i| perf::at(&self.words, i))
    }

    pub fn program(&self) -> Program {
        self.words
            .get(self.program_index())
            .map_or(Program::Util, |w| Program::of(w))
    }

    /// The words from the program on, quotes removed.
    pub fn argv(&self) -> Vec<String> {
        self.words[self.program_index()..]
            .iter()
            .map(|w| unquote(w))
            .collect()
    }

    /// The command from the program on, as written (its redirections and pipeline too).
    pub fn text(&self) -> String {
        let mut t: Vec<String> = self.words[self.program_index()..].to_vec();
        t.extend(self.redirs.iter().map(|r| r.text.clone()));
        let before: Vec<String> = self
            .piped
            .iter()
            .filter(|p| p.before)
            .map(|p| format!("{} |", p.text))
            .collect();
        let after = self
            .piped
            .iter()
            .filter(|p| !p.before)
            .map(|p| format!("| {}", p.text));
        before
            .into_iter()
            .chain([t.join(" ")])
            .chain(after)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A command or a loop.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Cmd(Cmd),
    Loop(Loop),
    /// `NAME=value` on its own; `arm`: set in that `case` branch.
    Assign {
        line: usize,
        name: String,
        value: String,
        arm: Option<CaseArm>,
    },
    /// The `elif`/`else` branch of an `if` (`head` names it): not part of the draft, which
    /// keeps the `then` branch; reported, never dropped silently.
    Else {
        line: usize,
        head: String,
        body: Vec<Node>,
    },
    /// A shell function's definition (`name() { … }`, `function name { … }`); its body is
    /// inlined at each call, the definition stays for the report of functions never called.
    Func {
        line: usize,
        name: String,
        body: Vec<Node>,
    },
    /// Shell the draft cannot express (a `case` it could not read, a variable set in a
    /// `case` branch): reported with its line, never dropped silently.
    Unread {
        line: usize,
        what: String,
        body: Vec<Node>,
    },
}

impl Loop {
    /// How many times a counting loop runs its body (`for ((…))`, `{A..B}`).
    pub fn count(&self) -> Option<u64> {
        match self.kind {
            LoopKind::Count(n) => Some(n),
            LoopKind::Range(a, b) => Some((b - a + 1).max(0) as u64),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Loop {
    pub line: usize,
    pub var: String,
    pub kind: LoopKind,
    /// The loop head as written, for messages.
    pub head: String,
    pub body: Vec<Node>,
    /// `time for …`: the whole loop is timed.
    pub timed: bool,
}

pub(super) fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// Remove shell quotes from one word.
pub fn unquote(w: &str) -> String {
    let mut out = String::new();
    let mut q: Option<char> = None;
    for c in w.chars() {
        match (q, c) {
            (None, '\'' | '"') => q = Some(c),
            (Some(o), c) if c == o => q = None,
            (_, c) => out.push(c),
        }
    }
    out
}

/// How many constructs a line opens (`do`, `if`, `case`, a function's `{`) minus those it
/// closes: a block goes on while it is positive.
pub(super) fn loop_balance(s: &str) -> i32 {
    if s.trim_start().starts_with('#') {
        return 0;
    }
    let mut n = 0;
    for w in s.split(|c: char| c.is_whitespace() || c == ';') {
        match w {
            "do" | "if" | "case" | "{" => n += 1,
            "done" | "fi" | "esac" | "}" => n -= 1,
            w if w.ends_with("(){") => n += 1,
            _ => {}
        }
    }
    n
}

/// Read a block of logical lines into nodes: here-documents taken out first, functions
/// inlined at their calls, variables substituted.
pub fn parse_block(logical: &[(usize, String)]) -> Vec<Node> {
    let (lines, docs) = heredoc::extract(logical);
    let mut nodes = recover::read(&lines);
    attach_heredocs(&mut nodes, &docs);
    functions::inline(&mut nodes, &mut Vec::new());
    substitute(&mut nodes, &mut Env::default());
    nodes
}

/// Inline the calls of functions defined in an earlier block (`defs`, which gathers this
/// block's definitions for the next): a script that defines `run_test`, a prompt that calls it.
pub fn inline_calls(nodes: &mut Vec<Node>, defs: &mut Vec<(String, Vec<Node>)>) {
    functions::inline(nodes, defs);
}

/// Give each command the here-document whose mark is among its words (the mark leaves).
fn attach_heredocs(nodes: &mut [Node], docs: &[HereDoc]) {
    for n in nodes {
        match n {
            Node::Cmd(c) => {
                let mut kept = Vec::with_capacity(c.words.len());
                for w in std::mem::take(&mut c.words) {
                    match heredoc::marker_index(&w) {
                        Some(k) => {
                            if c.heredoc.is_none() {
                                c.heredoc = docs.get(k).cloned();
                            }
                        }
                        None => kept.push(w),
                    }
                }
                if kept.is_empty() {
                    // a here-document fed to nothing (`<<EOF` alone): `cat` reads it
                    kept.push("cat".into());
                }
                c.words = kept;
            }
            Node::Loop(l) => attach_heredocs(&mut l.body, docs),
            Node::Else { body, .. } | Node::Func { body, .. } | Node::Unread { body, .. } => {
                attach_heredocs(body, docs)
            }
            Node::Assign { .. } => {}
        }
    }
}

/// Every command in nodes, depth first, with the loops around it (outermost first).
pub fn walk<'a>(
    nodes: &'a [Node],
    loops: &mut Vec<&'a Loop>,
    f: &mut dyn FnMut(&'a Cmd, &[&'a Loop]),
) {
    for n in nodes {
        match n {
            Node::Cmd(c) => f(c, loops),
            Node::Loop(l) => {
                loops.push(l);
                walk(&l.body, loops, f);
                loops.pop();
            }
            Node::Assign { .. } | Node::Else { .. } | Node::Func { .. } | Node::Unread { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_block, walk, LoopKind, Node};

    fn block(s: &str) -> Vec<Node> {
        let logical: Vec<(usize, String)> = s
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.to_string()))
            .collect();
        parse_block(&logical)
    }

    fn first_loop(nodes: &[Node]) -> &super::Loop {
        nodes
            .iter()
            .find_map(|n| match n {
                Node::Loop(l) => Some(l),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no loop in {nodes:?}"))
    }

    #[test]
    fn counting_while_loops_are_counts() {
        for (text, n) in [
            ("i=0\nwhile [ $i -lt 10 ]; do\n time fsstress -n 10 -d /mnt/x\n i=$((i+1))\ndone", 10),
            ("i=1; while [ \"$i\" -le 5 ]; do time dd if=/dev/zero of=/mnt/f bs=1M count=1; ((i++)); done", 5),
            ("n=0\nwhile (( n < 3 )); do\n  fio --name=a\n  let n++\ndone", 3),
            ("i=2\nuntil [ $i -ge 8 ]; do sync; i=`expr $i + 1`; done", 6),
        ] {
            let nodes = block(text);
            let l = first_loop(&nodes);
            assert_eq!(l.kind, LoopKind::Count(n), "{text}");
            // the increment is not a step
            let mut cmds = Vec::new();
            walk(&nodes, &mut Vec::new(), &mut |c, _| cmds.push(c.text()));
            assert_eq!(cmds.len(), 1, "{text}: {cmds:?}");
            assert!(!l.body.iter().any(|b| matches!(b, Node::Assign { .. })), "{text}");
        }
        // a while that is not a counter: its body is kept, its count unknown
        let nodes = block("while read f; do filefrag -v $f; done < list");
        let l = first_loop(&nodes);
        assert_eq!(l.kind, LoopKind::Unknown);
        assert_eq!(l.body.len(), 1);
    }

    #[test]
    fn if_keeps_the_then_branch_with_its_condition() {
        let nodes = block("if [ -d /mnt/test ]; then\n  umount /mnt/test\nelif mountpoint -q /mnt; then\n  echo no\nelse\n  mkdir -p /mnt/test\nfi\nmkfs.xfs -f /dev/sdb");
        let mut cmds = Vec::new();
        walk(&nodes, &mut Vec::new(), &mut |c, _| {
            cmds.push((c.line, c.text(), c.cond.clone()))
        });
        assert_eq!(
            cmds,
            [
                (
                    2,
                    "umount /mnt/test".to_string(),
                    Some("line 1: if [ -d /mnt/test ]".to_string())
                ),
                (8, "mkfs.xfs -f /dev/sdb".to_string(), None),
            ]
        );
        let elses: Vec<(usize, &str)> = nodes
            .iter()
            .filter_map(|n| match n {
                Node::Else { line, head, .. } => Some((*line, head.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(elses.len(), 2, "{nodes:?}");
        assert_eq!(elses[1].0, 5);
        assert!(elses[0].1.starts_with("elif mountpoint -q /mnt"));
        // a condition that is a command is kept, marked
        let nodes = block("if mkfs.ext4 -F /dev/sdb; then mount /dev/sdb /mnt; fi");
        let mut cmds = Vec::new();
        walk(&nodes, &mut Vec::new(), &mut |c, _| {
            cmds.push((c.text(), c.cond.is_some()))
        });
        assert_eq!(
            cmds,
            [
                ("mkfs.ext4 -F /dev/sdb".to_string(), true),
                ("mount /dev/sdb /mnt".to_string(), true)
            ]
        );
    }

    #[test]
    fn chains_keep_their_condition() {
        let nodes = block("mkfs.xfs -f /dev/sdb && mount /dev/sdb /mnt || exit 1\n[[ -d /mnt/a || -d /mnt/b ]] && time fsstress -d /mnt/a; sync\n! test -e /mnt/x || rm /mnt/x");
        let mut cmds = Vec::new();
        walk(&nodes, &mut Vec::new(), &mut |c, _| {
            cmds.push((c.line, c.text(), c.cond.clone(), c.timed))
        });
        let s = |x: &str| Some(x.to_string());
        assert_eq!(
            cmds,
            [
                (1, "mkfs.xfs -f /dev/sdb".to_string(), None, false),
                (
                    1,
                    "mount /dev/sdb /mnt".to_string(),
                    s("line 1: `mkfs.xfs -f /dev/sdb &&`"),
                    false
                ),
                (
                    2,
                    "fsstress -d /mnt/a".to_string(),
                    s("line 2: `[[ -d /mnt/a || -d /mnt/b ]] &&`"),
                    true
                ),
                (2, "sync".to_string(), None, false),
                (
                    3,
                    "rm /mnt/x".to_string(),
                    s("line 3: `! test -e /mnt/x ||`"),
                    false
                ),
            ]
        );
    }

    #[test]
    fn substitutions_background_and_exit() {
        let nodes = block("N=`nproc`\nF=$(head -c 8 /dev/urandom | od -x)\nfor i in `seq 3`; do\n  while true; do cat $F 2>/dev/null; done &\ndone\nmake -j$N >/dev/null 2>&1 &\n[ -e x ] || exit 1\nsync; break");
        let mut cmds = Vec::new();
        walk(&nodes, &mut Vec::new(), &mut |c, _| cmds.push(c.text()));
        assert_eq!(
            cmds,
            ["cat $F 2>/dev/null", "make -j$N >/dev/null 2>&1", "sync"]
        );
        let unread: Vec<usize> = nodes
            .iter()
            .filter_map(|n| match n {
                Node::Unread { line, .. } => Some(*line),
                _ => None,
            })
            .collect();
        assert_eq!(unread, [1, 2]);
        assert_eq!(first_loop(&nodes).kind, LoopKind::Range(1, 3));
    }

    #[test]
    fn seq_loops_and_lists_used_as_counters() {
        for (text, kind) in [
            (
                "for i in $(seq 1 10); do touch /mnt/$i; done",
                LoopKind::Range(1, 10),
            ),
            ("for i in `seq 5`; do sync; done", LoopKind::Range(1, 5)),
            ("for i in $(seq 0 2 8); do sync; done", LoopKind::Count(5)),
            (
                "for i in 1 2 3; do time fsstress -d /mnt/x; done",
                LoopKind::Count(3),
            ),
            (
                "for p in 0 1; do mkfs.xfs -n parent=$p /dev/sdb; done",
                LoopKind::List(vec!["0".into(), "1".into()]),
            ),
        ] {
            assert_eq!(first_loop(&block(text)).kind, kind, "{text}");
        }
    }
    #[test]
    fn case_branches_carry_their_patterns() {
        let nodes = block("for fs in xfs ext4 btrfs; do\n  case $fs in\n  xfs)\n    mkfs.xfs -f /dev/sdb ;;\n  ext3|ext4) mkfs.$fs -F /dev/sdb;;\n  *) echo skip $fs\n  esac\n  mount /dev/sdb /mnt\ndone");
        let l = first_loop(&nodes);
        assert_eq!(
            l.kind,
            LoopKind::List(vec!["xfs".into(), "ext4".into(), "btrfs".into()])
        );
        let mut cmds = Vec::new();
        walk(&nodes, &mut Vec::new(), &mut |c, _| {
            cmds.push((
                c.line,
                c.text(),
                c.case
                    .as_ref()
                    .map(|k| (k.word.clone(), k.patterns.clone(), k.earlier.len())),
            ))
        });
        assert_eq!(
            cmds,
            [
                (
                    4,
                    "mkfs.xfs -f /dev/sdb".to_string(),
                    Some(("$fs".to_string(), vec!["xfs".to_string()], 0))
                ),
                (
                    5,
                    "mkfs.$fs -F /dev/sdb".to_string(),
                    Some((
                        "$fs".to_string(),
                        vec!["ext3".to_string(), "ext4".to_string()],
                        1
                    ))
                ),
                (
                    6,
                    "echo skip $fs".to_string(),
                    Some(("$fs".to_string(), vec!["*".to_string()], 3))
                ),
                (8, "mount /dev/sdb /mnt".to_string(), None),
            ]
        );
        // a variable set in branches: the command after the case once per branch, with
        // that branch's value and its pattern (not the last branch's value everywhere);
        // where no branch sets it, the value from before the case (unset: no program)
        let nodes = block(
            "case $fs in\nxfs) MKFS=mkfs.xfs;;\next4) MKFS=mkfs.ext4; o=-F;;\nesac\n$MKFS $o /dev/sdb\no=-q\ncase $fs in\nxfs) o=-f;;\nesac\nsync $o",
        );
        let mut cmds = Vec::new();
        walk(&nodes, &mut Vec::new(), &mut |c, _| {
            cmds.push((
                c.line,
                c.text(),
                c.case.as_ref().map(|k| k.head()),
                c.per_branch.is_some(),
            ))
        });
        let s = |x: &str| Some(x.to_string());
        assert_eq!(
            cmds,
            [
                (5, "mkfs.xfs /dev/sdb".to_string(), s("xfs)"), true),
                (5, "mkfs.ext4 -F /dev/sdb".to_string(), s("ext4)"), true),
                (10, "sync -f".to_string(), s("xfs)"), true),
                (10, "sync -q".to_string(), s("none of xfs)"), true),
            ]
        );
    }

    #[test]
    fn functions_are_inlined_at_their_calls() {
        // calls that differ in one argument the body uses: a loop over its values
        let nodes = block("run_test() {\n\tmkfs.xfs -f -n parent=$1 /dev/sdb\n\tmount /dev/sdb /mnt\n\ttime fsstress -d /mnt/foo -n $2\n\tumount /mnt\n}\n\nfunction unused {\n  sync\n}\n\nrun_test 0 1000\nrun_test 1 \"1000\"");
        let l = first_loop(&nodes);
        assert_eq!(
            (l.line, l.var.as_str(), &l.kind),
            (
                12,
                "run_test_1",
                &LoopKind::List(vec!["0".into(), "1".into()])
            )
        );
        let mut cmds = Vec::new();
        walk(&nodes, &mut Vec::new(), &mut |c, _| {
            cmds.push((c.line, c.text(), c.timed, c.called.as_ref().map(|k| k.line)))
        });
        assert_eq!(cmds.len(), 4, "{cmds:?}");
        assert_eq!(
            cmds[0],
            (
                2,
                "mkfs.xfs -f -n parent=$run_test_1 /dev/sdb".to_string(),
                false,
                Some(12)
            )
        );
        assert_eq!(
            cmds[2],
            (
                4,
                "fsstress -d /mnt/foo -n 1000".to_string(),
                true,
                Some(12)
            )
        );
        let funcs: Vec<&str> = nodes
            .iter()
            .filter_map(|n| match n {
                Node::Func { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(funcs, ["run_test", "unused"]);
        // calls that differ in two arguments: a loop over variants named from them, the
        // command that differs once per call in a `case` branch, the shared one once
        let nodes = block(
            "t() { mkfs.ext4 -b $1 -I $2 /dev/sdb; time fs_mark -d /mnt/x; }\nt 1024 128\nt 4096 256",
        );
        let l = first_loop(&nodes);
        assert_eq!(
            (l.var.as_str(), &l.kind),
            (
                "variant",
                &LoopKind::List(vec!["1024_128".into(), "4096_256".into()])
            )
        );
        assert!(l.head.starts_with("guess: the calls `t 1024 128` (line 2)"));
        let mut cmds = Vec::new();
        walk(&nodes, &mut Vec::new(), &mut |c, l| {
            cmds.push((c.text(), l.len(), c.case.as_ref().map(|k| k.head())))
        });
        assert_eq!(
            cmds,
            [
                (
                    "mkfs.ext4 -b 1024 -I 128 /dev/sdb".to_string(),
                    1,
                    Some("1024_128)".to_string())
                ),
                (
                    "mkfs.ext4 -b 4096 -I 256 /dev/sdb".to_string(),
                    1,
                    Some("4096_256)".to_string())
                ),
                ("fs_mark -d /mnt/x".to_string(), 1, None)
            ]
        );
        // several arguments the body never uses: one after the other, as before
        let nodes = block("t() { sync; }\nt 1 2\nt 3 4");
        assert!(!nodes.iter().any(|n| matches!(n, Node::Loop(_))));
        // `local` variables of a function, bound from its arguments
        let nodes =
            block("mk() {\n  local dev=$1 bs=$2\n  mkfs.ext4 -F -b $bs $dev\n}\nmk /dev/sdb 1024");
        let mut cmds = Vec::new();
        walk(&nodes, &mut Vec::new(), &mut |c, _| cmds.push(c.text()));
        assert_eq!(cmds, ["mkfs.ext4 -F -b 1024 /dev/sdb"]);
        // one line, `function name()`, a call in a loop, a recursive function stops
        let nodes = block("function go() { dd if=/dev/zero of=/mnt/f$1 bs=1M count=$2; }\nfor i in 1 2; do go $i 8; done\nf() { f; }\nf");
        let mut cmds = Vec::new();
        walk(&nodes, &mut Vec::new(), &mut |c, l| {
            cmds.push((c.text(), l.len()))
        });
        assert_eq!(
            cmds[0],
            ("dd if=/dev/zero of=/mnt/f$i bs=1M count=8".to_string(), 1)
        );
        assert_eq!(cmds.last().map(|c| c.0.as_str()), Some("f"));
    }

    #[test]
    fn sh_c_scripts_are_their_commands() {
        let nodes = block("time sh -c \"dd if=/dev/zero of=/mnt/x bs=4k count=2000 && sync\"\nsudo bash -c 'echo 3 > /proc/sys/vm/drop_caches'\nsh -c 'echo $0' a");
        let mut cmds = Vec::new();
        walk(&nodes, &mut Vec::new(), &mut |c, _| {
            cmds.push((c.text(), c.timed, c.cond.is_some()))
        });
        assert_eq!(
            cmds,
            [
                (
                    "dd if=/dev/zero of=/mnt/x bs=4k count=2000".to_string(),
                    true,
                    false
                ),
                ("sync".to_string(), true, true),
                (
                    "echo 3 > /proc/sys/vm/drop_caches".to_string(),
                    false,
                    false
                ),
                ("sh -c 'echo $0' a".to_string(), false, false),
            ]
        );
    }

    #[test]
    fn here_documents_are_the_command_input() {
        let nodes = block("SIZE=1g\ncat > job.fio <<EOF\n[global]\nsize=$SIZE\n\n[randwrite]\nrw=randwrite\nEOF\nfio job.fio\nfio --output=x - <<-'END'\n\t[seq]\n\tsize=$SIZE\n\tEND\nsync");
        let mut cmds = Vec::new();
        walk(&nodes, &mut Vec::new(), &mut |c, _| {
            cmds.push((c.line, c.text(), c.heredoc.clone()))
        });
        let texts: Vec<(usize, &str)> = cmds.iter().map(|c| (c.0, c.1.as_str())).collect();
        assert_eq!(
            texts,
            [
                (2, "cat > job.fio"),
                (9, "fio job.fio"),
                (10, "fio --output=x -"),
                (14, "sync")
            ]
        );
        let doc = cmds[0].2.as_ref().unwrap();
        assert_eq!(
            doc.text(),
            ["[global]", "size=1g", "", "[randwrite]", "rw=randwrite"]
        );
        assert_eq!(doc.body[0].0, 3);
        let doc = cmds[2].2.as_ref().unwrap();
        assert!(doc.quoted && doc.closed);
        assert_eq!(doc.text(), ["[seq]", "size=$SIZE"]);
    }
}
