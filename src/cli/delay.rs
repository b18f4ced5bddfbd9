//! `fslab delay --pct P -- CMD ARGS…`: run a command and then wait P % of the time it
//! took before exiting with its status (`fslab calibrate --inject delay:pct=P`; see
//! `run::calibrate::delayed`).

use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The wait, in percent of the command's own time (0: none).
    #[arg(long, value_name = "P")]
    pub pct: f64,
    /// Wait in CPU time: busy-wait until this process has used P % of the command's CPU
    /// time (user + system of its process tree).
    #[arg(long)]
    pub cpu: bool,
    /// Print the command's time and the wait to stderr.
    #[arg(long)]
    pub verbose: bool,
    /// The command and its arguments.
    #[arg(last = true, required = true)]
    pub command: Vec<String>,
}

pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    if !(0.0..=1000.0).contains(&args.pct) {
        anyhow::bail!(
            "--pct {}: expected a percentage from 0 to 1000 (e.g. --pct 2)",
            args.pct
        );
    }
    let d = fslab::run::calibrate::delayed_in(&args.command, args.pct, args.cpu)
        .map_err(|e| anyhow::anyhow!("running `{}`: {e}", args.command.join(" ")))?;
    if args.verbose {
        eprintln!(
            "fslab delay: worked {:.6} s, waited {:.6} s ({:.4} %)",
            d.worked.as_secs_f64(),
            d.waited.as_secs_f64(),
            100.0 * d.waited.as_secs_f64() / d.worked.as_secs_f64().max(1e-12)
        );
    }
    use std::os::unix::process::ExitStatusExt;
    Ok(match (d.status.code(), d.status.signal()) {
        (Some(c), _) => ExitCode::from(c.clamp(0, 255) as u8),
        (None, Some(s)) => ExitCode::from((128 + s).clamp(0, 255) as u8),
        _ => ExitCode::from(1),
    })
}
