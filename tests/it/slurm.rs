//! `fslab slurm` on a real one-node Slurm (scripts/slurm-local.sh), as root: the example
//! as a job array of 2 shards and a merge job; the merged bundle holds the rows and
//! tables of an unsharded run of the same plan; `down` leaves no daemon running.

use crate::common::{text, Scratch};
use crate::shard_rows::{keys, table_shape};
use std::path::{Path, PathBuf};
use std::process::Command;

const DAEMONS: [&str; 5] = [
    "munged",
    "slurmctld",
    "slurmd",
    "slurmstepd",
    "slurmscriptd",
];

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-local.sh")
}

/// Processes whose name is one of the Slurm/munge daemons.
fn daemons() -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if !name.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        if let Ok(comm) = std::fs::read_to_string(e.path().join("comm")) {
            let comm = comm.trim();
            if DAEMONS.contains(&comm) {
                out.push(format!("{comm} ({name})"));
            }
        }
    }
    out
}

/// Stops the cluster however the test ends.
struct Cluster;
impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(script()).arg("down").status();
    }
}

#[test]
fn slurm_runs_the_example_as_two_shards_and_merges_them() {
    let up = Command::new(script()).arg("up").output().unwrap();
    let cluster = Cluster;
    assert!(up.status.success(), "{}", text(&up));

    let s = Scratch::new("sl");
    let results = s.results();
    let o = s.run(&[
        "slurm",
        "smallfiles",
        "--profile",
        "quick",
        "--shards",
        "2",
        "--results",
        results.to_str().unwrap(),
        "--submit",
        "--wait",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("array job "), "{stdout}");
    assert!(lines[1].starts_with("merge job "), "{stdout}");
    let merged = PathBuf::from(lines.last().unwrap().trim());
    assert!(merged.starts_with(results.join("smallfiles")), "{stdout}");
    // The scripts that ran: an array of 2 and a merge.
    let scripts: Vec<PathBuf> = std::fs::read_dir(results.join("slurm"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(scripts.len(), 1, "{scripts:?}");
    let array = std::fs::read_to_string(scripts[0].join("array.sh")).unwrap();
    assert!(array.contains("#SBATCH --array=1-2"), "{array}");

    let m = fslab::Bundle::open(&merged).unwrap().manifest.clone();
    assert_eq!(m.status, "complete", "{m:?}");
    let mi = m.merged.clone().expect("a merged bundle");
    assert_eq!(mi.shards.len(), 2);
    assert_eq!(m.profile.as_deref(), Some("quick"));

    // An unsharded run of the same plan.
    let o = s.run(&["run", "smallfiles", "--profile", "quick", "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    let whole = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
    assert_eq!(keys(&merged), keys(&whole));
    assert_eq!(keys(&whole).len(), 10); // 2 points × 5 iterations
    let shape = table_shape(&merged);
    assert!(shape.contains_key("geometry"), "{shape:?}");
    assert_eq!(shape, table_shape(&whole));

    // A shard that fails: the merge can never run; --wait says so (and cancels it).
    let bad = s.root.join("bad");
    let o = s.run(&[
        "slurm",
        "smallfiles",
        "--shards",
        "2",
        "--fslab",
        "/bin/false",
        "--results",
        bad.to_str().unwrap(),
        "--submit",
        "--wait",
    ]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("a shard failed"),
        "{}",
        text(&o)
    );
    let queue = Command::new("squeue").arg("-h").output().unwrap();
    assert!(queue.stdout.is_empty(), "{}", text(&queue));

    drop(cluster);
    let left = daemons();
    assert!(left.is_empty(), "left running after down: {left:?}");
}
