//! Variables: `NAME=value` substituted into the commands after it, and a variable set in
//! the branches of a `case` (`case $fs in ext3) opts="-O ^extent";; ext4) opts="";; esac`):
//! a command after the `case` that uses it runs once per branch that sets it, with that
//! branch's value and its [`CaseArm`], and once where none of them runs, with the value
//! from before the `case` (unset is empty, as in the shell).

use super::{CaseArm, Cmd, Node};

/// The variables set so far.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// `NAME=value` outside any `case` branch.
    plain: Vec<(String, String)>,
    /// Variables set in the branches of a `case`.
    branch: Vec<BranchVar>,
}

/// A variable set in branches of one `case`.
#[derive(Debug, Clone)]
struct BranchVar {
    name: String,
    /// The `case` line and word.
    case_line: usize,
    word: String,
    /// Its value before the `case` (None: unset).
    before: Option<String>,
    /// Each branch that sets it, with the value.
    arms: Vec<(CaseArm, String)>,
}

impl Env {
    fn forget(&mut self, name: &str) {
        self.plain.retain(|(k, _)| k != name);
        self.branch.retain(|b| b.name != name);
    }
}

/// Substitute variables set by assignments into the words that follow them; a command
/// that uses a variable set per `case` branch becomes one command per branch.
pub fn substitute(nodes: &mut Vec<Node>, env: &mut Env) {
    for n in std::mem::take(nodes) {
        match n {
            Node::Assign {
                line,
                name,
                value,
                arm: None,
            } => {
                let v = subst_word(&value, &env.plain);
                env.forget(&name);
                env.plain.push((name.clone(), v));
                nodes.push(Node::Assign {
                    line,
                    name,
                    value,
                    arm: None,
                });
            }
            Node::Assign {
                line,
                name,
                value,
                arm: Some(mut arm),
            } => {
                arm.word = subst_word(&arm.word, &env.plain);
                let v = subst_word(&value, &env.plain);
                let same =
                    |b: &BranchVar| b.name == name && b.case_line == arm.line && b.word == arm.word;
                match env.branch.iter_mut().find(|b| same(b)) {
                    Some(b) => {
                        b.arms.retain(|(a, _)| a.arm_line != arm.arm_line);
                        b.arms.push((arm.clone(), v));
                    }
                    None => {
                        let before = env
                            .plain
                            .iter()
                            .find(|(k, _)| *k == name)
                            .map(|(_, v)| v.clone());
                        env.forget(&name);
                        env.branch.push(BranchVar {
                            name: name.clone(),
                            case_line: arm.line,
                            word: arm.word.clone(),
                            before,
                            arms: vec![(arm.clone(), v)],
                        });
                    }
                }
                nodes.push(Node::Assign {
                    line,
                    name,
                    value,
                    arm: Some(arm),
                });
            }
            Node::Cmd(c) => per_branch(c, env, nodes),
            Node::Loop(mut l) => {
                if let super::LoopKind::List(items) = &mut l.kind {
                    for it in items.iter_mut() {
                        *it = subst_word(it, &env.plain);
                    }
                }
                // the loop variable shadows
                let saved = env.clone();
                env.forget(&l.var);
                substitute(&mut l.body, env);
                *env = saved;
                nodes.push(Node::Loop(l));
            }
            Node::Else {
                line,
                head,
                mut body,
            } => {
                substitute(&mut body, &mut env.clone());
                nodes.push(Node::Else { line, head, body });
            }
            Node::Unread {
                line,
                what,
                mut body,
            } => {
                substitute(&mut body, &mut env.clone());
                nodes.push(Node::Unread { line, what, body });
            }
            // its body was inlined at each call, where it is substituted
            f @ Node::Func { .. } => nodes.push(f),
        }
    }
}

/// Whether the command names `$name` (its words, or an unquoted here-document's body).
fn uses(c: &Cmd, name: &str) -> bool {
    let doc = c
        .heredoc
        .iter()
        .filter(|d| !d.quoted)
        .flat_map(|d| d.body.iter().map(|(_, l)| l));
    c.words
        .iter()
        .chain(doc)
        .any(|w| vars_in(w).iter().any(|v| v == name))
}

/// The command with `$name` replaced by each of `vals` (None: unset, so empty; a word that
/// was only the variable leaves).
fn with_values(c: &Cmd, vals: &[(&str, Option<&str>)]) -> Cmd {
    let env: Vec<(String, String)> = vals
        .iter()
        .map(|(k, v)| (k.to_string(), v.unwrap_or("").to_string()))
        .collect();
    let mut c = c.clone();
    c.words = c
        .words
        .iter()
        .map(|w| subst_word(w, &env))
        .filter(|w| !w.is_empty())
        .collect();
    if let Some(d) = c.heredoc.as_mut().filter(|d| !d.quoted) {
        for (_, l) in &mut d.body {
            *l = subst_word(l, &env);
        }
    }
    c
}

/// Substitute a command's variables; one that uses variables set in a `case`'s branches
/// becomes one command per branch (and one where none of them runs).
fn per_branch(mut c: Cmd, env: &Env, out: &mut Vec<Node>) {
    let used: Vec<&BranchVar> = env.branch.iter().filter(|b| uses(&c, &b.name)).collect();
    let Some(first) = used.first() else {
        plain(&mut c, env);
        out.push(Node::Cmd(c));
        return;
    };
    let key = (first.case_line, first.word.clone());
    let names: Vec<String> = used.iter().map(|b| format!("${}", b.name)).collect();
    let text = c.text();
    let other_case = c
        .case
        .as_ref()
        .is_some_and(|k| (k.line, &k.word) != (key.0, &key.1));
    if other_case
        || used
            .iter()
            .any(|b| (b.case_line, &b.word) != (key.0, &key.1))
    {
        out.push(Node::Unread {
            line: c.line,
            what: format!(
                "`{text}` uses {}, set in the branches of `case {}` (line {}), where another `case` decides too: the draft cannot say which value it has",
                names.join(", "),
                key.1,
                key.0
            ),
            body: vec![Node::Cmd(c)],
        });
        return;
    }
    fn value_in(b: &BranchVar, arm_line: usize) -> Option<&str> {
        b.arms
            .iter()
            .find(|(a, _)| a.arm_line == arm_line)
            .map(|(_, v)| v.as_str())
            .or(b.before.as_deref())
    }
    if let Some(k) = &c.case {
        // in a branch of the same `case`: that branch's value
        let vals: Vec<(&str, Option<&str>)> = used
            .iter()
            .map(|b| (b.name.as_str(), value_in(b, k.arm_line)))
            .collect();
        let mut c = with_values(&c, &vals);
        plain(&mut c, env);
        out.push(Node::Cmd(c));
        return;
    }
    let mut arms: Vec<&CaseArm> = Vec::new();
    for b in &used {
        for (a, _) in &b.arms {
            if !arms.iter().any(|x| x.arm_line == a.arm_line) {
                arms.push(a);
            }
        }
    }
    arms.sort_by_key(|a| a.arm_line);
    let why = format!(
        "`{text}`: {} set in the branches of `case {}` (line {}): one command per branch, with that branch's value",
        names.join(", "),
        key.1,
        key.0
    );
    let rest = CaseArm {
        line: key.0,
        arm_line: key.0,
        word: key.1.clone(),
        patterns: vec!["*".into()],
        earlier: Vec::new(),
        unless: arms.iter().map(|a| (*a).clone()).collect(),
    };
    for arm in arms.into_iter().chain(std::iter::once(&rest)) {
        let vals: Vec<(&str, Option<&str>)> = used
            .iter()
            .map(|b| (b.name.as_str(), value_in(b, arm.arm_line)))
            .collect();
        let prog = c.words.get(c.program_index()).cloned().unwrap_or_default();
        if with_values(&Cmd::new(c.line, vec![prog]), &vals)
            .words
            .is_empty()
        {
            // the variable is the program, unset where no branch sets it
            continue;
        }
        let mut copy = with_values(&c, &vals);
        copy.case = Some(Box::new(arm.clone()));
        copy.per_branch = Some(why.clone());
        plain(&mut copy, env);
        out.push(Node::Cmd(copy));
    }
}

/// Substitute the variables set outside any branch.
fn plain(c: &mut Cmd, env: &Env) {
    for w in &mut c.words {
        *w = subst_word(w, &env.plain);
    }
    if let Some(k) = &mut c.case {
        k.word = subst_word(&k.word, &env.plain);
    }
    if let Some(d) = c.heredoc.as_mut().filter(|d| !d.quoted) {
        for (_, l) in &mut d.body {
            *l = subst_word(l, &env.plain);
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
