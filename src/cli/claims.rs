//! `fslab claims BUNDLE…`: the source's claims, checked against bundles.

use fslab::analysis::claims;
use fslab::store::PointStatus;
use std::path::PathBuf;
use std::process::ExitCode;

/// How a draft claim is listed.
const DRAFT: &str = "draft, not checked";

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Result bundle directories (several only with --md or --summary; two with --agree).
    #[arg(required = true)]
    pub bundles: Vec<PathBuf>,
    /// Two independent reruns of one profile: per claim, whether they give the same tier
    /// and whether their intervals overlap (a tier that differs is `inconclusive`).
    #[arg(long, conflicts_with_all = ["md", "summary"])]
    pub agree: bool,
    /// Check the claims of this experiment file instead of the copy in the bundle.
    #[arg(long, conflicts_with_all = ["md", "summary"])]
    pub experiment: Option<PathBuf>,
    /// Print the verdicts as JSON: `{ "claims": [...], "tiers": { tier: count } }` (with
    /// --summary: the answers, one per claim).
    #[arg(long, conflicts_with = "md")]
    pub json: bool,
    /// With --md or --summary: check today's claims in DIR/<experiment id>.yaml over each
    /// bundle's data instead of the copy each bundle ran (the document names both).
    #[arg(long, value_name = "DIR")]
    pub claims_from: Option<PathBuf>,
    /// One answer per claim over all the bundles given (read in sections as --md reads
    /// them): the post's number, the number here from the evidence that decides (its
    /// section and bundle, by the rule it prints), the tier and why in a few words.
    #[arg(long, conflicts_with = "md")]
    pub summary: bool,
    /// Print REPRODUCTION.md for these bundles (one per seed experiment): their
    /// environment, then one row per claim with quote, published, here (with interval),
    /// tier and reason.
    #[arg(long)]
    pub md: bool,
}

pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    if args.md || args.summary {
        let bundles = args
            .bundles
            .iter()
            .map(fslab::Bundle::open)
            .collect::<Result<Vec<_>, _>>()?;
        let source = match &args.claims_from {
            Some(dir) => claims::ClaimsSource::Dir(dir.clone()),
            None => claims::ClaimsSource::Bundle,
        };
        if args.md {
            print!("{}", claims::reproduction_md(&bundles, &source)?);
        } else {
            let answers = claims::summarise(&claims::analyse(&bundles, &source)?);
            if args.json {
                println!("{}", serde_json::to_string_pretty(&answers)?);
            } else {
                print!("{}", claims::summary_text(&answers));
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.claims_from.is_some() {
        anyhow::bail!(
            "--claims-from goes with --md or --summary (several bundles read in sections)"
        );
    }
    if args.agree {
        let [a, b] = args.bundles.as_slice() else {
            anyhow::bail!("--agree takes two bundles: two independent reruns of one profile");
        };
        let (a, b) = (fslab::Bundle::open(a)?, fslab::Bundle::open(b)?);
        let (ma, mb) = (a.manifest(), b.manifest());
        if ma.experiment.id != mb.experiment.id || ma.profile != mb.profile {
            anyhow::bail!(
                "--agree compares reruns of one experiment and profile; these are {} ({}) and {} ({})",
                ma.experiment.id,
                ma.profile.as_deref().unwrap_or("-"),
                mb.experiment.id,
                mb.profile.as_deref().unwrap_or("-")
            );
        }
        let g = claims::agreement(&claims::check_bundle(&a)?, &claims::check_bundle(&b)?);
        if args.json {
            println!("{}", serde_json::to_string_pretty(&g)?);
        } else {
            print!("{}", claims::render_agreement(&g));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let [bundle] = args.bundles.as_slice() else {
        anyhow::bail!("give one bundle (several only with --md or --summary, two with --agree)");
    };
    let bundle = fslab::Bundle::open(bundle)?;
    let exp = match &args.experiment {
        None => fslab::Experiment::from_str_named(
            &bundle.manifest().experiment.yaml,
            &bundle.path().join("experiment.yaml").display().to_string(),
        )?,
        Some(p) => fslab::Experiment::load(super::resolve_experiment(&p.display().to_string()))?,
    };
    // Draft claims (`fslab import`) are listed, never evaluated.
    let (drafts, to_check): (Vec<_>, Vec<_>) = exp.def.claims.into_iter().partition(|c| c.draft);
    let mut ev = claims::Evidence::from_bundle(&bundle)?;
    // The claims' experiment also says how their scale is judged.
    ev.scale = exp.def.scale.clone();
    let verdicts = claims::check_claims(&to_check, &ev);
    // Claims compare points; points measured on differing machines are said so.
    for w in fslab::store::merge::shard_differences(bundle.manifest()) {
        eprintln!("fslab: warning: {w}");
    }
    if args.json {
        let mut doc = serde_json::to_value(claims::Report::new(&verdicts))?;
        if let (Some(obj), false) = (doc.as_object_mut(), drafts.is_empty()) {
            let list: Vec<serde_json::Value> = drafts
                .iter()
                .map(|c| serde_json::json!({ "id": c.id, "text": c.text, "quote": c.quote, "status": DRAFT }))
                .collect();
            obj.insert("drafts".into(), serde_json::Value::Array(list));
        }
        println!("{}", serde_json::to_string_pretty(&doc)?);
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
        for c in &drafts {
            println!("{} — {}", c.id, DRAFT.to_uppercase());
            println!("  claim:     {}", c.text);
            if let Some(q) = &c.quote {
                println!("  quote:     {q}");
            }
            println!();
        }
    }
    Ok(ExitCode::SUCCESS)
}
