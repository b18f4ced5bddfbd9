//! The fio example experiment (experiments/fio-randread.yaml) through `fslab run`, on real
//! loop devices (as root): fio's JSON in fio.parquet, one row per job, direction and
//! iteration, joined to runs.parquet; the loop device's diskstats in counters.parquet.

use crate::common::{strings, text, Scratch};
use polars::prelude::*;
use std::collections::BTreeMap;

fn have_fio() -> bool {
    std::process::Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn nums(df: &DataFrame, c: &str) -> Vec<f64> {
    df.column(c)
        .unwrap()
        .cast(&DataType::Float64)
        .unwrap()
        .f64()
        .unwrap()
        .iter()
        .map(|v| v.unwrap_or(f64::NAN))
        .collect()
}

#[test]
fn the_fio_example_fills_fio_and_counters_tables() {
    assert!(
        have_fio(),
        "fio is not installed: scripts/install-deps.sh installs it"
    );
    let s = Scratch::new("fio");
    let o = s.run(&["run", "fio-randread", "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    let bundle = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let b = fslab::Bundle::open(&bundle).unwrap();
    let fio = b.table_with_axes("fio").unwrap().expect("fio.parquet");
    // One job; fio prints read, write and trim for it; the reads are what moved.
    let (points, its, dirs) = (
        strings(&fio, "point_id"),
        strings(&fio, "iteration"),
        strings(&fio, "direction"),
    );
    let iops = nums(&fio, "iops");
    let p99 = nums(&fio, "clat_p99_ns");
    let mut reads: BTreeMap<(String, String), f64> = BTreeMap::new();
    for i in 0..fio.height() {
        if dirs[i] == "read" {
            assert!(
                reads
                    .insert((points[i].clone(), its[i].clone()), iops[i])
                    .is_none(),
                "two read rows for {} iteration {}",
                points[i],
                its[i]
            );
            assert!(
                iops[i] > 0.0 && p99[i] > 0.0,
                "row {i}: iops {} p99 {}",
                iops[i],
                p99[i]
            );
        }
    }
    // 4 points × 2 iterations, each joined to its runs.parquet row.
    assert_eq!(reads.len(), 8, "{reads:?}");
    let runs = b.runs().unwrap();
    let run_keys: Vec<(String, String)> = strings(&runs, "point_id")
        .into_iter()
        .zip(strings(&runs, "iteration"))
        .collect();
    assert!(reads.keys().all(|k| run_keys.contains(k)));
    // The matrix values come along for grouping.
    assert!(strings(&fio, "iodepth")
        .iter()
        .all(|d| d == "1" || d == "16"));
    // The loop device saw the reads fio made (direct I/O: at least one request each
    // completed or merged per 4 KiB read, give or take what fio counts at its edges).
    let c = b
        .table_with_axes("counters")
        .unwrap()
        .expect("counters.parquet");
    let (cp, ci, cn) = (
        strings(&c, "point_id"),
        strings(&c, "iteration"),
        strings(&c, "name"),
    );
    let cd = nums(&c, "delta");
    let total = nums(&fio, "total_ios");
    for i in 0..fio.height() {
        if dirs[i] != "read" {
            continue;
        }
        let seen: f64 = (0..c.height())
            .filter(|&j| {
                cp[j] == points[i]
                    && ci[j] == its[i]
                    && (cn[j] == "reads_completed" || cn[j] == "reads_merged")
            })
            .map(|j| cd[j])
            .sum();
        assert!(
            seen >= 0.9 * total[i],
            "{} it {}: diskstats counted {seen} reads, fio {}",
            points[i],
            its[i],
            total[i]
        );
    }
    assert!(s.mounts().is_empty(), "{:?}", s.mounts());
    assert!(s.loops().is_empty(), "{:?}", s.loops());
}
