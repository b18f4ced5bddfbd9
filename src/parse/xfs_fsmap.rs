//! The space map of a whole XFS filesystem as `xfs_io -c fsmap MNT` prints it (GETFSMAP,
//! which needs the reverse-mapping btree, `rmapbt=1`), one [`FsmapRow`] per line:
//!
//! ```text
//!         0: 7:1 [0..7]: static fs metadata 8
//!         6: 7:1 [104..111]: inode 132 attr 0..7 8
//!         7: 7:1 [112..119]: inode 131 data 67108864..67108871 8
//!         9: 7:1 [128..383]: inodes 256
//!        21: 7:1 [520..527]: inode 131 extent map 8
//!        22: 7:0 [1496..1503]: inode 132 data extent map 8
//! ```
//!
//! Every number is in 512-byte basic blocks whatever the filesystem block size, and
//! ranges are inclusive (`[104..111]` is 8 units, 4096 bytes): rows give bytes. The owner
//! is an inode, with the fork the extent belongs to (`data`, `attr`, or a block of the
//! inode's extent btree: `data extent map` or `attr extent map` as xfsprogs 6.13 does
//! print it, `extent map` as some older ones do) and the file offset, or one of XFS's special owners
//! (`free space`, `static fs metadata`, `inodes`, `journalling log`, …), kept as printed.
//!
//! The verbose listing (`fsmap -v`, a table with an `EXT: DEV BLOCK-RANGE OWNER` header)
//! is refused with an error that says so: its owner column cannot be told from its file
//! offset column in every case. Any other line is a warning; a last line cut off in the
//! middle makes the result partial.

use super::text::{numbered, parse_u64, warning};
use super::{Output, ParseError};
use serde::Serialize;

const KIND: &str = "xfs_io-fsmap";

/// One extent of the filesystem's space map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FsmapRow {
    /// The extent number as printed.
    pub ext: u64,
    /// `major:minor` of the device the extent is on (data, log or realtime device).
    pub device: String,
    pub physical_bytes: u64,
    pub length_bytes: u64,
    /// `inode`, or the special owner as printed (`free space`, `inodes`, …).
    pub owner: String,
    /// The owning inode, for `inode` rows.
    pub inode: Option<u64>,
    /// `data`, `attr`, `data extent map`, `attr extent map` or (older xfsprogs, fork not
    /// said) `extent map`, for `inode` rows.
    pub fork: Option<String>,
    /// The file offset of a data or attr fork extent.
    pub logical_bytes: Option<u64>,
}

/// What is wrong with a line that is not an extent.
#[derive(Debug, thiserror::Error)]
enum LineError {
    #[error("no extent number (`N:`)")]
    NoExtent,
    #[error("no device (`major:minor`)")]
    NoDevice,
    #[error("no block range (`[start..end]:`)")]
    NoRange,
    #[error("no owner and length")]
    NoOwner,
    #[error("the last field is not a length")]
    NoLength,
    #[error("the length {len} disagrees with the block range ({units} blocks)")]
    LengthDisagrees { len: u64, units: u64 },
    #[error("a number too large for bytes")]
    TooLarge,
    #[error("the file range is not `start..end`")]
    NoFileRange,
    #[error("the file range has {n} blocks, the block range {units}")]
    FileRangeDisagrees { n: u64, units: u64 },
    #[error("an inode owner that is neither `data`, `attr`, `data extent map`, `attr extent map` nor `extent map`")]
    UnknownFork,
}

/// `[a..b]` or `a..b` in basic blocks: (start, units), inclusive.
fn range(s: &str) -> Option<(u64, u64)> {
    let s = s.strip_prefix('[').unwrap_or(s);
    let s = s
        .strip_suffix("]:")
        .or_else(|| s.strip_suffix(']'))
        .unwrap_or(s);
    let (a, b) = s.split_once("..")?;
    let (a, b) = (parse_u64(a)?, parse_u64(b)?);
    Some((a, b.checked_sub(a)?.checked_add(1)?))
}

fn row(line: &str) -> Result<FsmapRow, LineError> {
    let mut words = line.split_whitespace();
    let ext = words
        .next()
        .and_then(|w| w.strip_suffix(':'))
        .and_then(parse_u64)
        .ok_or(LineError::NoExtent)?;
    let device = words
        .next()
        .filter(|d| {
            d.split_once(':')
                .is_some_and(|(a, b)| parse_u64(a).is_some() && parse_u64(b).is_some())
        })
        .ok_or(LineError::NoDevice)?
        .to_string();
    let (start, units) = words.next().and_then(range).ok_or(LineError::NoRange)?;
    let rest: Vec<&str> = words.collect();
    let (len, owner) = rest.split_last().ok_or(LineError::NoOwner)?;
    let len = parse_u64(len).ok_or(LineError::NoLength)?;
    if len != units {
        return Err(LineError::LengthDisagrees { len, units });
    }
    let bytes = |units: u64| units.checked_mul(512).ok_or(LineError::TooLarge);
    let mut r = FsmapRow {
        ext,
        device,
        physical_bytes: bytes(start)?,
        length_bytes: bytes(len)?,
        owner: String::new(),
        inode: None,
        fork: None,
        logical_bytes: None,
    };
    let ino = match owner {
        ["inode", ino, rest @ ..] if parse_u64(ino).is_some() => (parse_u64(ino), rest),
        [] => return Err(LineError::NoOwner),
        // `inode btree`, `inodes`, `free space`, …: XFS's special owners.
        special => {
            r.owner = special.join(" ");
            return Ok(r);
        }
    };
    r.inode = ino.0;
    match ino.1 {
        ["extent", "map"] => r.fork = Some("extent map".into()),
        [fork @ ("data" | "attr"), "extent", "map"] => r.fork = Some(format!("{fork} extent map")),
        [fork @ ("data" | "attr"), off] => {
            r.fork = Some((*fork).to_string());
            let (o, n) = range(off).ok_or(LineError::NoFileRange)?;
            if n != units {
                return Err(LineError::FileRangeDisagrees { n, units });
            }
            r.logical_bytes = Some(bytes(o)?);
        }
        _ => return Err(LineError::UnknownFork),
    }
    r.owner = "inode".into();
    Ok(r)
}

/// Parse `xfs_io -c fsmap` output.
pub fn parse(text: &str) -> Result<Output<FsmapRow>, ParseError> {
    let mut out = Output::default();
    let lines: Vec<(usize, &str)> = numbered(text)
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    for (i, &(n, line)) in lines.iter().enumerate() {
        let t = line.trim();
        if t.starts_with("EXT:") && t.contains("BLOCK-RANGE") {
            return Err(ParseError::Malformed {
                kind: KIND,
                line: n,
                message: "this is the verbose listing (`fsmap -v`); capture `xfs_io -c fsmap MNT` without -v".into(),
            });
        }
        match row(t) {
            Ok(r) => out.rows.push(r),
            Err(why)
                if i + 1 == lines.len()
                    && !out.rows.is_empty()
                    && t.split(':').next().and_then(parse_u64).is_some() =>
            {
                out.warnings
                    .push(warning(n, line, format!("cut off: {why}")));
                out.partial = true;
            }
            Err(why) => out.warnings.push(warning(n, line, why.to_string())),
        }
    }
    if out.rows.is_empty() {
        return Err(ParseError::NothingRecognised {
            kind: KIND,
            expected: "`N: major:minor [start..end]: owner length` lines of xfs_io -c fsmap",
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAP: &str = "\t0: 7:1 [0..7]: static fs metadata 8
\t1: 7:1 [8..23]: per-AG metadata 16
\t6: 7:1 [104..111]: inode 132 attr 0..7 8
\t7: 7:1 [112..119]: inode 131 data 67108864..67108871 8
\t9: 7:1 [128..383]: inodes 256
\t2: 7:1 [24..39]: inode btree 16
\t21: 7:1 [520..527]: inode 131 extent map 8
\t30: 7:1 [2097152..2105343]: free space 8192
";

    /// Lines of xfsprogs 6.13's `xfs_io -c fsmap` on a parent=1 filesystem after
    /// fsstress (fslab's own run, 2026-12-03): the big directory's extent btree blocks
    /// say their fork.
    const FORKED_MAPS: &str = "\t21: 7:0 [1496..1503]: inode 132 data extent map 8
\t3171: 7:0 [359136..359151]: inode 132 data extent map 16
\t40: 7:0 [2000..2007]: inode 140 attr extent map 8
";

    #[test]
    fn extent_map_blocks_keep_their_fork() {
        let o = parse(FORKED_MAPS).unwrap();
        assert!(o.warnings.is_empty(), "{:?}", o.warnings);
        let forks: Vec<_> = o.rows.iter().map(|r| r.fork.as_deref()).collect();
        assert_eq!(
            forks,
            [
                Some("data extent map"),
                Some("data extent map"),
                Some("attr extent map")
            ]
        );
        assert_eq!(o.rows[1].length_bytes, 16 * 512);
        assert_eq!(o.rows[2].inode, Some(140));
        assert!(o.rows.iter().all(|r| r.logical_bytes.is_none()));
    }

    #[test]
    fn owners_forks_and_bytes() {
        let o = parse(MAP).unwrap();
        assert!(o.warnings.is_empty(), "{:?}", o.warnings);
        assert_eq!(o.rows.len(), 8);
        let attr = &o.rows[2];
        assert_eq!(
            (attr.owner.as_str(), attr.inode, attr.fork.as_deref()),
            ("inode", Some(132), Some("attr"))
        );
        assert_eq!((attr.physical_bytes, attr.length_bytes), (104 * 512, 4096));
        assert_eq!(attr.logical_bytes, Some(0));
        assert_eq!(o.rows[3].logical_bytes, Some(67108864 * 512));
        assert_eq!(o.rows[4].owner, "inodes");
        assert_eq!(o.rows[4].inode, None);
        assert_eq!(
            (o.rows[5].owner.as_str(), o.rows[5].inode),
            ("inode btree", None)
        );
        assert_eq!(o.rows[6].fork.as_deref(), Some("extent map"));
        assert_eq!(o.rows[6].logical_bytes, None);
        assert_eq!(o.rows[7].owner, "free space");
        assert_eq!(o.rows[7].length_bytes, 8192 * 512);
        assert_eq!(o.rows[0].device, "7:1");
    }

    #[test]
    fn a_length_that_disagrees_with_its_range_is_a_warning_not_a_row() {
        let o = parse("\t0: 7:1 [0..7]: static fs metadata 8\n\t1: 7:1 [8..23]: inodes 15\n\t2: 7:1 [24..31]: log 8\n").unwrap();
        assert_eq!(o.rows.len(), 2);
        assert_eq!(o.warnings.len(), 1);
        assert_eq!(o.warnings[0].line, 2);
        assert!(
            o.warnings[0].reason.contains("disagrees"),
            "{:?}",
            o.warnings
        );
        assert!(!o.partial);
    }

    #[test]
    fn a_cut_off_last_line_makes_it_partial() {
        let o = parse("\t0: 7:1 [0..7]: static fs metadata 8\n\t1: 7:1 [8..2").unwrap();
        assert_eq!(o.rows.len(), 1);
        assert!(o.partial);
    }

    #[test]
    fn the_verbose_listing_and_foreign_text_are_errors() {
        let v = " EXT: DEV BLOCK-RANGE         OWNER              FILE-OFFSET        AG AG-OFFSET         TOTAL FLAGS\n   0: 7:1 [0..7]:             static fs metadata                    0  (0..7)                8\n";
        let e = parse(v).unwrap_err().to_string();
        assert!(e.contains("without -v") && e.contains("line 1"), "{e}");
        let e = parse("xfs_io: cannot fsmap: Operation not supported\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("xfs_io -c fsmap"), "{e}");
    }
}
