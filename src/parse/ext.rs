//! ext2/3/4 geometry as `mke2fs` and `dumpe2fs -h` print it, into long-format
//! [`GeometryRow`]s.
//!
//! Keys are the printed labels in snake case (`Inode count:` → `inode_count`,
//! `Filesystem revision #:` → `filesystem_revision`). `mke2fs` lines that say the same
//! thing as a `dumpe2fs` label use the `dumpe2fs` key, so both join on `key`:
//!
//! | mke2fs line | keys (section `mke2fs`) |
//! |---|---|
//! | `mke2fs 1.47.0 (5-Feb-2023)` | `version` |
//! | `fs_types for mke2fs.conf resolution: 'ext4'` | `fs_types` |
//! | `Creating filesystem with 524288 4k blocks and 131072 inodes` | `block_count`, `block_size`, `inode_count` |
//! | `Filesystem UUID: …` | `filesystem_uuid` |
//! | `Superblock backups stored on blocks:` + the indented list | `superblock_backups` (the list, `, `-separated), `superblock_backup_count` |
//! | `Creating journal (16384 blocks): done` | `journal_blocks` |
//! | `-v`: `Filesystem label=` · `OS type:` | `filesystem_volume_name` · `filesystem_os_type` |
//! | `-v`: `Block size=4096 (log=2)`, `Cluster size=`, `Fragment size=` | `block_size`, `cluster_size`, `fragment_size` |
//! | `-v`: `Stride=0 blocks, Stripe width=0 blocks` | `raid_stride`, `raid_stripe_width` |
//! | `-v`: `131072 inodes, 524288 blocks` | `inode_count`, `block_count` |
//! | `-v`: `26214 blocks (5.00%) reserved for the super user` | `reserved_block_count`, `reserved_block_percent` |
//! | `-v`: `First data block=0` · `Maximum filesystem blocks=…` | `first_block` · `maximum_filesystem_blocks` |
//! | `-v`: `16 block groups` | `block_groups` |
//! | `-v`: `32768 blocks per group, 32768 fragments per group` (or `clusters per group`) | `blocks_per_group`, `fragments_per_group` / `clusters_per_group` |
//! | `-v`: `8192 inodes per group` | `inodes_per_group` |
//!
//! Progress output is reduced to what a terminal shows (every backspace erases the
//! character before it), and the `…: done` phase lines are skipped. The output counts
//! as complete once `Writing superblocks and filesystem accounting information: done`
//! is seen; without it the rows come with `partial = true`.
//!
//! `dumpe2fs -h`: every `Label: value` line becomes a row in section `superblock`; the
//! tool's version line a row `dumpe2fs`/`version`. `Filesystem features` (and `Journal
//! features`) give one row with the space-separated list as printed, plus one row per
//! feature, key `feature:<name>` (`journal_feature:<name>`), value `1`. One row is
//! derived rather than printed: `block_groups` = ⌈(`block_count` − `first_block`) /
//! `blocks_per_group`⌉, the group count mke2fs prints. The header counts as complete
//! when it has `inode_count`, `block_count`, `block_size`, `blocks_per_group`,
//! `inodes_per_group` and `inode_size`, and the journal lines if it names a `Journal
//! inode`; otherwise `partial = true`. Group descriptors (dumpe2fs without `-h`) are not
//! parsed: one warning counts them.
//!
//! `number` is the value's leading number (decimal, or hex `0x…`): `1 (dynamic)` → 1,
//! `64M` → 64. `unit` is a printed unit (`kB`, `M`, `blocks`, `%`) or, for known keys,
//! the documented one: `bytes` (block/cluster/fragment/inode/descriptor sizes, extra
//! isize), `blocks` (block counts, per-group blocks, journal blocks and lengths, RAID
//! stride and width), `clusters`, `fragments`, `groups` (`flex_block_group_size`,
//! `block_groups`), `s` (`check_interval`). `bytes` is filled for `bytes`, `blocks`
//! (× block size), `clusters` (× cluster size, else block size), `fragments` (×
//! fragment size) and size suffixes (`k`/`kB` = 1024, `M`, `G`, `T`).

use super::text::{apply_backspaces, numbered, parse_f64, parse_hex, parse_u64, snake, warning};
use super::{GeometryRow, Kind, Output, ParseError};

/// Parse `mke2fs` (`kind` = [`Kind::Mke2fs`]) or `dumpe2fs -h` ([`Kind::Dumpe2fs`]) output.
pub fn parse(kind: Kind, text: &str) -> Result<Output<GeometryRow>, ParseError> {
    match kind {
        Kind::Mke2fs => parse_mke2fs(text),
        Kind::Dumpe2fs => parse_dumpe2fs(text),
        other => Err(ParseError::UnknownKind {
            given: other.name().to_string(),
            known: "mke2fs, dumpe2fs".to_string(),
        }),
    }
}

const MKE2FS: &str = "mke2fs";
const SUPERBLOCK: &str = "superblock";

/// `mke2fs` output.
pub fn parse_mke2fs(text: &str) -> Result<Output<GeometryRow>, ParseError> {
    let mut out = Output::default();
    let mut first_text: Option<(usize, String)> = None;
    let mut backups: Option<Vec<String>> = None;
    let mut finished = false;
    let mut started = false;

    for (n, raw) in numbered(text) {
        let shown = apply_backspaces(raw);
        let line = shown.trim();
        if let Some(list) = backups.as_mut() {
            if !line.is_empty() && raw.starts_with([' ', '\t']) {
                list.extend(
                    line.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(str::to_string),
                );
                if line
                    .split(',')
                    .map(str::trim)
                    .any(|s| !s.is_empty() && parse_f64(s).is_none())
                {
                    out.warnings
                        .push(warning(n, raw, "not a block number in the backup list"));
                }
                continue;
            }
            let list = std::mem::take(list);
            backups = None;
            push_backups(&mut out, &list);
        }
        if line.is_empty() {
            continue;
        }
        let parsed = mke2fs_line(line);
        if first_text.is_none() && !matches!(parsed, Some(Mke2fsLine::Version(_))) {
            first_text = Some((n, line.to_string()));
        }
        match parsed {
            Some(Mke2fsLine::Rows(rows)) => {
                started = true;
                for (key, value) in rows {
                    push(&mut out, MKE2FS, &key, &value);
                }
            }
            Some(Mke2fsLine::Version(v)) => push(&mut out, MKE2FS, "version", &v),
            Some(Mke2fsLine::BackupList) => {
                started = true;
                backups = Some(Vec::new());
            }
            Some(Mke2fsLine::Done) => {}
            Some(Mke2fsLine::Finished) => finished = true,
            Some(Mke2fsLine::Unfinished) => {
                out.warnings
                    .push(warning(n, raw, "progress line without `done`"))
            }
            None => out
                .warnings
                .push(warning(n, raw, "not a line of mke2fs output")),
        }
    }
    if let Some(list) = backups {
        push_backups(&mut out, &list);
    }
    if !started {
        return Err(nothing(
            MKE2FS,
            first_text,
            "`Creating filesystem with …` or `mke2fs -v` lines",
        ));
    }
    out.partial = !finished;
    fill_bytes(&mut out.rows);
    Ok(out)
}

enum Mke2fsLine {
    Rows(Vec<(String, String)>),
    Version(String),
    BackupList,
    Done,
    Finished,
    Unfinished,
}

fn kv(key: &str, value: impl Into<String>) -> (String, String) {
    (key.to_string(), value.into())
}

fn mke2fs_line(line: &str) -> Option<Mke2fsLine> {
    use Mke2fsLine::*;
    if let Some(rest) = line.strip_prefix("mke2fs ") {
        if rest.ends_with(')') {
            let v = rest.split_whitespace().next().unwrap_or("");
            return Some(Version(v.to_string()));
        }
    }
    if let Some(rest) = line.strip_prefix("fs_types for mke2fs.conf resolution:") {
        let types: Vec<&str> = rest
            .split(',')
            .map(|t| t.trim().trim_matches('\''))
            .filter(|t| !t.is_empty())
            .collect();
        return Some(Rows(vec![kv("fs_types", types.join(", "))]));
    }
    if line.starts_with("Superblock backups stored on blocks:") {
        return Some(BackupList);
    }
    if let Some(rest) = line.strip_prefix("Creating journal (") {
        let n = rest.split_whitespace().next()?;
        parse_f64(n)?;
        return Some(Rows(vec![kv("journal_blocks", n)]));
    }
    if let Some(rest) = line.strip_prefix("Creating filesystem with ") {
        // `524288 4k blocks and 131072 inodes`
        let t: Vec<&str> = rest.split_whitespace().collect();
        if let [blocks, size, "blocks", "and", inodes, "inodes"] = t.as_slice() {
            let bytes = size
                .strip_suffix('k')
                .and_then(|k| k.parse::<u64>().ok())
                .and_then(|k| k.checked_mul(1024))?;
            return Some(Rows(vec![
                kv("block_count", *blocks),
                kv("block_size", bytes.to_string()),
                kv("inode_count", *inodes),
            ]));
        }
        return None;
    }
    if line.starts_with("Creating regular file ") {
        return Some(Done);
    }
    if let Some(rows) = huge_files(line) {
        return Some(rows);
    }
    // `Multiple mount protection is enabled with update interval 5 seconds.`
    if let Some(rest) =
        line.strip_prefix("Multiple mount protection is enabled with update interval ")
    {
        let n = rest.strip_suffix(" seconds.")?;
        parse_f64(n)?;
        return Some(Rows(vec![kv("mmp_update_interval", n)]));
    }
    if let Some((phase, state)) = line.split_once(':') {
        let known_phase = [
            "Discarding device blocks",
            "Allocating group tables",
            "Writing inode tables",
            "Copying files into the device",
            "Zeroing journal device",
            "Writing superblocks and filesystem accounting information",
        ];
        if known_phase.contains(&phase) {
            let done = state.trim_end().ends_with("done");
            if phase.starts_with("Writing superblocks") {
                return Some(if done { Finished } else { Unfinished });
            }
            // Discarding can fail harmlessly (`failed - Operation not supported`); zeroing
            // an external journal device prints its progress and no `done`.
            return Some(
                if done || phase.starts_with("Discarding") || phase.starts_with("Zeroing") {
                    Done
                } else {
                    Unfinished
                },
            );
        }
        match phase {
            "Filesystem UUID" => return Some(Rows(vec![kv("filesystem_uuid", state.trim())])),
            "OS type" => return Some(Rows(vec![kv("filesystem_os_type", state.trim())])),
            _ => {}
        }
    }
    let t: Vec<&str> = line.split_whitespace().collect();
    match t.as_slice() {
        [i, "inodes,", b, "blocks"] => {
            return Some(Rows(vec![kv("inode_count", *i), kv("block_count", *b)]))
        }
        [b, "blocks", pct, "reserved", "for", "the", "super", "user"] => {
            let p = pct.strip_prefix('(')?.strip_suffix("%)")?;
            return Some(Rows(vec![
                kv("reserved_block_count", *b),
                kv("reserved_block_percent", p),
            ]));
        }
        [g, "block", "groups" | "group"] => return Some(Rows(vec![kv("block_groups", *g)])),
        [b, "blocks", "per", "group,", f, unit, "per", "group"] => {
            let key = match *unit {
                "fragments" => "fragments_per_group",
                "clusters" => "clusters_per_group",
                _ => return None,
            };
            return Some(Rows(vec![kv("blocks_per_group", *b), kv(key, *f)]));
        }
        [i, "inodes", "per", "group"] => return Some(Rows(vec![kv("inodes_per_group", *i)])),
        _ => {}
    }
    // `Block size=4096 (log=2)`, `Stride=0 blocks, Stripe width=0 blocks`, `Filesystem label=`
    if line.contains('=') {
        let mut rows = Vec::new();
        for part in line.split(", ") {
            let (label, value) = part.split_once('=')?;
            if label.is_empty() || !label.starts_with(|c: char| c.is_ascii_alphabetic()) {
                return None;
            }
            let key = match snake(label).as_str() {
                "filesystem_label" => "filesystem_volume_name".to_string(),
                "first_data_block" => "first_block".to_string(),
                "stride" => "raid_stride".to_string(),
                "stripe_width" => "raid_stripe_width".to_string(),
                other => other.to_string(),
            };
            rows.push((key, value.trim().to_string()));
        }
        return Some(Rows(rows));
    }
    None
}

/// `Creating 477 huge file(s) with 1024 blocks each: done` or `Creating 1 huge file(s) :
/// done` (mke2fs -T hugefiles, misc/mk_hugefiles.c): rows `huge_files` and, when printed,
/// `huge_file_blocks`.
fn huge_files(line: &str) -> Option<Mke2fsLine> {
    let rest = line.strip_prefix("Creating ")?;
    let (count, rest) = rest.split_once(" huge file(s)")?;
    parse_u64(count)?;
    let (what, state) = rest.split_once(':')?;
    let mut rows = vec![kv("huge_files", count)];
    let what: Vec<&str> = what.split_whitespace().collect();
    match what.as_slice() {
        [] => {}
        ["with", blocks, "blocks", "each"] => {
            parse_u64(blocks)?;
            rows.push(kv("huge_file_blocks", *blocks));
        }
        _ => return None,
    }
    if !state.trim_end().ends_with("done") {
        return Some(Mke2fsLine::Unfinished);
    }
    Some(Mke2fsLine::Rows(rows))
}

/// `dumpe2fs -h` output.
pub fn parse_dumpe2fs(text: &str) -> Result<Output<GeometryRow>, ParseError> {
    let mut out = Output::default();
    let mut first_text: Option<(usize, String)> = None;
    let mut groups: Option<(usize, usize)> = None; // (first line, count)
    let mut header_rows = 0usize;
    let mut block = Block::None;

    for (n, line) in numbered(text) {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            block = Block::None;
            continue;
        }
        if let Some((_, count)) = groups.as_mut() {
            *count += 1;
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("dumpe2fs ") {
            if rest.ends_with(')') && !line.contains(':') {
                let v = rest.split_whitespace().next().unwrap_or("");
                push(&mut out, "dumpe2fs", "version", v);
                continue;
            }
        }
        if first_text.is_none() {
            first_text = Some((n, trimmed.to_string()));
        }
        if let Some(rest) = trimmed.strip_prefix("Group ") {
            if rest
                .split(':')
                .next()
                .is_some_and(|g| g.parse::<u64>().is_ok())
            {
                groups = Some((n, 1));
                continue;
            }
        }
        if line.starts_with([' ', '\t']) {
            if let Some(reason) = indented_line(&mut out, &mut block, trimmed) {
                out.warnings.push(warning(n, line, reason));
            }
            continue;
        }
        let Some((label, value)) = line.split_once(':') else {
            block = Block::None;
            out.warnings
                .push(warning(n, line, "not a `Label: value` line of dumpe2fs -h"));
            continue;
        };
        let key = snake(label);
        if key.is_empty() || label.starts_with("dumpe2fs") {
            block = Block::None;
            out.warnings
                .push(warning(n, line, "not a `Label: value` line of dumpe2fs -h"));
            continue;
        }
        let value = value.trim();
        header_rows += 1;
        block = match (key.as_str(), value.is_empty()) {
            ("mmp_block", true) => Block::Mmp,
            _ => Block::Value(out.rows.len()),
        };
        if block == Block::Mmp {
            continue;
        }
        push(&mut out, SUPERBLOCK, &key, value);
        let per_feature = match key.as_str() {
            "filesystem_features" => Some("feature:"),
            "journal_features" => Some("journal_feature:"),
            _ => None,
        };
        if let Some(prefix) = per_feature {
            for f in value.split_whitespace().filter(|f| *f != "(none)") {
                push(&mut out, SUPERBLOCK, &format!("{prefix}{f}"), "1");
            }
        }
    }
    if header_rows == 0 {
        return Err(nothing(
            "dumpe2fs",
            first_text,
            "`Label: value` lines of dumpe2fs -h",
        ));
    }
    if let Some((line, count)) = groups {
        out.warnings.push(warning(
            line,
            "",
            format!("{count} lines of group descriptors (dumpe2fs without -h) not parsed"),
        ));
    }
    let num = |rows: &[GeometryRow], key: &str| {
        rows.iter()
            .find(|r| r.section == SUPERBLOCK && r.key == key)
            .and_then(|r| r.number)
    };
    if let (Some(count), Some(first), Some(per)) = (
        num(&out.rows, "block_count"),
        num(&out.rows, "first_block"),
        num(&out.rows, "blocks_per_group"),
    ) {
        if per >= 1.0 && count >= first {
            let groups = ((count - first) / per).ceil();
            push(&mut out, SUPERBLOCK, "block_groups", &format!("{groups}"));
        }
    }
    let has = |rows: &[GeometryRow], key: &str| rows.iter().any(|r| r.key == key);
    let core = [
        "inode_count",
        "block_count",
        "block_size",
        "blocks_per_group",
        "inodes_per_group",
        "inode_size",
    ];
    let journal_missing = has(&out.rows, "journal_inode")
        && ![
            "journal_features",
            "total_journal_size",
            "journal_size",
            "journal_length",
        ]
        .iter()
        .any(|k| has(&out.rows, k));
    out.partial = core.iter().any(|k| !has(&out.rows, k)) || journal_missing;
    fill_bytes(&mut out.rows);
    Ok(out)
}

/// What an indented line of `dumpe2fs -h` continues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    /// Nothing: an indented line here is not dumpe2fs's.
    None,
    /// The value of the row at this index: `Journal users:` prints one user a line, the
    /// later ones indented to the value column (lib/e2p/ljs.c).
    Value(usize),
    /// `MMP_block:` and its indented `    mmp_magic: 0x4d4d50` lines (dumpe2fs on a
    /// filesystem with `mmp`).
    Mmp,
}

/// An indented line: one more value of a list (appended, `, `-separated), or a field of
/// the `MMP_block:` section (a row of its own, key as printed: `mmp_check_interval`).
/// Returns why the line was not read, if it was not.
fn indented_line(
    out: &mut Output<GeometryRow>,
    block: &mut Block,
    trimmed: &str,
) -> Option<String> {
    match *block {
        Block::Mmp => {
            let Some((label, value)) = trimmed.split_once(':') else {
                return Some("not a `name: value` line of the MMP block".to_string());
            };
            let key = snake(label);
            if key.is_empty() {
                return Some("not a `name: value` line of the MMP block".to_string());
            }
            push(out, SUPERBLOCK, &key, value.trim());
            None
        }
        Block::Value(i) => {
            let key = out.rows.get(i).map(|r| r.key.clone()).unwrap_or_default();
            if key != "journal_users" {
                return Some(format!(
                    "an indented line after `{key}`, which dumpe2fs prints on one line"
                ));
            }
            if let Some(r) = out.rows.get_mut(i) {
                r.value = format!("{}, {trimmed}", r.value);
                r.number = None;
            }
            None
        }
        Block::None => Some("not a `Label: value` line of dumpe2fs -h".to_string()),
    }
}

fn nothing(
    kind: &'static str,
    first_text: Option<(usize, String)>,
    expected: &'static str,
) -> ParseError {
    match first_text {
        None => ParseError::NothingRecognised { kind, expected },
        Some((line, text)) => ParseError::Malformed {
            kind,
            line,
            message: format!("no geometry lines; the tool printed: {text}"),
        },
    }
}

fn push_backups(out: &mut Output<GeometryRow>, list: &[String]) {
    push(out, MKE2FS, "superblock_backups", &list.join(", "));
    if let Some(r) = out.rows.last_mut() {
        r.number = None; // a list, not a number
    }
    push(
        out,
        MKE2FS,
        "superblock_backup_count",
        &list.len().to_string(),
    );
}

fn push(out: &mut Output<GeometryRow>, section: &str, key: &str, value: &str) {
    let (number, printed_unit) = leading_number(value);
    let unit = printed_unit
        .or_else(|| implied_unit(key))
        .map(str::to_string);
    out.rows.push(GeometryRow {
        section: section.to_string(),
        key: key.to_string(),
        value: value.to_string(),
        number,
        unit,
        bytes: None,
    });
}

const PRINTED_UNITS: [&str; 16] = [
    "k", "K", "kB", "KB", "KiB", "M", "MB", "MiB", "G", "GB", "GiB", "T", "TB", "TiB", "blocks",
    "%",
];

/// The leading number of a value and the unit printed right after it, if any.
fn leading_number(value: &str) -> (Option<f64>, Option<&'static str>) {
    let mut toks = value.split_whitespace();
    let Some(first) = toks.next() else {
        return (None, None);
    };
    let unit_of = |s: &str| PRINTED_UNITS.iter().copied().find(|u| *u == s);
    if let Some(x) = parse_f64(first) {
        return (Some(x), toks.next().and_then(unit_of));
    }
    if let Some(x) = parse_hex(first) {
        return (Some(x as f64), None);
    }
    // `64M`
    let split = first.find(|c: char| !(c.is_ascii_digit() || c == '.'));
    if let Some(i) = split.filter(|i| *i > 0) {
        if let (Some(x), Some(u)) = (
            first.get(..i).and_then(parse_f64),
            first.get(i..).and_then(unit_of),
        ) {
            if u != "blocks" && u != "%" {
                return (Some(x), Some(u));
            }
        }
    }
    (None, None)
}

fn implied_unit(key: &str) -> Option<&'static str> {
    Some(match key {
        "block_size"
        | "fragment_size"
        | "cluster_size"
        | "inode_size"
        | "group_descriptor_size"
        | "required_extra_isize"
        | "desired_extra_isize" => "bytes",
        "block_count"
        | "reserved_block_count"
        | "free_blocks"
        | "first_block"
        | "reserved_gdt_blocks"
        | "blocks_per_group"
        | "inode_blocks_per_group"
        | "total_journal_blocks"
        | "max_transaction_length"
        | "fast_commit_length"
        | "journal_length"
        | "journal_blocks"
        | "raid_stride"
        | "raid_stripe_width"
        | "maximum_filesystem_blocks"
        | "huge_file_blocks" => "blocks",
        "overhead_clusters" | "clusters_per_group" => "clusters",
        "fragments_per_group" => "fragments",
        "flex_block_group_size" | "block_groups" => "groups",
        "check_interval" | "mmp_update_interval" | "mmp_check_interval" => "s",
        "reserved_block_percent" => "%",
        _ => return None,
    })
}

fn whole(x: Option<f64>) -> Option<u64> {
    let x = x?;
    (x >= 0.0 && x.fract() == 0.0 && x < 1.8e19).then_some(x as u64)
}

/// Fill `bytes`, one tool output at a time (a `version` row starts the next one).
fn fill_bytes(rows: &mut [GeometryRow]) {
    let mut start = 0;
    while start < rows.len() {
        let end = rows
            .iter()
            .skip(start + 1)
            .position(|r| r.key == "version")
            .map_or(rows.len(), |p| start + 1 + p);
        let Some(seg) = rows.get_mut(start..end) else {
            return;
        };
        let size = |seg: &[GeometryRow], key: &str| {
            seg.iter()
                .find(|r| r.key == key)
                .and_then(|r| whole(r.number))
        };
        let block = size(seg, "block_size");
        let cluster = size(seg, "cluster_size").or(block);
        let fragment = size(seg, "fragment_size").or(block);
        for r in seg.iter_mut() {
            let scale = match r.unit.as_deref() {
                Some("bytes") => Some(1),
                Some("blocks") => block,
                Some("clusters") => cluster,
                Some("fragments") => fragment,
                Some("k" | "K" | "kB" | "KB" | "KiB") => Some(1 << 10),
                Some("M" | "MB" | "MiB") => Some(1 << 20),
                Some("G" | "GB" | "GiB") => Some(1 << 30),
                Some("T" | "TB" | "TiB") => Some(1 << 40),
                _ => None,
            };
            r.bytes = scale.and_then(|s| whole(r.number)?.checked_mul(s));
        }
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_numbers_and_units() {
        assert_eq!(leading_number("64M"), (Some(64.0), Some("M")));
        assert_eq!(leading_number("1045 kB"), (Some(1045.0), Some("kB")));
        assert_eq!(leading_number("1 (dynamic)"), (Some(1.0), None));
        assert_eq!(leading_number("0xEF53"), (Some(61267.0), None));
        assert_eq!(leading_number("b9365a40-76b2"), (None, None));
        assert_eq!(leading_number("0 blocks"), (Some(0.0), Some("blocks")));
    }

    #[test]
    fn progress_backspaces_and_partial() {
        let text = "mke2fs 1.47.0 (5-Feb-2023)\n\
            Creating filesystem with 1024 4k blocks and 256 inodes\n\
            Allocating group tables: 0/1\x08\x08\x08   \x08\x08\x08done\n\
            Writing superblocks and filesystem accounting information: 0/1\x08\x08\x08";
        let out = parse_mke2fs(text).unwrap();
        assert!(out.partial);
        assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
        assert_eq!(out.warnings[0].line, 4);
        let bc = out.rows.iter().find(|r| r.key == "block_count").unwrap();
        assert_eq!(bc.bytes, Some(1024 * 4096));
    }

    #[test]
    fn absurd_block_size_is_not_a_panic() {
        let out =
            parse_mke2fs("Creating filesystem with 1 99999999999999999999k blocks and 1 inodes\n");
        assert!(out.is_err(), "{out:?}");
        let out =
            parse_mke2fs("Creating filesystem with 1 18014398509481984k blocks and 1 inodes\n");
        assert!(out.is_err(), "{out:?}");
    }

    #[test]
    fn errors_quote_the_tool() {
        let e = parse_dumpe2fs(
            "dumpe2fs 1.47.0 (5-Feb-2023)\ndumpe2fs: Bad magic number in super-block while trying to open /dev/x\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("Bad magic number"), "{e}");
        let e = parse_mke2fs("mke2fs: invalid block size - 3\n").unwrap_err();
        assert!(e.to_string().contains("invalid block size"), "{e}");
    }
}
