//! `fslab k8s EXP --shards N`: Kubernetes manifests (an Indexed Job of shards and a
//! merge Job), printed; nothing is applied.

use fslab::cluster::{self, K8sOptions};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub plan: super::PlanArgs,
    /// How many shards (Job completions); at most the plan's number of points.
    #[arg(long)]
    pub shards: usize,
    /// A container image with fslab and the experiment's tools.
    #[arg(long, default_value = "fslab:latest")]
    pub image: String,
    /// A ReadWriteMany PersistentVolumeClaim for the results (mounted at /results).
    #[arg(long, default_value = "fslab-results")]
    pub results_claim: String,
    /// The namespace of the objects (default: kubectl's).
    #[arg(long)]
    pub namespace: Option<String>,
}

pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    let (job, plan) =
        super::slurm::shard_job(&args.plan, args.shards, "/results".into(), "fslab".into())?;
    let opts = K8sOptions {
        image: args.image,
        results_claim: args.results_claim,
        namespace: args.namespace,
    };
    print!(
        "{}",
        cluster::k8s_manifests(&job, &plan.experiment.source_text, &opts)
    );
    Ok(ExitCode::SUCCESS)
}
