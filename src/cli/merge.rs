//! `fslab merge SHARD... -o OUT`: one bundle from the shards of a plan.

use fslab::store::merge;
use fslab::store::PointStatus;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shard bundles (`fslab run --shard K/N`), every one of 1/N..N/N.
    #[arg(required = true)]
    pub bundles: Vec<PathBuf>,
    /// The merged bundle's directory (must not exist).
    #[arg(long, short)]
    pub output: PathBuf,
    /// Merge even if shards are missing; the bundle is marked partial and their points
    /// `missing-shard`.
    #[arg(long)]
    pub partial: bool,
}

pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    let bundle = merge::merge(&args.bundles, &args.output, args.partial)?;
    let m = bundle.manifest();
    for w in merge::shard_differences(m) {
        eprintln!("fslab: warning: {w}");
    }
    if let Some(mi) = &m.merged {
        if mi.partial {
            eprintln!(
                "fslab: warning: partial bundle: shards {} of {} missing",
                mi.missing.join(", "),
                mi.shards_total
            );
        }
    }
    eprintln!(
        "fslab: merged {} shards, {} points ({} ok, {})",
        args.bundles.len(),
        m.points.len(),
        m.points
            .iter()
            .filter(|p| p.status == PointStatus::Ok)
            .count(),
        m.status
    );
    println!("{}", bundle.path().display());
    Ok(ExitCode::SUCCESS)
}
