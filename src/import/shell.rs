//! The small shell a post's command blocks are read with: words and quotes, `;`/`&&`
//! lists, `for NAME in …`, `for ((i=0;i<N;i++))`, `for i in {A..B}` and `$(seq [A [S]] B)`,
//! counting `while`/`until` loops (`i=0; while [ $i -lt 10 ]; do …; i=$((i+1)); done`),
//! `if … then … [elif/else] fi` (the `then` branch is kept, its condition noted; the other
//! branches are kept aside as [`Node::Else`]), `time CMD` and `time for …`, `NAME=value`
//! assignments substituted into later commands. Every command keeps the post line it
//! starts on.

use super::programs::Program;

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
    /// The `elif`/`else` branch of an `if` (`head` names it): not part of the draft, which
    /// keeps the `then` branch; reported, never dropped silently.
    Else {
        line: usize,
        head: String,
        body: Vec<Node>,
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

pub(super) fn loop_balance(s: &str) -> i32 {
    if s.trim_start().starts_with('#') {
        return 0;
    }
    let mut n = 0;
    for w in s.split(|c: char| c.is_whitespace() || c == ';') {
        match w {
            "do" | "if" => n += 1,
            "done" | "fi" => n -= 1,
            _ => {}
        }
    }
    n
}

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
            if words.is_empty()
                && (matches!(w.as_str(), "for" | "while" | "until" | "if")
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
                Some(Tok::Sep(_)) => *i += 1,
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
        if ws.len() == 1 && is_assignment(&ws[0]) {
            let (name, value) = ws[0].split_once('=').unwrap_or(("", ""));
            nodes.push(Node::Assign {
                line,
                name: name.to_string(),
                value: unquote(value),
            });
            continue;
        }
        let timed = ws[0] == "time";
        nodes.push(Node::Cmd(Cmd {
            line,
            words: ws,
            timed,
            cond: None,
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
    let (var, mut kind) = loop_kind(&head_words);
    if let LoopKind::List(items) = &kind {
        if !uses_var(&body, &var) {
            kind = LoopKind::Count(items.len() as u64);
        }
    }
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
            Node::Assign { .. } | Node::Else { .. } => {}
        }
    }
}

/// Whether any command or assignment in nodes names `$var`.
fn uses_var(nodes: &[Node], var: &str) -> bool {
    nodes.iter().any(|n| match n {
        Node::Cmd(c) => c.words.iter().any(|w| vars_in(w).iter().any(|v| v == var)),
        Node::Loop(l) => l.head.contains(&format!("${var}")) || uses_var(&l.body, var),
        Node::Assign { value, .. } => vars_in(value).iter().any(|v| v == var),
        Node::Else { body, .. } => uses_var(body, var),
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
            Node::Assign { name, value, .. } if *name == var => value.parse::<i64>().ok(),
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

/// The counter, comparison (`lt`, `le`, `ne`, as a `while` would say it) and bound of a
/// loop condition: `[ $i -lt 10 ]`, `[[ "$i" -le 9 ]]`, `test $i -ne 10`, `(( i < 10 ))`.
fn while_count(head: &[String], until: bool) -> Option<(String, &'static str, i64)> {
    let joined = head.join(" ");
    let inner = joined
        .trim()
        .trim_start_matches(['[', '('])
        .trim_end_matches([']', ')'])
        .trim();
    let inner = inner.strip_prefix("test ").unwrap_or(inner);
    let words: Vec<String> = inner
        .replace("<=", " -le ")
        .replace(">=", " -ge ")
        .replace("!=", " -ne ")
        .replace('<', " -lt ")
        .replace('>', " -gt ")
        .split_whitespace()
        .map(|w| unquote(w).trim_start_matches('$').to_string())
        .collect();
    let [var, op, n] = words.as_slice() else {
        return None;
    };
    if !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || var.is_empty() {
        return None;
    }
    let n: i64 = n.parse().ok()?;
    let op = match (op.as_str(), until) {
        ("-lt", false) | ("-ge", true) => "lt",
        ("-le", false) | ("-gt", true) => "le",
        ("-ne", false) | ("-eq", true) => "ne",
        _ => return None,
    };
    Some((var.clone(), op, n))
}

/// `i=$((i+1))`, `i=$(( $i + 1 ))`, `i=$[$i+1]`, `((i++))`, `((i+=1))`, `let i++`,
/// `let i=i+1`, ``i=`expr $i + 1` ``.
fn is_increment(n: &Node, var: &str) -> bool {
    let plus_one = |e: &str| {
        let e: String = e
            .chars()
            .filter(|c| !c.is_whitespace() && !matches!(c, '$' | '(' | ')' | '[' | ']' | '"' | '`'))
            .collect();
        e == format!("{var}+1")
            || e == format!("1+{var}")
            || e == format!("{var}++")
            || e == format!("{var}+=1")
            || e == format!("expr{var}+1")
    };
    match n {
        Node::Assign { name, value, .. } => name == var && plus_one(value),
        Node::Cmd(c) => {
            let text = c.words.join(" ");
            match text.strip_prefix("let ") {
                Some(e) => {
                    let e = unquote(e);
                    plus_one(&e) || e.replace(' ', "") == format!("{var}={var}+1")
                }
                None if text.starts_with("((") => plus_one(&text),
                None => text.strip_prefix(&format!("{var}=")).is_some_and(plus_one),
            }
        }
        _ => false,
    }
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
        out.push(Node::Cmd(Cmd {
            line,
            words: bare,
            timed: false,
            cond: Some(format!(
                "line {line}: the condition of `if {cond}`; its result is not checked"
            )),
        }));
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
            Node::Assign { .. } | Node::Else { .. } => {}
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
            if let Some(k) = seq_kind(&nums) {
                return (var, k);
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
            if let Some(k) = seq_kind(&nums) {
                return (var, k);
            }
        }
        return (var, LoopKind::Unknown);
    }
    (var, LoopKind::List(items))
}

/// `seq N`, `seq A B`, `seq A STEP B`: the loop's iterations.
fn seq_kind(nums: &[i64]) -> Option<LoopKind> {
    match *nums {
        [n] => Some(LoopKind::Count(n.max(0) as u64)),
        [a, b] => Some(LoopKind::Range(a, b)),
        [a, 1, b] => Some(LoopKind::Range(a, b)),
        [a, step, b] if step > 0 => Some(LoopKind::Count(((b - a) / step + 1).max(0) as u64)),
        _ => None,
    }
}

/// Substitute variables set by assignments into the words that follow them.
pub(super) fn substitute(nodes: &mut [Node], env: &mut Vec<(String, String)>) {
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
            Node::Else { body, .. } => substitute(body, &mut env.clone()),
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
            Node::Assign { .. } | Node::Else { .. } => {}
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
    fn seq_loops_and_lists_used_as_counters() {
        for (text, kind) in [
            (
                "for i in $(seq 1 10); do touch /mnt/$i; done",
                LoopKind::Range(1, 10),
            ),
            ("for i in `seq 5`; do sync; done", LoopKind::Count(5)),
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
}
