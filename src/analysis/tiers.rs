//! Verdict tiers that a reviewer accepts (issue 10, item 2):
//! `reproduced`, `reproduced with substitutes`, `not reproduced`, `inconclusive`,
//! `not applicable`.
//!
//! - `reproduced` needs the whole 95 % interval of the measured number inside `expect`;
//!   `not reproduced` needs the whole interval outside it; anything else is
//!   `inconclusive`, shown with its interval.
//! - The samples are replicates (fresh filesystems): an interval over the iterations of
//!   one filesystem never decides, and fewer replicates a side than the minimum
//!   (default 3) is `inconclusive`.
//! - Any substitution (a stand-in workload, ext3 mounted by the ext4 driver, another
//!   medium than the post's: a disk model or a loop device on an image file where the
//!   post names its storage) gives at best `reproduced with substitutes`, and each
//!   substitution is named.
//! - A number with no interval by its nature (a block layout read once) decides by
//!   itself, and the reason says there is no interval and why ([`decide_point`]).

use super::claims::{Replication, SampleUnit};
use super::interval::{Interval, NoInterval};
use crate::spec::claim::Expect;
use crate::spec::PostMedium;
use crate::store::{Manifest, PointStatus};
use serde::Serialize;

/// The fewest replicates a side for anything but `inconclusive`.
pub const DEFAULT_MIN_REPLICATES: usize = 3;

/// The fewest replicates per group of a `flat` check (its max ÷ min of group means is
/// biased upwards with few samples a group).
pub const DEFAULT_MIN_FLAT_REPLICATES: usize = 5;

/// A verdict a reviewer accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Reproduced,
    ReproducedWithSubstitutes,
    NotReproduced,
    Inconclusive,
    NotApplicable,
}

impl Tier {
    pub const ALL: [Tier; 5] = [
        Tier::Reproduced,
        Tier::ReproducedWithSubstitutes,
        Tier::NotReproduced,
        Tier::Inconclusive,
        Tier::NotApplicable,
    ];

    /// Whether the tier decides the claim one way or the other.
    pub fn decides(self) -> bool {
        matches!(
            self,
            Tier::Reproduced | Tier::ReproducedWithSubstitutes | Tier::NotReproduced
        )
    }

    pub fn label(self) -> &'static str {
        match self {
            Tier::Reproduced => "reproduced",
            Tier::ReproducedWithSubstitutes => "reproduced with substitutes",
            Tier::NotReproduced => "not reproduced",
            Tier::Inconclusive => "inconclusive",
            Tier::NotApplicable => "not applicable",
        }
    }
}

/// What ran differently from the post.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SubstitutionKind {
    /// A `tools:` alternative marked `stand_in` (e.g. `fslab stress` for fsstress).
    StandInWorkload,
    /// ext3 points: no kernel since 4.3 has a separate ext3 driver; ext4's mounts them.
    Ext3ByExt4Driver,
    /// The device is not the post's kind of storage: a disk model, or a loop device on
    /// an image file where the post names an HDD, SSD, pmem or RAM disk.
    Medium,
    /// The points ran in a guest kernel (User-Mode Linux), not on a machine's own.
    Guest,
}

/// One substitution, named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Substitution {
    pub kind: SubstitutionKind,
    pub what: String,
}

/// The first `N.N` of a kernel release (`6.18.44-fc` → (6, 18)).
fn kernel_major_minor(release: &str) -> Option<(u64, u64)> {
    let mut it = release
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty());
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// Every substitution a bundle's manifest shows.
pub fn substitutions(m: &Manifest) -> Vec<Substitution> {
    let mut out = Vec::new();
    for (name, t) in &m.tools {
        if let Some(si) = &t.stand_in {
            out.push(Substitution {
                kind: SubstitutionKind::StandInWorkload,
                what: format!(
                    "stand-in workload: {name} ran as `{}` ({si})",
                    t.command.replace("{{fslab}}", "fslab")
                ),
            });
        }
    }
    let ext3: Vec<&str> = m
        .points
        .iter()
        .filter(|p| p.status == PointStatus::Ok)
        .filter(|p| p.vars.values().any(|v| v.as_str() == Some("ext3")))
        .map(|p| p.id.as_str())
        .collect();
    let modern = kernel_major_minor(&m.environment.kernel).is_none_or(|k| k >= (4, 3));
    if !ext3.is_empty() && modern {
        out.push(Substitution {
            kind: SubstitutionKind::Ext3ByExt4Driver,
            what: format!(
                "ext3 mounted by the ext4 driver (kernel {}; no kernel since 4.3 has a separate ext3 driver, so the ext4 allocator ran): {}",
                if m.environment.kernel.is_empty() { "unknown" } else { &m.environment.kernel },
                ext3.join(", ")
            ),
        });
    }
    out.extend(medium_substitutions(m));
    // With a `kernel` axis, only the points whose `kernel` names a guest ran in it.
    let axis = m.points.iter().any(|p| p.vars.contains_key("kernel"));
    for g in &m.environment.guests {
        let which = if axis {
            format!("points with kernel={} ", g.name)
        } else {
            String::new()
        };
        out.push(Substitution {
            kind: SubstitutionKind::Guest,
            what: format!("{which}measured in a {} guest: {}", g.kind, guest_what(g)),
        });
    }
    out
}

/// The guest's kernel, where it came from, and what it cannot show.
fn guest_what(g: &crate::store::GuestInfo) -> String {
    let source = ["package", "package_version"]
        .iter()
        .filter_map(|k| g.provenance.get(*k).and_then(|v| v.as_str()))
        .collect::<Vec<_>>()
        .join(" ");
    // A kernel `fslab kernels build` made: the source package and the patches in it.
    let patches: Vec<&str> = g.provenance["build"]["patches"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .filter_map(|p| p["file"]["name"].as_str())
                .collect()
        })
        .unwrap_or_default();
    let built = if g.provenance.get("build").is_none() {
        String::new()
    } else if patches.is_empty() {
        ", built by fslab".to_string()
    } else {
        format!(", built by fslab with patches {}", patches.join(", "))
    };
    format!(
        "kernel {} (`{}`{}{built}); {}",
        g.release,
        g.name,
        if source.is_empty() {
            String::new()
        } else {
            format!(", {source}")
        },
        g.caveats.join("; ")
    )
}

/// The post's storage, as the bundle's experiment states it (`source: [{ medium: … }]`).
fn post_medium(m: &Manifest) -> Option<PostMedium> {
    let exp =
        crate::spec::Experiment::from_str_named(&m.experiment.yaml, "experiment.yaml").ok()?;
    exp.def.source.iter().find_map(|s| s.medium)
}

/// Each device that is not the post's kind of storage. Nothing when the experiment does
/// not say what the post used, or says `unknown` (nothing to compare with).
fn medium_substitutions(m: &Manifest) -> Vec<Substitution> {
    let Some(post) = post_medium(m) else {
        return Vec::new();
    };
    if post == PostMedium::Unknown {
        return Vec::new();
    }
    m.environment
        .devices
        .iter()
        .map(|d| {
            let what = match &d.medium {
                Some(r) if r.substitution => format!(
                    "medium: device `{}` ran through the `{}` disk model{} (timings are the model's); the post used {}",
                    d.name,
                    r.model,
                    r.params
                        .as_ref()
                        .map(|p| format!(" {p}"))
                        .unwrap_or_default(),
                    post.label()
                ),
                _ if d.backing.starts_with("mapped ") => format!(
                    "medium: device `{}` is {}, whose kind of storage is not recorded; the post used {}",
                    d.name,
                    d.backing,
                    post.label()
                ),
                _ if !m.environment.guests.is_empty() => format!(
                    "medium: device `{}` is a guest's ubd disk on an image file here ({}); the post used {}",
                    d.name,
                    d.backing,
                    post.label()
                ),
                _ => format!(
                    "medium: device `{}` is a loop device on an image file here ({}); the post used {}",
                    d.name,
                    d.backing,
                    post.label()
                ),
            };
            Substitution {
                kind: SubstitutionKind::Medium,
                what,
            }
        })
        .collect()
}

/// The tier of a number that has no interval by its nature (a block layout read once
/// per replicate): it decides by itself, and the reason says there is no interval and
/// why. Substitutions cap `reproduced` (they are named once, where the verdicts are
/// listed, not in each reason).
pub fn decide_point(expect: &Expect, value: f64, substituted: bool) -> (Tier, String) {
    let (tier, _, why) = decide_point_on(expect, value, substituted);
    (tier, why)
}

/// [`decide_point`], also saying what decided it ([`Decided::Point`]).
pub fn decide_point_on(expect: &Expect, value: f64, substituted: bool) -> (Tier, Decided, String) {
    let why = NoInterval::DeterministicLayout;
    let v = crate::analysis::fmt_sig(value, 4);
    if expect.holds(value) {
        let tier = if substituted {
            Tier::ReproducedWithSubstitutes
        } else {
            Tier::Reproduced
        };
        (
            tier,
            Decided::Point(Side::Inside),
            format!("{v} is {expect} ({why})"),
        )
    } else {
        (
            Tier::NotReproduced,
            Decided::Point(Side::Outside),
            format!("{v} violates {expect} ({why})"),
        )
    }
}

/// What decided a tier computed from a measured number ([`decide_on`],
/// [`decide_point_on`]), typed: the reason says the same in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decided {
    /// The interval is over the iterations of one filesystem: it never decides; `need`
    /// replicates a side would.
    IterationsOnly { need: usize },
    /// Fewer replicates a side (`have`) than a decisive tier needs (`need`).
    TooFewReplicates { have: usize, need: usize },
    /// The number has no interval.
    NoInterval(NoInterval),
    /// Where the 95 % interval lies against `expect`.
    Interval(Side),
    /// A number that has no interval by its nature (a layout read once), against `expect`.
    Point(Side),
}

/// Where an interval lies against `expect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The whole interval satisfies `expect`.
    Inside,
    /// The whole interval violates it.
    Outside,
    /// Part of it does, part does not.
    Straddles,
}

pub fn side(expect: &Expect, i: &Interval) -> Side {
    if expect.holds(i.lo) && expect.holds(i.hi) {
        return Side::Inside;
    }
    let below = expect.min.is_some_and(|m| i.hi < m);
    let above = expect.max.is_some_and(|m| i.lo > m);
    if below || above {
        Side::Outside
    } else {
        Side::Straddles
    }
}

/// The tier of a measured number from its interval (or why it has none) and its unit of
/// replication: only an interval over at least `min_replicates` replicates a side can
/// decide. An interval over the iterations of one filesystem is shown for orientation
/// and never decides. Substitutions cap `reproduced` (named once, where the verdicts are
/// listed).
pub fn decide(
    expect: &Expect,
    interval: &Result<Interval, NoInterval>,
    rep: &Replication,
    min_replicates: usize,
    substituted: bool,
) -> (Tier, String) {
    let (tier, _, why) = decide_on(expect, interval, rep, min_replicates, substituted);
    (tier, why)
}

/// [`decide`], also saying what decided it, typed ([`Decided`]).
pub fn decide_on(
    expect: &Expect,
    interval: &Result<Interval, NoInterval>,
    rep: &Replication,
    min_replicates: usize,
    substituted: bool,
) -> (Tier, Decided, String) {
    if rep.unit == SampleUnit::Iteration {
        let mut r = format!(
            "{}: an interval over the iterations of one filesystem does not cover the variation from one filesystem to the next; at least {min_replicates} replicates a side are needed",
            rep.label()
        );
        if let Ok(i) = interval {
            let lies = match side(expect, i) {
                Side::Inside => "is",
                Side::Outside => "violates",
                Side::Straddles => "straddles",
            };
            r.push_str(&format!(
                " (over the iterations alone, {} {lies} {expect})",
                i.label()
            ));
        }
        return (
            Tier::Inconclusive,
            Decided::IterationsOnly {
                need: min_replicates,
            },
            r,
        );
    }
    if rep.fewest_replicates() < min_replicates {
        return (
            Tier::Inconclusive,
            Decided::TooFewReplicates {
                have: rep.fewest_replicates(),
                need: min_replicates,
            },
            format!(
                "{}; at least {min_replicates} replicates a side are needed",
                rep.label()
            ),
        );
    }
    let i = match interval {
        Ok(i) => i,
        Err(e) => {
            return (
                Tier::Inconclusive,
                Decided::NoInterval(e.clone()),
                format!("{}; {e}", rep.label()),
            )
        }
    };
    let s = side(expect, i);
    match s {
        Side::Inside => (
            if substituted {
                Tier::ReproducedWithSubstitutes
            } else {
                Tier::Reproduced
            },
            Decided::Interval(s),
            format!("the whole interval {} is {expect}", i.label()),
        ),
        Side::Outside => (
            Tier::NotReproduced,
            Decided::Interval(s),
            format!("the whole interval {} violates {expect}", i.label()),
        ),
        Side::Straddles => (
            Tier::Inconclusive,
            Decided::Interval(s),
            format!("the interval {} straddles {expect}", i.label()),
        ),
    }
}

/// One variable whose value here differs from the published profile's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VarDifference {
    pub var: String,
    /// Its value here (as the scale note shows it); None when it is not set here.
    pub here: Option<String>,
    /// Its value in the published profile; None when that profile does not have it.
    pub published: Option<String>,
}

impl VarDifference {
    /// `n=5000 here, 400000 published`, `k is not set here (1 published)`, `k=2 here,
    /// not in the published profile`.
    pub fn label(&self) -> String {
        let k = &self.var;
        match (&self.here, &self.published) {
            (Some(h), Some(p)) => format!("{k}={h} here, {p} published"),
            (None, Some(p)) => format!("{k} is not set here ({p} published)"),
            (Some(h), None) => format!("{k}={h} here, not in the published profile"),
            (None, None) => k.clone(),
        }
    }
}

/// Every variable whose value here differs from the published profile's, either way,
/// in the bundle's order.
pub fn var_differences(
    here: &indexmap::IndexMap<String, crate::spec::Value>,
    published: &indexmap::IndexMap<String, crate::spec::Value>,
) -> Vec<VarDifference> {
    let mut out = Vec::new();
    for (k, p) in published {
        match here.get(k) {
            Some(h) if h.label() == p.label() => {}
            h => out.push(VarDifference {
                var: k.clone(),
                here: h.map(shown),
                published: Some(shown(p)),
            }),
        }
    }
    for (k, h) in here {
        if !published.contains_key(k) {
            out.push(VarDifference {
                var: k.clone(),
                here: Some(shown(h)),
                published: None,
            });
        }
    }
    out
}

/// [`var_differences`] in words (`n=5000 here, 400000 published`).
pub fn scale_differences(
    here: &indexmap::IndexMap<String, crate::spec::Value>,
    published: &indexmap::IndexMap<String, crate::spec::Value>,
) -> Vec<String> {
    var_differences(here, published)
        .iter()
        .map(VarDifference::label)
        .collect()
}

/// A value as the scale note shows it: an empty one (`[]`, `""`) as `(empty)`, so that
/// a reader sees that something was compared.
fn shown(v: &crate::spec::Value) -> String {
    let l = v.label();
    if l.trim().is_empty() {
        "(empty)".to_string()
    } else {
        l
    }
}

/// `N claims: a reproduced, b reproduced with substitutes, …` for these tiers.
pub fn counts_line(tiers: &[Tier]) -> String {
    let parts: Vec<String> = Tier::ALL
        .iter()
        .map(|t| format!("{} {}", tiers.iter().filter(|x| *x == t).count(), t.label()))
        .collect();
    format!("{} claims by tier: {}", tiers.len(), parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::interval::Method;

    fn iv(lo: f64, hi: f64) -> Result<Interval, NoInterval> {
        Ok(Interval {
            lo,
            hi,
            level: 0.95,
            method: Method::FiellerWelch,
        })
    }

    fn max(m: f64) -> Expect {
        Expect {
            min: None,
            max: Some(m),
        }
    }

    fn reps(n: usize) -> Replication {
        Replication {
            unit: SampleUnit::Replicate,
            replicates: (n, n),
            samples: (n, n),
        }
    }

    #[test]
    fn the_whole_interval_decides() {
        let e = max(1.10);
        assert_eq!(
            decide(&e, &iv(1.01, 1.09), &reps(5), 3, false).0,
            Tier::Reproduced
        );
        assert_eq!(
            decide(&e, &iv(1.11, 1.20), &reps(5), 3, false).0,
            Tier::NotReproduced
        );
        // Seed 000's first run: 1.098 against 1.10, with runs varying by ~3 %.
        let (t, why) = decide(&e, &iv(1.065, 1.131), &reps(5), 3, false);
        assert_eq!(t, Tier::Inconclusive);
        assert!(why.contains("straddles ≤ 1.1"), "{why}");
        let band = Expect {
            min: Some(0.95),
            max: Some(1.05),
        };
        assert_eq!(side(&band, &iv(0.90, 0.94).unwrap()), Side::Outside);
        assert_eq!(side(&band, &iv(0.90, 1.10).unwrap()), Side::Straddles);
    }

    #[test]
    fn too_few_replicates_or_no_interval_is_inconclusive() {
        let (t, why) = decide(&max(2.0), &iv(1.0, 1.0), &reps(2), 3, false);
        assert_eq!(t, Tier::Inconclusive);
        assert_eq!(
            why,
            "unit: replicate, 2 a side; at least 3 replicates a side are needed"
        );
        assert_eq!(
            decide(&max(2.0), &iv(1.0, 1.0), &reps(2), 2, false).0,
            Tier::Reproduced
        );
        let (t, why) = decide(&max(2.0), &Err(NoInterval::Unbounded), &reps(4), 3, false);
        assert_eq!(t, Tier::Inconclusive);
        assert!(why.contains("unbounded"));
    }

    #[test]
    fn iterations_of_one_filesystem_never_decide() {
        let one = Replication {
            unit: SampleUnit::Iteration,
            replicates: (1, 1),
            samples: (9, 9),
        };
        // An interval far outside the bound, over nine iterations: still inconclusive,
        // even with the minimum lowered to 1.
        let (t, why) = decide(&max(1.1), &iv(1.2, 1.3), &one, 1, false);
        assert_eq!(t, Tier::Inconclusive);
        assert!(
            why.starts_with("unit: iteration of one filesystem (1 replicate a side, 9 iterations)"),
            "{why}"
        );
        assert!(
            why.ends_with(
                "(over the iterations alone, [1.2, 1.3] (95 %, Fieller–Welch) violates ≤ 1.1)"
            ),
            "{why}"
        );
    }

    #[test]
    fn a_substitution_caps_the_tier() {
        assert_eq!(
            decide(&max(1.1), &iv(1.0, 1.05), &reps(4), 3, true).0,
            Tier::ReproducedWithSubstitutes
        );
        assert_eq!(
            decide(&max(1.1), &iv(1.2, 1.3), &reps(4), 3, true).0,
            Tier::NotReproduced
        );
        assert_eq!(
            decide_point(&max(1.1), 1.0, true).0,
            Tier::ReproducedWithSubstitutes
        );
        assert_eq!(
            counts_line(&[Tier::Reproduced, Tier::Inconclusive, Tier::Inconclusive]),
            "3 claims by tier: 1 reproduced, 0 reproduced with substitutes, 0 not reproduced, 2 inconclusive, 0 not applicable"
        );
    }

    #[test]
    fn every_variable_that_differs_from_the_published_profile_is_listed() {
        use crate::spec::Value;
        let vars = |pairs: &[(&str, Value)]| -> indexmap::IndexMap<String, Value> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect()
        };
        let published = vars(&[
            ("n", Value::Int(400000)),
            ("runs", Value::Int(10)),
            ("size", Value::Str("20284MiB".into())),
        ]);
        // Smaller and larger both count, not only what `at_scale` lists.
        let here = vars(&[
            ("n", Value::Int(5000)),
            ("runs", Value::Int(20)),
            ("size", Value::Str("20284MiB".into())),
        ]);
        assert_eq!(
            scale_differences(&here, &published),
            [
                "n=5000 here, 400000 published",
                "runs=20 here, 10 published"
            ]
        );
        assert!(scale_differences(&published, &published).is_empty());
        // An option list that the published profile leaves empty (seed 001's mke2fs -N).
        let none = vars(&[("mkfs_inodes", Value::List(vec![]))]);
        let set = vars(&[(
            "mkfs_inodes",
            Value::List(vec![Value::Str("-N".into()), Value::Str("69400".into())]),
        )]);
        assert_eq!(
            scale_differences(&set, &none),
            ["mkfs_inodes=-N 69400 here, (empty) published"]
        );
    }

    #[test]
    fn ext3_points_on_a_modern_kernel_ran_on_the_ext4_driver() {
        let mut m = Manifest::default();
        m.environment.kernel = "6.18.44-fc".into();
        let point = |id: &str, fs: &str, status: &str| crate::store::PointRecord {
            id: id.into(),
            vars: [("fs".to_string(), serde_json::Value::from(fs))]
                .into_iter()
                .collect(),
            status: status.parse().unwrap(),
            ..Default::default()
        };
        m.points = vec![
            point("fs=ext3", "ext3", "ok"),
            point("fs=ext4", "ext4", "ok"),
        ];
        let s = substitutions(&m);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].kind, SubstitutionKind::Ext3ByExt4Driver);
        assert!(s[0]
            .what
            .contains("ext3 mounted by the ext4 driver (kernel 6.18.44-fc"));
        assert!(s[0].what.ends_with(": fs=ext3"));
        // An ext3 point that did not run substitutes nothing; nor does an old kernel.
        m.points[0].status = PointStatus::Unsupported;
        assert!(substitutions(&m).is_empty());
        m.points[0].status = PointStatus::Ok;
        m.environment.kernel = "2.6.32".into();
        assert!(substitutions(&m).is_empty());
    }
}
