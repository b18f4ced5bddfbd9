//! 95 % intervals for the numbers a claim compares (issue 10, "Verdicts that stand up").
//!
//! - a ratio of two means of independent samples: Fieller's interval with Welch–
//!   Satterthwaite degrees of freedom ([`fieller_welch`]);
//! - any statistic of one or two samples: a percentile bootstrap over the iterations with
//!   a fixed seed, so the same bundle always gives the same interval ([`bootstrap`]).
//!
//! Student's t quantiles come from `statrs`.

use rand::{Rng, SeedableRng};
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// How an interval was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Fieller's theorem for a ratio of means, Welch–Satterthwaite degrees of freedom.
    FiellerWelch,
    /// Percentile bootstrap (resampled within each side or group).
    Bootstrap,
    /// Student's t interval of a mean.
    StudentT,
}

/// A two-sided interval at `level` (0.95).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
    pub level: f64,
    pub method: Method,
}

impl Interval {
    /// `[1.02, 1.19] (95 %, Fieller–Welch)`.
    pub fn label(&self) -> String {
        let m = match self.method {
            Method::FiellerWelch => "Fieller–Welch",
            Method::Bootstrap => "bootstrap",
            Method::StudentT => "Student t",
        };
        format!(
            "[{}, {}] ({} %, {m})",
            sig4(self.lo),
            sig4(self.hi),
            // 95, or a sequential look's 99.24: enough digits to tell it from 100.
            crate::analysis::sequential::level_percent(self.level)
        )
    }
}

fn sig4(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (3 - x.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let v = x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0);
    (m, v)
}

/// Why no interval can be given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoInterval {
    /// Fewer than two samples on a side.
    TooFewSamples {
        numerator: usize,
        denominator: usize,
    },
    /// The denominator's mean is not clearly away from 0: the interval is unbounded.
    Unbounded,
    /// A block layout read once: there is nothing to resample; the measured number
    /// decides by itself, and the verdict says so.
    DeterministicLayout,
}

impl std::fmt::Display for NoInterval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoInterval::TooFewSamples {
                numerator,
                denominator,
            } => write!(
                f,
                "too few samples for an interval ({numerator} over {denominator})"
            ),
            NoInterval::Unbounded => {
                f.write_str("the denominator is not clearly away from 0: the interval is unbounded")
            }
            NoInterval::DeterministicLayout => {
                f.write_str("no interval: single measurement of a deterministic layout")
            }
        }
    }
}

/// The `level` interval of mean(num) / mean(den) for independent samples (Fieller).
pub fn fieller_welch(num: &[f64], den: &[f64], level: f64) -> Result<Interval, NoInterval> {
    let (n1, n2) = (num.len(), den.len());
    if n1 < 2 || n2 < 2 {
        return Err(NoInterval::TooFewSamples {
            numerator: n1,
            denominator: n2,
        });
    }
    let (m1, s1) = mean_var(num);
    let (m2, s2) = mean_var(den);
    let (v11, v22) = (s1 / n1 as f64, s2 / n2 as f64);
    let r = m1 / m2;
    // Welch–Satterthwaite for m1 − r·m2.
    let var = v11 + r * r * v22;
    let df = if var > 0.0 {
        var * var / (v11 * v11 / (n1 - 1) as f64 + r.powi(4) * v22 * v22 / (n2 - 1) as f64)
    } else {
        (n1 + n2 - 2) as f64
    };
    let df = if df.is_finite() && df > 0.0 {
        df
    } else {
        (n1 + n2 - 2) as f64
    };
    let t = StudentsT::new(0.0, 1.0, df)
        .map(|d| d.inverse_cdf(0.5 + level / 2.0))
        .unwrap_or(f64::NAN);
    let g = t * t * v22 / (m2 * m2);
    if g.is_nan() || g >= 1.0 {
        return Err(NoInterval::Unbounded);
    }
    let half = (t / m2.abs()) * (v11 + r * r * v22 - g * v11).max(0.0).sqrt();
    let (a, b) = ((r - half) / (1.0 - g), (r + half) / (1.0 - g));
    Ok(Interval {
        lo: a.min(b),
        hi: a.max(b),
        level,
        method: Method::FiellerWelch,
    })
}

/// A statistic of two samples (numerator side, denominator side).
pub type TwoSampleStat<'a> = &'a dyn Fn(&[f64], &[f64]) -> Option<f64>;

/// A percentile bootstrap interval of `stat(num, den)`, resampling each side with
/// replacement `rounds` times from a fixed seed.
pub fn bootstrap(
    num: &[f64],
    den: &[f64],
    stat: TwoSampleStat<'_>,
    level: f64,
    rounds: usize,
    seed: u64,
) -> Result<Interval, NoInterval> {
    if num.len() < 2 || (den.len() < 2 && !den.is_empty()) {
        return Err(NoInterval::TooFewSamples {
            numerator: num.len(),
            denominator: den.len(),
        });
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut a = vec![0.0; num.len()];
    let mut b = vec![0.0; den.len()];
    let mut stats = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        for x in a.iter_mut() {
            *x = num[rng.random_range(0..num.len())];
        }
        for x in b.iter_mut() {
            *x = den[rng.random_range(0..den.len())];
        }
        if let Some(s) = stat(&a, &b).filter(|s| s.is_finite()) {
            stats.push(s);
        }
    }
    if stats.len() < rounds / 2 {
        return Err(NoInterval::Unbounded);
    }
    stats.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let i = (p * (stats.len() - 1) as f64).round() as usize;
        stats[i.min(stats.len() - 1)]
    };
    let alpha = (1.0 - level) / 2.0;
    Ok(Interval {
        lo: q(alpha),
        hi: q(1.0 - alpha),
        level,
        method: Method::Bootstrap,
    })
}

/// A statistic of several groups of samples (e.g. max ÷ min of the group means).
pub type GroupStat<'a> = &'a dyn Fn(&[Vec<f64>]) -> Option<f64>;

/// A percentile bootstrap interval of `stat(groups)`, resampling within each group.
pub fn bootstrap_groups(
    groups: &[Vec<f64>],
    stat: GroupStat<'_>,
    level: f64,
    rounds: usize,
    seed: u64,
) -> Result<Interval, NoInterval> {
    let fewest = groups.iter().map(Vec::len).min().unwrap_or(0);
    if fewest < 2 {
        return Err(NoInterval::TooFewSamples {
            numerator: fewest,
            denominator: fewest,
        });
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut draw: Vec<Vec<f64>> = groups.iter().map(|g| vec![0.0; g.len()]).collect();
    let mut stats = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        for (d, g) in draw.iter_mut().zip(groups) {
            for x in d.iter_mut() {
                *x = g[rng.random_range(0..g.len())];
            }
        }
        if let Some(s) = stat(&draw).filter(|s| s.is_finite()) {
            stats.push(s);
        }
    }
    if stats.len() < rounds / 2 {
        return Err(NoInterval::Unbounded);
    }
    stats.sort_by(f64::total_cmp);
    let q = |p: f64| stats[((p * (stats.len() - 1) as f64).round() as usize).min(stats.len() - 1)];
    let alpha = (1.0 - level) / 2.0;
    Ok(Interval {
        lo: q(alpha),
        hi: q(1.0 - alpha),
        level,
        method: Method::Bootstrap,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fieller_matches_a_hand_computation() {
        // num mean 11, var 1 (n 3); den mean 10, var 1 (n 3): r = 1.1,
        // v11 = v22 = 1/3, Welch df = (1/3 + 1.21/3)² / ((1/9)/2 + (1.4641/9)/2) ≈ 3.948.
        let num = [10.0, 11.0, 12.0];
        let den = [9.0, 10.0, 11.0];
        let i = fieller_welch(&num, &den, 0.95).unwrap();
        let df: f64 =
            (1.0 / 3.0 + 1.21 / 3.0_f64).powi(2) / ((1.0 / 9.0) / 2.0 + (1.4641 / 9.0) / 2.0);
        let t = StudentsT::new(0.0, 1.0, df).unwrap().inverse_cdf(0.975);
        let g = t * t * (1.0 / 3.0) / 100.0;
        let half = (t / 10.0) * ((1.0 / 3.0) + 1.21 / 3.0 - g / 3.0).sqrt();
        assert!((i.lo - (1.1 - half) / (1.0 - g)).abs() < 1e-12, "{i:?}");
        assert!((i.hi - (1.1 + half) / (1.0 - g)).abs() < 1e-12, "{i:?}");
        assert!(i.lo < 1.1 && i.hi > 1.1);
        // Identical, noiseless samples: the interval is the ratio itself.
        let i = fieller_welch(&[2.0, 2.0], &[1.0, 1.0], 0.95).unwrap();
        assert_eq!((i.lo, i.hi), (2.0, 2.0));
    }

    #[test]
    fn too_few_or_a_denominator_near_zero_gives_no_interval() {
        assert_eq!(
            fieller_welch(&[1.0], &[1.0, 2.0], 0.95),
            Err(NoInterval::TooFewSamples {
                numerator: 1,
                denominator: 2
            })
        );
        assert_eq!(
            fieller_welch(&[1.0, 2.0], &[-1.0, 1.0], 0.95),
            Err(NoInterval::Unbounded)
        );
    }

    #[test]
    fn bootstrap_is_reproducible_and_covers_the_ratio() {
        let num: Vec<f64> = (0..10).map(|i| 11.0 + (i % 3) as f64 * 0.1).collect();
        let den: Vec<f64> = (0..10).map(|i| 10.0 + (i % 4) as f64 * 0.1).collect();
        let ratio = |a: &[f64], b: &[f64]| {
            Some(a.iter().sum::<f64>() / a.len() as f64 / (b.iter().sum::<f64>() / b.len() as f64))
        };
        let i1 = bootstrap(&num, &den, &ratio, 0.95, 2000, 7).unwrap();
        let i2 = bootstrap(&num, &den, &ratio, 0.95, 2000, 7).unwrap();
        assert_eq!(i1, i2);
        let r = ratio(&num, &den).unwrap();
        assert!(i1.lo < r && r < i1.hi, "{i1:?} {r}");
        assert!(i1.hi - i1.lo < 0.05, "{i1:?}");
        assert_eq!(i1.method, Method::Bootstrap);
        assert!(i1.label().starts_with('['));
    }

    #[test]
    fn grouped_bootstrap_resamples_within_groups() {
        let groups = vec![vec![1.0, 1.1, 0.9, 1.0], vec![2.0, 2.2, 1.8, 2.0]];
        let ratio = |g: &[Vec<f64>]| {
            let m = |v: &Vec<f64>| v.iter().sum::<f64>() / v.len() as f64;
            Some(m(&g[1]) / m(&g[0]))
        };
        let i = bootstrap_groups(&groups, &ratio, 0.95, 2000, 1).unwrap();
        assert!(
            i.lo < 2.0 && 2.0 < i.hi && i.lo > 1.6 && i.hi < 2.5,
            "{i:?}"
        );
        assert_eq!(i, bootstrap_groups(&groups, &ratio, 0.95, 2000, 1).unwrap());
        assert!(bootstrap_groups(&[vec![1.0], vec![2.0, 3.0]], &ratio, 0.95, 100, 1).is_err());
    }
}
