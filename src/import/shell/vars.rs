//! Variables: `NAME=value` substituted into the commands after it, and a variable set in
//! the branches of a `case` (`case $fs in ext3) opts="-O ^extent";; ext4) opts="";; esac`):
//! a command after the `case` that uses it runs once per branch that sets it, with that
//! branch's value and its [`CaseArm`], and once where none of them runs, with the value
//! from before the `case` (unset is empty, as in the shell).

use super::{CaseArm, Cmd, Loop, LoopKind, Node};

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
                if let LoopKind::List(items) = &mut l.kind {
                    *items = (items.iter())
                        .flat_map(|it| subst_fields(it, &env.plain))
                        .collect();
                }
                let built = built_in_loop(&l, env);
                // the loop variable shadows
                let saved = env.clone();
                env.forget(&l.var);
                substitute(&mut l.body, env);
                *env = saved;
                let (line, head) = (l.line, l.head.clone());
                nodes.push(Node::Loop(l));
                for (name, value) in built {
                    env.forget(&name);
                    let Some(v) = value else {
                        nodes.push(Node::Unread {
                            line,
                            what: format!("`{name}` is set in `{head}` (line {line}), whose iterations could not be read: its value after the loop is not known"),
                            body: Vec::new(),
                        });
                        continue;
                    };
                    env.plain.push((name, v));
                }
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
                // a block substituted again (its calls inlined) says a thing once
                let same = |n: &Node| matches!(n, Node::Unread { line: l, what: w, body: b } if *l == line && *w == what && b.is_empty());
                if body.is_empty() && nodes.iter().any(same) {
                    continue;
                }
                substitute(&mut body, &mut env.clone());
                nodes.push(Node::Unread { line, what, body });
            }
            // its body was inlined at each call, where it is substituted
            f @ Node::Func { .. } => nodes.push(f),
        }
    }
}

/// The most iterations a loop that builds a variable is followed through.
const MAX_BUILD: u64 = 1024;

/// The variables a loop's body sets (`OPTS="$OPTS -d $MNT/$i"` in `for ((i=0;i<4;i++))`),
/// each with its value after the loop, the body's assignments followed through every
/// iteration; None where the iterations could not be read.
fn built_in_loop(l: &Loop, env: &Env) -> Vec<(String, Option<String>)> {
    let mut names: Vec<&str> = Vec::new();
    let mut uses_var = false;
    for n in &l.body {
        if let Node::Assign {
            name,
            value,
            arm: None,
            ..
        } = n
        {
            uses_var |= vars_in(value).contains(&l.var);
            if *name != l.var && !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
    }
    if names.is_empty() {
        return Vec::new();
    }
    let values: Option<Vec<Option<String>>> = match &l.kind {
        LoopKind::List(items) => Some(items.iter().cloned().map(Some).collect()),
        LoopKind::Range(a, b) if b.saturating_sub(*a) < MAX_BUILD as i64 => {
            Some((*a..=*b).map(|x| Some(x.to_string())).collect())
        }
        // `for ((i=0;i<N;i++))` counts from 0; another count names no values
        LoopKind::Count(n) if *n <= MAX_BUILD && l.head.starts_with("for ((") => {
            Some((0..*n).map(|x| Some(x.to_string())).collect())
        }
        LoopKind::Count(n) if *n <= MAX_BUILD && !uses_var => Some(vec![None; *n as usize]),
        _ => None,
    };
    let Some(values) = values else {
        return names.into_iter().map(|n| (n.to_string(), None)).collect();
    };
    let mut local = env.plain.clone();
    for v in values {
        local.retain(|(k, _)| *k != l.var);
        local.extend(v.map(|v| (l.var.clone(), v)));
        for n in &l.body {
            if let Node::Assign {
                name,
                value,
                arm: None,
                ..
            } = n
            {
                let v = subst_word(value, &local);
                local.retain(|(k, _)| k != name);
                local.push((name.clone(), v));
            }
        }
    }
    let value = |n: &str| local.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    names
        .into_iter()
        .map(|n| (n.to_string(), value(n)))
        .collect()
}

/// What the shell said of `name` built in a loop that could not be counted (the
/// [`Node::Unread`] `built_in_loop` leaves), at any depth of the nodes.
pub fn built_in_unread_loop(nodes: &[Node], name: &str) -> Option<String> {
    let head = format!("`{name}` is set in `");
    nodes.iter().find_map(|n| match n {
        Node::Unread { what, .. } if what.starts_with(&head) => Some(what.clone()),
        Node::Loop(l) => built_in_unread_loop(&l.body, name),
        Node::Else { body, .. } | Node::Func { body, .. } | Node::Unread { body, .. } => {
            built_in_unread_loop(body, name)
        }
        Node::Cmd(_) | Node::Assign { .. } => None,
    })
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
        .flat_map(|w| subst_fields(w, &env))
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
    let fields: Vec<String> = (c.words.iter())
        .flat_map(|w| subst_fields(w, &env.plain))
        .collect();
    // a command that was only variables set empty keeps a word (it is no command)
    c.words = if fields.is_empty() {
        c.words.iter().map(|w| subst_word(w, &env.plain)).collect()
    } else {
        fields
    };
    if let Some(k) = &mut c.case {
        k.word = subst_word(&k.word, &env.plain);
    }
    if let Some(d) = c.heredoc.as_mut().filter(|d| !d.quoted) {
        for (_, l) in &mut d.body {
            *l = subst_word(l, &env.plain);
        }
    }
}

/// A word with `$NAME` / `${NAME}` replaced, as the shell's fields: a value substituted
/// outside quotes is split at its spaces (`MOUNT_OPTIONS="-o ssd"`, then
/// `mount $MOUNT_OPTIONS` gives `-o` and `ssd`), one inside quotes (`"$OPTS"`) is not. A
/// word that was only an unquoted variable set empty leaves.
pub fn subst_fields(w: &str, env: &[(String, String)]) -> Vec<String> {
    if !w.contains('$') || env.is_empty() {
        return vec![w.to_string()];
    }
    let mut fields = Vec::new();
    let mut cur = String::new();
    // whether `cur` is a field even when empty (it holds quotes or literal text)
    let mut kept = false;
    let mut quote: Option<char> = None;
    let chars: Vec<char> = w.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '$' {
            let (name, len) = var_at(&chars[i + 1..]);
            if let Some((_, v)) = env.iter().find(|(k, _)| *k == name) {
                if quote.is_some() {
                    cur.push_str(v);
                } else {
                    for ch in v.chars() {
                        if ch.is_whitespace() {
                            if kept || !cur.is_empty() {
                                fields.push(std::mem::take(&mut cur));
                            }
                            kept = false;
                        } else {
                            cur.push(ch);
                        }
                    }
                }
                i += 1 + len;
                continue;
            }
        }
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
        kept = true;
        cur.push(c);
        i += 1;
    }
    if kept || !cur.is_empty() {
        fields.push(cur);
    }
    fields
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

#[cfg(test)]
mod tests {
    use super::subst_fields;

    #[test]
    fn values_outside_quotes_split_into_fields() {
        let env = vec![
            (
                "MOUNT_OPTIONS".to_string(),
                "-o ssd -o space_cache=v2".to_string(),
            ),
            ("E".to_string(), String::new()),
            ("D".to_string(), "/mnt/a b".to_string()),
        ];
        assert_eq!(
            subst_fields("$MOUNT_OPTIONS", &env),
            ["-o", "ssd", "-o", "space_cache=v2"]
        );
        assert_eq!(
            subst_fields("\"$MOUNT_OPTIONS\"", &env),
            ["\"-o ssd -o space_cache=v2\""]
        );
        assert_eq!(subst_fields("--dir=${D}/x", &env), ["--dir=/mnt/a", "b/x"]);
        assert!(subst_fields("$E", &env).is_empty());
        assert_eq!(subst_fields("\"$E\"", &env), ["\"\""]);
        assert_eq!(subst_fields("$UNSET", &env), ["$UNSET"]);
    }
}
