//! The journal, `runs.jsonl`: one JSON line per timed iteration, fdatasynced before the
//! next iteration starts, grown ahead in zero bytes while a run writes; and reading it
//! back.

use super::{io, RunRow, StoreError};
use std::path::{Path, PathBuf};

/// The journal (`runs.jsonl`), open while the writer appends to it.
///
/// Rows are written at the end of the last whole line into a file that is grown ahead of
/// them, in chunks of [`JOURNAL_CHUNK`] zero bytes: a row's `fdatasync` then changes no
/// metadata (no size change, so no filesystem journal commit; 0.4 ms of each iteration
/// on ext4 here when the file grew with every row). At the end of each point
/// ([`BundleWriter::flush`](super::BundleWriter::flush)) the file is cut back to its
/// rows, so a finished bundle's journal is plain JSON lines; a killed run's may end with
/// zero bytes, which readers stop at ([`parse_journal`]). A row never tears: a tail left by a crash or a failed
/// write (no newline yet, so never a committed row) is zeroed when the journal is
/// opened, and a write or sync that fails is zeroed again before the error returns.
#[derive(Debug)]
pub(super) struct Journal {
    file: std::fs::File,
    path: PathBuf,
    /// Where the next row goes: just after the last whole line.
    end: u64,
    /// The file's size: zero bytes from `end` to here.
    allocated: u64,
    /// How much it grows at a time.
    chunk: u64,
}

/// How much the journal grows at a time (about 1,000 rows).
pub(super) const JOURNAL_CHUNK: u64 = 256 << 10;

/// [`JOURNAL_CHUNK`], or `FSLAB_JOURNAL_CHUNK` bytes (internal: a test of a full disk
/// sets 1, so that every row needs room, as when the journal grew row by row).
fn journal_chunk() -> u64 {
    std::env::var("FSLAB_JOURNAL_CHUNK")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(JOURNAL_CHUNK)
}

impl Journal {
    pub(super) fn open(path: &Path) -> Result<Journal, StoreError> {
        use std::os::unix::fs::FileExt;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)
            .map_err(io(path))?;
        let len = file.metadata().map_err(io(path))?.len();
        // The content ends at the last byte that is not zero; the rows at the last
        // newline before it.
        let mut buf = vec![0u8; 64 << 10];
        let mut content_end = 0u64;
        let mut keep = 0u64;
        let mut at = len;
        while at > 0 {
            let start = at.saturating_sub(buf.len() as u64);
            let n = (at - start) as usize;
            file.read_exact_at(&mut buf[..n], start).map_err(io(path))?;
            if content_end == 0 {
                if let Some(i) = buf[..n].iter().rposition(|&b| b != 0) {
                    content_end = start + i as u64 + 1;
                }
            }
            if content_end > 0 {
                let upto = ((content_end - start) as usize).min(n);
                if let Some(i) = buf[..upto].iter().rposition(|&b| b == b'\n') {
                    keep = start + i as u64 + 1;
                    break;
                }
            }
            at = start;
        }
        let j = Journal {
            file,
            path: path.to_path_buf(),
            end: keep,
            allocated: len,
            chunk: journal_chunk(),
        };
        if content_end > keep {
            // A torn last row: never committed, and the next row would glue onto it.
            j.zero(keep, content_end - keep)?;
            j.file.sync_data().map_err(io(path))?;
        }
        Ok(j)
    }

    fn zero(&self, from: u64, len: u64) -> Result<(), StoreError> {
        use std::os::unix::fs::FileExt;
        let zeros = vec![0u8; (64 << 10).min(len as usize)];
        let mut at = from;
        while at < from + len {
            let n = zeros.len().min((from + len - at) as usize);
            self.file
                .write_all_at(&zeros[..n], at)
                .map_err(io(&self.path))?;
            at += n as u64;
        }
        Ok(())
    }

    /// Append one line and fdatasync it.
    pub(super) fn append(&mut self, line: &[u8]) -> Result<(), StoreError> {
        use std::os::unix::fs::FileExt;
        let need = self.end + line.len() as u64;
        if need > self.allocated {
            // Grow by whole chunks of zeros (the row's sync below makes them durable).
            let to = need.div_ceil(self.chunk) * self.chunk;
            if self.zero(self.allocated, to - self.allocated).is_err() {
                // A nearly full disk: room for this row only.
                self.zero(self.allocated, need - self.allocated)?;
                self.allocated = need;
            } else {
                self.allocated = to;
            }
        }
        let written = self
            .file
            .write_all_at(line, self.end)
            .and_then(|()| self.file.sync_data());
        if let Err(e) = written {
            // Nothing of this line may stay: the next append would glue onto it.
            let _ = self.zero(self.end, line.len() as u64);
            let _ = self.file.sync_data();
            return Err(io(&self.path)(e));
        }
        self.end = need;
        Ok(())
    }

    /// Cut the file back to its rows (a finished journal holds no zero bytes).
    pub(super) fn trim(&mut self) -> Result<(), StoreError> {
        if self.allocated != self.end {
            self.file.set_len(self.end).map_err(io(&self.path))?;
            self.file.sync_data().map_err(io(&self.path))?;
            self.allocated = self.end;
        }
        Ok(())
    }
}

pub(super) fn read_journal(path: &Path) -> Result<Vec<RunRow>, StoreError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(path)(e)),
    };
    parse_journal(&text).map_err(|(line, e)| StoreError::Journal {
        path: path.to_path_buf(),
        line,
        message: e.to_string(),
    })
}

/// The rows of a journal. The rows end at the first zero byte (the room a running or
/// killed writer grew the file by; a row, being JSON, never holds one). A last line
/// without its newline is a write that never finished (a crash mid-write; its row was
/// never reported written) and is dropped; any other line that is not a row is an
/// error, with its 1-based number.
fn parse_journal(text: &str) -> Result<Vec<RunRow>, (usize, serde_json::Error)> {
    let text = text.split('\0').next().unwrap_or_default();
    let complete = match text.rfind('\n') {
        Some(i) => &text[..=i],
        None => "",
    };
    let mut out = Vec::new();
    for (n, l) in complete.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        out.push(serde_json::from_str::<RunRow>(l).map_err(|e| (n + 1, e))?);
    }
    Ok(out)
}
