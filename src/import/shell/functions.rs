//! Shell functions (`name() { … }`, `function name { … }`): each call is replaced by the
//! function's body, its positional parameters (`$1`, `${2}`, `"$@"`, `$*`, `$#`) bound to
//! the call's words, every command marked with the [`Call`] it comes from. A call inside a
//! function resolves when that function is called, as the shell does.

use super::{unquote, var_at, variants, Node};

/// The call of a shell function a command comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub name: String,
    /// The line of the call.
    pub line: usize,
    /// The call as written (`run_test 1`).
    pub text: String,
}

/// How deep calls nest before a call is left as a command (a recursive function).
const MAX_DEPTH: usize = 8;
/// How many commands inlining may make in one block (a post is not a program to unroll).
const MAX_INLINED: usize = 10_000;

/// The functions defined so far, newest last.
pub(super) type Defs = Vec<(String, Vec<Node>)>;

/// Replace each call of a function defined before it by the function's body.
pub(super) fn inline(nodes: &mut Vec<Node>, defs: &mut Defs) {
    let mut budget = MAX_INLINED;
    inline_at(nodes, defs, 0, &mut budget);
}

fn inline_at(nodes: &mut Vec<Node>, defs: &mut Defs, depth: usize, budget: &mut usize) {
    let mut it = std::mem::take(nodes).into_iter().peekable();
    while let Some(n) = it.next() {
        match n {
            Node::Func { line, name, body } => {
                defs.retain(|d| d.0 != name);
                defs.push((name.clone(), body.clone()));
                nodes.push(Node::Func { line, name, body });
            }
            Node::Cmd(c) => {
                let pi = c.program_index();
                let prog = c.words.get(pi).map(|w| unquote(w)).unwrap_or_default();
                let def = defs.iter().rev().find(|d| d.0 == prog).cloned();
                let size = def.as_ref().map_or(0, |d| count(&d.1));
                let Some((name, body)) = def.filter(|_| depth < MAX_DEPTH && size <= *budget)
                else {
                    nodes.push(Node::Cmd(c));
                    continue;
                };
                // the calls right after it, of the same function with as many words
                let arity = c.words.len() - pi;
                let mut run = vec![c];
                while let Some(Node::Cmd(next)) = it.peek() {
                    let npi = next.program_index();
                    if next.words.len() - npi != arity
                        || next.words.get(npi).map(|w| unquote(w)) != Some(name.clone())
                    {
                        break;
                    }
                    if let Some(Node::Cmd(next)) = it.next() {
                        run.push(next);
                    }
                }
                if let Some(l) = calls_as_loop(&run, &name, &body) {
                    *budget -= size;
                    let mut l = l;
                    inline_at(&mut l.body, &mut defs.clone(), depth + 1, budget);
                    nodes.push(Node::Loop(l));
                    continue;
                }
                for c in run {
                    if size > *budget {
                        nodes.push(Node::Cmd(c));
                        continue;
                    }
                    *budget -= size;
                    let pi = c.program_index();
                    let call = Call {
                        name: name.clone(),
                        line: c.line,
                        text: c.words[pi..].join(" "),
                    };
                    let args = c.words[pi + 1..].to_vec();
                    let mut b = body.clone();
                    bind(&mut b, &args, &call, &c);
                    inline_at(&mut b, &mut defs.clone(), depth + 1, budget);
                    nodes.extend(b);
                }
            }
            Node::Loop(mut l) => {
                inline_at(&mut l.body, defs, depth, budget);
                nodes.push(Node::Loop(l));
            }
            Node::Else {
                line,
                head,
                mut body,
            } => {
                inline_at(&mut body, &mut defs.clone(), depth, budget);
                nodes.push(Node::Else { line, head, body });
            }
            Node::Unread {
                line,
                what,
                mut body,
            } => {
                inline_at(&mut body, &mut defs.clone(), depth, budget);
                nodes.push(Node::Unread { line, what, body });
            }
            a @ Node::Assign { .. } => nodes.push(a),
        }
    }
}

/// Calls one after the other that differ in one argument the body uses (`run_test 0`,
/// `run_test 1`): a loop over that argument's values, as `for p in 0 1; do run_test $p`
/// would be, so that the draft makes it a matrix axis (named from its use: `parent=$1`).
fn calls_as_loop(run: &[super::Cmd], name: &str, body: &[Node]) -> Option<super::Loop> {
    let first = run.first().filter(|_| run.len() > 1)?;
    let pi = first.program_index();
    let args: Vec<&[String]> = run
        .iter()
        .map(|c| &c.words[c.program_index() + 1..])
        .collect();
    if args.iter().flat_map(|a| a.iter()).any(|w| w.contains('$'))
        || run
            .iter()
            .any(|c| c.timed != first.timed || c.cond != first.cond || c.case != first.case)
    {
        return None;
    }
    let differ: Vec<usize> = (0..args[0].len())
        .filter(|k| {
            args.iter()
                .any(|a| unquote(&a[*k]) != unquote(&args[0][*k]))
        })
        .collect();
    let [k] = differ.as_slice() else {
        return several_as_loop(run, name, body, &differ);
    };
    let n = k + 1;
    let uses = |w: &str| w.contains(&format!("${n}")) || w.contains(&format!("${{{n}}}"));
    let mut used = false;
    super::walk(body, &mut Vec::new(), &mut |c, _| {
        used |= c.words.iter().any(|w| uses(w));
    });
    if !used {
        return None;
    }
    let var: String = format!("{name}_{n}")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let mut values: Vec<String> = Vec::new();
    for a in &args {
        let v = unquote(&a[*k]);
        if !values.contains(&v) {
            values.push(v);
        }
    }
    let mut template: Vec<String> = args[0].to_vec();
    template[*k] = format!("${var}");
    let call = Call {
        name: name.to_string(),
        line: first.line,
        text: first.words[pi..].join(" "),
    };
    let mut b = body.to_vec();
    bind(&mut b, &template, &call, first);
    let calls: Vec<String> = run
        .iter()
        .map(|c| c.words[c.program_index()..].join(" "))
        .collect();
    let lines: Vec<String> = run.iter().map(|c| c.line.to_string()).collect();
    Some(super::Loop {
        line: first.line,
        var,
        kind: super::LoopKind::List(values),
        head: format!("{} (lines {})", calls.join("; "), lines.join(", ")),
        body: b,
        timed: first.timed,
    })
}

/// Calls one after the other that differ in several arguments (`t 1024 128`,
/// `t 4096 256`): a loop over variants named from those arguments, each call's body bound
/// with its own arguments, a command the calls share once and one that differs per call
/// (`variants::merge`).
fn several_as_loop(
    run: &[super::Cmd],
    name: &str,
    body: &[Node],
    differ: &[usize],
) -> Option<super::Loop> {
    let first = run.first().filter(|_| differ.len() > 1)?;
    let runs: Vec<Vec<String>> = run
        .iter()
        .map(|c| {
            let args = &c.words[c.program_index() + 1..];
            differ.iter().map(|k| unquote(&args[*k])).collect()
        })
        .collect();
    let names = variants::names(&runs);
    let bodies: Vec<Vec<Node>> = run
        .iter()
        .map(|c| {
            let pi = c.program_index();
            let call = Call {
                name: name.to_string(),
                line: c.line,
                text: c.words[pi..].join(" "),
            };
            let mut b = body.to_vec();
            bind(&mut b, &c.words[pi + 1..], &call, c);
            b
        })
        .collect();
    // some command of the body must differ between the calls
    let merged =
        variants::merge(&bodies, &names, first.line).filter(|m| m.len() > bodies[0].len())?;
    let calls: Vec<String> = run
        .iter()
        .map(|c| {
            format!(
                "`{}` (line {})",
                c.words[c.program_index()..].join(" "),
                c.line
            )
        })
        .collect();
    Some(variants::variant_loop(
        merged,
        names,
        first.line,
        format!(
            "guess: the calls {} differ in several arguments; each value names a call",
            calls.join(", ")
        ),
    ))
}

fn count(nodes: &[Node]) -> usize {
    nodes
        .iter()
        .map(|n| match n {
            Node::Loop(l) => 1 + count(&l.body),
            Node::Else { body, .. } | Node::Unread { body, .. } => 1 + count(body),
            _ => 1,
        })
        .sum()
}

/// Bind the body's positional parameters to the call's words; the call's `time`, `if`
/// and `case` apply to each command of the body.
fn bind(nodes: &mut [Node], args: &[String], call: &Call, at: &super::Cmd) {
    for n in nodes {
        match n {
            Node::Cmd(c) => {
                let mut words = Vec::new();
                for w in &c.words {
                    if matches!(w.as_str(), "\"$@\"" | "$@" | "$*") {
                        words.extend(args.iter().cloned());
                    } else {
                        words.push(positional(w, args));
                    }
                }
                c.words = words;
                c.called.get_or_insert_with(|| call.clone());
                c.timed |= at.timed;
                if c.cond.is_none() {
                    c.cond.clone_from(&at.cond);
                }
                if c.case.is_none() {
                    c.case.clone_from(&at.case);
                }
                if let Some(k) = &mut c.case {
                    k.word = positional(&k.word, args);
                }
            }
            Node::Loop(l) => {
                l.head = positional(&l.head, args);
                if let super::LoopKind::List(items) = &mut l.kind {
                    let mut out = Vec::new();
                    for it in items.iter() {
                        if matches!(it.as_str(), "$@" | "$*") {
                            out.extend(args.iter().map(|a| unquote(a)));
                        } else {
                            out.push(unquote(&positional(it, args)));
                        }
                    }
                    *items = out;
                }
                l.timed |= at.timed;
                bind(&mut l.body, args, call, at);
            }
            Node::Assign { value, arm, .. } => {
                *value = unquote(&positional(value, args));
                if let Some(k) = arm {
                    k.word = positional(&k.word, args);
                }
            }
            Node::Else { body, .. } | Node::Unread { body, .. } => bind(body, args, call, at),
            Node::Func { .. } => {}
        }
    }
}

/// `$1`, `${2}`, `$@`, `$*`, `$#` in a word, from the call's words (an argument quoted as
/// a whole loses its quotes; a missing one is empty, as in the shell).
fn positional(w: &str, args: &[String]) -> String {
    if !w.contains('$') {
        return w.to_string();
    }
    let arg = |k: usize| {
        args.get(k)
            .map(|a| {
                let u = unquote(a);
                if u.contains(char::is_whitespace) {
                    a.clone()
                } else {
                    u
                }
            })
            .unwrap_or_default()
    };
    let chars: Vec<char> = w.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '$' {
            match chars.get(i + 1) {
                Some('@' | '*') => {
                    let all: Vec<String> = (0..args.len()).map(arg).collect();
                    out.push_str(&all.join(" "));
                    i += 2;
                    continue;
                }
                Some('#') => {
                    out.push_str(&args.len().to_string());
                    i += 2;
                    continue;
                }
                _ => {}
            }
            let (name, len) = var_at(&chars[i + 1..]);
            if let Ok(k) = name.parse::<usize>() {
                if k >= 1 {
                    out.push_str(&arg(k - 1));
                    i += 1 + len;
                    continue;
                }
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::positional;

    #[test]
    fn positional_parameters() {
        let args = vec!["1".to_string(), "\"4k\"".to_string()];
        assert_eq!(positional("-n parent=$1", &args), "-n parent=1");
        assert_eq!(positional("bs=${2}", &args), "bs=4k");
        assert_eq!(positional("$3", &args), "");
        assert_eq!(positional("$#:$*", &args), "2:1 4k");
        assert_eq!(positional("$fs", &args), "$fs");
    }
}
