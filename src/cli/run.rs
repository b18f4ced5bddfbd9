use fslab::run::{Event, RunError, RunOptions};
use fslab::store::{ClaimState, PointStatus, RunOrder};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Experiment file, or its id in ./experiments. With --resume it may be left out:
    /// the bundle keeps the experiment, profile and overrides it was started with.
    #[arg(required_unless_present = "resume")]
    pub experiment: Option<String>,
    /// Profile to use (default: the experiment's default, usually `quick`).
    #[arg(long, short)]
    pub profile: Option<String>,
    /// Override one variable or matrix axis: NAME=VALUE (VALUE is YAML: `3`, `xfs`, `[ext4, xfs]`).
    #[arg(long = "set", short = 's', value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Where result bundles go (default: $FSLAB_RESULTS_DIR or ./results).
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// fslab's work directory for images and mount points (default: $FSLAB_WORK_DIR or /var/lib/fslab).
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
    /// Stop at the first point that fails.
    #[arg(long)]
    pub fail_fast: bool,
    /// Use a real block device for a logical device: NAME=PATH (repeatable). PATH must be
    /// listed in `scratch_devices:` of ~/.config/fslab/config.yaml ($FSLAB_CONFIG,
    /// $XDG_CONFIG_HOME) or in $FSLAB_SCRATCH_DEVICES, and unused; its data is destroyed.
    #[arg(long = "device", value_name = "NAME=PATH")]
    pub device: Vec<String>,
    /// Finish an interrupted bundle instead of starting a new one.
    #[arg(long, value_name = "BUNDLE")]
    pub resume: Option<PathBuf>,
    /// Run only shard K of N of the plan's points (round-robin in plan order: point i
    /// runs in shard i mod N + 1); merge the shards' bundles with `fslab merge`.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<fslab::shard::Shard>,
    /// The order of the (point, replicate) pairs. `random` (the default): randomised
    /// blocks, block r being the r-th replicate of every point in a random permutation,
    /// the blocks in order, so that drift of the host is not confounded with the
    /// points. `fixed`: point by point, each point's replicates back to back (for
    /// debugging). The manifest records the order (`run_order`); a resume keeps it.
    #[arg(long, value_name = "random|fixed", conflicts_with = "resume")]
    pub order: Option<RunOrder>,
    /// The seed of the random order (default: a fresh one). The manifest records it,
    /// so `--seed N` runs a bundle's order again.
    #[arg(long, value_name = "N", conflicts_with = "resume")]
    pub seed: Option<u64>,
    /// After the run, execute this notebook on the bundle (repeatable) and store the
    /// executed copy and its HTML in it: notebook/NAME.ipynb and notebook/NAME.html.
    #[arg(long = "notebook", value_name = "NB.ipynb")]
    pub notebooks: Vec<PathBuf>,
    /// Run every point in a guest of this kernel instead of on the host's own
    /// (`fslab kernels install uml-bookworm`, `fslab kernels list`): each replicate
    /// boots its own User-Mode Linux guest, its devices are image files the guest sees
    /// as /dev/ubdX, and the manifest and every verdict say the numbers were measured
    /// there (docs/kernels.md). `host` is the host's kernel (the default).
    #[arg(long, value_name = "NAME")]
    pub kernel: Option<String>,
    /// The guest's memory with --kernel (`mem=`; default 1GiB); the manifest records it.
    #[arg(long, value_name = "SIZE")]
    pub guest_mem: Option<bytesize::ByteSize>,
    /// After the plan's replicates, look at the claims and add randomised blocks of
    /// replicates (every point of the claims still undecided, interleaved) until each
    /// claim is decided, or the budget or --max-replicates runs out. The stopping rule
    /// is a group-sequential design (Lan–DeMets O'Brien–Fleming-type alpha spending,
    /// overall α = 0.05): each look's intervals are repeated confidence intervals, so the
    /// repeated looks do not raise the chance of a false verdict. The manifest records
    /// every look and why it stopped (`sequential`; docs/statistics.md).
    #[arg(long, conflicts_with_all = ["resume", "shard"])]
    pub until_decided: bool,
    /// The power the next block of --until-decided is sized for (default 0.9); implies
    /// --until-decided.
    #[arg(long, value_name = "P", value_parser = parse_power, conflicts_with_all = ["resume", "shard"])]
    pub power: Option<f64>,
    /// With --until-decided: the wall time the whole run may take (`40m`, `2h`, `90s`).
    /// A block starts only when it fits, at the replicates' own measured times.
    #[arg(long, value_name = "DURATION", value_parser = parse_budget)]
    pub budget: Option<std::time::Duration>,
    /// With --until-decided: the most replicates a point may get (the design's
    /// maximum; default: what fits in --budget, else 20).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..))]
    pub max_replicates: Option<u32>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// A value of `--power` or `--budget` that cannot be used.
#[derive(Debug, thiserror::Error)]
enum FlagError {
    #[error("`{0}` is not a number: write a power such as 0.9")]
    NotANumber(String),
    #[error("{0} is not a power: it must be strictly between 0 and 1, such as 0.9")]
    NotAPower(f64),
    #[error("`{given}` is not a duration ({why}): write e.g. `90s`, `40m`, `2h`")]
    NotADuration { given: String, why: String },
    #[error("a budget of 0 leaves no time to run anything")]
    ZeroBudget,
}

fn parse_power(s: &str) -> Result<f64, FlagError> {
    let p: f64 = s
        .trim()
        .parse()
        .map_err(|_| FlagError::NotANumber(s.to_string()))?;
    if p > 0.0 && p < 1.0 {
        Ok(p)
    } else {
        Err(FlagError::NotAPower(p))
    }
}

fn parse_budget(s: &str) -> Result<std::time::Duration, FlagError> {
    let d = humantime::parse_duration(s.trim()).map_err(|e| FlagError::NotADuration {
        given: s.to_string(),
        why: e.to_string(),
    })?;
    if d.is_zero() {
        return Err(FlagError::ZeroBudget);
    }
    Ok(d)
}

pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    let until = args.until_decided || args.power.is_some();
    if !until && (args.budget.is_some() || args.max_replicates.is_some()) {
        anyhow::bail!(
            "--budget and --max-replicates bound the blocks of --until-decided: add --until-decided (or --power P), or drop them"
        );
    }
    let plan = match (&args.experiment, &args.resume) {
        (Some(e), _) => super::PlanArgs {
            experiment: e.clone(),
            profile: args.profile.clone(),
            set: args.set.clone(),
        }
        .plan()?,
        (None, Some(bundle)) => {
            if args.profile.is_some() || !args.set.is_empty() {
                anyhow::bail!(
                    "--resume without an experiment uses the bundle's profile and overrides; drop --profile/--set, or name the experiment"
                );
            }
            fslab::run::plan_of_bundle(bundle)?
        }
        (None, None) => anyhow::bail!("name an experiment (or --resume BUNDLE)"),
    };
    let mut opts = RunOptions::default().with_signal_handlers()?;
    if let Some(r) = args.results {
        opts.results_dir = r;
    }
    if let Some(w) = args.work_dir {
        opts.work_dir = w;
    }
    opts.fail_fast = args.fail_fast;
    let mem = args
        .guest_mem
        .map_or(fslab::run::target::uml::DEFAULT_GUEST_MEM, |m| m.as_u64());
    if mem < (64 << 20) {
        anyhow::bail!("--guest-mem {mem} bytes: a guest needs at least 64MiB");
    }
    // A `kernel` variable (a matrix axis) puts the points on several kernels. It names
    // each point's kernel even when a profile pins it to `host` alone: `--kernel` would
    // then run points named `kernel=host` in a guest.
    let named = plan
        .points
        .iter()
        .any(|p| p.vars.contains_key(fslab::run::target::KERNEL_VAR));
    let axis = match args.kernel.as_deref() {
        Some(k) if k != "host" && named => None,
        _ => fslab::run::target::for_plan(&plan, mem)?,
    };
    match (args.kernel.as_deref(), axis) {
        (Some(k), _) if k != "host" && named => anyhow::bail!(
            "--kernel {k}: the experiment names each point's kernel in its `{}` variable; choose with --set {}={k}",
            fslab::run::target::KERNEL_VAR,
            fslab::run::target::KERNEL_VAR
        ),
        (_, Some(axis)) => opts.target = Arc::new(axis),
        (None | Some("host"), None) => {
            if args.guest_mem.is_some() {
                anyhow::bail!(
                    "--guest-mem is the memory of a guest: it needs --kernel NAME or a `kernel` axis"
                );
            }
        }
        (Some(name), None) => {
            opts.target = Arc::new(fslab::run::target::UmlTarget::new(name, mem)?);
        }
    }
    opts.shard = args.shard;
    if args.order == Some(RunOrder::Fixed) && args.seed.is_some() {
        anyhow::bail!("--seed draws a random order; --order fixed has none: drop one of them");
    }
    opts.order = args.order.unwrap_or_default();
    opts.seed = args.seed;
    opts.device_map = args
        .device
        .iter()
        .map(|d| fslab::devices::policy::parse_mapping(d))
        .collect::<Result<_, _>>()?;
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(0)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} iterations  {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let current = Arc::new(Mutex::new(String::new()));
    let b = bar.clone();
    let quiet = args.quiet;
    let cur = Arc::clone(&current);
    let opts = opts.with_events(move |e| match e {
        Event::Reclaimed(r) => {
            let m = format!("fslab: {}", r.describe());
            // Also with --quiet: something was wrong before this run.
            if quiet {
                eprintln!("{m}");
            } else {
                b.println(m);
            }
        }
        Event::Started {
            bundle,
            iterations,
            points,
            replicates,
            order,
            seed,
        } => {
            b.set_length(*iterations);
            let seed = seed.map(|s| format!(" (seed {s})")).unwrap_or_default();
            b.println(format!(
                "fslab: {points} points, {replicates} replicates in {order} order{seed} → {}",
                bundle.display()
            ));
        }
        Event::PointStarted { .. } => {}
        Event::ReplicateStarted {
            id,
            replicate,
            replicates,
            position,
            of,
            ..
        } => {
            let what = if *replicates > 1 {
                format!("[{position}/{of}] {id} replicate {replicate}/{replicates}")
            } else {
                format!("[{position}/{of}] {id}")
            };
            if let Ok(mut c) = cur.lock() {
                *c = what.clone();
            }
            b.set_message(what);
        }
        Event::Step { label, .. } => {
            let c = cur.lock().map(|c| c.clone()).unwrap_or_default();
            b.set_message(format!("{c}: {label}"));
        }
        Event::Iteration { .. } => b.inc(1),
        Event::PointFinished {
            id, status, reason, ..
        } => {
            if *status != PointStatus::Ok && quiet {
                eprintln!(
                    "fslab: point {id}: {status}{}",
                    reason
                        .as_ref()
                        .map(|r| format!(": {r}"))
                        .unwrap_or_default()
                );
            } else if *status != PointStatus::Ok {
                b.println(format!(
                    "fslab: point {id}: {status}{}",
                    reason
                        .as_ref()
                        .map(|r| format!(": {r}"))
                        .unwrap_or_default()
                ));
            }
        }
        Event::Warning(w) if quiet => eprintln!("fslab: warning: {w}"),
        Event::Warning(w) => b.println(format!("fslab: warning: {w}")),
    });
    let ud = fslab::run::until::UntilDecided {
        power: args.power.unwrap_or(fslab::analysis::power::POWER),
        max_replicates: args.max_replicates,
        budget: args.budget,
        ..Default::default()
    };
    let quiet = args.quiet;
    let b = bar.clone();
    let say_look = move |l: &fslab::store::LookRecord| {
        let count = |s: ClaimState| l.claims.iter().filter(|c| c.state == s).count();
        let next = if l.added > 0 {
            format!(
                "; adding {} replicate(s) to {} point(s)",
                l.added,
                l.next_points.len()
            )
        } else {
            String::new()
        };
        let m = format!(
            "fslab: look {} at {} replicates a point (α spent {:.2e}, intervals at {} %): {} decided, {} open, {} not decidable by replicates{next}",
            l.look,
            l.replicates,
            l.spent,
            fslab::analysis::sequential::level_percent(l.level),
            count(ClaimState::Decided),
            count(ClaimState::Open),
            count(ClaimState::Closed),
        );
        if quiet {
            eprintln!("{m}");
        } else {
            b.println(m);
        }
    };
    let result = match &args.resume {
        Some(dir) => fslab::run::resume(&plan, dir, &opts),
        None if until => fslab::run::until::run_until_decided(&plan, &opts, &ud, &say_look),
        None => fslab::run::run(&plan, &opts),
    };
    bar.finish_and_clear();
    match result {
        Ok(bundle) => {
            let m = bundle.manifest();
            // Points the preflight found unsupported here are reported, not failures.
            let unsupported = m
                .points
                .iter()
                .filter(|p| p.status == PointStatus::Unsupported)
                .count();
            let other = m
                .points
                .iter()
                .filter(|p| p.status == fslab::store::PointStatus::OtherShard)
                .count();
            let failed = m.points.len()
                - other
                - unsupported
                - m.points
                    .iter()
                    .filter(|p| p.status == PointStatus::Ok)
                    .count();
            let shard = m
                .shard
                .as_ref()
                .map(|s| format!(" (shard {}; {other} in other shards)", s.shard))
                .unwrap_or_default();
            eprintln!(
                "fslab: {} points{shard}, {} ok, {} unsupported here, {} not ok ({})",
                m.points.len() - other,
                m.points.len() - other - failed - unsupported,
                unsupported,
                failed,
                m.status
            );
            if let Some(s) = &m.sequential {
                eprintln!(
                    "fslab: --until-decided: {} look(s), at most {} replicates a point; stopped: {}",
                    s.looks.len(),
                    s.max_replicates,
                    s.stopped.map_or("(not recorded)".to_string(), |w| w.to_string())
                );
            }
            println!("{}", bundle.path().display());
            // The notebooks open what finished; a failed notebook leaves the bundle
            // as it is and makes the exit status non-zero.
            let mut notebooks_ok = true;
            for nb in &args.notebooks {
                if !args.quiet {
                    eprintln!("fslab: executing {} on the bundle", nb.display());
                }
                let run = fslab::run::jupyter::NotebookRun::on_bundle(
                    nb.clone(),
                    bundle.path(),
                    Vec::new(),
                    None,
                    None,
                )?;
                match fslab::run::jupyter::execute(&run) {
                    Ok(_) => eprintln!("fslab: notebook stored: {}", run.output.display()),
                    Err(e) => {
                        eprintln!("fslab: notebook {}: {e}", nb.display());
                        notebooks_ok = false;
                    }
                }
            }
            Ok(if failed == 0 && notebooks_ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Err(RunError::Interrupted { bundle }) => {
            eprintln!("fslab: interrupted; all devices and mounts released. Partial bundle (finish it with --resume):");
            println!("{}", bundle.display());
            Ok(ExitCode::from(130))
        }
        Err(e) => Err(e.into()),
    }
}
