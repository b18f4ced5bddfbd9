//! `fslab report BUNDLE [--compare B] -o FILE.html|FILE.md`.

use anyhow::Context;
use fslab::analysis::Warmup;
use fslab::report::{write_report, ReportOptions};
use fslab::Bundle;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The bundle directory to report on.
    pub bundle: PathBuf,
    /// Another bundle to compare against (taken as the base; BUNDLE is the new run).
    #[arg(long)]
    pub compare: Option<PathBuf>,
    /// Output file: .html (self-contained, charts inline) or .md (plain-text tables).
    #[arg(short = 'o', long)]
    pub output: PathBuf,
    /// The runs column of the charts and the comparison.
    #[arg(long, default_value = "wall_s")]
    pub metric: String,
    /// Leading iterations of each point left out as warm-up.
    #[arg(long, default_value_t = 1)]
    pub warmup: usize,
}

pub fn run(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let bundle =
        Bundle::open(&args.bundle).with_context(|| format!("reading {}", args.bundle.display()))?;
    let other = match &args.compare {
        Some(p) => Some(Bundle::open(p).with_context(|| format!("reading {}", p.display()))?),
        None => None,
    };
    let opts = ReportOptions {
        metric: args.metric,
        warmup: if args.warmup == 0 {
            Warmup::None
        } else {
            Warmup::First(args.warmup)
        },
        ..ReportOptions::default()
    };
    write_report(&bundle, other.as_ref(), &opts, &args.output)?;
    eprintln!("fslab: wrote {}", args.output.display());
    Ok(ExitCode::SUCCESS)
}
