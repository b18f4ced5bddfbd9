//! `fslab import` on posts that vary two things at once, or the filesystem (issue 41
//! pattern 4): runs over filesystems and a second parameter are a grid of clean axes
//! (`fs: [xfs, ext4]` × `clients: [32, 1]`), never one `variant` axis; each point makes
//! and mounts its own filesystem and the benchmark runs on `{{mnt}}`.

use super::common::{text, walk, Scratch};
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
            (
                "clients".to_string(),
                vec!["32".to_string(), "1".to_string()]
            ),
        ]
    );
    let devices: Vec<&String> = e.def.devices.keys().collect();
    assert_eq!(devices, ["xfs", "ext4"]);
    let w = format!("{:?}", e.def.workload.run);
    assert!(w.contains("-s -t 60 -D {{mnt}} {{clients}}"), "{w}");
    assert!(e.def.workload_variants.is_empty());
    let line = line_of(&text, "> > dbench -s -t 60 -D /xfs 32");
    note_at(&d, line, NoteKind::Guess, "a grid of `fs` × `clients`");
    note_at(
        &d,
        line,
        NoteKind::Guess,
        "its filesystems at `/xfs`, `/ext4`",
    );
    let yaml = d.yaml.as_deref().unwrap();
    assert!(!yaml.contains("variant"), "{yaml}");
    let plan = plan_text(yaml, "dbench.yaml");
    let p = point(&plan, "fs=ext4,clients=1");
    assert!(p.contains("mkfs.ext4 -F {{dev.ext4}}"), "{p}");
    assert!(p.contains("mount {{dev.ext4}} {{mnt}}"), "{p}");
    assert!(!p.contains("mkfs.xfs"), "{p}");
    assert!(p.contains("dbench -s -t 60 -D {{mnt}} 1"), "{p}");
    let p = point(&plan, "fs=xfs,clients=32");
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
    // each run's fs_mark table is labelled by the command above it: the runs apart
    for (value, fs, t) in [
        (52114.3, "xfs", "-t 4"),
        (118276.9, "xfs", "-t 16"),
        (47310.8, "ext4", "-t 4"),
        (90412.5, "ext4", "-t 16"),
    ] {
        let r = d
            .rows
            .iter()
            .find(|r| r.value == value)
            .unwrap_or_else(|| panic!("no row {value}"));
        let get = |k: &str| r.settings.iter().find(|s| s.0 == k).map(|s| s.1.as_str());
        assert_eq!(get("fs"), Some(fs), "{r:?}");
        assert!(get("command").is_some_and(|c| c.ends_with(t)), "{r:?}");
    }
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

/// A post that compares filesystems in prose and labels its result rows by them.
const COMPARED: &str = "Subject: Re: fsync latency on small files\n\nWe compared xfs and btrfs on the same SSD, each freshly made, with\n\nfio config: write bs=4k size=4M fsync=1\n\nResults:\n\n  xfs:    write: IOPS=2112, BW=8448KiB/s\n  btrfs:  write: IOPS=1310, BW=5240KiB/s\n\nSo btrfs is about 40% slower here.\n";

/// The femu issue of the acceptance corpus: "I use fio to test f2fs and ext4" and one
/// result line per filesystem: the prose's filesystems are the draft's `fs` axis, with a
/// device per filesystem and the workload on `{{mnt}}`.
#[test]
fn filesystems_named_in_prose_and_labelling_the_rows_are_an_axis() {
    let text = fixture_post("../import-acceptance", "github-femu-f2fs-ext4-fio.txt");
    let (d, e) = draft_of(&text);
    assert_eq!(
        matrix(&e),
        [(
            "fs".to_string(),
            vec!["f2fs".to_string(), "ext4".to_string()]
        )]
    );
    let devices: Vec<&String> = e.def.devices.keys().collect();
    assert_eq!(devices, ["f2fs", "ext4"]);
    let line = line_of(&text, "I use fio to test f2fs and ext4");
    note_at(
        &d,
        line,
        NoteKind::Recognised,
        "the post's result rows are labelled by them (`f2fs` line 5, `ext4` line 6)",
    );
    // fio's options as the post wrote them (`rw bs=4096 size=1GB …`), as fio takes them
    let w = format!("{:?}", e.def.workload.run);
    assert!(w.contains("\"--name=job\", \"--rw=rw\", \"--bs=4096\", \"--size=1GB\", \"--numjobs=2\", \"--runtime=60\""), "{w}");
    assert!(
        d.checks
            .iter()
            .any(|c| c.line == 4 && c.what.contains("fio's options written as a job file")),
        "{:#?}",
        d.checks
    );
    let plan = plan_text(d.yaml.as_deref().unwrap(), "femu.yaml");
    let p = point(&plan, "fs=f2fs");
    assert!(
        p.contains("mkfs.f2fs -f {{dev.f2fs}}") && p.contains("mount {{dev.f2fs}} {{mnt}}"),
        "{p}"
    );
    assert!(p.contains("sh {{mnt}} fio"), "{p}");
    assert!(!point(&plan, "fs=ext4").contains("f2fs -f"), "{plan}");
}

/// Filesystems the prose names but the results do not label stay a comment; labelled
/// ones make a draft that runs: a real run on loop devices makes xfs and btrfs, one per
/// point, and fio writes its file on the point's filesystem.
#[test]
fn filesystems_only_named_stay_a_comment_and_labelled_ones_run() {
    let only_named = COMPARED
        .replace("  xfs:    write:", "without the patch:")
        .replace("  btrfs:  write:", "with the patch:");
    let (d, e) = draft_of(&only_named);
    assert!(e.def.matrix.is_empty(), "{:?}", e.def.matrix);
    let yaml = d.yaml.unwrap();
    assert!(yaml.contains("#   fs: [\"xfs\", \"btrfs\"]"), "{yaml}");
    assert!(!yaml.contains("mkfs"), "{yaml}");

    // rows labelled by filesystems, but the workload reads the raw disk: no `fs` axis
    let raw = "Subject: raw read speed\n\nWe compared xfs and ext4 users on this disk, but first the raw device:\n\n# fio --name=r --rw=read --bs=1M --size=1G --filename=/dev/sdb\n\nxfs:  read: IOPS=412, BW=412MiB/s\next4: read: IOPS=398, BW=398MiB/s\n";
    let (d, e) = draft_of(raw);
    assert!(e.def.matrix.is_empty(), "{:?}", e.def.matrix);
    let only_comment: Vec<_> = d
        .checks
        .iter()
        .filter(|c| c.what.contains("xfs and ext4"))
        .collect();
    assert_eq!(only_comment.len(), 1, "{:#?}", d.checks);

    let (d, e) = draft_of(COMPARED);
    assert_eq!(
        matrix(&e),
        [(
            "fs".to_string(),
            vec!["xfs".to_string(), "btrfs".to_string()]
        )]
    );
    let s = Scratch::new("fsrows");
    let path = s.root.join("compared.yaml");
    std::fs::write(&path, d.yaml.unwrap()).unwrap();
    let o = s.run(&["run", path.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    let bundle = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let logs: Vec<String> = walk(std::path::Path::new(&bundle))
        .into_iter()
        .map(|p| p.to_string_lossy().to_string())
        .collect();
    let mkfs_out = |fs: &str| -> String {
        logs.iter()
            .filter(|p| {
                p.contains(&format!("fs={fs}")) && p.contains("mkfs") && p.ends_with(".stdout")
            })
            .map(|p| std::fs::read_to_string(p).unwrap())
            .collect()
    };
    assert!(mkfs_out("xfs").contains("agcount"), "{logs:#?}");
    assert!(
        mkfs_out("btrfs").to_lowercase().contains("btrfs"),
        "{logs:#?}"
    );
    let fio: Vec<&String> = logs
        .iter()
        .filter(|p| p.contains("fio") && p.ends_with(".stdout"))
        .collect();
    assert_eq!(fio.len(), 2, "{logs:#?}");
    for p in fio {
        // fio ran the post's options (written job-file style in the post)
        let out = std::fs::read_to_string(p).unwrap();
        assert!(
            out.contains("job: (g=0): rw=write, bs=(R) 4096B-4096B"),
            "{p}: {out}"
        );
    }
}

/// A table whose rows are labelled by commands (a wiki's `| pgbench … | done in 24.46 s
/// |`, under a `Command` header): the numbers are those commands', so the first is the
/// workload and the others run after it; a table labelled by prose with options (`with
/// -o discard`) names no command.
#[test]
fn commands_that_label_a_tables_rows_are_the_experiment() {
    let post = "Subject: sysbench fileio on the new controller\n\n## Results\n\n| Command | MiB/s |\n|---|---|\n| sysbench fileio --file-total-size=8G --file-test-mode=rndrw run | 152.3 |\n| sysbench fileio --file-total-size=8G --file-test-mode=seqwr run | 820.1 |\n\n| Setting | MiB/s |\n|---|---|\n| with -o discard | 140.2 |\n| without -o discard | 151.0 |\n";
    let (d, e) = draft_of(post);
    let w = format!("{:?}", e.def.workload.run);
    assert!(
        w.contains("{{sysbench}} fileio --file-total-size=8G --file-test-mode=rndrw run"),
        "{w}"
    );
    let capture = format!("{:?}", e.def.capture);
    assert!(capture.contains("--file-test-mode=seqwr run"), "{capture}");
    let yaml = d.yaml.clone().unwrap();
    assert!(
        !yaml.contains("{{with}}") && !yaml.contains("name: \"with\""),
        "{yaml}"
    );
    note_at(
        &d,
        7,
        NoteKind::Recognised,
        "workload: line 7: sysbench fileio",
    );
}
