//! Tool output pasted into a post, read with fslab's own parsers (`crate::parse`):
//! `time` blocks (labelled by the sentence or the prompt before them), `mkfs.xfs` /
//! `xfs_info` and `mke2fs` / `dumpe2fs` geometry, `e2fsck -tt` passes, debugfs
//! `BLOCKS:` lists, `filefrag` and `fio` JSON (its normal output: `fiojobs`). Each block is cut out of the post, parsed,
//! and its rows mapped back to the post's lines.

use super::mail::{Post, PostLine};
use super::{Category, Row};
use crate::parse::{debugfs, e2fsck, ext, filefrag, fio, summary, time, xfs, GeometryRow};

/// A tool output found in the post: which lines it covers and its rows.
#[derive(Debug, Clone)]
pub struct Found {
    pub tool: &'static str,
    /// First post index of the block.
    pub first: usize,
    pub rows: Vec<Row>,
    /// Post indices it took.
    pub lines: Vec<usize>,
    /// For geometry: the data device size in bytes (blocks × bsize), when printed.
    pub device_bytes: Vec<(String, u64, usize)>,
}

/// The label of the text above post index `k`: the nearest sentence or prompt.
/// Returns (label, is a prompt command, post index).
pub fn label_above(
    lines: &[PostLine],
    k: usize,
    taken: &dyn Fn(usize) -> bool,
    prompt: &dyn Fn(usize) -> bool,
) -> Option<(String, bool, usize)> {
    let mut i = k;
    let mut steps = 0;
    while i > 0 && steps < 60 {
        i -= 1;
        steps += 1;
        let t = lines[i].text.trim();
        if t.is_empty() || t.starts_with("Discarding") {
            continue;
        }
        if prompt(i) {
            return Some((t.to_string(), true, i));
        }
        if taken(i) {
            continue;
        }
        // a sentence: gather the paragraph's last sentence
        let mut j = i;
        let mut parts = vec![t.to_string()];
        while j > 0
            && !lines[j - 1].text.trim().is_empty()
            && !taken(j - 1)
            && !prompt(j - 1)
            && parts.len() < 4
        {
            j -= 1;
            parts.insert(0, lines[j].text.trim().to_string());
        }
        let para = parts.join(" ");
        let last = last_sentence(&para);
        return Some((last, false, i));
    }
    None
}

fn last_sentence(p: &str) -> String {
    let trimmed = p.trim();
    let body = trimmed.trim_end_matches([':', '.']);
    let cut = body.rfind(". ").map_or(0, |i| i + 2);
    trimmed[cut..].trim().to_string()
}

/// Add the label's `key=value` settings to `settings`, except for keys already set.
pub fn add_label_settings(settings: &mut Vec<(String, String)>, label: &str) {
    for (k, v) in label_settings(label) {
        if !settings.iter().any(|s| s.0 == k) {
            settings.push((k, v));
        }
    }
}

/// `key=value` settings named in a label (`the first parent=1 is:` → parent=1).
pub fn label_settings(label: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for w in label.split_whitespace() {
        let w = w.trim_matches(|c: char| matches!(c, ',' | '.' | ':' | '(' | ')' | '"'));
        if w.starts_with('-') {
            continue;
        }
        if let Some((k, v)) = w.split_once('=') {
            if !k.is_empty()
                && !v.is_empty()
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                out.push((k.to_string(), v.to_string()));
            }
        }
    }
    for fs in [
        "ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "bcachefs", "tmpfs",
    ] {
        if label
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| w == fs)
            && !out.iter().any(|(k, _)| k == "fs")
        {
            out.push(("fs".into(), fs.into()));
        }
    }
    out
}

/// Every `time` block: rows real/user/sys with the label before the block, a `run`
/// numbered within the label, and `settings_at(k)` (the prompt invocation above).
pub fn time_rows(
    post: &Post,
    is_cmd: &[bool],
    settings_at: &dyn Fn(usize) -> Vec<(String, String)>,
) -> Vec<Found> {
    // `real 0m3.696s *************** so fast...`: the author's words after a time are not
    // the parser's
    let text: String = post
        .lines
        .iter()
        .map(|l| match time_words(&l.text) {
            Some((k, v)) => format!("{k} {v}\n"),
            None => format!("{}\n", l.text),
        })
        .collect();
    let Ok(out) = time::parse(&text) else {
        return Vec::new();
    };
    let lines = &post.lines;
    let mut found = Vec::new();
    let mut last_label: Option<String> = None;
    let mut run = 0;
    let mut prev_end = usize::MAX;
    let time_line = |i: usize| is_time_line(&lines[i].text);
    for row in &out.rows {
        let start = (row.line as usize).saturating_sub(1);
        if start >= lines.len() {
            continue;
        }
        // the block's own lines (real/user/sys or GNU lines)
        let mut taken = Vec::new();
        let mut printed: Vec<(&'static str, String, usize)> = Vec::new();
        let mut m = start;
        while m < lines.len() && m < start + 25 {
            let t = lines[m].text.trim();
            if t.is_empty() && !taken.is_empty() && row.format != "gnu-verbose" {
                break;
            }
            let mut parts = t.split_whitespace();
            let words = time_words(t).map(|(k, v)| (Some(k), Some(v), None));
            match words.unwrap_or((parts.next(), parts.next(), parts.next())) {
                (Some(k @ ("real" | "user" | "sys")), Some(v), None) => {
                    if printed.iter().any(|p| p.0 == k) {
                        break;
                    }
                    let name = match k {
                        "real" => "real_time",
                        "user" => "user_time",
                        _ => "sys_time",
                    };
                    printed.push((name, v.to_string(), m));
                }
                _ if row.format.starts_with("gnu") => {}
                // star's one line, `53:10.490r 1.020u 1:29.420s 3%`
                _ if row.format == "schily" && m == start => {}
                _ => break,
            }
            taken.push(m);
            m += 1;
            if printed.len() == 3 {
                break;
            }
        }
        // consecutive blocks (only blanks between) share a label
        let contiguous = prev_end != usize::MAX
            && (prev_end..start).all(|i| lines[i].text.trim().is_empty() || time_line(i));
        prev_end = m;
        let is_taken = |i: usize| {
            time_line(i)
                || lines[i].text.trim().starts_with("Discarding")
                || geometry_line(&lines[i].text)
                || summary::is_furniture(&lines[i].text)
                || !summary::parse(&lines[i].text).is_empty()
        };
        let prompt =
            |i: usize| is_cmd[i] && super::commands::after_prompt(&lines[i].text).is_some();
        if !contiguous || last_label.is_none() {
            let label = label_above(lines, start, &is_taken, &prompt)
                .map(|(l, _, _)| l)
                .unwrap_or_default();
            last_label = Some(label);
            run = 0;
        }
        run += 1;
        let label = last_label.clone().unwrap_or_default();
        let mut settings = settings_at(start);
        add_label_settings(&mut settings, &label);
        settings.push(("run".into(), run.to_string()));
        let stated_by = lines[start].quoted_author.clone();
        let mut rows = Vec::new();
        let values = [
            ("real_time", row.real_s, "s"),
            ("user_time", row.user_s, "s"),
            ("sys_time", row.sys_s, "s"),
            ("cpu_share", row.cpu_percent, "%"),
            ("max_rss", row.max_rss_kb.map(|k| k as f64), "KB"),
        ];
        for (name, v, unit) in values {
            let Some(v) = v else { continue };
            let (p, k) = printed
                .iter()
                .find(|p| p.0 == name)
                .map(|p| (p.1.clone(), p.2))
                .unwrap_or_else(|| (lines[start].text.trim().to_string(), start));
            rows.push(Row {
                line: lines[k].n,
                group: "time".into(),
                quantity: name.into(),
                settings: settings.clone(),
                value: v,
                unit: unit.into(),
                printed: p,
                approx: false,
                category: Category::Measurement,
                stated_by: stated_by.clone(),
                note: if label.is_empty() {
                    "a `time` block".into()
                } else {
                    label.clone()
                },
            });
        }
        found.push(Found {
            tool: "time",
            first: start,
            rows,
            lines: taken,
            device_bytes: Vec::new(),
        });
    }
    found
}

/// The summaries dd, dbench and hdparm print (`crate::parse::summary`), one [`Found`] per
/// block of them (dbench's table and its `Throughput` line, with the lines between): each
/// number with its unit, named by its line (`WriteX`, `Timing cached reads`, the text
/// before it: `2.6.27-rc8:`), and by the command right above that printed it
/// (`dd … conv=fdatasync`, `dbench -D /xfs 32`).
pub fn summary_rows(post: &Post, is_cmd: &[bool]) -> Vec<Found> {
    let lines = &post.lines;
    let mut found: Vec<Found> = Vec::new();
    for r in summary::parse(&post.body_text()) {
        let k = r.line - 1;
        let gap = |a: usize| {
            (a + 1..k).all(|i| {
                let t = lines[i].text.trim();
                t.is_empty() || t == "..." || summary::is_furniture(t)
            })
        };
        let joins = found
            .last()
            .is_some_and(|f| f.tool == r.tool && f.lines.last().is_some_and(|&a| a == k || gap(a)));
        if !joins {
            found.push(Found {
                tool: r.tool,
                first: k,
                rows: Vec::new(),
                lines: Vec::new(),
                device_bytes: Vec::new(),
            });
        }
        let f = found.last_mut().expect("pushed above");
        if f.lines.last() != Some(&k) {
            let from = f.lines.last().map_or(k, |a| a + 1);
            f.lines.extend(from..=k);
        }
        let mut settings = r.settings.clone();
        for (key, v) in [("row", &r.name), ("label", &r.prefix)] {
            if !v.is_empty() {
                settings.push((key.into(), v.clone()));
            }
        }
        f.rows.push(Row {
            line: lines[k].n,
            group: r.tool.into(),
            quantity: format!("{}_{}", r.tool, r.quantity),
            settings,
            value: r.value,
            unit: r.unit.clone(),
            printed: r.printed.clone(),
            approx: false,
            category: Category::Measurement,
            stated_by: lines[k].quoted_author.clone(),
            note: lines[k].text.trim().to_string(),
        });
    }
    // the command that printed a block: the nearest line above past dd's own lines
    for f in &mut found {
        if let Some(cmd) = command_above(lines, f.first, is_cmd) {
            for r in &mut f.rows {
                add_command(&mut r.settings, &cmd);
            }
        }
    }
    found
}

/// The command on the nearest line above post index `first` (blank lines, a code
/// fence and a tool's furniture between), as run (its prompt taken off): the command
/// that printed what starts at `first`.
pub fn command_above(lines: &[PostLine], first: usize, is_cmd: &[bool]) -> Option<String> {
    let mut i = first;
    while i > 0 && first - i < 4 {
        i -= 1;
        let t = lines[i].text.trim();
        if t.is_empty() || summary::is_furniture(t) || t.starts_with("```") {
            continue;
        }
        return is_cmd[i].then(|| super::commands::after_prompt(t).unwrap_or(t).to_string());
    }
    None
}

/// A row's settings from the command that printed it: its `key=value` words and the
/// filesystem it names (`label_settings`), and `command`.
pub fn add_command(settings: &mut Vec<(String, String)>, cmd: &str) {
    add_label_settings(settings, cmd);
    if !settings.iter().any(|(k, _)| k == "command") {
        settings.push(("command".into(), cmd.to_string()));
    }
}

/// `real 0m1.2s` / `user …` / `sys …` (and `time -p`'s `real 1.20`).
pub fn is_time_line(t: &str) -> bool {
    time_words(t).is_some()
}

/// `real 1m3.501s`, also with the author's words after it (`real 0m3.696s ****** so
/// fast...`, after a space): the key and the time as printed.
fn time_words(t: &str) -> Option<(&str, &str)> {
    let mut p = t.split_whitespace();
    let (k, v) = (p.next()?, p.next()?);
    let time = v.starts_with(|c: char| c.is_ascii_digit())
        && v.ends_with('s')
        && v[..v.len() - 1]
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'm' | 'h' | ','));
    let plain = p.next().is_none() && v.starts_with(|c: char| c.is_ascii_digit());
    (matches!(k, "real" | "user" | "sys") && (time || plain)).then_some((k, v))
}

const XFS_SECTIONS: [&str; 5] = ["meta-data", "data", "naming", "log", "realtime"];

fn geometry_line(t: &str) -> bool {
    let s = t.trim_start();
    if let Some((head, _)) = s.split_once('=') {
        let h = head.trim();
        return XFS_SECTIONS.contains(&h) || (h.is_empty() && t.starts_with(' '));
    }
    false
}

fn xfs_unit(g: &GeometryRow) -> String {
    match (g.key.as_str(), g.unit.as_deref()) {
        ("imaxpct", _) => "%".into(),
        (_, Some("blks") | Some("blocks")) => "blocks".into(),
        (_, Some(u)) => u.to_string(),
        _ => String::new(),
    }
}

/// `mkfs.xfs` / `xfs_info` output blocks.
pub fn xfs_geometry(
    post: &Post,
    settings_at: &dyn Fn(usize) -> Vec<(String, String)>,
) -> Vec<Found> {
    let lines = &post.lines;
    let mut found = Vec::new();
    let mut k = 0;
    while k < lines.len() {
        if !lines[k].text.trim_start().starts_with("meta-data=") {
            k += 1;
            continue;
        }
        let mut m = k + 1;
        // (a mailer that wraps at 72 columns leaves `blks` alone on the next line)
        let wrapped = |t: &str| t.trim() == "blks";
        while m < lines.len() && (geometry_line(&lines[m].text) || wrapped(&lines[m].text)) {
            m += 1;
        }
        let block: Vec<&str> = lines[k..m].iter().map(|l| l.text.as_str()).collect();
        let text = block.iter().fold(String::new(), |mut acc, t| {
            if !acc.is_empty() {
                acc.push(if wrapped(t) { ' ' } else { '\n' });
            }
            acc.push_str(t.trim_end());
            acc
        });
        let Ok(out) = xfs::parse(&text) else {
            k = m;
            continue;
        };
        let settings = settings_at(k);
        let mut rows = Vec::new();
        // which block line holds `key=value` of each section
        let mut section_of = Vec::new();
        let mut cur = "";
        for t in &block {
            if let Some((h, _)) = t.split_once('=') {
                let h = h.trim();
                if XFS_SECTIONS.contains(&h) {
                    cur = XFS_SECTIONS
                        .iter()
                        .find(|s| **s == h)
                        .copied()
                        .unwrap_or("");
                }
            }
            section_of.push(cur);
        }
        let mut data_bsize = None;
        let mut data_blocks = None;
        let mut rt_blocks = None;
        for g in &out.rows {
            let Some(number) = g.number else { continue };
            match (g.section.as_str(), g.key.as_str()) {
                ("data", "bsize") => data_bsize = Some(number),
                ("data", "blocks") => data_blocks = Some((number, 0)),
                ("realtime", "blocks") => rt_blocks = Some(number),
                _ => {}
            }
            let (needle, alt) = (
                format!("{}={}", g.key, g.value),
                format!("{} {}", g.key, g.value),
            );
            let hit = block.iter().enumerate().find(|(i, t)| {
                section_of[*i] == g.section && (t.contains(&needle) || t.contains(&alt))
            });
            let (i, printed) = match hit {
                Some((i, t)) if t.contains(&needle) => (i, needle.clone()),
                Some((i, _)) => (i, alt.clone()),
                None => (0, needle.clone()),
            };
            if g.section == "data" && g.key == "blocks" {
                data_blocks = Some((number, k + i));
            }
            rows.push(Row {
                line: lines[k + i].n,
                group: "geometry".into(),
                quantity: format!("{}.{}", g.section, g.key),
                settings: settings.clone(),
                value: number,
                unit: xfs_unit(g),
                printed,
                approx: false,
                category: Category::Geometry,
                stated_by: lines[k].quoted_author.clone(),
                note: "mkfs.xfs/xfs_info output".into(),
            });
        }
        let mut device_bytes = Vec::new();
        if let (Some(bs), Some((blocks, at))) = (data_bsize, data_blocks) {
            device_bytes.push(("data".to_string(), (bs * blocks) as u64, lines[at].n));
        }
        if let (Some(bs), Some(rt)) = (data_bsize, rt_blocks) {
            if rt > 0.0 {
                device_bytes.push(("rt".to_string(), (bs * rt) as u64, lines[k].n));
            }
        }
        found.push(Found {
            tool: "mkfs.xfs",
            first: k,
            rows,
            lines: (k..m).collect(),
            device_bytes,
        });
        k = m;
    }
    found
}

/// `mke2fs` and `dumpe2fs -h` output blocks.
pub fn ext_geometry(
    post: &Post,
    settings_at: &dyn Fn(usize) -> Vec<(String, String)>,
) -> Vec<Found> {
    let lines = &post.lines;
    let mut found = Vec::new();
    let mut k = 0;
    while k < lines.len() {
        let t = lines[k].text.trim();
        let dumpe2fs = t.starts_with("Filesystem volume name:");
        let mke2fs = t.starts_with("Creating filesystem with ")
            || (t.starts_with("mke2fs ") && t.contains('('));
        if !dumpe2fs && !mke2fs {
            k += 1;
            continue;
        }
        let mut m = k + 1;
        let mut blanks = 0;
        while m < lines.len() {
            let t = lines[m].text.trim();
            if t.is_empty() {
                blanks += 1;
                if blanks > 1 || dumpe2fs {
                    break;
                }
            } else {
                blanks = 0;
                if super::rowlabels::looks_like_prose(t) {
                    break;
                }
            }
            m += 1;
        }
        let text: Vec<&str> = lines[k..m].iter().map(|l| l.text.as_str()).collect();
        let parsed = if dumpe2fs {
            ext::parse_dumpe2fs(&text.join("\n"))
        } else {
            ext::parse_mke2fs(&text.join("\n"))
        };
        if let Ok(out) = parsed {
            let settings = settings_at(k);
            let rows = out
                .rows
                .iter()
                .filter_map(|g| {
                    let number = g.number?;
                    let i = text.iter().position(|t| t.contains(&g.value)).unwrap_or(0);
                    Some(Row {
                        line: lines[k + i].n,
                        group: "geometry".into(),
                        quantity: format!("{}.{}", g.section, g.key),
                        settings: settings.clone(),
                        value: number,
                        unit: g.unit.clone().unwrap_or_default(),
                        printed: g.value.clone(),
                        approx: false,
                        category: Category::Geometry,
                        stated_by: lines[k].quoted_author.clone(),
                        note: if dumpe2fs {
                            "dumpe2fs output".into()
                        } else {
                            "mke2fs output".into()
                        },
                    })
                })
                .collect();
            found.push(Found {
                tool: if dumpe2fs { "dumpe2fs" } else { "mke2fs" },
                first: k,
                rows,
                lines: (k..m).collect(),
                device_bytes: Vec::new(),
            });
        }
        k = m.max(k + 1);
    }
    found
}

/// debugfs `BLOCKS:` / `EXTENTS:` lists up to `TOTAL: N`.
pub fn debugfs_blocks(post: &Post, label: &dyn Fn(usize) -> String) -> Vec<Found> {
    let lines = &post.lines;
    let mut found = Vec::new();
    let mut k = 0;
    while k < lines.len() {
        let t = lines[k].text.trim();
        if t != "BLOCKS:" && t != "EXTENTS:" {
            k += 1;
            continue;
        }
        let mut m = k + 1;
        while m < lines.len()
            && !lines[m].text.trim().is_empty()
            && !lines[m - 1].text.trim().starts_with("TOTAL:")
        {
            m += 1;
        }
        let text: Vec<&str> = lines[k..m].iter().map(|l| l.text.as_str()).collect();
        let mut rows = Vec::new();
        if let Ok(rep) = debugfs::parse_stat_report(&text.join("\n"), None) {
            let note = label(k);
            let settings = label_settings(&note);
            for st in &rep.inodes {
                if let Some(total) = st.total_blocks {
                    let i = text
                        .iter()
                        .rposition(|t| t.trim().starts_with("TOTAL:"))
                        .unwrap_or(0);
                    rows.push(Row {
                        line: lines[k + i].n,
                        group: "blocks".into(),
                        quantity: "total_blocks".into(),
                        settings: settings.clone(),
                        value: total as f64,
                        unit: "blocks".into(),
                        printed: text[i].trim().to_string(),
                        approx: false,
                        category: Category::Measurement,
                        stated_by: lines[k].quoted_author.clone(),
                        note: note.clone(),
                    });
                }
                rows.push(Row {
                    line: lines[k].n,
                    group: "blocks".into(),
                    quantity: "data_extents_listed".into(),
                    settings: settings.clone(),
                    value: st.data_extents as f64,
                    unit: "extents".into(),
                    printed: text[0].trim().to_string(),
                    approx: false,
                    category: Category::Measurement,
                    stated_by: lines[k].quoted_author.clone(),
                    note: format!("{note} (counted by the importer from the listed ranges)"),
                });
            }
        }
        found.push(Found {
            tool: "debugfs",
            first: k,
            rows,
            lines: (k..m).collect(),
            device_bytes: Vec::new(),
        });
        k = m;
    }
    found
}

/// `e2fsck -tt` statistics: one block from the first `Pass 1` line to the last line that
/// e2fsck prints.
pub fn e2fsck_passes(post: &Post) -> Vec<Found> {
    let lines = &post.lines;
    let Some(k) = lines
        .iter()
        .position(|l| l.text.trim_start().starts_with("Pass 1"))
    else {
        return Vec::new();
    };
    let mut m = k;
    while m < lines.len() {
        let t = lines[m].text.trim();
        let e2 = t.starts_with("Pass ")
            || t.starts_with("Peak memory")
            || t.starts_with("Memory used")
            || t.starts_with("I/O read")
            || t.contains(" files (")
            || t.starts_with("*****")
            || t.starts_with("e2fsck ");
        if !e2 && !t.is_empty() {
            break;
        }
        m += 1;
    }
    let text: Vec<&str> = lines[k..m].iter().map(|l| l.text.as_str()).collect();
    let Ok(out) = e2fsck::parse(&text.join("\n")) else {
        return Vec::new();
    };
    let mut rows = Vec::new();
    for r in &out.rows {
        let tag = r
            .pass
            .clone()
            .map_or_else(|| r.kind.clone(), |p| format!("pass{p}"));
        let needle = r
            .pass
            .as_ref()
            .map(|p| format!("Pass {p}: Memory"))
            .unwrap_or_else(|| "Memory used".into());
        let i = text.iter().position(|t| t.contains(&needle)).unwrap_or(0);
        for (name, v) in [
            ("real_time", r.real_s),
            ("user_time", r.user_s),
            ("sys_time", r.sys_s),
        ] {
            if let Some(v) = v {
                rows.push(Row {
                    line: lines[k + i].n,
                    group: "fsck".into(),
                    quantity: format!("{tag}.{name}"),
                    settings: Vec::new(),
                    value: v,
                    unit: "s".into(),
                    printed: text[i].trim().to_string(),
                    approx: false,
                    category: Category::Measurement,
                    stated_by: lines[k].quoted_author.clone(),
                    note: "e2fsck -tt".into(),
                });
            }
        }
    }
    vec![Found {
        tool: "e2fsck",
        first: k,
        rows,
        lines: (k..m).collect(),
        device_bytes: Vec::new(),
    }]
}

/// `filefrag` lines (`FILE: N extents found`).
pub fn filefrag_lines(post: &Post) -> Vec<Found> {
    let lines = &post.lines;
    let mut found = Vec::new();
    for (k, l) in lines.iter().enumerate() {
        let t = l.text.trim();
        if !(t.ends_with(" extents found") || t.ends_with(" extent found")) {
            continue;
        }
        let Ok(out) = filefrag::parse_files(t) else {
            continue;
        };
        let rows = out
            .rows
            .iter()
            .filter_map(|f| {
                Some(Row {
                    line: l.n,
                    group: "filefrag".into(),
                    quantity: "extents_found".into(),
                    settings: vec![("file".into(), f.path.clone())],
                    value: f.extents_found? as f64,
                    unit: "extents".into(),
                    printed: t.to_string(),
                    approx: false,
                    category: Category::Measurement,
                    stated_by: l.quoted_author.clone(),
                    note: "filefrag".into(),
                })
            })
            .collect();
        found.push(Found {
            tool: "filefrag",
            first: k,
            rows,
            lines: vec![k],
            device_bytes: Vec::new(),
        });
    }
    found
}

/// `fio --output-format=json` pasted into the post.
pub fn fio_json(post: &Post) -> Vec<Found> {
    let lines = &post.lines;
    let mut found = Vec::new();
    let mut k = 0;
    while k < lines.len() {
        if lines[k].text.trim() != "{"
            || !lines
                .get(k + 1)
                .is_some_and(|l| l.text.contains("\"fio version\""))
        {
            k += 1;
            continue;
        }
        let mut depth = 0i32;
        let mut m = k;
        while m < lines.len() {
            depth += lines[m].text.matches('{').count() as i32
                - lines[m].text.matches('}').count() as i32;
            m += 1;
            if depth <= 0 {
                break;
            }
        }
        let text: Vec<&str> = lines[k..m].iter().map(|l| l.text.as_str()).collect();
        let mut rows = Vec::new();
        if let Ok(out) = fio::parse_json(&text.join("\n")) {
            for r in &out.rows {
                let settings = vec![
                    ("job".to_string(), r.jobname.clone()),
                    ("direction".to_string(), r.direction.clone()),
                ];
                for (q, v, u) in [
                    ("iops", r.iops, "IOPS"),
                    ("bandwidth", r.bw_bytes_per_s, "bytes/s"),
                ] {
                    rows.push(Row {
                        line: lines[k].n,
                        group: "fio".into(),
                        quantity: q.into(),
                        settings: settings.clone(),
                        value: v,
                        unit: u.into(),
                        printed: format!("{v}"),
                        approx: false,
                        category: Category::Measurement,
                        stated_by: lines[k].quoted_author.clone(),
                        note: "fio JSON output".into(),
                    });
                }
            }
        }
        found.push(Found {
            tool: "fio",
            first: k,
            rows,
            lines: (k..m).collect(),
            device_bytes: Vec::new(),
        });
        k = m;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::mail;

    fn post(s: &str) -> Post {
        mail::read(s.as_bytes()).unwrap()
    }

    #[test]
    fn time_blocks_are_labelled_by_the_sentence_before() {
        let p = post("Subject: x\n\nUnpatched, no CRCs:\n\nreal    0m18.807s\nuser    0m2.169s\nsys     1m4.441s\n\nreal    0m13.8s\nuser    0m2.0s\nsys     0m34.0s\n\nWith dtype support patched in, the first parent=1 is:\n\nreal 0m1.0s\nuser 0m0.5s\nsys 0m0.2s\n");
        let f = time_rows(&p, &vec![false; p.lines.len()], &|_| Vec::new());
        assert_eq!(f.len(), 3);
        let r = &f[0].rows;
        assert_eq!(
            (r[0].line, r[0].printed.as_str(), r[0].value),
            (5, "0m18.807s", 18.807)
        );
        assert_eq!((r[2].line, r[2].value), (7, 64.441));
        assert_eq!(r[0].note, "Unpatched, no CRCs:");
        assert_eq!(
            f[1].rows[0].settings,
            [("run".to_string(), "2".to_string())]
        );
        assert_eq!(
            f[2].rows[0].note,
            "With dtype support patched in, the first parent=1 is:"
        );
        assert_eq!(
            f[2].rows[0].settings,
            [
                ("parent".to_string(), "1".to_string()),
                ("run".to_string(), "1".to_string())
            ]
        );
    }

    #[test]
    fn xfs_geometry_rows_and_device_size() {
        let p = post("Subject: x\n\n# mkfs.xfs -f /dev/sdb\nmeta-data=/dev/sdb               isize=512    agcount=4, agsize=1298176 blks\n         =                       sectsz=512   attr=2, projid32bit=1\ndata     =                       bsize=4096   blocks=5192704, imaxpct=25\n         =                       sunit=0      swidth=0 blks\nnaming   =version 2              bsize=4096   ascii-ci=0, ftype=1\nlog      =internal log           bsize=4096   blocks=16384, version=2\nrealtime =none                   extsz=4096   blocks=0, rtextents=0\n");
        let f = xfs_geometry(&p, &|_| Vec::new());
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].device_bytes, [("data".to_string(), 5192704 * 4096, 6)]);
        let agsize = f[0]
            .rows
            .iter()
            .find(|r| r.quantity == "meta-data.agsize")
            .unwrap();
        assert_eq!(
            (agsize.line, agsize.unit.as_str(), agsize.printed.as_str()),
            (4, "blocks", "agsize=1298176")
        );
        let v = f[0]
            .rows
            .iter()
            .find(|r| r.quantity == "naming.version")
            .unwrap();
        assert_eq!(v.printed, "version 2");
        let imax = f[0]
            .rows
            .iter()
            .find(|r| r.quantity == "data.imaxpct")
            .unwrap();
        assert_eq!(imax.unit, "%");
    }

    #[test]
    fn debugfs_block_list_total() {
        let p = post("Subject: x\n\nthe largest dir looked like this on ext3:\n\nBLOCKS:\n(0-4):3950592-3950596, (5):3950604, (IND):3950899\nTOTAL: 7\n");
        let f = debugfs_blocks(&p, &|_| "on ext3".into());
        let total = f[0]
            .rows
            .iter()
            .find(|r| r.quantity == "total_blocks")
            .unwrap();
        assert_eq!(
            (total.value, total.line, total.printed.as_str()),
            (7.0, 7, "TOTAL: 7")
        );
        assert_eq!(total.settings, [("fs".to_string(), "ext3".to_string())]);
    }
}
