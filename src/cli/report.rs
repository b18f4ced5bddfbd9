//! `fslab report BUNDLE [--compare B] -o FILE.html|FILE.md`.

use anyhow::Context;
use fslab::analysis::{recorded_warmup, Warmup};
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
    /// Leading iterations of each replicate left out as warm-up (default: the warm-up
    /// the run's adaptive repetitions used, else 1).
    #[arg(long)]
    pub warmup: Option<usize>,
    /// Noise threshold of the comparison in percent: a significant change smaller
    /// than this is shown as "within noise threshold".
    #[arg(long, default_value_t = fslab::analysis::DEFAULT_THRESHOLD_PCT)]
    pub threshold: f64,
}

pub fn run(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let bundle =
        Bundle::open(&args.bundle).with_context(|| format!("reading {}", args.bundle.display()))?;
    let other = match &args.compare {
        Some(p) => Some(Bundle::open(p).with_context(|| format!("reading {}", p.display()))?),
        None => None,
    };
    let warmup = args
        .warmup
        .or_else(|| recorded_warmup(bundle.manifest()))
        .unwrap_or(1);
    let opts = ReportOptions {
        metric: args.metric,
        warmup: Warmup::from_count(warmup),
        threshold_pct: args.threshold,
        ..ReportOptions::default()
    };
    write_report(&bundle, other.as_ref(), &opts, &args.output)?;
    eprintln!("fslab: wrote {}", args.output.display());
    Ok(ExitCode::SUCCESS)
}
