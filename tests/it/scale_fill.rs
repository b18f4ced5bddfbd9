//! Issue 28's derived scale on bundles made by the real runner: seed 001's files are
//! compared in total (files × loops), and its filesystems' measured fill (dumpe2fs -h)
//! against the post's, with today's `scale:` of the experiment.

use serde_json::Value;
use std::process::Command;

fn verdicts(bundle: &str) -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_fslab"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "claims",
            "--json",
            "--experiment",
            "experiments/ext-fsck-small-files.yaml",
            bundle,
        ])
        .output()
        .expect("fslab claims runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    doc["claims"].as_array().expect("claims").clone()
}

fn scale_of(v: &Value) -> String {
    v["scale"].as_str().unwrap_or_default().to_string()
}

#[test]
fn files_are_compared_in_total_and_a_kept_fill_is_said_beside_the_scale() {
    let vs = verdicts("data/reruns/001");
    assert!(!vs.is_empty());
    for v in &vs {
        let s = scale_of(v);
        assert!(
            s.contains("files_total=52000 here, 45600000 (files × loops) published"),
            "{s}"
        );
        assert!(!s.contains("loops=1 here"), "{s}");
        // The repro profile keeps the post's share of inodes in use (-N 69400): not a gap.
        let (gap, said) = s.split_once("; ").expect("a note after the gap");
        assert!(!gap.contains("inodes in use"), "{s}");
        assert!(said.contains("inodes in use 74.7 % here"), "{s}");
        assert!(said.contains("74.8 % published (assumed: "), "{s}");
    }
}

#[test]
fn a_filesystem_much_emptier_than_the_posts_is_a_scale_gap() {
    // The size sweep keeps mke2fs's default inode ratio: 40 % of the inodes in use on 2 GiB.
    let vs = verdicts("data/reruns/001-size-2GiB");
    assert!(!vs.is_empty());
    for v in &vs {
        let s = scale_of(v);
        assert!(s.starts_with("reduced: "), "{s}");
        assert!(
            s.contains("inodes in use 39.68 % here (`geometry` of dumpe2fs -h after the workload, 2 filesystems)"),
            "{s}"
        );
        assert_eq!(v["tier"], "not_applicable", "{v}");
    }
}
