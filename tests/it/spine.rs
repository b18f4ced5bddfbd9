//! The spine end to end, on real loop devices (these tests need root).

use crate::common::{fixture, text, Scratch};
use std::time::{Duration, Instant};

#[test]
fn the_example_runs_into_a_bundle_that_python_polars_reads() {
    let s = Scratch::new("ex");
    let o = s.run(&[
        "run",
        "smallfiles",
        "--quiet",
        "--set",
        "files=500",
        "--set",
        "reps=2",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let bundle = String::from_utf8_lossy(&o.stdout).trim().to_string();
    assert!(bundle.contains("/smallfiles/"), "{bundle}");
    let b = fslab::Bundle::open(&bundle).unwrap();
    let runs = b.runs().unwrap();
    assert_eq!(runs.height(), 4, "{runs}");
    let names: Vec<String> = runs
        .get_column_names()
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        names,
        [
            "experiment",
            "point_id",
            "point_index",
            "fs",
            "iteration",
            "replicate",
            "wall_s",
            "user_s",
            "sys_s",
            "exit_code",
            "status",
            "started_at"
        ]
    );
    let wall = runs.column("wall_s").unwrap().f64().unwrap();
    assert!(wall.iter().all(|w| w.is_some_and(|w| w > 0.0)));
    let m = b.manifest();
    assert_eq!(m.status, "complete");
    assert_eq!(m.experiment.sha256.len(), 64);
    assert!(
        m.environment.tools["mkfs.xfs"].contains("6."),
        "{:?}",
        m.environment.tools
    );
    assert!(m.environment.tools.contains_key("fs_mark"));
    assert!(
        !m.environment.kernel.is_empty()
            && m.environment.cores > 0
            && m.environment.memory_bytes > 0
    );
    // Logs of every command, by point and step.
    let logs = std::path::Path::new(&bundle).join("logs/01-fs=xfs");
    assert!(logs.join("setup-01-mkfs.stdout").exists());
    assert!(
        std::fs::read_to_string(logs.join("workload-01-fs_mark-it02.stdout"))
            .unwrap()
            .contains("Files/sec")
    );
    // The documented columns, as Python polars sees them.
    let py = std::process::Command::new("python3")
        .args([
            "-c",
            "import polars as pl, sys; df = pl.read_parquet(sys.argv[1]); print(','.join(df.columns)); print(df.height)",
            &format!("{bundle}/runs.parquet"),
        ])
        .output()
        .expect("python3");
    assert!(
        py.status.success(),
        "python polars failed (scripts/install-deps.sh installs it): {}",
        text(&py)
    );
    assert_eq!(
        String::from_utf8_lossy(&py.stdout),
        "experiment,point_id,point_index,fs,iteration,replicate,wall_s,user_s,sys_s,exit_code,status,started_at\n4\n"
    );
    assert!(
        s.loops().is_empty() && s.mounts().is_empty(),
        "{:?} {:?}",
        s.loops(),
        s.mounts()
    );
    // Parsed captures, keyed so that they join with runs.parquet.
    assert_eq!(
        b.tables().unwrap(),
        ["extents", "files", "fsmark", "geometry", "runs"]
    );
    // The FIEMAP capture of it1: 500 files of 4 KiB, one extent each, on both filesystems.
    let ext = b.table("extents").unwrap();
    let files = ext
        .column("path")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .filter(|p| p.is_some_and(|p| p.contains("/it1/")))
        .count();
    assert_eq!(files, 2 * 500, "{ext}");
    assert!(
        ext.column("physical_bytes").unwrap().null_count() == 0,
        "--sync maps delalloc extents: {ext}"
    );
    let geo = b.table("geometry").unwrap();
    let keys: Vec<String> = geo.get_column_names()[..7]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        keys,
        [
            "experiment",
            "point_id",
            "point_index",
            "iteration",
            "replicate",
            "capture",
            "kind"
        ]
    );
    let kinds = geo.column("kind").unwrap().str().unwrap().clone();
    for k in ["mkfs.xfs", "xfs_info", "dumpe2fs"] {
        assert!(
            kinds.iter().any(|v| v == Some(k)),
            "no {k} rows in geometry"
        );
    }
    let fsmark = b.table("fsmark").unwrap();
    assert_eq!(
        fsmark.height(),
        4,
        "one fs_mark result row per iteration: {fsmark}"
    );
    assert!(m.points.iter().all(|p| p.status == "ok"));
    // `fslab show` prints the table.
    let o = s.run(&["show", &bundle]);
    assert!(
        o.status.success() && String::from_utf8_lossy(&o.stdout).contains("fs=xfs"),
        "{}",
        text(&o)
    );
}

#[test]
fn plan_prints_commands_and_creates_nothing() {
    let s = Scratch::new("plan");
    let o = s.run(&["plan", "smallfiles", "--profile", "published"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("mkfs.xfs -f {{dev.data}}"), "{out}");
    assert!(out.contains("-n 200000"), "{out}");
    assert!(!s.work().exists(), "plan created its work dir");
    assert!(s.loops().is_empty());
}

/// `plan` counts replicates (the unit of every claim) and says that a guest point's
/// devices are image files the guest sees as ubd disks, not host loop devices.
#[test]
fn plan_shows_replicates_and_a_guest_points_devices() {
    let s = Scratch::new("plan-guest");
    let exp = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/experiments/xfs-rt-truncate.yaml"
    );
    let o = s.run(&["plan", exp, "--profile", "converted"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("2 points, 10 replicates (fresh filesystems), 10 timed iterations"),
        "{out}"
    );
    assert!(
        out.contains(
            "[kernel=uml-trixie,layout=rt,loop=processes,rtextsize=8k]  5 replicates × repeat 1"
        ),
        "{out}"
    );
    assert!(
        out.contains("device data: 2.0 GiB sparse image file, the uml-trixie guest's /dev/ubda (no host loop device)")
            && out.contains("device rt: 2.0 GiB sparse image file, the uml-trixie guest's /dev/ubdb"),
        "{out}"
    );
    assert!(!out.contains("loop device on"), "{out}");
    // A host point's devices are loop devices.
    let o = s.run(&["plan", exp, "--profile", "quick"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("loop device on a sparse image"), "{out}");
    assert!(!s.work().exists(), "plan created its work dir");
}

#[test]
fn bad_files_fail_with_a_location_before_any_device_exists() {
    let s = Scratch::new("bad");
    let good = std::fs::read_to_string(fixture("quirks.yaml")).unwrap();
    for (bad, expect) in [
        (
            good.replace("  repeat: 2", "  repaet: 2"),
            ":17:3: workload: unknown field `repaet`",
        ),
        (
            good.replace("{{evil}}", "{{evl}}"),
            ":16:13: undefined name `{{evl}}`",
        ),
    ] {
        let f = s.root.join("bad.yaml");
        std::fs::write(&f, bad).unwrap();
        let o = s.run(&["run", f.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(&format!("bad.yaml{expect}")), "{err}");
        assert!(!s.work().exists(), "a device dir was made");
        assert!(s.loops().is_empty());
    }
}

#[test]
fn hostile_values_stay_one_argument_and_failures_do_not_stop_the_matrix() {
    let _ = std::fs::remove_file("/tmp/fslab-pwned");
    let s = Scratch::new("q");
    let o = s.run(&["run", fixture("quirks.yaml").to_str().unwrap(), "--quiet"]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "partial run exits 1: {}",
        text(&o)
    );
    assert!(!std::path::Path::new("/tmp/fslab-pwned").exists());
    let bundle = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let b = fslab::Bundle::open(&bundle).unwrap();
    let p = &b.manifest().points;
    assert_eq!(
        (p[0].status.as_str(), p[1].status.as_str()),
        ("ok", "failed")
    );
    assert!(
        p[1].reason
            .as_deref()
            .unwrap()
            .contains("setup-02-false: exited with status 1"),
        "{:?}",
        p[1]
    );
    let echoed = std::fs::read_to_string(format!(
        "{bundle}/logs/00-case=echo/workload-01-echo-it02.stdout"
    ))
    .unwrap();
    assert_eq!(echoed, "1; touch /tmp/fslab-pwned 2\n");
    assert_eq!(b.runs().unwrap().height(), 2);
    assert!(s.loops().is_empty() && s.mounts().is_empty());
}

#[test]
fn a_timed_out_step_is_killed_and_recorded() {
    let s = Scratch::new("to");
    let o = s.run(&["run", fixture("timeout.yaml").to_str().unwrap(), "--quiet"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let b = fslab::Bundle::open(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
    assert_eq!(b.manifest().points[0].status, "timeout");
    let runs = b.runs().unwrap();
    assert_eq!(
        runs.height(),
        1,
        "stops after the first timed-out iteration"
    );
    assert_eq!(
        runs.column("status").unwrap().str().unwrap().get(0),
        Some("timeout")
    );
    // Killed at its timeout (1 s), not left to end its `sleep 30`: the step's own
    // recorded time is below what the sleep would have taken.
    let wall = runs
        .column("wall_s")
        .unwrap()
        .f64()
        .unwrap()
        .get(0)
        .unwrap();
    assert!(
        wall < 30.0,
        "the timed-out step ran {wall} s, as long as its sleep"
    );
    assert!(s.loops().is_empty() && s.mounts().is_empty());
}

fn wait_for_mount(s: &Scratch) {
    let t0 = Instant::now();
    while s.mounts().len() < 2 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "fslab never mounted"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
}

#[test]
fn sigint_and_sigterm_during_the_workload_leave_nothing_behind() {
    for sig in [
        nix::sys::signal::Signal::SIGINT,
        nix::sys::signal::Signal::SIGTERM,
    ] {
        let s = Scratch::new("sig");
        let mut child = s
            .fslab()
            .args(["run", fixture("sleepy.yaml").to_str().unwrap(), "--quiet"])
            .spawn()
            .unwrap();
        wait_for_mount(&s);
        assert!(!s.loops().is_empty());
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), sig).unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(130), "{sig}");
        assert!(
            s.mounts().is_empty(),
            "{sig}: mounts left: {:?}",
            s.mounts()
        );
        assert!(s.loops().is_empty(), "{sig}: loops left: {:?}", s.loops());
        let bundle = &s.bundles("sleepy")[0];
        let b = fslab::Bundle::open(bundle).unwrap();
        assert_eq!(b.manifest().status, "interrupted");
    }
}

#[test]
fn after_sigkill_the_next_cleanup_releases_everything() {
    let s = Scratch::new("kill");
    let mut child = s
        .fslab()
        .args(["run", fixture("sleepy.yaml").to_str().unwrap(), "--quiet"])
        .spawn()
        .unwrap();
    wait_for_mount(&s);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !s.mounts().is_empty() && !s.loops().is_empty(),
        "SIGKILL left nothing: the test proves nothing"
    );
    let o = s.run(&["cleanup"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("2 loop devices"),
        "{}",
        text(&o)
    );
    assert!(s.mounts().is_empty(), "{:?}", s.mounts());
    assert!(s.loops().is_empty(), "{:?}", s.loops());
}

#[test]
fn adaptive_repetition_stops_at_the_target_or_the_maximum() {
    let s = Scratch::new("ad");
    let o = s.run(&["run", fixture("adaptive.yaml").to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    let b = fslab::Bundle::open(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
    assert_eq!(
        b.runs().unwrap().height(),
        6,
        "a steady sleep reaches 50 % CV once there are 5 steady-state iterations"
    );
    let why = b.manifest().points[0].repeat_stop.clone().unwrap();
    assert!(why.contains("target"), "{why}");
    assert!(matches!(
        b.manifest().points[0].repeat_stops[..],
        [fslab::store::RepeatStop {
            replicate: 1,
            warmup: 1,
            reason: fslab::store::StopReason::TargetReached {
                n: 6,
                steady_n: 5,
                ..
            }
        }]
    ));

    let strict = std::fs::read_to_string(fixture("adaptive.yaml"))
        .unwrap()
        .replace("target_cv: 50", "target_cv: 0.000001");
    let f = s.root.join("strict.yaml");
    std::fs::write(&f, strict).unwrap();
    let o = s.run(&["run", f.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    let b = fslab::Bundle::open(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
    assert_eq!(
        b.runs().unwrap().height(),
        6,
        "an unreachable target runs the maximum"
    );
    let why = b.manifest().points[0].repeat_stop.clone().unwrap();
    assert!(why.contains("maximum"), "{why}");
}

/// A debugfs block map captured in an experiment gets its block size from the point's
/// geometry capture (dumpe2fs of the same device): bytes right on 1 KiB blocks, and a
/// `files` record that says where the block size came from, joined with `extents`.
#[test]
fn debugfs_capture_takes_the_block_size_from_geometry() {
    let s = Scratch::new("bmgeo");
    let bundle = s.run_fixture("blockmap-geometry.yaml");
    let b = fslab::Bundle::open(&bundle).unwrap();
    let files = b.table("files").unwrap();
    let col = |df: &fslab::polars::prelude::DataFrame, c: &str| -> Vec<Option<i64>> {
        df.column(c).unwrap().i64().unwrap().iter().collect()
    };
    assert_eq!(col(&files, "block_size"), [Some(1024)], "{files}");
    let src: Vec<Option<&str>> = files
        .column("block_size_source")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(src, [Some("geometry")]);
    // 20 KiB + 8 KiB of data, in 1 KiB blocks: blocks 12-19 need an (IND), 300-307 a
    // (DIND) and its (IND).
    assert_eq!(col(&files, "size_bytes"), [Some(308 * 1024)]);
    assert_eq!(col(&files, "total_blocks"), [Some(31)]);
    let ext = b.table("extents").unwrap();
    let len = col(&ext, "length_bytes");
    assert!(
        len.iter().all(|l| l.is_some_and(|l| l % 1024 == 0)),
        "{ext}"
    );
    let blocks: i64 = col(&ext, "length").iter().map(|l| l.unwrap()).sum();
    assert_eq!(blocks, 20 + 8 + 3, "{ext}");
    assert_eq!(len.iter().map(|l| l.unwrap()).sum::<i64>(), blocks * 1024);
    assert_eq!(col(&ext, "file"), vec![Some(0); ext.height()]);
}

#[test]
fn replicates_make_a_fresh_filesystem_each_and_are_the_unit() {
    let s = Scratch::new("rp");
    let bundle = s.run_fixture("replicates.yaml");
    let b = fslab::Bundle::open(&bundle).unwrap();
    let runs = b.runs().unwrap();
    assert_eq!(runs.height(), 6, "3 replicates × 2 iterations: {runs}");
    let reps: Vec<i64> = runs
        .column("replicate")
        .unwrap()
        .i64()
        .unwrap()
        .into_no_null_iter()
        .collect();
    assert_eq!(reps, [1, 1, 2, 2, 3, 3]);
    // Three filesystems: three distinct UUIDs in the captured dumpe2fs headers.
    let mut uuids = std::collections::BTreeSet::new();
    let mut stack = vec![std::path::PathBuf::from(&bundle).join("logs")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().contains("capture") {
                let t = std::fs::read_to_string(&p).unwrap_or_default();
                uuids.extend(
                    t.lines()
                        .filter_map(|l| l.strip_prefix("Filesystem UUID:"))
                        .map(|u| u.trim().to_string()),
                );
            }
        }
    }
    assert_eq!(uuids.len(), 3, "{uuids:?}");
    let m = b.manifest();
    assert_eq!(m.format_version, fslab::store::FORMAT_VERSION);
    assert_eq!(m.points[0].iterations, 6);
    assert_eq!(m.points[0].repeat_stops.len(), 3);
    // Its statistics say "unit: replicate": n is 3 replicates.
    let rows = fslab::analysis::point_stats_rows(&runs, &Default::default()).unwrap();
    assert_eq!(rows[0].unit, fslab::analysis::Unit::Replicate);
    assert_eq!(rows[0].n, 3);
    let report = s.root.join("r.md");
    let o = s.run(&["report", &bundle, "-o", report.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let md = std::fs::read_to_string(&report).unwrap();
    assert!(md.contains("unit: replicate"), "{md}");
    let o = s.run(&["show", &bundle]);
    assert!(text(&o).contains("in 3 replicates"), "{}", text(&o));
    assert!(
        text(&o).contains("n=3 (unit: replicate, of 3)"),
        "{}",
        text(&o)
    );
    assert!(
        text(&o).contains("stopped: replicate 1: fixed count"),
        "{}",
        text(&o)
    );
    assert!(s.loops().is_empty() && s.mounts().is_empty());
}

/// Logs hold what commands wrote, and only that: an iteration that prints nothing
/// creates no file (a micro-benchmark of 10,000 iterations would otherwise leave 20,000
/// empty files and pay for creating them), output reaches its step's file, the
/// repetitions of a `times:` step append to one file, and a failing command's stderr is
/// in the point's reason.
#[test]
fn logs_keep_what_commands_wrote_and_create_nothing_for_silent_ones() {
    let s = Scratch::new("logs");
    let f = s.root.join("logs.yaml");
    std::fs::write(
        &f,
        r#"id: logs
title: logs
setup:
  - run: sh -c "echo set {{i}}; echo err {{i}} >&2"
    times: 3
workload:
  run: sh -c 'test {{iteration}} -ne 4 || echo fourth'
  repeat: 6
teardown:
  - run: sh -c "echo down >&2"
"#,
    )
    .unwrap();
    let o = s.run(&["run", f.to_str().unwrap(), "--quiet"]);
    let bundle = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let b = fslab::Bundle::open(&bundle).unwrap();
    assert_eq!(b.runs().unwrap().height(), 6);
    let dir = std::path::Path::new(&bundle).join("logs/00-default");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "setup-01-sh.stderr",
            "setup-01-sh.stdout",
            "teardown-01-sh.stderr",
            "workload-01-sh-it04.stdout"
        ],
        "{}",
        text(&o)
    );
    let read = |n: &str| std::fs::read_to_string(dir.join(n)).unwrap();
    assert_eq!(read("setup-01-sh.stdout"), "set 0\nset 1\nset 2\n");
    assert_eq!(read("setup-01-sh.stderr"), "err 0\nerr 1\nerr 2\n");
    assert_eq!(read("workload-01-sh-it04.stdout"), "fourth\n");
    assert_eq!(read("teardown-01-sh.stderr"), "down\n");

    // A failing command's stderr, moved to its step's file, is quoted in the reason.
    std::fs::write(
        &f,
        "id: logs\ntitle: logs\nsetup:\n  - run: sh -c 'echo boom >&2; exit 3'\nworkload:\n  run: 'true'\n",
    )
    .unwrap();
    let o = s.run(&["run", f.to_str().unwrap(), "--quiet"]);
    let b = fslab::Bundle::open(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
    let reason = b.manifest().points[0].reason.clone().unwrap_or_default();
    assert!(
        reason.contains("exited with status 3: boom"),
        "{reason} / {}",
        text(&o)
    );
}
