//! The claims' summary (`super::summary`) for people: a Markdown table (the top of
//! REPRODUCTION.md) and aligned text (`fslab claims --summary`), one row per claim, the
//! reasons in a few words (at most [`WHY_MAX`] characters).

use super::summary::{Answer, Need, Why};
use super::verdict::{Grounds, Inapplicable, TrendGap};
use super::words::num;
use crate::analysis::interval::NoInterval;
use crate::analysis::power::EffectScale;
use crate::analysis::tiers::{counts_line, Decided, Side, Tier};

/// The longest reason a summary row gives, in characters.
pub const WHY_MAX: usize = 120;

/// The rule that picks the deciding evidence, in one sentence.
pub const RULE: &str = "Which evidence decides (`src/analysis/claims/summary.rs`): a measured number over a mechanism shown absent, over one not shown, over nothing; then the published scale over a trend over several scales, over a reduced scale; then more replicates a side; then the post's reading of the workload (`post_reading:`) over the other; then a section with an independent rerun; then the first section. The tier a section gives never chooses.";

fn need_words(n: &Need) -> String {
    match n {
        Need::Ext3Allocator => "ext3's own allocator".into(),
        Need::Contrast(sel) => format!("a contrast with {sel}"),
        Need::AttrForksAtLeast(m) => format!("≥ {m} inodes with attr forks out of the inode"),
        Need::AttrForksAtMost(0) => "no inode with an attr fork extent".into(),
        Need::AttrForksAtMost(m) => format!("≤ {m} inodes with an attr fork extent"),
        Need::TruncatePath(p) => format!("the `{}` truncate path", p.name()),
        Need::TruncatePaths {
            numerator,
            denominator,
        } => format!(
            "the `{}` and `{}` truncate paths",
            numerator.name(),
            denominator.name()
        ),
        Need::FlushLatency => "flush latency on a real medium".into(),
    }
}

fn side_words(s: Side) -> &'static str {
    match s {
        Side::Inside => "is",
        Side::Outside => "violates",
        Side::Straddles => "straddles",
    }
}

/// An answer's reason in a few words.
pub fn why_words(a: &Answer) -> String {
    let expected = &a.expected;
    match &a.why {
        Why::RerunsDisagree { first, second } => {
            format!("reruns disagree: {first}; other rerun: {second}")
        }
        Why::ReducedScaleRerunsDisagree => {
            "below the published scale; at their own scale the two reruns disagree".into()
        }
        Why::ReducedScale { at_this_scale } => match at_this_scale {
            Some(t) => format!(
                "below the published scale, no trend decides it; at this scale: {}",
                t.label()
            ),
            None => "below the published scale, no trend decides it".into(),
        },
        Why::Mechanism { absent, needs } => {
            let needs = if needs.is_empty() {
                "what its `needs:` names".to_string()
            } else {
                needs.iter().map(need_words).collect::<Vec<_>>().join(" and ")
            };
            if *absent {
                format!("mechanism absent here: it needs {needs}")
            } else {
                format!("mechanism not shown: the bundle cannot tell whether it had {needs}")
            }
        }
        Why::Inapplicable(i) => match i {
            Inapplicable::NotRun => "the points it selects did not run here".into(),
            Inapplicable::NoData => "the bundle has no rows that give its number".into(),
            Inapplicable::Untestable => "untestable on this setup (the section says why)".into(),
            Inapplicable::NotMeasured => "not measured by this experiment (`not_measured:`)".into(),
            Inapplicable::Unchecked => "not checked: the claim has no readable `check:`".into(),
            Inapplicable::ReducedScale => "below the published scale".into(),
            Inapplicable::MechanismAbsent => "mechanism absent here".into(),
            Inapplicable::MechanismUnshown => "mechanism not shown".into(),
        },
        Why::Grounds(g) => match g {
            Grounds::Decided(d) => match d {
                Decided::Interval(Side::Straddles) => {
                    format!("the 95 % interval straddles {expected}")
                }
                Decided::Interval(s) => {
                    format!("the whole 95 % interval {} {expected}", side_words(*s))
                }
                Decided::Point(s) => format!(
                    "one reading of a layout (no interval by nature) {} {expected}",
                    side_words(*s)
                ),
                Decided::IterationsOnly { need } => format!(
                    "an interval over one filesystem's iterations never decides; {need} replicates a side would"
                ),
                Decided::TooFewReplicates { have, need } => {
                    format!("{have} replicates a side; a decision needs {need}")
                }
                Decided::NoInterval(NoInterval::Unbounded) => {
                    "no interval: the denominator is not clearly away from 0".into()
                }
                Decided::NoInterval(NoInterval::TooFewSamples { .. }) => {
                    "no interval: too few samples".into()
                }
                Decided::NoInterval(NoInterval::DeterministicLayout) => {
                    "no interval: a layout read once".into()
                }
            },
            Grounds::Incomplete => "a selected point failed or gave no rows".into(),
            Grounds::Trend {
                var,
                published,
                predicted,
                side,
            } => format!(
                "every scale agrees with the trend: at {var}={} it gives [{}, {}], which {} {expected}",
                num(*published),
                num(predicted.lo),
                num(predicted.hi),
                side_words(*side)
            ),
            Grounds::TrendUndecided(gap) => match gap {
                TrendGap::Straddles => {
                    format!("the trend over the scales, at the published one, straddles {expected}")
                }
                TrendGap::MissingIntervals => "the scale check lacks an interval at some scale".into(),
                TrendGap::ScalesDisagree => {
                    "the measured scales do not all give the tier the trend predicts".into()
                }
            },
        },
        Why::Unrecorded => "see the section".into(),
    }
}

/// The number here with its interval (`1.265 [1.197, 1.338]`), the number alone, or `—`.
pub fn here_words(a: &Answer) -> String {
    match (a.measured, a.interval) {
        (Some(m), Some(i)) => format!("{} [{}, {}]", num(m), num(i.lo), num(i.hi)),
        (Some(m), None) => format!("{} (no interval)", num(m)),
        (None, _) => "—".into(),
    }
}

/// `§5 000-as-run-first-runs`, with the kernel of a per-kernel verdict.
pub fn decided_by(a: &Answer, code: bool) -> String {
    let q = if code { "`" } else { "" };
    let mut s = format!("§{} {q}{}{q}", a.section, a.bundle);
    if let Some(k) = &a.kernel {
        s.push_str(&format!(", kernel={k}"));
    }
    s
}

/// The tally under the table: the post's claims by tier, and how many variants.
fn tally(answers: &[Answer]) -> String {
    let tiers: Vec<Tier> = answers
        .iter()
        .filter(|a| !a.variant)
        .map(|a| a.tier)
        .collect();
    let variants = answers.iter().filter(|a| a.variant).count();
    let posts = experiments(answers).len();
    let mut s = format!(
        "{} (one answer per claim of {posts} post{})",
        counts_line(&tiers),
        if posts == 1 { "" } else { "s" }
    );
    if variants > 0 {
        s.push_str(&format!(
            "; and {variants} variant{} of fslab's own",
            if variants == 1 { "" } else { "s" }
        ));
    }
    s
}

fn experiments(answers: &[Answer]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for a in answers {
        if !out.contains(&a.experiment.as_str()) {
            out.push(&a.experiment);
        }
    }
    out
}

/// The readings the answers assume, each once, in the order they first appear: a row
/// names its reading by its place here (`R1`, `R2`), the words are said once below.
fn readings(answers: &[Answer]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for r in answers.iter().filter_map(|a| a.reading.as_deref()) {
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

fn reading_tag(a: &Answer, all: &[&str]) -> String {
    a.reading
        .as_deref()
        .and_then(|r| all.iter().position(|x| *x == r))
        .map_or_else(|| "—".into(), |i| format!("R{}", i + 1))
}

fn reading_legend(all: &[&str]) -> String {
    all.iter()
        .enumerate()
        .map(|(i, r)| format!("R{}: read as {r}\n", i + 1))
        .collect()
}

/// What the deciding design could detect at 90 % power (`≥ 1.05×`); `unknown` for a
/// number with no interval over replicates to tell (its section says why), `—` without a
/// number.
pub fn detects_words(a: &Answer) -> String {
    match (&a.power, a.tier) {
        // A difference's unit can be long (`slope of ln(wall_s) on ln(rtextsize)`): the
        // section names it.
        (Some(p), _) if p.scale == EffectScale::Difference => format!("Δ {}", p.effect("")),
        (Some(p), _) => p.effect(&a.unit),
        (None, Tier::NotApplicable) => "—".into(),
        (None, _) => "unknown".into(),
    }
}

/// The cells of each row: experiment (on its first row only), claim, published, here,
/// tier, what it detects, decided by, reading, why.
fn rows<'a>(answers: &'a [&'a Answer], all: &[&str], code: bool) -> Vec<[String; COLUMNS]> {
    let mut last: Option<&str> = None;
    answers
        .iter()
        .map(|a| {
            let exp = if last == Some(a.experiment.as_str()) {
                String::new()
            } else {
                a.experiment.clone()
            };
            last = Some(&a.experiment);
            [
                exp,
                a.id.clone(),
                a.published.map_or_else(|| "—".into(), num),
                here_words(a),
                a.tier_label.clone(),
                detects_words(a),
                decided_by(a, code),
                reading_tag(a, all),
                why_words(a),
            ]
        })
        .collect()
}

const COLUMNS: usize = 9;

const HEAD: [&str; COLUMNS] = [
    "experiment",
    "claim",
    "published",
    "here",
    "tier",
    "detects (90 % power)",
    "decided by",
    "reading",
    "why",
];

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The summary as a Markdown section (`## Summary…`), for the top of REPRODUCTION.md.
pub fn summary_md(answers: &[Answer]) -> String {
    let (post, variants): (Vec<&Answer>, Vec<&Answer>) = answers.iter().partition(|a| !a.variant);
    let all = readings(answers);
    let mut out = String::from("## Summary: one answer per claim\n\n");
    out.push_str(
        "One row per claim of each post, over every section below: the post's number, the number here from the evidence that decides (its section and bundle), the tier that section supports and why in a few words (the section has the details). ",
    );
    out.push_str(RULE);
    out.push_str("\n\n");
    out.push_str(&format!("| {} |\n", HEAD.join(" | ")));
    out.push_str(&format!("|{}\n", "---|".repeat(HEAD.len())));
    let line = |r: &[String; COLUMNS]| {
        format!(
            "| {} |\n",
            r.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | ")
        )
    };
    for r in rows(&post, &all, true) {
        out.push_str(&line(&r));
    }
    if !variants.is_empty() {
        out.push_str(&format!(
            "| *fslab's own variants (no quote from the post; not counted)* |{}\n",
            " |".repeat(HEAD.len() - 1)
        ));
        for r in rows(&variants, &all, true) {
            out.push_str(&line(&r));
        }
    }
    out.push_str(&format!("\n{}\n", tally(answers)));
    out.push_str(&reading_legend(&all));
    out
}

/// The summary as aligned text for a terminal (`fslab claims --summary`).
pub fn summary_text(answers: &[Answer]) -> String {
    let (post, variants): (Vec<&Answer>, Vec<&Answer>) = answers.iter().partition(|a| !a.variant);
    let all = readings(answers);
    let post_rows = rows(&post, &all, false);
    let variant_rows = rows(&variants, &all, false);
    let head: [String; COLUMNS] = HEAD.map(String::from);
    let mut width = [0usize; COLUMNS];
    for r in std::iter::once(&head)
        .chain(&post_rows)
        .chain(&variant_rows)
    {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |r: &[String; COLUMNS]| {
        let mut s = String::new();
        for (i, c) in r.iter().enumerate() {
            s.push_str(c);
            if i + 1 < r.len() {
                s.push_str(&" ".repeat(width[i] - c.chars().count() + 2));
            }
        }
        format!("{}\n", s.trim_end())
    };
    let mut out = String::from(
        "One answer per claim over these bundles (§N: the N-th section of `fslab claims --md` over the same bundles, which has the details).\n",
    );
    out.push_str(RULE);
    out.push_str("\n\n");
    out.push_str(&line(&head));
    for r in &post_rows {
        out.push_str(&line(r));
    }
    if !variant_rows.is_empty() {
        out.push_str("\nfslab's own variants (no quote from the post; not counted):\n");
        for r in &variant_rows {
            out.push_str(&line(r));
        }
    }
    out.push_str(&format!("\n{}\n", tally(answers)));
    out.push_str(&reading_legend(&all));
    out
}
