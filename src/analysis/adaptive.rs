//! Adaptive repetitions: whether the runner should run one more iteration of a point.
//!
//! A [`RepeatPolicy`] has a minimum and a maximum number of iterations and, optionally,
//! a target coefficient of variation of the steady-state samples. The steady state is
//! the one warm-up rule of [`crate::analysis::stats`] ([`is_warmup`]: iterations 1..=k
//! are warm-up, whatever their status; failed iterations are never steady state), so the
//! CV the runner stops on is the CV the statistics report with the same warm-up. The CV
//! rule may stop only once there are at least [`MIN_STEADY_FOR_CV`] steady-state
//! samples: with two or three, a sample CV below the target is too often luck (with a
//! true CV of 5 % and a 2 % target, 35 % of points stopped, most with two samples, and
//! their 95 % intervals covered the true mean 83 % of the time). The runner calls
//! [`should_continue`] after each iteration with the values so far and records the
//! [`StopReason`] it gets, in the manner of the Phoronix Test Suite's dynamic run count.

use super::stats::{is_warmup, mean, std_dev, Warmup};
pub use crate::store::StopReason;
use serde::Serialize;

/// The fewest steady-state samples the CV rule may stop on.
pub const MIN_STEADY_FOR_CV: usize = 5;

/// How many iterations to run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RepeatPolicy {
    /// Never stop before this many iterations (at least 1).
    pub min: usize,
    /// Never run more than this many (taken as `min` when smaller).
    pub max: usize,
    /// Stop once the steady-state CV (σ / mean, percent) is at or below this, with at
    /// least [`MIN_STEADY_FOR_CV`] steady-state samples. `None`: run exactly `min`
    /// iterations.
    pub target_cv_pct: Option<f64>,
    /// Iterations left out of the CV (the warm-up rule).
    pub warmup: Warmup,
}

impl RepeatPolicy {
    /// Exactly `n` iterations.
    pub fn fixed(n: usize) -> Self {
        RepeatPolicy {
            min: n,
            max: n,
            target_cv_pct: None,
            warmup: Warmup::default(),
        }
    }

    fn bounds(&self) -> (usize, usize) {
        let min = self.min.max(1);
        (min, self.max.max(min))
    }
}

/// The runner's next step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Decision {
    Continue,
    Stop(StopReason),
}

/// The steady-state values of iterations 1, 2, … (in order; a non-finite value is a
/// failed iteration: it counts as run, never as steady state), by the warm-up rule.
pub fn steady_values(samples: &[f64], warmup: Warmup) -> Vec<f64> {
    samples
        .iter()
        .enumerate()
        .filter(|(i, x)| !is_warmup(*i as i64 + 1, warmup) && x.is_finite())
        .map(|(_, x)| *x)
        .collect()
}

/// Steady-state coefficient of variation in percent (`None` below two steady samples
/// or for a zero mean).
pub fn steady_cv_pct(samples: &[f64], warmup: Warmup) -> Option<f64> {
    let steady = steady_values(samples, warmup);
    let m = mean(&steady)?;
    let s = std_dev(&steady)?;
    (m != 0.0).then(|| 100.0 * s / m.abs())
}

/// Decide whether to run another iteration, given the metric values of the iterations
/// run so far (in order; non-finite values, e.g. from failed iterations, count as run
/// but not in the CV).
pub fn should_continue(samples: &[f64], policy: &RepeatPolicy) -> Decision {
    let n = samples.len();
    let (min, max) = policy.bounds();
    let Some(target) = policy.target_cv_pct else {
        return if n >= min {
            Decision::Stop(StopReason::Fixed { n })
        } else {
            Decision::Continue
        };
    };
    let steady_n = steady_values(samples, policy.warmup).len();
    let cv = steady_cv_pct(samples, policy.warmup);
    if n >= min && steady_n >= MIN_STEADY_FOR_CV {
        if let Some(cv) = cv.filter(|cv| *cv <= target) {
            return Decision::Stop(StopReason::TargetReached {
                n,
                steady_n,
                cv_pct: cv,
            });
        }
    }
    if n >= max {
        return Decision::Stop(StopReason::MaxReached { n, cv_pct: cv });
    }
    Decision::Continue
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(min: usize, max: usize, target: Option<f64>) -> RepeatPolicy {
        RepeatPolicy {
            min,
            max,
            target_cv_pct: target,
            warmup: Warmup::First(1),
        }
    }

    #[test]
    fn fixed_count_without_target() {
        let p = RepeatPolicy::fixed(3);
        assert_eq!(should_continue(&[1.0, 2.0], &p), Decision::Continue);
        assert_eq!(
            should_continue(&[1.0, 2.0, 3.0], &p),
            Decision::Stop(StopReason::Fixed { n: 3 })
        );
    }

    #[test]
    fn stops_when_target_cv_is_reached_after_min() {
        let p = policy(3, 10, Some(1.0));
        // Warm-up 18.8 is left out; 10, 10 has CV 0 but n < min.
        assert_eq!(should_continue(&[18.8, 10.0], &p), Decision::Continue);
        // Two or four steady samples are too few for the CV rule, however small the CV.
        assert_eq!(should_continue(&[18.8, 10.0, 10.1], &p), Decision::Continue);
        assert_eq!(
            should_continue(&[18.8, 10.0, 10.1, 10.0, 10.1], &p),
            Decision::Continue
        );
        // 10.0, 10.1, 10.0, 10.1, 10.0: mean 10.04, s = 0.0547723, CV = 0.54554 %.
        match should_continue(&[18.8, 10.0, 10.1, 10.0, 10.1, 10.0], &p) {
            Decision::Stop(StopReason::TargetReached {
                n: 6,
                steady_n: 5,
                cv_pct,
            }) => assert!((cv_pct - 0.054772256 / 10.04 * 100.0).abs() < 1e-6),
            other => panic!("unexpected {other:?}"),
        }
        // A failed iteration (NaN) is run but never steady state, and never moves the
        // warm-up: the rule is by iteration number.
        assert_eq!(
            steady_values(&[f64::NAN, 10.0, 10.1], Warmup::First(1)),
            [10.0, 10.1]
        );
    }

    #[test]
    fn continues_while_noisy_and_stops_at_max() {
        let p = policy(3, 5, Some(1.0));
        let noisy = [18.8, 10.0, 12.0, 9.0];
        assert_eq!(should_continue(&noisy, &p), Decision::Continue);
        let noisy5 = [18.8, 10.0, 12.0, 9.0, 11.0];
        match should_continue(&noisy5, &p) {
            Decision::Stop(StopReason::MaxReached {
                n: 5,
                cv_pct: Some(cv),
            }) => {
                assert!(cv > 1.0);
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn inconsistent_bounds_are_clamped() {
        let p = policy(4, 2, Some(50.0));
        assert_eq!(should_continue(&[1.0, 1.0, 1.0], &p), Decision::Continue);
        // max is raised to min (4); four iterations are too few for the CV rule.
        assert!(matches!(
            should_continue(&[1.0, 1.0, 1.0, 1.0], &p),
            Decision::Stop(StopReason::MaxReached { n: 4, .. })
        ));
        let zero = policy(0, 0, None);
        assert!(matches!(should_continue(&[], &zero), Decision::Continue));
    }

    #[test]
    fn reason_is_readable() {
        let r = StopReason::MaxReached {
            n: 20,
            cv_pct: Some(4.25),
        };
        assert_eq!(
            r.to_string(),
            "maximum of 20 iterations reached with CV 4.25%"
        );
    }
}
