//! The shell's grammar, read by [`brush_parser`] (a bash parser): words and quoting,
//! redirections, pipelines, `&&`/`||` lists, loops, `if`, `case`, functions, `time`,
//! assignments; its syntax tree becomes the [`Node`]s the draft reads. Shell the grammar
//! rejects (a post shows half a loop, a stray `done`) is read by `recover`.

use brush_parser::ast;
use brush_parser::{Parser, ParserOptions, SourcePosition};

use super::case::CaseArm;
use super::heads::{is_increment, loop_kind, while_count};
use super::{is_assignment, unquote, vars_in, Cmd, Loop, LoopKind, Node, Piped, Redir};

/// The nodes of lines that parse as a whole.
pub(super) fn read_span(lines: &[(usize, String)]) -> Option<Vec<Node>> {
    let src: String = lines
        .iter()
        .map(|(_, t)| t.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let options = ParserOptions::default();
    let program = Parser::new(std::io::BufReader::new(src.as_bytes()), &options)
        .parse_program()
        .ok()?;
    let conv = Conv {
        src: src.lines().collect(),
        line_of: lines.iter().map(|(n, _)| *n).collect(),
    };
    let mut out = Vec::new();
    for list in &program.complete_commands {
        conv.list(list, false, &mut out);
    }
    Some(out)
}

/// The source of one parse, and the post line of each of its lines.
struct Conv<'a> {
    src: Vec<&'a str>,
    line_of: Vec<usize>,
}

/// Where a pipeline stands in an `&&`/`||` list.
struct Chain {
    /// `line N: `a &&``: the commands before it, when they decide whether it runs.
    cond: Option<String>,
    /// An `&&`/`||` follows it: a test here is the list's condition, not a step.
    heads: bool,
    /// After `||`: `|| true`, `|| :` only stop a failure.
    after_or: bool,
}

impl Conv<'_> {
    fn line(&self, p: &SourcePosition) -> usize {
        let k = p.line.saturating_sub(1);
        self.line_of
            .get(k)
            .or(self.line_of.last())
            .copied()
            .unwrap_or(0)
    }

    fn word_line(&self, w: &ast::Word) -> Option<usize> {
        w.loc.as_ref().map(|l| self.line(&l.start))
    }

    fn list(&self, list: &ast::CompoundList, timed: bool, out: &mut Vec<Node>) {
        for ast::CompoundListItem(and_or, _) in &list.0 {
            self.and_or(and_or, timed, out);
        }
    }

    fn list_nodes(&self, list: &ast::CompoundList, timed: bool) -> Vec<Node> {
        let mut out = Vec::new();
        self.list(list, timed, &mut out);
        out
    }

    /// `a && b || c`: each command after the first runs under the ones before it.
    fn and_or(&self, l: &ast::AndOrList, timed: bool, out: &mut Vec<Node>) {
        let mut items: Vec<(Option<&str>, &ast::Pipeline)> = vec![(None, &l.first)];
        for a in &l.additional {
            match a {
                ast::AndOr::And(p) => items.push((Some("&&"), p)),
                ast::AndOr::Or(p) => items.push((Some("||"), p)),
            }
        }
        let mut chain: Option<(usize, String)> = None;
        for k in 0..items.len() {
            let (before, p) = items[k];
            let after = items.get(k + 1).and_then(|i| i.0);
            let text = self.pipeline_text(p);
            let line = self.pipeline_line(p).unwrap_or(0);
            let head = chain.clone();
            chain = after.map(|op| match &head {
                Some((l, t)) => (*l, format!("{t} {text} {op}")),
                None => (line, format!("{text} {op}")),
            });
            // `cd DIR && CMD`: the `cd` gives CMD its directory (`cwd`), not a condition
            let cd_only = |t: &str| {
                let ws: Vec<&str> = t.split_whitespace().collect();
                ws.first() == Some(&"cd") && ws.len() <= 3 && ws.last() == Some(&"&&")
            };
            let ctx = Chain {
                cond: head
                    .filter(|(_, t)| !cd_only(t))
                    .map(|(l, t)| format!("line {l}: `{t}`")),
                heads: after.is_some(),
                after_or: before == Some("||"),
            };
            self.pipeline(p, timed, &ctx, out);
        }
    }

    fn pipeline_line(&self, p: &ast::Pipeline) -> Option<usize> {
        p.seq.first().and_then(|c| self.command_line(c))
    }

    fn command_line(&self, c: &ast::Command) -> Option<usize> {
        use brush_parser::ast::SourceLocation;
        match c {
            ast::Command::Simple(s) => s.location().map(|l| self.line(&l.start)),
            ast::Command::Compound(cc, _) => self.compound_line(cc),
            ast::Command::Function(f) => self.word_line(&f.fname),
            ast::Command::ExtendedTest(t, _) => Some(self.line(&t.loc.start)),
        }
    }

    fn compound_line(&self, cc: &ast::CompoundCommand) -> Option<usize> {
        use brush_parser::ast::SourceLocation;
        cc.location().map(|l| self.line(&l.start))
    }

    /// A pipeline as written (its commands' words and redirections, `|` between them).
    fn pipeline_text(&self, p: &ast::Pipeline) -> String {
        let parts: Vec<String> = p
            .seq
            .iter()
            .map(|c| match c {
                ast::Command::Simple(s) => self.simple_parts(s).text(),
                ast::Command::ExtendedTest(t, _) => format!("[[ {} ]]", t.expr),
                other => other.to_string(),
            })
            .collect();
        let bang = if p.bang { "! " } else { "" };
        format!("{bang}{}", parts.join(" | "))
    }

    fn pipeline(&self, p: &ast::Pipeline, timed: bool, chain: &Chain, out: &mut Vec<Node>) {
        let timed = timed || p.timed.is_some();
        let main = main_of(&p.seq, |c| match c {
            ast::Command::Simple(s) => Some(self.simple_parts(s).words),
            _ => None,
        });
        let mut piped: Vec<Piped> = Vec::new();
        for (k, c) in p.seq.iter().enumerate() {
            if k != main {
                let text = match c {
                    ast::Command::Simple(s) => self.simple_parts(s).text(),
                    other => other.to_string(),
                };
                piped.push(Piped {
                    text,
                    before: k < main,
                });
            }
        }
        match &p.seq[main] {
            ast::Command::Simple(s) => self.simple(s, timed, chain, piped, out),
            ast::Command::ExtendedTest(t, _) => {
                let words: Vec<String> = std::iter::once("[[".to_string())
                    .chain(t.expr.to_string().split_whitespace().map(String::from))
                    .chain(std::iter::once("]]".to_string()))
                    .collect();
                if !chain.heads {
                    let mut c = Cmd::new(self.line(&t.loc.start), words);
                    c.cond.clone_from(&chain.cond);
                    out.push(Node::Cmd(c));
                }
            }
            ast::Command::Function(f) => out.push(self.function(f)),
            ast::Command::Compound(cc, redirects) => {
                let line = self.compound_line(cc).unwrap_or(0);
                let mut nodes = self.compound(cc, timed, out);
                if let Some(cond) = &chain.cond {
                    set_cond(&mut nodes, cond);
                }
                out.extend(nodes);
                let redirs: Vec<String> = redirects
                    .iter()
                    .flat_map(|r| r.0.iter())
                    .map(|r| self.redirect(r).text)
                    .collect();
                let mut lost: Vec<String> = redirs.iter().map(|r| format!("`{r}`")).collect();
                lost.extend(piped.iter().map(Piped::written));
                if !lost.is_empty() {
                    out.push(Node::Unread {
                        line,
                        what: format!(
                            "{} around the construct at line {line}: not in the draft, which runs no shell (fslab keeps each step's output)",
                            lost.join(", ")
                        ),
                        body: Vec::new(),
                    });
                }
            }
        }
    }

    fn function(&self, f: &ast::FunctionDefinition) -> Node {
        let line = self.word_line(&f.fname).unwrap_or(0);
        let ast::FunctionBody(cc, _) = &f.body;
        let body = self.compound(cc, false, &[]);
        Node::Func {
            line,
            name: f.fname.value.clone(),
            body,
        }
    }

    /// The nodes of a compound command; `before` holds the nodes before it (a counting
    /// `while` reads its counter's start there).
    fn compound(&self, cc: &ast::CompoundCommand, timed: bool, before: &[Node]) -> Vec<Node> {
        let line = self.compound_line(cc).unwrap_or(0);
        match cc {
            ast::CompoundCommand::BraceGroup(g) => self.list_nodes(&g.list, timed),
            ast::CompoundCommand::Subshell(s) => {
                let body = self.list_nodes(&s.list, timed);
                // `(cd DIR && CMD)`: the directory holds inside the parentheses only
                let cds = body.iter().any(
                    |n| matches!(n, Node::Cmd(c) if c.words.first().is_some_and(|w| w == "cd")),
                );
                if cds {
                    let end = self.line(&s.loc.end);
                    let mut out = vec![Node::Cmd(Cmd::new(line, vec!["(".into()]))];
                    out.extend(body);
                    out.push(Node::Cmd(Cmd::new(end, vec![")".into()])));
                    out
                } else {
                    body
                }
            }
            ast::CompoundCommand::ForClause(f) => {
                let mut head_words = vec![f.variable_name.clone()];
                if let Some(values) = &f.values {
                    head_words.push("in".into());
                    head_words.extend(values.iter().map(|w| w.value.clone()));
                }
                let body = self.list_nodes(&f.body.list, timed);
                let (var, mut kind) = loop_kind(&head_words);
                if let LoopKind::List(items) = &kind {
                    if !uses_var(&body, &var) {
                        kind = LoopKind::Count(items.len() as u64);
                    }
                }
                vec![Node::Loop(timed_loop(Loop {
                    line,
                    var,
                    kind,
                    head: format!("for {}", head_words.join(" ")),
                    body,
                    timed,
                }))]
            }
            ast::CompoundCommand::ArithmeticForClause(f) => {
                let e = |x: &Option<ast::UnexpandedArithmeticExpr>| {
                    x.as_ref().map_or(String::new(), |x| x.value.clone())
                };
                let head = format!(
                    "(({};{};{}))",
                    e(&f.initializer),
                    e(&f.condition),
                    e(&f.updater)
                );
                let (var, kind) = loop_kind(std::slice::from_ref(&head));
                vec![Node::Loop(timed_loop(Loop {
                    line,
                    var,
                    kind,
                    head: format!("for {head}"),
                    body: self.list_nodes(&f.body.list, timed),
                    timed,
                }))]
            }
            ast::CompoundCommand::WhileClause(w) => {
                vec![self.while_loop(w, false, line, timed, before)]
            }
            ast::CompoundCommand::UntilClause(w) => {
                vec![self.while_loop(w, true, line, timed, before)]
            }
            ast::CompoundCommand::IfClause(i) => self.if_clause(i, line, timed),
            ast::CompoundCommand::CaseClause(c) => self.case_clause(c, line, timed),
            ast::CompoundCommand::Arithmetic(a) => {
                let mut c = Cmd::new(line, vec![format!("(({}))", a.expr.value)]);
                c.timed = timed;
                vec![Node::Cmd(c)]
            }
            ast::CompoundCommand::Coprocess(c) => vec![Node::Unread {
                line,
                what: format!("`coproc {}`: a coprocess the draft cannot run", c.body),
                body: Vec::new(),
            }],
        }
    }

    /// A list's commands as written, `;` between them (a loop's or an `if`'s condition).
    fn list_text(&self, list: &ast::CompoundList) -> String {
        let parts: Vec<String> = list
            .0
            .iter()
            .map(|ast::CompoundListItem(a, _)| {
                let mut t = self.pipeline_text(&a.first);
                for x in &a.additional {
                    let (op, p) = match x {
                        ast::AndOr::And(p) => ("&&", p),
                        ast::AndOr::Or(p) => ("||", p),
                    };
                    t.push_str(&format!(" {op} {}", self.pipeline_text(p)));
                }
                t
            })
            .collect();
        parts.join("; ")
    }

    /// `while COND; do BODY; done` (or `until`). A counter loop
    /// (`i=0; while [ $i -lt 10 ]; do …; i=$((i+1)); done`, `((i++))`, `let i++`, `-le`,
    /// `(( i < 10 ))`, `until [ $i -ge 10 ]`) is a [`LoopKind::Count`] and its increment
    /// leaves the body; any other `while` is [`LoopKind::Unknown`] with its body kept.
    fn while_loop(
        &self,
        w: &ast::WhileOrUntilClauseCommand,
        until: bool,
        line: usize,
        timed: bool,
        before: &[Node],
    ) -> Node {
        let ast::WhileOrUntilClauseCommand(cond, body, _) = w;
        let cond = self.list_text(cond);
        let head_words: Vec<String> = cond.split_whitespace().map(String::from).collect();
        let mut body = self.list_nodes(&body.list, timed);
        let head = format!("{} {cond}", if until { "until" } else { "while" });
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
        Node::Loop(timed_loop(Loop {
            line,
            var,
            kind,
            head,
            body,
            timed,
        }))
    }

    /// `if COND; then A; elif COND2; then B; else C; fi`: A's commands with their
    /// condition noted (`cond`), a condition that is itself a command kept as one, and
    /// the other branches as [`Node::Else`].
    fn if_clause(&self, i: &ast::IfClauseCommand, line: usize, timed: bool) -> Vec<Node> {
        let cond = self.list_text(&i.condition);
        let mut out = Vec::new();
        let is_test = |c: &Cmd| {
            c.words.first().is_none_or(|w| {
                matches!(w.as_str(), "[" | "[[" | "test" | "true" | "false") || w.starts_with("((")
            })
        };
        for n in self.list_nodes(&i.condition, timed) {
            match n {
                Node::Cmd(mut c) if !is_test(&c) => {
                    c.cond = Some(format!(
                        "line {line}: the condition of `if {cond}`; its result is not checked"
                    ));
                    out.push(Node::Cmd(c));
                }
                Node::Cmd(_) => {}
                other => out.push(other),
            }
        }
        let mut then = self.list_nodes(&i.then, timed);
        set_cond(&mut then, &format!("line {line}: if {cond}"));
        let mut last = last_line(&then).unwrap_or(line);
        out.extend(then);
        for e in i.elses.iter().flatten() {
            let body = self.list_nodes(&e.body, timed);
            let (n, head) = match &e.condition {
                Some(c) => (
                    first_line(&self.list_nodes(c, false)).unwrap_or(last),
                    format!("elif {} (of `if {cond}`, line {line})", self.list_text(c)),
                ),
                None => (
                    self.keyword_line("else", last, first_line(&body).unwrap_or(last)),
                    format!("else (of `if {cond}`, line {line})"),
                ),
            };
            last = last_line(&body).unwrap_or(n);
            out.push(Node::Else {
                line: n,
                head,
                body,
            });
        }
        out
    }

    /// The post line of the last line from `from` to `to` (post lines) where `word`
    /// stands as a word: an `else` the grammar gives no place of its own.
    fn keyword_line(&self, word: &str, from: usize, to: usize) -> usize {
        let found = self
            .line_of
            .iter()
            .zip(&self.src)
            .filter(|(n, _)| **n >= from && **n <= to)
            .filter(|(_, t)| {
                t.split(|c: char| c.is_whitespace() || c == ';')
                    .any(|w| w == word)
            })
            .map(|(n, _)| *n)
            .next_back();
        found.unwrap_or(to)
    }

    /// `case WORD in PAT) …;; PAT2|PAT3) …;; *) …;; esac`: each branch's commands with
    /// their [`CaseArm`].
    fn case_clause(&self, c: &ast::CaseClauseCommand, line: usize, timed: bool) -> Vec<Node> {
        let word = c.value.value.clone();
        let mut out = Vec::new();
        let mut earlier: Vec<String> = Vec::new();
        for item in &c.cases {
            let body = item
                .cmd
                .as_ref()
                .map(|l| self.list_nodes(l, timed))
                .unwrap_or_default();
            let arm_line = item
                .patterns
                .first()
                .and_then(|w| self.word_line(w))
                .or_else(|| item.loc.as_ref().map(|l| self.line(&l.start)))
                .unwrap_or(line);
            let patterns: Vec<String> = item.patterns.iter().map(|p| unquote(&p.value)).collect();
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

    /// A redirection as written in the post (`2>&1`, `> out.log`, `>/dev/null`).
    fn redirect(&self, r: &ast::IoRedirect) -> Redir {
        let target = match r {
            ast::IoRedirect::File(_, _, ast::IoFileRedirectTarget::Filename(w))
            | ast::IoRedirect::File(_, _, ast::IoFileRedirectTarget::Duplicate(w))
            | ast::IoRedirect::OutputAndError(w, _)
            | ast::IoRedirect::HereString(_, w) => Some(w),
            _ => None,
        };
        let written = target.and_then(|w| self.written_with_operator(w));
        let (stdout, append) = match r {
            ast::IoRedirect::File(fd, kind, ast::IoFileRedirectTarget::Filename(w))
                if fd.is_none_or(|f| f == 1)
                    && matches!(
                        kind,
                        ast::IoFileRedirectKind::Write
                            | ast::IoFileRedirectKind::Append
                            | ast::IoFileRedirectKind::Clobber
                    ) =>
            {
                (
                    Some(w.value.clone()),
                    matches!(kind, ast::IoFileRedirectKind::Append),
                )
            }
            ast::IoRedirect::OutputAndError(w, append) => (Some(w.value.clone()), *append),
            _ => (None, false),
        };
        Redir {
            text: written.unwrap_or_else(|| r.to_string()),
            stdout,
            append,
        }
    }

    /// The text from a redirection's operator (and its descriptor) to the end of its
    /// target word, as the post wrote it.
    fn written_with_operator(&self, w: &ast::Word) -> Option<String> {
        let loc = w.loc.as_ref()?;
        if loc.start.line != loc.end.line {
            return None;
        }
        let line = self.src.get(loc.start.line.checked_sub(1)?)?;
        let chars: Vec<char> = line.chars().collect();
        let end = loc.end.column.checked_sub(1)?;
        let mut k = loc.start.column.checked_sub(1)?;
        while k > 0 && chars[k - 1].is_whitespace() {
            k -= 1;
        }
        while k > 0
            && (matches!(chars[k - 1], '<' | '>' | '&' | '|') || chars[k - 1].is_ascii_digit())
        {
            k -= 1;
        }
        Some(chars.get(k..end)?.iter().collect())
    }

    /// A simple command's words, redirections and here-string, in order.
    fn simple_parts(&self, s: &ast::SimpleCommand) -> Parts {
        let mut p = Parts::default();
        let items = s
            .prefix
            .iter()
            .flat_map(|x| x.0.iter())
            .map(Some)
            .chain(std::iter::once(None))
            .chain(s.suffix.iter().flat_map(|x| x.0.iter()).map(Some));
        for item in items {
            match item {
                None => {
                    if let Some(w) = &s.word_or_name {
                        p.line = p.line.or(self.word_line(w));
                        p.words.push(w.value.clone());
                    }
                }
                Some(ast::CommandPrefixOrSuffixItem::Word(w))
                | Some(ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w)) => {
                    p.line = p.line.or(self.word_line(w));
                    p.words.push(w.value.clone());
                }
                Some(ast::CommandPrefixOrSuffixItem::ProcessSubstitution(kind, sub)) => {
                    p.words.push(format!("{kind}({})", sub.list));
                }
                Some(ast::CommandPrefixOrSuffixItem::IoRedirect(r)) => {
                    if let ast::IoRedirect::HereString(_, w) = r {
                        p.line = p.line.or(self.word_line(w));
                        p.herestring = Some(w.value.clone());
                        continue;
                    }
                    p.redirs.push(self.redirect(r));
                }
            }
        }
        p
    }

    fn simple(
        &self,
        s: &ast::SimpleCommand,
        timed: bool,
        chain: &Chain,
        piped: Vec<Piped>,
        out: &mut Vec<Node>,
    ) {
        let parts = self.simple_parts(s);
        let line = parts.line.unwrap_or(0);
        let ws = parts.words.clone();
        if ws.is_empty() {
            return;
        }
        // `X=y`, and `local X=y` / `export X=y` (a function's or the script's variables)
        let declared = matches!(
            ws[0].as_str(),
            "local" | "export" | "declare" | "typeset" | "readonly"
        ) && ws.len() > 1
            && ws[1..].iter().all(|w| is_assignment(w));
        if ws.iter().all(|w| is_assignment(w)) || declared {
            for w in &ws[usize::from(declared)..] {
                assign(line, w, out);
            }
            return;
        }
        if let Some(mut nodes) = shell_script(line, &ws, &parts) {
            // `time sh -c "dd … && sync"`: the script's commands, timed as it is
            if timed {
                mark_timed(&mut nodes);
            }
            if let Some(cond) = &chain.cond {
                set_cond(&mut nodes, cond);
            }
            out.extend(nodes);
            return;
        }
        let mut c = Cmd::new(line, ws);
        // a command fed a here-document keeps its redirections: the draft runs it with its
        // input in a `sh -c` script (`cat > job.fio <<EOF`)
        let heredoc =
            parts.herestring.is_some() || c.words.iter().any(|w| w.starts_with("\u{1}heredoc"));
        if heredoc {
            c.words.extend(parts.redirs.iter().map(|r| r.text.clone()));
        } else {
            c.redirs = parts.redirs;
        }
        c.piped = piped;
        if let Some(w) = parts.herestring {
            c.heredoc = Some(super::heredoc::from_string(&w, line));
        }
        // `perf stat [-r N] CMD` measures CMD, as `time CMD` does
        c.timed = timed || c.words[0] == "time" || c.perf_stat().is_some();
        c.cond.clone_from(&chain.cond);
        // a test that heads a chain (`[ -d /mnt/x ] || mkdir …`) is its condition, not a
        // step; what a failure runs to stop (`|| exit 1`, `|| true`) is no step either
        let test = matches!(c.words[0].as_str(), "[" | "[[" | "test");
        let stop = matches!(
            c.words[0].as_str(),
            "exit" | "return" | "break" | "continue"
        ) || (chain.after_or && matches!(c.words[0].as_str(), "true" | ":"));
        if !(stop || test && chain.heads) {
            out.push(Node::Cmd(c));
        }
    }
}

/// `sh -c 'SCRIPT'` (`bash -c`, after `sudo`): the script's own commands, read with the
/// grammar, when the command has nothing else around it (no `$0` arguments, redirections
/// or pipeline) and the script reads as a whole.
fn shell_script(line: usize, ws: &[String], parts: &Parts) -> Option<Vec<Node>> {
    let at = Cmd::new(line, ws.to_vec()).program_index();
    let [sh, dash_c, script] = ws.get(at..)? else {
        return None;
    };
    if !matches!(sh.as_str(), "sh" | "bash")
        || dash_c != "-c"
        || !parts.redirs.is_empty()
        || parts.herestring.is_some()
        || ws[..at].iter().any(|w| is_assignment(w))
    {
        return None;
    }
    let nodes = read_span(&[(line, unquote(script))])?;
    (!nodes.is_empty()).then_some(nodes)
}

/// A simple command's pieces.
#[derive(Default)]
struct Parts {
    line: Option<usize>,
    words: Vec<String>,
    redirs: Vec<Redir>,
    herestring: Option<String>,
}

impl Parts {
    fn text(&self) -> String {
        let mut t: Vec<String> = self.words.clone();
        t.extend(self.redirs.iter().map(|r| r.text.clone()));
        if let Some(h) = &self.herestring {
            t.push(format!("<<< {h}"));
        }
        t.join(" ")
    }
}

/// `NAME=value`: an assignment, or, set from a command's output (`N=`nproc``,
/// `F=$(head …)`), what the draft cannot give, said (a counter's `i=$((i+1))` and
/// `` `expr` `` are arithmetic).
fn assign(line: usize, w: &str, out: &mut Vec<Node>) {
    let (name, value) = w.split_once('=').unwrap_or(("", ""));
    let name = name.trim_end_matches('+');
    let from_command = (value.contains('`') || value.contains("$("))
        && !value.contains("$((")
        && !value.contains("`expr ");
    if from_command {
        out.push(Node::Unread {
            line,
            what: format!("`{name}` is set from a command's output (`{value}`): not substituted"),
            body: Vec::new(),
        });
        return;
    }
    let value = if w.contains("+=") {
        format!("${name}{}", unquote(value))
    } else {
        unquote(value)
    };
    out.push(Node::Assign {
        line,
        name: name.to_string(),
        value,
        arm: None,
    });
}

/// Programs that only feed a pipeline or read what it prints: the pipeline's measured
/// command is another one (`yes | mkfs.ext4 …`, `fio job | tee log`).
const PIPE_FEEDERS: &[&str] = &["cat", "echo", "printf", "yes"];
const PIPE_READERS: &[&str] = &[
    "awk", "column", "cut", "egrep", "grep", "head", "less", "more", "sed", "sort", "tail", "tee",
    "tr", "uniq", "wc",
];

/// Which command of a pipeline the draft runs: the first that neither only feeds it nor
/// only reads its output (the first command when all do).
fn main_of(seq: &[ast::Command], words: impl Fn(&ast::Command) -> Option<Vec<String>>) -> usize {
    let prog = |c: &ast::Command| {
        words(c).and_then(|w| {
            let probe = Cmd::new(0, w);
            probe.words.get(probe.program_index()).map(|p| {
                unquote(p)
                    .rsplit('/')
                    .next()
                    .unwrap_or_default()
                    .to_string()
            })
        })
    };
    seq.iter()
        .position(|c| {
            prog(c).is_none_or(|p| {
                !PIPE_FEEDERS.contains(&p.as_str()) && !PIPE_READERS.contains(&p.as_str())
            })
        })
        .unwrap_or(0)
}

fn first_line(nodes: &[Node]) -> Option<usize> {
    nodes.iter().find_map(node_line)
}

fn last_line(nodes: &[Node]) -> Option<usize> {
    nodes.iter().rev().find_map(|n| match n {
        Node::Loop(l) => last_line(&l.body).or(Some(l.line)),
        Node::Else { body, line, .. } => last_line(body).or(Some(*line)),
        n => node_line(n),
    })
}

fn node_line(n: &Node) -> Option<usize> {
    match n {
        Node::Cmd(c) => Some(c.line),
        Node::Loop(l) => Some(l.line),
        Node::Assign { line, .. }
        | Node::Else { line, .. }
        | Node::Func { line, .. }
        | Node::Unread { line, .. } => Some(*line),
    }
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

/// The branch's nodes with their [`CaseArm`], its assignments too (a command after the
/// `case` that uses the variable runs once per branch: `substitute`).
fn set_case(nodes: Vec<Node>, arm: &CaseArm) -> Vec<Node> {
    let mut out = Vec::new();
    for n in nodes {
        match n {
            Node::Cmd(mut c) => {
                c.case.get_or_insert_with(|| Box::new(arm.clone()));
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
