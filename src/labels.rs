//! How fslab writes a metric and a number for a reader: a metric column's unit and
//! label from its name (`wall_s` → `wall time (s)`), and a number to a given count of
//! significant digits. A leaf: statistics (`analysis`), charts (`plot`) and the reports
//! all label with it, so that a column reads the same everywhere.

/// The unit of a metric column, from its name's suffix (`wall_s` → `s`).
pub fn metric_unit(metric: &str) -> &'static str {
    let suffixes: &[(&str, &str)] = &[
        ("_ms", "ms"),
        ("_us", "µs"),
        ("_ns", "ns"),
        ("_s", "s"),
        ("_bytes", "B"),
        ("_kib", "KiB"),
        ("_mib", "MiB"),
        ("_per_s", "/s"),
        ("_pct", "%"),
    ];
    // Longest suffix first so that `_per_s` wins over `_s`.
    let mut best: Option<(&str, &str)> = None;
    for (suffix, unit) in suffixes {
        if metric.ends_with(suffix) && best.is_none_or(|(b, _)| suffix.len() > b.len()) {
            best = Some((suffix, unit));
        }
    }
    best.map(|(_, u)| u).unwrap_or("")
}

/// A readable label for a metric: `wall_s` → `wall time (s)`, `files_per_s` →
/// `files per second (1/s)`, `wall_s_rel` (`analysis::relative_to`) → `wall time,
/// relative to the baseline (×)`.
pub fn metric_label(metric: &str) -> String {
    if let Some(base) = metric.strip_suffix("_rel") {
        let label = metric_label(base);
        let name = label
            .rsplit_once(" (")
            .map_or(label.as_str(), |(n, _)| n)
            .to_string();
        return format!("{name}, relative to the baseline (×)");
    }
    match metric {
        "wall_s" => return "wall time (s)".to_string(),
        "user_s" => return "user CPU time (s)".to_string(),
        "sys_s" => return "system CPU time (s)".to_string(),
        "real_s" => return "real time (s)".to_string(),
        _ => {}
    }
    if let Some(base) = metric.strip_suffix("_per_s") {
        return format!("{} per second (1/s)", base.replace('_', " "));
    }
    let unit = metric_unit(metric);
    if unit.is_empty() {
        return metric.replace('_', " ");
    }
    let base = metric
        .rsplit_once('_')
        .map(|(b, _)| b)
        .unwrap_or(metric)
        .replace('_', " ");
    format!("{base} ({unit})")
}

/// Format a number with `sig` significant digits, without exponent for everyday magnitudes.
pub fn fmt_sig(v: f64, sig: usize) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let mag = v.abs().log10().floor() as i32;
    if !(-4..15).contains(&mag) {
        return format!("{:.*e}", sig.saturating_sub(1), v);
    }
    let decimals = (sig as i32 - 1 - mag).max(0) as usize;
    format!("{v:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::{fmt_sig, metric_label, metric_unit};

    #[test]
    fn units_and_labels() {
        assert_eq!(metric_unit("wall_s"), "s");
        assert_eq!(metric_unit("files_per_s"), "/s");
        assert_eq!(metric_unit("iterations"), "");
        assert_eq!(metric_label("sys_s"), "system CPU time (s)");
        assert_eq!(metric_label("real_s"), "real time (s)");
        assert_eq!(metric_label("files_per_s"), "files per second (1/s)");
        assert_eq!(metric_label("fsck_ms"), "fsck (ms)");
        assert_eq!(
            metric_label("wall_s_rel"),
            "wall time, relative to the baseline (×)"
        );
    }

    #[test]
    fn significant_digits() {
        assert_eq!(fmt_sig(14.0963, 4), "14.10");
        assert_eq!(fmt_sig(0.0012345, 3), "0.00123");
        assert_eq!(fmt_sig(123456.0, 3), "123456");
        assert_eq!(fmt_sig(-2.5, 2), "-2.5");
    }
}
