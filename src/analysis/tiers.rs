//! Verdict tiers that a reviewer accepts (issue 10, item 2):
//! `reproduced`, `reproduced with substitutes`, `not reproduced`, `inconclusive`,
//! `not applicable`.
//!
//! - `reproduced` needs the whole 95 % interval of the measured number inside `expect`;
//!   `not reproduced` needs the whole interval outside it; anything else is
//!   `inconclusive`, shown with its interval.
//! - Fewer samples on a side than the minimum (default 3) is `inconclusive`.
//! - Any substitution (a stand-in workload, ext3 mounted by the ext4 driver, a disk
//!   model under a device) gives at best `reproduced with substitutes`, and each
//!   substitution is named.

use super::claims::Expect;
use super::interval::{Interval, NoInterval};
use crate::store::{Manifest, PointStatus};
use serde::Serialize;

/// The fewest samples per side for anything but `inconclusive`.
pub const DEFAULT_MIN_SAMPLES: usize = 3;

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
    /// A device served through a disk model (`medium:`): its timings are the model's.
    ModelledMedium,
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
    for d in &m.environment.devices {
        let Some(md) = d.medium.as_ref().filter(|md| md.substitution) else {
            continue;
        };
        out.push(Substitution {
            kind: SubstitutionKind::ModelledMedium,
            what: format!(
                "device {} ran on the {} disk model{}, not on the post's disk: its times are the model's (docs/media.md)",
                d.name,
                md.model,
                md.params
                    .as_ref()
                    .map(|p| format!(" ({})", params_label(p)))
                    .unwrap_or_default()
            ),
        });
    }
    out
}

/// `seek_avg_ms=8.5, rpm=7200, …` from a medium's recorded parameters.
fn params_label(p: &serde_json::Value) -> String {
    match p.as_object() {
        Some(o) => o
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", "),
        None => p.to_string(),
    }
}

/// Where an interval lies against `expect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// The tier of a measured number with `samples` per side and its interval (or why there
/// is none), and the reason in words.
pub fn decide(
    expect: &Expect,
    interval: &Result<Interval, NoInterval>,
    samples: (usize, usize),
    min_samples: usize,
    subs: &[Substitution],
) -> (Tier, String) {
    let named = || {
        subs.iter()
            .map(|s| s.what.clone())
            .collect::<Vec<_>>()
            .join("; ")
    };
    if samples.0.min(samples.1) < min_samples {
        return (
            Tier::Inconclusive,
            format!(
                "{} over {} samples; at least {min_samples} per side are needed",
                samples.0, samples.1
            ),
        );
    }
    let i = match interval {
        Ok(i) => i,
        Err(e) => return (Tier::Inconclusive, e.to_string()),
    };
    match side(expect, i) {
        Side::Inside if subs.is_empty() => (
            Tier::Reproduced,
            format!("the whole interval {} is {expect}", i.label()),
        ),
        Side::Inside => (
            Tier::ReproducedWithSubstitutes,
            format!(
                "the whole interval {} is {expect}; substitutes: {}",
                i.label(),
                named()
            ),
        ),
        Side::Outside => {
            let mut r = format!("the whole interval {} violates {expect}", i.label());
            if !subs.is_empty() {
                r.push_str(&format!("; substitutes: {}", named()));
            }
            (Tier::NotReproduced, r)
        }
        Side::Straddles => (
            Tier::Inconclusive,
            format!("the interval {} straddles {expect}", i.label()),
        ),
    }
}

/// Every variable whose value here differs from the published profile's, either way
/// (`n=5000 here, 400000 published`), in the bundle's order.
pub fn scale_differences(
    here: &indexmap::IndexMap<String, crate::spec::Value>,
    published: &indexmap::IndexMap<String, crate::spec::Value>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (k, p) in published {
        match here.get(k) {
            Some(h) if h.label() == p.label() => {}
            Some(h) => out.push(format!("{k}={} here, {} published", h.label(), p.label())),
            None => out.push(format!("{k} is not set here ({} published)", p.label())),
        }
    }
    for (k, h) in here {
        if !published.contains_key(k) {
            out.push(format!(
                "{k}={} here, not in the published profile",
                h.label()
            ));
        }
    }
    out
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

    #[test]
    fn the_whole_interval_decides() {
        let e = max(1.10);
        assert_eq!(
            decide(&e, &iv(1.01, 1.09), (5, 5), 3, &[]).0,
            Tier::Reproduced
        );
        assert_eq!(
            decide(&e, &iv(1.11, 1.20), (5, 5), 3, &[]).0,
            Tier::NotReproduced
        );
        // Seed 000's first run: 1.098 against 1.10, with runs varying by ~3 %.
        let (t, why) = decide(&e, &iv(1.065, 1.131), (5, 5), 3, &[]);
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
    fn too_few_samples_or_no_interval_is_inconclusive() {
        let (t, why) = decide(&max(2.0), &iv(1.0, 1.0), (1, 1), 3, &[]);
        assert_eq!(t, Tier::Inconclusive);
        assert_eq!(why, "1 over 1 samples; at least 3 per side are needed");
        assert_eq!(
            decide(&max(2.0), &iv(1.0, 1.0), (2, 2), 2, &[]).0,
            Tier::Reproduced
        );
        let (t, why) = decide(&max(2.0), &Err(NoInterval::Unbounded), (4, 4), 3, &[]);
        assert_eq!(t, Tier::Inconclusive);
        assert!(why.contains("unbounded"));
    }

    #[test]
    fn a_substitution_caps_the_tier_and_is_named() {
        let subs = [Substitution {
            kind: SubstitutionKind::StandInWorkload,
            what: "stand-in workload: fsstress ran as `fslab stress`".into(),
        }];
        let (t, why) = decide(&max(1.1), &iv(1.0, 1.05), (4, 4), 3, &subs);
        assert_eq!(t, Tier::ReproducedWithSubstitutes);
        assert!(why.contains("substitutes: stand-in workload: fsstress ran as `fslab stress`"));
        assert_eq!(
            decide(&max(1.1), &iv(1.2, 1.3), (4, 4), 3, &subs).0,
            Tier::NotReproduced
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

    #[test]
    fn a_disk_model_under_a_device_is_a_named_substitution_and_none_is_not() {
        let mut m = Manifest::default();
        let dev = |model: &str, substitution: bool| crate::store::DeviceInfo {
            name: "data".into(),
            medium: Some(crate::store::MediumRecord {
                model: model.into(),
                params: substitution.then(|| serde_json::json!({ "seek_avg_ms": 8.5 })),
                substitution,
            }),
            ..Default::default()
        };
        m.environment.devices = vec![dev("none", false)];
        assert!(substitutions(&m).is_empty());
        m.environment.devices = vec![dev("hdd-2008", true)];
        let s = substitutions(&m);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].kind, SubstitutionKind::ModelledMedium);
        assert!(
            s[0].what
                .contains("device data ran on the hdd-2008 disk model (seek_avg_ms=8.5)"),
            "{}",
            s[0].what
        );
    }
}
