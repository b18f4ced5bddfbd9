//! `fslab parse KIND [FILE|-] [--json|--csv]`: a tool's text output to rows.

use anyhow::Context;
use fslab::parse::{self, Kind, Parsed};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
#[command(
    about = "Parse a tool's text output (a file, stdin, a pasted mail) into rows",
    long_about = "Parse a tool's text output (a file, stdin, a pasted mail) into rows.\n\n\
        KIND is one of: mkfs.xfs, xfs_info, mke2fs, dumpe2fs, time, e2fsck, debugfs-stat, \
        debugfs-ex, filefrag, xfs_bmap, xfs_io-fiemap, xfs_io-fsmap, fs_mark, blockmap, fio, \
        fio-terse, perf-stat (`perf stat -x,`), perf-stat-human (perf stat's default output), \
        truncate-path. The fields of each are described in docs/parse-formats.md.\n\n\
        Block maps (filefrag, debugfs-stat, debugfs-ex, xfs_bmap, xfs_io-fiemap, blockmap): \
        --json prints one object per file with its rows under `extents`; --csv and the \
        table print the rows. debugfs does not print the block size: give it with \
        --block-size, or the byte columns are null (with a warning).\n\n\
        Lines the parser does not understand are reported on stderr with their line \
        numbers. Exit status: 0 when rows were parsed (also a partial result, which is \
        said on stderr), 1 when the text could not be parsed, 2 on other errors."
)]
pub struct ParseArgs {
    /// The tool whose output this is
    #[arg(value_parser = parse_kind, long_help = kinds_help())]
    pub kind: Kind,
    /// File to read; `-` or nothing reads stdin
    pub file: Option<PathBuf>,
    /// Print a JSON array of objects
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV with a header line
    #[arg(long)]
    pub csv: bool,
    /// The filesystem block size in bytes, for block maps that print block numbers
    /// without it (debugfs-stat, debugfs-ex); `dumpe2fs -h` prints it as `Block size:`
    #[arg(long, value_name = "N")]
    pub block_size: Option<u64>,
}

/// `--help` for KIND: every kind, from [`Kind::ALL`], so that the list cannot drift.
fn kinds_help() -> String {
    let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
    format!(
        "The tool whose output this is: {} (fields in docs/parse-formats.md)",
        names.join(", ")
    )
}

fn parse_kind(s: &str) -> Result<Kind, fslab::parse::ParseError> {
    s.parse::<Kind>()
}

pub fn run(args: ParseArgs) -> anyhow::Result<ExitCode> {
    let (bytes, source) = match args.file.as_deref() {
        None => (read_stdin()?, "<stdin>".to_string()),
        Some(p) if p.as_os_str() == "-" => (read_stdin()?, "<stdin>".to_string()),
        Some(p) => (
            std::fs::read(p).with_context(|| format!("reading {}", p.display()))?,
            p.display().to_string(),
        ),
    };
    // Mail archives are not always UTF-8; a replaced byte is better than no parse.
    let text = String::from_utf8_lossy(&bytes);
    let opts = match args.block_size {
        Some(n) => parse::map::MapOptions::given(n),
        None => parse::map::MapOptions::default(),
    };
    if args.block_size.is_some() && !matches!(args.kind, Kind::DebugfsStat | Kind::DebugfsEx) {
        eprintln!(
            "fslab parse: --block-size is ignored for {}: its output states its unit",
            args.kind
        );
    }
    let parsed = match parse::parse_json_with(args.kind, &text, opts) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("fslab parse: {source}: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    for w in &parsed.warnings {
        let at = if w.line > 0 {
            format!("{source}:{}", w.line)
        } else {
            source.clone()
        };
        let text = w.text.trim_end();
        if text.is_empty() {
            eprintln!("fslab parse: {at}: {}", w.reason);
        } else {
            eprintln!("fslab parse: {at}: {}: {text}", w.reason);
        }
    }
    if parsed.partial {
        eprintln!(
            "fslab parse: {source}: the {} output looks truncated; the {} rows are what was read before it ends",
            args.kind,
            parsed.json.len()
        );
    }
    let written = (|| -> std::io::Result<()> {
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        if args.json {
            serde_json::to_writer_pretty(&mut out, &parsed.json_document())?;
            writeln!(out)?;
        } else if args.csv {
            write_csv(&mut out, &parsed)?;
        } else {
            writeln!(out, "{}", grid(&parsed))?;
        }
        out.flush()
    })();
    match written {
        // `fslab parse … | head` is fine.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        other => {
            other.context("writing to stdout")?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn read_stdin() -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    std::io::stdin()
        .read_to_end(&mut buf)
        .context("reading stdin")?;
    Ok(buf)
}

fn columns(parsed: &Parsed) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for obj in &parsed.json {
        for k in obj.keys() {
            if !names.iter().any(|n| n == k) {
                names.push(k.clone());
            }
        }
    }
    names
}

fn cell(v: Option<&serde_json::Value>) -> String {
    match v {
        None | Some(serde_json::Value::Null) => String::new(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn grid(parsed: &Parsed) -> String {
    if parsed.json.is_empty() {
        return format!("({}: no rows)", parsed.kind);
    }
    let names = columns(parsed);
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED)
        .set_header(names.clone());
    for obj in &parsed.json {
        t.add_row(names.iter().map(|n| cell(obj.get(n))).collect::<Vec<_>>());
    }
    t.to_string()
}

/// CSV from the same JSON objects the `--json` output prints, so both have the same
/// columns in the same order (an empty result prints nothing).
fn write_csv(out: &mut impl Write, parsed: &Parsed) -> std::io::Result<()> {
    let names = columns(parsed);
    if names.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "{}",
        names
            .iter()
            .map(|n| csv_field(n))
            .collect::<Vec<_>>()
            .join(",")
    )?;
    for obj in &parsed.json {
        let line: Vec<String> = names.iter().map(|n| csv_field(&cell(obj.get(n)))).collect();
        writeln!(out, "{}", line.join(","))?;
    }
    Ok(())
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
