//! The JSON that `fslab blockmap --json` prints: an array of extent rows.
//!
//! This lets an experiment capture block maps with fslab's own in-process FIEMAP walk
//! (`run: "{{fslab}} blockmap {{mnt}}/dir --json"` with `parse: blockmap`), or with its
//! batched debugfs reader on an unmounted ext image (`--debugfs {{dev.data}}`).

use super::map::{MapReport, MapRow, Unit};
use super::{Output, ParseError};
use crate::extent::Extent;
use serde::Serialize;

/// One file of `fslab blockmap --json` (consecutive rows of one path and inode).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct BlockmapFile {
    /// 0-based number of the file in the text: the join key with its rows.
    pub file: u64,
    pub path: String,
    pub inode: Option<u64>,
    /// Rows of the file.
    pub rows: u64,
    /// Sum of the rows' lengths, bytes.
    pub mapped_bytes: u64,
}

/// The integer fields of [`BlockmapFile`].
pub const FILE_INTS: [&str; 4] = ["file", "inode", "rows", "mapped_bytes"];

/// `fslab blockmap --json` → file records and rows (in bytes: FIEMAP's unit).
pub fn parse_map(text: &str) -> Result<MapReport<BlockmapFile>, ParseError> {
    let out = parse(text)?;
    let mut r = MapReport::default();
    for e in out.rows {
        let same = r
            .files
            .last()
            .is_some_and(|f: &BlockmapFile| f.path.as_str() == &*e.path && f.inode == e.inode);
        if !same {
            r.files.push(BlockmapFile {
                file: r.files.len() as u64,
                path: e.path.to_string(),
                inode: e.inode,
                ..Default::default()
            });
        }
        let f = r.files.last_mut().expect("a file");
        f.rows += 1;
        f.mapped_bytes = f.mapped_bytes.saturating_add(e.length_bytes);
        let end = |a: u64| a.checked_add(e.length_bytes.checked_sub(1)?);
        r.rows.push(MapRow {
            file: f.file,
            path: e.path.clone(),
            inode: e.inode,
            index: e.index,
            logical_bytes: Some(e.logical_bytes),
            physical_bytes: e.physical_bytes,
            length_bytes: Some(e.length_bytes),
            unit: Unit::Byte,
            unit_bytes: Some(1),
            logical_start: Some(e.logical_bytes),
            logical_end: end(e.logical_bytes),
            physical_start: e.physical_bytes,
            physical_end: e.physical_bytes.and_then(end),
            length: Some(e.length_bytes),
            tool_flags: (!e.flags.is_empty()).then(|| e.flags.to_string()),
            flags: e.flags,
            ..Default::default()
        });
    }
    Ok(r)
}

/// Parse `fslab blockmap --json` output.
pub fn parse(text: &str) -> Result<Output<Extent>, ParseError> {
    if text.trim().is_empty() {
        return Err(ParseError::NothingRecognised {
            kind: "blockmap",
            expected: "a JSON array of extents from `fslab blockmap --json`",
        });
    }
    let rows: Vec<Extent> = serde_json::from_str(text).map_err(|e| ParseError::Malformed {
        kind: "blockmap",
        line: e.line(),
        message: e.to_string(),
    })?;
    Ok(Output {
        rows,
        ..Output::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Captured with: fslab blockmap /tmp/bmt --json   (a directory and one small file on ext4)
    const CAPTURE: &str = r#"[
  {
    "path": "/tmp/bmt",
    "inode": 10019217,
    "index": 0,
    "logical_bytes": 0,
    "physical_bytes": 164154355712,
    "length_bytes": 4096,
    "flags": "last,eof"
  },
  {
    "path": "/tmp/bmt/a",
    "inode": 10019276,
    "index": 0,
    "logical_bytes": 0,
    "physical_bytes": null,
    "length_bytes": 4096,
    "flags": "last,unknown_loc,delalloc,eof"
  }
]"#;

    #[test]
    fn reads_fslab_blockmap_json_field_by_field() {
        let out = parse(CAPTURE).unwrap();
        assert_eq!(out.rows.len(), 2);
        assert_eq!(&*out.rows[0].path, "/tmp/bmt");
        assert_eq!(out.rows[0].inode, Some(10019217));
        assert_eq!(out.rows[0].physical_bytes, Some(164154355712));
        assert_eq!(out.rows[1].physical_bytes, None);
        assert_eq!(out.rows[1].flags, "last,unknown_loc,delalloc,eof");
    }

    #[test]
    fn truncated_json_is_an_error_with_its_line() {
        let cut = &CAPTURE[..CAPTURE.len() / 2];
        match parse(cut) {
            Err(ParseError::Malformed { line, .. }) => assert!(line > 1),
            other => panic!("{other:?}"),
        }
        assert!(parse("").is_err());
    }
}
