//! Statistics checked against values published elsewhere, never against fslab's own output.
//!
//! Sources:
//! - R's `sleep` data set (Cushny and Peebles 1905, as used by Student 1908), shipped with R
//!   as `datasets::sleep`; the outputs quoted are R's `t.test` and `summary`/`sd` printouts:
//!   `t.test(extra ~ group, data = sleep)` → Welch: t = -1.8608, df = 17.776,
//!   p-value = 0.07939, means 0.75 and 2.33;
//!   `t.test(sleep$extra[1:10])` → 95 percent CI -0.5297804 2.0297804, t = 1.3257,
//!   p = 0.2176; `summary()` → Min. -1.600, 1st Qu. -0.175, Median 0.350, Mean 0.750,
//!   3rd Qu. 1.700, Max. 3.700 (R's default quantile type 7); `sd()` 1.78901;
//!   `t.test(g2 - g1)` (the paired differences) → 95 percent CI 0.7001142 2.4598858,
//!   t = 4.0621, df = 9, p-value = 0.002833.
//! - Wikipedia, "Welch's t-test", section Examples, example 1 (revision 994214781):
//!   t = -2.46, ν ≈ 24.99, p = 0.021; to more digits from scipy 1.17.1
//!   (`scipy.stats.ttest_ind(a1, a2, equal_var=False)`), checked to 1e-5.
//! - NIST/SEMATECH e-Handbook of Statistical Methods, §1.3.6.7.2, table of upper
//!   critical values of Student's t distribution.
//! - Iglewicz and Hoaglin (1993), "How to Detect and Handle Outliers", the modified
//!   z-score M = 0.6745 (x − median) / MAD with the |M| > 3.5 rule (also NIST §1.3.5.17);
//!   the expected scores below are worked by hand in the comments.

use fslab::analysis::stats::{
    geometric_mean, harmonic_mean, median, modified_z_scores, point_stats, quantile, std_dev,
    t_interval, t_quantile, welch_t_test, StatsOptions, Warmup,
};
use fslab::analysis::{compare_runs, CompareOptions};
use fslab::polars::prelude::*;

const SLEEP_1: [f64; 10] = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
const SLEEP_2: [f64; 10] = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4];

fn close(actual: f64, expected: f64, tol: f64) {
    assert!(
        (actual - expected).abs() <= tol,
        "expected {expected} ± {tol}, got {actual}"
    );
}

#[test]
fn welch_matches_r_on_the_sleep_data() {
    let w = welch_t_test(&SLEEP_1, &SLEEP_2).expect("two samples of ten");
    close(w.t, -1.8608, 5e-5);
    close(w.df, 17.776, 5e-4);
    close(w.p_value, 0.07939, 5e-6);
}

#[test]
fn welch_matches_the_wikipedia_example() {
    let a1 = [
        27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4,
    ];
    let a2 = [
        27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4,
    ];
    let w = welch_t_test(&a1, &a2).unwrap();
    // To more digits: scipy 1.17.1 `ttest_ind(a1, a2, equal_var=False)` gives
    // t = -2.455356398286006, df = 24.988529290231416, p = 0.021378001462866992.
    close(w.t, -2.455356398286006, 1e-5);
    close(w.df, 24.988529290231416, 1e-5);
    close(w.p_value, 0.021378001462866992, 1e-6);
    // The test is symmetric in its samples up to the sign of t.
    let r = welch_t_test(&a2, &a1).unwrap();
    close(r.t, -w.t, 1e-12);
    close(r.p_value, w.p_value, 1e-12);
}

#[test]
fn student_t_interval_matches_r() {
    let (lo, hi) = t_interval(&SLEEP_1, 0.95).unwrap();
    close(lo, -0.5297804, 5e-8);
    close(hi, 2.0297804, 5e-8);
    close(std_dev(&SLEEP_1).unwrap(), 1.78901, 5e-6);
    close(median(&SLEEP_1).unwrap(), 0.35, 1e-12);
    close(quantile(&SLEEP_1, 0.25).unwrap(), -0.175, 1e-12);
    close(quantile(&SLEEP_1, 0.75).unwrap(), 1.7, 1e-12);
    close(quantile(&SLEEP_1, 0.0).unwrap(), -1.6, 1e-12);
    close(quantile(&SLEEP_1, 1.0).unwrap(), 3.7, 1e-12);

    let diff: Vec<f64> = SLEEP_2.iter().zip(SLEEP_1).map(|(b, a)| b - a).collect();
    let (lo, hi) = t_interval(&diff, 0.95).unwrap();
    close(lo, 0.7001142, 5e-8);
    close(hi, 2.4598858, 5e-8);
}

#[test]
fn t_quantiles_match_the_nist_table() {
    // NIST e-Handbook 1.3.6.7.2: upper critical values t(α; ν).
    for (p, df, expected) in [
        (0.975, 1.0, 12.706),
        (0.975, 4.0, 2.776),
        (0.975, 9.0, 2.262),
        (0.975, 30.0, 2.042),
        (0.95, 10.0, 1.812),
        (0.995, 10.0, 3.169),
        (0.999, 20.0, 3.552),
    ] {
        close(t_quantile(p, df).unwrap(), expected, 5e-4);
    }
    assert_eq!(t_quantile(1.0, 3.0), None);
    assert_eq!(t_quantile(0.5, 0.0), None);
}

#[test]
fn harmonic_and_geometric_means_by_hand() {
    // The classic: 60 km/h out, 40 km/h back over the same distance averages 48 km/h.
    close(harmonic_mean(&[60.0, 40.0]).unwrap(), 48.0, 1e-12);
    // 3 / (1 + 1/2 + 1/4) = 12/7.
    close(harmonic_mean(&[1.0, 2.0, 4.0]).unwrap(), 12.0 / 7.0, 1e-12);
    // (1 · 2 · 4)^(1/3) = 2; ratios 0.5 and 2 average to 1.
    close(geometric_mean(&[1.0, 2.0, 4.0]).unwrap(), 2.0, 1e-12);
    close(geometric_mean(&[0.5, 2.0]).unwrap(), 1.0, 1e-12);
    assert_eq!(harmonic_mean(&[1.0, 0.0]), None);
    assert_eq!(geometric_mean(&[1.0, -2.0]), None);
    assert_eq!(geometric_mean(&[]), None);
}

#[test]
fn modified_z_scores_by_hand() {
    // median 12; |x − 12| = 2, 1, 0, 1, 88 → MAD 1.
    // M = 0.6745 · (x − 12): -1.349, -0.6745, 0, 0.6745, 59.356.
    let z = modified_z_scores(&[10.0, 11.0, 12.0, 13.0, 100.0]);
    let expected = [-1.349, -0.6745, 0.0, 0.6745, 59.356];
    for (a, e) in z.iter().zip(expected) {
        close(*a, e, 1e-9);
    }
    assert_eq!(z.iter().filter(|m| m.abs() > 3.5).count(), 1);
}

/// The sleep data as a runs frame: two points, ten iterations each.
fn sleep_runs() -> DataFrame {
    let mut ids = Vec::new();
    let mut idx = Vec::new();
    let mut it = Vec::new();
    let mut v = Vec::new();
    for (i, group) in [SLEEP_1, SLEEP_2].iter().enumerate() {
        for (k, x) in group.iter().enumerate() {
            ids.push(format!("group={}", i + 1));
            idx.push(i as i64);
            it.push(k as i64 + 1);
            v.push(*x);
        }
    }
    let n = ids.len();
    df!(
        "experiment" => vec!["sleep"; n],
        "point_id" => ids,
        "point_index" => idx,
        "iteration" => it,
        "wall_s" => v,
        "status" => vec!["ok"; n],
    )
    .unwrap()
}

#[test]
fn point_stats_frame_reproduces_r_on_the_sleep_data() {
    let opts = StatsOptions {
        warmup: Warmup::None,
        ..StatsOptions::default()
    };
    let df = point_stats(&sleep_runs(), &opts).unwrap();
    assert_eq!(df.height(), 2);
    let get = |c: &str, r: usize| df.column(c).unwrap().f64().unwrap().get(r).unwrap();
    close(get("mean", 0), 0.75, 1e-12);
    close(get("mean", 1), 2.33, 1e-12);
    close(get("ci_low", 0), -0.5297804, 5e-8);
    close(get("ci_high", 0), 2.0297804, 5e-8);
    close(get("std", 0), 1.78901, 5e-6);
    close(get("median", 0), 0.35, 1e-12);
    close(get("min", 0), -1.6, 1e-12);
    close(get("max", 1), 5.5, 1e-12);
    // The sleep data have a negative value, so no harmonic or geometric mean.
    assert_eq!(df.column("hmean").unwrap().f64().unwrap().get(0), None);
}

#[test]
fn comparison_p_value_is_welchs_on_the_sleep_data() {
    // The same data as two bundles, point by point: base = group 1, new = group 2.
    let runs = sleep_runs();
    let base = runs
        .filter(&runs.column("point_index").unwrap().i64().unwrap().equal(0))
        .unwrap();
    let mut new = runs
        .filter(&runs.column("point_index").unwrap().i64().unwrap().equal(1))
        .unwrap();
    new.with_column(Column::new("point_id".into(), vec!["group=1"; 10]))
        .unwrap();
    let opts = CompareOptions {
        warmup: Warmup::None,
        ..CompareOptions::default()
    };
    let c = compare_runs(&base, &new, None, None, &opts).unwrap();
    assert_eq!(c.rows.len(), 1);
    let row = &c.rows[0];
    close(row.p_value.unwrap(), 0.07939, 5e-6);
    close(row.t.unwrap(), 1.8608, 5e-5); // new − base
    close(row.change_pct.unwrap(), 100.0 * (2.33 - 0.75) / 0.75, 1e-9);
    assert!(!row.significant, "p = 0.079 is not significant at 0.05");
    let at_10 = CompareOptions { alpha: 0.1, ..opts };
    let c = compare_runs(&base, &new, None, None, &at_10).unwrap();
    assert!(c.rows[0].significant);
    assert_eq!(c.rows[0].mark, "*");
}
