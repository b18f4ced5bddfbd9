//! `fslab compare A B`: two bundles side by side (lkp ncompare style); `fslab compare
//! BUNDLE --by AXIS`: the values of one axis of one bundle against each other (kernel A/B).

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
    /// The new bundle directory, compared against the base (not with --by).
    #[arg(required_unless_present = "by", conflicts_with = "by")]
    pub new: Option<PathBuf>,
    /// Compare the values of this axis of the one bundle against each other (`kernel`:
    /// a kernel A/B), point by point on the other axes. Both sides then come from the
    /// same run, their replicates interleaved in its randomised blocks, and each row says
    /// what it could have detected at 90 % power.
    #[arg(long, value_name = "AXIS")]
    pub by: Option<String>,
    /// With --by: the axis value the others are compared against (default: the first).
    #[arg(long, value_name = "VALUE", requires = "by")]
    pub against: Option<String>,
    /// A calibration bundle of this host (`fslab calibrate`): its measured
    /// false-positive rate (A/A) or power (injected) of `fslab compare`'s verdict is
    /// printed with the comparison, with every way its design differs from this one.
    #[arg(long, value_name = "BUNDLE")]
    pub calibration: Option<PathBuf>,
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

/// The calibration record of `--calibration`, if given.
fn calibration(args: &CompareArgs) -> anyhow::Result<Option<fslab::store::CalibrationRecord>> {
    let Some(dir) = &args.calibration else {
        return Ok(None);
    };
    let b = Bundle::open(dir).with_context(|| format!("--calibration {}", dir.display()))?;
    let rec = b.manifest().calibration.clone().with_context(|| {
        format!(
            "--calibration {}: not a calibration bundle (its manifest has no `calibration`; make one with `fslab calibrate`)",
            dir.display()
        )
    })?;
    Ok(Some(rec))
}

fn print(text: &str) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        // A closed pipe (`| head`) is not an error.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// `--by AXIS`: one bundle's axis values against each other.
fn by_axis(args: &CompareArgs, axis: &str) -> anyhow::Result<ExitCode> {
    let bundle =
        Bundle::open(&args.base).with_context(|| format!("reading {}", args.base.display()))?;
    let runs = bundle
        .runs()
        .with_context(|| format!("reading {}", args.base.display()))?;
    let warmup = args
        .warmup
        .or_else(|| recorded_warmup(bundle.manifest()))
        .unwrap_or(1);
    let opts = CompareOptions {
        metric: args.metric.clone(),
        warmup: Warmup::from_count(warmup),
        alpha: args.alpha,
        threshold_pct: args.threshold,
    };
    let cal = calibration(args)?;
    let all = fslab::analysis::compare_axis::compare_by_axis(
        &runs,
        axis,
        args.against.as_deref(),
        &opts,
    )?;
    let order = match &bundle.manifest().run_order {
        Some(o) if o.order == fslab::store::RunOrder::Random => format!(
            "both sides from one run, their replicates interleaved in randomised blocks{}",
            o.seed.map(|s| format!(" (seed {s})")).unwrap_or_default()
        ),
        Some(_) => "both sides from one run, but in a FIXED order (point by point): drift of the host is confounded with the axis".to_string(),
        None => "both sides from one run; its run order is not recorded".to_string(),
    };
    if args.json {
        return print(&(serde_json::to_string_pretty(&all)? + "\n"));
    }
    let mut text = String::new();
    for mut c in all {
        let label = |v: &str| format!("{axis}={v} of {}", bundle.describe());
        c.comparison.base_label = label(&c.base_value);
        c.comparison.new_label = label(&c.new_value);
        text.push_str(&format!(
            "== {axis}: {} → {} ({order})\n",
            c.base_value, c.new_value
        ));
        text.push_str(&c.render_text());
        if let Some(rec) = &cal {
            let n = c
                .comparison
                .rows
                .iter()
                .map(|r| r.base_n.min(r.new_n))
                .min();
            text.push_str(&format!(
                "{}\n",
                fslab::analysis::compare_axis::calibration_note(rec, &opts, n)
            ));
        }
        text.push('\n');
    }
    print(&text)
}

pub fn run(args: CompareArgs) -> anyhow::Result<ExitCode> {
    if let Some(axis) = args.by.clone() {
        return by_axis(&args, &axis);
    }
    let Some(new_dir) = args.new.clone() else {
        anyhow::bail!("compare: give the new bundle, or --by AXIS to compare one bundle's axis");
    };
    let base =
        Bundle::open(&args.base).with_context(|| format!("reading {}", args.base.display()))?;
    let new = Bundle::open(&new_dir).with_context(|| format!("reading {}", new_dir.display()))?;
    let base_runs = base
        .runs()
        .with_context(|| format!("reading {}", args.base.display()))?;
    let new_runs = new
        .runs()
        .with_context(|| format!("reading {}", new_dir.display()))?;
    let warmup = args
        .warmup
        .or_else(|| recorded_warmup(new.manifest()))
        .or_else(|| recorded_warmup(base.manifest()))
        .unwrap_or(1);
    let cal = calibration(&args)?;
    let opts = CompareOptions {
        metric: args.metric.clone(),
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
        fslab::Bundle::open(&new_dir),
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
    let mut text = if args.json {
        serde_json::to_string_pretty(&comparison)? + "\n"
    } else {
        comparison.render_text()
    };
    if let (Some(rec), false) = (&cal, args.json) {
        let n = comparison.rows.iter().map(|r| r.base_n.min(r.new_n)).min();
        text.push_str(&format!(
            "\n{}\n",
            fslab::analysis::compare_axis::calibration_note(rec, &opts, n)
        ));
    }
    print(&text)
}
