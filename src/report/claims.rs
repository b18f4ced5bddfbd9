//! The claims of a report, gathered once: each verdict (`analysis::claims`) with the
//! band its claim expects as numbers (the `expect:` of its check, read from the
//! experiment embedded in the bundle) and the same verdict in the bundle compared with;
//! and one chart per claim, its numbers against the band and the post's number.

use crate::analysis::claims::{ClaimVerdict, Expect};
use crate::plot::{Chart, ClaimEstimate, ClaimPlot, PlotError};
use crate::spec::Experiment;
use crate::store::Bundle;
use std::collections::HashMap;

/// One verdict of the report's bundle, with what its rendering needs beside it.
#[derive(Debug, Clone)]
pub struct ClaimRow {
    pub verdict: ClaimVerdict,
    /// The claim's `expect:` bounds (None when its check cannot be read).
    pub expect: Option<Expect>,
    /// The verdict of the same name in the bundle compared with, when it has one.
    pub base: Option<ClaimVerdict>,
}

/// The chart of one claim (all its verdicts: one per kernel, and the base's), or why
/// it has none.
#[derive(Debug, Clone)]
pub struct ClaimChart {
    pub id: String,
    pub caption: String,
    pub chart: Result<Chart, NoChart>,
}

/// Why a claim has no chart.
#[derive(Debug, Clone, thiserror::Error)]
pub enum NoChart {
    /// Neither the bundle nor the post has a number for the claim.
    #[error("no chart: neither this bundle nor the post has a number for it")]
    NoNumber,
    /// The chart could not be drawn (the plotting error, as text).
    #[error("{0}")]
    Draw(String),
}

/// The `expect:` of every claim of the bundle's experiment whose check can be read, by
/// claim id. An experiment fslab can no longer read gives none (its verdicts say why).
pub fn expects(bundle: &Bundle) -> HashMap<String, Expect> {
    let Ok(exp) = Experiment::from_str_named(
        &bundle.manifest().experiment.yaml,
        &bundle.path().join("experiment.yaml").display().to_string(),
    ) else {
        return HashMap::new();
    };
    exp.def
        .claims
        .iter()
        .filter_map(|c| {
            let check = c.check.as_ref()?.read()?;
            Some((c.id.clone(), check.expect().clone()))
        })
        .collect()
}

/// The rows of the report: each verdict of `verdicts`, with its claim's band and the
/// verdict of the same name among `base` (the compared bundle's, when it ran the same
/// experiment).
pub fn claim_rows(
    verdicts: Vec<ClaimVerdict>,
    expects: &HashMap<String, Expect>,
    base: &[ClaimVerdict],
) -> Vec<ClaimRow> {
    verdicts
        .into_iter()
        .map(|v| ClaimRow {
            expect: expects.get(&v.id).cloned(),
            base: base.iter().find(|b| b.name() == v.name()).cloned(),
            verdict: v,
        })
        .collect()
}

/// The parts of the scale note (`; `-separated) that every verdict shares, said once
/// above the table; each verdict then says only the rest of its own
/// ([`own_scale`]).
pub fn common_scale(rows: &[ClaimRow]) -> Vec<&str> {
    let mut notes = rows
        .iter()
        .map(|r| r.verdict.scale.as_str())
        .filter(|s| !s.is_empty());
    let Some(first) = notes.next() else {
        return Vec::new();
    };
    let rest: Vec<Vec<&str>> = notes.map(|n| n.split("; ").collect()).collect();
    first
        .split("; ")
        .filter(|part| rest.iter().all(|r| r.contains(part)))
        .collect()
}

/// The parts of a verdict's scale note that are not in `common`, joined again.
pub fn own_scale(v: &ClaimVerdict, common: &[&str]) -> String {
    v.scale
        .split("; ")
        .filter(|p| !p.is_empty() && !common.contains(p))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A row of a claim chart from one verdict.
fn estimate(label: String, v: &ClaimVerdict) -> ClaimEstimate {
    let note = match (v.measured, &v.no_interval) {
        (None, _) => Some(v.tier_label().to_string()),
        (Some(_), Some(why)) => Some(why.clone()),
        _ => None,
    };
    ClaimEstimate {
        label,
        value: v.measured,
        interval: v.interval.map(|i| (i.lo, i.hi)),
        note,
    }
}

/// The charts of the claims, one per claim id in the order of the verdicts: a row per
/// verdict of that claim (one per kernel when split), each followed by the base's of
/// the same name; the post's number and the band marked. `here` and `base` label the
/// two bundles.
pub fn claim_charts(rows: &[ClaimRow], here: &str, base: Option<&str>) -> Vec<ClaimChart> {
    let mut ids: Vec<&str> = Vec::new();
    for r in rows {
        if !ids.contains(&r.verdict.id.as_str()) {
            ids.push(&r.verdict.id);
        }
    }
    ids.into_iter()
        .map(|id| {
            let of: Vec<&ClaimRow> = rows.iter().filter(|r| r.verdict.id == id).collect();
            let first = &of[0].verdict;
            let mut estimates = Vec::new();
            for r in &of {
                let kernel = r
                    .verdict
                    .kernel
                    .as_ref()
                    .map(|k| format!("kernel={k} · "))
                    .unwrap_or_default();
                estimates.push(estimate(format!("{kernel}{here}"), &r.verdict));
                if let (Some(b), Some(label)) = (&r.base, base) {
                    estimates.push(estimate(format!("{kernel}{label} (base)"), b));
                }
            }
            let expect = of[0].expect.clone().unwrap_or_default();
            let x_label = match (first.kind.as_str(), first.unit.as_str()) {
                ("", _) => "value".to_string(),
                (kind, "") => kind.replace('_', " "),
                (kind, unit) => format!("{} ({unit})", kind.replace('_', " ")),
            };
            let plot = ClaimPlot {
                x_label,
                expect: (expect.min, expect.max),
                published: first.published,
                rows: estimates,
            };
            let chart = Chart::claim(id, plot).map_err(|e| match e {
                PlotError::Empty(_) => NoChart::NoNumber,
                e => NoChart::Draw(e.to_string()),
            });
            ClaimChart {
                id: id.to_string(),
                caption: first.text.clone(),
                chart,
            }
        })
        .collect()
}

/// The verdicts of the bundle compared with, and what to say when there are none to
/// show beside this bundle's: it ran another experiment, or its claims could not be
/// checked.
pub fn base_verdicts(
    bundle: &Bundle,
    base: Option<&Bundle>,
) -> (Vec<ClaimVerdict>, Option<String>) {
    let Some(b) = base else {
        return (Vec::new(), None);
    };
    let (here, there) = (
        &bundle.manifest().experiment.id,
        &b.manifest().experiment.id,
    );
    if here != there {
        return (
            Vec::new(),
            Some(format!(
                "the base ({}) ran experiment {there}, not {here}: its verdicts are not shown beside these",
                b.label()
            )),
        );
    }
    match crate::analysis::claims::check_bundle(b) {
        Ok(v) => (v, None),
        Err(e) => (
            Vec::new(),
            Some(format!(
                "the base's claims ({}) could not be checked: {e}",
                b.label()
            )),
        ),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::{claim_charts, claim_rows, common_scale, own_scale};
    use crate::analysis::claims::{ClaimVerdict, Expect, ScaleStanding};
    use crate::analysis::tiers::Tier;
    use std::collections::HashMap;

    /// A verdict with nothing in it, for the renderers' tests to fill.
    pub(crate) fn blank_verdict() -> ClaimVerdict {
        ClaimVerdict {
            id: "c".into(),
            kernel: None,
            text: "a claim".into(),
            quote: Some("q".into()),
            variant: false,
            kind: "ratio".into(),
            tier: Tier::Inconclusive,
            not_applicable: None,
            reason: String::new(),
            measured: None,
            published: None,
            expected: String::new(),
            unit: "x".into(),
            interval: None,
            no_interval: None,
            replication: None,
            scale: String::new(),
            at_this_scale: None,
            recipe: String::new(),
            details: Vec::new(),
            substitutions: Vec::new(),
            note: None,
            power: None,
            reading: None,
            sequential: None,
            grounds: None,
            scale_standing: ScaleStanding::Published,
        }
    }

    /// One chart per claim: a claim split by kernel is one chart with a row per kernel,
    /// each followed by the base's row of the same name; the band comes from `expect`.
    #[test]
    fn one_chart_per_claim_with_a_row_per_verdict() {
        let mut a = blank_verdict();
        a.id = "grows".into();
        a.kernel = Some("k1".into());
        a.measured = Some(2.0);
        a.published = Some(3.0);
        let mut b = a.clone();
        b.kernel = Some("k2".into());
        let mut other = blank_verdict();
        other.id = "flat".into();
        let expects = HashMap::from([(
            "grows".to_string(),
            Expect {
                min: Some(1.5),
                max: None,
            },
        )]);
        let base = vec![a.clone()];
        let rows = claim_rows(vec![a, b, other], &expects, &base);
        assert!(rows[0].base.is_some() && rows[1].base.is_none());
        let charts = claim_charts(&rows, "here", Some("there"));
        assert_eq!(charts.len(), 2);
        let crate::plot::ChartData::Claim(p) = &charts[0].chart.as_ref().unwrap().data else {
            panic!("{:?}", charts[0])
        };
        let labels: Vec<&str> = p.rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "kernel=k1 · here",
                "kernel=k1 · there (base)",
                "kernel=k2 · here"
            ]
        );
        assert_eq!(p.expect, (Some(1.5), None));
        assert_eq!(p.published, Some(3.0));
        // Nothing measured and nothing published: no chart, and it says why.
        assert!(matches!(charts[1].chart, Err(super::NoChart::NoNumber)));
        assert!(common_scale(&rows).is_empty());
    }

    /// What every scale note shares is said once; a verdict keeps the rest.
    #[test]
    fn the_common_part_of_the_scale_is_said_once() {
        let mut a = blank_verdict();
        a.scale = "at or above the published scale; `runs` is not compared".into();
        let mut b = blank_verdict();
        b.scale = "at or above the published scale".into();
        let rows = claim_rows(vec![a.clone(), b.clone()], &HashMap::new(), &[]);
        let common = common_scale(&rows);
        assert_eq!(common, ["at or above the published scale"]);
        assert_eq!(own_scale(&a, &common), "`runs` is not compared");
        assert_eq!(own_scale(&b, &common), "");
    }
}
