//! The shell's grammar: words and quotes, `;`/`&&` lists, loops, `if`, `case`, functions,
//! `time`, assignments; from logical lines to [`Node`]s.

use super::case::CaseArm;
use super::heads::{is_increment, loop_kind, while_count};
use super::{is_assignment, unquote, vars_in, Cmd, Loop, LoopKind, Node};

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Word(String, usize),
    Sep(usize),
    /// `&&` (true) or `||` (false): a separator whose next command runs only when the
    /// one before succeeded (failed).
    Chain(bool, usize),
}

pub(super) fn tokenize(logical: &[(usize, String)]) -> Vec<Tok> {
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
                // `` `cmd` `` is one word, as a quoted string is
                '\'' | '"' | '`' => {
                    q = Some(c);
                    word.push(c);
                }
                // `$(cmd …)`, `$((i+1))`: one word, up to the matching parenthesis
                '$' if chars.get(i + 1) == Some(&'(') => {
                    let mut depth = 0;
                    while let Some(&x) = chars.get(i) {
                        word.push(x);
                        i += 1;
                        match x {
                            '(' => depth += 1,
                            ')' => depth -= 1,
                            _ => {}
                        }
                        if depth == 0 && x == ')' {
                            break;
                        }
                    }
                    continue;
                }
                // `cmd &`: run in the background; the draft runs it in turn
                '&' if !matches!(chars.get(i + 1), Some('&' | '>'))
                    && !word.ends_with(['>', '<'])
                    && chars
                        .get(i.wrapping_sub(1))
                        .is_none_or(|p| p.is_whitespace() || *p == ')') =>
                {
                    flush(&mut word, &mut toks);
                    toks.push(Tok::Sep(*n));
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
                ';' if matches!(chars.get(i + 1), Some(';' | '&')) => {
                    // `;;` (and bash's `;&`, `;;&`) ends a `case` branch
                    flush(&mut word, &mut toks);
                    toks.push(Tok::Word(";;".into(), *n));
                    i += 2;
                    if chars.get(i) == Some(&'&') {
                        i += 1;
                    }
                    continue;
                }
                ';' | '\n' => {
                    flush(&mut word, &mut toks);
                    toks.push(Tok::Sep(*n));
                }
                '&' | '|' if chars.get(i + 1) == Some(&c) => {
                    flush(&mut word, &mut toks);
                    // inside `[[ … ]]` it is the test's own operator
                    if in_double_brackets(&toks) {
                        toks.push(Tok::Word(format!("{c}{c}"), *n));
                    } else {
                        toks.push(Tok::Chain(c == '&', *n));
                    }
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
    // `name(){` → `name()` `{`; `name ()` → `name()`
    let mut out: Vec<Tok> = Vec::with_capacity(toks.len());
    // `time (for …; done)`: the subshell around a timed loop is the loop
    let mut subshells = 0;
    // `(cd DIR && CMD)`: the words `(cd` and `)` (a command each), which `cwd` reads as
    // a `pushd` and its `popd`: the directory holds inside the parentheses only
    let mut cd_subshells = 0;
    let after_time = |out: &[Tok]| matches!(out.last(), Some(Tok::Word(w, _)) if w == "time");
    let at_start = |out: &[Tok]| matches!(out.last(), None | Some(Tok::Sep(_) | Tok::Chain(..)));
    for t in toks {
        match t {
            Tok::Word(w, n) if w == "(cd" && at_start(&out) => {
                cd_subshells += 1;
                out.push(Tok::Word(w, n));
            }
            Tok::Word(w, n)
                if cd_subshells > 0
                    && w.ends_with(')')
                    && w.matches(')').count() > w.matches('(').count() =>
            {
                cd_subshells -= 1;
                let inner = &w[..w.len() - 1];
                if !inner.is_empty() {
                    out.push(Tok::Word(inner.to_string(), n));
                }
                // a redirection after the `)` (`> log 2>&1`) goes with it, not with a
                // command of its own
                out.push(Tok::Sep(n));
                out.push(Tok::Word(")".into(), n));
            }
            Tok::Word(w, n) if w == "(for" && after_time(&out) => {
                subshells += 1;
                out.push(Tok::Word("for".into(), n));
            }
            Tok::Word(w, n)
                if w == "for" && matches!(out.last(), Some(Tok::Word(p, _)) if p == "(") =>
            {
                out.pop();
                if after_time(&out) {
                    subshells += 1;
                } else {
                    out.push(Tok::Word("(".into(), n));
                }
                out.push(Tok::Word(w, n));
            }
            Tok::Word(w, n) if w == "done)" && subshells > 0 => {
                subshells -= 1;
                out.push(Tok::Word("done".into(), n));
            }
            Tok::Word(w, _) if w == ")" && subshells > 0 => subshells -= 1,
            Tok::Word(w, n) if w.len() > 3 && w.ends_with("(){") => {
                out.push(Tok::Word(w[..w.len() - 1].to_string(), n));
                out.push(Tok::Word("{".into(), n));
            }
            Tok::Word(w, n) if w == "()" || w == "(){" => {
                match out.last_mut() {
                    Some(Tok::Word(prev, _)) if !prev.ends_with("()") => prev.push_str("()"),
                    _ => out.push(Tok::Word("()".into(), n)),
                }
                if w == "(){" {
                    out.push(Tok::Word("{".into(), n));
                }
            }
            t => out.push(t),
        }
    }
    out
}

/// Whether the words since the last separator open a `[[` they do not close.
fn in_double_brackets(toks: &[Tok]) -> bool {
    for t in toks.iter().rev() {
        match t {
            Tok::Word(w, _) if w == "]]" => return false,
            Tok::Word(w, _) if w == "[[" => return true,
            Tok::Word(..) => {}
            Tok::Sep(_) | Tok::Chain(..) => return false,
        }
    }
    false
}

/// `name()` (a function definition's head).
fn is_def_head(w: &str) -> bool {
    w.strip_suffix("()").is_some_and(|n| {
        !n.is_empty()
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'))
    })
}

pub(super) fn parse_list(toks: &[Tok], i: &mut usize, stop: &[&str]) -> Vec<Node> {
    let mut nodes = Vec::new();
    // the commands of an `&&`/`||` chain so far, and the line it starts on
    let mut chain: Option<(usize, String)> = None;
    while *i < toks.len() {
        // gather one simple command's words
        let mut words: Vec<(String, usize)> = Vec::new();
        while let Some(Tok::Word(w, n)) = toks.get(*i) {
            if words.is_empty() && stop.contains(&w.as_str()) {
                return nodes;
            }
            if w == ";;" && !words.is_empty() {
                break;
            }
            if words.is_empty()
                && (matches!(
                    w.as_str(),
                    "for" | "while" | "until" | "if" | "case" | "function"
                ) || is_def_head(w)
                    || (w == "time" && next_is_for(toks, *i)))
            {
                break;
            }
            words.push((w.clone(), *n));
            *i += 1;
        }
        if words.is_empty() {
            match toks.get(*i) {
                Some(Tok::Word(w, n))
                    if matches!(w.as_str(), "time" | "for" | "while" | "until") =>
                {
                    let line = *n;
                    let timed = w == "time";
                    if timed {
                        *i += 1;
                    }
                    let l = if matches!(toks.get(*i), Some(Tok::Word(w, _)) if w == "for") {
                        parse_for(toks, i, line, timed)
                    } else {
                        parse_while(toks, i, line, timed, &nodes)
                    };
                    nodes.push(Node::Loop(l));
                }
                Some(Tok::Word(w, n)) if w == "if" => {
                    let line = *n;
                    nodes.extend(parse_if(toks, i, line));
                }
                Some(Tok::Word(w, n)) if w == "case" => {
                    let line = *n;
                    nodes.extend(parse_case(toks, i, line));
                }
                Some(Tok::Word(w, n)) if w == "function" || is_def_head(w) => {
                    let line = *n;
                    nodes.push(parse_function(toks, i, line));
                }
                Some(Tok::Sep(_)) => {
                    chain = None;
                    *i += 1
                }
                Some(Tok::Chain(..)) => *i += 1,
                Some(Tok::Word(..)) => *i += 1,
                None => break,
            }
            continue;
        }
        // a keyword that opens a body (`do cmd`, `then cmd`) leaves the command after it;
        // a stray closing word is skipped
        while words.first().is_some_and(|w| {
            matches!(
                w.0.as_str(),
                "do" | "done" | "then" | "fi" | "else" | "{" | "}" | "esac"
            )
        }) {
            words.remove(0);
        }
        if words.is_empty() {
            continue;
        }
        let line = words[0].1;
        let ws: Vec<String> = words.into_iter().map(|w| w.0).collect();
        // `X=y`, and `local X=y` / `export X=y` (a function's or the script's variables)
        let declared = matches!(
            ws[0].as_str(),
            "local" | "export" | "declare" | "typeset" | "readonly"
        ) && ws.len() > 1
            && ws[1..].iter().all(|w| is_assignment(w));
        if (ws.len() == 1 && is_assignment(&ws[0])) || declared {
            for w in &ws[usize::from(declared)..] {
                let (name, value) = w.split_once('=').unwrap_or(("", ""));
                // `N=`nproc``, `F=$(head …)`: a command's output, which the draft cannot
                // give; said, never substituted (a counter's `i=$((i+1))`, `` `expr` `` are
                // arithmetic)
                let from_command = (value.contains('`') || value.contains("$("))
                    && !value.contains("$((")
                    && !value.contains("`expr ");
                if from_command {
                    nodes.push(Node::Unread {
                        line,
                        what: format!(
                            "`{name}` is set from a command's output (`{value}`): not substituted"
                        ),
                        body: Vec::new(),
                    });
                    continue;
                }
                nodes.push(Node::Assign {
                    line,
                    name: name.to_string(),
                    value: unquote(value),
                    arm: None,
                });
            }
            continue;
        }
        let timed = ws[0] == "time";
        let text = ws.join(" ");
        let mut c = Cmd::new(line, ws);
        // `perf stat [-r N] CMD` measures CMD, as `time CMD` does
        c.timed = timed || c.perf_stat().is_some();
        let op = match toks.get(*i) {
            Some(Tok::Chain(and, _)) => Some(if *and { "&&" } else { "||" }),
            _ => None,
        };
        let after_or = chain.as_ref().is_some_and(|(_, t)| t.ends_with("||"));
        let head = chain.as_ref().map(|(l, t)| (*l, t.clone()));
        chain = op.map(|op| match &head {
            Some((l, t)) => (*l, format!("{t} {text} {op}")),
            None => (line, format!("{text} {op}")),
        });
        // `cd DIR && CMD`: the `cd` gives CMD its directory (`cwd`), not a condition
        let cd_only = |t: &str| {
            let ws: Vec<&str> = t.split_whitespace().collect();
            ws.first() == Some(&"cd") && ws.len() <= 3 && ws.last() == Some(&"&&")
        };
        if let Some((l, t)) = head.filter(|(_, t)| !cd_only(t)) {
            c.cond = Some(format!("line {l}: `{t}`"));
        }
        // a test that heads a chain (`[ -d /mnt/x ] || mkdir …`) is its condition, not a
        // step; what a failure runs to stop (`|| exit 1`, `|| true`) is no step either
        let is_test =
            |w: Option<&String>| w.is_some_and(|w| matches!(w.as_str(), "[" | "[[" | "test"));
        let test = is_test(c.words.first()) || (c.words[0] == "!" && is_test(c.words.get(1)));
        // `exit`, `return`, `break`, `continue` end a script or a loop: never a step
        let stop = matches!(
            c.words[0].as_str(),
            "exit" | "return" | "break" | "continue"
        ) || (after_or && matches!(c.words[0].as_str(), "true" | ":"));
        let condition_only = test && op.is_some();
        if !condition_only && !stop {
            nodes.push(Node::Cmd(c));
        }
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
            Tok::Chain(and, _) => head_words.push(if *and { "&&" } else { "||" }.into()),
        }
        *i += 1;
    }
    *i += 1; // `do`
    let body = parse_list(toks, i, &["done"]);
    *i += 1; // `done`
    let head = format!("for {}", head_words.join(" "));
    let (var, mut kind) = loop_kind(&head_words);
    if let LoopKind::List(items) = &kind {
        if !uses_var(&body, &var) {
            kind = LoopKind::Count(items.len() as u64);
        }
    }
    timed_loop(Loop {
        line,
        var,
        kind,
        head,
        body,
        timed,
    })
}

/// A loop under `time` times every command in its body.
fn timed_loop(mut l: Loop) -> Loop {
    if l.timed {
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
            Node::Assign { .. } | Node::Else { .. } | Node::Func { .. } | Node::Unread { .. } => {}
        }
    }
}

/// Whether any command or assignment in nodes names `$var`.
fn uses_var(nodes: &[Node], var: &str) -> bool {
    nodes.iter().any(|n| match n {
        Node::Cmd(c) => c
            .words
            .iter()
            .chain(c.case.as_ref().map(|k| &k.word))
            .any(|w| vars_in(w).iter().any(|v| v == var)),
        Node::Loop(l) => l.head.contains(&format!("${var}")) || uses_var(&l.body, var),
        Node::Assign { value, arm, .. } => vars_in(value)
            .iter()
            .chain(arm.as_ref().map(|k| vars_in(&k.word)).iter().flatten())
            .any(|v| v == var),
        Node::Else { body, .. } | Node::Func { body, .. } | Node::Unread { body, .. } => {
            uses_var(body, var)
        }
    })
}

/// The words up to `stop` (a word of its own), consumed with it.
fn head_until(toks: &[Tok], i: &mut usize, stop: &str) -> Vec<String> {
    let mut head = Vec::new();
    while let Some(t) = toks.get(*i) {
        match t {
            Tok::Word(w, _) if w == stop => break,
            Tok::Word(w, _) => head.push(w.clone()),
            Tok::Sep(_) => {}
            Tok::Chain(and, _) => head.push(if *and { "&&" } else { "||" }.into()),
        }
        *i += 1;
    }
    *i += 1;
    head
}

/// `while COND; do BODY; done` (or `until`), at `while`. A counter loop
/// (`i=0; while [ $i -lt 10 ]; do …; i=$((i+1)); done`, `((i++))`, `let i++`, `-le`,
/// `(( i < 10 ))`, `until [ $i -ge 10 ]`) is a [`LoopKind::Count`] and its increment leaves
/// the body; any other `while` is [`LoopKind::Unknown`] with its body kept.
fn parse_while(toks: &[Tok], i: &mut usize, line: usize, timed: bool, before: &[Node]) -> Loop {
    let until = matches!(toks.get(*i), Some(Tok::Word(w, _)) if w == "until");
    *i += 1;
    let head_words = head_until(toks, i, "do");
    let mut body = parse_list(toks, i, &["done"]);
    *i += 1; // `done`
    let head = format!(
        "{} {}",
        if until { "until" } else { "while" },
        head_words.join(" ")
    );
    let counted = while_count(&head_words, until).and_then(|(var, op, n)| {
        let start = before.iter().rev().find_map(|b| match b {
            Node::Assign {
                name,
                value,
                arm: None,
                ..
            } if *name == var => value.parse::<i64>().ok(),
            _ => None,
        })?;
        let inc = body.iter().position(|b| is_increment(b, &var))?;
        body.remove(inc);
        let c = match op {
            "lt" | "ne" => n - start,
            "le" => n - start + 1,
            _ => return None,
        };
        (c >= 0).then_some((var, c as u64))
    });
    let (var, kind) = match counted {
        Some((v, c)) => (v, LoopKind::Count(c)),
        None => (String::new(), LoopKind::Unknown),
    };
    timed_loop(Loop {
        line,
        var,
        kind,
        head,
        body,
        timed,
    })
}

/// `if COND; then A; elif COND2; then B; else C; fi`, at `if`: A's commands with their
/// condition noted (`cond`), a condition that is itself a command kept as one, and the
/// other branches as [`Node::Else`].
fn parse_if(toks: &[Tok], i: &mut usize, line: usize) -> Vec<Node> {
    *i += 1;
    let cond_words = head_until(toks, i, "then");
    let cond = cond_words.join(" ");
    let mut out = Vec::new();
    let bare: Vec<String> = cond_words
        .iter()
        .skip_while(|w| *w == "!")
        .cloned()
        .collect();
    if bare.first().is_some_and(|w| {
        !matches!(w.as_str(), "[" | "[[" | "test" | "true" | "false") && !w.starts_with("((")
    }) {
        let mut c = Cmd::new(line, bare);
        c.cond = Some(format!(
            "line {line}: the condition of `if {cond}`; its result is not checked"
        ));
        out.push(Node::Cmd(c));
    }
    let mut then = parse_list(toks, i, &["elif", "else", "fi"]);
    set_cond(&mut then, &format!("line {line}: if {cond}"));
    out.extend(then);
    loop {
        match toks.get(*i) {
            Some(Tok::Word(w, n)) if w == "elif" => {
                let n = *n;
                *i += 1;
                let c = head_until(toks, i, "then");
                let body = parse_list(toks, i, &["elif", "else", "fi"]);
                out.push(Node::Else {
                    line: n,
                    head: format!("elif {} (of `if {cond}`, line {line})", c.join(" ")),
                    body,
                });
            }
            Some(Tok::Word(w, n)) if w == "else" => {
                let n = *n;
                *i += 1;
                let body = parse_list(toks, i, &["fi"]);
                out.push(Node::Else {
                    line: n,
                    head: format!("else (of `if {cond}`, line {line})"),
                    body,
                });
            }
            Some(Tok::Word(w, _)) if w == "fi" => {
                *i += 1;
                break;
            }
            _ => break,
        }
    }
    out
}

fn set_cond(nodes: &mut [Node], cond: &str) {
    for n in nodes {
        match n {
            Node::Cmd(c) => {
                c.cond.get_or_insert_with(|| cond.to_string());
            }
            Node::Loop(l) => set_cond(&mut l.body, cond),
            Node::Assign { .. } | Node::Else { .. } | Node::Func { .. } | Node::Unread { .. } => {}
        }
    }
}

/// `case WORD in PAT) …;; PAT2|PAT3) …;; *) …;; esac`, at `case`: each branch's commands
/// with their [`CaseArm`]. A variable set in a branch, or a branch whose pattern cannot be
/// read, is [`Node::Unread`].
fn parse_case(toks: &[Tok], i: &mut usize, line: usize) -> Vec<Node> {
    *i += 1;
    let head = head_until(toks, i, "in");
    let word = head.first().cloned().unwrap_or_default();
    let mut out = Vec::new();
    if head.len() != 1 {
        // `case` without a word and `in`: read to `esac`, report it
        let body = parse_list(toks, i, &["esac"]);
        *i += 1;
        out.push(Node::Unread {
            line,
            what: format!(
                "`case {}`: a case whose word could not be read",
                head.join(" ")
            ),
            body,
        });
        return out;
    }
    let mut earlier: Vec<String> = Vec::new();
    loop {
        while matches!(toks.get(*i), Some(Tok::Sep(_))) {
            *i += 1;
        }
        let Some(Tok::Word(w, arm_line)) = toks.get(*i) else {
            break;
        };
        let arm_line = *arm_line;
        if w == "esac" {
            *i += 1;
            break;
        }
        if w == ";;" {
            *i += 1;
            continue;
        }
        // the pattern: words up to one that ends with `)`
        let mut pat = String::new();
        let mut closed = false;
        while let Some(Tok::Word(w, _)) = toks.get(*i) {
            *i += 1;
            pat.push_str(w);
            if w.ends_with(')') {
                closed = true;
                break;
            }
        }
        let body = parse_list(toks, i, &[";;", "esac"]);
        if matches!(toks.get(*i), Some(Tok::Word(w, _)) if w == ";;") {
            *i += 1;
        }
        let pat = pat.trim_start_matches('(').trim_end_matches(')');
        let patterns: Vec<String> = pat.split('|').map(|p| unquote(p.trim())).collect();
        if !closed || patterns.iter().any(String::is_empty) {
            out.push(Node::Unread {
                line: arm_line,
                what: format!(
                    "a branch of `case {word}` (line {line}) whose pattern `{pat}` could not be read"
                ),
                body,
            });
            continue;
        }
        let arm = CaseArm {
            line,
            arm_line,
            word: word.clone(),
            patterns: patterns.clone(),
            earlier: earlier.clone(),
            unless: Vec::new(),
        };
        earlier.extend(patterns);
        out.extend(set_case(body, &arm));
    }
    out
}

/// The branch's nodes with their [`CaseArm`], its assignments too (a command after the
/// `case` that uses the variable runs once per branch: `substitute`).
fn set_case(nodes: Vec<Node>, arm: &CaseArm) -> Vec<Node> {
    let mut out = Vec::new();
    for n in nodes {
        match n {
            Node::Cmd(mut c) => {
                c.case.get_or_insert_with(|| arm.clone());
                out.push(Node::Cmd(c));
            }
            Node::Loop(mut l) => {
                l.body = set_case(l.body, arm);
                out.push(Node::Loop(l));
            }
            Node::Assign {
                line, name, value, ..
            } => out.push(Node::Assign {
                line,
                name,
                value,
                arm: Some(arm.clone()),
            }),
            other => out.push(other),
        }
    }
    out
}

/// `name() { …; }`, `function name { … }`, `function name() { … }`, at its first word.
fn parse_function(toks: &[Tok], i: &mut usize, line: usize) -> Node {
    let mut name = match toks.get(*i) {
        Some(Tok::Word(w, _)) => w.clone(),
        _ => String::new(),
    };
    *i += 1;
    if name == "function" {
        name = match toks.get(*i) {
            Some(Tok::Word(w, _)) => {
                *i += 1;
                w.clone()
            }
            _ => String::new(),
        };
    }
    let name = name.trim_end_matches("()").to_string();
    while matches!(toks.get(*i), Some(Tok::Sep(_))) {
        *i += 1;
    }
    if matches!(toks.get(*i), Some(Tok::Word(w, _)) if w == "{") {
        *i += 1;
    }
    let body = parse_list(toks, i, &["}"]);
    if matches!(toks.get(*i), Some(Tok::Word(w, _)) if w == "}") {
        *i += 1;
    }
    Node::Func { line, name, body }
}
