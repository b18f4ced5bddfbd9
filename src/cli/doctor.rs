//! `fslab doctor EXP`: can each point run here, and if not, why.

use fslab::doctor::{self, Probe, ProbingHost};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ProbeArg {
    /// Never try features for real; trust the kernel configuration.
    Never,
    /// Try realtime XFS on loop devices only when the kernel configuration is unreadable.
    Auto,
    /// Always try realtime XFS on loop devices (needs root).
    Always,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub plan: super::PlanArgs,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// When to probe kernel features by using them.
    #[arg(long, value_enum, default_value = "auto")]
    pub probe: ProbeArg,
    /// Where a probe puts its image files (default: $FSLAB_WORK_DIR or /var/lib/fslab).
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
}

pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    let plan = args.plan.plan()?;
    let probe = match args.probe {
        ProbeArg::Never => Probe::Never,
        ProbeArg::Auto => Probe::IfUnknown,
        ProbeArg::Always => Probe::Always,
    };
    let work = args.work_dir.unwrap_or_else(fslab::run::default_work_dir);
    // A `kernel` axis: each point against its own kernel (a guest's: its configuration
    // and built-in filesystems; no guest is booted).
    let report =
        match fslab::run::target::for_plan(&plan, fslab::run::target::uml::DEFAULT_GUEST_MEM)? {
            Some(axis) => {
                use fslab::run::target::Target;
                axis.preflight(&plan, probe, &work)
            }
            None => doctor::check(&plan, &ProbingHost::new(probe, work)),
        };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{report}");
    }
    Ok(if report.runnable() == report.points.len() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
