//! `fslab compare A B`: two bundles side by side (lkp ncompare style).

use anyhow::Context;
use fslab::analysis::{compare_runs, recorded_warmup, CompareOptions, Warmup};
use fslab::Bundle;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The base bundle directory.
    pub base: PathBuf,
    /// The new bundle directory, compared against the base.
    pub new: PathBuf,
    /// The runs column to compare.
    #[arg(long, default_value = "wall_s")]
    pub metric: String,
    /// Leading iterations of each replicate left out as warm-up (default: the warm-up the
    /// run's adaptive repetitions used, else 1).
    #[arg(long)]
    pub warmup: Option<usize>,
    /// Significance level of Welch's t-test, on Holm-adjusted p-values (marks: * < α,
    /// ** < α/5, *** < α/50).
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Noise threshold in percent: a significant change smaller than this is shown as
    /// "within noise threshold".
    #[arg(long, default_value_t = fslab::analysis::DEFAULT_THRESHOLD_PCT)]
    pub threshold: f64,
    /// Print the comparison as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let base =
        Bundle::open(&args.base).with_context(|| format!("reading {}", args.base.display()))?;
    let new = Bundle::open(&args.new).with_context(|| format!("reading {}", args.new.display()))?;
    let base_runs = base
        .runs()
        .with_context(|| format!("reading {}", args.base.display()))?;
    let new_runs = new
        .runs()
        .with_context(|| format!("reading {}", args.new.display()))?;
    let warmup = args
        .warmup
        .or_else(|| recorded_warmup(new.manifest()))
        .or_else(|| recorded_warmup(base.manifest()))
        .unwrap_or(1);
    let opts = CompareOptions {
        metric: args.metric,
        warmup: Warmup::from_count(warmup),
        alpha: args.alpha,
        threshold_pct: args.threshold,
    };
    let mut comparison = compare_runs(
        &base_runs,
        &new_runs,
        Some(base.manifest()),
        Some(new.manifest()),
        &opts,
    )?;
    // Measurements from differing machines or tool versions: said, not hidden.
    if let (Ok(b), Ok(n)) = (
        fslab::Bundle::open(&args.base),
        fslab::Bundle::open(&args.new),
    ) {
        let (b, n) = (b.manifest(), n.manifest());
        let mut warnings = fslab::store::merge::compared_differences(b, n);
        warnings.extend(fslab::store::merge::shard_differences(b));
        warnings.extend(fslab::store::merge::shard_differences(n));
        for w in warnings {
            eprintln!("fslab: warning: {w}");
        }
    }
    comparison.base_label = base.describe();
    comparison.new_label = new.describe();
    let text = if args.json {
        serde_json::to_string_pretty(&comparison)? + "\n"
    } else {
        comparison.render_text()
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        // A closed pipe (`| head`) is not an error.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}
