//! Verdicts for people and frames.

use super::*;

/// A number for people: 4 significant digits, no trailing zeros after the point.
pub(super) fn num(v: f64) -> String {
    let s = crate::analysis::fmt_sig(v, 4);
    if s.contains('.') && !s.contains('e') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// One row per claim: `claim`, `kind`, `verdict`, `measured`, `published`, `expected`,
/// `unit`, `reason`, `text`, `details`.
pub fn verdicts_frame(v: &[ClaimVerdict]) -> PolarsResult<DataFrame> {
    DataFrame::new_infer_height(vec![
        Column::new(
            "claim".into(),
            v.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "kind".into(),
            v.iter().map(|c| c.kind.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "verdict".into(),
            v.iter().map(|c| c.verdict.label()).collect::<Vec<_>>(),
        ),
        Column::new(
            "measured".into(),
            v.iter().map(|c| c.measured).collect::<Vec<_>>(),
        ),
        Column::new(
            "published".into(),
            v.iter().map(|c| c.published).collect::<Vec<_>>(),
        ),
        Column::new(
            "expected".into(),
            v.iter().map(|c| c.expected.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "unit".into(),
            v.iter().map(|c| c.unit.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "reason".into(),
            v.iter().map(|c| c.reason.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "text".into(),
            v.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "details".into(),
            v.iter().map(|c| c.details.join("; ")).collect::<Vec<_>>(),
        ),
        Column::new(
            "tier".into(),
            v.iter().map(|c| c.tier.label()).collect::<Vec<_>>(),
        ),
        Column::new(
            "tier_reason".into(),
            v.iter().map(|c| c.tier_reason.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "interval_lo".into(),
            v.iter()
                .map(|c| c.interval.map(|i| i.lo))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "interval_hi".into(),
            v.iter()
                .map(|c| c.interval.map(|i| i.hi))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "no_interval".into(),
            v.iter()
                .map(|c| c.no_interval.as_deref())
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "substitutions".into(),
            v.iter()
                .map(|c| c.substitutions.join("; "))
                .collect::<Vec<_>>(),
        ),
    ])
}

/// How many claims are in each tier, every tier listed (in [`Tier::ALL`] order).
pub fn tier_counts(v: &[ClaimVerdict]) -> IndexMap<&'static str, usize> {
    Tier::ALL
        .iter()
        .map(|t| (t.label(), v.iter().filter(|c| c.tier == *t).count()))
        .collect()
}

/// One row per tier: `tier`, `claims` (the count), every tier listed.
pub fn tier_counts_frame(v: &[ClaimVerdict]) -> PolarsResult<DataFrame> {
    let counts = tier_counts(v);
    DataFrame::new_infer_height(vec![
        Column::new("tier".into(), counts.keys().copied().collect::<Vec<_>>()),
        Column::new(
            "claims".into(),
            counts.values().map(|n| *n as u32).collect::<Vec<_>>(),
        ),
    ])
}

/// `fslab claims --json`: the verdicts and the count per tier.
#[derive(Debug, Serialize)]
pub struct Report<'a> {
    pub claims: &'a [ClaimVerdict],
    /// Tier label → number of claims, every tier listed.
    pub tiers: IndexMap<&'static str, usize>,
}

impl<'a> Report<'a> {
    pub fn new(claims: &'a [ClaimVerdict]) -> Report<'a> {
        Report {
            claims,
            tiers: tier_counts(claims),
        }
    }
}

/// The verdicts as text for a terminal.
pub fn render(v: &[ClaimVerdict]) -> String {
    let mut out = String::new();
    for c in v {
        let show = |x: Option<f64>| x.map_or_else(|| "—".to_string(), num);
        out.push_str(&format!(
            "{} — {}\n",
            c.id,
            c.verdict.label().to_uppercase()
        ));
        out.push_str(&format!("  claim:     {}\n", c.text));
        if !c.kind.is_empty() {
            out.push_str(&format!(
                "  measured:  {}   published: {}   expected: {}   ({}, {})\n",
                show(c.measured),
                show(c.published),
                c.expected,
                c.kind,
                c.unit
            ));
        }
        out.push_str(&format!("  why:       {}\n", c.reason));
        out.push_str(&format!(
            "  tier:      {} — {}\n",
            c.tier.label(),
            c.tier_reason
        ));
        for d in &c.details {
            out.push_str(&format!("             · {d}\n"));
        }
        out.push('\n');
    }
    let count = |w: Verdict| v.iter().filter(|c| c.verdict == w).count();
    out.push_str(&format!(
        "{} claims: {} reproduced, {} not reproduced, {} not applicable\n",
        v.len(),
        count(Verdict::Reproduced),
        count(Verdict::NotReproduced),
        count(Verdict::NotApplicable)
    ));
    let tiers: Vec<Tier> = v.iter().map(|c| c.tier).collect();
    out.push_str(&crate::analysis::tiers::counts_line(&tiers));
    out.push('\n');
    out
}
