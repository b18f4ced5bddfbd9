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
///   block long and are not data; see [`crate::parse::debugfs`] for their index.
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
