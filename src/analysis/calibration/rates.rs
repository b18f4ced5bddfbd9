//! The rates of a calibration: how often each verdict came out, over its comparisons,
//! with the 95 % Clopper–Pearson interval, and what that rate means here (a
//! false-positive rate in an A/A calibration, power or coverage with an injected effect).

use super::comparison::CalibrationRow;
use super::proportion::Proportion;
use crate::analysis::compare::Significance;
use crate::analysis::tiers::Tier;
use crate::store::{CalibrationDesign, RateEvent, RateRecord};

/// Whether `row` shows `event`; None when the row cannot (coverage without a truth or
/// an interval).
pub fn happened(event: RateEvent, row: &CalibrationRow) -> Option<bool> {
    let slower = row.change_pct.is_some_and(|c| c > 0.0);
    let below = row.p_adjusted.is_some();
    Some(match event {
        RateEvent::CompareSignificant => row.compare == Significance::Significant,
        RateEvent::CompareSignificantSlower => row.compare == Significance::Significant && slower,
        RateEvent::CompareBelowAlpha => {
            below
                && matches!(
                    row.compare,
                    Significance::Significant | Significance::WithinNoise
                )
        }
        RateEvent::TierDiffers => row.tier_same == Tier::NotReproduced,
        RateEvent::TierSame => row.tier_same == Tier::Reproduced,
        RateEvent::TierSlower => row.tier_slower == Tier::Reproduced,
        RateEvent::IntervalCovers => return row.covers,
    })
}

/// A fraction as a percentage to a thousandth, without trailing zeros (0.025 → `2.5`).
fn fmt_pct(x: f64) -> String {
    format!("{}", (100_000.0 * x).round() / 1000.0)
}

/// What a rate is in this calibration, and the rate the rule is designed to have, if
/// it has one.
fn meaning(event: RateEvent, design: &CalibrationDesign) -> (String, Option<f64>) {
    let a = design.alpha;
    let t = design.threshold_pct;
    let injected = design.injection.is_some();
    let (text, nominal) = match (event, injected) {
        (RateEvent::CompareSignificant, false) => (
            format!("false-positive rate (at most α = {a} by design, less with the {t} % noise threshold)"),
            None,
        ),
        (RateEvent::CompareSignificant, true) => {
            ("detection rate, either direction".to_string(), None)
        }
        (RateEvent::CompareSignificantSlower, false) => {
            ("false-positive rate, B called slower".to_string(), None)
        }
        (RateEvent::CompareSignificantSlower, true) => (
            format!("power of `fslab compare`'s verdict (p < α and a change of at least {t} %)"),
            None,
        ),
        (RateEvent::CompareBelowAlpha, false) => (
            format!("level of the t-test alone (α = {a} by design): a check that the replicates are exchangeable"),
            Some(a),
        ),
        (RateEvent::CompareBelowAlpha, true) => {
            ("power of the t-test alone (either direction)".to_string(), None)
        }
        (RateEvent::TierDiffers, false) => (
            format!("false-positive rate (a difference beyond ± {t} % called)"),
            None,
        ),
        (RateEvent::TierDiffers, true) => (format!("difference beyond ± {t} % called"), None),
        (RateEvent::TierSame, false) => (
            format!("the same within ± {t} % shown (correct, not an error)"),
            None,
        ),
        (RateEvent::TierSame, true) => (
            format!("the same within ± {t} % shown (a miss of the injected effect)"),
            None,
        ),
        (RateEvent::TierSlower, false) => (
            format!(
                "false-positive rate of a one-sided claim ({} % by design: the lower end of a {} % interval)",
                fmt_pct(a / 2.0),
                fmt_pct(1.0 - a)
            ),
            Some(a / 2.0),
        ),
        (RateEvent::TierSlower, true) => ("power of the tier rule".to_string(), None),
        (RateEvent::IntervalCovers, false) => (
            format!("coverage of 1 ({} % by design)", fmt_pct(1.0 - a)),
            Some(1.0 - a),
        ),
        (RateEvent::IntervalCovers, true) => (
            format!("coverage of the injected effect ({} % by design)", fmt_pct(1.0 - a)),
            Some(1.0 - a),
        ),
    };
    (text, nominal)
}

/// Every rate over `rows`.
pub fn rates(rows: &[CalibrationRow], design: &CalibrationDesign) -> Vec<RateRecord> {
    RateEvent::ALL
        .iter()
        .map(|&event| {
            let seen: Vec<bool> = rows.iter().filter_map(|r| happened(event, r)).collect();
            let p = Proportion::new(
                seen.iter().filter(|&&b| b).count() as u64,
                seen.len() as u64,
            );
            let i = p.clopper_pearson(0.95);
            let (meaning, nominal) = meaning(event, design);
            RateRecord {
                event,
                meaning,
                count: p.count,
                of: p.of,
                rate: p.rate(),
                lo: (p.of > 0).then_some(i.lo),
                hi: (p.of > 0).then_some(i.hi),
                nominal,
            }
        })
        .collect()
}

/// `0.5 % (1 of 200; 95 % CI 0.013–2.8 %)`.
pub fn rate_text(r: &RateRecord) -> String {
    let pct = |x: f64| crate::analysis::fmt_sig(100.0 * x, 2);
    match (r.rate, r.lo, r.hi) {
        (Some(x), Some(lo), Some(hi)) => format!(
            "{} % ({} of {}; 95 % CI {}–{} %)",
            pct(x),
            r.count,
            r.of,
            pct(lo),
            pct(hi)
        ),
        _ => "no comparisons".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::comparison::compare_block;
    use super::*;
    use crate::analysis::calibration::comparison::tests::{design, runs};

    #[test]
    fn counts_and_intervals_over_the_rows() {
        let a: Vec<&[f64]> = vec![&[0.0, 1.000], &[0.0, 1.001], &[0.0, 0.999]];
        let same = a.clone();
        let slow: Vec<&[f64]> = vec![&[0.0, 1.10], &[0.0, 1.11], &[0.0, 1.09]];
        let d = design(3);
        let rows = vec![
            compare_block(&runs(&a, &same), &d, 1, Some(1.0)).unwrap(),
            compare_block(&runs(&a, &slow), &d, 1, Some(1.0)).unwrap(),
        ];
        let r = rates(&rows, &d);
        let get = |e: RateEvent| r.iter().find(|x| x.event == e).unwrap();
        let sig = get(RateEvent::CompareSignificant);
        assert_eq!((sig.count, sig.of), (1, 2));
        assert_eq!(sig.rate, Some(0.5));
        assert!(
            sig.meaning.starts_with("false-positive rate"),
            "{}",
            sig.meaning
        );
        assert_eq!(get(RateEvent::TierDiffers).count, 1);
        assert_eq!(get(RateEvent::TierSame).count, 1);
        assert_eq!(get(RateEvent::IntervalCovers).count, 1);
        assert_eq!(get(RateEvent::TierSlower).nominal, Some(0.025));
        assert_eq!(
            rate_text(sig),
            format!(
                "50 % (1 of 2; 95 % CI {}–{} %)",
                crate::analysis::fmt_sig(100.0 * sig.lo.unwrap(), 2),
                crate::analysis::fmt_sig(100.0 * sig.hi.unwrap(), 2)
            )
        );
        // Without rows there is no rate, and the text says so.
        let none = rates(&[], &d);
        assert!(none.iter().all(|x| x.rate.is_none() && x.of == 0));
        assert_eq!(rate_text(&none[0]), "no comparisons");
    }

    #[test]
    fn computed_again_with_another_metric_and_block_size() {
        // Six pairs; wall time says B is slower, CPU time (user + sys) says the same.
        let a: Vec<&[f64]> = vec![&[0.0, 1.00]; 6];
        let b: Vec<&[f64]> = vec![
            &[0.0, 1.30],
            &[0.0, 1.31],
            &[0.0, 1.29],
            &[0.0, 1.30],
            &[0.0, 1.31],
            &[0.0, 1.29],
        ];
        let mut d = design(3);
        let (rows, rec) = crate::analysis::calibration::reanalyse(&runs(&a, &b), &d).unwrap();
        assert_eq!((rows.len(), rec.comparisons), (2, 2));
        assert!(rows.iter().all(|r| r.tier_same == Tier::NotReproduced));
        // The fixture's user_s and sys_s are 0: `cpu_s` exists, and is constant.
        d.metric = crate::analysis::calibration::CPU_METRIC.into();
        d.per_side = 2;
        let (rows, _) = crate::analysis::calibration::reanalyse(&runs(&a, &b), &d).unwrap();
        assert_eq!(rows.len(), 3);
        assert!(rows.iter().all(|r| r.a_mean == Some(0.0)), "{rows:?}");
    }
}
