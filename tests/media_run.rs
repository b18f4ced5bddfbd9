//! `medium:` and `trace: io` through `fslab run`, on real loop devices (as root).

mod common;
use common::{fixture, text, Scratch};
use std::time::{Duration, Instant};

fn fuse_mounts(s: &Scratch) -> Vec<String> {
    fslab::devices::mounts()
        .into_iter()
        .filter(|m| m.mount_point.starts_with(&s.root) && m.fstype.starts_with("fuse"))
        .map(|m| m.mount_point.display().to_string())
        .collect()
}

#[test]
fn a_traced_workload_on_the_disk_model_fills_io_tables_and_leaves_nothing() {
    let s = Scratch::new("mt");
    let o = s.run(&[
        "run",
        fixture("medium-trace.yaml").to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let bundle = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let io = fslab::Bundle::open(&bundle)
        .unwrap()
        .table_if_present("io")
        .unwrap()
        .expect("io.parquet");
    let rows = fslab::analysis::io_trace::rows_from_frame(&io, None).unwrap();
    let reads = rows
        .iter()
        .filter(|r| r.op == fslab::parse::block_trace::IoOp::Read)
        .count();
    // 200 direct 4 KiB reads per iteration, two iterations.
    assert!(reads >= 400, "{reads} reads traced");
    let summary = fslab::Bundle::open(&bundle)
        .unwrap()
        .table_if_present("io_summary")
        .unwrap()
        .expect("io_summary.parquet");
    assert_eq!(summary.height(), 2, "{summary}");
    let b = fslab::Bundle::open(&bundle).unwrap();
    let dev = &b.manifest().environment.devices[0];
    let m = dev
        .medium
        .as_ref()
        .expect("the manifest records the medium");
    assert_eq!(m.model, "hdd-2008");
    assert_eq!(m.params.as_ref().unwrap()["seek_avg_ms"], 8.5);
    assert!(m.substitution);
    assert!(s.mounts().is_empty(), "{:?}", s.mounts());
    assert!(s.loops().is_empty(), "{:?}", s.loops());
    assert!(fuse_mounts(&s).is_empty());
}

#[test]
fn after_sigkill_cleanup_releases_the_fuse_mount_and_its_loop() {
    let s = Scratch::new("mk");
    let mut child = s
        .fslab()
        .args([
            "run",
            fixture("medium-sleepy.yaml").to_str().unwrap(),
            "--quiet",
        ])
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    // The FUSE mount and the filesystem on the loop device over it.
    while s.mounts().len() < 2 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "fslab never mounted"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !fuse_mounts(&s).is_empty(),
        "SIGKILL left no FUSE mount: the test proves nothing"
    );
    assert!(!s.loops().is_empty());
    let o = s.run(&["cleanup"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(s.mounts().is_empty(), "{:?}", s.mounts());
    assert!(s.loops().is_empty(), "{:?}", s.loops());
}

#[test]
fn a_throttled_device_caps_the_workloads_reads() {
    let s = Scratch::new("th");
    let o = s.run(&[
        "run",
        fixture("throttled.yaml").to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let bundle = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let b = fslab::Bundle::open(&bundle).unwrap();
    let runs = b.runs().unwrap();
    let wall = runs
        .column("wall_s")
        .unwrap()
        .f64()
        .unwrap()
        .get(0)
        .unwrap();
    // A lower bound the cap itself sets: 200 reads at 100 per second.
    assert!(wall >= 1.6, "200 capped reads took {wall:.2} s");
    let t = b.manifest().environment.devices[0]
        .throttle
        .clone()
        .unwrap();
    assert!(t.starts_with("read_iops=100"), "{t}");
    assert!(s.mounts().is_empty() && s.loops().is_empty());
}
