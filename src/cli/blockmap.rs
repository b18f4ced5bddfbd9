//! `fslab blockmap`: the extents of files, directories or whole trees.
//!
//! Mounted filesystems are mapped in process with FIEMAP (`fslab::blockmap::walk`); an
//! unmounted ext2/3/4 image with `--debugfs IMAGE` through one debugfs process
//! (`fslab::blockmap::debugfs`). Output: a table (default), `--json` (an array of objects
//! with the field names of the rows), `--csv`, or `-o FILE.parquet`. The whole map is held
//! in memory before it is written (about 1 KB per file at the peak).

use anyhow::{bail, Context};
use clap::Args as ClapArgs;
use fslab::blockmap::{self, debugfs, summary, walk, Extent, FileEntry};
use polars::prelude::*;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, ClapArgs)]
#[command(
    about = "Block maps (extents) of files and trees: FIEMAP, or debugfs on an unmounted ext image"
)]
pub struct Args {
    /// Files or directories. With --debugfs: paths inside the image (default `/`).
    pub paths: Vec<PathBuf>,
    /// Read the unmounted ext2/3/4 image IMAGE with one debugfs process instead of FIEMAP.
    #[arg(long, value_name = "IMAGE")]
    pub debugfs: Option<PathBuf>,
    /// Print JSON (an array of objects).
    #[arg(long, conflicts_with_all = ["csv", "output"])]
    pub json: bool,
    /// Print CSV.
    #[arg(long, conflicts_with = "output")]
    pub csv: bool,
    /// Write a parquet file (atomically: temporary file in the same directory, then rename).
    #[arg(short, long, value_name = "FILE.parquet")]
    pub output: Option<PathBuf>,
    /// Output the filesystem fragmentation summary (one row) instead of extents.
    #[arg(long, conflicts_with = "per_file")]
    pub summary: bool,
    /// Output one fragmentation row per file instead of extents.
    #[arg(long)]
    pub per_file: bool,
    /// Only the paths given, not what is below them.
    #[arg(long)]
    pub no_recurse: bool,
    /// Do not map directories.
    #[arg(long)]
    pub no_dirs: bool,
    /// FIEMAP_FLAG_SYNC: sync each file before mapping it (no delalloc extents).
    #[arg(long)]
    pub sync: bool,
    /// Threads for the FIEMAP calls (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
}

struct Mapped {
    files: Vec<FileEntry>,
    extents: Vec<Extent>,
    errors: Vec<walk::PathError>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mapped = match &args.debugfs {
        Some(image) => map_image(image, &args)?,
        None => {
            if args.paths.is_empty() {
                bail!("give at least one PATH (or --debugfs IMAGE)");
            }
            let opts = walk::WalkOptions {
                sync: args.sync,
                include_dirs: !args.no_dirs,
                recursive: !args.no_recurse,
                threads: args.threads,
            };
            let m = walk::map_paths(&args.paths, &opts)?;
            Mapped {
                files: m.files,
                extents: m.extents,
                errors: m.errors,
            }
        }
    };
    for e in &mapped.errors {
        eprintln!("fslab: {}: {}", e.path, e.error);
    }
    if args.summary || args.per_file {
        let files = summary::per_file_with(&mapped.files, &mapped.extents);
        if args.summary {
            let fs = summary::filesystem(&files);
            emit(&args, std::slice::from_ref(&fs), || {
                summary::filesystem_frame(&fs)
            })?;
        } else {
            emit(&args, &files, || summary::per_file_frame(&files))?;
        }
    } else {
        emit(&args, &mapped.extents, || {
            Ok(blockmap::extents_frame(&mapped.extents)?)
        })?;
    }
    Ok(if mapped.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn map_image(image: &Path, args: &Args) -> anyhow::Result<Mapped> {
    let mut paths: Vec<String> = args
        .paths
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if paths.is_empty() {
        paths.push("/".into());
    }
    let m = if args.no_recurse {
        debugfs::map_image_paths(image, &paths)?
    } else {
        let roots: Vec<&str> = paths.iter().map(String::as_str).collect();
        debugfs::map_image_tree(image, &roots)?
    };
    for w in &m.warnings {
        eprintln!(
            "fslab: debugfs output line {}: {} ({})",
            w.line, w.text, w.reason
        );
    }
    let (files, extents): (Vec<FileEntry>, Vec<Extent>) = if args.no_dirs {
        let dirs: std::collections::HashSet<&str> = m
            .files
            .iter()
            .filter(|f| f.is_dir)
            .map(|f| f.path.as_str())
            .collect();
        (
            m.files.iter().filter(|f| !f.is_dir).cloned().collect(),
            m.extents
                .iter()
                .filter(|e| !dirs.contains(&*e.path))
                .cloned()
                .collect(),
        )
    } else {
        (m.files, m.extents)
    };
    Ok(Mapped {
        files,
        extents,
        errors: m.errors,
    })
}

fn emit<T: Serialize>(
    args: &Args,
    rows: &[T],
    frame: impl FnOnce() -> Result<DataFrame, blockmap::BlockmapError>,
) -> anyhow::Result<()> {
    match emit_inner(args, rows, frame) {
        // `fslab blockmap … | head` is fine.
        Err(e) if is_broken_pipe(&e) => Ok(()),
        r => r,
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || c.to_string().contains("Broken pipe")
    })
}

fn emit_inner<T: Serialize>(
    args: &Args,
    rows: &[T],
    frame: impl FnOnce() -> Result<DataFrame, blockmap::BlockmapError>,
) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if args.json {
        serde_json::to_writer_pretty(&mut out, rows)?;
        writeln!(out)?;
    } else if args.csv {
        let mut df = frame()?;
        CsvWriter::new(&mut out).finish(&mut df)?;
    } else if let Some(path) = &args.output {
        let mut df = frame()?;
        write_parquet(path, &mut df)?;
    } else {
        let df = frame()?;
        writeln!(out, "{df}")?;
    }
    out.flush()?;
    Ok(())
}

/// Write `df` to `path` through a temporary file in the same directory and a rename, so
/// that readers never see a half-written file.
pub fn write_parquet(path: &Path, df: &mut DataFrame) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .with_context(|| format!("{}: not a file name", path.display()))?
        .to_string_lossy()
        .into_owned();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| -> anyhow::Result<()> {
        let file =
            std::fs::File::create(&tmp).with_context(|| format!("create {}", tmp.display()))?;
        let written = ParquetWriter::new(file).finish(df);
        anyhow::Context::with_context(written, || format!("write {}", tmp.display()))?;
        std::fs::rename(&tmp, path)
            .with_context(|| format!("rename {} to {}", tmp.display(), path.display()))?;
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
