//! What a verdict could have detected: from a claim's own 95 % interval over replicates,
//! the smallest effect the same design detects with 90 % power (two-sided, α = 5 %), and
//! how many replicates a side would decide the claim at the spread seen (issue 43).
//!
//! The interval's half-width is read back as a standard error: `se = (g(hi) − g(lo)) / (2
//! t₀.₉₇₅)`, with `g = ln` when the whole interval is positive (ratios, rates, times: an
//! effect is a factor, `× 1.12`) and `g = identity` otherwise (shares, differences: an
//! effect is a difference in the claim's unit), and `t` on `n_a + n_b − 2` degrees of
//! freedom. The detectable effect is `(t₀.₉₇₅ + t₀.₉₀) · se` on that scale. At `n`
//! replicates a side the standard error is `se · √(n₀ / n)` (`n₀` the fewer side now); the
//! claim is decided with 90 % power when that effect fits between the measured value
//! and the nearest bound of `expect`. Intervals over the iterations of one filesystem
//! say nothing about the next filesystem, so they get no power.

use crate::analysis::interval::Interval;
use crate::spec::claim::Expect;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The power the detectable effect is stated at.
pub const POWER: f64 = 0.90;
/// The most replicates a side a verdict suggests (beyond it, "more than N").
pub const BUDGET_PER_SIDE: usize = 50;

/// How an effect is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EffectScale {
    /// A factor (`× 1.12`): the interval is positive.
    Factor,
    /// A difference in the claim's unit.
    Difference,
}

/// How many replicates would decide the claim.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Needed {
    /// The interval already decides it.
    Decided,
    /// About this many a side would, at the spread seen; `extra_s` is the time the
    /// added replicates would take here (from this bundle's replicate times), if known.
    Replicates {
        per_side: usize,
        extra_s: Option<f64>,
    },
    /// Not within [`BUDGET_PER_SIDE`] a side.
    BeyondBudget { budget: usize },
    /// The measured value sits on a bound: no number of replicates decides it.
    OnTheBound,
}

/// What the design could detect, and what would decide.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Power {
    pub scale: EffectScale,
    /// The power the effect is stated at ([`POWER`] unless asked otherwise).
    pub power: f64,
    /// The smallest effect detected with `power`: a factor ≥ 1, or a difference ≥ 0.
    pub detectable: f64,
    /// The replicates a side it rests on (the fewer side).
    pub replicates: usize,
    pub needed: Needed,
}

fn t(q: f64, df: f64) -> Option<f64> {
    StudentsT::new(0.0, 1.0, df).ok().map(|d| d.inverse_cdf(q))
}

/// Power from a claim's interval over `replicates` (numerator, denominator; the same
/// twice for a one-sided check) replicates a side. `decided`: the tier rule already
/// decided it. `replicate_s`: the mean time of one (point, replicate) pair here; a side
/// is taken to be one pair. None when the interval cannot be read back (fewer than two
/// replicates a side, unbounded or empty).
pub fn of_interval(
    value: f64,
    interval: &Interval,
    replicates: (usize, usize),
    expect: &Expect,
    decided: bool,
    replicate_s: Option<f64>,
) -> Option<Power> {
    of_interval_at(
        value,
        interval,
        replicates,
        expect,
        decided,
        replicate_s,
        POWER,
    )
}

/// [`of_interval`] at another `power` (in (0, 1)): what `fslab run --power P` sizes its
/// next block of replicates by.
pub fn of_interval_at(
    value: f64,
    interval: &Interval,
    replicates: (usize, usize),
    expect: &Expect,
    decided: bool,
    replicate_s: Option<f64>,
    power: f64,
) -> Option<Power> {
    let n0 = replicates.0.min(replicates.1);
    if n0 < 2 || !interval.lo.is_finite() || !interval.hi.is_finite() || interval.hi < interval.lo {
        return None;
    }
    let df = (replicates.0 + replicates.1).saturating_sub(2).max(1) as f64;
    let alpha_q = 1.0 - (1.0 - interval.level) / 2.0;
    let scale = if interval.lo > 0.0 && value > 0.0 {
        EffectScale::Factor
    } else {
        EffectScale::Difference
    };
    let g = |x: f64| match scale {
        EffectScale::Factor => x.ln(),
        EffectScale::Difference => x,
    };
    let se = (g(interval.hi) - g(interval.lo)) / (2.0 * t(alpha_q, df)?);
    let effect_at = |n: usize| -> Option<f64> {
        let df = (2 * n).saturating_sub(2).max(1) as f64;
        Some((t(alpha_q, df)? + t(power, df)?) * se * (n0 as f64 / n as f64).sqrt())
    };
    let here = effect_at(n0)?;
    let detectable = match scale {
        EffectScale::Factor => here.exp(),
        EffectScale::Difference => here,
    };
    let needed = if decided {
        Needed::Decided
    } else {
        let gap = [expect.min, expect.max]
            .into_iter()
            .flatten()
            .filter(|b| scale == EffectScale::Difference || *b > 0.0)
            .map(|b| (g(value) - g(b)).abs())
            .fold(f64::INFINITY, f64::min);
        if !gap.is_finite() || gap <= 0.0 {
            Needed::OnTheBound
        } else {
            match (n0..=BUDGET_PER_SIDE).find(|&n| effect_at(n).is_some_and(|e| e <= gap)) {
                Some(n) => Needed::Replicates {
                    per_side: n,
                    extra_s: replicate_s.map(|s| s * 2.0 * n.saturating_sub(n0) as f64),
                },
                None => Needed::BeyondBudget {
                    budget: BUDGET_PER_SIDE,
                },
            }
        }
    };
    Some(Power {
        scale,
        power,
        detectable,
        replicates: n0,
        needed,
    })
}

impl Power {
    /// The smallest detectable effect alone: `≥ 1.12×`, `≥ 0.02 s`.
    pub fn effect(&self, unit: &str) -> String {
        match self.scale {
            EffectScale::Factor => format!("≥ {}×", sig3(self.detectable)),
            EffectScale::Difference if unit.is_empty() => format!("≥ {}", sig3(self.detectable)),
            EffectScale::Difference => format!("≥ {} {unit}", sig3(self.detectable)),
        }
    }

    /// `could detect ≥ 1.12× (90 % power, 3 replicates a side); would need about 14 a
    /// side, ≈ 40 min here`.
    pub fn label(&self, unit: &str) -> String {
        let effect = match self.scale {
            EffectScale::Factor => self.effect(unit),
            EffectScale::Difference => format!("a difference {}", self.effect(unit)),
        };
        let mut s = format!(
            "could detect {effect} ({} % power, {} replicates a side)",
            (self.power * 100.0).round(),
            self.replicates
        );
        match self.needed {
            Needed::Decided => {}
            Needed::Replicates { per_side, extra_s } => {
                s.push_str(&format!("; would need about {per_side} a side"));
                if let Some(e) = extra_s {
                    s.push_str(&format!(", ≈ {} more here", duration(e)));
                }
            }
            Needed::BeyondBudget { budget } => {
                s.push_str(&format!("; more than {budget} a side would be needed"))
            }
            Needed::OnTheBound => {
                s.push_str("; the value sits on the bound: no number of replicates decides it")
            }
        }
        s
    }
}

fn sig3(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    format!("{x:.digits$}")
}

fn duration(s: f64) -> String {
    if s < 90.0 {
        format!("{} s", s.round())
    } else if s < 90.0 * 60.0 {
        format!("{} min", (s / 60.0).round())
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::interval::Method;

    fn iv(lo: f64, hi: f64) -> Interval {
        Interval {
            lo,
            hi,
            level: 0.95,
            method: Method::FiellerWelch,
        }
    }

    fn max(b: f64) -> Expect {
        Expect {
            min: None,
            max: Some(b),
        }
    }

    #[test]
    fn a_narrow_interval_detects_small_factors_and_more_replicates_shrink_it() {
        let p = of_interval(1.05, &iv(1.02, 1.08), (5, 5), &max(1.10), true, None).unwrap();
        assert_eq!(p.scale, EffectScale::Factor);
        // se = ln(1.08/1.02)/(2 t(.975, 8)) ≈ 0.01239; (2.306 + 1.397) · se ≈ 0.0459
        assert!((p.detectable - 1.047).abs() < 0.002, "{p:?}");
        assert_eq!(p.needed, Needed::Decided);
        let wide =
            of_interval(1.05, &iv(0.98, 1.12), (5, 5), &max(1.10), false, Some(60.0)).unwrap();
        assert!(wide.detectable > p.detectable);
        let Needed::Replicates { per_side, extra_s } = wide.needed else {
            panic!("{wide:?}");
        };
        // se = ln(1.12/0.98)/(2·2.306) ≈ 0.0290, gap ln(1.10/1.05) ≈ 0.0465:
        // n ≈ 5·(3.29·0.0290/0.0465)² ≈ 21 a side (a little more: t on fewer df)
        assert!((21..=24).contains(&per_side), "{per_side}");
        assert_eq!(extra_s, Some(60.0 * 2.0 * (per_side - 5) as f64));
    }

    #[test]
    fn replicates_needed_follow_the_square_law() {
        // se chosen so that at n0 = 4 the detectable log effect is exactly twice the gap:
        // about four times the replicates are needed (a little less: t shrinks with df).
        let (n0, gap) = (4usize, 0.05f64);
        let df = 6.0;
        let k = t(0.975, df).unwrap() + t(0.9, df).unwrap();
        let se = 2.0 * gap / k;
        let half = se * t(0.975, df).unwrap();
        let value = 1.0f64;
        let i = iv((value.ln() - half).exp(), (value.ln() + half).exp());
        let p = of_interval(value, &i, (n0, n0), &max(gap.exp()), false, None).unwrap();
        let Needed::Replicates { per_side, .. } = p.needed else {
            panic!("{p:?}");
        };
        assert!((12..=16).contains(&per_side), "{per_side}");
    }

    #[test]
    fn a_hopeless_design_says_so_and_one_replicate_has_no_power() {
        let p = of_interval(0.8651, &iv(0.2992, 254.6), (5, 5), &max(1.1), false, None).unwrap();
        assert!(p.detectable > 10.0, "{p:?}");
        assert_eq!(
            p.needed,
            Needed::BeyondBudget {
                budget: BUDGET_PER_SIDE
            }
        );
        assert!(
            p.label("ratio").contains("more than 50 a side"),
            "{}",
            p.label("")
        );
        assert_eq!(
            of_interval(1.0, &iv(0.9, 1.1), (1, 5), &max(2.0), false, None),
            None
        );
        let on = of_interval(1.1, &iv(1.0, 1.2), (3, 3), &max(1.1), false, None).unwrap();
        assert_eq!(on.needed, Needed::OnTheBound);
    }

    #[test]
    fn shares_and_differences_are_additive() {
        let p = of_interval(
            0.0,
            &iv(-0.02, 0.02),
            (4, 4),
            &Expect {
                min: Some(0.5),
                max: None,
            },
            false,
            Some(30.0),
        )
        .unwrap();
        assert_eq!(p.scale, EffectScale::Difference);
        assert!(p.detectable > 0.02 && p.detectable < 0.05, "{p:?}");
        assert!(
            p.label("share")
                .starts_with("could detect a difference ≥ 0.0"),
            "{}",
            p.label("share")
        );
        assert_eq!(
            p.needed,
            Needed::Replicates {
                per_side: 4,
                extra_s: Some(0.0)
            }
        );
    }
}
