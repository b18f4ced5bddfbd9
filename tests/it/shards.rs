//! `fslab run --shard K/N` and `fslab merge`: shards of the example, run on real loop
//! devices (root), merge into the rows and tables of an unsharded run; every refusal of
//! `merge` names its reason; `--resume` works per shard.

use crate::common::{text, Scratch};
use crate::shard_rows::{keys, table_shape};
use fslab::store::{BundleWriter, ExperimentInfo, Manifest, PointRecord, PointStatus, RunRow};
use fslab::Bundle;
use std::path::{Path, PathBuf};

const SMALL: [&str; 4] = ["--set", "files=300", "--set", "reps=2"];

fn run_bundle(s: &Scratch, extra: &[&str]) -> PathBuf {
    let mut args = vec!["run", "smallfiles", "--quiet"];
    args.extend(SMALL);
    args.extend(extra);
    let o = s.run(&args);
    assert!(o.status.success(), "{}", text(&o));
    PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
}

#[test]
fn two_shards_merged_hold_the_rows_and_tables_of_an_unsharded_run() {
    let s = Scratch::new("sh");
    let whole = run_bundle(&s, &[]);
    let one = run_bundle(&s, &["--shard", "1/2"]);
    let two = run_bundle(&s, &["--shard", "2/2"]);

    // A shard records the split, the full plan and its hash; it runs only its points.
    let m1 = Bundle::open(&one).unwrap().manifest.clone();
    let info = m1.shard.clone().expect("shard recorded");
    assert_eq!(info.shard, "1/2");
    assert_eq!(info.plan_points, ["fs=ext4", "fs=xfs"]);
    assert_eq!(
        info.plan_sha256,
        fslab::shard::plan_hash(["fs=ext4", "fs=xfs"])
    );
    assert_eq!(m1.status, "complete", "{m1:?}");
    assert_eq!(m1.points[0].status, "ok");
    assert_eq!(m1.points[1].status, PointStatus::OtherShard);
    assert_eq!(
        m1.points[1].reason.as_deref(),
        Some("runs in shard 2/2"),
        "{:?}",
        m1.points[1]
    );
    assert_eq!(
        keys(&one),
        [("fs=ext4".to_string(), 1), ("fs=ext4".to_string(), 2)]
    );
    assert!(!one.join("logs/01-fs=xfs").exists());

    let out = s.root.join("merged");
    let o = s.run(&[
        "merge",
        one.to_str().unwrap(),
        two.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        out.to_str().unwrap()
    );
    assert_eq!(keys(&out), keys(&whole));
    assert_eq!(keys(&out).len(), 4);
    let shape = table_shape(&out);
    assert!(
        shape.contains_key("geometry") && shape.contains_key("fsmark"),
        "{shape:?}"
    );
    assert_eq!(shape, table_shape(&whole));
    // The journal too, and every point's logs and captures.
    let lines = std::fs::read_to_string(out.join("runs.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 4);
    for p in ["00-fs=ext4", "01-fs=xfs"] {
        assert!(out.join("logs").join(p).is_dir(), "{p}");
        assert!(out.join("captures").join(p).is_dir(), "{p}");
    }
    let m = Bundle::open(&out).unwrap().manifest.clone();
    assert_eq!(m.status, "complete");
    assert!(m.shard.is_none());
    assert!(m.points.iter().all(|p| p.status == "ok"), "{:?}", m.points);
    let mi = m.merged.expect("merge recorded");
    assert_eq!(mi.shards.len(), 2);
    assert_eq!(mi.shards[0].points, [0]);
    assert_eq!(mi.shards[1].points, [1]);
    assert!(!mi.shards[1].environment.kernel.is_empty());
    assert!(mi.shards[1].environment.tools.contains_key("fs_mark"));
    assert!(!mi.partial);
    // The merged bundle reads like any other: claims and compare run on it.
    let o = s.run(&["claims", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let o = s.run(&["compare", whole.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    // Same machine: nothing to warn about.
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("differing"),
        "{}",
        text(&o)
    );

    // A missing shard is refused, unless --partial.
    let partial = s.root.join("partial");
    let o = s.run(&[
        "merge",
        two.to_str().unwrap(),
        "-o",
        partial.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("missing shards 1/2 of 2"),
        "{}",
        text(&o)
    );
    assert!(!partial.exists());
    let o = s.run(&[
        "merge",
        "--partial",
        two.to_str().unwrap(),
        "-o",
        partial.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let m = Bundle::open(&partial).unwrap().manifest.clone();
    assert_eq!(m.status, "partial");
    assert_eq!(m.points[0].status, PointStatus::MissingShard);
    let mi = m.merged.unwrap();
    assert!(mi.partial && mi.missing == ["1/2"], "{mi:?}");
    assert_eq!(keys(&partial).len(), 2);

    // An unsharded bundle is not a shard.
    let o = s.run(&[
        "merge",
        whole.to_str().unwrap(),
        two.to_str().unwrap(),
        "-o",
        s.root.join("x").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not a shard"),
        "{}",
        text(&o)
    );
}

#[test]
fn resume_finishes_only_its_own_shard() {
    let s = Scratch::new("sr");
    let two = run_bundle(&s, &["--shard", "2/2"]);
    // Make it look killed half-way: its point pending, its rows gone.
    let mpath = two.join("manifest.json");
    let mut m: Manifest = serde_json::from_slice(&std::fs::read(&mpath).unwrap()).unwrap();
    m.status = "interrupted".parse().unwrap();
    m.points[1].status = "running".parse().unwrap();
    m.points[1].iterations = 1;
    std::fs::write(&mpath, serde_json::to_vec_pretty(&m).unwrap()).unwrap();
    // Another shard's resume is refused.
    let o = s.run(&[
        "run",
        "--resume",
        two.to_str().unwrap(),
        "--shard",
        "1/2",
        "--quiet",
    ]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("it ran shard 2/2, not shard 1/2"),
        "{}",
        text(&o)
    );
    let o = s.run(&["run", "--resume", two.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    let m = Bundle::open(&two).unwrap().manifest.clone();
    assert_eq!(m.status, "complete");
    assert_eq!(
        m.points[0].status,
        PointStatus::OtherShard,
        "{:?}",
        m.points[0]
    );
    assert_eq!(m.points[1].status, "ok");
    assert_eq!(
        keys(&two),
        [("fs=xfs".to_string(), 1), ("fs=xfs".to_string(), 2)]
    );
}

// ---- merge refusals on synthetic shard bundles (no devices needed) ----

fn fake_shard(root: &Path, k: usize, n: usize, tweak: impl FnOnce(&mut Manifest)) -> PathBuf {
    let ids = ["fs=ext4", "fs=xfs", "fs=btrfs"];
    let shard = fslab::shard::Shard::new(k, n).unwrap();
    let mut m = Manifest {
        experiment: ExperimentInfo {
            id: "e".into(),
            sha256: "a".repeat(64),
            yaml: include_str!("../../experiments/smallfiles.yaml").into(),
            ..Default::default()
        },
        profile: Some("quick".into()),
        status: "complete".parse().unwrap(),
        points: ids
            .iter()
            .enumerate()
            .map(|(i, id)| PointRecord {
                id: id.to_string(),
                index: i,
                status: if shard.owns(i) {
                    PointStatus::Ok
                } else {
                    PointStatus::OtherShard
                },
                iterations: 1,
                ..Default::default()
            })
            .collect(),
        shard: Some(fslab::store::merge::ShardInfo::new(
            shard,
            ids.iter().map(|s| s.to_string()).collect(),
        )),
        ..Default::default()
    };
    m.environment.hostname = format!("node{k}");
    tweak(&mut m);
    let root = root.join(format!("s{k}-{}", rand::random::<u32>()));
    let mut w = BundleWriter::create(&root, m.clone()).unwrap();
    for p in m.points.iter().filter(|p| p.status == "ok") {
        w.append_run(RunRow {
            experiment: "e".into(),
            point_id: p.id.clone(),
            point_index: p.index,
            vars: serde_json::Map::new(),
            iteration: 1,
            replicate: 1,
            wall_s: 1.0,
            user_s: 0.0,
            sys_s: 0.0,
            exit_code: 0,
            status: "ok".parse().unwrap(),
            started_at: "t".into(),
        })
        .unwrap();
    }
    w.dir().to_path_buf()
}

fn refusal(bundles: &[PathBuf], partial: bool) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let e = fslab::store::merge::merge(bundles, &out, partial).unwrap_err();
    assert!(!out.exists(), "a refused merge wrote {}", out.display());
    e.to_string()
}

#[test]
fn merge_refuses_differing_plans_overlaps_and_missing_shards_naming_why() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path();
    let a = fake_shard(r, 1, 2, |_| {});
    let b = fake_shard(r, 2, 2, |_| {});
    // The good case merges, and says the two nodes differ.
    let out = r.join("ok");
    let merged = fslab::store::merge::merge(&[b.clone(), a.clone()], &out, false).unwrap();
    assert_eq!(merged.runs().unwrap().height(), 3);
    let diffs = fslab::store::merge::shard_differences(merged.manifest());
    assert_eq!(diffs.len(), 1, "{diffs:?}");
    assert!(diffs[0].contains("host `node1` vs `node2`"), "{diffs:?}");
    assert!(
        diffs[0].contains("[fs=ext4, fs=btrfs] (shard 1/2) and [fs=xfs] (shard 2/2)"),
        "{diffs:?}"
    );
    // `fslab compare` and `fslab claims` say that the points ran on different machines.
    for args in [
        vec![
            "compare",
            out.to_str().unwrap(),
            out.to_str().unwrap(),
            "--warmup",
            "0",
        ],
        vec!["claims", out.to_str().unwrap()],
    ] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_fslab"))
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("warning: points [fs=ext4, fs=btrfs] (shard 1/2) and [fs=xfs] (shard 2/2) ran on differing hardware or software: host `node1` vs `node2`"),
            "{args:?}: {}",
            text(&o)
        );
    }
    // Into an existing directory: no.
    let e = fslab::store::merge::merge(&[a.clone(), b.clone()], &out, false).unwrap_err();
    assert!(e.to_string().contains("already exists"), "{e}");

    let sha = fake_shard(r, 2, 2, |m| m.experiment.sha256 = "b".repeat(64));
    let e = refusal(&[a.clone(), sha], false);
    assert!(e.contains("different experiment sha256"), "{e}");

    let prof = fake_shard(r, 2, 2, |m| m.profile = Some("published".into()));
    let e = refusal(&[a.clone(), prof], false);
    assert!(
        e.contains("different profile") && e.contains("published"),
        "{e}"
    );

    let over = fake_shard(r, 2, 2, |m| {
        m.overrides.insert("files".into(), 10.into());
    });
    let e = refusal(&[a.clone(), over], false);
    assert!(
        e.contains("different overrides") && e.contains("files"),
        "{e}"
    );

    let plan = fake_shard(r, 2, 2, |m| {
        m.shard.as_mut().unwrap().plan_sha256 = "c".repeat(64);
    });
    let e = refusal(&[a.clone(), plan], false);
    assert!(e.contains("different plan"), "{e}");

    let n3 = fake_shard(r, 2, 3, |_| {});
    let e = refusal(&[a.clone(), n3], false);
    assert!(e.contains("different number of shards"), "{e}");

    let again = fake_shard(r, 1, 2, |_| {});
    let e = refusal(&[a.clone(), b.clone(), again], false);
    assert!(e.contains("overlapping points: fs=ext4 ran in both"), "{e}");

    let e = refusal(std::slice::from_ref(&a), false);
    assert!(
        e.contains("missing shards 2/2 of 2") && e.contains("--partial"),
        "{e}"
    );

    let running = fake_shard(r, 2, 2, |m| m.status = "running".parse().unwrap());
    let e = refusal(&[a.clone(), running], true);
    assert!(
        e.contains("status is `running`") && e.contains("--resume"),
        "{e}"
    );
}
