//! The JSON that `fslab blockmap --json` prints: an array of extent rows.
//!
//! This lets an experiment capture block maps with fslab's own in-process FIEMAP walk
//! (`run: "{{fslab}} blockmap {{mnt}}/dir --json"` with `parse: blockmap`), or with its
//! batched debugfs reader on an unmounted ext image (`--debugfs {{dev.data}}`).

use super::{Output, ParseError};
use crate::extent::Extent;

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
