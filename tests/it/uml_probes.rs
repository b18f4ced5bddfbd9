//! `counters:` and `trace: io` in a User-Mode Linux guest, for real: the guest's agent
//! reads the guest's own counters and traces its own disks, and the rows land in the
//! same tables as the host's. Needs what tests/it/uml.rs needs (`FSLAB_REQUIRE_UML=1`);
//! the trace of a built kernel needs the test kernel (`FSLAB_REQUIRE_KERNEL_BUILD=1`).

use crate::common::{strings, text};
use crate::require::skip;
use crate::uml::{finish, run_in_guest, scratch_with, uml};

/// `counters: all` on the host and in a guest, side by side: 100 files created on XFS
/// per iteration, then `sync -f`.
const COUNTERS_EXPERIMENT: &str = r#"
id: uml-counters
title: "counters in a guest"
devices:
  data: { size: 320MiB }
matrix:
  kernel: [host, uml-bookworm]
setup:
  - run: mkfs.xfs -q {{dev.data}}
  - mount: data
workload:
  run: [sh, -c, "mkdir {{mnt}}/it{{iteration}} && cd {{mnt}}/it{{iteration}} && for i in $(seq 100); do echo x > f$i; done && sync -f ."]
  repeat: 2
  counters: all
teardown:
  - umount: "{{mnt}}"
"#;

/// The counters rows of `point`, iteration `it`, counter `name`: (source, device, delta).
fn counter_rows(
    c: &polars::prelude::DataFrame,
    point: &str,
    it: i64,
    name: &str,
) -> Vec<(String, String, i64)> {
    let col = |n: &str| strings(c, n);
    let (ids, names, sources, devices) =
        (col("point_id"), col("name"), col("source"), col("device"));
    let its = c.column("iteration").unwrap().i64().unwrap().clone();
    let deltas = c.column("delta").unwrap().i64().unwrap().clone();
    (0..c.height())
        .filter(|&i| ids[i] == point && its.get(i) == Some(it) && names[i] == name)
        .map(|i| {
            (
                sources[i].clone(),
                devices[i].clone(),
                deltas.get(i).unwrap(),
            )
        })
        .collect()
}

/// The guest's agent reads the guest's own counters (its XFS statistics, the
/// diskstats of its ubd disk, its vmstat) before and after each iteration; they land in
/// the same `counters` table as the host's, with the guest's device names. What the
/// guest cannot count (`xfs_log_items`: Debian's kernels have no tracefs) is said in
/// the point's notes, with no rows.
#[test]
fn counters_in_a_guest_are_the_guests_own_and_land_in_the_same_table() {
    if !uml("counters_in_a_guest_are_the_guests_own_and_land_in_the_same_table") {
        return;
    }
    let (s, exp) = scratch_with("umlc", "uml-counters.yaml", COUNTERS_EXPERIMENT);
    let o = s.run(&["run", exp.to_str().unwrap(), "--order", "fixed", "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    let b = fslab::store::Bundle::open(&s.bundles("uml-counters")[0]).unwrap();
    let m = b.manifest();
    assert!(m.points.iter().all(|p| p.status == "ok"), "{:?}", m.points);
    let c = b.table("counters").unwrap();
    for (point, dev_prefix) in [("kernel=host", "loop"), ("kernel=uml-bookworm", "ubda")] {
        for it in [1, 2] {
            let creates = counter_rows(&c, point, it, "xs_dir_create");
            assert_eq!(creates.len(), 1, "{point} {it}: {creates:?}");
            assert_eq!(creates[0].0, "xfs");
            assert!(creates[0].1.starts_with(dev_prefix), "{creates:?}");
            assert!(creates[0].2 >= 100, "{point} {it}: {creates:?}");
            let writes = counter_rows(&c, point, it, "writes_completed");
            assert_eq!(writes.len(), 1, "{point} {it}: {writes:?}");
            assert_eq!(writes[0].0, "diskstats");
            assert!(writes[0].1.starts_with(dev_prefix), "{writes:?}");
            assert!(writes[0].2 > 0, "{point} {it}: {writes:?}");
            assert_eq!(counter_rows(&c, point, it, "pgfault").len(), 1, "{point}");
        }
    }
    // Said, not zero: the guest's kernel has no tracefs for xfs_log_items, and no ext4
    // is mounted.
    let guest = &m.points[1];
    assert!(
        guest.notes.iter().any(|n| n.contains("xfs_log_items")
            && n.contains("cannot count the XFS log-item tracepoints")),
        "{:?}",
        guest.notes
    );
    assert!(
        guest.notes.iter().any(|n| n.contains("no ext4 rows")),
        "{:?}",
        guest.notes
    );
    let sources = strings(&c, "source");
    let ids = strings(&c, "point_id");
    assert!(
        !ids.iter()
            .zip(&sources)
            .any(|(p, s)| p == "kernel=uml-bookworm" && s == "xfs_log_items"),
        "{c}"
    );
    finish(&s);
}

/// Direct reads of the point's disk, traced (`trace: io`).
const TRACE_EXPERIMENT: &str = r#"
id: uml-trace
title: "a block trace in a guest"
devices:
  data: { size: 64MiB }
workload:
  run: dd if={{dev.data}} of=/dev/null bs=4k count=200 iflag=direct
  trace: io
"#;

/// A Debian kernel has no tracefs: the preflight finds it in the booted guest's
/// `/proc/filesystems`, and the point is `unsupported` with the reason, rather than
/// run with an empty trace.
#[test]
fn trace_io_in_a_guest_without_tracefs_says_why() {
    if !uml("trace_io_in_a_guest_without_tracefs_says_why") {
        return;
    }
    let (s, exp) = scratch_with("umlr", "uml-trace.yaml", TRACE_EXPERIMENT);
    run_in_guest(&s, &exp, "uml-bookworm");
    let b = fslab::store::Bundle::open(&s.bundles("uml-trace")[0]).unwrap();
    let p = &b.manifest().points[0];
    assert_eq!(p.status, "unsupported", "{p:?}");
    let why = p.reason.clone().unwrap_or_default();
    assert!(
        why.contains("trace: io needs tracefs") && why.contains("CONFIG_FTRACE"),
        "{why}"
    );
    assert!(b.table_if_present("io").unwrap().is_none());
    finish(&s);
}

/// A kernel made by `fslab kernels build` has tracefs and the block tracepoints: the
/// guest's agent traces its own disk, and the requests land in `io` and `io_summary`
/// as the host's do, named by the guest's device numbers.
#[test]
fn trace_io_in_a_built_guest_kernel_traces_its_ubd_disk() {
    if !crate::require::Need::KernelBuild.met() {
        skip(
            crate::require::Need::KernelBuild,
            "trace_io_in_a_built_guest_kernel_traces_its_ubd_disk",
            "needs the test kernel `fslab kernels build` makes (scripts/install-deps.sh)",
        );
        return;
    }
    let (s, exp) = scratch_with("umlb", "uml-trace.yaml", TRACE_EXPERIMENT);
    run_in_guest(&s, &exp, crate::require::TEST_KERNEL);
    let b = fslab::store::Bundle::open(&s.bundles("uml-trace")[0]).unwrap();
    let io = b.table("io").unwrap();
    let devices = strings(&io, "device");
    let ops = strings(&io, "op");
    // ubd's block major is 98; the guest's first disk is 98:0.
    let reads = devices
        .iter()
        .zip(&ops)
        .filter(|(d, o)| d.as_str() == "98:0" && o.as_str() == "read")
        .count();
    assert!(reads >= 190, "{reads} reads of 98:0: {io}");
    assert!(devices.iter().all(|d| d == "98:0"), "{devices:?}");
    let summary = b.table("io_summary").unwrap();
    assert_eq!(summary.height(), 1, "{summary}");
    finish(&s);
}
