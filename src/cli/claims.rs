//! `fslab claims BUNDLE…`: the source's claims, checked against bundles.

use fslab::analysis::claims;
use fslab::store::PointStatus;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Result bundle directories (several only with --md).
    #[arg(required = true)]
    pub bundles: Vec<PathBuf>,
    /// Check the claims of this experiment file instead of the copy in the bundle.
    #[arg(long, conflicts_with = "md")]
    pub experiment: Option<PathBuf>,
    /// Print the verdicts as JSON: `{ "claims": [...], "tiers": { tier: count } }`.
    #[arg(long, conflicts_with = "md")]
    pub json: bool,
    /// Print REPRODUCTION.md for these bundles (one per seed experiment): their
    /// environment, then one row per claim with quote, published, here (with interval),
    /// tier and reason.
    #[arg(long)]
    pub md: bool,
}

pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    if args.md {
        let bundles = args
            .bundles
            .iter()
            .map(fslab::Bundle::open)
            .collect::<Result<Vec<_>, _>>()?;
        print!("{}", claims::reproduction_md(&bundles)?);
        return Ok(ExitCode::SUCCESS);
    }
    let [bundle] = args.bundles.as_slice() else {
        anyhow::bail!("give one bundle (several only with --md)");
    };
    let bundle = fslab::Bundle::open(bundle)?;
    let verdicts = match &args.experiment {
        None => claims::check_bundle(&bundle)?,
        Some(p) => {
            let exp = fslab::Experiment::load(super::resolve_experiment(&p.display().to_string()))?;
            let ev = claims::Evidence::from_bundle(&bundle)?;
            claims::check_claims(&exp.def.claims, &ev)
        }
    };
    // Claims compare points; points measured on differing machines are said so.
    for w in fslab::store::merge::shard_differences(bundle.manifest()) {
        eprintln!("fslab: warning: {w}");
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&claims::Report::new(&verdicts))?
        );
    } else {
        let m = bundle.manifest();
        println!(
            "{} — profile {}, {} points ({} ok)\n",
            m.experiment.id,
            m.profile.as_deref().unwrap_or("-"),
            m.points.len(),
            m.points
                .iter()
                .filter(|p| p.status == PointStatus::Ok)
                .count()
        );
        print!("{}", claims::render(&verdicts));
    }
    Ok(ExitCode::SUCCESS)
}
