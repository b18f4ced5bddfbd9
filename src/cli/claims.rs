//! `fslab claims BUNDLE`: the source's claims, checked against a bundle.

use fslab::analysis::claims;
use fslab::store::PointStatus;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A result bundle directory.
    pub bundle: PathBuf,
    /// Check the claims of this experiment file instead of the copy in the bundle.
    #[arg(long)]
    pub experiment: Option<PathBuf>,
    /// Print the verdicts as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    let bundle = fslab::Bundle::open(&args.bundle)?;
    let verdicts = match &args.experiment {
        None => claims::check_bundle(&bundle)?,
        Some(p) => {
            let exp =
                fslab::analysis::claims::load(super::resolve_experiment(&p.display().to_string()))?;
            let ev = claims::Evidence::from_bundle(&bundle)?;
            claims::check_claims(&exp.def.claims, &ev)
        }
    };
    // Claims compare points; points measured on differing machines are said so.
    for w in fslab::store::merge::shard_differences(bundle.manifest()) {
        eprintln!("fslab: warning: {w}");
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&verdicts)?);
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
