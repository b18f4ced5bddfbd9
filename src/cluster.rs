//! Job files that run a plan's shards on a cluster scheduler and merge them: an sbatch
//! job array and a merge job for Slurm (`fslab slurm`), an Indexed Job and a merge Job
//! for Kubernetes (`fslab k8s`). The job files are pure text generation; [`sbatch`] and
//! [`wait_for`] are the only parts that talk to a scheduler (Slurm's commands).
//!
//! Every shard task runs `fslab run EXP --shard K/N` (see [`crate::shard`]) into
//! `<results>/shards/<tag>/`, and the merge job runs `fslab merge` over the bundles found
//! there into `<results>/<experiment>/<tag>-merged`. The results directory must be on a
//! filesystem every node shares.

use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// What to run, and where results go.
#[derive(Debug, Clone)]
pub struct ShardJob {
    /// The fslab program on the nodes (an absolute path, or a name on their PATH).
    pub fslab: String,
    /// The experiment file as the nodes see it.
    pub experiment: String,
    /// The experiment's id (names bundles and jobs).
    pub experiment_id: String,
    /// The profile every shard uses (given explicitly, so that all shards agree).
    pub profile: Option<String>,
    /// `--set NAME=VALUE` overrides, as given.
    pub sets: Vec<String>,
    /// N.
    pub shards: usize,
    /// The shared results directory, as the nodes see it.
    pub results: PathBuf,
    /// A name unique to this submission (shard bundles go to `<results>/shards/<tag>/`).
    pub tag: String,
}

impl ShardJob {
    /// Where the shard bundles go (`--results` of each shard).
    pub fn shard_results(&self) -> PathBuf {
        self.results.join("shards").join(&self.tag)
    }

    /// The merged bundle's directory.
    pub fn merged_bundle(&self) -> PathBuf {
        self.results
            .join(&self.experiment_id)
            .join(format!("{}-merged", self.tag))
    }

    /// `fslab run ...` for one shard, as shell words; `shard_expr` is the shell text of K.
    fn run_words(&self, shard_expr: &str, results: &Path) -> String {
        let mut w = vec![quote(&self.fslab), "run".into(), quote(&self.experiment)];
        if let Some(p) = &self.profile {
            w.push("--profile".into());
            w.push(quote(p));
        }
        for s in &self.sets {
            w.push("--set".into());
            w.push(quote(s));
        }
        w.push("--shard".into());
        w.push(format!("\"{shard_expr}/{}\"", self.shards));
        w.push("--results".into());
        w.push(quote(&results.display().to_string()));
        w.push("--quiet".into());
        w.join(" ")
    }

    /// `fslab merge <every bundle> -o OUT`, as shell words.
    fn merge_words(&self, shard_results: &Path, out: &Path) -> String {
        let bundles = shard_results.join(&self.experiment_id);
        format!(
            "{} merge {}/*/ -o {}",
            quote(&self.fslab),
            quote(&bundles.display().to_string()),
            quote(&out.display().to_string())
        )
    }
}

fn quote(s: &str) -> String {
    shell_words::quote(s).into_owned()
}

/// Slurm-specific settings.
#[derive(Debug, Clone, Default)]
pub struct SlurmOptions {
    pub partition: Option<String>,
    /// Extra `#SBATCH` options for both jobs, e.g. `--time=04:00:00`.
    pub sbatch: Vec<String>,
    /// Where the scripts and Slurm's output files go.
    pub script_dir: PathBuf,
}

/// The job array: one task per shard, each alone on its node (`--exclusive`), because
/// a point's iterations are compared with each other and must not share the machine
/// with another shard's work.
pub fn slurm_array_script(job: &ShardJob, opts: &SlurmOptions) -> String {
    let mut s = String::from("#!/bin/bash\n");
    s += &format!(
        "# fslab: shards of {} ({} tasks); written by `fslab slurm`.\n",
        job.experiment_id, job.shards
    );
    s += &format!("#SBATCH --job-name=fslab-{}\n", job.experiment_id);
    s += &format!("#SBATCH --array=1-{}\n", job.shards);
    s += "#SBATCH --exclusive\n#SBATCH --nodes=1\n";
    s += &format!(
        "#SBATCH --output={}\n",
        opts.script_dir.join("shard-%a.out").display()
    );
    s += &sbatch_common(opts);
    s += "set -euo pipefail\n";
    s += &format!(
        "exec {}\n",
        job.run_words("$SLURM_ARRAY_TASK_ID", &job.shard_results())
    );
    s
}

/// The merge job (submitted with `--dependency=afterok:<array job>`).
pub fn slurm_merge_script(job: &ShardJob, opts: &SlurmOptions) -> String {
    let mut s = String::from("#!/bin/bash\n");
    s += &format!(
        "# fslab: merges the {} shards of {}; submit with --dependency=afterok:<array job id>.\n",
        job.shards, job.experiment_id
    );
    s += &format!("#SBATCH --job-name=fslab-{}-merge\n", job.experiment_id);
    s += "#SBATCH --nodes=1\n#SBATCH --ntasks=1\n";
    s += &format!(
        "#SBATCH --output={}\n",
        opts.script_dir.join("merge.out").display()
    );
    s += &sbatch_common(opts);
    s += "set -euo pipefail\n";
    s += &format!(
        "exec {}\n",
        job.merge_words(&job.shard_results(), &job.merged_bundle())
    );
    s
}

/// Submits the array, then the merge after it; for running the scripts by hand.
pub fn slurm_submit_script(opts: &SlurmOptions) -> String {
    let dir = quote(&opts.script_dir.display().to_string());
    format!(
        "#!/bin/sh\n# Submit the shards, then the merge once every shard succeeded.\nset -e\n\
         array=$(sbatch --parsable {dir}/array.sh)\n\
         merge=$(sbatch --parsable --dependency=afterok:\"${{array%%;*}}\" {dir}/merge.sh)\n\
         echo \"array job $array, merge job $merge\"\n"
    )
}

fn sbatch_common(opts: &SlurmOptions) -> String {
    let mut s = String::new();
    if let Some(p) = &opts.partition {
        s += &format!("#SBATCH --partition={p}\n");
    }
    for o in &opts.sbatch {
        s += &format!("#SBATCH {o}\n");
    }
    s
}

/// Kubernetes settings.
#[derive(Debug, Clone)]
pub struct K8sOptions {
    /// A container image with fslab and the experiment's tools.
    pub image: String,
    /// A ReadWriteMany PersistentVolumeClaim for the results, mounted at `/results`.
    pub results_claim: String,
    pub namespace: Option<String>,
}

/// Where the pods see things.
const K8S_RESULTS: &str = "/results";
const K8S_EXPERIMENT_DIR: &str = "/experiment";

/// A ConfigMap with the experiment file, the Indexed Job that runs the shards and the
/// Job that merges them, as a YAML stream. Kubernetes has no dependency between Jobs:
/// apply the first two, `kubectl wait --for=condition=complete job/<shards>`, then apply
/// the merge Job (the header comment says so).
pub fn k8s_manifests(job: &ShardJob, experiment_yaml: &str, opts: &K8sOptions) -> String {
    let name = k8s_name(&format!("fslab-{}-{}", job.experiment_id, job.tag));
    let file = format!("{}.yaml", job.experiment_id);
    let in_pod = ShardJob {
        experiment: format!("{K8S_EXPERIMENT_DIR}/{file}"),
        results: PathBuf::from(K8S_RESULTS),
        ..job.clone()
    };
    let meta = |n: &str| {
        let mut m = json!({ "name": n, "labels": { "app.kubernetes.io/name": "fslab", "fslab/experiment": k8s_name(&job.experiment_id) } });
        if let Some(ns) = &opts.namespace {
            m["namespace"] = json!(ns);
        }
        m
    };
    let config = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta(&format!("{name}-experiment")),
        "data": { file.clone(): experiment_yaml },
    });
    let volumes = json!([
        { "name": "results", "persistentVolumeClaim": { "claimName": opts.results_claim } },
        { "name": "experiment", "configMap": { "name": format!("{name}-experiment") } },
        // Loop devices appear in the host's /dev as fslab attaches them.
        { "name": "dev", "hostPath": { "path": "/dev", "type": "Directory" } },
        { "name": "work", "emptyDir": {} },
    ]);
    let mounts = json!([
        { "name": "results", "mountPath": K8S_RESULTS },
        { "name": "experiment", "mountPath": K8S_EXPERIMENT_DIR, "readOnly": true },
        { "name": "dev", "mountPath": "/dev" },
        { "name": "work", "mountPath": "/var/lib/fslab" },
    ]);
    let container = |cname: &str, script: String| {
        json!({
            "name": cname,
            "image": opts.image,
            "command": ["/bin/sh", "-c", script],
            // Loop devices and mounts need a privileged container.
            "securityContext": { "privileged": true },
            "volumeMounts": mounts.clone(),
        })
    };
    let run = in_pod.run_words("$((JOB_COMPLETION_INDEX + 1))", &in_pod.shard_results());
    let shards = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta(&format!("{name}-shards")),
        "spec": {
            "completionMode": "Indexed",
            "completions": job.shards,
            "parallelism": job.shards,
            // A failed shard fails the Job: its bundle says why; rerun it with --resume.
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [container("shard", format!("exec {run}"))],
                    "volumes": volumes.clone(),
                    // One shard per node: a point's iterations must not share the machine.
                    "affinity": { "podAntiAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": [
                        { "labelSelector": { "matchLabels": { "fslab/job": format!("{name}-shards") } },
                          "topologyKey": "kubernetes.io/hostname" } ] } },
                },
                "metadata": { "labels": { "fslab/job": format!("{name}-shards") } },
            },
        },
    });
    let merge_cmd = in_pod.merge_words(&in_pod.shard_results(), &in_pod.merged_bundle());
    let merge = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta(&format!("{name}-merge")),
        "spec": {
            "completions": 1,
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [container("merge", format!("exec {merge_cmd}"))],
                    "volumes": volumes,
                },
            },
        },
    });
    let mut out = format!(
        "# fslab k8s: {} in {} shards.\n\
         # 1. kubectl apply -f <this file, without the merge Job>   (ConfigMap + Indexed Job)\n\
         # 2. kubectl wait --for=condition=complete --timeout=-1s job/{name}-shards\n\
         # 3. kubectl apply the merge Job ({name}-merge); the merged bundle is\n\
         #    {} on the results volume ({}).\n",
        job.experiment_id,
        job.shards,
        in_pod.merged_bundle().display(),
        opts.results_claim
    );
    for doc in [config, shards, merge] {
        out += "---\n";
        out += &serde_yaml::to_string(&doc).unwrap_or_default();
    }
    out
}

/// A DNS-1123 label: lowercase alphanumerics and `-`, at most 63 characters.
fn k8s_name(s: &str) -> String {
    let mut n: String = s
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    n.truncate(52); // room for the `-experiment` suffix
    n.trim_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> ShardJob {
        ShardJob {
            fslab: "/usr/local/bin/fslab".into(),
            experiment: "/shared/exp dir/smallfiles.yaml".into(),
            experiment_id: "smallfiles".into(),
            profile: Some("quick".into()),
            sets: vec!["reps=2".into()],
            shards: 3,
            results: "/shared/results".into(),
            tag: "20261201T000000Z-abc".into(),
        }
    }

    #[test]
    fn the_array_script_runs_one_shard_per_task_into_the_shared_results() {
        let opts = SlurmOptions {
            partition: Some("fs".into()),
            sbatch: vec!["--time=01:00:00".into()],
            script_dir: "/shared/results/slurm/t".into(),
        };
        let s = slurm_array_script(&job(), &opts);
        assert!(s.starts_with("#!/bin/bash\n"), "{s}");
        assert!(s.contains("#SBATCH --array=1-3\n"), "{s}");
        assert!(s.contains("#SBATCH --partition=fs\n"), "{s}");
        assert!(s.contains("#SBATCH --time=01:00:00\n"), "{s}");
        assert!(
            s.contains("exec /usr/local/bin/fslab run '/shared/exp dir/smallfiles.yaml' --profile quick --set 'reps=2' --shard \"$SLURM_ARRAY_TASK_ID/3\" --results /shared/results/shards/20261201T000000Z-abc --quiet"),
            "{s}"
        );
        let m = slurm_merge_script(&job(), &opts);
        assert!(
            m.contains("exec /usr/local/bin/fslab merge /shared/results/shards/20261201T000000Z-abc/smallfiles/*/ -o /shared/results/smallfiles/20261201T000000Z-abc-merged"),
            "{m}"
        );
        assert!(!m.contains("--array"), "{m}");
        let sub = slurm_submit_script(&opts);
        assert!(sub.contains("--dependency=afterok:"), "{sub}");
    }

    #[test]
    fn names_are_dns_labels() {
        assert_eq!(
            k8s_name("fslab-Small_files-2026T"),
            "fslab-small-files-2026t"
        );
        assert!(k8s_name(&"x".repeat(100)).len() <= 52);
    }
}

/// Submitting to Slurm and waiting for a job went wrong.
#[derive(Debug, thiserror::Error)]
pub enum SlurmError {
    #[error("running {program} (is Slurm installed? see scripts/slurm-local.sh): {source}")]
    Spawn {
        program: &'static str,
        source: std::io::Error,
    },
    #[error("sbatch {} failed: {stderr}", script.display())]
    Sbatch { script: PathBuf, stderr: String },
    #[error("sbatch printed `{0}`, not a job id")]
    NotAJobId(String),
    #[error("a shard failed, so the merge job {merge_job} can never run (cancelled); see the shards' output in {}", script_dir.display())]
    ShardFailed {
        merge_job: String,
        script_dir: PathBuf,
    },
}

/// Submit a script; its job id.
pub fn sbatch(extra: &[String], script: &Path) -> Result<String, SlurmError> {
    let out = Command::new("sbatch")
        .arg("--parsable")
        .args(extra)
        .arg(script)
        .output()
        .map_err(|source| SlurmError::Spawn {
            program: "sbatch",
            source,
        })?;
    if !out.status.success() {
        return Err(SlurmError::Sbatch {
            script: script.to_path_buf(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    let text = String::from_utf8_lossy(&out.stdout);
    // `--parsable` prints `id` or `id;cluster`.
    let id = text.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        return Err(SlurmError::NotAJobId(text.trim().to_string()));
    }
    Ok(id)
}

/// Wait until a job has left the queue. A merge whose dependency can never be met (a
/// shard failed) is cancelled and reported.
pub fn wait_for(id: &str, script_dir: &Path) -> Result<(), SlurmError> {
    loop {
        let out = Command::new("squeue")
            .args(["-h", "-j", id, "-o", "%T %r"])
            .output()
            .map_err(|source| SlurmError::Spawn {
                program: "squeue",
                source,
            })?;
        let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let err = String::from_utf8_lossy(&out.stderr);
        // A finished job leaves the queue (then squeue calls its id invalid); any other
        // failure (slurmctld busy) is asked again.
        if !out.status.success() && !err.contains("Invalid job id") {
            std::thread::sleep(Duration::from_secs(2));
            continue;
        }
        if text.is_empty() {
            return Ok(());
        }
        if text.contains("DependencyNeverSatisfied") {
            let _ = Command::new("scancel").arg(id).status();
            return Err(SlurmError::ShardFailed {
                merge_job: id.to_string(),
                script_dir: script_dir.to_path_buf(),
            });
        }
        std::thread::sleep(Duration::from_secs(2));
    }
}
