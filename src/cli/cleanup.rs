use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// fslab's work directory (default: $FSLAB_WORK_DIR or /var/tmp/fslab).
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
}

pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    let dir = args.work_dir.unwrap_or_else(fslab::run::default_work_dir);
    let r = fslab::run::cleanup(&dir)?;
    println!(
        "released {} mounts, {} loop devices, {} scratch directories ({} records of killed runs)",
        r.mounts, r.loops, r.dirs, r.records
    );
    Ok(ExitCode::SUCCESS)
}
