//! `fslab blockmap`: the extents of files, directories or whole trees.
//!
//! Mounted filesystems are mapped in process with FIEMAP (`fslab::blockmap::walk`); an
//! unmounted ext2/3/4 image with `--debugfs IMAGE` through one debugfs process
//! (`fslab::blockmap::debugfs`). Output: a table (default), `--json` (an array of objects
//! with the field names of the rows), `--csv`, or `-o FILE.parquet`.
//!
//! Memory: the FIEMAP walk is streamed (`fslab::blockmap::stream`): `-o` writes a parquet
//! row group per 65,536 rows, `--csv` and `--json` print rows as they come, and the
//! per-file and filesystem summaries are computed in the same pass, so the peak stays
//! bounded whatever the number of files. The table output (for people) and `--debugfs`
//! still hold the whole map in memory.

use anyhow::bail;
use clap::Args as ClapArgs;
use fslab::blockmap::getfsmap::{self, Method};
use fslab::blockmap::stream::{
    self as bstream, CsvSink, FrameSink, MemSink, ParquetSink, Streamer,
};
use fslab::blockmap::{self, debugfs, summary, walk, Item};
use polars::prelude::*;
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
    /// How to map a mounted filesystem: `fiemap` (FS_IOC_FIEMAP per file), `getfsmap` (one
    /// FS_IOC_GETFSMAP stream + a getdents walk: XFS with rmapbt, as root) or `auto`
    /// (getfsmap when every PATH is a directory that allows it, else fiemap). The method
    /// used is printed on stderr and stored in the parquet metadata
    /// (`fslab.blockmap.method`).
    #[arg(long, default_value = "auto", value_parser = parse_method)]
    pub method: Method,
    /// Where the getfsmap method reads inode sizes: `bulkstat` (XFS_IOC_BULKSTAT: the
    /// kernel instantiates every inode), `device` (the inode cores read from the block
    /// device and checked, after a freeze-and-thaw of the filesystem that writes every
    /// logged inode back in place, and is skipped while the log has not moved since the
    /// last; writers wait for the write-back, 40-60 ms on an idle filesystem here) or
    /// `auto` (device on a loop device, else bulkstat). What was
    /// used is printed on stderr and stored in the parquet metadata
    /// (`fslab.blockmap.sizes`).
    #[arg(long, default_value = "auto", value_parser = parse_sizes)]
    pub sizes_from: getfsmap::Sizes,
    /// Rows per parquet row group / output batch (tests).
    #[arg(long, hide = true, default_value_t = bstream::BATCH_ROWS)]
    pub batch_rows: usize,
}

fn parse_method(s: &str) -> Result<Method, getfsmap::UnknownMethod> {
    s.parse()
}

fn parse_sizes(s: &str) -> Result<getfsmap::Sizes, getfsmap::UnknownSizes> {
    s.parse()
}

/// The method for `args.paths`, and why, said out loud.
fn choose(args: &Args) -> anyhow::Result<(Method, String)> {
    let why_not = || -> Option<String> {
        if args.no_recurse {
            return Some("--no-recurse".into());
        }
        for p in &args.paths {
            if !p.is_dir() {
                return Some(format!("{} is not a directory", p.display()));
            }
            if let Err(why) = getfsmap::probe_auto(p) {
                return Some(format!("{}: {why}", p.display()));
            }
        }
        None
    };
    Ok(match args.method {
        Method::Fiemap => (Method::Fiemap, "asked for".into()),
        Method::Getfsmap => {
            for p in &args.paths {
                if let Err(reason) = getfsmap::probe(p) {
                    return Err(blockmap::BlockmapError::NoFsmap {
                        path: p.clone(),
                        reason,
                    }
                    .into());
                }
            }
            (Method::Getfsmap, "asked for".into())
        }
        Method::Auto => match why_not() {
            None => (Method::Getfsmap, "auto: XFS with rmapbt".into()),
            Some(why) => (Method::Fiemap, format!("auto: not getfsmap: {why}")),
        },
    })
}

/// What `run` prints.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rows {
    Extents,
    PerFile,
    Summary,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.debugfs.is_none() {
        // No transparent huge pages for this process: the allocator asks for them, so
        // each thread's first touch of its heap zeroes 2 MiB, which cost a third of the
        // CPU of a 20,000-file map (`perf`: `clear_page_erms`). The setting would pass to
        // children, so it is made only here, where none is started.
        let _ = nix::sys::prctl::set_thp_disable(true);
    }
    // Where the GETFSMAP walk's inode sizes came from ("" for other methods).
    let mut sizes_from = String::new();
    let (items, method): (Box<dyn Iterator<Item = Item>>, &str) = match &args.debugfs {
        Some(image) => (Box::new(map_image(image, &args)?.into_iter()), "debugfs"),
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
            let (method, why) = choose(&args)?;
            eprintln!("fslab blockmap: method {} ({why})", method.name());
            let items: Box<dyn Iterator<Item = Item>> = match method {
                Method::Getfsmap => {
                    let (walk, read) = getfsmap::stream(&args.paths, &opts, args.sizes_from)?;
                    let mut used: Vec<&str> = Vec::new();
                    for (root, how) in &read {
                        eprintln!("fslab blockmap: {}: {how}", root.display());
                        let name = match how {
                            getfsmap::SizesRead::Device { .. } => "device",
                            getfsmap::SizesRead::Bulkstat { .. } => "bulkstat",
                        };
                        if !used.contains(&name) {
                            used.push(name);
                        }
                    }
                    sizes_from = used.join(",");
                    Box::new(walk)
                }
                _ => Box::new(walk::stream(&args.paths, &opts)?),
            };
            (items, method.name())
        }
    };
    let rows = if args.summary {
        Rows::Summary
    } else if args.per_file {
        Rows::PerFile
    } else {
        Rows::Extents
    };
    let mut meta = vec![("fslab.blockmap.method", method)];
    if !sizes_from.is_empty() {
        meta.push(("fslab.blockmap.sizes", sizes_from.as_str()));
    }
    let LeftOut {
        errors,
        directories,
    } = match emit(&args, rows, &meta, items) {
        // `fslab blockmap … | head` is fine.
        Err(e) if is_broken_pipe(&e) => return Ok(ExitCode::SUCCESS),
        r => r?,
    };
    if directories > 0 {
        eprintln!(
            "fslab blockmap: {directories} director{} not mapped: this filesystem has no FIEMAP \
             for directories (XFS); the files in them are mapped (the getfsmap method maps \
             directories too: XFS with rmapbt, as root)",
            if directories == 1 { "y" } else { "ies" }
        );
    }
    for e in &errors {
        eprintln!("fslab: {}: {}", e.path, e.error);
    }
    Ok(if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn map_image(image: &Path, args: &Args) -> anyhow::Result<Vec<Item>> {
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
    let mut items: Vec<Item> = blockmap::items_of(m.files, m.extents)
        .into_iter()
        .filter(|f| !(args.no_dirs && f.entry.is_dir))
        .map(Ok)
        .collect();
    items.extend(m.errors.into_iter().map(Err));
    Ok(items)
}

/// What was left out of a map.
struct LeftOut {
    /// The paths that could not be mapped: errors.
    errors: Vec<walk::PathError>,
    /// Directories the filesystem cannot map (no FIEMAP for directories): not errors.
    directories: u64,
}

impl LeftOut {
    /// What a streamed pass left out.
    fn of(done: bstream::Streamed) -> LeftOut {
        LeftOut {
            directories: done.filesystem.directories_unmapped,
            errors: done.errors,
        }
    }
}

/// Stream the rows to the chosen output; what was left out.
fn emit(
    args: &Args,
    rows: Rows,
    meta: &[(&str, &str)],
    items: Box<dyn Iterator<Item = Item>>,
) -> anyhow::Result<LeftOut> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let schema = match rows {
        Rows::Extents => bstream::extents_schema(),
        _ => bstream::per_file_schema(),
    };
    let done = if args.json {
        let left_out = json(args, &mut out, rows, items)?;
        writeln!(out)?;
        out.flush()?;
        return Ok(left_out);
    } else if args.csv {
        let mut sink = CsvSink::new(&mut out, &schema)?;
        let done = pass(args, rows, items, Some(&mut sink))?;
        if rows == Rows::Summary {
            let mut df = summary::filesystem_frame(&done.filesystem)?;
            CsvWriter::new(&mut out).finish(&mut df)?;
        } else {
            sink.finish()?;
        }
        done
    } else if let Some(path) = &args.output {
        if rows == Rows::Summary {
            let done = pass(args, rows, items, None)?;
            let df = summary::filesystem_frame(&done.filesystem)?;
            let mut sink = ParquetSink::create(path, df.schema(), meta)?;
            sink.write(&mut df.clone())?;
            sink.finish()?;
            done
        } else {
            let mut sink = ParquetSink::create(path, &schema, meta)?;
            let done = pass(args, rows, items, Some(&mut sink))?;
            sink.finish()?;
            done
        }
    } else {
        let mut sink = MemSink::default();
        let done = pass(args, rows, items, Some(&mut sink))?;
        match rows {
            Rows::Summary => {
                write_summary(&mut out, &summary::filesystem_frame(&done.filesystem)?)?
            }
            Rows::Extents => writeln!(out, "{}", sink.finish(blockmap::extents_frame(&[])?)?)?,
            Rows::PerFile => writeln!(out, "{}", sink.finish(summary::per_file_frame(&[])?)?)?,
        }
        done
    };
    out.flush()?;
    Ok(LeftOut::of(done))
}

/// The one-row filesystem summary for a person: one `column  value` line per column, so
/// that every column is printed whatever the terminal's width (polars' table would cut
/// it to its default width).
fn write_summary(out: &mut impl Write, df: &DataFrame) -> anyhow::Result<()> {
    let width = df
        .get_column_names()
        .iter()
        .map(|n| n.len())
        .max()
        .unwrap_or(0);
    for c in df.columns() {
        let value = match c.get(0)? {
            AnyValue::Null => "-".to_string(),
            AnyValue::Float64(x) => format!("{x:.4}"),
            AnyValue::String(s) => s.to_string(),
            AnyValue::StringOwned(s) => s.to_string(),
            v => v.to_string(),
        };
        writeln!(out, "{:width$}  {value}", c.name().as_str())?;
    }
    Ok(())
}

/// One streaming pass, the chosen rows to `sink`.
fn pass(
    args: &Args,
    rows: Rows,
    items: Box<dyn Iterator<Item = Item>>,
    sink: Option<&mut dyn FrameSink>,
) -> anyhow::Result<bstream::Streamed> {
    let mut s = match rows {
        Rows::Extents => Streamer::new(sink, None),
        Rows::PerFile => Streamer::new(None, sink),
        Rows::Summary => Streamer::new(None, None),
    }
    .with_batch_rows(args.batch_rows);
    for item in items {
        s.add(item)?;
    }
    Ok(s.finish()?)
}

/// JSON, streamed: an array of rows as serde_json's pretty printer writes a `Vec` of them.
fn json(
    args: &Args,
    out: &mut impl Write,
    rows: Rows,
    items: Box<dyn Iterator<Item = Item>>,
) -> anyhow::Result<LeftOut> {
    use serde::Serializer;
    let mut ser = serde_json::Serializer::pretty(out);
    let left_out = std::cell::RefCell::new(LeftOut {
        errors: Vec::new(),
        directories: 0,
    });
    let ok = |item: Item| match item {
        Ok(m) => Some(m),
        Err(e) => {
            let mut l = left_out.borrow_mut();
            match e.why {
                walk::Unmapped::DirectoryWithoutFiemap => l.directories += 1,
                walk::Unmapped::Failed => l.errors.push(e),
            }
            None
        }
    };
    match rows {
        Rows::Summary => {
            let done = pass(args, rows, items, None)?;
            ser.collect_seq(std::iter::once(&done.filesystem))?;
            return Ok(LeftOut::of(done));
        }
        Rows::PerFile => {
            ser.collect_seq(items.filter_map(ok).map(|m| summary::mapped_summary(&m)))?;
        }
        Rows::Extents => {
            ser.collect_seq(items.filter_map(ok).flat_map(|m| m.extents))?;
        }
    }
    Ok(left_out.into_inner())
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || c.to_string().contains("Broken pipe")
    })
}
