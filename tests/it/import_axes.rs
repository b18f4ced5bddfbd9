//! `fslab import` on posts that vary two things at once, or the filesystem (issue 41
//! pattern 4): runs over filesystems and a second parameter are a grid of clean axes
//! (`fs: [xfs, ext4]` × `clients: [32, 1]`), never one `variant` axis; each point makes
//! and mounts its own filesystem and the benchmark runs on `{{mnt}}`.

use super::import::{draft_of, fixture_post, note_at};
use super::import_dirs::line_of;
use fslab::import::NoteKind;
use std::process::Command;

/// The draft's matrix as (axis, values as text).
fn matrix(e: &fslab::Experiment) -> Vec<(String, Vec<String>)> {
    e.def
        .matrix
        .iter()
        .map(|(k, vs)| (k.clone(), vs.iter().map(|v| v.to_string()).collect()))
        .collect()
}

/// `fslab plan` of a draft's text, as the user sees it.
fn plan_text(yaml: &str, name: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, yaml).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_fslab"))
        .arg("plan")
        .arg(&path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// The text of one point of `fslab plan`'s output, up to the next point.
fn point<'a>(plan: &'a str, id: &str) -> &'a str {
    let start = plan
        .find(&format!("[{id}]"))
        .unwrap_or_else(|| panic!("no point {id}: {plan}"));
    let rest = &plan[start..];
    let end = rest[1..].find("\npoint ").map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

/// The acceptance corpus's dbench reply: `dbench -s -t 60 -D /xfs 32`, `… 1`, then on
/// `/ext4`: two axes, a device per filesystem made and mounted at its points only.
#[test]
fn dbench_on_host_paths_named_after_filesystems_is_a_grid() {
    let text = fixture_post(
        "../import-acceptance",
        "xfs-dbench-sync-throughput-reply.txt",
    );
    let (d, e) = draft_of(&text);
    assert_eq!(
        matrix(&e),
        [
            (
                "fs".to_string(),
                vec!["xfs".to_string(), "ext4".to_string()]
            ),
            ("value".to_string(), vec!["32".to_string(), "1".to_string()]),
        ]
    );
    let devices: Vec<&String> = e.def.devices.keys().collect();
    assert_eq!(devices, ["xfs", "ext4"]);
    let w = format!("{:?}", e.def.workload.run);
    assert!(w.contains("-s -t 60 -D {{mnt}} {{value}}"), "{w}");
    assert!(e.def.workload_variants.is_empty());
    let line = line_of(&text, "> > dbench -s -t 60 -D /xfs 32");
    note_at(&d, line, NoteKind::Guess, "a grid of `fs` × `value`");
    note_at(&d, line, NoteKind::Guess, "`/xfs`, `/ext4`");
    let yaml = d.yaml.as_deref().unwrap();
    assert!(!yaml.contains("variant"), "{yaml}");
    let plan = plan_text(yaml, "dbench.yaml");
    let p = point(&plan, "fs=ext4,value=1");
    assert!(p.contains("mkfs.ext4 -F {{dev.ext4}}"), "{p}");
    assert!(p.contains("mount {{dev.ext4}} {{mnt}}"), "{p}");
    assert!(!p.contains("mkfs.xfs"), "{p}");
    assert!(p.contains("dbench -s -t 60 -D {{mnt}} 1"), "{p}");
    let p = point(&plan, "fs=xfs,value=32");
    assert!(
        p.contains("mkfs.xfs -f {{dev.xfs}}") && !p.contains("mkfs.ext4"),
        "{p}"
    );
    assert!(p.contains("-D {{mnt}} 32"), "{p}");
}

/// A prompt session that makes xfs, then ext4, on one disk and runs fs_mark at 4 and 16
/// threads on each: `fs: [xfs, ext4]` × `t: [4, 16]`, the post's one disk made with the
/// filesystem of each point (`when:`), fs_mark on `{{mnt}}/t`.
#[test]
fn mkfs_runs_over_filesystems_and_threads_are_a_grid() {
    let text = fixture_post("styled", "fsdevel-fs-mark-xfs-ext4-threads.txt");
    let (d, e) = draft_of(&text);
    assert_eq!(
        matrix(&e),
        [
            (
                "fs".to_string(),
                vec!["xfs".to_string(), "ext4".to_string()]
            ),
            ("t".to_string(), vec!["4".to_string(), "16".to_string()]),
        ]
    );
    let devices: Vec<&String> = e.def.devices.keys().collect();
    assert_eq!(devices, ["data"]);
    let w = format!("{:?}", e.def.workload.run);
    assert!(
        w.contains("{{fs_mark}} -d {{mnt}}/t -n 20000 -s 0 -t {{t}}"),
        "{w}"
    );
    // fs_mark runs once per point, not again in `capture:`
    assert!(e.def.capture.is_empty(), "{:?}", e.def.capture);
    let yaml = d.yaml.as_deref().unwrap();
    // no step names the post's mount points (comments quote the post)
    let steps: Vec<&str> = yaml
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect();
    assert!(
        !steps
            .iter()
            .any(|l| l.contains("variant") || l.contains("/mnt/")),
        "{yaml}"
    );
    note_at(
        &d,
        line_of(&text, "# mkfs.xfs -f /dev/nvme1n1"),
        NoteKind::Guess,
        "a grid of `fs` × `t`",
    );
    let plan = plan_text(yaml, "fsmark.yaml");
    let p = point(&plan, "fs=ext4,t=16");
    assert!(
        p.contains("mkfs.ext4 -F {{dev.data}}") && !p.contains("mkfs.xfs"),
        "{p}"
    );
    assert!(p.contains("mount {{dev.data}} {{mnt}}"), "{p}");
    assert!(p.contains("-t 16"), "{p}");
    let p = point(&plan, "fs=xfs,t=4");
    assert!(
        p.contains("mkfs.xfs -f {{dev.data}}") && !p.contains("mkfs.ext4"),
        "{p}"
    );
}
