//! The small shell a post's command blocks are read with: words and quotes, `;`/`&&`
//! lists, `for NAME in …`, `for ((i=0;i<N;i++))`, `for i in {A..B}` and `$(seq …)`,
//! `time CMD` and `time for …`, `NAME=value` assignments substituted into later commands.
//! Every command keeps the post line it starts on.

use super::programs::Program;

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
