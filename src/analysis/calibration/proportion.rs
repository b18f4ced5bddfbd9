//! A rate out of a number of trials, with its interval: the exact (Clopper–Pearson)
//! interval, which calibration reports, and Wilson's score interval, for comparison.

use statrs::distribution::{Beta, ContinuousCDF, Normal};

/// `count` events in `of` trials.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proportion {
    pub count: u64,
    pub of: u64,
}

/// A two-sided interval of a rate, in [0, 1].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateInterval {
    pub lo: f64,
    pub hi: f64,
    pub level: f64,
}

impl Proportion {
    pub fn new(count: u64, of: u64) -> Proportion {
        Proportion {
            count: count.min(of),
            of,
        }
    }

    /// count ÷ of; None without trials.
    pub fn rate(self) -> Option<f64> {
        (self.of > 0).then(|| self.count as f64 / self.of as f64)
    }

    /// The Clopper–Pearson ("exact") interval at `level`: the quantiles α/2 and 1 − α/2
    /// of Beta(x, n − x + 1) and Beta(x + 1, n − x), with 0 and 1 at the ends (x = 0 gives
    /// [0, 1 − (α/2)^(1/n)]). It covers the true rate with probability at least `level`
    /// for every rate, which is why calibration reports it. Without trials: [0, 1].
    pub fn clopper_pearson(self, level: f64) -> RateInterval {
        let (x, n) = (self.count as f64, self.of as f64);
        let a = 1.0 - level;
        if self.of == 0 {
            return RateInterval {
                lo: 0.0,
                hi: 1.0,
                level,
            };
        }
        let lo = if self.count == 0 {
            0.0
        } else {
            beta_quantile(x, n - x + 1.0, a / 2.0)
        };
        let hi = if self.count == self.of {
            1.0
        } else {
            beta_quantile(x + 1.0, n - x, 1.0 - a / 2.0)
        };
        RateInterval { lo, hi, level }
    }

    /// Wilson's score interval at `level` (narrower than Clopper–Pearson, and it may
    /// cover a little less than `level` for some rates).
    pub fn wilson(self, level: f64) -> RateInterval {
        if self.of == 0 {
            return RateInterval {
                lo: 0.0,
                hi: 1.0,
                level,
            };
        }
        let z = Normal::standard().inverse_cdf(1.0 - (1.0 - level) / 2.0);
        let n = self.of as f64;
        let p = self.count as f64 / n;
        let denom = 1.0 + z * z / n;
        let centre = (p + z * z / (2.0 * n)) / denom;
        let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
        RateInterval {
            lo: (centre - half).max(0.0),
            hi: (centre + half).min(1.0),
            level,
        }
    }
}

/// The `q` quantile of Beta(a, b), by bisection on its distribution function (statrs's
/// own inverse is a coarse search; 100 halvings are exact to double precision).
fn beta_quantile(a: f64, b: f64, q: f64) -> f64 {
    let Ok(d) = Beta::new(a, b) else {
        return f64::NAN;
    };
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if d.cdf(mid) < q {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// Reference values: the Beta quantiles computed with mpmath at 30 digits (the
    /// definitions R's `binom.test(x, n)$conf.int` and `prop.test(x, n, correct =
    /// FALSE)$conf.int` use), e.g. `mpmath.betainc(a, b, 0, x, regularized=True)` inverted
    /// by bisection.
    #[test]
    fn intervals_match_r() {
        // 0 of 200: [0, 1 − 0.025^(1/200)] = [0, 0.018275].
        let i = Proportion::new(0, 200).clopper_pearson(0.95);
        assert_eq!(i.lo, 0.0);
        assert!(close(i.hi, 1.0 - 0.025f64.powf(1.0 / 200.0), 1e-9), "{i:?}");
        assert!(close(i.hi, 0.018275, 1e-6), "{i:?}");
        // 2 of 200: 0.001213 0.035655.
        let i = Proportion::new(2, 200).clopper_pearson(0.95);
        assert!(
            close(i.lo, 0.001213, 2e-6) && close(i.hi, 0.035655, 2e-6),
            "{i:?}"
        );
        // 5 of 100: 0.016432 0.112835.
        let i = Proportion::new(5, 100).clopper_pearson(0.95);
        assert!(
            close(i.lo, 0.016432, 2e-6) && close(i.hi, 0.112835, 2e-6),
            "{i:?}"
        );
        // 100 of 100: [0.963783, 1].
        let i = Proportion::new(100, 100).clopper_pearson(0.95);
        assert!(close(i.lo, 0.963783, 2e-6) && i.hi == 1.0, "{i:?}");
        // Wilson, 5 of 100: 0.021544 0.111750.
        let w = Proportion::new(5, 100).wilson(0.95);
        assert!(
            close(w.lo, 0.021544, 2e-6) && close(w.hi, 0.111750, 2e-6),
            "{w:?}"
        );
        // Clopper–Pearson is the wider.
        assert!(w.hi - w.lo < 0.112835 - 0.016432);
    }

    #[test]
    fn no_trials_is_the_whole_range() {
        let p = Proportion::new(0, 0);
        assert_eq!(p.rate(), None);
        assert_eq!(
            (p.clopper_pearson(0.95).lo, p.clopper_pearson(0.95).hi),
            (0.0, 1.0)
        );
        assert_eq!(Proportion::new(3, 2).count, 2);
        assert_eq!(Proportion::new(1, 4).rate(), Some(0.25));
    }
}
