//! What a design can detect at a given spread: the usual two-sample t approximation
//! (equal spread and n a side, two-sided level α), in relative terms. With the spread as
//! a coefficient of variation c of the replicate means, a relative difference δ is
//! detected with power 1 − β when
//!
//! ```text
//! δ ≥ (t_{1−α/2, 2n−2} + t_{1−β, 2n−2}) · c · √(2/n)
//! ```
//!
//! This is how `fslab calibrate` says how many replicates a side an effect would need
//! at the spread it measured; the injected-effect runs measure the power itself.

use statrs::distribution::{ContinuousCDF, StudentsT};

fn t_quantile(p: f64, df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |d| d.inverse_cdf(p))
}

/// The smallest relative difference (0.02 for 2 %) that `n` replicates a side detect
/// with probability `power` at two-sided level `alpha`, for a CV `cv` (a fraction) of
/// the replicate means. None below two replicates a side.
pub fn detectable_effect(cv: f64, n: usize, alpha: f64, power: f64) -> Option<f64> {
    if n < 2 || !cv.is_finite() || cv < 0.0 {
        return None;
    }
    let df = 2.0 * n as f64 - 2.0;
    let z = t_quantile(1.0 - alpha / 2.0, df) + t_quantile(power, df);
    Some(z * cv * (2.0 / n as f64).sqrt())
}

/// The fewest replicates a side (at most `max`) that detect a relative difference
/// `effect` with probability `power`; None when even `max` does not.
pub fn replicates_for(cv: f64, effect: f64, alpha: f64, power: f64, max: usize) -> Option<usize> {
    (2..=max).find(|&n| detectable_effect(cv, n, alpha, power).is_some_and(|d| d <= effect))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textbook_sample_sizes() {
        // A one-σ difference at α = 0.05 and 80 % power needs 17 a side by the t
        // approximation (the normal one gives 15.7; R's power.t.test(delta = 1, sd = 1,
        // power = 0.8) says 16.7, so 17).
        assert_eq!(replicates_for(1.0, 1.0, 0.05, 0.8, 100), Some(17));
        // 90 % power for a 2 % effect at a 1 % CV: power.t.test(delta = 2, sd = 1,
        // power = 0.9) gives n = 6.4, so 7.
        assert_eq!(replicates_for(0.01, 0.02, 0.05, 0.9, 100), Some(7));
        // At a 3 % CV it takes many more, and a budget of 20 is not enough.
        assert_eq!(replicates_for(0.03, 0.02, 0.05, 0.9, 20), None);
        assert!(replicates_for(0.03, 0.02, 0.05, 0.9, 100).unwrap() > 40);
        // The detectable effect shrinks as √n.
        let d3 = detectable_effect(0.01, 3, 0.05, 0.9).unwrap();
        let d12 = detectable_effect(0.01, 12, 0.05, 0.9).unwrap();
        assert!(d3 > 2.0 * d12 && d12 > 0.01, "{d3} {d12}");
        assert_eq!(detectable_effect(0.01, 1, 0.05, 0.9), None);
    }
}
