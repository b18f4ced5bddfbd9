//! Subcommands, one file each. Each is a thin face over the library.

mod blockmap;

use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod calibrate;
mod claims;
mod cleanup;
mod compare;
mod delay;
mod doctor;
mod files;
mod import;
mod k8s;
mod kernels;
mod list;
mod merge;
mod notebook;
mod parse;
mod plan;
mod reply;
mod report;
mod run;
mod show;
mod slurm;
pub mod stress;
mod tools;

#[derive(Debug, Parser)]
#[command(name = "fslab", version, about = "Reproducible filesystem experiments", long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the experiments in a directory (default: ./experiments).
    List(list::Args),
    /// Print every point of an experiment and the exact commands; touches nothing.
    Plan(plan::Args),
    /// Run an experiment on scratch loop devices into a result bundle.
    Run(run::Args),
    /// Show a result bundle: environment, points and timed runs.
    Show(show::Args),
    /// Release loop devices and mounts left by fslab runs that were killed.
    Cleanup(cleanup::Args),
    /// Check whether each point of an experiment can run on this machine, and why not.
    Doctor(doctor::Args),
    /// Check a bundle against the claims of its experiment's source.
    Claims(claims::Args),
    /// Built-in fsstress-compatible workload, fsstress's flags verbatim.
    Stress(stress::StressArgs),
    /// Numbered files written, truncated or mapped in one process (write, truncate, path).
    Files(files::Args),
    /// Parse a tool's text output into rows (table, --json or --csv).
    Parse(parse::ParseArgs),
    /// Compare two bundles point by point (mean ± σ%, % change, Welch's t-test).
    Compare(compare::CompareArgs),
    /// Run one point as two sides in interleaved pairs: the false-positive rate of the
    /// verdicts here (A/A), or their power and coverage with `--inject` (a known slowdown).
    Calibrate(calibrate::Args),
    /// Run a command, then wait P % of its time (`calibrate --inject delay:pct=P`).
    #[command(hide = true)]
    Delay(delay::Args),
    /// Write a self-contained HTML or Markdown report of a bundle.
    Report(report::ReportArgs),
    /// A plain-text answer to the post (72 columns): table, claims, rerun command, hash.
    Reply(reply::Args),
    /// Block maps of files: FIEMAP on a mounted tree, or debugfs on an unmounted ext image.
    Blockmap(blockmap::Args),
    /// Notebooks: `fslab notebook run NB.ipynb -p NAME VALUE … [-o OUT] [--html OUT.html] [--bundle DIR]`.
    Notebook(notebook::Args),
    /// Merge the bundles of an experiment's shards (`run --shard K/N`) into one.
    Merge(merge::Args),
    /// Write (and --submit) a Slurm job array of shards and a merge job.
    Slurm(slurm::Args),
    /// Print Kubernetes Jobs (Indexed shards, then a merge) for an experiment.
    K8s(k8s::Args),
    /// Draft an experiment and its published numbers from a mailing-list post.
    Import(import::Args),
    /// Tools built from source when the machine's are too old (install, list).
    Tools(tools::Args),
    /// Other kernels than the host's, for guests: Debian's User-Mode Linux (install, list).
    Kernels(kernels::Args),
    /// fslab's agent inside a guest kernel: its init runs it (not for people).
    #[command(hide = true)]
    GuestAgent {
        /// The guest's console that fslab talks to (`/dev/tty1`).
        channel: PathBuf,
    },
}

pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::List(a) => list::main(a),
        Command::Plan(a) => plan::main(a),
        Command::Run(a) => run::main(a),
        Command::Show(a) => show::main(a),
        Command::Cleanup(a) => cleanup::main(a),
        Command::Stress(args) => stress::run(args),
        Command::Files(a) => files::main(a),
        Command::Doctor(a) => doctor::main(a),
        Command::Claims(a) => claims::main(a),
        Command::Parse(args) => parse::run(args),
        Command::Blockmap(args) => blockmap::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Calibrate(a) => calibrate::main(a),
        Command::Delay(a) => delay::main(a),
        Command::Report(args) => report::run(args),
        Command::Reply(a) => reply::main(a),
        Command::Notebook(a) => notebook::main(a),
        Command::Merge(a) => merge::main(a),
        Command::Slurm(a) => slurm::main(a),
        Command::K8s(a) => k8s::main(a),
        Command::Tools(a) => tools::main(a),
        Command::Kernels(a) => kernels::main(a),
        Command::Import(a) => import::main(a),
        Command::GuestAgent { channel } => {
            fslab::run::target::uml::agent::serve(&channel)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// An experiment argument: a file path, or an id looked up as `experiments/<id>.yaml`.
pub fn resolve_experiment(arg: &str) -> PathBuf {
    let p = Path::new(arg);
    if p.exists() {
        return p.to_path_buf();
    }
    for dir in [
        Path::new("experiments").to_path_buf(),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments"),
    ] {
        for ext in ["yaml", "yml"] {
            let c = dir.join(format!("{arg}.{ext}"));
            if c.exists() {
                return c;
            }
        }
    }
    p.to_path_buf()
}

/// Options shared by `plan` and `run`: which profile and which overrides.
#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// Experiment file, or its id in ./experiments.
    pub experiment: String,
    /// Profile to use (default: the experiment's default, usually `quick`).
    #[arg(long, short)]
    pub profile: Option<String>,
    /// Override one variable or matrix axis: NAME=VALUE (VALUE is YAML: `3`, `xfs`, `[ext4, xfs]`).
    #[arg(long = "set", short = 's', value_name = "NAME=VALUE")]
    pub set: Vec<String>,
}

impl PlanArgs {
    pub fn plan(&self) -> anyhow::Result<fslab::Plan> {
        let path = resolve_experiment(&self.experiment);
        let exp = fslab::Experiment::load(&path)?;
        let overrides = self
            .set
            .iter()
            .map(|s| fslab::plan::parse_override(s))
            .collect::<Result<Vec<_>, _>>()?;
        let plan = fslab::Plan::new(&exp, self.profile.as_deref(), &overrides)?;
        // Steps that reach host paths outside their point: said wherever a plan is made.
        for w in &plan.warnings {
            eprintln!("{w}");
        }
        Ok(plan)
    }
}
