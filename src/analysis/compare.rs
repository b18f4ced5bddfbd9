//! Two runs side by side, in the manner of lkp's `ncompare` and mmtests'
//! `compare-kernels`: for each point present in both, the base and new steady-state
//! mean ± relative standard deviation, the % change, Welch's t-test p-value and a
//! significance mark; the points present in only one; and the differences between
//! the two environments recorded in the manifests.
//!
//! Significance marks, for a level α (default 0.05): `*` p < α, `**` p < α/5,
//! `***` p < α/50 (0.05, 0.01, 0.001 by default).

use super::stats::{mean, samples_by_point, std_dev, welch_t_test, Warmup};
use super::text_grid::{render_grid, Align};
use super::{fmt_sig, metric_label, AnalysisError};
use crate::frames::from_records;
use crate::store::Manifest;
use indexmap::IndexMap;
use polars::prelude::*;
use serde::Serialize;
use serde_json::Value;

/// Options for [`compare_runs`].
#[derive(Debug, Clone, PartialEq)]
pub struct CompareOptions {
    pub metric: String,
    pub warmup: Warmup,
    /// Significance level of the t-test.
    pub alpha: f64,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            metric: "wall_s".to_string(),
            warmup: Warmup::default(),
            alpha: 0.05,
        }
    }
}

/// One point present in both runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparisonRow {
    pub point_id: String,
    pub base_n: usize,
    pub base_mean: Option<f64>,
    /// Standard deviation as a percentage of the mean (σ%).
    pub base_std_pct: Option<f64>,
    pub new_n: usize,
    pub new_mean: Option<f64>,
    pub new_std_pct: Option<f64>,
    /// (new − base) / base, in percent.
    pub change_pct: Option<f64>,
    pub t: Option<f64>,
    pub df: Option<f64>,
    /// Welch's two-sided p-value; `None` when a side has fewer than two samples.
    pub p_value: Option<f64>,
    pub significant: bool,
    /// `""`, `*`, `**` or `***`.
    pub mark: String,
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

/// Compare two runs frames on `opts.metric` (steady state only). Manifests are optional;
/// when both are given their environment differences are listed.
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
        let (_, bs) = b.split(opts.warmup);
        let (_, ns) = n.split(opts.warmup);
        let rel_std = |xs: &[f64]| match (mean(xs), std_dev(xs)) {
            (Some(m), Some(s)) if m != 0.0 => Some(100.0 * s / m.abs()),
            _ => None,
        };
        let (bm, nm) = (mean(&bs), mean(&ns));
        let welch = welch_t_test(&bs, &ns);
        let p_value = welch.map(|w| w.p_value);
        rows.push(ComparisonRow {
            point_id: b.point_id.clone(),
            base_n: bs.len(),
            base_mean: bm,
            base_std_pct: rel_std(&bs),
            new_n: ns.len(),
            new_mean: nm,
            new_std_pct: rel_std(&ns),
            change_pct: match (bm, nm) {
                (Some(b), Some(n)) if b != 0.0 => Some(100.0 * (n - b) / b.abs()),
                _ => None,
            },
            t: welch.map(|w| -w.t), // sign of new − base
            df: welch.map(|w| w.df),
            p_value,
            significant: p_value.is_some_and(|p| p < opts.alpha),
            mark: mark(p_value, opts.alpha).to_string(),
        });
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
    for (k, v) in &env.tools {
        put(format!("environment.tools.{k}"), Some(v.clone()));
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
            "t",
            "df",
            "p_value",
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

    /// Rows whose change is significant at the comparison's α.
    pub fn significant_rows(&self) -> impl Iterator<Item = &ComparisonRow> {
        self.rows.iter().filter(|r| r.significant)
    }

    /// The comparison as fixed-width plain text (for terminals and mail): environment
    /// differences, then the table, then the points found in only one run.
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
        let warm = match self.warmup {
            Warmup::None => "all iterations".to_string(),
            Warmup::First(n) => format!("first {n} iteration(s) left out as warm-up"),
        };
        out.push_str(&format!(
            "{}: steady-state mean ± σ% ({warm}); Welch's t-test, * p<{} ** p<{} *** p<{}\n",
            metric_label(&self.metric),
            trim_num(self.alpha),
            trim_num(self.alpha / 5.0),
            trim_num(self.alpha / 50.0),
        ));
        out.push_str(&format!(
            "base: {}\nnew:  {}\n\n",
            self.base_label, self.new_label
        ));
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.base_mean
                        .map(|m| fmt_sig(m, 4))
                        .unwrap_or_else(|| "-".into()),
                    format!("± {}", pct(r.base_std_pct)),
                    r.base_n.to_string(),
                    r.change_pct
                        .map(|c| format!("{c:+.1}%"))
                        .unwrap_or_else(|| "-".into()),
                    r.mark.clone(),
                    r.new_mean
                        .map(|m| fmt_sig(m, 4))
                        .unwrap_or_else(|| "-".into()),
                    format!("± {}", pct(r.new_std_pct)),
                    r.new_n.to_string(),
                    r.p_value
                        .map(|p| fmt_sig(p, 2))
                        .unwrap_or_else(|| "-".into()),
                    r.point_id.clone(),
                ]
            })
            .collect();
        use Align::{Left as L, Right as R};
        out.push_str(&render_grid(
            &[
                "base", "σ%", "n", "%change", "", "new", "σ%", "n", "p", "point",
            ],
            &[R, L, R, R, L, R, L, R, R, L],
            &rows,
        ));
        if self.rows.is_empty() {
            out.push_str("(no point in common)\n");
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
            assert!(!row.significant);
            assert_eq!(row.mark, "");
        }
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
        assert!(text.contains("+100.0%  ***"), "{text}");
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
        // Tolerates manifests that lack everything.
        assert_eq!(
            environment_diff(&Manifest::default(), &Manifest::default()).len(),
            0
        );
    }
}
