//! `fslab stress`: the built-in fsstress-compatible workload, with fsstress's flags verbatim.

use anyhow::Context;
use fslab::stress::{self, Config, Workers};
use std::io::Write;
use std::process::ExitCode;

const USAGE: &str = "\
usage: fslab stress [fsstress options] [--threads] [--json] [--delay-pct P]
  -n nops        operations per process (default 1)
  -p nproc       processes (default 1)
  -s seed        seed; process p uses seed+p (default: from the clock)
  -z             zero all operation frequencies
  -f op=freq     set frequencies; repeatable, or comma-separated (-f creat=1,mkdir=1)
  -d dir         base directory; process p works in dir/p<p in hex>
  -v             print every operation
  -c             remove each process's directory when done
  -S x           print the operation table and exit
  --threads      run the processes as threads of one process (default: one OS process each)
  --delay-pct P  inject a known slowdown: each process busy-waits for P % of the time it
                 works (checked every 64 operations and after the last; `fslab calibrate`)
  --json         print the summary as JSON instead of a table
operations: creat fsync link mkdir mknod rename rmdir symlink truncate unlink write
";

#[derive(Debug, clap::Args)]
#[command(
    disable_help_flag = true,
    about = "Built-in fsstress-compatible workload (fsstress flags: -n -p -s -z -f -d -v -c)"
)]
pub struct StressArgs {
    /// fsstress options, verbatim (see `fslab stress --help`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub args: Vec<String>,
}

pub fn run(a: StressArgs) -> anyhow::Result<ExitCode> {
    let mut fsstress_args = Vec::new();
    let mut worker: Option<u32> = None;
    let mut threads = false;
    let mut json = false;
    let mut it = a.args.into_iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--help" | "-H" => {
                print!("{USAGE}");
                return Ok(ExitCode::SUCCESS);
            }
            "--threads" => threads = true,
            "--json" => json = true,
            "--worker" => {
                let id = it.next().context("--worker needs a process number")?;
                worker = Some(id.parse().with_context(|| format!("--worker {id:?}"))?);
            }
            _ => fsstress_args.push(arg),
        }
    }
    let mut cfg = Config::from_args(&fsstress_args)?;
    if cfg.show_ops {
        print!("{}", cfg.op_table());
        return Ok(ExitCode::SUCCESS);
    }
    let stdout = std::io::stdout();
    if let Some(id) = worker {
        // Like fsstress's children: die with the parent, so that a killed run does not
        // leave workers behind on a filesystem that is about to be unmounted.
        nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
            .context("prctl(PR_SET_PDEATHSIG)")?;
        if nix::unistd::getppid() == nix::unistd::Pid::from_raw(1) {
            anyhow::bail!("worker {id}: parent already gone");
        }
        let mut out = stdout.lock();
        let summary = stress::run_worker(&cfg, id, &mut out)?;
        writeln!(out, "{}", stress::worker_summary_line(&summary))?;
        return Ok(ExitCode::SUCCESS);
    }
    cfg.workers = if threads {
        Workers::Threads
    } else {
        Workers::Processes { exe: self_exe()? }
    };
    if cfg.seed.is_none() {
        // fsstress prints the seed it picked; so do we (in the summary too).
        let summary = stress::run(&cfg)?;
        println!("seed = {}", summary.seed);
        print_summary(&summary, json)?;
    } else {
        print_summary(&stress::run(&cfg)?, json)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The running executable. `/proc/self/exe` names the running binary's inode even when
/// its path is rebuilt meanwhile (cargo replaces target/debug/fslab), so the workers are
/// always the same program as the parent.
fn self_exe() -> anyhow::Result<std::path::PathBuf> {
    let proc_exe = std::path::PathBuf::from("/proc/self/exe");
    if proc_exe.exists() {
        return Ok(proc_exe);
    }
    std::env::current_exe().context("cannot find the fslab executable")
}

fn print_summary(summary: &stress::Summary, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(summary)?);
    } else {
        print!("{summary}");
    }
    Ok(())
}
