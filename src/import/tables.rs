//! Tables in a post: a header row (or a header of several lines between rules), rows with
//! their labels, numeric cells with units in the cells or in the header, and the rows they
//! give, one per cell, with the row and column labels as settings.

use super::numbers::{prose_numbers, token_quantity, Quantity};
use super::rowlabels::looks_like_prose;
use super::sections::title;
use super::units::count_noun;
use super::units::{quantity_name, suffix_unit, word_unit};
use super::{Category, Row};

/// A table in the post: a header row, data rows with labels, numeric cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Post index (into the post's lines) of the header, when there is one.
    pub header: Option<usize>,
    /// The header's first cell when the columns are its values (`rtextsize  8k  16k`).
    pub axis: Option<String>,
    /// The header's first cell when it names what the row labels are (`Idling  iops  bw`
    /// above `On  4136  16.9MB/s`): the rows' setting is named by it, not `row`.
    pub row_axis: Option<String>,
    pub columns: Vec<String>,
    /// (post index, row label, cells as printed)
    pub rows: Vec<(usize, String, Vec<String>)>,
    /// A cell's printed note after it (`10.7MB/s (613%)`): (index into `rows`, cell, note).
    pub notes: Vec<(usize, usize, String)>,
    /// The unit a line right above or below the table gives its bare cells (`(The unit
    /// is MB/s.)`, `units: ms`, `all numbers in MB/s`).
    pub unit: Option<String>,
}

/// A rule line: `-----`, `=====`, `+----+`, Markdown's alignment row `|:---|---:|`.
fn is_rule(t: &str) -> bool {
    let t = t.trim();
    t.contains(['-', '='])
        && t.chars()
            .all(|c| matches!(c, '-' | '=' | '|' | '+' | ' ' | ':'))
}

/// The unit a line says the numbers of a table are in: `(The unit is MB/s.)`, `units:
/// ms`, `Unit: IOPS`, `all numbers in MB/s`, `times are in seconds`.
pub fn unit_line(t: &str) -> Option<String> {
    let t = t
        .trim()
        .trim_matches(|c| matches!(c, '(' | ')' | '.' | '*' | '_'));
    let low = t.to_ascii_lowercase();
    let words: Vec<&str> = low.split_whitespace().collect();
    if words.len() > 8 {
        return None;
    }
    let after = |i: usize| words.get(i).map(|w| w.trim_end_matches(['.', ',', ')']));
    let unit = |w: &str| {
        let printed = t
            .split_whitespace()
            .find(|p| p.to_ascii_lowercase().starts_with(w))?;
        let printed = printed.trim_end_matches(['.', ',', ')']);
        suffix_unit(printed)
            .or_else(|| word_unit(printed))
            .filter(|(_, f)| *f == 1.0)
            .map(|(u, _)| u.to_string())
    };
    // `unit is X`, `units: X`, `units are X`
    if let Some(i) = words
        .iter()
        .position(|w| matches!(*w, "unit" | "units" | "unit:" | "units:"))
    {
        let j = if words[i].ends_with(':') {
            i + 1
        } else {
            i + 2
        };
        let linked = words[i].ends_with(':') || matches!(after(i + 1), Some("is" | "are" | "="));
        return after(j).filter(|_| linked).and_then(unit);
    }
    // `all numbers in MB/s`, `times are in seconds`
    let subject = [
        "numbers",
        "values",
        "results",
        "figures",
        "times",
        "latencies",
        "rates",
    ];
    let i = words.iter().position(|w| *w == "in")?;
    (i + 2 == words.len() && words[..i].iter().any(|w| subject.contains(w)))
        .then(|| after(i + 1).and_then(unit))
        .flatten()
}

/// A number in a phrase of a cell (`done in 24.46 s`, `number of transactions actually
/// processed: 99878`): the one number, with its unit or the noun it counts; `None` without
/// one (`USB 2.0` is no result).
fn phrase_quantity(cell: &str) -> Option<Quantity> {
    let mut found = prose_numbers(cell);
    if found.len() != 1 {
        return None;
    }
    let mut q = found.pop()?.quantity;
    if q.unit.is_empty() {
        q.unit = cell.split_whitespace().find_map(count_noun)?;
    }
    Some(q)
}

/// `(613%)` after the last cell: the author's note on that cell, not a column.
fn cell_note(c: &str) -> bool {
    c.len() > 2 && c.starts_with('(') && c.ends_with(')') && is_cell_number(&c[1..c.len() - 1])
}

/// Whether the header cells are values of one setting (`8k 16k 32k`, `0 1`, `v4 v5`)
/// rather than names of what each column measures (`iops avg-lat(us) bw`).
fn columns_are_values(cols: &[String]) -> bool {
    cols.iter().all(|c| {
        token_quantity(c).is_some()
            || c.contains('=')
            || (c.chars().next().is_some_and(|f| f.is_ascii_digit()) && !c.contains(' '))
    })
}

fn cells_pipe(t: &str) -> Option<Vec<String>> {
    if !t.contains('|') {
        return None;
    }
    let cells: Vec<String> = t
        .trim()
        .trim_matches('|')
        .split('|')
        .map(|c| c.trim().to_string())
        .collect();
    (cells.len() >= 2).then_some(cells)
}

fn is_cell_number(c: &str) -> bool {
    matches!(c, "-" | "n/a" | "N/A" | "—")
        || token_quantity(c).is_some_and(|(q, _)| q.attached || !c.contains(char::is_alphabetic))
}

/// A cell of a `|` table: a number, a number with `+` after it, or a mark for no result.
fn pipe_cell(c: &str) -> bool {
    is_cell_number(c)
        || matches!(c, "" | "X" | "x" | "?")
        || c.strip_suffix('+').is_some_and(is_cell_number)
}

/// The header of a `|` table printed over several lines (`| Filesystem | Copy Sources |` /
/// `| | Across |` / `| | (seconds) |`), the lines from `last` up, merged column by column.
fn pipe_header(texts: &[&str], taken: &[bool], last: usize, n: usize) -> Option<Vec<String>> {
    let mut merged: Vec<String> = Vec::new();
    let mut first = None;
    for h in (0..=last).rev() {
        match cells_pipe(texts[h]).filter(|c| c.len() == n + 1 && !taken[h]) {
            Some(_) => first = Some(h),
            None => break,
        }
    }
    for t in &texts[first?..=last] {
        let cells = cells_pipe(t)?;
        if merged.is_empty() {
            merged = vec![String::new(); cells.len()];
        }
        for (m, c) in merged.iter_mut().zip(cells) {
            if !c.is_empty() {
                if !m.is_empty() {
                    m.push(' ');
                }
                m.push_str(&c);
            }
        }
    }
    Some(merged)
}

/// How many trailing whitespace tokens are numeric cells, and the label before them.
fn split_row(t: &str) -> (String, Vec<String>) {
    if let Some(cells) = cells_pipe(t) {
        // `| NTFS | 781 | X | 73+ |`: the first cell labels the row, the others are its
        // cells, numbers or not (`X`, no result; `73+`, at least 73)
        // (or a phrase with a number, `done in 24.46 s`, and text cells: `Flash`)
        if cells.len() >= 2
            && !is_cell_number(&cells[0])
            && cells[1..]
                .iter()
                .any(|c| is_cell_number(c) || phrase_quantity(c).is_some())
        {
            return (cells[0].clone(), cells[1..].to_vec());
        }
        let n = cells.iter().rev().take_while(|c| is_cell_number(c)).count();
        let label = cells[..cells.len() - n].join(" ");
        return (label, cells[cells.len() - n..].to_vec());
    }
    let toks: Vec<&str> = t.split_whitespace().collect();
    let n = toks.iter().rev().take_while(|c| is_cell_number(c)).count();
    let label = toks[..toks.len() - n].join(" ");
    (
        label.trim_end_matches(':').trim().to_string(),
        toks[toks.len() - n..]
            .iter()
            .map(|s| s.to_string())
            .collect(),
    )
}

fn header_cells(t: &str, n: usize) -> Option<(Option<String>, Vec<String>)> {
    let candidates: Vec<Vec<String>> = [
        cells_pipe(t),
        Some(
            t.split('\t')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(String::from)
                .collect(),
        ),
        Some(
            t.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(String::from)
                .collect(),
        ),
        // single spaces, an option kept with its program (`ls -R`)
        Some(
            t.split_whitespace()
                .fold(Vec::new(), |mut v: Vec<String>, w| {
                    match v.last_mut() {
                        Some(last) if w.starts_with('-') && w.len() > 1 => {
                            last.push(' ');
                            last.push_str(w);
                        }
                        _ => v.push(w.to_string()),
                    }
                    v
                }),
        ),
        Some(t.split_whitespace().map(String::from).collect()),
    ]
    .into_iter()
    .flatten()
    .collect();
    for c in candidates {
        if c.len() == n {
            return Some((None, c));
        }
        if c.len() == n + 1 {
            return Some((
                Some(c[0].trim_end_matches(':').to_string()),
                c[1..].to_vec(),
            ));
        }
    }
    None
}

/// Find tables among lines that are not already taken. `text(k)` is line k's text.
pub fn find_tables(texts: &[&str], taken: &[bool]) -> Vec<Table> {
    let mut out: Vec<Table> = Vec::new();
    let mut k = 0;
    while k < texts.len() {
        if taken[k] || texts[k].trim().is_empty() {
            k += 1;
            continue;
        }
        let (label, cells) = split_row(texts[k]);
        let n = cells.len();
        // a `|` table's first cell is its row's label, however long
        let pipe = cells_pipe(texts[k]).is_some();
        let label_ok = pipe || (label.split_whitespace().count() <= 5 && !label.ends_with('.'));
        let enough = n >= 2 || (pipe && n >= 1);
        if !enough || !label_ok || (!pipe && looks_like_prose(texts[k])) {
            k += 1;
            continue;
        }
        // consecutive rows with the same cell count
        let mut rows = vec![(k, label, cells)];
        let mut notes = Vec::new();
        let mut m = k + 1;
        while m < texts.len() && !taken[m] {
            let t = texts[m];
            if t.trim().is_empty() || is_rule(t) {
                if t.trim().is_empty() {
                    break;
                }
                m += 1;
                continue;
            }
            let (l, mut c) = split_row(t);
            if c.len() == n + 1 && c.last().is_some_and(|x| cell_note(x)) {
                let note = c.pop().unwrap_or_default();
                notes.push((rows.len(), n - 1, note));
            }
            if c.len() != n || (!pipe && l.split_whitespace().count() > 5) {
                break;
            }
            rows.push((m, l, c));
            m += 1;
        }
        // a first row whose cells are of another kind than the rest's is the header
        // (`rtextsize 8k 16k` above `zero out: 9.601s 10.229s`); `104KB/s` above `1.5MB/s`
        // is a row of rates like it
        let unit_of = |c: &str| {
            token_quantity(c)
                .map(|(q, _)| quantity_name(&q.unit))
                .unwrap_or_default()
        };
        let mut inline_header = None;
        // (`write 1 2 4` above `lock 24936 24738 24726`: counts in a row, the runs' setting)
        // (ascending, and below every number of the rows under it)
        let ascending = |cells: &[String]| {
            let v: Vec<u64> = cells.iter().filter_map(|c| c.parse().ok()).collect();
            v.len() == cells.len() && v.windows(2).all(|w| w[0] < w[1])
        };
        let below_rest = |first: &[String]| {
            let top = first
                .iter()
                .filter_map(|c| c.parse::<f64>().ok())
                .fold(0.0, f64::max);
            rows[1..]
                .iter()
                .flat_map(|r| r.2.iter())
                .filter_map(|c| token_quantity(c).map(|(q, _)| q.value))
                .all(|v| v > top)
        };
        let above_is_header = (0..k)
            .rev()
            .find(|&h| !texts[h].trim().is_empty() && !is_rule(texts[h]))
            .is_some_and(|h| {
                !taken[h] && title(texts[h]).is_none() && header_cells(texts[h], n).is_some()
            });
        if rows.len() >= 2
            && (rows[0]
                .2
                .iter()
                .zip(&rows[1].2)
                .all(|(a, b)| unit_of(a) != unit_of(b))
                || (!above_is_header
                    && !rows[0].1.is_empty()
                    && ascending(&rows[0].2)
                    && below_rest(&rows[0].2)))
        {
            let (h, label, cells) = rows.remove(0);
            notes.retain(|x| x.0 != 0);
            notes.iter_mut().for_each(|x| x.0 -= 1);
            inline_header = Some((h, (Some(label).filter(|l| !l.is_empty()), cells)));
        }
        // the header: the nearest non-blank line above (skipping rules)
        let mut h = k;
        let mut header = None;
        while h > 0 {
            h -= 1;
            let t = texts[h].trim();
            if is_rule(t) {
                continue;
            }
            // a title above a table (`== result (KBps) ==`) is its caption, not its header
            if !t.is_empty() && !taken[h] && !looks_like_prose(texts[h]) && title(t).is_none() {
                if let Some(cols) = pipe_header(texts, taken, h, n) {
                    header = Some((
                        h,
                        (
                            Some(cols[0].clone()).filter(|c| !c.is_empty()),
                            cols[1..].to_vec(),
                        ),
                    ));
                } else if let Some(hc) = header_cells(texts[h], n) {
                    header = Some((h, hc));
                }
            }
            break;
        }
        if inline_header.is_some() {
            header = inline_header;
        }
        // `Average:` above a lone row of bare cells, just below a table with as many
        // columns: that table's summary row
        if header.is_none() && rows.len() == 1 && rows[0].1.is_empty() {
            if let Some((at, label)) = label_above(texts, k) {
                if let Some(prev) = out.last_mut().filter(|p| {
                    p.columns.len() == n
                        && p.rows
                            .last()
                            .is_some_and(|r| (r.0 + 1..at).all(|b| texts[b].trim().is_empty()))
                }) {
                    let (row, _, cells) = rows.remove(0);
                    prev.rows.push((row, label, cells));
                    k = m;
                    continue;
                }
            }
        }
        if header.is_none() && rows.len() < 2 {
            k += 1;
            continue;
        }
        let (hidx, mut axis, mut columns) = match header {
            Some((h, (axis, cols))) => (Some(h), axis, cols),
            None => (None, None, (1..=n).map(|i| format!("column {i}")).collect()),
        };
        // `| kernel | seq | rand |` over `| 6.1 | 512 | 88 |`: a first column of distinct,
        // ascending numbers (versions, thread counts) labels the rows
        let firsts: Vec<f64> = rows
            .iter()
            .filter_map(|r| {
                r.2.first()
                    .and_then(|c| token_quantity(c))
                    .map(|(q, _)| q.value)
            })
            .collect();
        if pipe
            && n >= 3
            && axis.is_none()
            && rows.len() >= 2
            && rows.iter().all(|r| r.1.is_empty())
            && firsts.len() == rows.len()
            && firsts.windows(2).all(|w| w[0] < w[1])
        {
            for r in &mut rows {
                r.1 = r.2.remove(0);
            }
            axis = Some(columns.remove(0));
        }
        let (axis, row_axis) = if columns_are_values(&columns) {
            (axis, None)
        } else {
            (None, axis)
        };
        // a unit line right above the table (its header's or first row's line) or below it
        let top = hidx.unwrap_or(k);
        let near = |from: usize, step: isize| {
            let mut i = from as isize;
            for _ in 0..2 {
                i += step;
                let t = texts.get(usize::try_from(i).ok()?)?;
                if !t.trim().is_empty() {
                    return unit_line(t);
                }
            }
            None
        };
        let last = rows.last().map_or(k, |r| r.0);
        let unit = near(top, -1).or_else(|| near(last, 1));
        out.push(Table {
            header: hidx,
            axis,
            row_axis,
            columns,
            rows,
            notes,
            unit,
        });
        k = m;
    }
    out
}

/// A short label alone on a line above line `k` (blank lines between): `Average:`.
fn label_above(texts: &[&str], k: usize) -> Option<(usize, String)> {
    let at = (0..k).rev().find(|&b| !texts[b].trim().is_empty())?;
    let t = texts[at].trim();
    let label = t.strip_suffix(':')?.trim();
    (!label.is_empty()
        && label.split_whitespace().count() <= 3
        && !label.contains(|c: char| c.is_ascii_digit()))
    .then(|| (at, label.to_string()))
}

/// The unit a table's caption gives its bare cells: `Top 10 times (out of 90) in us:`, `The
/// numbers (fsyncs/s) are:`. Only a caption that introduces the table (ends with `:`).
pub fn caption_unit(title: &str) -> Option<String> {
    let title = title.trim_end();
    if !title.ends_with(':') && super::sections::title(title).is_none() {
        return None;
    }
    let unit = |w: &str| -> Option<String> {
        match suffix_unit(w).or_else(|| word_unit(w)) {
            Some((u, f)) if f == 1.0 && u != "x" => Some(u.to_string()),
            Some(_) => None,
            // a count per second of something the post names: `fsyncs/s`, `creates/sec`
            None => w
                .strip_suffix("/s")
                .or_else(|| w.strip_suffix("/sec"))
                .filter(|n| n.len() > 1 && n.chars().all(|c| c.is_ascii_alphabetic()))
                .map(|_| "/s".to_string()),
        }
    };
    let words: Vec<&str> = title.split_whitespace().collect();
    words.iter().enumerate().find_map(|(i, w)| {
        let core = w.trim_end_matches([':', ',']);
        if let Some(inner) = core.strip_prefix('(').and_then(|c| c.strip_suffix(')')) {
            return unit(inner);
        }
        (i > 0 && words[i - 1].eq_ignore_ascii_case("in"))
            .then(|| unit(core))
            .flatten()
    })
}

/// Rows of a table: one per numeric cell, with its row and column labels as settings.
pub fn table_rows(
    table: &Table,
    line_of: &dyn Fn(usize) -> usize,
    title: &str,
    stated_by: Option<&str>,
) -> Vec<Row> {
    let mut out = Vec::new();
    let col_axis = table.axis.clone().unwrap_or_else(|| "column".into());
    let header_units: Vec<Option<String>> = table
        .columns
        .iter()
        .map(|c| match c.split_once('(') {
            Some((_, r)) => {
                let r = r.trim_end_matches(')').trim();
                suffix_unit(r)
                    .or_else(|| word_unit(r).filter(|u| u.1 == 1.0))
                    .map(|u| u.0.to_string())
            }
            // fs_mark's `FSUse%` and `Files/sec`: the unit is the header's own word
            None if c.ends_with('%') => Some("%".to_string()),
            // `iops` heads a column of counts per second
            None if c.eq_ignore_ascii_case("iops") => Some("IOPS".to_string()),
            None => word_unit(&c.to_ascii_lowercase())
                .filter(|u| c.contains('/') && u.1 == 1.0)
                .map(|u| u.0.to_string()),
        })
        .collect();
    let caption = caption_unit(title).or_else(|| table.unit.clone());
    let row_key = table.row_axis.clone().unwrap_or_else(|| "row".into());
    for (ri, (idx, label, cells)) in table.rows.iter().enumerate() {
        // a cell of text (`Flash`, `SATA`) says of its row's numbers what its column is
        let text_cells: Vec<(String, String)> = cells
            .iter()
            .enumerate()
            .filter(|(_, c)| !pipe_cell(c) && phrase_quantity(c).is_none())
            .map(|(j, c)| (table.columns.get(j).cloned().unwrap_or_default(), c.clone()))
            .collect();
        let notes = table.notes.iter().filter(|n| n.0 == ri);
        let cells_and_notes = cells
            .iter()
            .enumerate()
            .map(|(j, c)| (j, c, None))
            .chain(notes.map(|n| (n.1, &n.2, cells.get(n.1))));
        for (j, cell, of) in cells_and_notes {
            let bare = match of {
                Some(_) => cell.trim_start_matches('(').trim_end_matches(')'),
                None => cell.as_str(),
            };
            // `73+`: at least 73, kept as printed and approximate
            let (bare, plus) = match bare.strip_suffix('+') {
                Some(b) if of.is_none() => (b, true),
                _ => (bare, false),
            };
            let Some((q, tilde)) =
                token_quantity(bare).or_else(|| phrase_quantity(bare).map(|q| (q, false)))
            else {
                continue;
            };
            let tilde = tilde || plus;
            let unit = if q.unit.is_empty() {
                header_units
                    .get(j)
                    .cloned()
                    .flatten()
                    .or_else(|| caption.clone())
                    .unwrap_or_default()
            } else {
                q.unit.clone()
            };
            let mut settings = Vec::new();
            if !label.is_empty() {
                settings.push((row_key.clone(), label.clone()));
            }
            settings.push((
                col_axis.clone(),
                table.columns.get(j).cloned().unwrap_or_default(),
            ));
            // the note printed after a cell (`10.7MB/s (613%)`) says which cell it is on
            if let Some(of) = of {
                settings.push(("of".to_string(), of.clone()));
            }
            settings.extend(text_cells.iter().cloned());
            out.push(Row {
                line: line_of(*idx),
                group: "table".into(),
                quantity: quantity_name(&unit).into(),
                settings,
                value: q.value,
                unit,
                printed: cell.clone(),
                approx: tilde,
                category: Category::Measurement,
                stated_by: stated_by.map(str::to_string),
                note: title.to_string(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captions_give_units() {
        let u = |t: &str| caption_unit(t);
        assert_eq!(u("Top 10 times (out of 90) in us:").as_deref(), Some("us"));
        assert_eq!(u("The numbers (fsyncs/s) are:").as_deref(), Some("/s"));
        assert_eq!(u("Wall time (seconds):").as_deref(), Some("s"));
        assert_eq!(u("Runtime in minutes:").as_deref(), Some("min"));
        // no colon: a sentence, not a caption; `in 2 runs`, `(out of 90)`: no unit
        assert_eq!(u("The numbers (fsyncs/s) are below"), None);
        assert_eq!(u("Results in 2 runs:"), None);
        assert_eq!(u("Wall time (v4 vs v5):"), None);
    }

    #[test]
    fn tables_with_header_and_row_labels() {
        let texts = [
            "rtextsize            8k      16k      32k",
            "zero out:          9.601s  10.229s  11.153s",
            "convert unwritten: 9.710s   9.642s   9.958s",
            "",
            "The test showed that there is no much difference between the two here.",
        ];
        let t = find_tables(&texts, &[false; 5]);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].axis.as_deref(), Some("rtextsize"));
        assert_eq!(t[0].columns, ["8k", "16k", "32k"]);
        let rows = table_rows(&t[0], &|k| k + 10, "t", None);
        assert_eq!(rows.len(), 6);
        assert_eq!(rows[3].line, 12);
        assert_eq!(rows[3].value, 9.710);
        assert_eq!(
            rows[3].settings,
            [
                ("row".to_string(), "convert unwritten".to_string()),
                ("rtextsize".to_string(), "8k".to_string())
            ]
        );
    }

    #[test]
    fn before_after_table_with_units_in_header() {
        let texts = [
            "              before (s)   after (s)",
            "create        12.5         10.0",
            "unlink        3.25         3.5",
        ];
        let t = find_tables(&texts, &[false; 3]);
        let rows = table_rows(&t[0], &|k| k + 1, "", None);
        assert_eq!(rows.len(), 4);
        assert_eq!((rows[0].value, rows[0].unit.as_str()), (12.5, "s"));
        assert_eq!(
            rows[1].settings[1],
            ("column".to_string(), "after (s)".to_string())
        );
    }

    fn one_table(texts: &[&str]) -> (Table, Vec<Row>) {
        let t = find_tables(texts, &vec![false; texts.len()]);
        assert_eq!(t.len(), 1, "{t:#?}");
        let rows = table_rows(&t[0], &|k| k + 1, "", None);
        (t[0].clone(), rows)
    }

    fn setting<'a>(r: &'a Row, k: &str) -> Option<&'a str> {
        r.settings.iter().find(|s| s.0 == k).map(|s| s.1.as_str())
    }

    #[test]
    fn markdown_alignment_row_is_no_header_and_a_unit_line_gives_the_unit() {
        let (t, rows) = one_table(&[
            "| kernel | seq write | rand write |",
            "|:-------|----------:|:----------:|",
            "| 6.1    | 512       | 88         |",
            "| 6.6    | 530       | 97         |",
            "",
            "(The unit is MB/s.)",
        ]);
        assert_eq!(t.header, Some(0));
        assert_eq!(t.columns, ["seq write", "rand write"]);
        assert_eq!(rows.len(), 4);
        assert!(rows.iter().all(|r| r.unit == "MB/s"), "{rows:#?}");
        assert_eq!(setting(&rows[3], "kernel"), Some("6.6"));
        assert_eq!(setting(&rows[3], "column"), Some("rand write"));
        for (line, want) in [
            ("units: ms", Some("ms")),
            ("Unit: IOPS", Some("IOPS")),
            ("all numbers in MB/s", Some("MB/s")),
            ("times are in seconds.", Some("s")),
            ("The unit of work is a file.", None),
            ("we ran it in tmpfs", None),
        ] {
            assert_eq!(unit_line(line).as_deref(), want, "{line}");
        }
        // the unit line above the table
        let (_, rows) = one_table(&["units: ms", "", "fsync   1.5   2.0", "rename  0.5   0.7"]);
        assert!(rows.iter().all(|r| r.unit == "ms"));
    }

    #[test]
    fn pipe_rows_with_text_cells_and_phrases() {
        let (_, rows) = one_table(&[
            "| Disk | Bus | Copy |",
            "|---|---|---|",
            "| WD Red 4TB | SATA | took 41.5 s |",
            "| Samsung 970 | NVMe | took 9 s |",
            "| old stick | USB 2.0 | 1200 files copied |",
        ]);
        assert_eq!(rows.len(), 3, "{rows:#?}");
        assert_eq!((rows[0].value, rows[0].unit.as_str()), (41.5, "s"));
        assert_eq!(setting(&rows[0], "Disk"), Some("WD Red 4TB"));
        assert_eq!(setting(&rows[0], "Bus"), Some("SATA"));
        // `USB 2.0` has no unit: text of the row, not a result
        assert_eq!((rows[2].value, rows[2].unit.as_str()), (1200.0, "files"));
        assert_eq!(setting(&rows[2], "Bus"), Some("USB 2.0"));
    }

    #[test]
    fn a_titled_table_with_its_runs_in_the_first_row() {
        let (t, _) = one_table(&[
            "=== create rate (ops/sec) ===",
            "threads   1     2     8",
            "ext4      1200  2100  5400",
            "xfs       1100  2300  7900",
        ]);
        assert_eq!(t.axis.as_deref(), Some("threads"));
        assert_eq!(t.columns, ["1", "2", "8"]);
        let rows = table_rows(&t, &|k| k + 1, "=== create rate (ops/sec) ===", None);
        assert_eq!(rows.len(), 6);
        assert_eq!(rows[5].unit, "/s");
        assert_eq!(setting(&rows[5], "threads"), Some("8"));
        // a first row like the others is a row, not a header
        let (t, _) = one_table(&["run1  10  20  30", "run2  11  21  31"]);
        assert_eq!(t.rows.len(), 2);
    }
}
