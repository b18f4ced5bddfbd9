//! Numbers and names as the verdicts write them.

use crate::spec::claim::Stat;

/// A number for people: 4 significant digits, no trailing zeros after the point.
pub(super) fn num(v: f64) -> String {
    let s = crate::analysis::fmt_sig(v, 4);
    if s.contains('.') && !s.contains('e') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// An interval's level as the recipes write it: `95 %`, or `99.1 % repeated
/// (sequential)` for a bundle whose looks were corrected (`Evidence::level`).
pub(super) fn level_words(level: f64) -> String {
    if (level - 0.95).abs() < 1e-12 {
        "95 %".to_string()
    } else {
        format!(
            "{} % repeated (sequential)",
            crate::analysis::sequential::level_percent(level)
        )
    }
}

/// The name of a statistic as the recipes write it.
pub(super) fn stat_name(s: Stat) -> &'static str {
    match s {
        Stat::Mean => "mean",
        Stat::Median => "median",
        Stat::Min => "min",
        Stat::Max => "max",
        Stat::Sum => "sum",
        Stat::Count => "count",
    }
}
