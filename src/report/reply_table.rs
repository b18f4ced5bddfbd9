//! The comparison table of `fslab reply`: per metric and point, the base's mean `± σ%`
//! and replicate count, the `%change` with its significance mark, the same for this
//! bundle, in the lkp style the lists know (rendered from [`super::reply_content`]).

use super::reply::{pad, para, rpad, short_name};
use super::reply_content::{Reply, ReplyTable};
use super::wrap::{shorten, width, MAIL_COLUMNS};
use crate::analysis::{fmt_sig, Basis, Comparison, ComparisonRow, Warmup};
use crate::store::Manifest;
/// How the table names its points.
struct PointLabels {
    /// Per row: `parent=0` when one axis differs between the points, the values of the
    /// axes that differ (`uml-trixie/rt/8k`) when several do, else the point's id.
    labels: Vec<String>,
    /// The axes the values are of (`kernel/layout/rtextsize`), when several differ.
    axes: String,
    /// `link=1`: what every point has.
    shared: Vec<String>,
}

/// The axes of the points that differ between them, and the values they share.
fn point_labels(rows: &[&ComparisonRow], m: &Manifest) -> PointLabels {
    let vars = |id: &str| -> Vec<(String, String)> {
        match m.points.iter().find(|p| p.id == id) {
            Some(p) => p
                .vars
                .iter()
                .map(|(k, v)| (k.clone(), crate::store::value_label(v)))
                .collect(),
            None => Vec::new(),
        }
    };
    let all: Vec<Vec<(String, String)>> = rows.iter().map(|r| vars(&r.point_id)).collect();
    let axes: Vec<String> = all
        .first()
        .map(|v| v.iter().map(|(k, _)| k.clone()).collect())
        .unwrap_or_default();
    let value = |vs: &[(String, String)], k: &str| {
        vs.iter()
            .find(|(a, _)| a == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let varying: Vec<&String> = axes
        .iter()
        .filter(|k| all.iter().any(|v| value(v, k) != value(&all[0], k)))
        .collect();
    let shared: Vec<String> = axes
        .iter()
        .filter(|k| !varying.contains(k))
        .map(|k| format!("{k}={}", value(&all[0], k)))
        .collect();
    let labels = rows
        .iter()
        .zip(&all)
        .map(|(r, v)| match varying.as_slice() {
            _ if v.is_empty() => r.point_id.clone(),
            [] => r.point_id.clone(),
            [k] => format!("{k}={}", value(v, k)),
            many => many
                .iter()
                .map(|k| value(v, k))
                .collect::<Vec<_>>()
                .join("/"),
        })
        .collect();
    let axes = if varying.len() > 1 {
        varying
            .iter()
            .map(|k| k.as_str())
            .collect::<Vec<_>>()
            .join("/")
    } else {
        String::new()
    };
    PointLabels {
        labels,
        axes,
        shared: if varying.is_empty() {
            Vec::new()
        } else {
            shared
        },
    }
}

fn mean_cell(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |m| fmt_sig(m, 4))
}

fn sd_cell(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |s| format!("{s:.0}%"))
}

fn warmup_words(w: Warmup) -> String {
    match w.count() {
        0 => "no warm-up left out".to_string(),
        1 => "iteration 1 left out as warm-up".to_string(),
        n => format!("iterations 1–{n} left out as warm-up"),
    }
}

/// The lkp-style table: `mean ± σ% n   %change   mean ± σ% n   metric point`.
pub(super) fn table(out: &mut Vec<String>, t: &ReplyTable, r: &Reply) {
    let rows: Vec<(&Comparison, &ComparisonRow)> = t
        .comparisons
        .iter()
        .flat_map(|c| c.rows.iter().map(move |row| (c, row)))
        .collect();
    if rows.is_empty() {
        let why = if t.comparisons.is_empty() {
            format!(
                "No table: neither runs table has the metrics asked for ({}).",
                t.missing_metrics.join(", ")
            )
        } else {
            format!(
                "No table: {} and this bundle have no point in common.",
                t.base
            )
        };
        para(out, &why);
        return;
    }
    let just_rows: Vec<&ComparisonRow> = rows.iter().map(|(_, row)| *row).collect();
    let PointLabels {
        labels,
        axes,
        shared,
    } = point_labels(&just_rows, &r.manifest);
    let one_metric = t.comparisons.len() == 1;
    let cells: Vec<[String; 7]> = rows
        .iter()
        .map(|(_, row)| {
            [
                mean_cell(row.base_mean),
                sd_cell(row.base_std_pct),
                row.base_n.to_string(),
                match (row.basis, row.change_pct) {
                    (Basis::NotComparable, _) | (_, None) => "-".to_string(),
                    (_, Some(c)) => format!("{c:+.1}%"),
                },
                row.mark.clone(),
                mean_cell(row.new_mean),
                sd_cell(row.new_std_pct),
            ]
        })
        .collect();
    let w = |i: usize, min: usize| {
        cells
            .iter()
            .map(|c| width(&c[i]))
            .max()
            .unwrap_or(0)
            .max(min)
    };
    let mean_w = w(0, 4).max(w(5, 4));
    let sd_w = w(1, 3).max(w(6, 3));
    let n_w = rows
        .iter()
        .map(|(_, row)| row.base_n.max(row.new_n).to_string().len())
        .max()
        .unwrap_or(1);
    let chg_w = w(3, 7);
    let mark_w = w(4, 0);
    let metric_w = if one_metric {
        0
    } else {
        rows.iter()
            .map(|(c, _)| width(&c.metric))
            .max()
            .unwrap_or(0)
    };
    let base_name = short_name(&t.base);
    let new_name = short_name(&r.bundle);
    // Columns wide enough for the bundles' names over them (up to 20), as lkp's are.
    let names_w = width(base_name).max(width(new_name));
    let fits = names_w <= 20;
    let mean_w = if fits {
        mean_w.max(names_w.saturating_sub(3 + sd_w + 1 + n_w))
    } else {
        mean_w
    };
    let side_w = mean_w + 3 + sd_w + 1 + n_w;
    let chg_group = chg_w + 1 + mark_w;
    // lkp leaves the ± σ% out where there is none (one sample).
    let side = |mean: &str, sd: &str, n: usize| {
        let sd = if sd == "-" {
            " ".repeat(3 + sd_w)
        } else {
            format!(" ± {}", rpad(sd, sd_w))
        };
        format!("{}{sd} {}", rpad(mean, mean_w), rpad(&n.to_string(), n_w))
    };
    let (top_base, top_new) = if fits {
        (base_name, new_name)
    } else {
        ("base", "new")
    };
    out.push(format!(
        "{}  {}  {}",
        rpad(top_base, side_w),
        " ".repeat(chg_group),
        rpad(top_new, side_w)
    ));
    out.push(format!(
        "{}  {}  {}",
        "-".repeat(side_w),
        "-".repeat(chg_group),
        "-".repeat(side_w)
    ));
    // lkp's headings: `%stddev` over the mean and its ± σ%, `%change` over the change.
    let head = format!("{} {}", rpad("%stddev", side_w - n_w - 1), rpad("n", n_w));
    let heads = format!(
        "{head}  {}  {head}",
        pad(&rpad("%change", chg_w), chg_group)
    );
    // The axes the names are values of, over the names when they fit there.
    let indent = if one_metric { 0 } else { metric_w + 1 };
    if axes.is_empty() {
        out.push(heads);
    } else if width(&heads) + 2 + indent + width(&axes) <= MAIL_COLUMNS {
        out.push(format!("{heads}  {}{axes}", " ".repeat(indent)));
    } else {
        out.push(heads);
        out.push(format!("  points: {axes}"));
    }
    let lines: Vec<(String, String)> = rows
        .iter()
        .zip(&cells)
        .zip(&labels)
        .map(|(((c, row), cell), label)| {
            let numbers = format!(
                "{}  {} {}  {}",
                side(&cell[0], &cell[1], row.base_n),
                rpad(&cell[3], chg_w),
                pad(&cell[4], mark_w),
                side(&cell[5], &cell[6], row.new_n)
            );
            let name = if one_metric {
                label.clone()
            } else {
                format!("{} {label}", pad(&c.metric, metric_w))
            };
            (numbers, name)
        })
        .collect();
    // A point's name after its numbers, or, when one does not fit there, every name on
    // a line of its own above its numbers.
    let inline = lines
        .iter()
        .all(|(n, name)| width(n) + 2 + width(name) <= MAIL_COLUMNS);
    for (numbers, name) in lines {
        if inline {
            out.push(format!("{numbers}  {name}"));
        } else {
            out.push(format!("  {}", shorten(&name, MAIL_COLUMNS - 2)));
            out.push(numbers);
        }
    }
    let first = t.comparisons[0].clone();
    let marks: Vec<String> = [("*", 1.0), ("**", 5.0), ("***", 50.0)]
        .iter()
        .filter(|(m, _)| rows.iter().any(|(_, row)| row.mark == *m))
        .map(|(m, d)| format!("{m} p(Holm) < {}", fmt_sig(first.alpha / d, 1)))
        .collect();
    let units: Vec<crate::analysis::Unit> = rows
        .iter()
        .flat_map(|(_, row)| [row.base_unit, row.new_unit])
        .collect();
    let unit = if units.iter().all(|u| *u == crate::analysis::Unit::Replicate) {
        "a sample is a replicate (fresh filesystem): the mean of its iterations".to_string()
    } else if units.iter().all(|u| *u == crate::analysis::Unit::Iteration) {
        "a sample is a steady-state iteration (one replicate a point)".to_string()
    } else {
        first.unit_text()
    };
    let mut legend = String::new();
    if !marks.is_empty() {
        legend.push_str(&format!("{}; ", marks.join(", ")));
    }
    if one_metric {
        legend.push_str(&format!("{}: ", first.metric));
    }
    legend.push_str(&format!(
        "{} → {}; {unit}, {}; %stddev and n over the samples; %change of the means, Welch's t-test Holm-adjusted over each metric's points",
        if fits { base_name.to_string() } else { format!("base {base_name}") },
        if fits { new_name.to_string() } else { format!("new {new_name}") },
        warmup_words(first.warmup)
    ));
    if rows
        .iter()
        .any(|(_, row)| row.basis == Basis::NotComparable)
    {
        legend.push_str("; -: not compared (a side has no steady state)");
    }
    if !shared.is_empty() {
        legend.push_str(&format!("; every point has {}", shared.join(",")));
    }
    legend.push('.');
    para(out, &legend);
    if !first.only_base.is_empty() {
        para(
            out,
            &format!("Only in {base_name}: {}.", first.only_base.join(", ")),
        );
    }
    if !first.only_new.is_empty() {
        para(
            out,
            &format!("Only in {new_name}: {}.", first.only_new.join(", ")),
        );
    }
    if !t.missing_metrics.is_empty() {
        para(
            out,
            &format!(
                "Not compared (not in both runs tables): {}.",
                t.missing_metrics.join(", ")
            ),
        );
    }
    if !first.environment.is_empty() {
        let keys: Vec<&str> = first
            .environment
            .iter()
            .map(|d| d.key.strip_prefix("environment.").unwrap_or(&d.key))
            .collect();
        para(
            out,
            &format!(
                "The two runs also differ in {} (`fslab compare` lists the values).",
                keys.join(", ")
            ),
        );
    }
}
