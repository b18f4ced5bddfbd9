//! The store's unit tests: the bundle written, reopened, resumed and merged.

use super::journal::JOURNAL_CHUNK;
use super::{
    frames, parts, point_dir_name, read_parquet, runs_frame, Bundle, BundleStatus, BundleWriter,
    ExperimentInfo, Manifest, Path, PointRecord, PointStatus, RunRow, RunStatus, StoreError,
    GATHER_ROWS, RUN_COLUMNS,
};

use polars::prelude::*;
use std::collections::BTreeSet;

fn row(i: u32, wall: f64) -> RunRow {
    let mut vars = serde_json::Map::new();
    vars.insert("fs".into(), "ext4".into());
    vars.insert("files".into(), 100.into());
    RunRow {
        experiment: "e".into(),
        point_id: "fs=ext4".into(),
        point_index: 0,
        vars,
        iteration: i,
        replicate: 1,
        wall_s: wall,
        user_s: 0.0,
        sys_s: 1.0,
        exit_code: 0,
        status: RunStatus::Ok,
        started_at: "2026-01-01T00:00:00Z".into(),
    }
}

#[test]
fn each_run_is_on_disk_when_append_returns_and_reads_back() {
    let tmp = tempfile::tempdir().unwrap();
    let m = Manifest {
        experiment: ExperimentInfo {
            id: "e".into(),
            ..Default::default()
        },
        status: BundleStatus::Running,
        ..Default::default()
    };
    let mut w = BundleWriter::create(tmp.path(), m).unwrap();
    w.append_run(row(1, 1.0)).unwrap();
    let b = Bundle::open(w.dir()).unwrap();
    assert_eq!(b.runs().unwrap().height(), 1);
    w.append_run(row(2, 2.5)).unwrap();
    let df = Bundle::open(w.dir()).unwrap().runs().unwrap();
    assert_eq!(df.height(), 2);
    let names: Vec<&str> = df.get_column_names().iter().map(|s| s.as_str()).collect();
    assert_eq!(
        names,
        [
            "experiment",
            "point_id",
            "point_index",
            "fs",
            "files",
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
    assert_eq!(df.column("wall_s").unwrap().dtype(), &DataType::Float64);
    assert_eq!(df.column("files").unwrap().dtype(), &DataType::Int64);
    // The journal survives a torn last line.
    let j = w.dir().join("runs.jsonl");
    let dir = w.dir().to_path_buf();
    drop(w);
    let mut text = std::fs::read_to_string(&j).unwrap();
    text.push_str("{\"experiment\":");
    std::fs::write(&j, text).unwrap();
    let r = BundleWriter::reopen(&dir).unwrap();
    assert_eq!(r.runs().len(), 2);
}

#[test]
fn the_runs_frame_has_the_run_columns_in_order_with_the_variables_after_point_index() {
    let df = runs_frame(&[row(1, 1.0)]).unwrap();
    let names: Vec<&str> = df.get_column_names().iter().map(|s| s.as_str()).collect();
    let at = RUN_COLUMNS
        .iter()
        .position(|c| *c == "point_index")
        .unwrap()
        + 1;
    let mut expected = RUN_COLUMNS.to_vec();
    expected.splice(at..at, ["fs", "files"]);
    assert_eq!(names, expected);
}

#[test]
fn a_capture_file_is_copied_whole_and_a_missing_one_kept_empty() {
    let tmp = tempfile::tempdir().unwrap();
    let w = new_writer(tmp.path());
    let log = tmp.path().join("step.log");
    std::fs::write(&log, "line 1\nline 2\n").unwrap();
    let p = w.save_capture_file(0, "fs=ext4", "map", &log).unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "line 1\nline 2\n");
    let missing = w
        .save_capture_file(0, "fs=ext4", "gone", &tmp.path().join("nothing"))
        .unwrap();
    assert_eq!(std::fs::read(&missing).unwrap(), b"");
    let names: Vec<String> = std::fs::read_dir(p.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.contains(".tmp-")), "{names:?}");
}

fn new_writer(root: &Path) -> BundleWriter {
    let m = Manifest {
        experiment: ExperimentInfo {
            id: "e".into(),
            ..Default::default()
        },
        status: BundleStatus::Running,
        ..Default::default()
    };
    BundleWriter::create(root, m).unwrap()
}

#[test]
fn a_row_appended_after_a_torn_tail_is_kept() {
    // A crash in the middle of a row's write left part of a line in the room the
    // journal was grown by; the next row must not be glued onto it and lost.
    use std::os::unix::fs::FileExt;
    let tmp = tempfile::tempdir().unwrap();
    let mut w = new_writer(tmp.path());
    w.append_run(row(1, 1.0)).unwrap();
    let j = w.dir().join("runs.jsonl");
    let dir = w.dir().to_path_buf();
    // Grown ahead: the row, then zero bytes (what a killed run leaves).
    let text = std::fs::read_to_string(&j).unwrap();
    let end = text.find('\0').unwrap();
    assert!(end > 0 && text[end..].bytes().all(|b| b == 0), "{text:?}");
    w.abandon();
    let f = std::fs::OpenOptions::new().write(true).open(&j).unwrap();
    f.write_all_at(b"{\"experiment\":\"e\",\"point_id\":\"fs=ext", end as u64)
        .unwrap();
    drop(f);
    assert_eq!(Bundle::open(&dir).unwrap().runs().unwrap().height(), 1);
    let mut w = BundleWriter::reopen(&dir).unwrap();
    w.append_run(row(2, 2.0)).unwrap();
    w.append_run(row(3, 3.0)).unwrap();
    drop(w);
    // Flushed: plain JSON lines, no zero bytes, no torn part.
    let text = std::fs::read_to_string(&j).unwrap();
    assert!(
        text.ends_with('\n') && text.lines().count() == 3 && !text.contains('\0'),
        "{text:?}"
    );
    let r = BundleWriter::reopen(&dir).unwrap();
    let its: Vec<u32> = r.runs().iter().map(|r| r.iteration).collect();
    assert_eq!(its, [1, 2, 3]);
}

#[test]
fn the_journal_grows_in_chunks_and_keeps_every_row_across_them() {
    let tmp = tempfile::tempdir().unwrap();
    let mut w = new_writer(tmp.path());
    let j = w.dir().join("runs.jsonl");
    let mut sizes = std::collections::BTreeSet::new();
    for i in 1..=3000 {
        w.append_run(row(i, f64::from(i))).unwrap();
        sizes.insert(std::fs::metadata(&j).unwrap().len());
    }
    // The size changed once per chunk, not once per row.
    assert!(sizes.iter().all(|s| s % JOURNAL_CHUNK == 0), "{sizes:?}");
    assert!(sizes.len() > 1 && sizes.len() < 30, "{sizes:?}");
    // Readers see every row meanwhile, and after the flush the file is the rows.
    let dir = w.dir().to_path_buf();
    assert_eq!(Bundle::open(&dir).unwrap().runs().unwrap().height(), 3000);
    w.flush().unwrap();
    let text = std::fs::read_to_string(&j).unwrap();
    assert!(!text.contains('\0') && text.lines().count() == 3000);
    // Appending after a flush (the next point) grows it again.
    w.append_run(row(3001, 1.0)).unwrap();
    drop(w);
    let r = BundleWriter::reopen(&dir).unwrap();
    assert_eq!(r.runs().len(), 3001);
}

#[test]
fn a_damaged_line_inside_the_journal_is_an_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let mut w = new_writer(tmp.path());
    w.append_run(row(1, 1.0)).unwrap();
    w.append_run(row(2, 2.0)).unwrap();
    let j = w.dir().join("runs.jsonl");
    let text = std::fs::read_to_string(&j).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    std::fs::write(&j, format!("{first}\n{{\"garbage\n{rest}")).unwrap();
    let dir = w.dir().to_path_buf();
    drop(w);
    let e = BundleWriter::reopen(&dir).unwrap_err();
    assert!(matches!(e, StoreError::Journal { line: 2, .. }), "{e}");
    assert!(e.to_string().contains("runs.jsonl:2"), "{e}");
}

#[test]
fn runs_parquet_is_written_per_point_and_readers_see_the_journal_meanwhile() {
    let tmp = tempfile::tempdir().unwrap();
    let mut w = new_writer(tmp.path());
    for i in 1..=3 {
        w.append_run(row(i, f64::from(i))).unwrap();
    }
    // Not rewritten per iteration (that cost grew with the iteration count) ...
    assert!(!w.dir().join("runs.parquet").exists());
    // ... yet nothing is missing for a reader, mid-point or after a crash.
    let b = Bundle::open(w.dir()).unwrap();
    assert_eq!(b.runs().unwrap().height(), 3);
    w.flush().unwrap();
    let df = read_parquet(&w.dir().join("runs.parquet")).unwrap();
    assert_eq!(df.height(), 3);
    w.append_run(row(4, 4.0)).unwrap();
    assert_eq!(Bundle::open(w.dir()).unwrap().runs().unwrap().height(), 4);
    // Dropping the writer (an error path) flushes what is left.
    let dir = w.dir().to_path_buf();
    drop(w);
    assert_eq!(read_parquet(&dir.join("runs.parquet")).unwrap().height(), 4);
}

#[test]
fn a_bundle_has_one_writer_at_a_time() {
    let tmp = tempfile::tempdir().unwrap();
    let w = new_writer(tmp.path());
    let e = BundleWriter::reopen(w.dir()).unwrap_err();
    assert!(matches!(e, StoreError::Locked { .. }), "{e}");
    let dir = w.dir().to_path_buf();
    drop(w);
    BundleWriter::reopen(&dir).unwrap();
}

fn part(points: &[i64], x: &[i64]) -> DataFrame {
    df!("point_index" => points, "x" => x).unwrap()
}

fn names(df: &DataFrame) -> Vec<String> {
    df.get_column_names()
        .iter()
        .map(|s| s.to_string())
        .collect()
}

fn pending_files(dir: &Path) -> usize {
    walk_files(&dir.join(parts::DIR))
}

fn walk_files(d: &Path) -> usize {
    std::fs::read_dir(d)
        .map(|es| {
            es.flatten()
                .map(|e| {
                    if e.path().is_dir() {
                        walk_files(&e.path())
                    } else {
                        1
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}

#[test]
fn small_captures_are_gathered_then_written_as_one_part_that_readers_see() {
    let tmp = tempfile::tempdir().unwrap();
    let mut w = new_writer(tmp.path());
    w.append_table("t", part(&[0], &[1])).unwrap();
    w.append_table("t", part(&[0], &[2])).unwrap();
    // Gathered in memory: no file per capture.
    assert_eq!(pending_files(w.dir()), 0);
    // A streamed capture writes what was gathered first (rows keep their order).
    let tx = w.begin_parts().unwrap();
    assert_eq!(pending_files(w.dir()), 1);
    w.commit_parts(tx).unwrap();
    assert!(!w.dir().join("t.parquet").exists());
    // Nothing but the file's name is kept in memory.
    assert_eq!(w.tables["t"].len(), 1);
    let b = Bundle::open(w.dir()).unwrap();
    assert_eq!(b.tables().unwrap(), ["t"]);
    assert_eq!(b.table("t").unwrap(), part(&[0, 0], &[1, 2]));
    assert!(b.table_if_present("t").unwrap().is_some());
    assert!(b.table_if_present("u").unwrap().is_none());
    w.flush().unwrap();
    assert_eq!(pending_files(w.dir()), 0);
    let b = Bundle::open(w.dir()).unwrap();
    assert_eq!(b.tables().unwrap(), ["t"]);
    assert_eq!(
        read_parquet(&w.dir().join("t.parquet")).unwrap(),
        part(&[0, 0], &[1, 2])
    );
}

#[test]
fn gathered_captures_are_written_once_they_reach_the_row_bound() {
    let tmp = tempfile::tempdir().unwrap();
    let mut w = new_writer(tmp.path());
    let n = GATHER_ROWS / 2;
    w.append_table("t", part(&vec![0; n], &vec![1; n])).unwrap();
    w.append_table("u", part(&[0], &[7])).unwrap();
    assert_eq!(pending_files(w.dir()), 0);
    w.append_table("t", part(&vec![0; n], &vec![2; n])).unwrap();
    // One part per table, in one capture.
    assert_eq!(pending_files(w.dir()), 2);
    assert!(w.gathered.is_empty());
    let b = Bundle::open(w.dir()).unwrap();
    assert_eq!(b.table("t").unwrap().height(), 2 * n);
    assert_eq!(b.table("u").unwrap(), part(&[0], &[7]));
}

#[test]
fn flush_merges_parts_of_differing_schemas_as_concat_diagonal_does() {
    let tmp = tempfile::tempdir().unwrap();
    let mut w = new_writer(tmp.path());
    let a = df!("x" => [1i64, 2], "y" => ["a", "b"]).unwrap();
    let b = df!("x" => [3i64], "z" => [true]).unwrap();
    // Another type for `x`: cast to the first one's (Int64).
    let c = df!("z" => [false, true], "x" => [4.0f64, 5.0]).unwrap();
    let d = df!("y" => ["d"], "w" => [0.5f64]).unwrap();
    let empty = df!("x" => Vec::<i64>::new(), "v" => Vec::<String>::new()).unwrap();
    for df in [&a, &b, &c] {
        w.append_table("t", df.clone()).unwrap();
    }
    w.flush().unwrap();
    let first = frames::concat_diagonal(&[a.clone(), b.clone(), c.clone()]).unwrap();
    let got = read_parquet(&w.dir().join("t.parquet")).unwrap();
    assert_eq!(got, first);
    assert_eq!(names(&got), ["x", "y", "z"]);
    // A second flush streams the table and the new parts into a new file.
    w.append_table("t", d.clone()).unwrap();
    w.append_table("t", empty.clone()).unwrap();
    w.flush().unwrap();
    let want = frames::concat_diagonal(&[a, b, c, d, empty]).unwrap();
    let got = read_parquet(&w.dir().join("t.parquet")).unwrap();
    assert!(got.equals_missing(&want), "{got}\n{want}");
    assert_eq!(names(&got), ["x", "y", "z", "w", "v"]);
    assert_eq!(got.column("x").unwrap().dtype(), &DataType::Int64);
    assert_eq!(got.column("v").unwrap().dtype(), &DataType::String);
    assert_eq!(pending_files(w.dir()), 0);
    // An empty capture still makes its table, with its columns.
    w.append_table("e", df!("k" => Vec::<i64>::new()).unwrap())
        .unwrap();
    w.flush().unwrap();
    let e = read_parquet(&w.dir().join("e.parquet")).unwrap();
    assert_eq!((e.height(), names(&e)), (0, vec!["k".to_string()]));
}

#[test]
fn parts_of_a_killed_run_are_read_and_merged_on_reopen() {
    let tmp = tempfile::tempdir().unwrap();
    let mut w = new_writer(tmp.path());
    w.append_table("t", part(&[0], &[1])).unwrap();
    w.flush().unwrap();
    w.append_table("t", part(&[0], &[2])).unwrap();
    w.append_table("u", part(&[1], &[3])).unwrap();
    // A capture that never finished: staged, not committed.
    let mut tx = w.begin_parts().unwrap();
    w.stage_part(&mut tx, "t", part(&[9], &[9])).unwrap();
    std::mem::forget(tx);
    let dir = w.dir().to_path_buf();
    w.abandon();
    let b = Bundle::open(&dir).unwrap();
    assert_eq!(b.tables().unwrap(), ["t", "u"]);
    assert_eq!(b.table("t").unwrap(), part(&[0, 0], &[1, 2]));
    assert_eq!(b.table("u").unwrap(), part(&[1], &[3]));
    let w = BundleWriter::reopen(&dir).unwrap();
    assert_eq!(pending_files(&dir), 0);
    assert_eq!(
        read_parquet(&dir.join("t.parquet")).unwrap(),
        part(&[0, 0], &[1, 2])
    );
    assert_eq!(
        read_parquet(&dir.join("u.parquet")).unwrap(),
        part(&[1], &[3])
    );
    // New captures after the reopen come after the old ones.
    let mut w = w;
    w.append_table("t", part(&[0], &[4])).unwrap();
    drop(w);
    assert_eq!(
        Bundle::open(&dir).unwrap().table("t").unwrap(),
        part(&[0, 0, 0], &[1, 2, 4])
    );
}

#[test]
fn a_part_left_behind_after_its_merge_is_not_counted_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let mut w = new_writer(tmp.path());
    w.append_table("t", part(&[0], &[1])).unwrap();
    w.write_gathered().unwrap();
    let p = w.tables["t"][0].path.clone();
    let saved = std::fs::read(&p).unwrap();
    w.flush().unwrap();
    // A crash between the table's rename and the parts' deletion.
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, saved).unwrap();
    let dir = w.dir().to_path_buf();
    w.abandon();
    assert_eq!(
        Bundle::open(&dir).unwrap().table("t").unwrap(),
        part(&[0], &[1])
    );
    let mut w = BundleWriter::reopen(&dir).unwrap();
    assert_eq!(pending_files(&dir), 0);
    w.append_table("t", part(&[0], &[2])).unwrap();
    w.flush().unwrap();
    assert_eq!(
        read_parquet(&dir.join("t.parquet")).unwrap(),
        part(&[0, 0], &[1, 2])
    );
}

#[test]
fn retain_complete_points_filters_the_table_and_its_parts() {
    let tmp = tempfile::tempdir().unwrap();
    let mut w = new_writer(tmp.path());
    w.manifest_mut().points = (0..3)
        .map(|i| PointRecord {
            index: i,
            status: if i == 1 {
                PointStatus::Running
            } else {
                PointStatus::Ok
            },
            ..Default::default()
        })
        .collect();
    w.append_table("t", part(&[0, 1], &[1, 2])).unwrap();
    w.append_table("n", df!("x" => [7i64]).unwrap()).unwrap();
    w.flush().unwrap();
    w.append_table("t", part(&[1, 2], &[3, 4])).unwrap();
    w.append_table("u", part(&[1], &[5])).unwrap();
    w.retain_complete_points().unwrap();
    assert_eq!(pending_files(w.dir()), 0);
    let dir = w.dir().to_path_buf();
    drop(w);
    let b = Bundle::open(&dir).unwrap();
    assert_eq!(b.table("t").unwrap(), part(&[0, 2], &[1, 4]));
    assert_eq!(b.table("u").unwrap().height(), 0);
    // No point_index column: kept whole.
    assert_eq!(b.table("n").unwrap().height(), 1);
    assert_eq!(b.manifest.points[1].status, PointStatus::Pending);
}

#[test]
fn retain_replicates_keeps_the_finished_pairs_rows_and_sets_aside_only_the_others_logs() {
    let tmp = tempfile::tempdir().unwrap();
    let mut w = new_writer(tmp.path());
    let row = |point: usize, replicate: u32| RunRow {
        experiment: "e".into(),
        point_id: format!("p{point}"),
        point_index: point,
        vars: Default::default(),
        iteration: 1,
        replicate,
        wall_s: 1.0,
        user_s: 0.0,
        sys_s: 0.0,
        exit_code: 0,
        status: RunStatus::Ok,
        started_at: String::new(),
    };
    for (p, r) in [(0, 1), (1, 1), (0, 2), (1, 2)] {
        w.append_run(row(p, r)).unwrap();
    }
    let keyed = |points: &[i64], reps: &[i64]| -> DataFrame {
        df!("point_index" => points, "replicate" => reps).unwrap()
    };
    w.append_table("t", keyed(&[0, 1, 0, 1], &[1, 1, 2, 2]))
        .unwrap();
    // Format 1: no replicate column, read as replicate 1.
    w.append_table("old", part(&[0, 1], &[1, 2])).unwrap();
    w.flush().unwrap();
    let logs = w.log_dir(1, "p1").unwrap();
    for f in [
        "r01-setup-01-mkfs.stdout",
        "r02-setup-01-mkfs.stdout",
        "running.stdout",
    ] {
        std::fs::write(logs.join(f), "x").unwrap();
    }
    let done: BTreeSet<(usize, u32)> = [(0, 1), (1, 1), (0, 2)].into();
    w.retain_replicates(&done).unwrap();
    w.set_aside_replicate_logs(1, "p1", &["r02-".into(), "running.".into()])
        .unwrap();
    let dir = w.dir().to_path_buf();
    drop(w);
    let b = Bundle::open(&dir).unwrap();
    assert_eq!(b.table("t").unwrap(), keyed(&[0, 1, 0], &[1, 1, 2]));
    assert_eq!(b.table("old").unwrap(), part(&[0, 1], &[1, 2]));
    assert_eq!(b.runs().unwrap().height(), 3);
    let files = |d: &Path| -> BTreeSet<String> {
        std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect()
    };
    assert_eq!(
        files(&logs),
        ["r01-setup-01-mkfs.stdout".to_string()].into()
    );
    assert_eq!(
        files(&logs.with_file_name(format!("{}.interrupted-1", point_dir_name(1, "p1")))),
        [
            "r02-setup-01-mkfs.stdout".to_string(),
            "running.stdout".to_string()
        ]
        .into()
    );
}

#[test]
fn a_capture_dropped_uncommitted_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let mut w = new_writer(tmp.path());
    let mut tx = w.begin_parts().unwrap();
    w.stage_part(&mut tx, "t", part(&[0], &[1])).unwrap();
    w.stage_part(&mut tx, "t", part(&[0], &[2])).unwrap();
    assert!(Bundle::open(w.dir())
        .unwrap()
        .table_if_present("t")
        .unwrap()
        .is_none());
    drop(tx);
    assert_eq!(pending_files(w.dir()), 0);
    let mut tx = w.begin_parts().unwrap();
    w.stage_part(&mut tx, "t", part(&[0], &[1])).unwrap();
    w.stage_part(&mut tx, "t", part(&[0], &[2])).unwrap();
    w.commit_parts(tx).unwrap();
    assert_eq!(
        Bundle::open(w.dir()).unwrap().table("t").unwrap(),
        part(&[0, 0], &[1, 2])
    );
}

#[test]
fn not_a_bundle_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let e = Bundle::open(tmp.path()).unwrap_err();
    assert!(e.to_string().contains("not a result bundle"), "{e}");
}
