use serde::Serialize;

/// One extent of one file, the row of the `extents` table. Every block-map source
/// (FIEMAP, filefrag -v, xfs_bmap -v, xfs_io fiemap, debugfs stat/ex) produces these.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Extent {
    pub path: String,
    pub inode: Option<u64>,
    /// 0-based index of the extent within its file.
    pub index: u64,
    pub logical_bytes: u64,
    /// None for holes and for extents with no physical location (delalloc, inline).
    pub physical_bytes: Option<u64>,
    pub length_bytes: u64,
    /// Flags, comma-separated, lower case, FIEMAP names (`last,unwritten`).
    pub flags: String,
}
