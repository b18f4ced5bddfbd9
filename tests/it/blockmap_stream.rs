//! Issue 15 part 2: `fslab blockmap` streams. On a real loop-mounted ext4, `-o` writes one
//! parquet row group per batch and the file equals the in-memory capture row for row;
//! `--json`, `--csv`, `--per-file` and `--summary` give the same rows (needs root).

use fslab::blockmap::{self, walk, Extent};
use polars::prelude::{ParquetReader, SerReader};
use std::path::Path;
use std::process::Command;

use crate::loopfs::{run, LoopFs};
use crate::require;

fn fslab(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_fslab"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn read(path: &Path) -> (polars::prelude::DataFrame, usize) {
    let mut r = ParquetReader::new(std::fs::File::open(path).unwrap());
    let groups = r.get_metadata().unwrap().row_groups.len();
    (r.finish().unwrap(), groups)
}

#[test]
fn cli_streams_row_groups_equal_to_the_capture() {
    if !require::root(module_path!()) {
        return;
    }
    let g = LoopFs::ext4("stream", "64M", &[]);
    let m = g.mnt.to_str().unwrap().to_string();
    run(
        "bash",
        &[
            "-euo",
            "pipefail",
            "-c",
            &format!(
                "cd {m} && for d in $(seq 7); do mkdir d$d; \
                 for i in $(seq 40); do echo $d$i > d$d/f$i; done; done && \
                 for i in $(seq 8); do dd if=/dev/urandom of=frag bs=4k count=1 seek=$((i*3)) \
                 conv=notrunc,fsync status=none; echo x > d1/pad$i; sync -f .; done && sync -f ."
            ),
        ],
    );
    let cap = blockmap::capture_mounted(&g.mnt, &walk::WalkOptions::default()).unwrap();
    let rows = cap.extents.height();
    assert!(rows > 290, "{rows}");
    let out = g.dir.join("x.parquet");
    let o = out.to_str().unwrap();

    fslab(&["blockmap", &m, "--batch-rows", "50", "-o", o]);
    let (df, groups) = read(&out);
    assert_eq!(groups, rows.div_ceil(50));
    assert_eq!(df, cap.extents);

    fslab(&["blockmap", &m, "--per-file", "--batch-rows", "50", "-o", o]);
    let (df, groups) = read(&out);
    assert_eq!(groups, cap.per_file.height().div_ceil(50));
    assert_eq!(df, cap.per_file);

    fslab(&["blockmap", &m, "--summary", "-o", o]);
    assert_eq!(read(&out).0, cap.filesystem);
    // The summary for a person: every column, one line each, none cut away.
    let shown = fslab(&["blockmap", &m, "--summary"]);
    let names: Vec<&str> = shown
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or_default())
        .collect();
    let columns: Vec<&str> = cap
        .filesystem
        .get_column_names()
        .iter()
        .map(|c| c.as_str())
        .collect();
    assert_eq!(names, columns, "{shown}");
    let files = cap.filesystem.column("files").unwrap().get(0).unwrap();
    let files_line = format!("files {files}");
    assert!(
        shown
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>().join(" ") == files_line),
        "{shown}"
    );

    let json: Vec<Extent> = serde_json::from_str(&fslab(&["blockmap", &m, "--json"])).unwrap();
    let map = walk::map_tree(&g.mnt, &walk::WalkOptions::default()).unwrap();
    assert_eq!(json, map.extents);

    let csv = fslab(&["blockmap", &m, "--csv", "--batch-rows", "7"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), rows + 1);
    assert!(lines[0].starts_with("path,inode,index,"), "{}", lines[0]);
    assert_eq!(lines.iter().filter(|l| l.starts_with("path,")).count(), 1);
}
