//! Statistics of plain samples (`&[f64]`): means, quantiles, spread, Student-t intervals,
//! the modified z-score, Welch's test and Holm's adjustment. Public so that notebooks and
//! the runner can use them on any samples.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Arithmetic mean; `None` for no samples.
pub fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        None
    } else {
        Some(xs.iter().sum::<f64>() / xs.len() as f64)
    }
}

/// Median (mean of the two middle values for an even count); `None` for no samples.
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// Quantile `q` in [0, 1] by linear interpolation between order statistics (R's default,
/// type 7; Hyndman and Fan 1996). `None` for no samples or `q` out of range.
pub fn quantile(xs: &[f64], q: f64) -> Option<f64> {
    if xs.is_empty() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let h = (v.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    Some(v[lo] + (h - lo as f64) * (v[hi] - v[lo]))
}

/// Sample standard deviation (divisor n − 1); `None` below two samples.
pub fn std_dev(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 {
        return None;
    }
    let m = mean(xs)?;
    let ss: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
    Some((ss / (xs.len() - 1) as f64).sqrt())
}

/// Quantile `p` of Student's t distribution with `df` degrees of freedom.
pub fn t_quantile(p: f64, df: f64) -> Option<f64> {
    let valid = p > 0.0 && p < 1.0 && df > 0.0;
    if !valid {
        return None;
    }
    StudentsT::new(0.0, 1.0, df).ok().map(|t| t.inverse_cdf(p))
}

/// Two-sided Student-t confidence interval of the mean at `level` (e.g. 0.95):
/// `mean ± t(1 − (1 − level)/2, n − 1) · s/√n`. `None` below two samples.
pub fn t_interval(xs: &[f64], level: f64) -> Option<(f64, f64)> {
    let n = xs.len();
    let m = mean(xs)?;
    let s = std_dev(xs)?;
    let t = t_quantile(1.0 - (1.0 - level) / 2.0, (n - 1) as f64)?;
    let half = t * s / (n as f64).sqrt();
    Some((m - half, m + half))
}

/// Harmonic mean, the right average for rates (ops/s over equal amounts of work);
/// `None` unless every sample is positive.
pub fn harmonic_mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() || xs.iter().any(|x| x.is_nan() || *x <= 0.0) {
        return None;
    }
    Some(xs.len() as f64 / xs.iter().map(|x| 1.0 / x).sum::<f64>())
}

/// Geometric mean, the right average for ratios (speed-ups, normalised results);
/// `None` unless every sample is positive.
pub fn geometric_mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() || xs.iter().any(|x| x.is_nan() || *x <= 0.0) {
        return None;
    }
    Some((xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp())
}

/// Modified z-scores of `xs` against the median and median absolute deviation of
/// `reference` (Iglewicz and Hoaglin 1993): `M = 0.6745 (x − median) / MAD`. When the
/// MAD is zero the mean absolute deviation stands in (`M = (x − median) / (1.253314 ·
/// MeanAD)`); when that is zero too every score is 0 for values equal to the median and
/// ±∞ otherwise. Empty `reference` gives an empty vector.
pub fn modified_z_scores_against(reference: &[f64], xs: &[f64]) -> Vec<f64> {
    let Some(med) = median(reference) else {
        return Vec::new();
    };
    let deviations: Vec<f64> = reference.iter().map(|x| (x - med).abs()).collect();
    let mad = median(&deviations).unwrap_or(0.0);
    let scale = if mad > 0.0 {
        mad / 0.6745
    } else {
        1.253314 * mean(&deviations).unwrap_or(0.0)
    };
    xs.iter()
        .map(|x| {
            let d = x - med;
            if scale > 0.0 {
                d / scale
            } else if d == 0.0 {
                0.0
            } else {
                d.signum() * f64::INFINITY
            }
        })
        .collect()
}

/// Modified z-scores of `xs` against the median and MAD of `reference`, with the MAD
/// taken as at least one `resolution` step: under MAD = 0 a difference of one step
/// scores 0.6745 and is not an outlier (a step of 0.01 s: 0.004 among five 0.008 scores
/// 0.27). Without a resolution this is [`modified_z_scores_against`].
pub fn modified_z_scores_resolved(
    reference: &[f64],
    xs: &[f64],
    resolution: Option<f64>,
) -> Vec<f64> {
    let Some(step) = resolution.filter(|r| *r > 0.0 && r.is_finite()) else {
        return modified_z_scores_against(reference, xs);
    };
    let Some(med) = median(reference) else {
        return Vec::new();
    };
    let deviations: Vec<f64> = reference.iter().map(|x| (x - med).abs()).collect();
    let mad = median(&deviations).unwrap_or(0.0).max(step);
    xs.iter().map(|x| 0.6745 * (x - med) / mad).collect()
}

/// Modified z-scores of `xs` against their own median and MAD.
pub fn modified_z_scores(xs: &[f64]) -> Vec<f64> {
    modified_z_scores_against(xs, xs)
}

/// Result of Welch's unequal-variance t-test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WelchTest {
    /// t statistic of `mean(a) − mean(b)`.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p_value: f64,
}

/// Why no t-test was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum NoTest {
    /// A side has fewer than two samples.
    TooFewSamples { a: usize, b: usize },
    /// Both sides have zero variance: the data are essentially constant (R's `t.test`
    /// refuses the same case), so there is no p-value, whatever the means.
    ConstantData,
}

impl std::fmt::Display for NoTest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoTest::TooFewSamples { a, b } => {
                write!(f, "too few samples for a test ({a} against {b})")
            }
            NoTest::ConstantData => f.write_str("constant data: both sides have zero variance"),
        }
    }
}

/// Welch's two-sample t-test (two-sided), as R's `t.test(a, b)`. No test when either
/// sample has fewer than two values, or when both variances are zero (constant data:
/// no p-value rather than p = 0 or 1).
pub fn welch_t_test(a: &[f64], b: &[f64]) -> Result<WelchTest, NoTest> {
    let too_few = NoTest::TooFewSamples {
        a: a.len(),
        b: b.len(),
    };
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    let (m1, m2) = (mean(a).ok_or(too_few)?, mean(b).ok_or(too_few)?);
    let (s1, s2) = (std_dev(a).ok_or(too_few)?, std_dev(b).ok_or(too_few)?);
    let (v1, v2) = (s1 * s1 / n1, s2 * s2 / n2);
    let se = (v1 + v2).sqrt();
    if se == 0.0 || !se.is_finite() {
        return Err(NoTest::ConstantData);
    }
    let t = (m1 - m2) / se;
    let df = (v1 + v2).powi(2) / (v1 * v1 / (n1 - 1.0) + v2 * v2 / (n2 - 1.0));
    let dist = StudentsT::new(0.0, 1.0, df).map_err(|_| NoTest::ConstantData)?;
    let p_value = (2.0 * dist.cdf(-t.abs())).min(1.0);
    Ok(WelchTest { t, df, p_value })
}

/// Holm's step-down adjustment of p-values for multiple comparisons (R's
/// `p.adjust(p, "holm")`), over the p-values that are present; `None`s stay `None` and
/// do not count as tests.
pub fn holm_adjust(p: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut present: Vec<(usize, f64)> = p
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| (i, v)))
        .collect();
    present.sort_by(|a, b| a.1.total_cmp(&b.1));
    let m = present.len();
    let mut out = vec![None; p.len()];
    let mut running = 0.0f64;
    for (rank, (i, v)) in present.into_iter().enumerate() {
        running = running.max(((m - rank) as f64 * v).min(1.0));
        out[i] = Some(running);
    }
    out
}

/// Descriptive statistics of one sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    /// Sample standard deviation; `None` below two samples.
    pub std: Option<f64>,
    pub min: f64,
    pub max: f64,
    /// Coefficient of variation, σ / mean, in percent.
    pub cv_pct: Option<f64>,
    /// Confidence level of `ci`.
    pub ci_level: f64,
    /// Student-t confidence interval of the mean.
    pub ci: Option<(f64, f64)>,
    pub hmean: Option<f64>,
    pub gmean: Option<f64>,
}

/// Summarise a sample; `None` when it is empty. Non-finite values are ignored.
pub fn summarize(xs: &[f64], confidence: f64) -> Option<Summary> {
    let xs: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    let m = mean(&xs)?;
    let std = std_dev(&xs);
    Some(Summary {
        n: xs.len(),
        mean: m,
        median: median(&xs)?,
        std,
        min: xs.iter().copied().fold(f64::INFINITY, f64::min),
        max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        cv_pct: std.filter(|_| m != 0.0).map(|s| 100.0 * s / m.abs()),
        ci_level: confidence,
        ci: t_interval(&xs, confidence),
        hmean: harmonic_mean(&xs),
        gmean: geometric_mean(&xs),
    })
}
