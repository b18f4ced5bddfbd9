use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// fslab's work directory (default: $FSLAB_WORK_DIR or /var/lib/fslab). It must be
    /// owned by root and writable by root alone; another is refused.
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
}

pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    let dir = args.work_dir.unwrap_or_else(fslab::run::default_work_dir);
    let r = fslab::run::cleanup(&dir)?;
    println!(
        "released {} mounts, {} loop devices, {} scratch directories, {} cgroups ({} leftover processes killed; {} records of killed runs)",
        r.mounts, r.loops, r.dirs, r.cgroups, r.processes, r.records
    );
    for m in &r.thawed {
        println!(
            "thawed {} (a killed fslab process left it frozen)",
            m.display()
        );
    }
    for w in &r.ignored {
        eprintln!("fslab: warning: {w}");
    }
    for k in &r.kept {
        eprintln!("fslab: not released: {k}");
    }
    Ok(if r.kept.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
