//! `counters:` on the workload through `fslab run`, on real loop devices (as root):
//! the kernel's counters move by what the workload did, per iteration.

use crate::common::{fixture, text, Scratch};
use polars::prelude::*;

fn rows(df: &DataFrame, point: &str, iteration: i64, name: &str) -> Vec<(String, i64)> {
    let ids = df.column("point_id").unwrap().str().unwrap().clone();
    let its = df.column("iteration").unwrap().i64().unwrap().clone();
    let names = df.column("name").unwrap().str().unwrap().clone();
    let sources = df.column("source").unwrap().str().unwrap().clone();
    let deltas = df.column("delta").unwrap().i64().unwrap().clone();
    (0..df.height())
        .filter(|&i| {
            ids.get(i) == Some(point) && its.get(i) == Some(iteration) && names.get(i) == Some(name)
        })
        .map(|i| (sources.get(i).unwrap().to_string(), deltas.get(i).unwrap()))
        .collect()
}

/// Run a fixture experiment; its bundle path and its `counters.parquet`.
fn run_counters(s: &Scratch, name: &str) -> (String, DataFrame) {
    let o = s.run(&["run", fixture(name).to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    let bundle = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let c = fslab::Bundle::open(&bundle)
        .unwrap()
        .table_if_present("counters")
        .unwrap()
        .expect("counters.parquet");
    (bundle, c)
}

#[test]
fn creating_files_moves_the_create_counters_by_at_least_as_many() {
    let s = Scratch::new("ctr");
    let (bundle, c) = run_counters(&s, "counters.yaml");
    let b = fslab::Bundle::open(&bundle).unwrap();
    for it in [1, 2] {
        // XFS: its own filesystem's statistics, 300 creates (and their directory).
        let creates = rows(&c, "fs=xfs", it, "xs_dir_create");
        assert_eq!(creates.len(), 1, "{creates:?}");
        assert_eq!(creates[0].0, "xfs");
        assert!(
            creates[0].1 >= 300,
            "xs_dir_create moved by {}",
            creates[0].1
        );
        // 300 files of 2 bytes were written and synced: the loop device saw writes.
        for fs in ["fs=xfs", "fs=ext4"] {
            let w = rows(&c, fs, it, "writes_completed");
            assert_eq!(w.len(), 1, "{fs}: {w:?}");
            assert!(w[0].1 > 0, "{fs}: no writes counted");
            assert_eq!(w[0].0, "diskstats");
        }
        // ext4: its session write counter moved; no XFS rows on an ext4 point.
        let kb = rows(&c, "fs=ext4", it, "session_write_kbytes");
        assert_eq!(kb.len(), 1, "{kb:?}");
        assert!(kb[0].1 > 0);
        assert!(rows(&c, "fs=ext4", it, "xs_dir_create").is_empty());
        assert_eq!(rows(&c, "fs=xfs", it, "pgfault").len(), 1);
    }
    // Joined to runs.parquet by point and iteration: every counters row has its run row.
    let runs = b.runs().unwrap();
    let keys = |df: &DataFrame| -> std::collections::BTreeSet<(String, i64)> {
        let ids = df.column("point_id").unwrap().str().unwrap().clone();
        let its = df.column("iteration").unwrap().i64().unwrap().clone();
        (0..df.height())
            .map(|i| (ids.get(i).unwrap().to_string(), its.get(i).unwrap()))
            .collect()
    };
    let (ck, rk) = (keys(&c), keys(&runs));
    assert_eq!(ck.len(), 4, "{ck:?}");
    assert!(ck.is_subset(&rk), "{ck:?} vs {rk:?}");
    // Claims read counters.parquet like any table, with selections on its columns.
    let o = s.run(&["claims", &bundle, "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let claims = v["claims"].as_array().expect("claims");
    let creates = claims
        .iter()
        .find(|c| c["id"] == "xfs-creates-every-iteration")
        .unwrap();
    let ratio = creates["measured"].as_f64().expect("a measured ratio");
    assert!((0.9..=1.1).contains(&ratio), "{creates}");
    // Iterations of one filesystem: a number, never a decisive tier.
    assert_eq!(creates["tier"], "inconclusive", "{creates}");
    assert!(
        creates["reason"]
            .as_str()
            .unwrap()
            .starts_with("unit: iteration of one filesystem"),
        "{creates}"
    );
    let writes = claims
        .iter()
        .find(|c| c["id"] == "ext4-writes-vs-xfs")
        .unwrap();
    assert!(
        writes["measured"].as_f64().is_some_and(|r| r > 0.0),
        "{writes}"
    );
    // Two iterations a side: an interval, or the reason there is none (Fieller's is
    // unbounded when the denominator's spread reaches 0).
    assert!(
        writes["interval"].is_object() || writes["no_interval"].is_string(),
        "{writes}"
    );
    assert!(s.mounts().is_empty(), "{:?}", s.mounts());
    assert!(s.loops().is_empty(), "{:?}", s.loops());
}

/// `counters: { sync: true }`: the point's filesystem is flushed before each read, so an
/// iteration's small writes (no sync of their own) reach the device, and its counters,
/// within that iteration. Without `sync` the same workload counts no writes at all here:
/// the kernel writes them back 30 s later (checked by hand with `sync: false`).
#[test]
fn counters_sync_counts_an_iterations_writes_in_that_iteration() {
    let s = Scratch::new("ctrs");
    let (_, c) = run_counters(&s, "counters-sync.yaml");
    for it in 1..=3 {
        for name in ["writes_completed", "xs_log_writes"] {
            let w = rows(&c, "default", it, name);
            assert_eq!(w.len(), 1, "iteration {it}, {name}: {w:?}");
            assert!(w[0].1 > 0, "iteration {it}: {name} did not move: {w:?}");
        }
    }
    assert!(s.mounts().is_empty(), "{:?}", s.mounts());
    assert!(s.loops().is_empty(), "{:?}", s.loops());
}

/// `xfs_log_items`: the ATTRI intents a workload finishes and those elided from the log,
/// counted on the XFS tracepoints of the point's own filesystem. 300 creates and 100
/// links make at least 400 with parent pointers and none without; with `sync` each
/// iteration's checkpoint is written within it, so its elided intents are counted there
/// too, never more than were finished. The counting instances go with the run.
#[test]
fn parent_pointers_defer_attr_intents_and_the_log_elides_them() {
    let s = Scratch::new("logi");
    let before = dead_fslab_instances();
    let (_, c) = run_counters(&s, "log-items.yaml");
    for it in [1, 2] {
        let one = |point: &str, name: &str| {
            let r = rows(&c, point, it, name);
            assert_eq!(r.len(), 1, "{point} {name} iteration {it}: {r:?}");
            assert_eq!(r[0].0, "xfs_log_items");
            r[0].1
        };
        let deferred = one("parent=1", "attri_finished");
        let elided = one("parent=1", "attri_elided");
        assert!(deferred >= 400, "parent=1 deferred {deferred}");
        assert!(
            elided > 0 && elided <= deferred,
            "parent=1: {elided} elided of {deferred}"
        );
        assert_eq!(one("parent=0", "attri_finished"), 0);
        assert_eq!(one("parent=0", "attri_elided"), 0);
    }
    let after = dead_fslab_instances();
    assert!(
        after.is_subset(&before),
        "tracefs instances left behind: {:?}",
        after.difference(&before).collect::<Vec<_>>()
    );
    assert!(s.mounts().is_empty(), "{:?}", s.mounts());
    assert!(s.loops().is_empty(), "{:?}", s.loops());
}

/// fslab's tracefs instances (`fslab-<pid>-…`) whose process is gone.
fn dead_fslab_instances() -> std::collections::BTreeSet<String> {
    std::fs::read_dir("/sys/kernel/tracing/instances")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .filter(|n| {
                    n.strip_prefix("fslab-")
                        .and_then(|t| t.split('-').next())
                        .is_some_and(|pid| !std::path::Path::new("/proc").join(pid).exists())
                })
                .collect()
        })
        .unwrap_or_default()
}
