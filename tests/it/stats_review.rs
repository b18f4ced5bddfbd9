//! Issue 20, "Statistics a reviewer accepts": one test (or more) per finding, each of
//! which failed on the code before the fix, against reference values computed outside
//! fslab.
//!
//! Reference values (computed once, written here; the tests need no Python):
//! - Welch's t-test: scipy 1.17.1, `scipy.stats.ttest_ind(a, b, equal_var=False)`:
//!   [10, 10, 10] vs [10.5, 10.9, 10.2]: t = -2.630383796885712, df = 2.0,
//!   p = 0.11922898789891184 (the t −2.6304, df 2, p 0.11923);
//!   [1, 2, 3] vs [2, 3, 4] (equal variances): t = -1.224744871391589, df = 4.0,
//!   p = 0.28786413472669053;
//!   [14.2, 14.5, 13.8, 14.1] vs [15.0, 15.3, 14.9, 15.4]: t = -5.34522483824849,
//!   df = 5.789934354485779, p = 0.0019600565604425903.
//! - Student-t interval, n = 2: [1, 2] → mean ± t(0.975, 1)·s/√2 with scipy's
//!   `t.ppf(0.975, 1)`: (-4.853102368087347, 7.853102368087347).
//! - Holm: statsmodels 0.14 `multipletests([0.01, 0.04, 0.03, 0.005, 0.2, 0.5],
//!   method='holm')` → [0.05, 0.12, 0.12, 0.03, 0.4, 0.5] (R's `p.adjust(p, "holm")`
//!   gives the same).
//! - Fieller's 95 % interval of mean(new)/mean(base) with Welch–Satterthwaite df,
//!   solved as the quadratic (m1 − r·m2)² = t²(v11 + r²·v22) in numpy/scipy: for
//!   base [14.2, 14.5, 13.8, 14.1] and new [15.0, 15.3, 14.9, 15.4], the % change
//!   interval is [3.7070897401342062, 10.564986683576482].
//! - Modified z-score under MAD = 0 with a resolution step r: M = 0.6745 (x − median)/r,
//!   by hand in the comments.

use fslab::analysis::adaptive::{should_continue, Decision, RepeatPolicy, StopReason};
use fslab::analysis::stats::{
    holm_adjust, point_stats_rows, t_interval, welch_t_test, with_outliers, NoTest, PointStatsRow,
    Resolution, ResolutionSource, StatsOptions, Unit, Warmup,
};
use fslab::analysis::{compare_runs, recorded_warmup, Basis, CompareOptions, Significance};
use fslab::polars::prelude::*;
use fslab::store::{Manifest, PointRecord, RepeatStop};
use rand::SeedableRng;

fn close(actual: f64, expected: f64, tol: f64) {
    assert!(
        (actual - expected).abs() <= tol,
        "expected {expected} ± {tol}, got {actual}"
    );
}

/// A runs frame from (point, replicate, values in iteration order; NaN = failed).
fn runs(points: &[(&str, i64, &[f64])]) -> DataFrame {
    let mut ids = Vec::new();
    let mut idx = Vec::new();
    let mut rep = Vec::new();
    let mut it = Vec::new();
    let mut val: Vec<Option<f64>> = Vec::new();
    let mut status = Vec::new();
    let mut order: Vec<&str> = Vec::new();
    for (id, r, values) in points {
        if !order.contains(id) {
            order.push(id);
        }
        let i = order.iter().position(|o| o == id).unwrap() as i64;
        for (k, v) in values.iter().enumerate() {
            ids.push(id.to_string());
            idx.push(i);
            rep.push(*r);
            it.push(k as i64 + 1);
            val.push(v.is_finite().then_some(*v));
            status.push(if v.is_finite() { "ok" } else { "failed" });
        }
    }
    df!(
        "point_id" => ids,
        "point_index" => idx,
        "iteration" => it,
        "replicate" => rep,
        "wall_s" => val.clone(),
        "user_s" => val,
        "status" => status,
    )
    .unwrap()
}

fn stats(df: &DataFrame, opts: &StatsOptions) -> Vec<PointStatsRow> {
    point_stats_rows(df, opts).unwrap()
}

// ---- Finding 1: "first vs mean" +0.0 % for a single iteration. ----

#[test]
fn a_single_iteration_has_no_steady_state_not_zero_percent() {
    let df = runs(&[("one", 1, &[18.8])]);
    let r = &stats(&df, &StatsOptions::default())[0];
    assert!(r.no_steady_state);
    assert_eq!(r.n, 0);
    assert_eq!(r.mean, None);
    assert_eq!(r.first, Some(18.8));
    assert_eq!(r.first_vs_mean_pct, None, "not +0.0 %");
    assert_eq!(r.n_warmup, 1);

    // The report says so too.
    let root = tempfile::tempdir().unwrap();
    let m = Manifest {
        experiment: fslab::store::ExperimentInfo {
            id: "one".into(),
            title: "One iteration".into(),
            ..Default::default()
        },
        ..Manifest::default()
    };
    let mut w = fslab::store::BundleWriter::create(root.path(), m).unwrap();
    w.append_run(fslab::store::RunRow {
        experiment: "one".into(),
        point_id: "p=1".into(),
        point_index: 0,
        vars: serde_json::Map::new(),
        iteration: 1,
        replicate: 1,
        wall_s: 18.8,
        user_s: 0.01,
        sys_s: 0.02,
        exit_code: 0,
        status: fslab::store::RunStatus::Ok,
        started_at: "t".into(),
    })
    .unwrap();
    w.flush().unwrap();
    let b = fslab::Bundle::open(w.dir()).unwrap();
    let md = fslab::report::render_report(
        &b,
        None,
        &fslab::report::ReportOptions::default(),
        fslab::report::ReportFormat::Markdown,
    )
    .unwrap();
    assert!(md.contains("no steady state"), "{md}");
    assert!(!md.contains("+0.0%"), "{md}");
    assert!(md.contains("unit: iteration"), "{md}");
}

// ---- Finding 2: a cold run compared with a steady state. ----

#[test]
fn compare_refuses_a_cold_run_against_a_steady_state_and_shows_n() {
    let base = runs(&[("p", 1, &[18.8])]);
    let new = runs(&[("p", 1, &[18.8, 13.8, 14.0, 14.4])]);
    let c = compare_runs(&base, &new, None, None, &CompareOptions::default()).unwrap();
    let r = &c.rows[0];
    assert_eq!(r.basis, Basis::NotComparable);
    assert_eq!(r.change_pct, None, "not −25.2 %");
    assert_eq!((r.base_n, r.new_n), (0, 3));
    assert_eq!(r.p_value, None);
    let text = c.render_text();
    assert!(text.contains("not compared"), "{text}");
    assert!(!text.contains("-25.2%"), "{text}");

    // Cold against cold is said to be that.
    let c = compare_runs(&base, &base, None, None, &CompareOptions::default()).unwrap();
    assert_eq!(c.rows[0].basis, Basis::ColdRuns);
    assert_eq!(c.rows[0].change_pct, Some(0.0));
    assert!(c.render_text().contains("cold (warm-up) runs compared"));

    // With every iteration counted (--warmup 0) they compare.
    let all = CompareOptions {
        warmup: Warmup::None,
        ..CompareOptions::default()
    };
    let c = compare_runs(&base, &new, None, None, &all).unwrap();
    assert_eq!(c.rows[0].basis, Basis::SteadyState);
}

#[test]
fn compare_gives_a_fieller_interval_of_the_change() {
    let base = runs(&[("p", 1, &[99.0, 14.2, 14.5, 13.8, 14.1])]);
    let new = runs(&[("p", 1, &[99.0, 15.0, 15.3, 14.9, 15.4])]);
    let c = compare_runs(&base, &new, None, None, &CompareOptions::default()).unwrap();
    let r = &c.rows[0];
    close(r.change_ci_low.unwrap(), 3.7070897401342062, 1e-6);
    close(r.change_ci_high.unwrap(), 10.564986683576482, 1e-6);
    close(r.p_value.unwrap(), 0.0019600565604425903, 1e-9);
    close(r.df.unwrap(), 5.789934354485779, 1e-6);
    assert_eq!((r.base_n, r.new_n), (4, 4));
    assert!(c.render_text().contains("[+3.7%, +10.6%]"));
}

// ---- Finding 3: three warm-up rules. ----

#[test]
fn one_warm_up_rule_for_stats_adaptive_and_first() {
    // Iteration 1 failed. The old `split` took it as the warm-up (rank among all),
    // `first()` took iteration 2 (steady state!), and the adaptive CV ranked among
    // finite values, leaving out iteration 2 as well.
    let values = [f64::NAN, 10.0, 10.4, 10.2, 9.9, 10.1, 10.3];
    let df = runs(&[("p", 1, &values)]);
    let r = &stats(&df, &StatsOptions::default())[0];
    assert_eq!(r.first, None, "iteration 1 failed: no first run");
    assert_eq!(r.n, 6);
    let policy = RepeatPolicy {
        min: 3,
        max: 7,
        target_cv_pct: Some(50.0),
        warmup: Warmup::First(1),
    };
    let Decision::Stop(StopReason::TargetReached {
        cv_pct, steady_n, ..
    }) = should_continue(&values, &policy)
    else {
        panic!("expected the target to be reached")
    };
    assert_eq!(steady_n, 6);
    close(cv_pct, r.cv_pct.unwrap(), 1e-12);

    // The warm-up the run's stopping rule used is the default of the statistics.
    let stop = |w: usize| RepeatStop {
        replicate: 1,
        warmup: w,
        reason: StopReason::Fixed { n: 3 },
    };
    let m = |ws: &[usize]| Manifest {
        points: ws
            .iter()
            .map(|w| PointRecord {
                repeat_stops: vec![stop(*w)],
                ..PointRecord::default()
            })
            .collect(),
        ..Manifest::default()
    };
    assert_eq!(recorded_warmup(&m(&[2, 2])), Some(2));
    assert_eq!(recorded_warmup(&m(&[1, 2])), None);
    assert_eq!(recorded_warmup(&Manifest::default()), None);
    assert!(Warmup::First(2).describe().contains("iterations 1–2"));
}

// ---- Finding 4: zero variance on both sides gave p = 0 and ***. ----

#[test]
fn constant_data_has_no_p_value() {
    assert_eq!(
        welch_t_test(&[0.004; 3], &[0.008; 3]),
        Err(NoTest::ConstantData)
    );
    assert_eq!(
        welch_t_test(&[10.0; 3], &[10.001; 3]),
        Err(NoTest::ConstantData)
    );
    let base = runs(&[("sys", 1, &[0.1, 10.0, 10.0, 10.0])]);
    let new = runs(&[("sys", 1, &[0.1, 10.001, 10.001, 10.001])]);
    let c = compare_runs(&base, &new, None, None, &CompareOptions::default()).unwrap();
    let r = &c.rows[0];
    assert_eq!(r.p_value, None);
    assert_eq!(r.no_test, Some(NoTest::ConstantData));
    assert_eq!(r.significance, Significance::NotTested);
    assert_eq!(r.mark, "");
    assert_eq!(c.tests, 0);
    let text = c.render_text();
    let row = text.lines().find(|l| l.ends_with(" sys")).unwrap();
    assert!(row.contains("constant data"), "{text}");
    assert!(!row.contains('*'), "{text}");
}

#[test]
fn zero_variance_on_one_side_matches_scipy() {
    let w = welch_t_test(&[10.0, 10.0, 10.0], &[10.5, 10.9, 10.2]).unwrap();
    close(w.t, -2.630383796885712, 1e-9);
    close(w.df, 2.0, 1e-12);
    close(w.p_value, 0.11922898789891184, 1e-9);
}

#[test]
fn equal_variances_match_scipy() {
    let w = welch_t_test(&[1.0, 2.0, 3.0], &[2.0, 3.0, 4.0]).unwrap();
    close(w.t, -1.224744871391589, 1e-9);
    close(w.df, 4.0, 1e-9);
    close(w.p_value, 0.28786413472669053, 1e-9);
}

#[test]
fn intervals_of_one_and_two_samples() {
    assert_eq!(t_interval(&[5.0], 0.95), None);
    let (lo, hi) = t_interval(&[1.0, 2.0], 0.95).unwrap();
    close(lo, -4.853102368087347, 1e-9);
    close(hi, 7.853102368087347, 1e-9);
    assert_eq!(
        welch_t_test(&[1.0], &[1.0, 2.0]),
        Err(NoTest::TooFewSamples { a: 1, b: 2 })
    );
}

// ---- Finding 5: outlier flags and counts disagreed; MAD = 0 flagged anything. ----

#[test]
fn outlier_flags_and_counts_cover_the_same_rows() {
    // A far-off warm-up row: scored and flagged by the old `with_outliers`, not counted
    // by the old `point_stats`.
    let df = runs(&[("p", 1, &[50.0, 10.0, 11.0, 12.0, 10.5, 11.5])]);
    let opts = StatsOptions::default();
    let flagged = with_outliers(&df, &opts).unwrap();
    let flags: usize = flagged
        .column("outlier")
        .unwrap()
        .bool()
        .unwrap()
        .iter()
        .filter(|b| *b == Some(true))
        .count();
    assert_eq!(flags, stats(&df, &opts)[0].outliers);
    assert_eq!(flags, 0);
}

#[test]
fn under_mad_zero_one_clock_tick_is_not_an_outlier() {
    // user_s at 0.01 s resolution: five 0.004 and one 0.008 (after a warm-up row).
    // MAD = 0; with the MAD taken as one tick, M = 0.6745 · 0.004 / 0.01 = 0.2698.
    let df = runs(&[("p", 1, &[0.02, 0.004, 0.004, 0.004, 0.004, 0.004, 0.008])]);
    let opts = StatsOptions::metric("user_s");
    assert_eq!(
        opts.resolution().source,
        ResolutionSource::AssumedUserHz,
        "no manifest: the 1/100 s tick is an assumption, and said to be"
    );
    assert!(opts.resolution().describe().contains("assumed"));
    let flagged = with_outliers(&df, &opts).unwrap();
    let z = flagged
        .column("mod_z")
        .unwrap()
        .f64()
        .unwrap()
        .get(6)
        .unwrap();
    close(z, 0.6745 * 0.004 / 0.01, 1e-12);
    assert_eq!(stats(&df, &opts)[0].outliers, 0);
    // Ten ticks off is an outlier: M = 0.6745 · 0.1 / 0.01 = 6.745.
    let df = runs(&[("p", 1, &[0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.1])]);
    let flagged = with_outliers(&df, &opts).unwrap();
    let z = flagged
        .column("mod_z")
        .unwrap()
        .f64()
        .unwrap()
        .get(6)
        .unwrap();
    close(z, 6.745, 1e-9);
    assert_eq!(stats(&df, &opts)[0].outliers, 1);
    // A recorded tick rate wins over the assumption.
    let mut m = Manifest::default();
    m.environment.clock_ticks_per_s = Some(250);
    let r = Resolution::for_metric("sys_s", Some(&m));
    assert_eq!(r.source, ResolutionSource::Manifest);
    close(r.step.unwrap(), 0.004, 1e-15);
}

// ---- Finding 6: no multiple-comparison control. ----

#[test]
fn holm_matches_statsmodels() {
    let p = [0.01, 0.04, 0.03, 0.005, 0.2, 0.5].map(Some);
    let adj: Vec<f64> = holm_adjust(&p).into_iter().map(Option::unwrap).collect();
    for (a, e) in adj.iter().zip([0.05, 0.12, 0.12, 0.03, 0.4, 0.5]) {
        close(*a, e, 1e-12);
    }
    assert_eq!(holm_adjust(&[None, Some(0.5)]), [None, Some(0.5)]);
}

#[test]
fn twelve_points_are_judged_on_holm_adjusted_p() {
    // Twelve unchanged points; one has a raw p below 0.05 by chance.
    let mut base_pts: Vec<(String, Vec<f64>)> = Vec::new();
    let mut new_pts: Vec<(String, Vec<f64>)> = Vec::new();
    for k in 0..12 {
        let id = format!("k={k}");
        base_pts.push((id.clone(), vec![9.0, 10.0, 10.2, 9.8, 10.1, 9.9]));
        let shift = if k == 3 { 0.3 } else { 0.01 * k as f64 };
        new_pts.push((
            id,
            vec![
                9.0,
                10.0 + shift,
                10.2 + shift,
                9.8 + shift,
                10.1 + shift,
                9.9 + shift,
            ],
        ));
    }
    let as_runs = |pts: &[(String, Vec<f64>)]| {
        let v: Vec<(&str, i64, &[f64])> = pts
            .iter()
            .map(|(id, xs)| (id.as_str(), 1, xs.as_slice()))
            .collect();
        runs(&v)
    };
    let c = compare_runs(
        &as_runs(&base_pts),
        &as_runs(&new_pts),
        None,
        None,
        &CompareOptions::default(),
    )
    .unwrap();
    assert_eq!(c.tests, 12);
    let r3 = &c.rows[3];
    assert!(r3.p_value.unwrap() < 0.05, "raw p {:?}", r3.p_value);
    assert!(
        r3.p_adjusted.unwrap() >= 0.05,
        "adjusted {:?}",
        r3.p_adjusted
    );
    assert!(!r3.significant);
    assert_eq!(c.significant_rows().count(), 0);
    let text = c.render_text();
    assert!(text.contains("p(Holm)"), "{text}");
    assert!(text.contains("12 tests"), "{text}");
}

#[test]
fn a_significant_change_below_the_threshold_is_within_noise() {
    // +1 % with tiny noise: significant, but below the 2 % default threshold.
    let base = runs(&[("p", 1, &[9.0, 10.0, 10.001, 9.999, 10.0])]);
    let new = runs(&[("p", 1, &[9.0, 10.1, 10.101, 10.099, 10.1])]);
    let c = compare_runs(&base, &new, None, None, &CompareOptions::default()).unwrap();
    assert!(c.rows[0].p_adjusted.unwrap() < 0.001);
    assert_eq!(c.rows[0].significance, Significance::WithinNoise);
    assert!(!c.rows[0].significant);
    assert!(c.render_text().contains("within noise threshold"));
    let strict = CompareOptions {
        threshold_pct: 0.5,
        ..CompareOptions::default()
    };
    let c = compare_runs(&base, &new, None, None, &strict).unwrap();
    assert_eq!(c.rows[0].significance, Significance::Significant);
    assert_eq!(c.rows[0].mark, "***");
}

// ---- Finding 7: adaptive repetitions stopped early by chance. ----

/// One standard normal draw (Box–Muller).
fn normal(rng: &mut rand_chacha::ChaCha8Rng) -> f64 {
    use rand::Rng;
    let u1: f64 = rng.random_range(f64::EPSILON..1.0);
    let u2: f64 = rng.random_range(0.0..1.0);
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

#[test]
fn adaptive_stopping_by_simulation_keeps_its_intervals_honest() {
    // The documented example: min 3, max 20, target CV 2 %, against a true CV of 5 %
    // (mean 10, σ 0.5), 4000 points, fixed seed. Before the fix 35 % of points stopped
    // on the target, 88 % of those with two steady samples, and the 95 % intervals
    // covered the mean 91.5 % of the time overall (83 % of the stopped ones); by the
    // same simulation in numpy the fixed rule stops 4.6 % of points, and covers 93.4 %.
    let policy = RepeatPolicy {
        min: 3,
        max: 20,
        target_cv_pct: Some(2.0),
        warmup: Warmup::First(1),
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(20);
    let points = 4000;
    let (mut stopped_on_target, mut covered, mut few) = (0, 0, 0);
    for _ in 0..points {
        let mut xs = Vec::new();
        let reason = loop {
            xs.push(10.0 + 0.5 * normal(&mut rng));
            if let Decision::Stop(r) = should_continue(&xs, &policy) {
                break r;
            }
        };
        if let StopReason::TargetReached { steady_n, .. } = reason {
            stopped_on_target += 1;
            if steady_n < 5 {
                few += 1;
            }
        }
        let (lo, hi) = t_interval(&xs[1..], 0.95).unwrap();
        if lo <= 10.0 && 10.0 <= hi {
            covered += 1;
        }
    }
    assert_eq!(
        few, 0,
        "the CV rule stopped with fewer than 5 steady samples"
    );
    let stop_rate = stopped_on_target as f64 / points as f64;
    let coverage = covered as f64 / points as f64;
    assert!(stop_rate < 0.10, "{stop_rate}");
    assert!(coverage >= 0.925, "{coverage}");
}

// ---- Finding 8: iterations are not replicates. ----

#[test]
fn replicates_are_the_unit_when_there_are_several() {
    let df = runs(&[
        ("p", 1, &[20.0, 10.0, 10.2]),
        ("p", 2, &[21.0, 11.0, 11.2]),
        ("p", 3, &[19.0, 12.0, 12.2]),
        ("q", 1, &[5.0, 1.0, 1.2, 1.1]),
    ]);
    let rows = stats(&df, &StatsOptions::default());
    let p = &rows[0];
    assert_eq!(p.unit, Unit::Replicate);
    assert_eq!(p.replicates, 3);
    assert_eq!(p.n, 3, "n counts replicates, not the 6 steady iterations");
    close(p.mean.unwrap(), (10.1 + 11.1 + 12.1) / 3.0, 1e-12);
    close(p.std.unwrap(), 1.0, 1e-12);
    close(p.first.unwrap(), 20.0, 1e-12);
    let q = &rows[1];
    assert_eq!(q.unit, Unit::Iteration);
    assert_eq!(q.n, 3);
    // Comparisons use the same unit and say so.
    let c = compare_runs(&df, &df, None, None, &CompareOptions::default()).unwrap();
    assert_eq!(
        (c.rows[0].base_n, c.rows[0].base_unit),
        (3, Unit::Replicate)
    );
    assert!(c.render_text().contains("unit: replicate and iteration"));
}
