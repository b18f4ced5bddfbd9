//! Block listings in a post, one row per listed range, in the schema of
//! `data/published/001_dir_blocks.csv`: debugfs `stat`/`blocks` lists (`BLOCKS:` /
//! `EXTENTS:` … `TOTAL: N`, read with `crate::parse::debugfs`) and `filefrag -v` tables
//! (read with `crate::parse::filefrag`). A line inside a debugfs list that is not part of
//! it (`..... ad naseum ...`) splits the listing into `head` and `tail`; a listing with
//! nothing elided is `all`. `fs` comes from the sentence above (`on ext3:`).

use super::mail::{Post, PostLine};
use super::output::label_settings;
use crate::parse::map::MapRow;
use crate::parse::{debugfs, filefrag};

/// One listed range (or indirect/tree block) of a block listing.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockRow {
    pub line: usize,
    /// `ext3`, `ext4`, … from the sentence above; empty when it does not say.
    pub fs: String,
    /// `head`, `tail` (around an elision) or `all`.
    pub segment: &'static str,
    /// Position within its segment, from 0.
    pub entry: u64,
    /// `data`, or the metadata block's kind (`IND`, `DIND`, `TIND`, `ETB0`, …).
    pub kind: String,
    pub logical_start: Option<u64>,
    pub logical_end: Option<u64>,
    pub physical_start: Option<u64>,
    pub physical_end: Option<u64>,
    pub length: Option<u64>,
    /// The entry as printed in the post.
    pub printed: String,
    /// Which listing of the post (0, 1, …), and the tool.
    pub listing: usize,
    pub tool: &'static str,
}

fn kind_of(r: &MapRow) -> String {
    if r.has_flag("metadata") {
        r.flags
            .split(',')
            .find(|f| *f != "metadata")
            .unwrap_or("meta")
            .to_ascii_uppercase()
    } else if r.has_flag("hole") {
        "hole".into()
    } else {
        "data".into()
    }
}

/// The entry as debugfs prints it: `(0-4):3950592-3950596`, `(5):3950604`, `(IND):3950899`.
fn debugfs_printed(r: &MapRow) -> String {
    let range = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) if a != b => format!("{a}-{b}"),
        (Some(a), _) => a.to_string(),
        _ => String::new(),
    };
    let logical = if r.has_flag("metadata") {
        kind_of(r)
    } else {
        format!(
            "{}{}",
            range(r.logical_start, r.logical_end),
            r.tool_flags.as_deref().unwrap_or("")
        )
    };
    format!("({logical}):{}", range(r.physical_start, r.physical_end))
}

/// Every block listing of the post. `label(k)`: the sentence above post index `k`.
pub fn listings(post: &Post, label: &dyn Fn(usize) -> String) -> Vec<BlockRow> {
    let lines = &post.lines;
    let mut out = Vec::new();
    let mut listing = 0;
    let mut k = 0;
    while k < lines.len() {
        let t = lines[k].text.trim();
        if t == "BLOCKS:" || t == "EXTENTS:" {
            let mut m = k + 1;
            while m < lines.len()
                && !lines[m].text.trim().is_empty()
                && !lines[m - 1].text.trim().starts_with("TOTAL:")
            {
                m += 1;
            }
            out.extend(debugfs_listing(lines, k, m, listing, &label(k)));
            listing += 1;
            k = m;
        } else if t.starts_with("File size of ") && t.contains(" blocks of ") {
            let mut m = k + 1;
            while m < lines.len() && !lines[m - 1].text.contains(" found") {
                m += 1;
            }
            let rows = filefrag_listing(lines, k, m, listing, &label(k));
            if !rows.is_empty() {
                listing += 1;
            }
            out.extend(rows);
            k = m.max(k + 1);
        } else {
            k += 1;
        }
    }
    out
}

fn fs_of(label: &str) -> String {
    label_settings(label)
        .into_iter()
        .find(|(k, _)| k == "fs")
        .map(|(_, v)| v)
        .unwrap_or_default()
}

fn debugfs_listing(
    lines: &[PostLine],
    k: usize,
    m: usize,
    listing: usize,
    label: &str,
) -> Vec<BlockRow> {
    let text: Vec<&str> = lines[k..m].iter().map(|l| l.text.as_str()).collect();
    let Ok(rep) = debugfs::parse_stat_report(&text.join("\n"), None) else {
        return Vec::new();
    };
    // the first line inside the list that is not part of it: an elision
    let elided = (k + 1..m).find(|&i| {
        let t = lines[i].text.trim();
        !t.is_empty() && !t.starts_with('(') && !t.starts_with(',') && !t.starts_with("TOTAL:")
    });
    let fs = fs_of(label);
    let mut out = Vec::new();
    let mut cursor = k;
    let (mut head, mut tail) = (0, 0);
    for r in &rep.rows {
        let printed = debugfs_printed(r);
        let at = (cursor..m)
            .find(|&i| lines[i].text.contains(&printed))
            .unwrap_or(cursor);
        cursor = at;
        let segment = match elided {
            None => "all",
            Some(e) if at < e => "head",
            Some(_) => "tail",
        };
        let entry = if segment == "tail" {
            &mut tail
        } else {
            &mut head
        };
        out.push(BlockRow {
            line: lines[at].n,
            fs: fs.clone(),
            segment,
            entry: *entry,
            kind: kind_of(r),
            logical_start: r.logical_start,
            logical_end: r.logical_end,
            physical_start: r.physical_start,
            physical_end: r.physical_end,
            length: r.length,
            printed,
            listing,
            tool: "debugfs",
        });
        *entry += 1;
    }
    out
}

fn filefrag_listing(
    lines: &[PostLine],
    k: usize,
    m: usize,
    listing: usize,
    label: &str,
) -> Vec<BlockRow> {
    let text: Vec<&str> = lines[k..m].iter().map(|l| l.text.as_str()).collect();
    let Ok(rep) = filefrag::parse_map(&text.join("\n")) else {
        return Vec::new();
    };
    let fs = fs_of(label);
    let mut out = Vec::new();
    for (entry, r) in rep.rows.iter().enumerate() {
        let at = r
            .ext
            .and_then(|e| {
                let tag = format!("{e}:");
                (k..m).find(|&i| lines[i].text.split_whitespace().next() == Some(tag.as_str()))
            })
            .unwrap_or(k);
        out.push(BlockRow {
            line: lines[at].n,
            fs: fs.clone(),
            segment: "all",
            entry: entry as u64,
            kind: kind_of(r),
            logical_start: r.logical_start,
            logical_end: r.logical_end,
            physical_start: r.physical_start,
            physical_end: r.physical_end,
            length: r.length,
            printed: lines[at].text.trim().to_string(),
            listing,
            tool: "filefrag",
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::listings;
    use crate::import::mail;

    #[test]
    fn debugfs_listing_with_an_elision_and_filefrag() {
        let p = mail::read(
            b"Subject: x\n\nthe dir on ext3:\n\nBLOCKS:\n(0-4):3950592-3950596, (5):3950604, (IND):3950899,\n(6):3950900\n..... ad naseum ...\n(4032):4893557, (4033-4034):4894194-4894195\nTOTAL: 9\n\nand on ext4:\n\nFile size of d is 8192 (2 blocks of 4096 bytes)\n ext:     logical_offset:        physical_offset: length:   expected: flags:\n   0:        0..       1:      34816..     34817:      2:             last,eof\nd: 1 extent found\n",
        )
        .unwrap();
        let rows = listings(&p, &|k| p.lines[k.saturating_sub(2)].text.clone());
        type Seen<'a> = (usize, &'a str, &'a str, u64, &'a str, Option<u64>, &'a str);
        let got: Vec<Seen> = rows
            .iter()
            .map(|r| {
                (
                    r.line,
                    r.fs.as_str(),
                    r.segment,
                    r.entry,
                    r.kind.as_str(),
                    r.length,
                    r.printed.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    6,
                    "ext3",
                    "head",
                    0,
                    "data",
                    Some(5),
                    "(0-4):3950592-3950596"
                ),
                (6, "ext3", "head", 1, "data", Some(1), "(5):3950604"),
                (6, "ext3", "head", 2, "IND", Some(1), "(IND):3950899"),
                (7, "ext3", "head", 3, "data", Some(1), "(6):3950900"),
                (9, "ext3", "tail", 0, "data", Some(1), "(4032):4893557"),
                (
                    9,
                    "ext3",
                    "tail",
                    1,
                    "data",
                    Some(2),
                    "(4033-4034):4894194-4894195"
                ),
                (
                    16,
                    "ext4",
                    "all",
                    0,
                    "data",
                    Some(2),
                    "0:        0..       1:      34816..     34817:      2:             last,eof"
                ),
            ]
        );
        assert_eq!(rows[2].logical_start, None);
        assert_eq!(
            (rows[5].logical_start, rows[5].physical_end),
            (Some(4033), Some(4894195))
        );
    }
}
