//! Commands in a post: shell prompts (`# `, `$ `, `user@host:dir# `, `[root@host ~]# `),
//! `#!/bin/sh` scripts, indented command lines, lines continued with `\`, and commands
//! named inside a sentence (`"fsck -f"`, `mkfs.ext3 -j -I 256`). Each block is read as a
//! small shell: `;`/`&&` lists, `for NAME in …; do …; done`, `for ((i=0;i<N;i++))`,
//! `for i in {1..N}`, `time CMD`, `NAME=value` assignments (substituted into later
//! commands). Every command keeps its line in the post.

use super::mail::{is_furniture, PostLine};

/// What a program is, for the draft. Anything not listed is [`Program::Other`] and
/// becomes a `tools:` entry of the draft.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// `mkfs.xfs`, `mkfs.ext4`, `mke2fs` (fs `ext2`), …
    Mkfs(String),
    Mount,
    Umount,
    Mkdir,
    Sync,
    Dd,
    Fsstress,
    FsMark,
    Fio,
    XfsIo,
    Bonnie,
    /// `fsck`, `fsck.ext4`, `e2fsck`, `xfs_repair`.
    Fsck,
    Debugfs,
    Filefrag,
    XfsBmap,
    XfsInfo,
    Dumpe2fs,
    /// Plain shell utilities (`rm`, `cp`, `echo`, `cat`, `df`, …).
    Util,
    /// A script file run from the prompt (`./dumb.sh 0`, `sh test.sh`).
    Script(String),
    /// Anything else: kept, and made a `tools:` entry.
    Other(String),
}

const UTILS: &[&str] = &[
    "rm",
    "cp",
    "mv",
    "echo",
    "cat",
    "df",
    "du",
    "ls",
    "touch",
    "tar",
    "sleep",
    "rmdir",
    "ln",
    "truncate",
    "fallocate",
    "fstrim",
    "blockdev",
    "losetup",
    "modprobe",
    "sysctl",
    "tee",
    "find",
    "chmod",
    "chown",
    "stat",
    "mkswap",
    "wipefs",
    "cd",
    "export",
    "true",
    "uname",
];

impl Program {
    pub fn of(word: &str) -> Program {
        let base = word.rsplit('/').next().unwrap_or(word);
        if let Some(fs) = base.strip_prefix("mkfs.") {
            return Program::Mkfs(fs.to_string());
        }
        match base {
            "mkfs" => Program::Mkfs(String::new()),
            "mke2fs" => Program::Mkfs("ext2".into()),
            "mount" => Program::Mount,
            "umount" => Program::Umount,
            "mkdir" => Program::Mkdir,
            "sync" => Program::Sync,
            "dd" => Program::Dd,
            "fsstress" => Program::Fsstress,
            "fs_mark" | "fsmark" => Program::FsMark,
            "fio" => Program::Fio,
            "xfs_io" => Program::XfsIo,
            "bonnie++" | "bonnie" => Program::Bonnie,
            "fsck" | "e2fsck" | "xfs_repair" => Program::Fsck,
            b if b.starts_with("fsck.") => Program::Fsck,
            "debugfs" => Program::Debugfs,
            "filefrag" => Program::Filefrag,
            "xfs_bmap" => Program::XfsBmap,
            "xfs_info" | "xfs_growfs" => Program::XfsInfo,
            "dumpe2fs" | "tune2fs" => Program::Dumpe2fs,
            b if UTILS.contains(&b) => Program::Util,
            b if (word.starts_with("./") || word.ends_with(".sh")) && !b.is_empty() => {
                Program::Script(b.to_string())
            }
            b => Program::Other(b.to_string()),
        }
    }

    /// Known to the importer (not [`Program::Other`]).
    pub fn is_known(&self) -> bool {
        !matches!(self, Program::Other(_))
    }

    /// A benchmark or workload program (what a post times).
    pub fn is_benchmark(&self) -> bool {
        matches!(
            self,
            Program::Fsstress | Program::FsMark | Program::Fio | Program::Bonnie
        )
    }
}

/// Programs recognised at the start of a bare line or inside a sentence, besides the
/// [`Program`] kinds.
const OTHER_WORKLOADS: &[&str] = &[
    "dbench",
    "iozone",
    "postmark",
    "filebench",
    "sysbench",
    "stress-ng",
    "xfs_repair",
    "xfs_db",
    "seekwatcher",
    "blktrace",
    "perf",
    "git",
    "make",
];

/// How a block was written in the post.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// After `#!/bin/sh`.
    Script,
    /// After a shell prompt.
    Prompt,
    /// Command lines without a prompt.
    Bare,
    /// Named in a sentence.
    Inline,
}

/// A loop's iteration.
#[derive(Debug, Clone, PartialEq)]
pub enum LoopKind {
    /// `for ((i=0;i<N;i++))`, `for i in $(seq N)`: N iterations.
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
}

impl Cmd {
    /// The program word (after `sudo`, `time`, `env X=y`).
    pub fn program_index(&self) -> usize {
        let mut i = 0;
        while let Some(w) = self.words.get(i) {
            if w == "sudo" || w == "time" || w == "env" || w == "nice" || w == "taskset" {
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

    /// The command from the program on, as written.
    pub fn text(&self) -> String {
        self.words[self.program_index()..].join(" ")
    }
}

/// A command or a loop.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Cmd(Cmd),
    Loop(Loop),
    /// `NAME=value` on its own.
    Assign {
        line: usize,
        name: String,
        value: String,
    },
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

/// A block of commands.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub kind: BlockKind,
    pub line: usize,
    pub nodes: Vec<Node>,
    /// Quote depth of its lines.
    pub depth: usize,
}

/// All commands of a post, and which of its lines they took.
#[derive(Debug, Clone, Default)]
pub struct Commands {
    pub blocks: Vec<Block>,
    /// Indices into the post's lines that are commands (not prose, not tool output).
    pub command_lines: Vec<bool>,
}

fn is_assignment(w: &str) -> bool {
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

/// A prompt at the start of a line: the command after it.
pub fn after_prompt(text: &str) -> Option<&str> {
    let t = text.trim_start();
    for p in ["# ", "$ ", "% "] {
        if let Some(r) = t.strip_prefix(p) {
            return Some(r.trim_start());
        }
    }
    // user@host:dir# cmd, host:~$ cmd, [root@host dir]# cmd, (venv) $ cmd
    let first = t.split_whitespace().next()?;
    if (first.ends_with('#') || first.ends_with('$')) && first.len() > 1 {
        let head = &first[..first.len() - 1];
        if head.contains('@') || head.contains(':') || head.ends_with(']') {
            return Some(t[first.len()..].trim_start());
        }
    }
    if t.starts_with('[') {
        if let Some(i) = t.find("]# ").or_else(|| t.find("]$ ")) {
            if t[..i].contains('@') {
                return Some(t[i + 3..].trim_start());
            }
        }
    }
    None
}

fn first_word(s: &str) -> &str {
    s.split_whitespace().next().unwrap_or("")
}

/// Whether text starts like a shell command (not prose): a known program with
/// argument-looking words, a loop, an assignment, a path.
pub fn looks_like_command(s: &str) -> bool {
    let t = s.trim();
    let w = first_word(t);
    if w.is_empty() {
        return false;
    }
    if w == "for" {
        let ws: Vec<&str> = t.split_whitespace().collect();
        let ident = ws
            .get(1)
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        return (ident
            && ws.get(2) == Some(&"in")
            && (t.contains("do") || t.contains(';') || t.ends_with('\\')))
            || t.contains("((");
    }
    if w == "time" {
        let rest = t[4..].trim_start();
        return rest.is_empty() || looks_like_command(rest) || first_word(rest).starts_with('/');
    }
    if w == "done" || w == "do" {
        return true;
    }
    if is_assignment(w) && !w.ends_with('=') && t.split_whitespace().count() == 1 {
        return true;
    }
    if w == "sudo" {
        return looks_like_command(&t[4..]);
    }
    let p = Program::of(w);
    let known = p.is_known() || OTHER_WORKLOADS.contains(&w);
    let pathy = w.starts_with("./") || (w.starts_with('/') && w.len() > 1 && !w.contains(':'));
    if !known && !pathy {
        return false;
    }
    let rest: Vec<&str> = t.split_whitespace().skip(1).collect();
    if rest.is_empty() {
        return matches!(p, Program::Sync | Program::Script(_)) || pathy;
    }
    if matches!(p, Program::Util | Program::Sync) && !rest.iter().any(|r| arg_like(r)) {
        return false;
    }
    // Prose after a program name: words that are not arguments.
    let args = rest.iter().filter(|r| arg_like(r)).count();
    args * 2 >= rest.len().min(4) && !t.ends_with('.') || args >= 2
}

fn arg_like(w: &str) -> bool {
    w.starts_with('-')
        || w.starts_with('/')
        || w.starts_with('$')
        || w.starts_with('"')
        || w.starts_with('\'')
        || w.contains('=')
        || w.contains('/')
        || w == ";"
        || w == "\\"
        || w.ends_with(';')
        || w.chars().next().is_some_and(|c| c.is_ascii_digit())
        || w.starts_with('>')
        || w == "|"
        || w == "&&"
}

/// Find every command block in the post.
pub fn find(lines: &[PostLine]) -> Commands {
    let mut out = Commands {
        blocks: Vec::new(),
        command_lines: vec![false; lines.len()],
    };
    let mut k = 0;
    while k < lines.len() {
        let l = &lines[k];
        let t = l.text.trim();
        if t.starts_with("#!/") && (t.contains("sh") || t.contains("bash")) {
            let (end, logical) = script_lines(lines, k);
            for m in k..end {
                out.command_lines[m] = true;
            }
            out.blocks.push(Block {
                kind: BlockKind::Script,
                line: l.n,
                nodes: parse_block(&logical),
                depth: l.depth,
            });
            k = end;
            continue;
        }
        let prompt = after_prompt(&l.text).filter(|c| looks_like_command(c) || prompt_command(c));
        let (kind, first) = match prompt {
            Some(c) => (BlockKind::Prompt, c.to_string()),
            None if looks_like_command(&l.text) => (BlockKind::Bare, l.text.trim().to_string()),
            None => {
                k += 1;
                continue;
            }
        };
        // The block: this line, its continuations, open loops, following command lines.
        let mut logical: Vec<(usize, String)> = Vec::new();
        let mut cur = first;
        let mut cur_n = l.n;
        let mut m = k;
        let mut open = 0i32;
        loop {
            out.command_lines[m] = true;
            let cont = cur.trim_end().ends_with('\\');
            if cont {
                let c = cur.trim_end().trim_end_matches('\\').to_string();
                cur = c;
            }
            if !cont {
                open += loop_balance(&cur);
                logical.push((cur_n, std::mem::take(&mut cur)));
            }
            m += 1;
            if m >= lines.len() || lines[m].depth != l.depth {
                if cont || !cur.is_empty() {
                    logical.push((cur_n, std::mem::take(&mut cur)));
                }
                break;
            }
            let next = lines[m].text.trim();
            if cont {
                cur.push(' ');
                cur.push_str(next);
                continue;
            }
            if open > 0 && !next.is_empty() {
                cur = next.to_string();
                cur_n = lines[m].n;
                continue;
            }
            if kind == BlockKind::Bare && !next.is_empty() && looks_like_command(next) {
                cur = next.to_string();
                cur_n = lines[m].n;
                continue;
            }
            break;
        }
        out.blocks.push(Block {
            kind,
            line: l.n,
            nodes: parse_block(&logical),
            depth: l.depth,
        });
        k = m;
    }
    // variables set in one block are used in the next (`$ DEV=/dev/vdb` then `$ mkfs $DEV`)
    let mut env = Vec::new();
    for b in &mut out.blocks {
        substitute(&mut b.nodes, &mut env);
    }
    inline_commands(lines, &mut out);
    out
}

/// A prompt followed by a path or script (`# ./dumb.sh 0`).
fn prompt_command(c: &str) -> bool {
    let w = first_word(c);
    w.starts_with("./") || w.ends_with(".sh") || (w.starts_with('/') && !w.contains(':'))
}

fn loop_balance(s: &str) -> i32 {
    let mut n = 0;
    for w in s.split(|c: char| c.is_whitespace() || c == ';') {
        match w {
            "do" | "then" => n += 1,
            "done" | "fi" => n -= 1,
            _ => {}
        }
    }
    n
}

/// A script from its `#!` line: up to the first blank line after a command once its
/// loops are closed (or a change of quote depth), `\` continuations joined.
fn script_lines(lines: &[PostLine], start: usize) -> (usize, Vec<(usize, String)>) {
    let depth = lines[start].depth;
    let mut logical = Vec::new();
    let mut m = start + 1;
    let mut open = 0;
    let mut has_cmd = false;
    let mut cur = String::new();
    let mut cur_n = 0;
    while m < lines.len() && lines[m].depth == depth {
        let t = lines[m].text.trim();
        if t.is_empty() && cur.is_empty() {
            if has_cmd && open <= 0 {
                break;
            }
            m += 1;
            continue;
        }
        if !has_cmd
            && !t.starts_with('#')
            && !looks_like_command(t)
            && !is_assignment(first_word(t))
        {
            // Text right after the shebang that is not shell: the script is empty.
            if !t.contains('=') && !t.ends_with(';') {
                break;
            }
        }
        if cur.is_empty() {
            cur_n = lines[m].n;
        } else {
            cur.push(' ');
        }
        if let Some(c) = t.strip_suffix('\\') {
            cur.push_str(c.trim_end());
            m += 1;
            continue;
        }
        cur.push_str(t);
        open += loop_balance(&cur);
        if !cur.starts_with('#') {
            has_cmd = true;
        }
        logical.push((cur_n, std::mem::take(&mut cur)));
        m += 1;
    }
    if !cur.is_empty() {
        logical.push((cur_n, cur));
    }
    (m, logical)
}

/// Commands named inside sentences: `"fsck -f"`, `mkfs.ext3 -j -I 256 -E test_fs`,
/// `uses fs_mark to fill`.
fn inline_commands(lines: &[PostLine], out: &mut Commands) {
    for (k, l) in lines.iter().enumerate() {
        if out.command_lines[k] || is_furniture(&l.text) {
            continue;
        }
        // the next line continues the sentence (a command broken at the line's end)
        let own = l.text.split_whitespace().count();
        let mut words: Vec<&str> = l.text.split_whitespace().collect();
        if let Some(next) = lines
            .get(k + 1)
            .filter(|n| n.depth == l.depth && !out.command_lines[k + 1])
        {
            words.extend(next.text.split_whitespace());
        }
        let mut i = 0;
        while i < own {
            let w = words[i].trim_start_matches(['"', '(', '`', '\'']);
            let quoted = words[i].starts_with(['"', '`', '\'']);
            let p = Program::of(w.trim_end_matches(['"', ',', '.', ')', '`', '\'', ':']));
            let workload_name = matches!(
                p,
                Program::Mkfs(_)
                    | Program::Fsck
                    | Program::Fsstress
                    | Program::FsMark
                    | Program::Fio
                    | Program::XfsIo
                    | Program::Bonnie
                    | Program::Debugfs
                    | Program::Filefrag
                    | Program::XfsBmap
                    | Program::Dd
            );
            if !workload_name || (matches!(p, Program::Mkfs(ref fs) if fs.is_empty())) {
                i += 1;
                continue;
            }
            let mut argv = vec![w
                .trim_end_matches(['"', ',', '.', ')', '`', '\'', ':'])
                .to_string()];
            let mut closed = w.ends_with(['"', '`', '\'']) && quoted;
            let mut j = i + 1;
            while j < words.len() && !closed {
                let a = words[j];
                let clean = a.trim_end_matches(['"', ',', '.', ')', '`', '\'', ':']);
                let end = a.ends_with(['"', '`', '\'', ',', '.', ')', ':']);
                let prev_opt = argv
                    .last()
                    .is_some_and(|p| p.starts_with('-') && p.len() == 2);
                let takes = clean.starts_with('-')
                    || (prev_opt
                        && (clean.contains(['=', ',', '_', '/'])
                            || clean.chars().next().is_some_and(|c| c.is_ascii_digit())))
                    || (quoted && !clean.is_empty());
                if !takes || clean.is_empty() {
                    break;
                }
                argv.push(clean.to_string());
                j += 1;
                if end {
                    closed = true;
                }
            }
            let benchmark = p.is_benchmark();
            if argv.len() > 1 || quoted || benchmark {
                out.blocks.push(Block {
                    kind: BlockKind::Inline,
                    line: l.n,
                    nodes: vec![Node::Cmd(Cmd {
                        line: l.n,
                        words: argv,
                        timed: false,
                    })],
                    depth: l.depth,
                });
            }
            i = j.max(i + 1);
        }
    }
}

// ---- the shell reader -------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String, usize),
    Sep(usize),
}

fn tokenize(logical: &[(usize, String)]) -> Vec<Tok> {
    let mut toks = Vec::new();
    for (n, line) in logical {
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        let mut word = String::new();
        let mut q: Option<char> = None;
        let flush = |word: &mut String, toks: &mut Vec<Tok>| {
            if !word.is_empty() {
                toks.push(Tok::Word(std::mem::take(word), *n));
            }
        };
        while i < chars.len() {
            let c = chars[i];
            if let Some(o) = q {
                word.push(c);
                if c == o {
                    q = None;
                }
                i += 1;
                continue;
            }
            match c {
                '\'' | '"' => {
                    q = Some(c);
                    word.push(c);
                }
                '#' if word.is_empty() => break,
                '(' if word.is_empty() && chars.get(i + 1) == Some(&'(') => {
                    // `((…))` as one word
                    let rest: String = chars[i..].iter().collect();
                    let end = rest.find("))").map_or(rest.len(), |e| e + 2);
                    toks.push(Tok::Word(rest[..end].to_string(), *n));
                    i += rest[..end].chars().count();
                    continue;
                }
                ';' | '\n' => {
                    flush(&mut word, &mut toks);
                    toks.push(Tok::Sep(*n));
                }
                '&' if chars.get(i + 1) == Some(&'&') => {
                    flush(&mut word, &mut toks);
                    toks.push(Tok::Sep(*n));
                    i += 1;
                }
                c if c.is_whitespace() => flush(&mut word, &mut toks),
                c => word.push(c),
            }
            i += 1;
        }
        flush(&mut word, &mut toks);
        toks.push(Tok::Sep(*n));
    }
    toks
}

/// Read a block of logical lines into nodes.
pub fn parse_block(logical: &[(usize, String)]) -> Vec<Node> {
    let toks = tokenize(logical);
    let mut i = 0;
    let mut nodes = parse_list(&toks, &mut i, &[]);
    substitute(&mut nodes, &mut Vec::new());
    nodes
}

fn parse_list(toks: &[Tok], i: &mut usize, stop: &[&str]) -> Vec<Node> {
    let mut nodes = Vec::new();
    while *i < toks.len() {
        // gather one simple command's words
        let mut words: Vec<(String, usize)> = Vec::new();
        while let Some(Tok::Word(w, n)) = toks.get(*i) {
            if words.is_empty() && stop.contains(&w.as_str()) {
                return nodes;
            }
            if words.is_empty() && (w == "for" || (w == "time" && next_is_for(toks, *i))) {
                break;
            }
            words.push((w.clone(), *n));
            *i += 1;
        }
        if words.is_empty() {
            match toks.get(*i) {
                Some(Tok::Word(w, n)) if w == "time" || w == "for" => {
                    let line = *n;
                    let timed = w == "time";
                    if timed {
                        *i += 1;
                    }
                    nodes.push(Node::Loop(parse_for(toks, i, line, timed)));
                }
                Some(Tok::Sep(_)) => *i += 1,
                Some(Tok::Word(..)) => *i += 1,
                None => break,
            }
            continue;
        }
        let line = words[0].1;
        let ws: Vec<String> = words.into_iter().map(|w| w.0).collect();
        if ws.len() == 1 && is_assignment(&ws[0]) {
            let (name, value) = ws[0].split_once('=').unwrap_or(("", ""));
            nodes.push(Node::Assign {
                line,
                name: name.to_string(),
                value: unquote(value),
            });
            continue;
        }
        if matches!(
            ws[0].as_str(),
            "do" | "done" | "then" | "fi" | "else" | "{" | "}"
        ) {
            continue;
        }
        let timed = ws[0] == "time";
        nodes.push(Node::Cmd(Cmd {
            line,
            words: ws,
            timed,
        }));
    }
    nodes
}

fn next_is_for(toks: &[Tok], i: usize) -> bool {
    matches!(toks.get(i + 1), Some(Tok::Word(w, _)) if w == "for")
}

fn parse_for(toks: &[Tok], i: &mut usize, line: usize, timed: bool) -> Loop {
    // at `for`
    *i += 1;
    let mut head_words = Vec::new();
    while let Some(t) = toks.get(*i) {
        match t {
            Tok::Word(w, _) if w == "do" => break,
            Tok::Word(w, _) => head_words.push(w.clone()),
            Tok::Sep(_) => {}
        }
        *i += 1;
    }
    *i += 1; // `do`
    let body = parse_list(toks, i, &["done"]);
    *i += 1; // `done`
    let head = format!("for {}", head_words.join(" "));
    let (var, kind) = loop_kind(&head_words);
    let mut l = Loop {
        line,
        var,
        kind,
        head,
        body,
        timed,
    };
    if timed {
        mark_timed(&mut l.body);
    }
    l
}

fn mark_timed(nodes: &mut [Node]) {
    for n in nodes {
        match n {
            Node::Cmd(c) => c.timed = true,
            Node::Loop(l) => {
                l.timed = true;
                mark_timed(&mut l.body)
            }
            Node::Assign { .. } => {}
        }
    }
}

fn loop_kind(head: &[String]) -> (String, LoopKind) {
    if let Some(c) = head.first().filter(|w| w.starts_with("((")) {
        // ((i=0;i<N;i++)) or ((i=1;i<=N;i++))
        let inner = c.trim_start_matches('(').trim_end_matches(')');
        let parts: Vec<&str> = inner.split(';').map(str::trim).collect();
        if parts.len() == 3 {
            let (var, start) = parts[0].split_once('=').unwrap_or(("i", "0"));
            let start: i64 = start.trim().parse().unwrap_or(0);
            let var = var.trim().to_string();
            let cond = parts[1].replace(' ', "");
            let count = if let Some((_, n)) = cond.split_once("<=") {
                n.parse::<i64>().ok().map(|n| n - start + 1)
            } else if let Some((_, n)) = cond.split_once('<') {
                n.parse::<i64>().ok().map(|n| n - start)
            } else {
                None
            };
            return match count {
                Some(c) if c >= 0 && parts[2].contains("++") => (var, LoopKind::Count(c as u64)),
                _ => (var, LoopKind::Unknown),
            };
        }
        return ("i".into(), LoopKind::Unknown);
    }
    let var = head.first().cloned().unwrap_or_default();
    let items: Vec<String> = match head.iter().position(|w| w == "in") {
        Some(p) => head[p + 1..].iter().map(|w| unquote(w)).collect(),
        None => return (var, LoopKind::Unknown),
    };
    if items.len() == 1 {
        let it = &items[0];
        if let Some(r) = it.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
            if let Some((a, b)) = r.split_once("..") {
                if let (Ok(a), Ok(b)) = (a.parse(), b.parse()) {
                    return (var, LoopKind::Range(a, b));
                }
            }
        }
        // $(seq N) / `seq 1 N`
        let s = it.trim_matches(['$', '(', ')', '`']);
        let nums: Vec<i64> = s
            .split_whitespace()
            .skip(1)
            .filter_map(|x| x.parse().ok())
            .collect();
        if s.starts_with("seq") {
            match nums.as_slice() {
                [n] => return (var, LoopKind::Count((*n).max(0) as u64)),
                [a, b] => return (var, LoopKind::Range(*a, *b)),
                _ => {}
            }
        }
    }
    if items
        .iter()
        .any(|w| w.starts_with("$(") || w.starts_with('`'))
    {
        // $(seq …) split over words
        let joined = items.join(" ");
        let s = joined.trim_matches(['$', '(', ')', '`']);
        let nums: Vec<i64> = s
            .split_whitespace()
            .skip(1)
            .filter_map(|x| x.trim_matches(')').parse().ok())
            .collect();
        if s.starts_with("seq") {
            match nums.as_slice() {
                [n] => return (var, LoopKind::Count((*n).max(0) as u64)),
                [a, b] => return (var, LoopKind::Range(*a, *b)),
                _ => {}
            }
        }
        return (var, LoopKind::Unknown);
    }
    (var, LoopKind::List(items))
}

/// Substitute variables set by assignments into the words that follow them.
fn substitute(nodes: &mut [Node], env: &mut Vec<(String, String)>) {
    for n in nodes.iter_mut() {
        match n {
            Node::Assign { name, value, .. } => {
                let v = subst_word(value, env);
                env.retain(|(k, _)| k != name);
                env.push((name.clone(), v));
            }
            Node::Cmd(c) => {
                for w in &mut c.words {
                    *w = subst_word(w, env);
                }
            }
            Node::Loop(l) => {
                if let LoopKind::List(items) = &mut l.kind {
                    for it in items.iter_mut() {
                        *it = subst_word(it, env);
                    }
                }
                // the loop variable shadows
                let saved = env.clone();
                env.retain(|(k, _)| *k != l.var);
                substitute(&mut l.body, env);
                *env = saved;
            }
        }
    }
}

/// `$NAME` / `${NAME}` replaced when NAME was set.
pub fn subst_word(w: &str, env: &[(String, String)]) -> String {
    if !w.contains('$') || env.is_empty() {
        return w.to_string();
    }
    let mut out = String::new();
    let chars: Vec<char> = w.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '$' {
            let (name, len) = var_at(&chars[i + 1..]);
            if let Some((_, v)) = env.iter().find(|(k, _)| *k == name) {
                out.push_str(v);
                i += 1 + len;
                continue;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// The variable name after a `$` and how many characters it takes (`{x}` included).
pub fn var_at(rest: &[char]) -> (String, usize) {
    if rest.first() == Some(&'{') {
        let name: String = rest[1..].iter().take_while(|c| **c != '}').collect();
        let len = name.chars().count() + 2;
        return (name, len);
    }
    if rest.first().is_some_and(|c| c.is_ascii_digit()) {
        return (rest[0].to_string(), 1);
    }
    let name: String = rest
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
        .collect();
    let len = name.chars().count();
    (name, len)
}

/// Every `$NAME` in a word.
pub fn vars_in(w: &str) -> Vec<String> {
    let chars: Vec<char> = w.chars().collect();
    let mut out = Vec::new();
    for (i, c) in chars.iter().enumerate() {
        if *c == '$' {
            let (name, _) = var_at(&chars[i + 1..]);
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out
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
            Node::Assign { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::mail::unquote as unquote_lines;

    fn lines(s: &str) -> Vec<PostLine> {
        let body: Vec<(usize, String)> = s
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.to_string()))
            .collect();
        unquote_lines(&body)
    }

    fn cmds(c: &Commands) -> Vec<(usize, String, bool)> {
        let mut v = Vec::new();
        for b in &c.blocks {
            walk(&b.nodes, &mut Vec::new(), &mut |c, _| {
                v.push((c.line, c.text(), c.timed))
            });
        }
        v
    }

    #[test]
    fn prompts_of_every_shape() {
        for (line, want) in [
            ("# mkfs.xfs -f /dev/sdb", Some("mkfs.xfs -f /dev/sdb")),
            ("$ ./run.sh 1", Some("./run.sh 1")),
            ("root@vm:~# fio --name=x", Some("fio --name=x")),
            (
                "[root@host tmp]# xfs_io -c 'fsync' f",
                Some("xfs_io -c 'fsync' f"),
            ),
            ("This is prose.", None),
        ] {
            assert_eq!(after_prompt(line), want, "{line}");
        }
        assert!(!looks_like_command("mount options are fine here."));
        assert!(looks_like_command(
            "mount -o loop,logbsize=256k fs.img /mnt"
        ));
        assert!(!looks_like_command(
            "For the rest of us who don't live in the stratosphere"
        ));
    }

    #[test]
    fn script_with_count_loop_and_time() {
        let c = find(&lines(
            "I ran:\n\n#!/bin/bash\n\numount /opt\nmkfs.xfs -f /dev/sdb -n parent=$1\nfor ((i=0;i<10;i++)); do\n\ttime fsstress -n 400 -d /opt/foo\ndone\n\n# ./dumb.sh 0\nreal 0m1.0s\n",
        ));
        let got = cmds(&c);
        assert_eq!(got[0], (5, "umount /opt".into(), false));
        assert_eq!(got[1].0, 6);
        assert_eq!(got[2], (8, "fsstress -n 400 -d /opt/foo".into(), true));
        assert_eq!(got[3], (11, "./dumb.sh 0".into(), false));
        let Node::Loop(l) = &c.blocks[0].nodes[2] else {
            panic!("{:?}", c.blocks[0].nodes)
        };
        assert_eq!(l.kind, LoopKind::Count(10));
        assert_eq!(c.blocks[1].kind, BlockKind::Prompt);
        assert!(!c.command_lines[11], "time output is not a command");
    }

    #[test]
    fn continuations_brace_ranges_and_timed_loops() {
        let c = find(&lines(
            "tests:\n\n  mkfs.xfs -f -d rtinherit=1 \\\n           -r rtdev=/dev/pmem1s,extsize=$rtextsize /dev/pmem2s\n  for i in {1..1000}; \\\n  do dd if=/dev/zero of=/mnt/scratch/$i bs=$rtextsize count=1; done\n  time for i in {1..1000}; \\\n  do xfs_io -c \"truncate 4k\" /mnt/scratch/$i; done\n\nrtextsize 8k\n",
        ));
        assert_eq!(c.blocks.len(), 1);
        let nodes = &c.blocks[0].nodes;
        let Node::Cmd(mkfs) = &nodes[0] else { panic!() };
        assert_eq!(mkfs.line, 3);
        assert!(mkfs.text().ends_with("extsize=$rtextsize /dev/pmem2s"));
        let Node::Loop(dd) = &nodes[1] else { panic!() };
        assert_eq!(
            (dd.kind.clone(), dd.timed, dd.line),
            (LoopKind::Range(1, 1000), false, 5)
        );
        let Node::Loop(tr) = &nodes[2] else { panic!() };
        assert!(tr.timed);
        let Node::Cmd(x) = &tr.body[0] else { panic!() };
        assert_eq!(x.argv(), ["xfs_io", "-c", "truncate 4k", "/mnt/scratch/$i"]);
        assert!(x.timed);
    }

    #[test]
    fn list_loops_and_assignments() {
        let c = find(&lines(
            "$ DEV=/dev/vdb\n$ for p in 1 0; do mkfs.xfs -f -n parent=$p $DEV; done\n",
        ));
        let got = cmds(&c);
        assert_eq!(
            got,
            [(2, "mkfs.xfs -f -n parent=$p /dev/vdb".to_string(), false)]
        );
        let Node::Loop(l) = &c.blocks[1].nodes[0] else {
            panic!("{:?}", c.blocks)
        };
        assert_eq!(l.kind, LoopKind::List(vec!["1".into(), "0".into()]));
    }

    #[test]
    fn inline_commands_in_prose_and_quotes() {
        let c = find(&lines(
            "> Running on ext3, \"fsck -f\" takes about one hour.\n(Ric just made the fs with mkfs.ext3 -j -I 256 -E test_fs initially I think)\nThe test uses fs_mark to fill a drive.\n",
        ));
        let got = cmds(&c);
        assert_eq!(got[0], (1, "fsck -f".into(), false));
        assert_eq!(got[1], (2, "mkfs.ext3 -j -I 256 -E test_fs".into(), false));
        assert_eq!(got[2], (3, "fs_mark".into(), false));
    }
}
