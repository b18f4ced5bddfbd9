//! The extent row: one extent of one file, as every block-map source makes it. A leaf
//! type shared by the text parsers (`parse`) and the block-map readers (`blockmap`).

use crate::frames::FrameError;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::sync::Arc;

/// One extent of one file, the row of the `extents` table. Every block-map source
/// (FIEMAP, filefrag -v, xfs_bmap -v, xfs_io fiemap, debugfs stat/ex) produces these.
///
/// Flags, comma-separated, lower case:
/// - FIEMAP names as filefrag prints them, in its order: `last`, `unknown_loc`, `delalloc`,
///   `encoded`, `encrypted`, `not_aligned`, `inline`, `tail_packed`, `unwritten`, `merged`,
///   `shared`, `hole`, unknown bits as `0x…`;
/// - `eof` (filefrag's annotation, also set by the FIEMAP walk and debugfs `stat`): the
///   extent reaches the file size;
/// - block-map metadata from debugfs: `metadata` plus `ind`, `dind`, `tind` (ext2/3
///   indirect blocks) or `etbN` (ext4 extent tree block of level N). Such rows are one
///   block long and are not data; the debugfs parser (`parse::debugfs`) gives their index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Extent {
    /// Shared by all rows of a file (one allocation per file, not per extent).
    #[serde(with = "arc_str")]
    pub path: Arc<str>,
    pub inode: Option<u64>,
    /// 0-based index of the extent within its file.
    pub index: u64,
    pub logical_bytes: u64,
    /// None for holes, for extents with no location yet (`unknown_loc`, delalloc) and for
    /// inline data read by debugfs (FIEMAP gives inline data the inode's byte address).
    pub physical_bytes: Option<u64>,
    pub length_bytes: u64,
    /// Flags, comma-separated, lower case (see above). Common combinations are static
    /// strings ([`flags`]), so a row costs no allocation for them.
    pub flags: Cow<'static, str>,
}

/// `s` as extent flags: the common combinations borrow a static string, others are copied.
pub fn flags(s: &str) -> Cow<'static, str> {
    const COMMON: [&str; 12] = [
        "",
        "last",
        "eof",
        "last,eof",
        "unwritten",
        "last,unwritten",
        "unwritten,eof",
        "last,unwritten,eof",
        "merged",
        "last,merged",
        "merged,eof",
        "last,merged,eof",
    ];
    match COMMON.iter().find(|c| **c == s) {
        Some(c) => Cow::Borrowed(c),
        None => Cow::Owned(s.to_string()),
    }
}

/// Extent rows as a DataFrame with a fixed schema: `path` (str), `inode` (i64, null when
/// unknown), `index`, `logical_bytes` (i64), `physical_bytes` (i64, null without a
/// location), `length_bytes` (i64), `flags` (str). Built column by column (the same
/// columns and types [`crate::frames::from_records`] infers, without its per-row JSON
/// detour, which matters for trees of many files; an all-null column stays i64 here).
pub fn extents_frame(extents: &[Extent]) -> Result<polars::prelude::DataFrame, FrameError> {
    use polars::prelude::{Column, DataFrame};
    let i = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    let n = extents.len();
    let mut path = Vec::with_capacity(n);
    let mut inode = Vec::with_capacity(n);
    let mut index = Vec::with_capacity(n);
    let mut logical = Vec::with_capacity(n);
    let mut physical = Vec::with_capacity(n);
    let mut length = Vec::with_capacity(n);
    let mut flags = Vec::with_capacity(n);
    for e in extents {
        path.push(&*e.path);
        inode.push(e.inode.map(i));
        index.push(i(e.index));
        logical.push(i(e.logical_bytes));
        physical.push(e.physical_bytes.map(i));
        length.push(i(e.length_bytes));
        flags.push(&*e.flags);
    }
    let columns = vec![
        Column::new("path".into(), path),
        Column::new("inode".into(), inode),
        Column::new("index".into(), index),
        Column::new("logical_bytes".into(), logical),
        Column::new("physical_bytes".into(), physical),
        Column::new("length_bytes".into(), length),
        Column::new("flags".into(), flags),
    ];
    DataFrame::new(n, columns).map_err(FrameError::from)
}

/// Serde for `Arc<str>` as a plain string (serde's own impl needs its `rc` feature).
mod arc_str {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::sync::Arc;

    pub fn serialize<S: Serializer>(v: &Arc<str>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(v)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<str>, D::Error> {
        String::deserialize(d).map(Arc::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extents_frame_matches_from_records() {
        let rows = vec![
            Extent {
                path: "a".into(),
                inode: Some(12),
                index: 0,
                logical_bytes: 0,
                physical_bytes: Some(4096),
                length_bytes: 8192,
                flags: "".into(),
            },
            Extent {
                path: "a".into(),
                inode: Some(12),
                index: 1,
                logical_bytes: 8192,
                physical_bytes: None,
                length_bytes: 4096,
                flags: "last,unknown_loc,delalloc,eof".into(),
            },
        ];
        let direct = extents_frame(&rows).unwrap();
        let generic = crate::frames::from_records(&rows).unwrap();
        assert_eq!(direct.schema(), generic.schema());
        assert!(direct == generic);
        assert_eq!(extents_frame(&[]).unwrap().width(), 7);
    }
}
