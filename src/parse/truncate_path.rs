//! Which path a kernel took to truncate files inside a larger allocation unit (an XFS
//! realtime extent, issue 29): the JSON that `fslab files path` prints (the FIEMAP map
//! of each truncated file and the `/proc/diskstats` line of the device that holds the
//! files' data, before the truncates and after them) → one row, the path and its
//! evidence. Pure: the probe did the I/O.
//!
//! The paths, from what lies past EOF after `truncate` and what the device was written:
//! - `unmapped`: nothing is mapped past EOF (the blocks were freed, or there were none);
//! - `converted`: everything past EOF is unwritten (FIEMAP flag 0x800): the rest of the
//!   allocation unit was converted, with no zeroing I/O (Linux 6.12);
//! - `kept_written`: written extents past EOF and **no** write reached the device
//!   between the snapshot and the probe: the old data stays past EOF (Linux 6.1);
//! - `zeroed`: written extents past EOF and at least as many bytes written to the device
//!   as lie written past EOF in the mapped files: zeroing every tail writes that much;
//! - `unknown`: the map or the count cannot tell (a file unreadable or not at the
//!   truncate size, files that disagree, written tails without a device count, or a
//!   count between 0 and the written tails), with the reason.

use super::counters::diskstats;
use super::xfs_bmap::fiemap_flag_names;
use super::{Output, ParseError};
use serde::{Deserialize, Serialize};

const UNKNOWN_LOC: u32 = 0x0002;
const DELALLOC: u32 = 0x0004;
const UNWRITTEN: u32 = 0x0800;
const SECTOR: u64 = 512;

/// What `fslab files path` prints: one JSON document.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    /// The size the files were truncated to.
    pub eof_bytes: u64,
    /// The device that holds the files' data (the realtime device for realtime files).
    #[serde(default)]
    pub device: Option<String>,
    #[serde(default)]
    pub major: Option<u32>,
    #[serde(default)]
    pub minor: Option<u32>,
    /// The device's `/proc/diskstats` line saved before the truncates (after a sync).
    #[serde(default)]
    pub diskstats_before: Option<String>,
    /// The same line after the truncates and a `syncfs` of the files' filesystem.
    #[serde(default)]
    pub diskstats_after: Option<String>,
    /// Why the device's counts could not be read.
    #[serde(default)]
    pub device_error: Option<String>,
    pub files: Vec<ProbeFile>,
}

/// One truncated file as FIEMAP maps it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeFile {
    pub path: String,
    #[serde(default)]
    pub size_bytes: Option<u64>,
    #[serde(default)]
    pub extents: Vec<ProbeExtent>,
    /// Why the file could not be mapped.
    #[serde(default)]
    pub error: Option<String>,
}

/// One FIEMAP extent, its flag word as the kernel returned it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeExtent {
    pub logical_bytes: u64,
    pub length_bytes: u64,
    #[serde(default)]
    pub physical_bytes: Option<u64>,
    pub flags: u32,
}

/// The path the kernel took (the `truncate_path` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TruncatePath {
    Unmapped,
    KeptWritten,
    Zeroed,
    Converted,
    Unknown,
}

impl TruncatePath {
    pub const ALL: [TruncatePath; 5] = [
        TruncatePath::Unmapped,
        TruncatePath::KeptWritten,
        TruncatePath::Zeroed,
        TruncatePath::Converted,
        TruncatePath::Unknown,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TruncatePath::Unmapped => "unmapped",
            TruncatePath::KeptWritten => "kept_written",
            TruncatePath::Zeroed => "zeroed",
            TruncatePath::Converted => "converted",
            TruncatePath::Unknown => "unknown",
        }
    }
}

/// One row of the `truncate_path` table: per probe (the runner adds the point and the
/// replicate), the path and the evidence behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TruncatePathRow {
    /// `unmapped`, `kept_written`, `zeroed`, `converted` or `unknown`.
    pub truncate_path: String,
    /// Why, in words, with the numbers.
    pub reason: String,
    /// The truncate size.
    pub eof_bytes: u64,
    /// Files probed, and how many of them had nothing, only written, only unwritten, or
    /// both mapped past EOF; `files_failed` could not be mapped.
    pub files: u64,
    pub files_unmapped: u64,
    pub files_written: u64,
    pub files_unwritten: u64,
    pub files_mixed: u64,
    pub files_failed: u64,
    /// Bytes mapped past EOF over all files, written and unwritten.
    pub written_past_eof_bytes: u64,
    pub unwritten_past_eof_bytes: u64,
    /// The FIEMAP flags seen past EOF (names; `written` for an extent with none that
    /// matter), distinct, comma-separated.
    pub flags_past_eof: String,
    /// The first file's map: each extent's byte range, flag word and names.
    pub evidence: String,
    pub device: Option<String>,
    /// Bytes written to the device between the snapshot and the probe (diskstats'
    /// sectors written × 512); None when they could not be read.
    pub device_written_bytes: Option<u64>,
}

/// What lies past EOF in one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tail {
    Nothing,
    Written,
    Unwritten,
    Mixed,
}

/// Bytes of `e` past `eof`.
fn past(e: &ProbeExtent, eof: u64) -> u64 {
    let end = e.logical_bytes.saturating_add(e.length_bytes);
    end.saturating_sub(e.logical_bytes.max(eof))
}

/// `[a..b] 0xF names`, inclusive byte range as xfs_io prints block ranges.
fn extent_label(e: &ProbeExtent) -> String {
    let names = fiemap_flag_names(e.flags);
    format!(
        "[{}..{}] 0x{:x}{}",
        e.logical_bytes,
        e.logical_bytes
            .saturating_add(e.length_bytes)
            .saturating_sub(1),
        e.flags,
        if names.is_empty() {
            String::new()
        } else {
            format!(" {names}")
        }
    )
}

fn sectors_written(line: &str, dev: (u32, u32)) -> Option<u64> {
    diskstats(line, &[dev])
        .into_iter()
        .find(|s| s.name == "sectors_written")
        .map(|s| s.value)
}

/// Why the device's write count cannot be read from a probe.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoDeviceCount {
    /// The probe could not read it (its `device_error`).
    #[error("{0}")]
    Probe(String),
    #[error("the probe names no device (major:minor)")]
    NoDevice,
    #[error("no /proc/diskstats line of device {major}:{minor} {when} the truncates")]
    NoLine {
        major: u32,
        minor: u32,
        when: &'static str,
    },
    #[error("the device's sectors written went down ({before} → {after}): not one boot's counts")]
    WentDown { before: u64, after: u64 },
}

/// Bytes written to the probe's device between its two diskstats lines, or why not.
fn device_written(p: &Probe) -> Result<u64, NoDeviceCount> {
    if let Some(e) = &p.device_error {
        return Err(NoDeviceCount::Probe(e.clone()));
    }
    let (major, minor) = match (p.major, p.minor) {
        (Some(a), Some(b)) => (a, b),
        _ => return Err(NoDeviceCount::NoDevice),
    };
    let read = |when: &'static str, l: &Option<String>| {
        l.as_deref()
            .and_then(|l| sectors_written(l, (major, minor)))
            .ok_or(NoDeviceCount::NoLine { major, minor, when })
    };
    let before = read("before", &p.diskstats_before)?;
    let after = read("after", &p.diskstats_after)?;
    after
        .checked_sub(before)
        .map(|s| s * SECTOR)
        .ok_or(NoDeviceCount::WentDown { before, after })
}

/// Classify a probe (pure; unit-tested).
pub fn classify(p: &Probe) -> TruncatePathRow {
    let mut row = TruncatePathRow {
        truncate_path: String::new(),
        reason: String::new(),
        eof_bytes: p.eof_bytes,
        files: p.files.len() as u64,
        files_unmapped: 0,
        files_written: 0,
        files_unwritten: 0,
        files_mixed: 0,
        files_failed: 0,
        written_past_eof_bytes: 0,
        unwritten_past_eof_bytes: 0,
        flags_past_eof: String::new(),
        evidence: String::new(),
        device: p.device.clone(),
        device_written_bytes: device_written(p).ok(),
    };
    let mut flags: Vec<String> = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    let mut no_location = 0u64;
    for f in &p.files {
        if let Some(e) = &f.error {
            row.files_failed += 1;
            failed.push(format!("{}: {e}", f.path));
            continue;
        }
        let size = f.size_bytes.unwrap_or(u64::MAX);
        if size != p.eof_bytes {
            row.files_failed += 1;
            failed.push(format!(
                "{} is {} bytes, not the truncate size {}",
                f.path,
                f.size_bytes
                    .map_or("of unknown size".into(), |s| s.to_string()),
                p.eof_bytes
            ));
            continue;
        }
        let (mut w, mut u) = (0u64, 0u64);
        for e in &f.extents {
            let b = past(e, size);
            if b == 0 {
                continue;
            }
            if e.flags & (UNKNOWN_LOC | DELALLOC) != 0 {
                no_location += 1;
            }
            if e.flags & UNWRITTEN != 0 {
                u += b;
            } else {
                w += b;
            }
            let names = fiemap_flag_names(e.flags & !0x1);
            let name = if e.flags & UNWRITTEN == 0 {
                if names.is_empty() {
                    "written".to_string()
                } else {
                    format!("written,{names}")
                }
            } else {
                names
            };
            if !flags.contains(&name) {
                flags.push(name);
            }
        }
        row.written_past_eof_bytes += w;
        row.unwritten_past_eof_bytes += u;
        match (w > 0, u > 0) {
            (false, false) => row.files_unmapped += 1,
            (true, false) => row.files_written += 1,
            (false, true) => row.files_unwritten += 1,
            (true, true) => row.files_mixed += 1,
        }
        if row.evidence.is_empty() {
            row.evidence = format!(
                "{} ({} bytes): {}",
                f.path,
                size,
                if f.extents.is_empty() {
                    "no extents".to_string()
                } else {
                    f.extents
                        .iter()
                        .map(extent_label)
                        .collect::<Vec<_>>()
                        .join("; ")
                }
            );
        }
    }
    row.flags_past_eof = flags.join(" | ");
    let counts = format!(
        "{} file(s) mapped: {} with nothing past EOF, {} written, {} unwritten, {} both",
        row.files - row.files_failed,
        row.files_unmapped,
        row.files_written,
        row.files_unwritten,
        row.files_mixed
    );
    let tail = |r: &TruncatePathRow| {
        let kinds = [
            (r.files_unmapped, Tail::Nothing),
            (r.files_written, Tail::Written),
            (r.files_unwritten, Tail::Unwritten),
            (r.files_mixed, Tail::Mixed),
        ];
        let present: Vec<Tail> = kinds.iter().filter(|k| k.0 > 0).map(|k| k.1).collect();
        (present.len() == 1).then(|| present[0])
    };
    let (path, reason) = if p.files.is_empty() {
        (
            TruncatePath::Unknown,
            "the probe mapped no file".to_string(),
        )
    } else if !failed.is_empty() {
        (
            TruncatePath::Unknown,
            format!(
                "{} of {} file(s) cannot be read as truncated: {}",
                failed.len(),
                row.files,
                failed.into_iter().take(3).collect::<Vec<_>>().join("; ")
            ),
        )
    } else if no_location > 0 {
        (
            TruncatePath::Unknown,
            format!("{no_location} extent(s) past EOF have no location yet (delalloc or unknown): the map does not show the path; {counts}"),
        )
    } else {
        match tail(&row) {
            None => (
                TruncatePath::Unknown,
                format!("the files disagree: {counts}"),
            ),
            Some(Tail::Mixed) => (
                TruncatePath::Unknown,
                format!("written and unwritten extents past EOF in each file: {counts}"),
            ),
            Some(Tail::Nothing) => (
                TruncatePath::Unmapped,
                format!(
                    "nothing is mapped past EOF ({} bytes): {counts}",
                    p.eof_bytes
                ),
            ),
            Some(Tail::Unwritten) => (
                TruncatePath::Converted,
                format!(
                    "everything past EOF is unwritten (FIEMAP flag 0x800), {} bytes: {counts}",
                    row.unwritten_past_eof_bytes
                ),
            ),
            Some(Tail::Written) => written_path(p, &row, &counts),
        }
    };
    row.truncate_path = path.name().to_string();
    row.reason = reason;
    row
}

/// Written tails: kept or zeroed, told apart by the device's write count.
fn written_path(p: &Probe, row: &TruncatePathRow, counts: &str) -> (TruncatePath, String) {
    let w = row.written_past_eof_bytes;
    let dev = p.device.as_deref().unwrap_or("the files' device");
    match device_written(p) {
        Err(why) => (
            TruncatePath::Unknown,
            format!(
                "written extents past EOF ({w} bytes), and kept data cannot be told from zeroed data without the device's write count: {why}; {counts}"
            ),
        ),
        Ok(0) => (
            TruncatePath::KeptWritten,
            format!(
                "written extents past EOF ({w} bytes) and no write reached {dev} during the truncates: the old data stays past EOF; {counts}"
            ),
        ),
        Ok(d) if d >= w => (
            TruncatePath::Zeroed,
            format!(
                "written extents past EOF ({w} bytes) and {d} bytes written to {dev} during the truncates, at least what zeroing every tail writes; {counts}"
            ),
        ),
        Ok(d) => (
            TruncatePath::Unknown,
            format!(
                "written extents past EOF ({w} bytes) and {d} bytes written to {dev} during the truncates: more than none (kept) and less than zeroing every tail writes; {counts}"
            ),
        ),
    }
}

/// Parse `fslab files path` output into its one row.
pub fn parse(text: &str) -> Result<Output<TruncatePathRow>, ParseError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(ParseError::NothingRecognised {
            kind: "truncate-path",
            expected: "the JSON document `fslab files path` prints",
        });
    }
    let probe: Probe = serde_json::from_str(t).map_err(|e| ParseError::Malformed {
        kind: "truncate-path",
        line: e.line(),
        message: format!("not the JSON of `fslab files path`: {e}"),
    })?;
    Ok(Output {
        rows: vec![classify(&probe)],
        warnings: Vec::new(),
        partial: false,
    })
}

#[cfg(test)]
mod tests {
    use super::{classify, parse, Probe, ProbeExtent, ProbeFile};

    const MIB: u64 = 1 << 20;

    fn ext(logical: u64, length: u64, flags: u32) -> ProbeExtent {
        ProbeExtent {
            logical_bytes: logical,
            length_bytes: length,
            physical_bytes: Some(1 << 30),
            flags,
        }
    }

    fn probe(files: Vec<Vec<ProbeExtent>>, before: u64, after: u64) -> Probe {
        Probe {
            eof_bytes: 4096,
            device: Some("/dev/ubdb".into()),
            major: Some(98),
            minor: Some(16),
            diskstats_before: Some(format!(
                "  98      16 ubdb 10 0 80 5 20 0 {before} 9 0 12 14 0 0 0 0 0 0"
            )),
            diskstats_after: Some(format!(
                "  98      16 ubdb 10 0 80 5 20 0 {after} 9 0 12 14 0 0 0 0 0 0"
            )),
            device_error: None,
            files: files
                .into_iter()
                .enumerate()
                .map(|(i, extents)| ProbeFile {
                    path: format!("/mnt/{i}"),
                    size_bytes: Some(4096),
                    extents,
                    error: None,
                })
                .collect(),
        }
    }

    /// Linux 6.1: one written extent of the whole 1 MiB rt extent stays, and the device
    /// saw no write: kept written.
    #[test]
    fn a_whole_written_extent_and_no_device_write_is_kept_written() {
        let p = probe(vec![vec![ext(0, MIB, 0x1)]; 3], 500, 500);
        let r = classify(&p);
        assert_eq!(r.truncate_path, "kept_written", "{}", r.reason);
        assert_eq!(r.written_past_eof_bytes, 3 * (MIB - 4096));
        assert_eq!(r.device_written_bytes, Some(0));
        assert!(r
            .evidence
            .starts_with("/mnt/0 (4096 bytes): [0..1048575] 0x1 last"));
        assert_eq!(r.flags_past_eof, "written");
    }

    /// Linux 6.12: [0..4095] written, the rest unwritten (0x800): converted.
    #[test]
    fn an_unwritten_tail_is_converted() {
        let p = probe(
            vec![vec![ext(0, 4096, 0), ext(4096, MIB - 4096, 0x801)]; 2],
            500,
            500,
        );
        let r = classify(&p);
        assert_eq!(r.truncate_path, "converted", "{}", r.reason);
        assert_eq!(r.unwritten_past_eof_bytes, 2 * (MIB - 4096));
        assert_eq!(r.flags_past_eof, "unwritten");
        assert!(r.reason.contains("0x800"), "{}", r.reason);
    }

    /// Written tails and the device written at least that much: zeroed; less (but some):
    /// unknown, never a guess.
    #[test]
    fn written_tails_are_zeroed_only_when_the_device_saw_the_zeroes() {
        let tail = MIB - 4096;
        let zeroed = probe(vec![vec![ext(0, MIB, 0x1)]; 2], 0, 2 * tail / 512);
        assert_eq!(classify(&zeroed).truncate_path, "zeroed");
        let some = probe(vec![vec![ext(0, MIB, 0x1)]; 2], 0, 8);
        let r = classify(&some);
        assert_eq!(r.truncate_path, "unknown");
        assert!(r.reason.contains("less than zeroing"), "{}", r.reason);
        let mut blind = probe(vec![vec![ext(0, MIB, 0x1)]], 0, 0);
        blind.diskstats_after = None;
        let r = classify(&blind);
        assert_eq!(r.truncate_path, "unknown");
        assert!(r.reason.contains("cannot be told"), "{}", r.reason);
    }

    /// Nothing past EOF: unmapped (rtextsize = block size).
    #[test]
    fn nothing_past_eof_is_unmapped() {
        let r = classify(&probe(vec![vec![ext(0, 4096, 0x1)]; 2], 0, 0));
        assert_eq!(r.truncate_path, "unmapped", "{}", r.reason);
    }

    /// An unreadable file, a file not at the truncate size, files that disagree, or no
    /// files: unknown, with the reason.
    #[test]
    fn what_the_map_cannot_show_is_unknown() {
        let mut p = probe(vec![vec![ext(0, MIB, 0x1)]], 0, 0);
        p.files[0].error = Some("No such file or directory".into());
        let r = classify(&p);
        assert_eq!(r.truncate_path, "unknown");
        assert!(r.reason.contains("No such file"), "{}", r.reason);
        let mut p = probe(vec![vec![ext(0, MIB, 0x1)]], 0, 0);
        p.files[0].size_bytes = Some(MIB);
        assert!(classify(&p).reason.contains("not the truncate size"));
        let p = probe(
            vec![
                vec![ext(0, MIB, 0x1)],
                vec![ext(0, 4096, 0), ext(4096, MIB - 4096, 0x801)],
            ],
            0,
            0,
        );
        let r = classify(&p);
        assert_eq!(r.truncate_path, "unknown");
        assert!(r.reason.contains("disagree"), "{}", r.reason);
        assert_eq!(classify(&probe(vec![], 0, 0)).truncate_path, "unknown");
    }

    #[test]
    fn the_text_is_the_probe_json() {
        let p = probe(vec![vec![ext(0, MIB, 0x1)]], 7, 7);
        let out = parse(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(out.rows.len(), 1);
        assert_eq!(out.rows[0].truncate_path, "kept_written");
        assert!(parse("").is_err());
        assert!(parse("{\"eof_bytes\": 1}").is_err());
    }
}
