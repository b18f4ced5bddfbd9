//! `fslab files`: numbered files written, truncated and mapped inside one process.
//!
//! - `write DIR --count N --size S`: files `DIR/0` … `DIR/N-1`, each created (or
//!   truncated) and filled with S zero bytes in one `write`, as
//!   `dd if=/dev/zero of=DIR/i bs=S count=1` does, without a process per file;
//! - `truncate DIR --count N --size S`: each file opened read-write and `ftruncate`d to S,
//!   as `xfs_io -c "truncate S" DIR/i` does, without a process per file (seed 003's
//!   in-process variant: in a guest a process start costs 35–95 ms, which flattens the
//!   post's loop);
//! - `path DIR --count N --size S --device DEV --diskstats-before FILE`: a `syncfs` of
//!   DIR's filesystem, then each file's FIEMAP map (raw flag words) and DEV's
//!   `/proc/diskstats` line now and as saved in FILE before the truncates, as one JSON
//!   document for `parse: truncate-path` (which truncate path the kernel took;
//!   `parse::truncate_path`).

use anyhow::Context;
use fslab::blockmap::fiemap::fiemap;
use fslab::parse::truncate_path::{Probe, ProbeExtent, ProbeFile};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Create DIR/0 … DIR/N-1, each with SIZE zero bytes written at once (as dd bs=SIZE count=1).
    Write(Files),
    /// ftruncate DIR/0 … DIR/N-1 to SIZE, one process for all (as xfs_io -c "truncate SIZE").
    Truncate(Files),
    /// After truncating: the files' FIEMAP maps and DEV's diskstats as JSON (parse: truncate-path).
    Path(PathArgs),
}

#[derive(Debug, clap::Args)]
pub struct Files {
    /// The directory holding the numbered files.
    pub dir: PathBuf,
    /// How many files (0 … N-1).
    #[arg(long, short = 'n')]
    pub count: u64,
    /// Bytes: a number or a size (`4k`, `1m`, `1MiB`).
    #[arg(long, short = 's')]
    pub size: String,
}

#[derive(Debug, clap::Args)]
pub struct PathArgs {
    #[command(flatten)]
    pub files: Files,
    /// The block device that holds the files' data (the realtime device for realtime files).
    #[arg(long)]
    pub device: PathBuf,
    /// A copy of /proc/diskstats taken after a sync, before the truncates.
    #[arg(long)]
    pub diskstats_before: PathBuf,
}

/// `4k` and `1m` as dd and xfs_io write them (powers of 1024), else fslab's sizes.
fn size_bytes(s: &str) -> anyhow::Result<u64> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    for (suffix, mult) in [("k", 1u64 << 10), ("m", 1 << 20), ("g", 1 << 30)] {
        if let Some(n) = lower.strip_suffix(suffix) {
            if let Ok(n) = n.parse::<u64>() {
                return Ok(n * mult);
            }
        }
    }
    fslab::spec::parse_size(t)
        .map_err(|e| anyhow::anyhow!("--size {s:?}: {e}; write bytes, `4k`, `1m` or `1MiB`"))
}

fn each(f: &Files) -> impl Iterator<Item = PathBuf> + '_ {
    (0..f.count).map(|i| f.dir.join(i.to_string()))
}

pub fn main(a: Args) -> anyhow::Result<ExitCode> {
    match a.action {
        Action::Write(f) => {
            let n = usize::try_from(size_bytes(&f.size)?)?;
            let zeros = vec![0u8; n];
            for p in each(&f) {
                let mut file =
                    File::create(&p).with_context(|| format!("create {}", p.display()))?;
                file.write_all(&zeros)
                    .with_context(|| format!("write {}", p.display()))?;
            }
        }
        Action::Truncate(f) => {
            let n = size_bytes(&f.size)?;
            for p in each(&f) {
                let file = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(&p)
                    .with_context(|| format!("open {}", p.display()))?;
                file.set_len(n)
                    .with_context(|| format!("truncate {} to {n} bytes", p.display()))?;
            }
        }
        Action::Path(a) => {
            let probe = probe(&a)?;
            println!("{}", serde_json::to_string(&probe)?);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The device's line of a /proc/diskstats text.
fn line_of(text: &str, major: u32, minor: u32) -> Option<String> {
    text.lines()
        .find(|l| {
            let mut w = l.split_whitespace();
            w.next().and_then(|m| m.parse::<u32>().ok()) == Some(major)
                && w.next().and_then(|m| m.parse::<u32>().ok()) == Some(minor)
        })
        .map(|l| l.trim().to_string())
}

fn probe(a: &PathArgs) -> anyhow::Result<Probe> {
    let f = &a.files;
    let eof = size_bytes(&f.size)?;
    // Write back what the truncates dirtied (zeroing goes through the page cache) before
    // the device's count is read.
    let dir = File::open(&f.dir).with_context(|| format!("open {}", f.dir.display()))?;
    nix::unistd::syncfs(&dir).with_context(|| format!("syncfs {}", f.dir.display()))?;
    let mut probe = Probe {
        eof_bytes: eof,
        device: Some(a.device.display().to_string()),
        ..Probe::default()
    };
    match device_lines(&a.device, &a.diskstats_before) {
        Ok((major, minor, before, after)) => {
            probe.major = Some(major);
            probe.minor = Some(minor);
            probe.diskstats_before = before;
            probe.diskstats_after = after;
        }
        Err(e) => probe.device_error = Some(format!("{e:#}")),
    }
    probe.files = each(f).map(|p| map(&p)).collect();
    Ok(probe)
}

fn device_lines(
    dev: &Path,
    before: &Path,
) -> anyhow::Result<(u32, u32, Option<String>, Option<String>)> {
    let rdev = std::fs::metadata(dev)
        .with_context(|| format!("stat {}", dev.display()))?
        .rdev();
    let (major, minor) = (
        nix::sys::stat::major(rdev) as u32,
        nix::sys::stat::minor(rdev) as u32,
    );
    let old =
        std::fs::read_to_string(before).with_context(|| format!("read {}", before.display()))?;
    let now = std::fs::read_to_string("/proc/diskstats").context("read /proc/diskstats")?;
    Ok((
        major,
        minor,
        line_of(&old, major, minor),
        line_of(&now, major, minor),
    ))
}

fn map(p: &Path) -> ProbeFile {
    let mut out = ProbeFile {
        path: p.display().to_string(),
        ..ProbeFile::default()
    };
    let res = File::open(p).and_then(|file| {
        let size = file.metadata()?.len();
        let raw = fiemap(&file, 0).map_err(std::io::Error::from)?;
        Ok((size, raw))
    });
    match res {
        Ok((size, raw)) => {
            out.size_bytes = Some(size);
            out.extents = raw
                .iter()
                .map(|e| ProbeExtent {
                    logical_bytes: e.fe_logical,
                    length_bytes: e.fe_length,
                    physical_bytes: Some(e.fe_physical),
                    flags: e.fe_flags,
                })
                .collect();
        }
        Err(e) => out.error = Some(e.to_string()),
    }
    out
}
