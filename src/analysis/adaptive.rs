//! Adaptive repetitions: whether the runner should run one more iteration of a point.
//!
//! A [`RepeatPolicy`] has a minimum and a maximum number of iterations and, optionally,
//! a target coefficient of variation of the steady-state samples (the warm-up is left
//! out, as in [`crate::analysis::stats`]). The runner calls [`should_continue`] after
//! each iteration with the values so far and records the [`StopReason`] it gets, in the
//! manner of the Phoronix Test Suite's dynamic run count.

use super::stats::{mean, std_dev, Warmup};
use serde::Serialize;
use std::fmt;

/// How many iterations to run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RepeatPolicy {
    /// Never stop before this many iterations (at least 1).
    pub min: usize,
    /// Never run more than this many (taken as `min` when smaller).
    pub max: usize,
    /// Stop once the steady-state CV (σ / mean, percent) is at or below this.
    /// `None`: run exactly `min` iterations.
    pub target_cv_pct: Option<f64>,
    /// Iterations left out of the CV.
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

/// Why the runner stopped repeating.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum StopReason {
    /// No target CV: the fixed count was run.
    Fixed { n: usize },
    /// The steady-state CV reached the target.
    TargetReached { n: usize, cv_pct: f64 },
    /// The maximum was reached before the target (cv_pct is the last CV, if any).
    MaxReached { n: usize, cv_pct: Option<f64> },
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::Fixed { n } => write!(f, "fixed count of {n} iterations"),
            StopReason::TargetReached { n, cv_pct } => {
                write!(f, "CV {cv_pct:.2}% reached the target after {n} iterations")
            }
            StopReason::MaxReached {
                n,
                cv_pct: Some(cv),
            } => {
                write!(f, "maximum of {n} iterations reached with CV {cv:.2}%")
            }
            StopReason::MaxReached { n, cv_pct: None } => {
                write!(f, "maximum of {n} iterations reached")
            }
        }
    }
}

/// The runner's next step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Decision {
    Continue,
    Stop(StopReason),
}

/// Steady-state coefficient of variation in percent (`None` below two steady samples
/// or for a zero mean).
pub fn steady_cv_pct(samples: &[f64], warmup: Warmup) -> Option<f64> {
    let usable: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    let steady = usable.get(warmup.count()..).unwrap_or(&[]);
    let m = mean(steady)?;
    let s = std_dev(steady)?;
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
    let cv = steady_cv_pct(samples, policy.warmup);
    if n >= min {
        if let Some(cv) = cv.filter(|cv| *cv <= target) {
            return Decision::Stop(StopReason::TargetReached { n, cv_pct: cv });
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
        // 10.0, 10.1: mean 10.05, s = 0.0707107, CV = 0.7036 %.
        match should_continue(&[18.8, 10.0, 10.1], &p) {
            Decision::Stop(StopReason::TargetReached { n: 3, cv_pct }) => {
                assert!((cv_pct - 0.070710678 / 10.05 * 100.0).abs() < 1e-6)
            }
            other => panic!("unexpected {other:?}"),
        }
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
        assert!(matches!(
            should_continue(&[1.0, 1.0, 1.0, 1.0], &p),
            Decision::Stop(StopReason::TargetReached { n: 4, .. })
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
