//! The three seed experiments, quick profile, end to end on real loop devices (as root),
//! plus the doctor on this machine. What a point can do depends on the machine (xfsprogs
//! version, CONFIG_XFS_RT, an installed fsstress): each test finds out the same way an
//! operator would (the tool's version, the kernel configuration) and expects accordingly.

use crate::common::{strings, text, walk, Scratch};
use fslab::doctor::{ConfigValue, Host, ProbingHost, Version};
use polars::prelude::*;
use std::path::PathBuf;

/// `fslab run EXP --profile quick` in a scratch dir: the bundle and fslab's stderr.
fn run_quick(s: &Scratch, exp: &str) -> (fslab::Bundle, String) {
    let o = s.run(&["run", exp, "--profile", "quick", "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let bundle = fslab::Bundle::open(&stdout).unwrap();
    // Nothing of the run is left attached or mounted.
    assert!(
        s.loops().is_empty() && s.mounts().is_empty(),
        "{:?} {:?}",
        s.loops(),
        s.mounts()
    );
    (bundle, String::from_utf8_lossy(&o.stderr).to_string())
}

/// Every capture parses: no warning may be printed.
fn check_warnings(stderr: &str) {
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning:")).collect();
    assert!(warnings.is_empty(), "unexpected warnings:\n{stderr}");
}

/// The table exists, with rows of `kind`.
fn expect_table(b: &fslab::Bundle, table: &str, kind: &str, stderr: &str) -> Option<DataFrame> {
    if b.tables().unwrap().contains(&table.to_string()) {
        let df = b.table(table).unwrap();
        assert!(df.height() > 0, "{table} is empty");
        for key in [
            "experiment",
            "point_id",
            "point_index",
            "iteration",
            "capture",
            "kind",
        ] {
            assert!(df.column(key).is_ok(), "{table} lacks {key}: {df}");
        }
        let kinds = df.column("kind").unwrap().str().unwrap().clone();
        assert!(
            kinds.iter().any(|k| k == Some(kind)),
            "no {kind} rows in {table}: {df}"
        );
        return Some(df);
    }
    panic!("no {table} table:\n{stderr}");
}

/// `fslab claims BUNDLE --json`: a verdict and a reason for every claim.
fn claims(s: &Scratch, b: &fslab::Bundle) -> Vec<serde_json::Value> {
    let o = s.run(&["claims", &b.path().display().to_string(), "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let v: Vec<serde_json::Value> = report["claims"].as_array().unwrap().clone();
    // A count per tier, every tier listed, adding up to the post's claims (fslab's own
    // variants are not counted).
    let tiers = report["tiers"].as_object().unwrap();
    assert_eq!(tiers.len(), 5, "{report}");
    assert_eq!(
        tiers.values().map(|n| n.as_u64().unwrap()).sum::<u64>(),
        v.iter().filter(|c| c["variant"] == false).count() as u64
    );
    let exp = fslab::Experiment::load(b.path().join("experiment.yaml")).unwrap();
    assert_eq!(v.len(), exp.def.claims.len());
    for c in &v {
        let tier = c["tier"].as_str().unwrap();
        assert!(
            [
                "reproduced",
                "reproduced_with_substitutes",
                "not_reproduced",
                "inconclusive",
                "not_applicable"
            ]
            .contains(&tier),
            "{c}"
        );
        assert!(c.get("verdict").is_none(), "{c}");
        assert!(!c["reason"].as_str().unwrap().is_empty(), "{c}");
    }
    // The text form says the same.
    let o = s.run(&["claims", &b.path().display().to_string()]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let post = v.iter().filter(|c| c["variant"] == false).count();
    assert!(out.contains(&format!("{post} claims by tier:")), "{out}");
    v
}

fn installed_version(program: &str) -> Option<Version> {
    let host = ProbingHost::default();
    let path = host.which(program)?;
    host.version_line(&path)
        .as_deref()
        .and_then(Version::find_in)
}

fn point<'a>(b: &'a fslab::Bundle, id: &str) -> &'a fslab::store::PointRecord {
    b.manifest()
        .points
        .iter()
        .find(|p| p.id == id)
        .unwrap_or_else(|| panic!("no point {id}"))
}

#[test]
fn xfs_parent_pointers_quick() {
    let s = Scratch::new("fslab-test-seeds-000-");
    let (b, stderr) = run_quick(&s, "xfs-parent-pointers");
    check_warnings(&stderr);
    let m = b.manifest();
    let parent_ok = installed_version("mkfs.xfs").is_some_and(|v| v >= Version(vec![6, 10]));
    for id in ["parent=0,link=1", "parent=0,link=0"] {
        let p = point(&b, id);
        assert_eq!(p.status, "ok", "{p:?}");
        assert_eq!(p.iterations, 10, "{p:?}");
    }
    for id in ["parent=1,link=1", "parent=1,link=0"] {
        let p = point(&b, id);
        if parent_ok {
            assert_eq!(p.status, "ok", "{p:?}");
        } else {
            assert_eq!(p.status, "unsupported", "{p:?}");
            let r = p.reason.as_deref().unwrap();
            assert!(
                r.contains("≥ 6.10 is needed") && r.contains("xfsprogs"),
                "{r}"
            );
            assert!(
                stderr.contains(&format!("point {id}: unsupported")),
                "{stderr}"
            );
        }
    }
    let ok = m.points.iter().filter(|p| p.status == "ok").count();
    assert_eq!(b.runs().unwrap().height(), 10 * ok);

    // Which fsstress ran is on record, and a stand-in is named in every verdict.
    let real = ProbingHost::default().which("fsstress").is_some();
    let t = &m.tools["fsstress"];
    assert_eq!(t.stand_in.is_some(), !real, "{t:?}");
    assert!(m.environment.tools.contains_key("fsstress"));
    assert!(point(&b, "parent=0,link=1")
        .notes
        .iter()
        .any(|n| n.starts_with("fsstress: ")));

    // The geometry is parsed: the post's data size and AG size.
    let geo = expect_table(&b, "geometry", "mkfs.xfs", &stderr).unwrap();
    let kinds = strings(&geo, "kind");
    assert!(kinds.iter().any(|k| k == "mkfs.xfs") && kinds.iter().any(|k| k == "xfs_info"));
    let keys = strings(&geo, "key");
    let sections = strings(&geo, "section");
    let values = strings(&geo, "value");
    let find = |sec: &str, key: &str| {
        (0..keys.len())
            .find(|&i| sections[i] == sec && keys[i] == key)
            .map(|i| values[i].clone())
    };
    assert_eq!(find("data", "blocks").as_deref(), Some("5192704"));
    assert_eq!(find("meta-data", "agsize").as_deref(), Some("1298176"));

    for c in claims(&s, &b) {
        let reason = c["reason"].as_str().unwrap();
        // Quick scale: nothing can be confirmed or refuted.
        assert_eq!(c["tier"], "not_applicable", "{c}");
        if !real {
            assert!(
                c["substitutions"].to_string().contains("stand-in workload"),
                "{c}"
            );
        }
        if !parent_ok && c["id"] != "first-run-slowest" && !reason.starts_with("not measured here")
        {
            assert!(reason.starts_with("unsupported here"), "{c}");
        }
    }
}

#[test]
fn ext_fsck_small_files_quick() {
    let s = Scratch::new("fslab-test-seeds-001-");
    let (b, stderr) = run_quick(&s, "ext-fsck-small-files");
    check_warnings(&stderr);
    for p in &b.manifest().points {
        assert_eq!(p.status, "ok", "{p:?}");
        assert_eq!(p.iterations, 3);
    }
    // Five points (ext3, ext4, ext4 without uninit_bg, without flex_bg, and the post's
    // seekwatcher ext4 of 2008) × three passes.
    assert_eq!(b.runs().unwrap().height(), 15);
    // e2fsck -tt parsed: every pass of every point's check, and its summary line.
    let fsck = expect_table(&b, "fsck", "e2fsck", &stderr).unwrap();
    let kinds = strings(&fsck, "row_kind");
    let files = strings(&fsck, "files_used");
    let summaries: Vec<usize> = (0..kinds.len())
        .filter(|&i| kinds[i] == "summary")
        .collect();
    assert_eq!(summaries.len(), 15, "{fsck}");
    for i in summaries {
        // 51,200 files plus 256 directories, the root, lost+found and reserved inodes.
        let n: u64 = files[i].parse().unwrap();
        assert!((51_200 + 256..51_200 + 300).contains(&n), "{n}");
    }
    assert!(kinds.iter().filter(|k| *k == "pass").count() >= 15 * 5);
    let fsmark = expect_table(&b, "fsmark", "fs_mark", &stderr).unwrap();
    assert_eq!(strings(&fsmark, "count"), ["51200"; 5]);
    expect_table(&b, "geometry", "dumpe2fs", &stderr).unwrap();
    // The directory block maps: 256 directories per point.
    if let Some(ext) = expect_table(&b, "extents", "debugfs-stat", &stderr) {
        let per_point = strings(&ext, "point_id");
        assert!(per_point.iter().any(|p| p == "fs=ext3"), "{ext}");
    }
    // The raw listings are kept whatever the parser says.
    let raw = std::fs::read_to_string(
        b.path()
            .join("logs/00-fs=ext3/capture-02-dir-blocks.stdout"),
    )
    .unwrap();
    assert_eq!(raw.matches("Type: directory").count(), 256);
    assert!(raw.contains("BLOCKS:"));

    let v = claims(&s, &b);
    for c in &v {
        assert_eq!(c["tier"], "not_applicable", "{c}");
    }
    let reason = |id: &str| {
        v.iter().find(|c| c["id"] == id).unwrap()["reason"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let scale = |id: &str| {
        v.iter().find(|c| c["id"] == id).unwrap()["scale"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(
        reason("ext4-fsck-10x-faster").starts_with("reduced scale (see the scale note); ")
            && scale("ext4-fsck-10x-faster")
                .contains("files_total=51200 here, 45600000 (files × loops) published"),
        "{}",
        reason("ext4-fsck-10x-faster")
    );
    let layout = reason("ext3-largest-dir-scattered");
    assert!(
        layout.contains("too small") || layout.contains("missing data"),
        "{layout}"
    );
}

fn xfs_rt_in_kernel() -> ConfigValue {
    ProbingHost::default().kernel_config("CONFIG_XFS_RT").0
}

#[test]
fn xfs_rt_truncate_quick() {
    let s = Scratch::new("fslab-test-seeds-003-");
    let (b, stderr) = run_quick(&s, "xfs-rt-truncate");
    check_warnings(&stderr);
    let rt = xfs_rt_in_kernel();
    let m = b.manifest();
    assert_eq!(m.points.len(), 12);
    for p in &m.points {
        // The quick profile runs the host's kernel and the post's loop only.
        assert!(
            p.id.starts_with("kernel=host,") && p.id.contains(",loop=processes,"),
            "{p:?}"
        );
        if p.id.contains("layout=rt,") && rt == ConfigValue::NotSet {
            assert_eq!(p.status, "unsupported", "{p:?}");
            let r = p.reason.as_deref().unwrap();
            assert!(r.contains("CONFIG_XFS_RT is not set"), "{r}");
            assert!(r.contains("Function not implemented"), "{r}");
        } else {
            assert_eq!(p.status, "ok", "{p:?}");
            assert_eq!(p.iterations, 1);
        }
    }
    let ok = m.points.iter().filter(|p| p.status == "ok").count();
    let runs = b.runs().unwrap();
    assert_eq!(runs.height(), ok);
    // One timed row is 100 truncates: each xfs_io takes milliseconds at least.
    let wall = runs.column("wall_s").unwrap().f64().unwrap();
    assert!(wall.iter().all(|w| w.is_some_and(|w| w > 0.05)), "{runs}");
    expect_table(&b, "geometry", "mkfs.xfs", &stderr).unwrap();
    let ext = expect_table(&b, "extents", "xfs_bmap", &stderr).unwrap();
    // Every file was truncated to 4 KiB: file 0's map holds 4096 bytes.
    let lengths = strings(&ext, "length_bytes");
    assert!(lengths.iter().all(|l| l == "4096"), "{ext}");

    let v = claims(&s, &b);
    for c in &v {
        assert_eq!(c["tier"], "not_applicable", "{c}");
        let reason = c["reason"].as_str().unwrap();
        // The claims that compare the two truncate paths pin the two kernels built for
        // them (the `paths` profile), which the quick profile leaves out, and say so.
        let two_kernels = ["conclusion-small-same", "conclusion-large-better"];
        let id = c["id"].as_str().unwrap();
        if two_kernels.contains(&id) {
            assert!(
                reason.contains("kernel=uml-rt-zero") && reason.contains("left it out"),
                "{c}"
            );
        }
        // The one-process variant's claims: the quick profile leaves its points out.
        let one_process = id.ends_with("-one-process");
        if one_process {
            assert!(reason.contains("left it out"), "{c}");
        }
        // The others are unsupported here without CONFIG_XFS_RT (the two-kernel claims
        // say that their kernels were left out instead).
        let two_kernel = two_kernels.contains(&id);
        if rt == ConfigValue::NotSet
            && id != "variant-data-hint-flat"
            && !two_kernel
            && !one_process
        {
            assert!(reason.contains("unsupported here"), "{c}");
        }
    }
    let variant = v
        .iter()
        .find(|c| c["id"] == "variant-data-hint-flat")
        .unwrap();
    // A log slope over one replicate's six sizes: a number, unit the iteration.
    assert!(
        variant["measured"].as_f64().is_some_and(f64::is_finite),
        "{variant}"
    );
    assert_eq!(variant["replication"]["unit"], "iteration", "{variant}");
    assert!(variant["reason"]
        .as_str()
        .unwrap()
        .starts_with("reduced scale (see the scale note); at this scale: "));
    assert!(variant["scale"]
        .as_str()
        .unwrap()
        .starts_with("reduced: files=100 here, 1000 published"));
    assert_eq!(variant["variant"], true, "{variant}");
}

#[test]
fn doctor_finds_old_xfsprogs_and_missing_realtime_xfs() {
    let s = Scratch::new("fslab-test-seeds-doc-");
    let o = s.run(&["doctor", "xfs-parent-pointers", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let parent_ok = installed_version("mkfs.xfs").is_some_and(|v| v >= Version(vec![6, 10]));
    let points = report["points"].as_array().unwrap();
    assert_eq!(points.len(), 4);
    for p in points {
        let id = p["id"].as_str().unwrap();
        let problems = p["problems"].as_array().unwrap();
        if id.starts_with("parent=1") && !parent_ok {
            assert_eq!(problems.len(), 1, "{p}");
            assert_eq!(problems[0]["kind"], "old_tool");
            assert_eq!(problems[0]["subject"], "mkfs.xfs");
            let msg = problems[0]["message"].as_str().unwrap();
            let have = installed_version("mkfs.xfs").unwrap().to_string();
            assert!(
                msg.contains(&format!("version {have}; ≥ 6.10 is needed")),
                "{msg}"
            );
        } else {
            assert!(problems.is_empty(), "{p}");
        }
    }
    assert_eq!(
        o.status.code(),
        Some(if parent_ok { 0 } else { 1 }),
        "{}",
        text(&o)
    );

    // The text form, and a plan that is not runnable at all: a missing program. Points
    // with the same problems and notes are one group, whose reasons are printed once.
    let args = [
        "doctor",
        "xfs-parent-pointers",
        "--set",
        "fsstress=/nonexistent/fsstress",
    ];
    let o = s.run(&args);
    let out = String::from_utf8_lossy(&o.stdout);
    let json = s.run(&[&args[..], &["--json"][..]].concat());
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let points = report["points"].as_array().unwrap();
    let mut groups: Vec<(&serde_json::Value, &serde_json::Value)> = Vec::new();
    for p in points {
        let key = (&p["problems"], &p["notes"]);
        if !groups.contains(&key) {
            groups.push(key);
        }
    }
    assert!(groups.len() < points.len(), "{report}");
    assert_eq!(
        out.matches("`/nonexistent/fsstress` is not installed")
            .count(),
        groups.len(),
        "{out}"
    );
    for p in points {
        let listed = format!(" {} [{}]", p["index"], p["id"].as_str().unwrap());
        assert_eq!(out.matches(&listed).count(), 1, "{listed}\n{out}");
    }
    assert_eq!(o.status.code(), Some(1));

    // Realtime XFS, tried for real on loop devices.
    let work = s.work();
    let o = s.run(&[
        "doctor",
        "xfs-rt-truncate",
        "--probe",
        "always",
        "--work-dir",
        &work.display().to_string(),
        "--json",
    ]);
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rt_points: Vec<&serde_json::Value> = report["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["id"].as_str().unwrap().contains("layout=rt,"))
        .collect();
    assert_eq!(rt_points.len(), 6);
    for p in rt_points {
        let problems = p["problems"].as_array().unwrap();
        if xfs_rt_in_kernel() == ConfigValue::NotSet {
            let msg = problems[0]["message"].as_str().unwrap();
            assert!(msg.contains("a probe mount failed"), "{msg}");
            assert!(msg.contains("Function not implemented"), "{msg}");
        } else {
            assert!(problems.is_empty(), "{p}");
        }
    }
    assert!(
        s.loops().is_empty() && s.mounts().is_empty(),
        "{:?} {:?}",
        s.loops(),
        s.mounts()
    );
    // The probe's image files are gone with its loop devices.
    let leftovers: Vec<PathBuf> = walk(&work)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "img"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
