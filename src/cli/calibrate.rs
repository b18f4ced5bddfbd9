//! `fslab calibrate EXPERIMENT`: one point run as two sides in interleaved pairs, and the
//! false-positive rate (A/A) or the power and coverage (a known slowdown injected into
//! side B) of fslab's verdicts on this host (`run::calibrate`).

use anyhow::Context;
use fslab::analysis::calibration::rate_text;
use fslab::run::calibrate::{calibrate, CalibrateOptions};
use fslab::run::{Event, RunError, RunOptions};
use fslab::store::{CalibrationRecord, Injection, RateEvent};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Experiment file, or its id in ./experiments.
    #[arg(required_unless_present = "from")]
    pub experiment: Option<String>,
    /// Run nothing: compute a finished (or partial) calibration bundle's comparisons
    /// again from its runs, with --metric, --per-side or --warmup changed, and print
    /// them (the bundle is not changed).
    #[arg(long, value_name = "BUNDLE", conflicts_with_all = ["experiment", "inject", "output", "point", "seed"])]
    pub from: Option<PathBuf>,
    /// Profile to use (default: the experiment's default).
    #[arg(long, short)]
    pub profile: Option<String>,
    /// Override one variable or matrix axis: NAME=VALUE.
    #[arg(long = "set", short = 's', value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// The point both sides run (its id, as `fslab plan` prints it); needed when the
    /// plan has more than one.
    #[arg(long, value_name = "ID")]
    pub point: Option<String>,
    /// Pairs: replicates a side, run in blocks of one replicate of each side in random
    /// order.
    #[arg(long, default_value_t = 200)]
    pub pairs: u32,
    /// Replicates a side per comparison (default: the point's `replicates` when at
    /// least 3, else 3); comparison c takes pairs (c − 1)·K + 1 … c·K.
    #[arg(long, value_name = "K")]
    pub per_side: Option<u32>,
    /// A known slowdown injected into side B: `delay:pct=P` (any workload: the command
    /// waits P % of its own time before it exits), `stress-delay:pct=P` (`fslab
    /// stress`), `fio-spin:usec=U,blocks=B,ios=N` (fio), or
    /// `medium:device=NAME,pct=P` (a device with a disk model: side B's model charges
    /// every request P % longer), or `throttle:device=NAME,read_iops=N,…` (a cgroup
    /// block-I/O throttle; its effect is not known in advance, so no coverage). Without
    /// it: an A/A calibration.
    #[arg(long, value_name = "SPEC")]
    pub inject: Option<String>,
    /// The runs column compared (default `wall_s`), or `cpu_s`: `user_s + sys_s`, the
    /// process tree's CPU time, which waiting for a CPU does not add to, or a parsed
    /// table's column as `TABLE.COLUMN` (`fio.runtime_ms`: fio's own time for the job,
    /// without its start and exit; the largest over the iteration's jobs and
    /// directions).
    #[arg(long)]
    pub metric: Option<String>,
    /// Leading iterations of each replicate left out as warm-up (default: 1 when the
    /// workload repeats, else 0).
    #[arg(long)]
    pub warmup: Option<usize>,
    /// The level of both rules: `fslab compare`'s test and the tier rule's interval
    /// (1 − α). Default 0.05 (the claims' level); with --from, the bundle's.
    #[arg(long)]
    pub alpha: Option<f64>,
    /// Noise threshold in percent (`fslab compare`'s, and the band of the tier rule's
    /// "the same" claim). Default 2; with --from, the bundle's.
    #[arg(long)]
    pub threshold: Option<f64>,
    /// Move the finished bundle here (it must not exist). Default: it stays under the
    /// results directory.
    #[arg(long, short = 'o', value_name = "BUNDLE")]
    pub output: Option<PathBuf>,
    /// Where the bundle is written while it runs (default: $FSLAB_RESULTS_DIR or ./results).
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// fslab's work directory for images and mount points.
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
    /// The seed of the random order within each pair (default: a fresh one; recorded).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// No progress lines.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(b) = &args.from {
        return again(&args, b);
    }
    let Some(experiment) = args.experiment.clone() else {
        anyhow::bail!("name an experiment (or --from BUNDLE)");
    };
    let injection = args
        .inject
        .as_deref()
        .map(str::parse::<Injection>)
        .transpose()?;
    if let Some(out) = &args.output {
        if out.exists() {
            anyhow::bail!(
                "-o {}: it exists; name a bundle directory that does not",
                out.display()
            );
        }
    }
    check_levels(&args)?;
    let plan = super::PlanArgs {
        experiment,
        profile: args.profile.clone(),
        set: args.set.clone(),
    }
    .plan()?;
    let o = CalibrateOptions {
        point: args.point.clone(),
        pairs: args.pairs,
        per_side: args.per_side,
        injection,
        metric: args.metric.clone().unwrap_or_else(|| "wall_s".into()),
        warmup: args.warmup,
        alpha: args.alpha.unwrap_or(0.05),
        threshold_pct: args
            .threshold
            .unwrap_or(fslab::analysis::DEFAULT_THRESHOLD_PCT),
    };
    // Refused designs are said before anything runs.
    fslab::run::calibrate::calibration_plan(&plan, &o)?;
    let mut opts = RunOptions::default().with_signal_handlers()?;
    if let Some(r) = &args.results {
        opts.results_dir = r.clone();
    }
    if let Some(w) = &args.work_dir {
        opts.work_dir = w.clone();
    }
    opts.seed = args.seed;
    let quiet = args.quiet;
    let pairs = args.pairs;
    let opts = opts.with_events(move |e| match e {
        Event::Started { bundle, seed, .. } => eprintln!(
            "fslab: calibrating, {pairs} pairs{} → {}",
            seed.map(|s| format!(" (seed {s})")).unwrap_or_default(),
            bundle.display()
        ),
        Event::ReplicateStarted { position, of, .. } if !quiet && position % 20 == 1 => {
            eprintln!("fslab: [{position}/{of}]")
        }
        Event::PointFinished {
            id,
            status,
            reason: Some(r),
            ..
        } => eprintln!("fslab: point {id}: {status}: {r}"),
        Event::Reclaimed(r) => eprintln!("fslab: {}", r.describe()),
        Event::Warning(w) => eprintln!("fslab: warning: {w}"),
        _ => {}
    });
    let t0 = Instant::now();
    let bundle = match calibrate(&plan, &o, opts) {
        Ok(b) => b,
        Err(RunError::Interrupted { bundle }) => {
            eprintln!("fslab: interrupted; all devices and mounts released. Partial bundle (its calibration record counts what finished):");
            println!("{}", bundle.display());
            return Ok(ExitCode::from(130));
        }
        Err(e) => return Err(e.into()),
    };
    let wall = t0.elapsed();
    let record = bundle
        .manifest()
        .calibration
        .clone()
        .context("the bundle has no calibration record")?;
    let ok = bundle.manifest().status == fslab::store::BundleStatus::Complete;
    let path = match &args.output {
        Some(out) => move_bundle(bundle.path(), out)?,
        None => bundle.path().to_path_buf(),
    };
    print!("{}", render(&record, Some(wall), &path));
    Ok(if ok && record.comparisons > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `--alpha` and `--threshold` as given, refused when they cannot be a level or a band.
fn check_levels(args: &Args) -> anyhow::Result<()> {
    if let Some(a) = args.alpha {
        if !(a > 0.0 && a < 1.0) {
            anyhow::bail!("--alpha {a}: expected a level above 0 and below 1 (e.g. 0.05 or 0.01)");
        }
    }
    if let Some(t) = args.threshold {
        if !(t.is_finite() && t >= 0.0) {
            anyhow::bail!("--threshold {t}: expected a percentage of 0 or more (e.g. 2 or 1)");
        }
    }
    Ok(())
}

/// `--from BUNDLE`: the comparisons again, with the design changed as asked.
fn again(args: &Args, dir: &Path) -> anyhow::Result<ExitCode> {
    check_levels(args)?;
    let b = fslab::Bundle::open(dir).with_context(|| format!("reading {}", dir.display()))?;
    let rec = b.manifest().calibration.clone().with_context(|| {
        format!(
            "{}: not a calibration bundle (its manifest has no `calibration`)",
            dir.display()
        )
    })?;
    let mut design = rec.design;
    if let Some(m) = &args.metric {
        design.metric = m.clone();
    }
    if let Some(k) = args.per_side {
        if k < 2 {
            anyhow::bail!("--per-side {k}: a comparison needs at least 2 replicates a side");
        }
        design.per_side = k;
    }
    if let Some(w) = args.warmup {
        design.warmup = w;
    }
    if let Some(a) = args.alpha {
        design.alpha = a;
    }
    if let Some(t) = args.threshold {
        design.threshold_pct = t;
    }
    let mut runs = b
        .runs()
        .with_context(|| format!("reading {}", dir.display()))?;
    if let Some((table, _)) = fslab::analysis::calibration::table_metric(&design.metric) {
        let t = b.table(table).with_context(|| {
            format!(
                "--metric {}: reading the table `{table}` of {}",
                design.metric,
                dir.display()
            )
        })?;
        runs = fslab::analysis::calibration::with_table_metric(&runs, &design.metric, &t)?;
    }
    let (_, again) = fslab::analysis::calibration::reanalyse(&runs, &design)?;
    print!("{}", render(&again, None, dir));
    Ok(ExitCode::SUCCESS)
}

/// Rename the bundle to `out` (its parent made if needed).
fn move_bundle(from: &Path, out: &Path) -> anyhow::Result<PathBuf> {
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("-o {}: making {}", out.display(), parent.display()))?;
    }
    std::fs::rename(from, out).with_context(|| {
        format!(
            "-o {}: moving the bundle there (it is complete at {})",
            out.display(),
            from.display()
        )
    })?;
    Ok(out.to_path_buf())
}

/// The calibration's summary for people: design, rates with their intervals.
pub fn render(r: &CalibrationRecord, wall: Option<Duration>, bundle: &Path) -> String {
    let d = &r.design;
    let rate = |e: RateEvent| r.rates.iter().find(|x| x.event == e);
    let mut s = String::new();
    let kind = if d.injection.is_some() {
        "injected"
    } else {
        "A/A"
    };
    s.push_str(&format!("calibration ({kind}) of point {}\n", d.point));
    s.push_str(&format!("  bundle:       {}\n", bundle.display()));
    s.push_str(&format!(
        "  pairs:        {} ({} replicates a side per comparison)\n",
        d.pairs, d.per_side
    ));
    s.push_str(&format!("  comparisons:  {}\n", r.comparisons));
    match wall {
        Some(w) => s.push_str(&format!("  wall time:    {:.1} s\n", w.as_secs_f64())),
        None => s.push_str("  wall time:    (computed again from the bundle's runs)\n"),
    }
    s.push_str(&format!(
        "  metric:       {} (warm-up {}), α = {}, threshold {} %\n",
        d.metric, d.warmup, d.alpha, d.threshold_pct
    ));
    match &d.injection {
        None => s.push_str("  injection:    none\n"),
        Some(i) => s.push_str(&format!("  injection:    {i}\n")),
    }
    if let Some(t) = r.truth {
        s.push_str(&format!(
            "  true ratio:   {} ({})\n",
            fslab::analysis::fmt_sig(t, 5),
            r.truth_note.as_deref().unwrap_or("")
        ));
    }
    match r.detectable_median {
        Some(x) => s.push_str(&format!(
            "  detectable:   ≥ {}× B ÷ A at 90 % power (the median over the comparisons, each at its own spread)\n",
            fslab::analysis::fmt_sig(x, 4)
        )),
        None => s.push_str("  detectable:   not known (no comparison has a bounded interval)\n"),
    }
    let headline: &[(RateEvent, &str)] = if d.injection.is_some() {
        &[
            (RateEvent::TierSlower, "tier rule power"),
            (RateEvent::CompareSignificantSlower, "compare power"),
            (RateEvent::IntervalCovers, "coverage"),
        ]
    } else {
        &[
            (RateEvent::TierDiffers, "tier rule false-positive rate"),
            (
                RateEvent::TierSlower,
                "tier rule one-sided false-positive rate",
            ),
            (RateEvent::CompareSignificant, "compare false-positive rate"),
        ]
    };
    for (e, name) in headline {
        if let Some(x) = rate(*e) {
            s.push_str(&format!("  {name}: {}\n", rate_text(x)));
        }
    }
    s.push_str("every rate (95 % Clopper–Pearson intervals):\n");
    for x in &r.rates {
        s.push_str(&format!(
            "  {:<27} {}: {}{}\n",
            serde_json::to_value(x.event)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            x.meaning,
            rate_text(x),
            x.nominal
                .map(|n| format!(" [nominal {} %]", fslab::analysis::fmt_sig(100.0 * n, 3)))
                .unwrap_or_default()
        ));
    }
    s.push_str(&format!("stated: {}\n", r.stated));
    s
}
