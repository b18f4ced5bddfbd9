//! `time` output pasted side by side, one column per setting:
//!
//! ```text
//! parent=0             parent=1
//! ==================   ==================
//! real 0m57.573s       real 1m2.934s
//! user 3m53.578s       user 3m53.508s
//! sys  19m44.440s      sys  25m14.810s
//! ```
//!
//! Each column's `key=value` header becomes its settings (a header word without `=` is
//! the setting `column`), each `real`/`user`/`sys` cell a row; the command above (`$ time
//! fs_mark …`) or the sentence above labels them. The times are read with
//! `crate::parse::time`, one cell at a time.

use super::commands::after_prompt;
use super::mail::Post;
use super::numbers::token_quantity;
use super::output::Found;
use super::{Category, Row};
use crate::parse::time;

fn is_rule(t: &str) -> bool {
    !t.is_empty()
        && t.split_whitespace()
            .all(|w| w.len() > 2 && w.chars().all(|c| matches!(c, '=' | '-')))
}

/// `real 0m57.573s real 1m2.934s` → [(real, 0m57.573s), (real, 1m2.934s)].
fn cells(t: &str) -> Option<Vec<(&str, &str)>> {
    let w: Vec<&str> = t.split_whitespace().collect();
    if w.len() < 4 || w.len() % 2 != 0 {
        return None;
    }
    let out: Vec<(&str, &str)> = w.chunks(2).map(|c| (c[0], c[1])).collect();
    let kind = out[0].0;
    (matches!(kind, "real" | "user" | "sys") && out.iter().all(|c| c.0 == kind)).then_some(out)
}

/// Every side-by-side `time` block of the post.
pub fn blocks(post: &Post) -> Vec<Found> {
    let lines = &post.lines;
    let mut found = Vec::new();
    let mut k = 0;
    while k < lines.len() {
        let head: Vec<&str> = lines[k].text.split_whitespace().collect();
        let mut m = k + 1;
        if lines.get(m).is_some_and(|l| is_rule(l.text.trim())) {
            m += 1;
        }
        let mut rows_at = Vec::new();
        while let Some(c) = lines.get(m).and_then(|l| cells(&l.text)) {
            if c.len() != head.len() {
                break;
            }
            rows_at.push((m, c));
            m += 1;
        }
        if head.len() < 2 || rows_at.is_empty() || head.iter().any(|h| cells(h).is_some()) {
            k += 1;
            continue;
        }
        // the command above the header (`$ time rm -rf ...`), else the line above
        let label = k
            .checked_sub(1)
            .map(|i| {
                let t = lines[i].text.trim();
                after_prompt(t).unwrap_or(t).to_string()
            })
            .unwrap_or_default();
        let mut rows = Vec::new();
        for (at, c) in &rows_at {
            for (col, (kind, value)) in c.iter().enumerate() {
                let parsed = time::parse(&format!("{kind} {value}")).ok();
                let v = parsed
                    .as_ref()
                    .and_then(|p| p.rows.first())
                    .and_then(|r| match *kind {
                        "real" => r.real_s,
                        "user" => r.user_s,
                        _ => r.sys_s,
                    });
                // a lone line the time parser does not take: the importer's own reader
                let v = v.or_else(|| {
                    token_quantity(value)
                        .filter(|(q, _)| q.unit == "s")
                        .map(|(q, _)| q.value)
                });
                let Some(v) = v else { continue };
                let settings = match head[col].split_once('=') {
                    Some((key, val)) if !key.is_empty() => vec![(key.to_string(), val.to_string())],
                    _ => vec![("column".to_string(), head[col].to_string())],
                };
                rows.push(Row {
                    line: lines[*at].n,
                    group: "time".into(),
                    quantity: format!("{kind}_time"),
                    settings,
                    value: v,
                    unit: "s".into(),
                    printed: value.to_string(),
                    approx: false,
                    category: Category::Measurement,
                    stated_by: lines[*at].quoted_author.clone(),
                    note: label.clone(),
                });
            }
        }
        found.push(Found {
            tool: "time (side by side)",
            first: k,
            rows,
            lines: (k..m).collect(),
            device_bytes: Vec::new(),
        });
        k = m;
    }
    found
}
