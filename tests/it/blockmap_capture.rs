//! `parse: blockmap` through `fslab run`, on a real loop device (as root): the capture is
//! streamed into the bundle in batches (a small batch size here, so that each point's
//! map makes several), and the tables hold exactly what parsing the kept capture text
//! whole gives.

use crate::common::{fixture, text, Scratch};
use fslab::parse::{map::MapOptions, parse_with, Kind};
use polars::prelude::*;

const KEYS: [&str; 7] = [
    "experiment",
    "point_id",
    "point_index",
    "iteration",
    "replicate",
    "capture",
    "kind",
];

fn of_point(df: &DataFrame, index: i64) -> DataFrame {
    let mask = df
        .column("point_index")
        .unwrap()
        .i64()
        .unwrap()
        .equal(index);
    df.filter(&mask).unwrap()
}

fn without_keys(df: &DataFrame) -> DataFrame {
    df.drop_many(KEYS)
}

#[test]
fn a_blockmap_capture_is_streamed_into_extents_and_files() {
    let s = Scratch::new("bmcap");
    let batch = 7;
    let o = s
        .fslab()
        .env("FSLAB_CAPTURE_BATCH_ROWS", batch.to_string())
        .args([
            "run",
            fixture("blockmap-capture.yaml").to_str().unwrap(),
            "--quiet",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let bundle = std::path::PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
    // Every part was merged at the end of its point.
    let parts = bundle.join(".parts");
    let left: Vec<_> = std::fs::read_dir(&parts)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
    let b = fslab::Bundle::open(&bundle).unwrap();
    let tables = b.tables().unwrap();
    assert!(tables.contains(&"extents".to_string()), "{tables:?}");
    assert!(tables.contains(&"files".to_string()), "{tables:?}");
    let extents = b.table("extents").unwrap();
    let files = b.table("files").unwrap();
    // Written batch by batch: a row group per part of at most `batch` rows.
    let f = std::fs::File::open(bundle.join("extents.parquet")).unwrap();
    let groups = ParquetReader::new(f)
        .get_metadata()
        .unwrap()
        .row_groups
        .clone();
    assert!(
        groups.len() >= extents.height() / batch && groups.iter().all(|g| g.num_rows() <= batch),
        "{} row groups for {} rows",
        groups.len(),
        extents.height()
    );
    let mut points = 0;
    for p in &b.manifest().points {
        let n = p.vars["n"].as_u64().unwrap() as usize;
        let dir = bundle
            .join("captures")
            .join(fslab::store::point_dir_name(p.index, &p.id));
        let caps: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        assert_eq!(caps.len(), 1, "{caps:?}");
        let capture = std::fs::read_to_string(&caps[0]).unwrap();
        let whole = parse_with(Kind::Blockmap, &capture, MapOptions::default()).unwrap();
        let e = of_point(&extents, p.index as i64);
        let f = of_point(&files, p.index as i64);
        // The directory and its n files, each with data: one record each, rows in
        // several batches.
        assert_eq!(f.height(), n + 1, "{f}");
        assert!(e.height() > n && e.height() > 3 * batch, "{e}");
        let got = without_keys(&e);
        assert!(got.equals_missing(&whole.frame), "{got}\n{}", whole.frame);
        let wf = whole.files.unwrap();
        let got = without_keys(&f);
        assert!(got.equals_missing(&wf), "{got}\n{wf}");
        // The same columns, in the same order, as a whole-text parse with its keys.
        let names: Vec<String> = e
            .get_column_names()
            .iter()
            .skip(KEYS.len())
            .map(|s| s.to_string())
            .collect();
        let want: Vec<String> = whole
            .frame
            .get_column_names()
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(names, want);
        let kinds = e.column("kind").unwrap().str().unwrap().clone();
        assert!(kinds.iter().all(|k| k == Some("blockmap")));
        // `file` joins the two tables: every extent row's file has a record.
        let fnum: Vec<Option<i64>> = f.column("file").unwrap().i64().unwrap().iter().collect();
        assert_eq!(fnum, (0..=n as i64).map(Some).collect::<Vec<_>>());
        points += 1;
    }
    assert_eq!(points, 2);
    // Reopening the finished bundle (as --resume does) changes nothing.
    drop(fslab::store::BundleWriter::reopen(&bundle).unwrap());
    let again = fslab::Bundle::open(&bundle).unwrap();
    assert!(again.table("extents").unwrap().equals_missing(&extents));
    assert!(again.table("files").unwrap().equals_missing(&files));
    assert!(s.mounts().is_empty(), "{:?}", s.mounts());
    assert!(s.loops().is_empty(), "{:?}", s.loops());
}
