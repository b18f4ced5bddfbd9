//! `fslab slurm EXP --shards N`: an sbatch job array that runs the shards, and a merge
//! job after it; `--submit` submits both, `--wait` waits for the merged bundle.

use anyhow::{bail, Context};
use fslab::cluster::{self, ShardJob, SlurmOptions};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub plan: super::PlanArgs,
    /// How many shards (array tasks); at most the plan's number of points.
    #[arg(long)]
    pub shards: usize,
    /// The results directory, on a filesystem every node shares (default: $FSLAB_RESULTS_DIR or ./results).
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// The Slurm partition of both jobs.
    #[arg(long)]
    pub partition: Option<String>,
    /// The fslab program on the nodes (default: this one's absolute path).
    #[arg(long)]
    pub fslab: Option<String>,
    /// Submit the array and the merge job (with --dependency=afterok) and print their ids.
    #[arg(long)]
    pub submit: bool,
    /// With --submit: wait for the merge job and print the merged bundle's path.
    #[arg(long, requires = "submit")]
    pub wait: bool,
    /// Options for sbatch, written as `#SBATCH` lines of both jobs (after `--`).
    #[arg(last = true)]
    pub sbatch: Vec<String>,
}

/// The parts of a shard job common to `fslab slurm` and `fslab k8s`.
pub fn shard_job(
    plan_args: &super::PlanArgs,
    shards: usize,
    results: PathBuf,
    fslab: String,
) -> anyhow::Result<(ShardJob, fslab::Plan)> {
    let plan = plan_args.plan()?;
    if shards == 0 {
        bail!("--shards must be at least 1");
    }
    if shards > plan.points.len() {
        bail!(
            "--shards {shards}: the plan has only {} points, and a point is never split; use --shards {} or fewer",
            plan.points.len(),
            plan.points.len()
        );
    }
    let experiment = std::path::absolute(super::resolve_experiment(&plan_args.experiment))?;
    let tag = fslab::store::stamped_id();
    Ok((
        ShardJob {
            fslab,
            experiment: experiment.display().to_string(),
            experiment_id: plan.experiment.id().to_string(),
            profile: plan.profile.clone(),
            sets: plan_args.set.clone(),
            shards,
            results: std::path::absolute(results)?,
            tag,
        },
        plan,
    ))
}

fn default_results() -> PathBuf {
    std::env::var_os("FSLAB_RESULTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("results"))
}

pub fn main(args: Args) -> anyhow::Result<ExitCode> {
    let fslab = match &args.fslab {
        Some(f) => f.clone(),
        None => std::env::current_exe()?.display().to_string(),
    };
    let results = args.results.clone().unwrap_or_else(default_results);
    let (job, _plan) = shard_job(&args.plan, args.shards, results, fslab)?;
    let script_dir = job.results.join("slurm").join(&job.tag);
    std::fs::create_dir_all(&script_dir)
        .with_context(|| format!("creating {}", script_dir.display()))?;
    let opts = SlurmOptions {
        partition: args.partition.clone(),
        sbatch: args.sbatch.clone(),
        script_dir: script_dir.clone(),
    };
    let array = script_dir.join("array.sh");
    let merge = script_dir.join("merge.sh");
    let submit = script_dir.join("submit.sh");
    for (p, text) in [
        (&array, cluster::slurm_array_script(&job, &opts)),
        (&merge, cluster::slurm_merge_script(&job, &opts)),
        (&submit, cluster::slurm_submit_script(&opts)),
    ] {
        std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755))?;
    }
    eprintln!(
        "fslab: wrote {} (job array of {} shards) and {} (the merge)",
        array.display(),
        job.shards,
        merge.display()
    );
    if !args.submit {
        eprintln!("fslab: submit both with {}", submit.display());
        println!("{}", script_dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    let array_id = cluster::sbatch(&[], &array)?;
    let merge_id = cluster::sbatch(&[format!("--dependency=afterok:{array_id}")], &merge)?;
    println!("array job {array_id}");
    println!("merge job {merge_id}");
    if !args.wait {
        eprintln!(
            "fslab: the merged bundle will be {}",
            job.merged_bundle().display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    cluster::wait_for(&merge_id, &script_dir)?;
    let out = job.merged_bundle();
    if !out.join("manifest.json").exists() {
        bail!(
            "merge job {merge_id} ended without a bundle at {}; see {}",
            out.display(),
            script_dir.join("merge.out").display()
        );
    }
    println!("{}", out.display());
    Ok(ExitCode::SUCCESS)
}
