//! The JSON that `fslab blockmap --json` prints: an array of extent rows.
//!
//! This lets an experiment capture block maps with fslab's own in-process FIEMAP walk
//! (`run: "{{fslab}} blockmap {{mnt}}/dir --json"` with `parse: blockmap`), or with its
//! batched debugfs reader on an unmounted ext image (`--debugfs {{dev.data}}`).

use super::map::{MapReport, MapRow, Unit};
use super::{Output, ParseError};
use crate::extent::Extent;
use polars::prelude::DataFrame;
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
        let same = r.files.last().is_some_and(|f| same_file(f, &e));
        if !same {
            r.files.push(new_file(r.files.len() as u64, &e));
        }
        let f = r.files.last_mut().expect("a file");
        r.rows.push(map_row(f, e));
    }
    Ok(r)
}

/// Consecutive rows of one path and inode are one file.
fn same_file(f: &BlockmapFile, e: &Extent) -> bool {
    f.path.as_str() == &*e.path && f.inode == e.inode
}

fn new_file(file: u64, e: &Extent) -> BlockmapFile {
    BlockmapFile {
        file,
        path: e.path.to_string(),
        inode: e.inode,
        ..Default::default()
    }
}

/// The row of extent `e` of file `f`, counted in `f`.
fn map_row(f: &mut BlockmapFile, e: Extent) -> MapRow {
    f.rows += 1;
    f.mapped_bytes = f.mapped_bytes.saturating_add(e.length_bytes);
    let end = |a: u64| a.checked_add(e.length_bytes.checked_sub(1)?);
    MapRow {
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
    }
}

/// Rows per batch of [`parse_stream`].
pub const BATCH_ROWS: usize = 65_536;

/// The table a batch of [`parse_stream`] belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapTable {
    /// Map rows: the `extents` table ([`super::map::map_frame`]'s columns).
    Rows,
    /// File records: the `files` table ([`BlockmapFile`]'s columns).
    Files,
}

/// Why [`parse_stream`] stopped: the input, or the sink the batches went to.
#[derive(Debug, thiserror::Error)]
pub enum StreamError<E> {
    #[error(transparent)]
    Parse(ParseError),
    #[error(transparent)]
    Sink(E),
}

/// Bytes read, noting whether any was not whitespace (an input of only whitespace is
/// [`ParseError::NothingRecognised`], as for [`parse`]).
struct Seen<R> {
    inner: R,
    text: bool,
}

impl<R: std::io::Read> std::io::Read for Seen<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if !self.text {
            self.text = buf[..n]
                .iter()
                .any(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c));
        }
        Ok(n)
    }
}

/// Batches being filled, and where they go.
struct Batches<'a, E> {
    batch_rows: usize,
    file: Option<BlockmapFile>,
    files_seen: u64,
    rows: Vec<MapRow>,
    files: Vec<BlockmapFile>,
    sent_rows: bool,
    sent_files: bool,
    sink: &'a mut dyn FnMut(MapTable, DataFrame) -> Result<(), E>,
    failed: Option<StreamError<E>>,
}

impl<E> Batches<'_, E> {
    fn push(&mut self, e: Extent) -> Result<(), StreamError<E>> {
        if !self.file.as_ref().is_some_and(|f| same_file(f, &e)) {
            let next = new_file(self.files_seen, &e);
            self.files_seen += 1;
            if let Some(done) = self.file.replace(next) {
                self.files.push(done);
                if self.files.len() >= self.batch_rows {
                    self.send_files()?;
                }
            }
        }
        let f = self.file.as_mut().expect("a file");
        self.rows.push(map_row(f, e));
        if self.rows.len() >= self.batch_rows {
            self.send_rows()?;
        }
        Ok(())
    }

    fn send_rows(&mut self) -> Result<(), StreamError<E>> {
        let rows = std::mem::take(&mut self.rows);
        let df = super::map::map_frame(&rows).map_err(|e| ParseError::Malformed {
            kind: "blockmap",
            line: 0,
            message: e.to_string(),
        });
        self.sent_rows = true;
        self.send(MapTable::Rows, df)
    }

    fn send_files(&mut self) -> Result<(), StreamError<E>> {
        let files = std::mem::take(&mut self.files);
        let df = super::map::files_frame(&files, &FILE_INTS).map_err(ParseError::from);
        self.sent_files = true;
        self.send(MapTable::Files, df)
    }

    fn send(
        &mut self,
        table: MapTable,
        df: Result<DataFrame, ParseError>,
    ) -> Result<(), StreamError<E>> {
        match df {
            Ok(df) => (self.sink)(table, df).map_err(StreamError::Sink),
            Err(e) => Err(StreamError::Parse(e)),
        }
    }

    /// The last batches (one of each table at least, empty when the map is).
    fn finish(&mut self) -> Result<(), StreamError<E>> {
        if let Some(f) = self.file.take() {
            self.files.push(f);
        }
        if !self.rows.is_empty() || !self.sent_rows {
            self.send_rows()?;
        }
        if !self.files.is_empty() || !self.sent_files {
            self.send_files()?;
        }
        Ok(())
    }
}

/// Reads the JSON array one extent at a time.
struct Elements<'b, 'a, E>(&'b mut Batches<'a, E>);

impl<'de, E> serde::de::Visitor<'de> for Elements<'_, '_, E> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON array of extents from `fslab blockmap --json`")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(e) = seq.next_element::<Extent>()? {
            if let Err(failed) = self.0.push(e) {
                self.0.failed = Some(failed);
                return Err(serde::de::Error::custom("stopped by the batch sink"));
            }
        }
        Ok(())
    }
}

/// [`parse_map`], streamed: reads `fslab blockmap --json` from `reader` one extent at
/// a time and hands map rows and file records to `sink` in frames of at most
/// `batch_rows` rows, in order (the frames [`super::parse_with`] gives for the whole
/// text, cut into batches: the same rows, columns and `file` numbers). Memory is
/// bounded by a batch and the largest row, whatever the size of the input. A file's
/// record comes once its last row has been read, so the `files` batches lag the
/// `extents` ones. At least one batch of each table comes, empty for an empty map.
/// Errors give the line and column in the input; batches sent before an error stay
/// sent (the caller discards them).
pub fn parse_stream<R: std::io::Read, E>(
    reader: R,
    batch_rows: usize,
    sink: &mut dyn FnMut(MapTable, DataFrame) -> Result<(), E>,
) -> Result<(), StreamError<E>> {
    let mut input = std::io::BufReader::with_capacity(
        1 << 16,
        Seen {
            inner: reader,
            text: false,
        },
    );
    let mut b = Batches {
        batch_rows: batch_rows.max(1),
        file: None,
        files_seen: 0,
        rows: Vec::new(),
        files: Vec::new(),
        sent_rows: false,
        sent_files: false,
        sink,
        failed: None,
    };
    let parsed = {
        use serde::Deserializer as _;
        let mut de = serde_json::Deserializer::from_reader(&mut input);
        (&mut de)
            .deserialize_seq(Elements(&mut b))
            .and_then(|()| de.end())
    };
    if let Err(e) = parsed {
        if let Some(f) = b.failed.take() {
            return Err(f);
        }
        if e.is_eof() && !input.get_ref().text {
            return Err(StreamError::Parse(nothing()));
        }
        return Err(StreamError::Parse(ParseError::Malformed {
            kind: "blockmap",
            line: e.line(),
            message: e.to_string(),
        }));
    }
    b.finish()
}

fn nothing() -> ParseError {
    ParseError::NothingRecognised {
        kind: "blockmap",
        expected: "a JSON array of extents from `fslab blockmap --json`",
    }
}

/// Parse `fslab blockmap --json` output.
pub fn parse(text: &str) -> Result<Output<Extent>, ParseError> {
    if text.trim().is_empty() {
        return Err(nothing());
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

    /// A map of `n` files of 0 to 3 extents, with unknown inodes, holes without a
    /// location, odd flags and a path that repeats non-consecutively.
    fn capture(n: usize) -> String {
        let mut rows = Vec::new();
        for i in 0..n {
            let path = if i == n / 2 {
                "/m/f0".to_string()
            } else {
                format!("/m/f{i}")
            };
            let inode = if i % 5 == 3 {
                serde_json::Value::Null
            } else {
                (1000 + i).into()
            };
            for k in 0..(i % 4) {
                let physical = if (i + k) % 7 == 0 {
                    serde_json::Value::Null
                } else {
                    (4096 * (10 * i + k)).into()
                };
                let flags = match (i + k) % 3 {
                    0 => "",
                    1 => "last,eof",
                    _ => "unwritten,0x4000",
                };
                rows.push(serde_json::json!({
                    "path": path, "inode": inode, "index": k,
                    "logical_bytes": 4096 * k, "physical_bytes": physical,
                    "length_bytes": 4096 * (k + 1), "flags": flags,
                }));
            }
        }
        serde_json::to_string_pretty(&rows).unwrap()
    }

    fn streamed(text: &str, batch: usize) -> Result<(Vec<DataFrame>, Vec<DataFrame>), ParseError> {
        let (mut rows, mut files) = (Vec::new(), Vec::new());
        let r = parse_stream(text.as_bytes(), batch, &mut |t, df| -> Result<(), ()> {
            assert!(df.height() <= batch);
            match t {
                MapTable::Rows => rows.push(df),
                MapTable::Files => files.push(df),
            }
            Ok(())
        });
        match r {
            Ok(()) => Ok((rows, files)),
            Err(StreamError::Parse(e)) => Err(e),
            Err(StreamError::Sink(())) => unreachable!(),
        }
    }

    #[test]
    fn the_streamed_parse_gives_the_whole_texts_frames_in_batches() {
        use crate::parse::{parse_with, Kind};
        for n in [0, 1, 2, 7, 40] {
            let text = capture(n);
            let whole = parse_with(
                Kind::Blockmap,
                &text,
                crate::parse::map::MapOptions::default(),
            )
            .unwrap();
            assert!(whole.warnings.is_empty());
            for batch in [1, 2, 3, 10, BATCH_ROWS] {
                let (rows, files) = streamed(&text, batch).unwrap();
                let want = whole.frame.height().div_ceil(batch).max(1);
                assert_eq!(rows.len(), want, "n={n} batch={batch}");
                let rows = crate::frames::concat_diagonal(&rows).unwrap();
                let files = crate::frames::concat_diagonal(&files).unwrap();
                assert!(
                    rows.equals_missing(&whole.frame),
                    "n={n} batch={batch}\n{rows}"
                );
                assert_eq!(rows.schema(), whole.frame.schema());
                let wf = whole.files.as_ref().unwrap();
                assert!(
                    files.equals_missing(wf),
                    "n={n} batch={batch}\n{files}\n{wf}"
                );
                assert_eq!(files.schema(), wf.schema());
            }
        }
    }

    #[test]
    fn streamed_errors_say_where_and_stop_at_the_sinks_error() {
        let text = capture(20);
        let cut = &text[..text.len() / 2];
        match streamed(cut, 4) {
            Err(ParseError::Malformed { line, message, .. }) => {
                assert!(line > 1);
                assert!(
                    message.contains(&format!("line {line} column")),
                    "{message}"
                );
            }
            other => panic!("{other:?}"),
        }
        let bad = text.replacen("\"length_bytes\": 4096,", "\"length_bytes\": -1,", 1);
        match streamed(&bad, 4) {
            Err(ParseError::Malformed { line, message, .. }) => {
                let want = bad.lines().position(|l| l.contains("-1")).unwrap() + 1;
                assert_eq!(line, want, "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            streamed(" \n\t", 4),
            Err(ParseError::NothingRecognised { .. })
        ));
        assert!(matches!(
            streamed("[] x", 4),
            Err(ParseError::Malformed { .. })
        ));
        assert!(matches!(
            streamed("{}", 4),
            Err(ParseError::Malformed { .. })
        ));
        let mut calls = 0;
        let r = parse_stream(text.as_bytes(), 2, &mut |_, _| {
            calls += 1;
            if calls == 3 {
                Err("full")
            } else {
                Ok(())
            }
        });
        assert!(matches!(r, Err(StreamError::Sink("full"))), "{r:?}");
        assert_eq!(calls, 3);
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
