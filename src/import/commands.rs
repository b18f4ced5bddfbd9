//! Commands in a post: shell prompts (`# `, `$ `, `user@host:dir# `, `[root@host ~]# `),
//! `#!/bin/sh` scripts, indented command lines, lines continued with `\`, and commands
//! named inside a sentence (`"fsck -f"`, `mkfs.ext3 -j -I 256`). Each block is read as a
//! small shell: `;`/`&&` lists, `for NAME in …; do …; done`, `for ((i=0;i<N;i++))`,
//! `for i in {1..N}`, `time CMD`, `NAME=value` assignments (substituted into later
//! commands). Every command keeps its line in the post.

pub use super::block::{Block, BlockKind};
use super::fiolat;
use super::mail::{is_furniture, PostLine};
use super::programs::{Program, OTHER_WORKLOADS};
use super::shell::{self, heredoc};
use super::shell::{
    inline_calls, is_assignment, loop_balance, parse_block, substitute, Cmd, Env, Node,
};

/// All commands of a post, and which of its lines they took.
#[derive(Debug, Clone, Default)]
pub struct Commands {
    pub blocks: Vec<Block>,
    /// Indices into the post's lines that are commands (not prose, not tool output).
    pub command_lines: Vec<bool>,
}

/// A prompt at the start of a line: the command after it. A numbered step before it
/// (`3.   # dd …`, `2) $ mount …`) is the list's, not the command's.
pub fn after_prompt(text: &str) -> Option<&str> {
    let t = text.trim_start();
    if let Some(rest) = list_number(t) {
        if let Some(c) = after_prompt(rest) {
            return Some(c);
        }
    }
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
    // `user@host: /some/dir$ cmd`: the directory after the colon, a blank between
    let mut ws = t.split_whitespace();
    if let (Some(host), Some(dir)) = (ws.next(), ws.next()) {
        let at_host = host.ends_with(':') && host.contains('@') && !host.contains("://");
        if at_host && dir.len() > 1 && dir.starts_with(['/', '~']) && dir.ends_with(['$', '#']) {
            let from = t.find(dir).map_or(t.len(), |i| i + dir.len());
            return Some(t[from..].trim_start());
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

/// The directory a prompt shows (`user@host:/data# ` → `/data`, `host:~$ ` → `~`,
/// `[root@host mnt]# ` → `mnt`, bash's last name of it; `user@host: /dir$ `).
pub fn prompt_dir(text: &str) -> Option<String> {
    let t = text.trim_start();
    let t = list_number(t).unwrap_or(t);
    let cmd = after_prompt(t)?;
    let head = t[..t.len() - cmd.len()].trim_end();
    let head = head.strip_suffix(['#', '$'])?;
    let dir = if let Some(inner) = head.strip_prefix('[') {
        let inner = inner.strip_suffix(']')?;
        inner
            .contains('@')
            .then(|| inner.split_whitespace().last())??
    } else {
        let (_, d) = head.split_once(':')?;
        d.trim()
    };
    (!dir.is_empty() && !dir.contains(char::is_whitespace) && !dir.contains('@'))
        .then(|| dir.to_string())
}

/// The text after a numbered list item's mark (`3.`, `12)`) and its blank.
fn list_number(t: &str) -> Option<&str> {
    let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let rest = t[digits..].strip_prefix(['.', ')'])?;
    (digits > 0 && digits <= 2 && rest.starts_with([' ', '\t'])).then(|| rest.trim_start())
}

/// A root prompt written without its blank (`#cd  /tank/data`) among prompts that have
/// one: the command, when its program is one fslab knows or `cd`. Alone, or in a script,
/// `#word` is a comment (a command left out), so a `# ` prompt must stand on the line
/// right above or below (blank lines aside, same quote depth).
fn glued_root_prompt(lines: &[PostLine], k: usize) -> Option<&str> {
    let t = lines[k].text.trim_start();
    let t = list_number(t).unwrap_or(t);
    let c = t.strip_prefix('#')?;
    let w = first_word(c);
    if c.starts_with([' ', '\t', '!', '#']) || w.is_empty() {
        return None;
    }
    let p = Program::of(w);
    if !p.is_known() || matches!(p, Program::Script(_)) || !looks_like_command(c) {
        return None;
    }
    let prompt_near = |it: &mut dyn Iterator<Item = &PostLine>| {
        it.take_while(|l| l.depth == lines[k].depth)
            .find(|l| !l.text.trim().is_empty())
            .and_then(|l| after_prompt(&l.text))
            .is_some_and(|p| looks_like_command(p) || unknown_at_prompt(p))
    };
    let above = prompt_near(&mut lines[..k].iter().rev());
    let below = prompt_near(&mut lines[k + 1..].iter());
    (above || below).then_some(c)
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
    // a template whose words are placeholders (`of=[PATH] bs=[BLOCK_SIZE]k`): no command
    if t.split(['[', ']'])
        .skip(1)
        .step_by(2)
        .any(|p| p.len() >= 2 && p.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
    {
        return false;
    }
    // `sh -c "dd … && sync"`: the script it runs says
    if matches!(w, "sh" | "bash") {
        if let Some(script) = t[w.len()..].trim_start().strip_prefix("-c ") {
            return looks_like_command(script.trim().trim_matches(['"', '\'']));
        }
    }
    if w == "time" {
        let rest = t[4..].trim_start();
        return rest.is_empty() || looks_like_command(rest) || first_word(rest).starts_with('/');
    }
    if matches!(w, "done" | "do" | "fi" | "else" | "then" | "esac" | ";;") {
        return true;
    }
    // `case $fs in`
    if w == "case" {
        let ws: Vec<&str> = t.split_whitespace().collect();
        return ws.len() >= 3
            && ws[2] == "in"
            && (ws[1].starts_with(['$', '"', '\''])
                || ws[1].chars().all(|c| c.is_ascii_alphanumeric()));
    }
    // a shell function: `run_test() {`, `function run_test {`
    if w.ends_with("()") || w.ends_with("(){") {
        return w.len() > 3 && (t.ends_with('{') || t.ends_with("()") || t.ends_with('}'));
    }
    if w == "function" {
        let ws: Vec<&str> = t.split_whitespace().collect();
        return ws.len() >= 3 && (ws[2] == "{" || ws[2] == "()" || ws[1].ends_with("()"));
    }
    if matches!(w, "while" | "until" | "if" | "elif") {
        // a loop or test head: `while [ $i -lt 10 ]; do`, `if [ -d /mnt ]; then`
        return t.contains("; do")
            || t.contains("; then")
            || t.ends_with(" do")
            || t.ends_with(" then")
            || t.ends_with('\\')
            || t.contains(" [ ")
            || t.contains("((")
            || t.contains(" [[ ");
    }
    if is_assignment(w) && !w.ends_with('=') && t.split_whitespace().count() == 1 {
        return true;
    }
    // `NR_CPUS=`nproc``, `F=$(head -c 64 /dev/urandom)`: a variable set from a command
    if let Some((name, value)) = t.split_once('=') {
        if is_assignment(&format!("{name}=")) && !name.contains(' ') {
            let whole = |open: &str, close: char| value.starts_with(open) && value.ends_with(close);
            if whole("`", '`') || whole("$(", ')') {
                return true;
            }
        }
    }
    if let Some(rest) = t
        .strip_prefix(w)
        .filter(|_| w.ends_with(';') && is_assignment(w))
    {
        // `i=0; while …`
        return looks_like_command(rest);
    }
    if w == "sudo" {
        return looks_like_command(&t[4..]);
    }
    // `[ -d /mnt/x ] || mkdir /mnt/x`, `test -x /usr/bin/fio && time fio …`: a test that
    // heads a chain, and a command after it
    if matches!(w, "[" | "[[" | "test") {
        return [" && ", " || "]
            .iter()
            .filter_map(|op| t.split_once(op).map(|(_, r)| r))
            .any(looks_like_command);
    }
    // fio's fsync latencies (`sync (nsec): min=74, max=578, …`) are output
    if fiolat::detail(t).is_some() {
        return false;
    }
    let p = Program::of(w);
    let known = p.is_known() || OTHER_WORKLOADS.contains(&w);
    // a device or a kernel file is never a program (`/dev/nvme1n1 /nvme xfs rw,…` is output)
    let pathy = w.starts_with("./")
        || (w.starts_with('/')
            && w.len() > 1
            && !w.contains(':')
            && !["/dev/", "/proc/", "/sys/"]
                .iter()
                .any(|d| w.starts_with(d)));
    if !known && !pathy {
        return false;
    }
    let rest: Vec<&str> = t.split_whitespace().skip(1).collect();
    if rest.is_empty() {
        return matches!(p, Program::Sync | Program::Script(_)) || pathy;
    }
    // a sentence that starts with a program's name: `fs_mark itself shows a decrease in …`
    let word = |w: &str| w.chars().all(|c| c.is_ascii_alphabetic() || c == '\'');
    if rest.first().is_some_and(|w| word(w)) && rest.iter().take(5).filter(|w| word(w)).count() >= 3
    {
        return false;
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
        || w.starts_with("<<")
        || w == "|"
        || w == "&&"
}

/// Find every command block in the post.
pub fn find(lines: &[PostLine]) -> Commands {
    let mut out = Commands {
        blocks: Vec::new(),
        command_lines: vec![false; lines.len()],
    };
    // the shell functions defined so far: a line that calls one is a command
    let mut funcs: Vec<String> = Vec::new();
    let mut seen_blocks = 0;
    let mut k = 0;
    while k < lines.len() {
        if out.blocks.len() != seen_blocks {
            seen_blocks = out.blocks.len();
            funcs.clear();
            for b in &out.blocks {
                defined_in(&b.nodes, &mut funcs);
            }
        }
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
        let prompt = after_prompt(&l.text)
            .filter(|c| {
                looks_like_command(c)
                    || prompt_command(c)
                    || calls(c, &funcs)
                    || at_prompt(c)
                    || unknown_at_prompt(c)
            })
            .or_else(|| glued_root_prompt(lines, k));
        let (kind, first) = match prompt {
            Some(c) => (BlockKind::Prompt, c.to_string()),
            None if looks_like_command(&l.text)
                || calls(&l.text, &funcs)
                || defines(&l.text).is_some() =>
            {
                (BlockKind::Bare, l.text.trim().to_string())
            }
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
        // the delimiters of here-documents whose bodies come next
        let mut pending: Vec<String> = Vec::new();
        loop {
            out.command_lines[m] = true;
            let mut cont = false;
            if !pending.is_empty() {
                // a here-document's line, kept as written
                if heredoc::ends(&cur, &pending[0]) {
                    // after a here-string's closing quote: the command goes on (`; done`)
                    open += heredoc::after_close(&cur, &pending[0]).map_or(0, loop_balance);
                    pending.remove(0);
                }
                logical.push((cur_n, std::mem::take(&mut cur)));
            } else {
                cont = cur.trim_end().ends_with('\\');
                let next = lines.get(m + 1).filter(|n| n.depth == l.depth);
                if cont {
                    let c = cur.trim_end().trim_end_matches('\\').to_string();
                    cur = c;
                } else if kind == BlockKind::Prompt && wrapped(&cur, next.map(|n| n.text.as_str()))
                {
                    cont = true;
                } else {
                    open += loop_balance(&cur);
                    pending = heredoc::openers(&cur)
                        .into_iter()
                        .map(|o| o.delim)
                        .collect();
                    logical.push((cur_n, std::mem::take(&mut cur)));
                }
            }
            m += 1;
            if m >= lines.len() || lines[m].depth != l.depth {
                if cont || !cur.is_empty() {
                    logical.push((cur_n, std::mem::take(&mut cur)));
                }
                break;
            }
            if !pending.is_empty() {
                cur = string_line(&lines[m].text, &pending[0], &l.text);
                cur_n = lines[m].n;
                continue;
            }
            let next = lines[m].text.trim();
            if cont {
                cur.push(' ');
                cur.push_str(next);
                continue;
            }
            if open > 0 && (!next.is_empty() || shell_follows(lines, m, &funcs)) {
                // an open loop or function goes on, past a blank line when shell follows it
                cur = next.to_string();
                cur_n = lines[m].n;
                continue;
            }
            if let Some(f) = logical.last().and_then(|(_, t)| defines(t)) {
                funcs.push(f);
            }
            if kind == BlockKind::Bare
                && !next.is_empty()
                && (looks_like_command(next) || calls(next, &funcs) || defines(next).is_some())
            {
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
    // functions defined in one block are called in the next
    let mut defs = Vec::new();
    for b in &mut out.blocks {
        inline_calls(&mut b.nodes, &mut defs);
    }
    // variables set in one block are used in the next (`$ DEV=/dev/vdb` then `$ mkfs $DEV`)
    let mut env = Env::default();
    for b in &mut out.blocks {
        substitute(&mut b.nodes, &mut env);
    }
    // `cd DIR`: the directory of the commands after it, within one writer's quote depth
    // (a prompt that shows its directory says where the shell is)
    let mut dirs = shell::cwd::Dirs::default();
    let mut depth = None;
    for b in &mut out.blocks {
        if depth.replace(b.depth) != Some(b.depth) {
            dirs = shell::cwd::Dirs::default();
        }
        let at = lines.iter().find(|l| l.n == b.line);
        let shown = at
            .filter(|_| b.kind == BlockKind::Prompt)
            .and_then(|l| prompt_dir(&l.text).map(|d| (l, d)))
            .map(|(l, dir)| shell::cwd::Cwd {
                dir,
                line: l.n,
                text: l.text.trim().to_string(),
                prompt: true,
            });
        match shown {
            // the prompt's directory holds for its own commands (a `cd` among them on)
            Some(cwd) => {
                let before = dirs.cur.replace(cwd.clone());
                shell::cwd::apply(&mut b.nodes, &mut dirs);
                if dirs.cur.as_ref() == Some(&cwd) {
                    dirs.cur = before;
                }
            }
            None => shell::cwd::apply(&mut b.nodes, &mut dirs),
        }
    }
    // the same commands run again with other arguments: a loop over the runs
    // (the commands whose output the post shows right below them count as runs: dd's)
    let shown: Vec<usize> = (0..lines.len())
        .filter(|&k| {
            out.command_lines[k]
                && lines.get(k + 1).is_some_and(|n| {
                    let t = n.text.trim();
                    n.depth == lines[k].depth
                        && !out.command_lines[k + 1]
                        && !t.is_empty()
                        && !t.starts_with("```")
                        && !looks_like_prose(t)
                })
        })
        .map(|k| lines[k].n)
        .collect();
    super::sequences::repeated_runs(&mut out.blocks, &shown);
    inline_commands(lines, &mut out);
    out
}

/// A line of prose rather than a tool's output: words, ending as a sentence does.
pub fn looks_like_prose(t: &str) -> bool {
    let words: Vec<&str> = t.split_whitespace().collect();
    t.ends_with(['.', '?', '!', ':'])
        && words.len() >= 3
        && words
            .iter()
            .filter(|w| w.chars().all(|c| c.is_alphabetic() || c == ',' || c == '.'))
            .count()
            * 2
            > words.len()
}

/// Whether a mailer broke the command line `cur` after an option that takes a value: `#
/// mount -o` / `loop,logbsize=256k /img /mnt`, `# mkfs.xfs -f -l` / `size=1310b,sunit=8 /img`.
fn wrapped(cur: &str, next: Option<&str>) -> bool {
    let Some(next) = next.map(str::trim) else {
        return false;
    };
    let last = cur.split_whitespace().last().unwrap_or("");
    let first = next.split_whitespace().next().unwrap_or("");
    // (flags that take no value end a command; mkfs's output is no argument)
    last.len() == 2
        && last.starts_with('-')
        && last[1..].chars().all(|c| c.is_ascii_alphabetic())
        && !matches!(last, "-f" | "-F" | "-q" | "-K" | "-N" | "-v" | "-V")
        && !first.starts_with("meta-data=")
        && after_prompt(next).is_none()
        && !first.starts_with('-')
        && first.contains(['=', ','])
}

/// The function a line defines: `run_test() {`, `run_test ()`, `function run_test {`.
fn defines(text: &str) -> Option<String> {
    let ws: Vec<&str> = text.split_whitespace().collect();
    let name = match ws.as_slice() {
        ["function", name, ..] => name.trim_end_matches("(){").trim_end_matches("()"),
        [w, ..] if w.ends_with("()") || w.ends_with("(){") => {
            w.trim_end_matches("(){").trim_end_matches("()")
        }
        [w, "()", ..] | [w, "(){", ..] => w,
        _ => return None,
    };
    (!name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')))
    .then(|| name.to_string())
}

/// Whether the next line that is not blank after post index `m`, at its quote depth, is
/// shell: a command, a call or definition of a function, a closing word, an indented line.
fn shell_follows(lines: &[PostLine], m: usize, funcs: &[String]) -> bool {
    let depth = lines[m].depth;
    lines[m..]
        .iter()
        .take_while(|l| l.depth == depth)
        .find(|l| !l.text.trim().is_empty())
        .is_some_and(|l| {
            let t = l.text.trim();
            looks_like_command(t)
                || calls(t, funcs)
                || defines(t).is_some()
                || matches!(first_word(t), "}" | "done" | "fi" | "esac" | ";;")
                || l.text.starts_with([' ', '\t'])
        })
}

/// Whether a line calls one of the functions the post defined (`run_test 0`).
fn calls(text: &str, funcs: &[String]) -> bool {
    let w = first_word(text).trim_end_matches(';');
    !w.is_empty() && funcs.iter().any(|f| f == w)
}

/// The names of the functions nodes define, at any depth.
fn defined_in(nodes: &[Node], out: &mut Vec<String>) {
    for n in nodes {
        match n {
            Node::Func { name, body, .. } => {
                out.push(name.clone());
                defined_in(body, out);
            }
            Node::Loop(l) => defined_in(&l.body, out),
            Node::Else { body, .. } | Node::Unread { body, .. } => defined_in(body, out),
            Node::Cmd(_) | Node::Assign { .. } => {}
        }
    }
}

/// A known benchmark or tool after a prompt, with a word after it that is not a sentence's
/// (`# fio randwrite.fio`: a job file the post wrote).
fn at_prompt(c: &str) -> bool {
    let ws: Vec<&str> = c.split_whitespace().collect();
    ws.len() >= 2
        && Program::of(ws[0]).is_known()
        && !matches!(Program::of(ws[0]), Program::Util)
        && !c.trim_end().ends_with(['.', '?', '!', ':'])
        && ws[1..]
            .iter()
            .all(|w| !w.chars().next().is_some_and(char::is_uppercase))
}

/// A program fslab does not know, after a prompt, run with arguments (`# sfdisk
/// /dev/sdb`, `$ frobnicate --fast /mnt`): kept, so that the draft names it as a
/// `tools:` entry the doctor checks, never dropped. A prompt's `#` is also a heading's
/// or a comment's, so the name must read as a program's (lower case, no sentence
/// punctuation at the end), the word after it as an argument, and at most one plain word
/// may follow (`# see /proc/meminfo for details` is prose).
fn unknown_at_prompt(c: &str) -> bool {
    let ws: Vec<&str> = c.split_whitespace().collect();
    let Some((&name, args)) = ws.split_first() else {
        return false;
    };
    let program_name = name.len() >= 2
        && name.starts_with(|ch: char| ch.is_ascii_lowercase())
        && name
            .chars()
            .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || "._+-".contains(ch));
    let plain = |w: &str| w.chars().all(|ch| ch.is_alphabetic() || ch == '\'');
    program_name
        && !matches!(Program::of(name), Program::Util)
        && args.first().is_some_and(|w| arg_like(w))
        && args.iter().filter(|w| plain(w)).count() <= 1
        && !c.trim_end().ends_with(['.', '?', '!', ':'])
}

/// A line of the body of `delim`: as written; in a here-string that spans lines without
/// the indentation of the block's first line `head` (a mail's, not the text's).
fn string_line(text: &str, delim: &str, head: &str) -> String {
    if !delim.starts_with(heredoc::STRING) {
        return text.to_string();
    }
    let indent = head.len() - head.trim_start().len();
    let cut = text
        .char_indices()
        .take_while(|(i, c)| *i < indent && c.is_whitespace())
        .map(|(i, c)| i + c.len_utf8())
        .last()
        .unwrap_or(0);
    text[cut..].to_string()
}

/// A prompt followed by a path or script (`# ./dumb.sh 0`).
fn prompt_command(c: &str) -> bool {
    let w = first_word(c);
    w.starts_with("./") || w.ends_with(".sh") || (w.starts_with('/') && !w.contains(':'))
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
    let mut pending: Vec<String> = Vec::new();
    let mut funcs: Vec<String> = Vec::new();
    while m < lines.len() && lines[m].depth == depth {
        if !pending.is_empty() {
            // a here-document's line, kept as written
            let text = string_line(&lines[m].text, &pending[0], &lines[start].text);
            if heredoc::ends(&text, &pending[0]) {
                open += heredoc::after_close(&text, &pending[0]).map_or(0, loop_balance);
                pending.remove(0);
            }
            logical.push((lines[m].n, text));
            m += 1;
            continue;
        }
        let t = lines[m].text.trim();
        if t.is_empty() && cur.is_empty() {
            // a blank line ends the script, unless shell follows it: a function it
            // defines, a call of one, another command
            let next = lines[m..]
                .iter()
                .take_while(|l| l.depth == depth)
                .map(|l| l.text.trim())
                .find(|t| !t.is_empty());
            let goes_on = next.is_some_and(|t| {
                calls(t, &funcs)
                    || defines(t).is_some()
                    || (looks_like_command(t) && !t.starts_with("#"))
            });
            if has_cmd && open <= 0 && !goes_on {
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
        funcs.extend(defines(&cur));
        pending = heredoc::openers(&cur)
            .into_iter()
            .map(|o| o.delim)
            .collect();
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
            if let Some((cmd, next)) = timed_span(&words, i, l.n) {
                out.blocks.push(Block {
                    kind: BlockKind::Inline,
                    line: l.n,
                    nodes: vec![Node::Cmd(cmd)],
                    depth: l.depth,
                });
                i = next;
                continue;
            }
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
            // `Walking via ls -R`, `using find . -type f`: a utility named as what was run
            let prev = if i > 0 {
                words[i - 1].to_ascii_lowercase()
            } else {
                String::new()
            };
            let by_verb = matches!(p, Program::Util)
                && matches!(
                    prev.as_str(),
                    "via" | "using" | "running" | "ran" | "run" | "with"
                )
                && words.get(i + 1).is_some_and(|n| {
                    n.starts_with('-') || n.starts_with('.') || n.starts_with('/')
                });
            if !(workload_name || by_verb) || (matches!(p, Program::Mkfs(ref fs) if fs.is_empty()))
            {
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
                    || (quoted && !clean.is_empty())
                    // dd's operands: `Example on flash: dd if=/dev/zero of=/mnt/x bs=4K`
                    || (matches!(p, Program::Dd) && clean.split_once('=').is_some_and(|(k, v)| {
                        !v.is_empty() && !k.is_empty() && k.chars().all(|c| c.is_ascii_lowercase())
                    }));
                if !takes || clean.is_empty() {
                    break;
                }
                argv.push(clean.to_string());
                j += 1;
                if end {
                    closed = true;
                }
            }
            let benchmark = p.is_benchmark() || by_verb;
            if argv.len() > 1 || quoted || benchmark {
                out.blocks.push(Block {
                    kind: BlockKind::Inline,
                    line: l.n,
                    nodes: vec![Node::Cmd(Cmd::new(l.n, argv))],
                    depth: l.depth,
                });
            }
            i = j.max(i + 1);
        }
    }
}

/// A timed command quoted in a sentence (``Test with `time memhog 128G` inside …``): the
/// words between the backquotes after `time`, when the first reads as a program's name
/// (any program: the post says it timed it); the command and the index after the span.
fn timed_span(words: &[&str], i: usize, line: usize) -> Option<(Cmd, usize)> {
    if words[i] != "`time" {
        return None;
    }
    let program = words.get(i + 1)?;
    let name_like = program
        .trim_end_matches('`')
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_-.+".contains(c));
    if !name_like || !program.starts_with(|c: char| c.is_ascii_lowercase()) {
        return None;
    }
    let end = (i + 1..words.len().min(i + 16)).find(|&j| {
        words[j]
            .trim_end_matches([',', '.', ')', ':', ';'])
            .ends_with('`')
    })?;
    let argv: Vec<String> = words[i + 1..=end]
        .iter()
        .map(|w| {
            w.trim_end_matches([',', '.', ')', ':', ';'])
                .trim_end_matches('`')
                .to_string()
        })
        .filter(|w| !w.is_empty())
        .collect();
    let mut c = Cmd::new(line, argv);
    c.timed = true;
    Some((c, end + 1))
}

#[cfg(test)]
mod tests;
