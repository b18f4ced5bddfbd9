//! `fslab parse KIND [FILE|-] [--json|--csv]` end to end, on real fixtures.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn fixture(tool: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(tool)
        .join(format!("{name}.txt"))
}

fn fslab(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fslab"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fslab");
    if let Some(input) = stdin {
        child.stdin.take().unwrap().write_all(input).unwrap();
    } else {
        drop(child.stdin.take());
    }
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn json_has_the_documented_fields() {
    let f = fixture("xfs", "seed000-mkfs-parent0");
    let out = fslab(&["parse", "mkfs.xfs", f.to_str().unwrap(), "--json"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    let rows: Vec<serde_json::Map<String, serde_json::Value>> =
        serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.len(), 43);
    let keys: Vec<_> = rows[0].keys().cloned().collect();
    assert_eq!(keys, ["section", "key", "value", "number", "unit", "bytes"]);
    let agsize = rows.iter().find(|r| r["key"] == "agsize").unwrap();
    assert_eq!(agsize["value"], "1298176");
    assert_eq!(agsize["unit"], "blks");
    assert_eq!(agsize["bytes"], serde_json::json!(1_298_176u64 * 4096));
}

#[test]
fn csv_and_warnings_with_line_numbers() {
    let f = fixture("time", "seed000-post");
    let out = fslab(&["parse", "time", f.to_str().unwrap(), "--csv"], None);
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    let lines: Vec<_> = stdout.lines().collect();
    assert_eq!(lines.len(), 1 + 22);
    assert!(
        lines[0].starts_with("index,line,format,real_s,user_s,sys_s,"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("0,46,bash,18.807,2.169,54.013,"),
        "{}",
        lines[1]
    );
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("seed000-post.txt:31: not a line of time output: # ./dumb.sh 0"),
        "{stderr}"
    );
}

#[test]
fn stdin_table_and_partial() {
    let body = std::fs::read(fixture("e2fsck", "ext4-f-n-tt")).unwrap();
    let out = fslab(&["parse", "e2fsck", "-"], Some(&body));
    assert_eq!(out.status.code(), Some(0));
    let table = text(&out.stdout);
    assert!(
        table.contains("Checking inodes, blocks, and sizes"),
        "{table}"
    );
    assert!(table.contains("/dev/loop3"), "{table}");

    // Cut after pass 3: rows, exit 0, and a note on stderr.
    let cut: Vec<u8> = text(&body)
        .lines()
        .take(10)
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect();
    let out = fslab(&["parse", "e2fsck"], Some(&cut));
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("looks truncated"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn parse_errors_exit_1_usage_errors_exit_2() {
    let f = fixture("xfs", "mkfs-parent-error");
    let out = fslab(&["parse", "mkfs.xfs", f.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("unknown option -n parent=1"));
    assert!(out.stdout.is_empty());

    let out = fslab(&["parse", "mkfs.btrfs", "-"], Some(b""));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("xfs_io-fiemap"),
        "lists the known kinds"
    );

    let out = fslab(&["parse", "time", "--json", "--csv"], Some(b"real 1.0\n"));
    assert_eq!(out.status.code(), Some(2));

    let out = fslab(&["parse", "time", "/nonexistent/fslab-parse-input"], None);
    assert_eq!(out.status.code(), Some(2));
}

/// Block maps: `--json` is one object per file with its rows under `extents`; debugfs's
/// byte columns are null with a warning on stderr until `--block-size` gives the size.
#[test]
fn block_map_json_is_files_with_extents_and_block_size_is_never_assumed() {
    let f = fixture("debugfs", "ext3-1k-holey-stat");
    let f = f.to_str().unwrap();
    let out = fslab(&["parse", "debugfs-stat", f, "--json"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("block size unknown") && stderr.contains("--block-size"),
        "{stderr}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc[0]["total_blocks"], 63);
    assert_eq!(doc[0]["block_size"], serde_json::Value::Null);
    let rows = doc[0]["extents"].as_array().unwrap();
    assert_eq!(rows.len(), 7);
    assert!(rows.iter().all(|r| r["length_bytes"].is_null()));
    assert_eq!(rows[6]["physical_start"], 5613);

    let out = fslab(
        &["parse", "debugfs-stat", f, "--json", "--block-size", "1024"],
        None,
    );
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc[0]["block_size_source"], "given");
    assert_eq!(doc[0]["extents"][6]["physical_bytes"], 5613 * 1024);
    assert_eq!(doc[0]["extents"][6]["length_bytes"], 40 * 1024);

    // CSV: the rows, flat, with the join key.
    let out = fslab(
        &[
            "parse",
            "xfs_bmap",
            fixture("xfs_bmap", "sparse-v").to_str().unwrap(),
            "--csv",
        ],
        None,
    );
    let csv = text(&out.stdout);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 11, "{csv}");
    assert!(
        lines[0].starts_with("file,path,inode,index,logical_bytes,"),
        "{}",
        lines[0]
    );
    assert!(lines[2].contains(",hole,"), "{}", lines[2]);
}

/// `fslab parse perf-stat-human` on perf 6.1's default output: the rows as JSON with
/// the documented fields, dd's own lines on stderr with their line numbers.
#[test]
fn perf_stat_human_json_and_warnings() {
    let f = fixture("perf_stat", "dd-default-human");
    let out = fslab(
        &["parse", "perf-stat-human", f.to_str().unwrap(), "--json"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let rows: Vec<serde_json::Map<String, serde_json::Value>> =
        serde_json::from_slice(&out.stdout).unwrap();
    // 5 counters, then elapsed, user and sys.
    assert_eq!(rows.len(), 8);
    let keys: Vec<_> = rows[0].keys().cloned().collect();
    assert_eq!(
        keys,
        [
            "time_s",
            "cpu",
            "cpus",
            "thread",
            "event",
            "cgroup",
            "value",
            "unit",
            "status",
            "variance_pct",
            "run_time_ns",
            "run_pct",
            "metric_value",
            "metric_unit",
            "runs"
        ]
    );
    // 338      page-faults                      #  117.209 K/sec
    assert_eq!(rows[2]["event"], "page-faults");
    assert_eq!(rows[2]["value"], serde_json::json!(338.0));
    assert_eq!(rows[2]["metric_value"], serde_json::json!(117.209));
    assert_eq!(rows[3]["status"], "not_supported");
    assert_eq!(rows[5]["event"], "seconds time elapsed");
    assert_eq!(rows[5]["value"], serde_json::json!(0.003702428));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("dd-default-human.txt:1:") && stderr.contains("100+0 records in"),
        "{stderr}"
    );
    // The CSV kind refuses the human format and names the kind that reads it.
    let out = fslab(&["parse", "perf-stat", f.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("perf-stat-human"),
        "{}",
        text(&out.stderr)
    );
}

/// The help names every kind `fslab parse` accepts.
#[test]
fn help_names_every_kind() {
    let out = fslab(&["parse", "--help"], None);
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    for k in fslab::parse::Kind::ALL {
        assert!(
            help.contains(k.name()),
            "`fslab parse --help` does not name {k}"
        );
    }
}
