//! The words and table cells both renderers (HTML and Markdown) share: which bundle
//! facts head the report, the environment rows, the statistics tables' columns and
//! notes. Formatting only: every number comes computed in the [`Content`].

use super::content::ClaimsContent;
use crate::analysis::claims::{ClaimVerdict, CountedPer};
use crate::analysis::text_grid::Align;
use crate::analysis::{BundleSummary, PointStatsRow, Resolution, Unit, Warmup};
use crate::labels::fmt_sig;
use crate::store::PointStatus;

/// The facts under the title: (label, value).
pub fn subtitle(s: &BundleSummary) -> Vec<(String, String)> {
    let mut out = vec![("bundle".to_string(), s.path.display().to_string())];
    for (label, value) in [
        ("experiment", Some(&s.experiment_id)),
        ("experiment file", s.experiment_file.as_ref()),
        ("profile", s.profile.as_ref()),
        ("started", Some(&s.started_at)),
        ("finished", s.finished_at.as_ref()),
        ("fslab", Some(&s.fslab_version)),
    ] {
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            out.push((label.to_string(), v.clone()));
        }
    }
    if !s.overrides.is_empty() {
        out.push(("overrides".to_string(), s.overrides.join(" ")));
    }
    out.push(("counts".to_string(), s.counts()));
    out
}

/// A byte count as people read it: `512.0 MiB (536870912 B)`.
pub fn human_bytes(v: &str) -> String {
    let Ok(n) = v.parse::<f64>() else {
        return v.to_string();
    };
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = n;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < units.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{} {} ({n} B)", fmt_sig(x, 4), units[u])
    }
}

/// The environment table: (property, value), sizes in bytes made readable.
pub fn environment_rows(s: &BundleSummary) -> Vec<Vec<String>> {
    s.environment
        .iter()
        .map(|(key, v)| {
            let v = if key == "memory_bytes" || key.ends_with(".size_bytes") {
                human_bytes(v)
            } else {
                v.clone()
            };
            vec![key.clone(), v]
        })
        .collect()
}

/// The points that did not complete: (point, status, reason).
pub fn point_status_rows(s: &BundleSummary) -> Vec<Vec<String>> {
    s.points
        .iter()
        .filter(|p| p.status != PointStatus::Ok)
        .map(|p| {
            vec![
                p.id.clone(),
                p.status.to_string(),
                p.reason.clone().unwrap_or_default(),
            ]
        })
        .collect()
}

/// Why each point stopped repeating: (point, stop).
pub fn stop_rows(s: &BundleSummary) -> Vec<Vec<String>> {
    s.points
        .iter()
        .filter_map(|p| p.stop.as_ref().map(|r| vec![p.id.clone(), r.clone()]))
        .collect()
}

/// The columns of the verdicts table in text (Markdown).
pub const CLAIM_HEADERS: [&str; 6] = [
    "claim",
    "tier",
    "here (95 % CI)",
    "post",
    "expected",
    "unit, replicates",
];

/// The measured number with its interval in words: `1.278 [0.9377, 1.999]`, `0.5
/// (no interval: …)`, or `—`.
pub fn here_text(v: &ClaimVerdict) -> String {
    match (v.measured, v.interval, &v.no_interval) {
        (Some(m), Some(i), _) => format!(
            "{} [{}, {}]",
            fmt_sig(m, 4),
            fmt_sig(i.lo, 4),
            fmt_sig(i.hi, 4)
        ),
        (Some(m), None, Some(why)) => format!("{} (no interval: {why})", fmt_sig(m, 4)),
        (Some(m), None, None) => fmt_sig(m, 4),
        (None, _, _) => "—".to_string(),
    }
}

/// The post's number, or `—`.
pub fn post_text(v: &ClaimVerdict) -> String {
    v.published
        .map_or_else(|| "—".to_string(), |p| fmt_sig(p, 4))
}

/// The unit of the samples and how many a side: `replicate, 3 a side`.
pub fn replication_text(v: &ClaimVerdict) -> String {
    v.replication.map_or_else(String::new, |r| {
        let l = r.label();
        l.strip_prefix("unit: ").map(str::to_string).unwrap_or(l)
    })
}

/// A row of the verdicts table in text.
pub fn claim_text_cells(v: &ClaimVerdict) -> Vec<String> {
    vec![
        v.name(),
        v.tier_label().to_string(),
        here_text(v),
        post_text(v),
        v.expected.clone(),
        replication_text(v),
    ]
}

/// The line above the verdicts table: the post's claims counted per tier.
pub fn claims_line(c: &ClaimsContent) -> String {
    match c {
        ClaimsContent::Checked {
            tiers,
            variants,
            counted_per,
            ..
        } => {
            let total: usize = tiers.iter().map(|(_, n)| n).sum();
            let parts: Vec<String> = tiers.iter().map(|(t, n)| format!("{n} {t}")).collect();
            let variants = match variants {
                0 => String::new(),
                1 => "; and 1 variant of fslab's, not counted".to_string(),
                n => format!("; and {n} variants of fslab's, not counted"),
            };
            let per = match counted_per {
                CountedPer::Claim => String::new(),
                other => format!(" (counted per {})", other.label()),
            };
            format!(
                "The post's {total} claim{}{per} by tier: {}{variants}.",
                if total == 1 { "" } else { "s" },
                parts.join(", ")
            )
        }
        ClaimsContent::Unchecked(why) => format!("The claims could not be checked: {why}"),
    }
}

fn opt(v: Option<f64>, sig: usize) -> String {
    v.map(|v| fmt_sig(v, sig)).unwrap_or_default()
}

pub const STATS_HEADERS: [&str; 15] = [
    "point",
    "unit",
    "n",
    "first",
    "first vs mean",
    "mean",
    "95% CI",
    "σ",
    "CV",
    "min",
    "median",
    "max",
    "outliers",
    "failed",
    "warm-up",
];

/// "first vs mean": the % difference, or "no steady state" (never +0.0 %).
fn first_vs_mean(r: &PointStatsRow) -> String {
    if r.no_steady_state {
        return "no steady state".to_string();
    }
    r.first_vs_mean_pct
        .map(|p| format!("{p:+.1}%"))
        .unwrap_or_default()
}

fn unit_cell(r: &PointStatsRow) -> String {
    match r.unit {
        Unit::Iteration => "iteration".to_string(),
        Unit::Replicate => format!("replicate (of {})", r.replicates),
    }
}

/// A row of the full statistics table (HTML).
pub fn stats_cells(r: &PointStatsRow) -> Vec<String> {
    vec![
        r.point_id.clone(),
        unit_cell(r),
        r.n.to_string(),
        opt(r.first, 4),
        first_vs_mean(r),
        opt(r.mean, 4),
        match (r.ci_low, r.ci_high) {
            (Some(lo), Some(hi)) => format!("{} – {}", fmt_sig(lo, 4), fmt_sig(hi, 4)),
            _ => String::new(),
        },
        opt(r.std, 3),
        r.cv_pct.map(|c| format!("{c:.1}%")).unwrap_or_default(),
        opt(r.min, 4),
        opt(r.median, 4),
        opt(r.max, 4),
        r.outliers.to_string(),
        r.n_failed.to_string(),
        r.n_warmup.to_string(),
    ]
}

/// The first column left, the numbers right.
pub fn stats_aligns(n: usize) -> Vec<Align> {
    let mut a = vec![Align::Right; n];
    a[0] = Align::Left;
    a
}

/// The narrower table for mail: about 80 columns.
pub const MAIL_HEADERS: [&str; 10] = [
    "point", "unit", "n", "mean", "±95% CI", "CV", "min", "max", "first", "vs mean",
];

/// A row of the narrower statistics table (Markdown).
pub fn mail_cells(r: &PointStatsRow) -> Vec<String> {
    vec![
        r.point_id.clone(),
        r.unit.name().to_string(),
        r.n.to_string(),
        opt(r.mean, 4),
        match (r.ci_low, r.ci_high) {
            (Some(lo), Some(hi)) => format!("±{}", fmt_sig((hi - lo) / 2.0, 3)),
            _ => String::new(),
        },
        r.cv_pct.map(|c| format!("{c:.1}%")).unwrap_or_default(),
        opt(r.min, 4),
        opt(r.max, 4),
        opt(r.first, 4),
        first_vs_mean(r),
    ]
}

/// The paragraph above the statistics tables.
pub fn stats_intro(w: Warmup) -> String {
    format!(
        "Steady state: {}. CI: Student t interval of the mean. Outliers: |modified z-score| > 3.5 (flagged, not dropped). A point whose iterations are all warm-up has no steady state.",
        w.describe()
    )
}

/// The unit(s) of a stats table in words.
fn unit_note(rows: &[PointStatsRow]) -> String {
    let replicate = rows.iter().any(|r| r.unit == Unit::Replicate);
    let iteration = rows.iter().any(|r| r.unit == Unit::Iteration);
    match (iteration, replicate) {
        (_, false) => "unit: iteration".to_string(),
        (false, true) => "unit: replicate (each replicate's steady-state iterations averaged; n counts replicates)".to_string(),
        (true, true) => "unit: replicate where a point has several replicates (n counts replicates), else iteration".to_string(),
    }
}

/// The note under a metric's heading: its unit and how outliers were scored.
pub fn stats_note(rows: &[PointStatsRow], resolution: &Resolution) -> String {
    format!(
        "{}; outliers among steady-state iterations, {}",
        unit_note(rows),
        resolution.describe()
    )
}

#[cfg(test)]
mod tests {
    use super::human_bytes;

    #[test]
    fn bytes_read_well() {
        assert_eq!(human_bytes("536870912"), "512.0 MiB (536870912 B)");
        assert_eq!(human_bytes("12"), "12 B");
        assert_eq!(human_bytes("x"), "x");
    }
}
