//! Issue 41's pattern 5, through `fslab::import::import` on posts written the way people
//! write them (none copied from a corpus): numbers keep their unit and the label that tells
//! their runs apart, from section headings, Markdown tables and the number forms tools and
//! people print; and a benchmark's directory flag never leaves a host path in a step.

use fslab::import::{import, Draft, Row};
use fslab::Experiment;

fn draft(text: &str) -> Draft {
    import(text.as_bytes(), Some("post.txt")).expect("imports")
}

/// The row printed `printed` at `line`, with what it says.
fn row(d: &Draft, line: usize, value: f64) -> &Row {
    d.rows
        .iter()
        .find(|r| r.line == line && (r.value - value).abs() < 1e-9)
        .unwrap_or_else(|| {
            panic!(
                "no {value} at line {line}: {:#?}",
                d.rows
                    .iter()
                    .map(|r| (r.line, r.value, r.unit.clone(), r.settings.clone()))
                    .collect::<Vec<_>>()
            )
        })
}

fn says(r: &Row, key: &str, value: &str) -> bool {
    r.settings
        .iter()
        .any(|(k, v)| k == key && v.contains(value))
}

#[test]
fn headings_label_the_runs_below_them() {
    let d = draft(
        "Subject: zfs sync write test on my NAS\n\
         \n\
         # Main array without SLOG\n\
         \n\
         ```\n\
         # fio output, trimmed\n\
         WRITE: bw=38.2MiB/s (40.1MB/s), io=2292MiB, run=60001msec\n\
         ```\n\
         \n\
         # Main array with an Optane SLOG\n\
         \n\
         ```\n\
         WRITE: bw=412MiB/s (432MB/s), io=24.1GiB, run=60001msec\n\
         ```\n\
         \n\
         [ w/o patch ]\n\
         dd: 88.7 MB/s\n\
         --- with the patch ---\n\
         dd: 131 MB/s\n",
    );
    let slow = row(&d, 7, 38.2);
    assert_eq!(slow.unit, "MiB/s");
    assert!(says(slow, "section", "Main array without SLOG"), "{slow:?}");
    let fast = row(&d, 13, 412.0);
    assert!(says(fast, "section", "with an Optane SLOG"), "{fast:?}");
    let before = row(&d, 17, 88.7);
    assert_eq!(before.unit, "MB/s");
    assert!(says(before, "section", "w/o patch"), "{before:?}");
    assert!(says(row(&d, 19, 131.0), "section", "with the patch"));
}

#[test]
fn a_markdown_table_with_its_unit_line() {
    let d = draft(
        "Subject: results\n\
         \n\
         | fs    | 4k randwrite | 1M seqwrite |\n\
         |:------|-------------:|------------:|\n\
         | ext4  | 61           | 1840        |\n\
         | xfs   | 74           | 1910        |\n\
         \n\
         (all numbers in MB/s)\n",
    );
    let r = row(&d, 6, 1910.0);
    assert_eq!(r.unit, "MB/s");
    assert!(
        says(r, "fs", "xfs") && says(r, "column", "1M seqwrite"),
        "{r:?}"
    );
}

#[test]
fn tool_times_lists_and_changes() {
    let d = draft(
        "Subject: copy timings\n\
         \n\
         Unpatched, the whole copy with star:\n\
         \n\
         53:10.490r 1.020u 1:29.420s 3%\n\
         \n\
         and with GNU time around tar:\n\
         \n\
         0.81user 12.40system 1:58.02elapsed 11%CPU (0avgtext+0avgdata 5120maxresident)k\n\
         \n\
         fsync latency: Mean: 619.733; Median: 548.000; p99: 2,118 ms\n\
         summary: IOPS=12.5k, BW=48.8MiB/s, max_latency=12.3 ms\n\
         Overall -8.2% throughput and +3.1% max latency, the copy took ~1m56 and the\n\
         disk did 1,2 GB/s at best.\n",
    );
    let star = row(&d, 5, 3190.49);
    assert_eq!(
        (star.quantity.as_str(), star.unit.as_str()),
        ("real_time", "s")
    );
    assert!(says(star, "row", "Unpatched") || star.note.contains("Unpatched"));
    assert_eq!(row(&d, 9, 118.02).quantity, "real_time");
    assert_eq!(row(&d, 9, 11.0).unit, "%");
    // each field of the list is its own; the next field's word is no unit
    let mean = row(&d, 11, 619.733);
    assert_eq!(mean.unit, "");
    assert!(says(mean, "field", "Mean"), "{mean:?}");
    assert!(says(row(&d, 11, 548.0), "field", "Median"));
    assert_eq!(row(&d, 11, 2118.0).unit, "ms");
    let iops = row(&d, 12, 12500.0);
    assert_eq!(iops.unit, "IOPS");
    assert!(says(iops, "row", "summary"), "{iops:?}");
    assert!(says(row(&d, 12, 12.3), "field", "max_latency"));
    let change = row(&d, 13, -8.2);
    assert_eq!(change.unit, "%");
    assert!(says(change, "of", "throughput"), "{change:?}");
    assert!(says(row(&d, 13, 3.1), "of", "max latency"));
    assert_eq!(row(&d, 13, 116.0).unit, "s");
    assert_eq!(row(&d, 14, 1.2).unit, "GB/s");
}

#[test]
fn a_benchmark_directory_flag_becomes_the_mount() {
    let d = draft(
        "Subject: dbench on the two filesystems\n\
         \n\
         # dbench -t 30 -D /bench 8\n\
         Throughput 210.5 MB/sec  8 clients  8 procs  max_latency=40.1 ms\n",
    );
    let y = d.yaml.as_deref().expect("a draft");
    let e = Experiment::from_str_named(y, "post.yaml").expect("loads");
    let w = format!("{:?}", e.def.workload.run);
    assert!(w.contains("-D {{mnt}}"), "{w}");
    // (the notes say where it ran; no step names it)
    let steps: String = y
        .lines()
        .filter(|l| l.trim_start().starts_with("run:"))
        .collect();
    assert!(!steps.contains("/bench"), "{y}");
    assert!(y.contains("- mount: \"data\""), "{y}");
    assert_eq!(row(&d, 4, 210.5).unit, "MB/s");
}
