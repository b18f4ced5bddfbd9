//! The report's one gathering step: everything a report shows, computed once and in
//! one place, so that the renderers ([`super::html`], [`super::markdown`]) only
//! render. Each fact has one source: the bundle's summary
//! ([`crate::analysis::BundleSummary`]), the per-point statistics of each metric (the
//! chart of means draws the same rows), the claim verdicts of the experiment embedded
//! in the bundle, the comparison, and the charts with their frames computed
//! ([`super::charts`]).

use super::charts::{bundle_charts, ChartInputs};
use super::claims::{base_verdicts, claim_charts, claim_rows, expects, ClaimChart, ClaimRow};
use super::{ReportError, ReportOptions};
use crate::analysis::claims::{
    check_bundle, counted_per, post_claims, shared_lines, tier_counts, CountedPer,
};
use crate::analysis::{
    compare_runs, point_stats_rows, stats_frame, BundleSummary, CompareOptions, Comparison,
    PointStatsRow, Resolution, StatsOptions, Warmup,
};
use crate::plot::Chart;
use crate::store::Bundle;

/// The statistics of one metric.
#[derive(Debug, Clone)]
pub struct MetricStats {
    pub metric: String,
    /// One row per point, in plan order.
    pub rows: Vec<PointStatsRow>,
    /// The resolution used where the MAD is 0.
    pub resolution: Resolution,
}

/// The verdicts of the experiment's claims.
#[derive(Debug, Clone)]
pub enum ClaimsContent {
    Checked {
        /// (tier, count of the post's claims), every tier.
        tiers: Vec<(&'static str, usize)>,
        /// fslab's own variants of the claims (checked, not counted in `tiers`).
        variants: usize,
        /// What `tiers` counts: `claim`, or `claim and kernel` when the claims are
        /// checked once per kernel of a `kernel` axis (`analysis::claims::counted_per`).
        counted_per: CountedPer,
        /// What every verdict shares, said once (`analysis::claims::shared_lines`: the
        /// substitutions, the scale when it is common).
        shared: Vec<String>,
        /// One row per verdict (a per-kernel verdict is named `id @ kernel=K`), in the
        /// order the claims are written, the post's and fslab's variants mixed.
        rows: Vec<ClaimRow>,
        /// One chart per claim, in the order of `rows`.
        charts: Vec<ClaimChart>,
        /// Why the compared bundle's verdicts are not beside these, when they are not.
        base_note: Option<String>,
        /// The compared bundle (`Bundle::label`), when there is one.
        base_label: Option<String>,
    },
    /// The experiment has claims, but they could not be checked: why.
    Unchecked(String),
}

/// Everything the report shows, computed once for every format.
#[derive(Debug, Clone)]
pub struct Content {
    pub summary: BundleSummary,
    /// The warm-up rule of the statistics.
    pub warmup: Warmup,
    /// The report's metric first, then `wall_s`, `user_s`, `sys_s` where present.
    pub stats: Vec<MetricStats>,
    /// `None` when the experiment has no claims (drafts do not count).
    pub claims: Option<ClaimsContent>,
    pub comparison: Option<Comparison>,
    /// (caption, chart) — rendered only in HTML.
    pub charts: Vec<(String, Chart)>,
}

impl Content {
    /// Gather the report of `bundle`, compared with `other` (the base) when given.
    pub fn gather(
        bundle: &Bundle,
        other: Option<&Bundle>,
        opts: &ReportOptions,
    ) -> Result<Content, ReportError> {
        let m = bundle.manifest();
        let runs = bundle.runs()?;
        let summary = BundleSummary::new(bundle, &runs)?;
        let mut metrics = vec![opts.metric.clone()];
        for extra in ["wall_s", "user_s", "sys_s"] {
            if !metrics.iter().any(|m| m == extra) && runs.column(extra).is_ok() {
                metrics.push(extra.to_string());
            }
        }
        let stats_options = |metric: &str| StatsOptions {
            metric: metric.to_string(),
            warmup: opts.warmup,
            resolution: Some(Resolution::for_metric(metric, Some(m))),
            ..StatsOptions::default()
        };
        let mut stats = Vec::new();
        for metric in &metrics {
            let sopts = stats_options(metric);
            stats.push(MetricStats {
                metric: metric.clone(),
                rows: point_stats_rows(&runs, &sopts)?,
                resolution: sopts.resolution(),
            });
        }
        let other_runs = other.map(Bundle::runs).transpose()?;
        let comparison = match (other, &other_runs) {
            (Some(o), Some(o_runs)) => {
                let mut c = compare_runs(
                    o_runs,
                    &runs,
                    Some(o.manifest()),
                    Some(m),
                    &CompareOptions {
                        metric: opts.metric.clone(),
                        warmup: opts.warmup,
                        alpha: opts.alpha,
                        threshold_pct: opts.threshold_pct,
                    },
                )?;
                c.base_label = o.describe();
                c.new_label = bundle.describe();
                Some(c)
            }
            _ => None,
        };
        // The chart of means draws the statistics of the report's metric computed above.
        let sopts = stats_options(&opts.metric);
        let charts = bundle_charts(&ChartInputs {
            bundle,
            runs: &runs,
            stats: &stats_frame(&stats[0].rows)?,
            options: &sopts,
            other: match (other, &other_runs) {
                (Some(o), Some(r)) => Some((o, r)),
                _ => None,
            },
        })?;
        Ok(Content {
            summary,
            warmup: opts.warmup,
            stats,
            claims: claims(bundle, other),
            comparison,
            charts,
        })
    }
}

/// The verdicts of the claims of the experiment embedded in the bundle, beside those of
/// the bundle compared with; `None` without claims. Claims that cannot be checked (an
/// experiment file fslab no longer reads) are said so, not left out.
fn claims(bundle: &Bundle, other: Option<&Bundle>) -> Option<ClaimsContent> {
    match check_bundle(bundle) {
        Ok(v) if v.is_empty() => None,
        Ok(v) => {
            let (base, base_note) = base_verdicts(bundle, other);
            let tiers = tier_counts(&v).into_iter().collect();
            let variants = v.len() - post_claims(&v).count();
            let counted_per = counted_per(&v);
            let shared = shared_lines(&v);
            let rows = claim_rows(v, &expects(bundle), &base);
            let charts = claim_charts(&rows, &bundle.label(), other.map(Bundle::label).as_deref());
            Some(ClaimsContent::Checked {
                tiers,
                variants,
                counted_per,
                shared,
                rows,
                charts,
                base_note,
                base_label: other.map(Bundle::label),
            })
        }
        Err(e) => {
            let yaml = &bundle.manifest().experiment.yaml;
            yaml.lines()
                .any(|l| l.starts_with("claims:"))
                .then(|| ClaimsContent::Unchecked(e.to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ClaimsContent, Content, CountedPer};
    use crate::analysis::{BundleSummary, Warmup};
    use crate::report::claims::tests::blank_verdict;
    use crate::report::claims::ClaimRow;
    use crate::report::{html, markdown};
    use crate::store::Manifest;
    use polars::prelude::DataFrame;

    pub(crate) fn content(claims: Option<ClaimsContent>) -> Content {
        Content {
            summary: BundleSummary::of_manifest(&Manifest::default(), &DataFrame::empty()).unwrap(),
            warmup: Warmup::default(),
            stats: Vec::new(),
            claims,
            comparison: None,
            charts: Vec::new(),
        }
    }

    /// Issue 31: a reader came for the claims; the tier counts and the verdicts come
    /// before the environment, in both formats.
    #[test]
    fn the_verdicts_come_before_the_environment() {
        let mut v = blank_verdict();
        v.id = "c1".into();
        let checked = ClaimsContent::Checked {
            tiers: vec![("reproduced", 1), ("inconclusive", 2)],
            variants: 1,
            counted_per: CountedPer::Claim,
            shared: Vec::new(),
            rows: vec![ClaimRow {
                verdict: v,
                expect: None,
                base: None,
            }],
            charts: Vec::new(),
            base_note: None,
            base_label: None,
        };
        let mut c = content(Some(checked));
        c.summary.environment = vec![("kernel".into(), "6.18".into())];
        let md = markdown::render(&c);
        let at = |s: &str, what: &str| s.find(what).unwrap_or_else(|| panic!("{what} in {s}"));
        assert!(at(&md, "## Claims") < at(&md, "3 claims by tier: 1 reproduced, 2 inconclusive"));
        assert!(at(&md, "fslab's, not counted") < at(&md, "c1"));
        assert!(at(&md, "c1") < at(&md, "## Environment"), "{md}");
        let h = html::render(&c).unwrap();
        assert!(at(&h, "<h2>Claims") < at(&h, "3 claims by tier"));
        assert!(at(&h, "c1") < at(&h, "<h2>Environment"), "{h}");
    }

    /// Without claims there is no claims section; claims that cannot be checked say so.
    #[test]
    fn no_claims_no_section_and_unchecked_claims_say_why() {
        let md = markdown::render(&content(None));
        assert!(!md.contains("## Claims"), "{md}");
        let md = markdown::render(&content(Some(ClaimsContent::Unchecked("bad check".into()))));
        assert!(
            md.contains("The claims could not be checked: bad check"),
            "{md}"
        );
    }

    /// A real rerun bundle (seed 001): each part gathered once and consistent with the
    /// others: the chart of means draws the table's means, the claims are counted per
    /// tier, the bundle's tables bring their charts.
    #[test]
    fn gathering_a_real_bundle() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/reruns/001");
        let bundle = crate::store::Bundle::open(&dir).unwrap();
        let c = Content::gather(&bundle, None, &crate::report::ReportOptions::default()).unwrap();
        let metrics: Vec<&str> = c.stats.iter().map(|m| m.metric.as_str()).collect();
        assert_eq!(metrics, ["wall_s", "user_s", "sys_s"]);
        let crate::plot::ChartData::MeanCi { points, .. } = &c.charts[0].1.data else {
            panic!("{:?}", c.charts[0].0)
        };
        let table: Vec<f64> = c.stats[0].rows.iter().filter_map(|r| r.mean).collect();
        let drawn: Vec<f64> = points.iter().map(|p| p.mean).collect();
        assert_eq!(drawn, table);
        let Some(ClaimsContent::Checked {
            tiers,
            rows,
            charts,
            ..
        }) = &c.claims
        else {
            panic!("{:?}", c.claims)
        };
        let counted: usize = tiers.iter().map(|(_, n)| n).sum();
        assert!(counted > 0 && counted <= rows.len());
        // One chart (or why none) per claim, each claim once.
        let mut ids: Vec<&str> = rows.iter().map(|r| r.verdict.id.as_str()).collect();
        ids.dedup();
        let charted: Vec<&str> = charts.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(charted, ids);
        let captions: Vec<&str> = c.charts.iter().map(|(t, _)| t.as_str()).collect();
        assert!(
            captions.iter().any(|t| t.starts_with("Extent layout")),
            "{captions:?}"
        );
        assert!(
            captions.iter().any(|t| t.starts_with("Block I/O of")),
            "{captions:?}"
        );
        assert_eq!(
            c.summary.run_tally.of("ok"),
            bundle.runs().unwrap().height()
        );
    }

    /// The summary's counts head the report.
    #[test]
    fn the_counts_are_under_the_title() {
        let md = markdown::render(&content(None));
        assert!(md.contains("- counts: 0 points, 0 runs"), "{md}");
    }
}
