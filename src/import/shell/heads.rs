//! Loop heads: the iterations of `for` lists, ranges, `seq` and `((…))` counters, and of
//! counting `while`/`until` loops with their increments.

use super::{unquote, LoopKind, Node};

/// The counter, comparison (`lt`, `le`, `ne`, as a `while` would say it) and bound of a
/// loop condition: `[ $i -lt 10 ]`, `[[ "$i" -le 9 ]]`, `test $i -ne 10`, `(( i < 10 ))`.
pub(super) fn while_count(head: &[String], until: bool) -> Option<(String, &'static str, i64)> {
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
pub(super) fn is_increment(n: &Node, var: &str) -> bool {
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

pub(super) fn loop_kind(head: &[String]) -> (String, LoopKind) {
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
                // from 0: a count; from elsewhere (`i=1;i<=N`), the values it names
                Some(c) if c >= 0 && parts[2].contains("++") && start == 0 => {
                    (var, LoopKind::Count(c as u64))
                }
                Some(c) if c > 0 && parts[2].contains("++") => {
                    (var, LoopKind::Range(start, start + c - 1))
                }
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
        // `seq N` counts 1 … N
        [n] => Some(LoopKind::Range(1, n.max(0))),
        [a, b] => Some(LoopKind::Range(a, b)),
        [a, 1, b] => Some(LoopKind::Range(a, b)),
        [a, step, b] if step > 0 => Some(LoopKind::Count(((b - a) / step + 1).max(0) as u64)),
        _ => None,
    }
}
