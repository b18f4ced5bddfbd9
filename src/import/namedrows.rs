//! Blocks of `Name: value unit` lines, as `/proc/meminfo` greps print them:
//!
//! ```text
//! Vanilla 5.12-rc6
//! # ./percpu_test.sh
//! Percpu:             1952 kB
//! Percpu:           219648 kB
//! ```
//!
//! The short line above the block (prompts skipped) labels its rows, as the sentence before a
//! `real/user/sys` block labels that block's times, and what the block prints is a
//! measurement of the run, not a parameter of the setup.

use super::commands::after_prompt;
use super::mail::PostLine;
use super::output::add_label_settings;
use super::{Category, Row};

/// The one row of a `Name: value unit` line, by its index in `rows`.
fn named(line: &PostLine, rows: &[Row]) -> Option<usize> {
    let (head, rest) = line.text.split_once(':')?;
    let head = head.trim();
    if head.is_empty() || head.split_whitespace().count() > 4 {
        return None;
    }
    let rest = rest.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut hits = rows.iter().enumerate().filter(|(_, r)| r.line == line.n);
    let (i, r) = hits.next()?;
    if hits.next().is_some() {
        return None;
    }
    let labelled = r.settings.iter().any(|s| s.0 == "row" && s.1 == head);
    (labelled && r.printed == rest && !r.unit.is_empty()).then_some(i)
}

/// The label of a block starting at post index `start`: the nearest line above that is
/// not blank and not a prompt when it is short (`Vanilla 5.12-rc6`,
/// `5.12-rc6 + with patchset applied`). A sentence above (`… gave me the following
/// results:`) labels nothing: the rows' own names (`Without 3a8b36f:`) are their labels.
fn label(lines: &[PostLine], start: usize) -> Option<String> {
    let prompt = |i: usize| after_prompt(&lines[i].text).is_some();
    let near = (0..start)
        .rev()
        .take(6)
        .find(|&i| !lines[i].text.trim().is_empty() && !prompt(i))?;
    let t = lines[near].text.trim();
    (lines[near].depth == lines[start].depth
        && t.split_whitespace().count() <= 8
        && !t.ends_with(['.', ',']))
    .then(|| t.trim_end_matches(':').trim().to_string())
}

/// Label the rows of each block of two or more `Name: value unit` lines with the line
/// above it (the row's note, a `label` setting and the row's `position` in the block),
/// and make them measurements.
pub fn label_blocks(lines: &[PostLine], rows: &mut [Row]) {
    let mut k = 0;
    while k < lines.len() {
        let mut block = Vec::new();
        while let Some(i) = lines
            .get(k + block.len())
            .filter(|l| l.depth == lines[k].depth)
            .and_then(|l| named(l, rows))
        {
            block.push(i);
        }
        if block.len() < 2 {
            k += 1;
            continue;
        }
        if let Some(label) = label(lines, k) {
            for (p, &i) in block.iter().enumerate() {
                let r = &mut rows[i];
                r.settings.push(("label".into(), label.clone()));
                add_label_settings(&mut r.settings, &label);
                r.settings.push(("position".into(), (p + 1).to_string()));
                r.note.clone_from(&label);
                if r.category == Category::Parameter {
                    r.category = Category::Measurement;
                }
            }
        }
        k += block.len();
    }
}
