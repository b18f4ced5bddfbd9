use serde::{Deserialize, Serialize};

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
    pub path: String,
    pub inode: Option<u64>,
    /// 0-based index of the extent within its file.
    pub index: u64,
    pub logical_bytes: u64,
    /// None for holes, for extents with no location yet (`unknown_loc`, delalloc) and for
    /// inline data read by debugfs (FIEMAP gives inline data the inode's byte address).
    pub physical_bytes: Option<u64>,
    pub length_bytes: u64,
    /// Flags, comma-separated, lower case (see above).
    pub flags: String,
}
