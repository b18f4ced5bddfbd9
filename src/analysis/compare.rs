//! Two runs side by side, in the manner of lkp's `ncompare` and mmtests'
//! `compare-kernels`: for each point present in both, the base and new mean ± relative
//! standard deviation with n per side, the % change with its 95 % interval (Fieller's,
//! from [`super::interval`]), Welch's t-test p-value, its Holm-adjusted value and a
//! verdict; the points present in only one; why each run stopped repeating; and the
//! differences between the two environments recorded in the manifests.
//!
//! - Both sides use the one warm-up rule ([`super::stats::is_warmup`]) and the point's
//!   unit ([`Unit`]: iteration, or replicate when there are several).
//! - A side without a steady state (every iteration warm-up) is never set against a
//!   side with one: the row says so and has no change. When neither side has a steady
//!   state their cold runs are compared, and the row says that too.
//! - No p-value for constant data (both variances zero).
//! - Significance is judged on the Holm-adjusted p-value (the number of tests is stated
//!   under the table), and a significant change smaller than the noise threshold
//!   (default 2 %) is shown as "within noise threshold".
//!
//! Significance marks, for a level α (default 0.05), on the adjusted p: `*` p < α,
//! `**` p < α/5, `***` p < α/50 (0.05, 0.01, 0.001 by default).

use super::interval::{fieller_welch, Method};
use super::stats::{
    holm_adjust, mean, samples_by_point, std_dev, welch_t_test, NoTest, PointSamples, Unit, Warmup,
};
use super::text_grid::{render_grid, Align};
use super::{fmt_sig, metric_label, AnalysisError};
use crate::frames::from_records;
use crate::store::merge::versions_by_name;
use crate::store::Manifest;
use indexmap::IndexMap;
use polars::prelude::*;
use serde::Serialize;
use serde_json::Value;

/// The default noise threshold of [`CompareOptions::threshold_pct`], in percent.
pub const DEFAULT_THRESHOLD_PCT: f64 = 2.0;

/// Options for [`compare_runs`].
#[derive(Debug, Clone, PartialEq)]
pub struct CompareOptions {
    pub metric: String,
    pub warmup: Warmup,
    /// Significance level of the t-test (on the Holm-adjusted p-values).
    pub alpha: f64,
    /// Effect-size threshold in percent: a significant change whose size is below it
    /// is "within noise threshold".
    pub threshold_pct: f64,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            metric: "wall_s".to_string(),
            warmup: Warmup::default(),
            alpha: 0.05,
            threshold_pct: DEFAULT_THRESHOLD_PCT,
        }
    }
}

/// What a row compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Steady state against steady state.
    SteadyState,
    /// Neither side has a steady state: cold (warm-up) runs against cold runs.
    ColdRuns,
    /// One side has a steady state and the other only cold runs (or nothing): not
    /// compared.
    NotComparable,
}

/// The verdict of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Significance {
    /// No test (too few samples, constant data, not comparable).
    NotTested,
    /// Adjusted p at or above α.
    NotSignificant,
    /// Adjusted p below α, but the change is smaller than the noise threshold.
    WithinNoise,
    /// Adjusted p below α and the change at least the noise threshold.
    Significant,
}

impl Significance {
    pub fn label(self) -> &'static str {
        match self {
            Significance::NotTested => "not tested",
            Significance::NotSignificant => "",
            Significance::WithinNoise => "within noise threshold",
            Significance::Significant => "significant",
        }
    }
}

/// One point present in both runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparisonRow {
    pub point_id: String,
    pub basis: Basis,
    pub base_unit: Unit,
    pub base_n: usize,
    pub base_mean: Option<f64>,
    /// Standard deviation as a percentage of the mean (σ%).
    pub base_std_pct: Option<f64>,
    pub new_unit: Unit,
    pub new_n: usize,
    pub new_mean: Option<f64>,
    pub new_std_pct: Option<f64>,
    /// (new − base) / base, in percent.
    pub change_pct: Option<f64>,
    /// 95 % interval of the % change (Fieller's interval of new/base, minus 1).
    pub change_ci_low: Option<f64>,
    pub change_ci_high: Option<f64>,
    pub change_ci_method: Option<Method>,
    pub t: Option<f64>,
    pub df: Option<f64>,
    /// Welch's two-sided p-value (raw); `None` when there is no test (`no_test`).
    pub p_value: Option<f64>,
    /// Holm-adjusted p-value over the comparison's tests.
    pub p_adjusted: Option<f64>,
    pub no_test: Option<NoTest>,
    pub significance: Significance,
    /// `significance == Significant`.
    pub significant: bool,
    /// `""`, `*`, `**` or `***` (on the adjusted p; empty unless significant).
    pub mark: String,
    /// What the reader must know about the row (no steady state, cold runs, …).
    pub note: Option<String>,
    /// Why each run stopped repeating this point (from the manifests).
    pub base_stop: Option<String>,
    pub new_stop: Option<String>,
}

/// One environment property that differs between the two manifests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvDiff {
    /// Dotted path, e.g. `environment.kernel`, `environment.tools.mkfs.xfs`,
    /// `environment.devices.loop0.backing`.
    pub key: String,
    pub base: Option<String>,
    pub new: Option<String>,
}

/// The result of [`compare_runs`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub base_label: String,
    pub new_label: String,
    pub metric: String,
    pub warmup: Warmup,
    pub alpha: f64,
    pub threshold_pct: f64,
    /// Number of t-tests made (the Holm family size).
    pub tests: usize,
    pub rows: Vec<ComparisonRow>,
    /// Points only in the base run.
    pub only_base: Vec<String>,
    /// Points only in the new run.
    pub only_new: Vec<String>,
    pub environment: Vec<EnvDiff>,
}

fn mark(p: Option<f64>, alpha: f64) -> &'static str {
    match p {
        Some(p) if p < alpha / 50.0 => "***",
        Some(p) if p < alpha / 5.0 => "**",
        Some(p) if p < alpha => "*",
        _ => "",
    }
}

fn stop_of(m: Option<&Manifest>, id: &str) -> Option<String> {
    m?.points
        .iter()
        .find(|p| p.id == id)
        .and_then(|p| p.repeat_stop.clone())
}

/// The samples a side contributes, and whether they are steady state.
fn side(p: &PointSamples, warmup: Warmup) -> (Unit, Vec<f64>, Vec<f64>) {
    let u = p.units(warmup);
    (u.unit, u.steady, u.cold)
}

/// Compare two runs frames on `opts.metric`. Manifests are optional; when both are
/// given their environment differences are listed, and each manifest's stop reasons.
pub fn compare_runs(
    base: &DataFrame,
    new: &DataFrame,
    base_manifest: Option<&Manifest>,
    new_manifest: Option<&Manifest>,
    opts: &CompareOptions,
) -> Result<Comparison, AnalysisError> {
    if !(opts.alpha > 0.0 && opts.alpha < 1.0) {
        return Err(AnalysisError::InvalidOption(format!(
            "significance level must be in (0, 1), got {}",
            opts.alpha
        )));
    }
    if !(opts.threshold_pct >= 0.0 && opts.threshold_pct.is_finite()) {
        return Err(AnalysisError::InvalidOption(format!(
            "noise threshold must be a percentage of 0 or more, got {}",
            opts.threshold_pct
        )));
    }
    let base_points = samples_by_point(base, &opts.metric)?;
    let new_points = samples_by_point(new, &opts.metric)?;
    let new_by_id: IndexMap<&str, _> = new_points
        .iter()
        .map(|p| (p.point_id.as_str(), p))
        .collect();
    let mut rows = Vec::new();
    let mut only_base = Vec::new();
    for b in &base_points {
        let Some(n) = new_by_id.get(b.point_id.as_str()) else {
            only_base.push(b.point_id.clone());
            continue;
        };
        let (bu, b_steady, b_cold) = side(b, opts.warmup);
        let (nu, n_steady, n_cold) = side(n, opts.warmup);
        let (basis, bs, ns, note) = match (b_steady.is_empty(), n_steady.is_empty()) {
            (false, false) => (Basis::SteadyState, b_steady, n_steady, None),
            (true, true) if !b_cold.is_empty() && !n_cold.is_empty() => (
                Basis::ColdRuns,
                b_cold,
                n_cold,
                Some("no steady state on either side: cold (warm-up) runs compared".to_string()),
            ),
            (b_none, n_none) => {
                let which = match (b_none, n_none) {
                    (true, false) => {
                        "base has no steady state (every iteration is warm-up) and new has one"
                    }
                    (false, true) => {
                        "new has no steady state (every iteration is warm-up) and base has one"
                    }
                    _ => "a side has no usable iteration",
                };
                // n per side still shown (a side's steady state, 0 without one).
                (
                    Basis::NotComparable,
                    b_steady,
                    n_steady,
                    Some(format!(
                        "not compared: {which}; a cold run is not set against a steady state (--warmup 0 compares every iteration)"
                    )),
                )
            }
        };
        let rel_std = |xs: &[f64]| match (mean(xs), std_dev(xs)) {
            (Some(m), Some(s)) if m != 0.0 => Some(100.0 * s / m.abs()),
            _ => None,
        };
        let (bm, nm) = (mean(&bs), mean(&ns));
        let comparable = basis != Basis::NotComparable;
        let welch = if comparable {
            welch_t_test(&bs, &ns)
        } else {
            Err(NoTest::TooFewSamples {
                a: bs.len(),
                b: ns.len(),
            })
        };
        let interval = if comparable {
            fieller_welch(&ns, &bs, 0.95).ok()
        } else {
            None
        };
        rows.push(ComparisonRow {
            point_id: b.point_id.clone(),
            basis,
            base_unit: bu,
            base_n: bs.len(),
            base_mean: bm,
            base_std_pct: rel_std(&bs),
            new_unit: nu,
            new_n: ns.len(),
            new_mean: nm,
            new_std_pct: rel_std(&ns),
            change_pct: match (bm, nm) {
                (Some(b), Some(n)) if b != 0.0 && comparable => Some(100.0 * (n - b) / b.abs()),
                _ => None,
            },
            change_ci_low: interval.map(|i| 100.0 * (i.lo - 1.0)),
            change_ci_high: interval.map(|i| 100.0 * (i.hi - 1.0)),
            change_ci_method: interval.map(|i| i.method),
            t: welch.ok().map(|w| -w.t), // sign of new − base
            df: welch.ok().map(|w| w.df),
            p_value: welch.ok().map(|w| w.p_value),
            p_adjusted: None,
            no_test: if comparable { welch.err() } else { None },
            significance: Significance::NotTested,
            significant: false,
            mark: String::new(),
            note,
            base_stop: stop_of(base_manifest, &b.point_id),
            new_stop: stop_of(new_manifest, &b.point_id),
        });
    }
    // Holm over every test made, then the verdicts on the adjusted values.
    let raw: Vec<Option<f64>> = rows.iter().map(|r| r.p_value).collect();
    let tests = raw.iter().flatten().count();
    for (r, adj) in rows.iter_mut().zip(holm_adjust(&raw)) {
        r.p_adjusted = adj;
        r.significance = match adj {
            None => Significance::NotTested,
            Some(p) if p >= opts.alpha => Significance::NotSignificant,
            Some(_) if r.change_pct.is_some_and(|c| c.abs() < opts.threshold_pct) => {
                Significance::WithinNoise
            }
            Some(_) => Significance::Significant,
        };
        r.significant = r.significance == Significance::Significant;
        if r.significant {
            r.mark = mark(adj, opts.alpha).to_string();
        }
    }
    let base_ids: Vec<&str> = base_points.iter().map(|p| p.point_id.as_str()).collect();
    let only_new = new_points
        .iter()
        .filter(|p| !base_ids.contains(&p.point_id.as_str()))
        .map(|p| p.point_id.clone())
        .collect();
    let environment = match (base_manifest, new_manifest) {
        (Some(a), Some(b)) => environment_diff(a, b),
        _ => Vec::new(),
    };
    let label = |m: Option<&Manifest>, default: &str| {
        m.map(|m| format!("{default} ({})", m.started_at))
            .unwrap_or_else(|| default.to_string())
    };
    Ok(Comparison {
        base_label: label(base_manifest, "base"),
        new_label: label(new_manifest, "new"),
        metric: opts.metric.clone(),
        warmup: opts.warmup,
        alpha: opts.alpha,
        threshold_pct: opts.threshold_pct,
        tests,
        rows,
        only_base,
        only_new,
        environment,
    })
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// The environment facts of a manifest as dotted keys → text (a fact that is not
/// recorded, such as an unset profile, is absent).
pub fn environment_facts(manifest: &Manifest) -> IndexMap<String, String> {
    let mut out = IndexMap::new();
    let mut put = |key: String, v: Option<String>| {
        if let Some(text) = v {
            out.insert(key, text);
        }
    };
    put("fslab_version".into(), Some(manifest.fslab_version.clone()));
    put("experiment.id".into(), Some(manifest.experiment.id.clone()));
    put(
        "experiment.sha256".into(),
        Some(manifest.experiment.sha256.clone()),
    );
    put("profile".into(), manifest.profile.clone());
    for (k, v) in &manifest.overrides {
        put(format!("overrides.{k}"), scalar_text(v));
    }
    let env = &manifest.environment;
    put("environment.kernel".into(), Some(env.kernel.clone()));
    put(
        "environment.distribution".into(),
        Some(env.distribution.clone()),
    );
    put("environment.cpu_model".into(), Some(env.cpu_model.clone()));
    put("environment.cores".into(), Some(env.cores.to_string()));
    put(
        "environment.memory_bytes".into(),
        Some(env.memory_bytes.to_string()),
    );
    put("environment.hostname".into(), Some(env.hostname.clone()));
    // By the program's name: fslab itself runs by its path (`{{fslab}}`), and where a
    // binary lives is not a difference between two runs; its version is.
    for (name, versions) in versions_by_name(&env.tools) {
        put(format!("environment.tools.{name}"), Some(versions));
    }
    for d in &env.devices {
        let name = &d.name;
        put(
            format!("environment.devices.{name}.backing"),
            Some(d.backing.clone()),
        );
        put(
            format!("environment.devices.{name}.size_bytes"),
            Some(d.size_bytes.to_string()),
        );
    }
    out
}

/// The environment facts that differ between two manifests (kernel, distribution, CPU,
/// memory, host, tool versions, device backing and size, experiment file, profile,
/// overrides), base order first.
pub fn environment_diff(base: &Manifest, new: &Manifest) -> Vec<EnvDiff> {
    let a = environment_facts(base);
    let b = environment_facts(new);
    let mut keys: Vec<&String> = a.keys().collect();
    keys.extend(b.keys().filter(|k| !a.contains_key(*k)));
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| EnvDiff {
            key: k.clone(),
            base: a.get(k).cloned(),
            new: b.get(k).cloned(),
        })
        .collect()
}

/// A small positive number without float noise or trailing zeros (0.05/5 → "0.01").
fn trim_num(v: f64) -> String {
    let t = format!("{v:.6}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn pct(v: Option<f64>) -> String {
    match v {
        None => "-".to_string(),
        Some(v) if v.abs() < 10.0 => format!("{v:.1}%"),
        Some(v) => format!("{v:.0}%"),
    }
}

fn p_text(p: Option<f64>) -> String {
    match p {
        None => "-".into(),
        // Never print p = 0: a p-value this small is below what f64 holds.
        Some(p) if p < 1e-300 => "<1e-300".into(),
        Some(p) => fmt_sig(p, 2),
    }
}

impl Comparison {
    /// The rows as a DataFrame (one row per common point; columns as [`ComparisonRow`]).
    pub fn to_frame(&self) -> Result<DataFrame, AnalysisError> {
        let mut df = from_records(&self.rows)?;
        for name in [
            "base_mean",
            "base_std_pct",
            "new_mean",
            "new_std_pct",
            "change_pct",
            "change_ci_low",
            "change_ci_high",
            "t",
            "df",
            "p_value",
            "p_adjusted",
        ] {
            if let Ok(col) = df.column(name) {
                if col.dtype() != &DataType::Float64 {
                    let cast = col.cast(&DataType::Float64)?;
                    df.with_column(cast)?;
                }
            }
        }
        Ok(df)
    }

    /// Rows whose change is significant (adjusted p below α, change at least the noise
    /// threshold).
    pub fn significant_rows(&self) -> impl Iterator<Item = &ComparisonRow> {
        self.rows.iter().filter(|r| r.significant)
    }

    /// The unit(s) of the rows in words: `unit: iteration`, `unit: replicate`, or both.
    pub fn unit_text(&self) -> String {
        let mut units: Vec<&str> = Vec::new();
        for r in &self.rows {
            for u in [r.base_unit, r.new_unit] {
                if !units.contains(&u.name()) {
                    units.push(u.name());
                }
            }
        }
        if units.is_empty() {
            units.push(Unit::Iteration.name());
        }
        let mut text = format!("unit: {}", units.join(" and "));
        if units.contains(&"replicate") {
            text.push_str(" (each replicate's steady-state iterations averaged)");
        }
        text
    }

    /// The comparison as fixed-width plain text (for terminals and mail): environment
    /// differences, then the table, the number of tests and the notes, why each run
    /// stopped repeating, then the points found in only one run.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        if !self.environment.is_empty() {
            out.push_str("Environment differences (base → new):\n");
            let rows: Vec<Vec<String>> = self
                .environment
                .iter()
                .map(|d| {
                    vec![
                        d.key.clone(),
                        d.base.clone().unwrap_or_else(|| "(none)".into()),
                        "→".into(),
                        d.new.clone().unwrap_or_else(|| "(none)".into()),
                    ]
                })
                .collect();
            let table = render_grid(&["key", "base", "", "new"], &[Align::Left; 4], &rows);
            for line in table.lines().skip(2) {
                out.push_str("  ");
                out.push_str(line);
                out.push('\n');
            }
            out.push('\n');
        }
        out.push_str(&format!(
            "{}: steady-state mean ± σ%, n per side; {}\n{}\n",
            metric_label(&self.metric),
            self.unit_text(),
            self.warmup.describe(),
        ));
        out.push_str(&format!(
            "Welch's t-test; p(Holm) adjusted over the tests below; marks on p(Holm): * p<{} ** p<{} *** p<{}; |change| < {}% is within the noise threshold\n",
            trim_num(self.alpha),
            trim_num(self.alpha / 5.0),
            trim_num(self.alpha / 50.0),
            trim_num(self.threshold_pct),
        ));
        out.push_str(&format!(
            "base: {}\nnew:  {}\n\n",
            self.base_label, self.new_label
        ));
        let num = |v: Option<f64>| v.map(|m| fmt_sig(m, 4)).unwrap_or_else(|| "-".into());
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| {
                vec![
                    num(r.base_mean),
                    format!("± {}", pct(r.base_std_pct)),
                    r.base_n.to_string(),
                    r.change_pct
                        .map(|c| format!("{c:+.1}%"))
                        .unwrap_or_else(|| "-".into()),
                    match (r.change_ci_low, r.change_ci_high) {
                        (Some(lo), Some(hi)) => format!("[{lo:+.1}%, {hi:+.1}%]"),
                        _ => "-".into(),
                    },
                    r.mark.clone(),
                    num(r.new_mean),
                    format!("± {}", pct(r.new_std_pct)),
                    r.new_n.to_string(),
                    match (r.p_value, r.no_test) {
                        (None, Some(NoTest::ConstantData)) => "constant data".into(),
                        (p, _) => p_text(p),
                    },
                    p_text(r.p_adjusted),
                    match r.basis {
                        Basis::NotComparable => "not compared".into(),
                        _ => r.significance.label().to_string(),
                    },
                    r.point_id.clone(),
                ]
            })
            .collect();
        use Align::{Left as L, Right as R};
        out.push_str(&render_grid(
            &[
                "base", "σ%", "n", "%change", "95% CI", "", "new", "σ%", "n", "p", "p(Holm)",
                "verdict", "point",
            ],
            &[R, L, R, R, R, L, R, L, R, R, R, L, L],
            &rows,
        ));
        if self.rows.is_empty() {
            out.push_str("(no point in common)\n");
        }
        out.push_str(&format!(
            "\n{} test{} (Holm–Bonferroni over {} point{} with a p-value; {} point{} compared)\n",
            self.tests,
            if self.tests == 1 { "" } else { "s" },
            self.tests,
            if self.tests == 1 { "" } else { "s" },
            self.rows.len(),
            if self.rows.len() == 1 { "" } else { "s" },
        ));
        let notes: Vec<String> = self
            .rows
            .iter()
            .filter_map(|r| {
                let mut parts = Vec::new();
                if let Some(n) = &r.note {
                    parts.push(n.clone());
                }
                if let Some(t) = r.no_test {
                    parts.push(format!("no p-value: {t}"));
                }
                (!parts.is_empty()).then(|| format!("  {}: {}", r.point_id, parts.join("; ")))
            })
            .collect();
        if !notes.is_empty() {
            out.push_str("\nNotes:\n");
            out.push_str(&notes.join("\n"));
            out.push('\n');
        }
        let stops: Vec<String> = self
            .rows
            .iter()
            .filter(|r| r.base_stop.is_some() || r.new_stop.is_some())
            .map(|r| {
                format!(
                    "  {}: base: {}; new: {}",
                    r.point_id,
                    r.base_stop.as_deref().unwrap_or("not recorded"),
                    r.new_stop.as_deref().unwrap_or("not recorded")
                )
            })
            .collect();
        if !stops.is_empty() {
            out.push_str("\nWhy repetition stopped:\n");
            out.push_str(&stops.join("\n"));
            out.push('\n');
        }
        if !self.only_base.is_empty() {
            out.push_str(&format!("\nonly in base: {}\n", self.only_base.join(", ")));
        }
        if !self.only_new.is_empty() {
            out.push_str(&format!("\nonly in new: {}\n", self.only_new.join(", ")));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(points: &[(&str, &[f64])]) -> DataFrame {
        let mut ids = Vec::new();
        let mut idx = Vec::new();
        let mut it = Vec::new();
        let mut wall = Vec::new();
        for (i, (id, values)) in points.iter().enumerate() {
            for (k, v) in values.iter().enumerate() {
                ids.push(id.to_string());
                idx.push(i as i64);
                it.push(k as i64 + 1);
                wall.push(*v);
            }
        }
        let status = vec!["ok"; ids.len()];
        df!("point_id" => ids, "point_index" => idx, "iteration" => it, "wall_s" => wall, "status" => status)
            .unwrap()
    }

    #[test]
    fn self_comparison_shows_no_change() {
        let r = runs(&[
            ("parent=0", &[18.8, 13.8, 14.0, 14.4]),
            ("parent=1", &[20.6, 14.2, 14.5, 13.8]),
        ]);
        let c = compare_runs(&r, &r, None, None, &CompareOptions::default()).unwrap();
        assert_eq!(c.rows.len(), 2);
        for row in &c.rows {
            assert_eq!(row.change_pct, Some(0.0));
            assert_eq!(row.p_value, Some(1.0));
            assert_eq!(row.p_adjusted, Some(1.0));
            assert!(!row.significant);
            assert_eq!(row.mark, "");
            assert_eq!((row.base_n, row.new_n), (3, 3));
        }
        assert_eq!(c.tests, 2);
        assert!(c.only_base.is_empty() && c.only_new.is_empty());
    }

    #[test]
    fn points_in_one_run_only_are_listed_and_marks_follow_p() {
        let a = runs(&[("x", &[9.0, 1.0, 1.1, 0.9, 1.0]), ("gone", &[1.0, 1.0])]);
        let b = runs(&[("x", &[9.0, 2.0, 2.1, 1.9, 2.0]), ("added", &[1.0, 1.0])]);
        let c = compare_runs(&a, &b, None, None, &CompareOptions::default()).unwrap();
        assert_eq!(c.only_base, ["gone"]);
        assert_eq!(c.only_new, ["added"]);
        let row = &c.rows[0];
        assert_eq!(row.change_pct, Some(100.0));
        assert!(row.p_value.unwrap() < 0.001);
        assert_eq!(row.mark, "***");
        assert!(row.t.unwrap() > 0.0);
        let text = c.render_text();
        assert!(text.contains("***"), "{text}");
        assert!(text.contains("significant"), "{text}");
        assert!(text.contains("1 test (Holm"), "{text}");
        assert!(text.contains("only in base: gone"));
        assert!(text.contains("only in new: added"));
        let df = c.to_frame().unwrap();
        assert_eq!(df.height(), 1);
        assert_eq!(df.column("p_value").unwrap().dtype(), &DataType::Float64);
    }

    #[test]
    fn environment_differences_come_from_the_manifests() {
        use crate::store::{DeviceInfo, Environment, ExperimentInfo};
        let manifest = |kernel: &str, tools: &[(&str, &str)], backing: &str| Manifest {
            fslab_version: "0.1.0".into(),
            experiment: ExperimentInfo {
                id: "e".into(),
                sha256: "aa".into(),
                ..ExperimentInfo::default()
            },
            environment: Environment {
                kernel: kernel.into(),
                cpu_model: "X".into(),
                cores: 2,
                tools: tools
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                devices: vec![DeviceInfo {
                    name: "loop0".into(),
                    size_bytes: 1024,
                    backing: backing.into(),
                    medium: None,
                    throttle: None,
                }],
                ..Environment::default()
            },
            ..Manifest::default()
        };
        let a = manifest(
            "6.1.0",
            &[("mkfs.xfs", "mkfs.xfs version 6.1.0")],
            "/var/tmp/a.img",
        );
        let b = manifest(
            "6.12.0",
            &[("mkfs.xfs", "mkfs.xfs version 6.13.0"), ("fsck", "1.47")],
            "tmpfs",
        );
        let d = environment_diff(&a, &b);
        let keys: Vec<&str> = d.iter().map(|d| d.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "environment.kernel",
                "environment.tools.mkfs.xfs",
                "environment.devices.loop0.backing",
                "environment.tools.fsck"
            ]
        );
        assert_eq!(d[3].base, None);
        assert!(environment_diff(&a, &a).is_empty());
        // Two checkouts of one fslab: keyed by the program's name, not its path.
        let c = manifest(
            "6.1.0",
            &[("/var/tmp/fslab-bin2/fslab", "fslab 0.1.0")],
            "tmpfs",
        );
        let e = manifest(
            "6.1.0",
            &[("/var/tmp/fslab-bin3/fslab", "fslab 0.1.0")],
            "tmpfs",
        );
        assert!(environment_diff(&c, &e).is_empty());
        let f = manifest("6.1.0", &[("/opt/fslab", "fslab 0.2.0")], "tmpfs");
        let d = environment_diff(&c, &f);
        assert_eq!(
            (d[0].key.as_str(), d[0].base.as_deref(), d[0].new.as_deref()),
            (
                "environment.tools.fslab",
                Some("fslab 0.1.0"),
                Some("fslab 0.2.0")
            )
        );
        // Tolerates manifests that lack everything.
        assert_eq!(
            environment_diff(&Manifest::default(), &Manifest::default()).len(),
            0
        );
    }
}
