//! The statistics of a small runs frame, checked by hand.

use super::*;
use polars::prelude::*;
use serde_json::Value;

fn runs() -> DataFrame {
    // Two points, four iterations each; point b's iteration 2 failed and its
    // iteration 4 is far off.
    df!(
        "experiment" => ["e"; 8],
        "point_id" => ["fs=a", "fs=a", "fs=a", "fs=a", "fs=b", "fs=b", "fs=b", "fs=b"],
        "point_index" => [0i64, 0, 0, 0, 1, 1, 1, 1],
        "fs" => ["a", "a", "a", "a", "b", "b", "b", "b"],
        "iteration" => [1i64, 2, 3, 4, 1, 2, 3, 4],
        "wall_s" => [20.0, 10.0, 11.0, 12.0, 5.0, 99.0, 5.1, 50.0],
        "status" => ["ok", "ok", "ok", "ok", "ok", "failed", "ok", "ok"],
    )
    .unwrap()
}

#[test]
fn warmup_split_and_first_are_by_iteration() {
    let pts = samples_by_point(&runs(), "wall_s").unwrap();
    assert_eq!(pts.len(), 2);
    let (w, s) = pts[0].split(Warmup::First(1));
    assert_eq!(w, [20.0]);
    assert_eq!(s, [10.0, 11.0, 12.0]);
    let (w, s) = pts[1].split(Warmup::First(2));
    assert_eq!(w, [5.0]); // iteration 2 failed: not usable, still warm-up
    assert_eq!(s, [5.1, 50.0]);
    // A warm-up longer than the point leaves no steady state: nothing is promoted.
    let (w, s) = pts[0].split(Warmup::First(9));
    assert_eq!(w.len(), 4);
    assert!(s.is_empty());
    assert_eq!(pts[1].first(), Some(5.0));
    assert_eq!(pts[1].failed(), 1);
    assert_eq!(pts[0].vars["fs"], Value::from("a"));
}

#[test]
fn stats_frame_has_one_row_per_point_with_hand_checked_values() {
    let df = point_stats(&runs(), &StatsOptions::default()).unwrap();
    assert_eq!(df.height(), 2);
    let mean = df.column("mean").unwrap().f64().unwrap().get(0).unwrap();
    assert!((mean - 11.0).abs() < 1e-12);
    // first 20 against steady mean 11: +81.8 %
    let first = df
        .column("first_vs_mean_pct")
        .unwrap()
        .f64()
        .unwrap()
        .get(0)
        .unwrap();
    assert!((first - 900.0 / 11.0).abs() < 1e-9);
    assert_eq!(df.column("n").unwrap().i64().unwrap().get(1), Some(2));
    assert_eq!(
        df.column("n_failed").unwrap().i64().unwrap().get(1),
        Some(1)
    );
    assert_eq!(df.column("fs").unwrap().str().unwrap().get(1), Some("b"));
}

#[test]
fn outlier_column_flags_without_dropping() {
    let df = with_outliers(&runs(), &StatsOptions::default()).unwrap();
    assert_eq!(df.height(), 8);
    let out: Vec<Option<bool>> = df
        .column("outlier")
        .unwrap()
        .bool()
        .unwrap()
        .iter()
        .collect();
    let warm: Vec<Option<bool>> = df
        .column("warmup")
        .unwrap()
        .bool()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(warm[0], Some(true));
    assert_eq!(warm[1], Some(false));
    // Point a steady: 10, 11, 12 → median 11, MAD 1. The warm-up row (20) is neither
    // scored nor flagged: flags and counts cover the same (steady-state) rows.
    assert_eq!(out[0], Some(false));
    assert_eq!(df.column("mod_z").unwrap().f64().unwrap().get(0), None);
    assert_eq!(out[1], Some(false));
    // The failed row has no score.
    assert_eq!(df.column("mod_z").unwrap().f64().unwrap().get(5), None);
}

#[test]
fn invalid_options_are_errors() {
    let opts = StatsOptions {
        confidence: 1.5,
        ..StatsOptions::default()
    };
    assert!(matches!(
        point_stats(&runs(), &opts),
        Err(AnalysisError::InvalidOption(_))
    ));
    let missing = StatsOptions::metric("nope");
    assert!(matches!(
        point_stats(&runs(), &missing),
        Err(AnalysisError::MissingColumn { .. })
    ));
    let text = StatsOptions::metric("fs");
    assert!(matches!(
        point_stats(&runs(), &text),
        Err(AnalysisError::ColumnType { .. })
    ));
}
