//! The claims section of the HTML report, as a paper's results section: what the
//! verdicts share said once, then a table with one row per verdict (its tier as a
//! coloured badge, its number and interval in words and as a forest-plot bar against
//! the expected band and the post's number), fslab's own variants apart, then one
//! chart per claim. Renders [`ClaimsContent`]; computes nothing.

use super::cells::{claims_line, post_text, replication_text};
use super::claims::{common_scale, own_scale, ClaimRow};
use super::content::ClaimsContent;
use super::forest::{bar, forest_svg, sample};
use super::{html_escape, ReportError};
use crate::analysis::claims::ClaimVerdict;
use crate::analysis::interval::Method;
use crate::analysis::tiers::Tier;
use crate::labels::fmt_sig;

/// The CSS class of a tier's badge, one per tier.
pub fn tier_class(t: Tier) -> &'static str {
    match t {
        Tier::Reproduced => "tier-reproduced",
        Tier::ReproducedWithSubstitutes => "tier-reproduced-with-substitutes",
        Tier::NotReproduced => "tier-not-reproduced",
        Tier::Inconclusive => "tier-inconclusive",
        Tier::NotApplicable => "tier-not-applicable",
    }
}

/// The styles of the section (the page's stylesheet includes them).
pub const CSS: &str = "table.claims{width:100%}table.claims td{vertical-align:middle}\
table.claims td.what{width:31%}table.claims .here{white-space:nowrap}table.claims td.bar{width:200px}table.claims .id{font-weight:bold;font-family:monospace;font-size:.95em}\
table.claims .text{color:#444;margin:.15em 0}table.claims .scale{color:#666;font-size:.85em}\
table.claims details{font-size:.85em;color:#444}table.claims summary{cursor:pointer;color:#2a5d8f}\
table.claims small{color:#555}table.claims .base{margin-top:.3em;font-size:.85em;color:#555}\
tr.group th{background:#fafafa;font-weight:normal;font-style:italic;color:#555}\
.tier{display:inline-block;padding:.12em .6em;border-radius:.9em;font-size:.85em;font-weight:600;line-height:1.3}\
.tier.small{font-size:.75em;padding:0 .45em}\
.tier-reproduced{background:#2e7d32;color:#fff}\
.tier-reproduced-with-substitutes{background:#b9dfb4;color:#1b4d20}\
.tier-not-reproduced{background:#c62828;color:#fff}\
.tier-inconclusive{background:#f6c344;color:#4a3500}\
.tier-not-applicable{background:#e3e3e3;color:#555}\
.shared{color:#333;font-size:.92em}.shared ul{margin:.2em 0 .6em}\
p.legend{font-size:.85em;color:#555}p.legend svg{vertical-align:middle}\
figure.claim svg{max-width:100%;height:auto}";

fn badge(v: &ClaimVerdict, small: bool) -> String {
    format!(
        "<span class=\"tier {}{}\">{}</span>",
        tier_class(v.tier),
        if small { " small" } else { "" },
        html_escape(v.tier_label())
    )
}

/// An interval's method in words.
fn method_name(m: Method) -> &'static str {
    match m {
        Method::FiellerWelch => "Fieller–Welch",
        Method::Bootstrap => "bootstrap",
        Method::StudentT => "Student t",
    }
}

/// A verdict's number with its interval: `1.278 [0.9377, 1.999]`, and under it how the
/// interval was made and over what samples (`95 %, Fieller–Welch · replicate, 3 a
/// side`), or why there is no interval.
fn number_cell(v: &ClaimVerdict) -> String {
    let Some(m) = v.measured else {
        return "—".to_string();
    };
    let mut s = format!(
        "<span class=\"here\"><span class=\"value\">{}</span>",
        html_escape(&fmt_sig(m, 4))
    );
    let mut under = Vec::new();
    match (v.interval, &v.no_interval) {
        (Some(i), _) => {
            s.push_str(&format!(
                " <span class=\"ci\">[{}, {}]</span>",
                html_escape(&fmt_sig(i.lo, 4)),
                html_escape(&fmt_sig(i.hi, 4))
            ));
            under.push(format!(
                "{} %, {}",
                (i.level * 100.0).round(),
                method_name(i.method)
            ));
        }
        (None, Some(why)) => under.push(format!("no interval: {why}")),
        (None, None) => under.push("no interval".to_string()),
    }
    s.push_str("</span>");
    let reps = replication_text(v);
    if !reps.is_empty() {
        under.push(reps);
    }
    s.push_str(&format!(
        "<br><small>{}</small>",
        html_escape(&under.join(" · "))
    ));
    s
}

/// The claim in words, its scale when it is not the common one, and why its tier.
fn what_cell(v: &ClaimVerdict, common: &[&str]) -> String {
    let mut s = format!(
        "<a class=\"id\" href=\"#chart-{}\">{}</a><div class=\"text\">{}</div>",
        html_escape(&v.id),
        html_escape(&v.name()),
        html_escape(&v.text)
    );
    let scale = own_scale(v, common);
    if !scale.is_empty() {
        s.push_str(&format!(
            "<div class=\"scale\">scale: {}</div>",
            html_escape(&scale)
        ));
    }
    s.push_str(&format!(
        "<details><summary>why</summary><p>{}</p>",
        html_escape(&v.reason)
    ));
    if let Some(r) = &v.reading {
        s.push_str(&format!("<p>reading of the post: {}</p>", html_escape(r)));
    }
    if let Some(p) = v.power_line() {
        s.push_str(&format!("<p>{}</p>", html_escape(&p)));
    }
    if let Some(n) = &v.note {
        s.push_str(&format!("<p>note: {}</p>", html_escape(n)));
    }
    if !v.recipe.is_empty() {
        s.push_str(&format!("<p>from: {}</p>", html_escape(&v.recipe)));
    }
    if !v.details.is_empty() {
        s.push_str("<ul>");
        for d in &v.details {
            s.push_str(&format!("<li>{}</li>", html_escape(d)));
        }
        s.push_str("</ul>");
    }
    s.push_str("</details>");
    s
}

/// The columns; `base` only with a compared bundle.
const HEADERS: [&str; 6] = [
    "claim",
    "tier",
    "here (95 % CI)",
    "against the expected band",
    "post",
    "expected",
];

fn row(r: &ClaimRow, common: &[&str], with_base: bool) -> String {
    let v = &r.verdict;
    let base = match (&r.base, with_base) {
        (Some(b), true) => format!(
            "<td class=\"num base\">{}<br>{}</td>",
            number_cell(b),
            badge(b, true)
        ),
        (None, true) => "<td class=\"num base\">—</td>".to_string(),
        (_, false) => String::new(),
    };
    format!(
        "<tr class=\"claim\" id=\"claim-{}\"><td class=\"what\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"bar\">{}</td><td class=\"num\">{}</td><td>{}</td>{base}</tr>\n",
        html_escape(&v.name()),
        what_cell(v, common),
        badge(v, false),
        number_cell(v),
        forest_svg(v, r.expect.as_ref()).unwrap_or_else(|| "—".to_string()),
        html_escape(&post_text(v)),
        html_escape(&v.expected),
    )
}

/// What every verdict shares: the lines of `analysis::claims::shared_lines`, a list
/// where they list.
fn shared_block(lines: &[String]) -> String {
    let mut s = String::from("<div class=\"shared\">\n");
    let mut in_list = false;
    // The scale is said apart, its common part once (`common_scale`).
    for l in lines.iter().filter(|l| !l.starts_with("scale: ")) {
        match l.strip_prefix("  - ") {
            Some(item) => {
                if !in_list {
                    s.push_str("<ul>");
                    in_list = true;
                }
                s.push_str(&format!("<li>{}</li>", html_escape(item)));
            }
            None => {
                if in_list {
                    s.push_str("</ul>\n");
                    in_list = false;
                }
                s.push_str(&format!("<p>{}</p>\n", html_escape(l)));
            }
        }
    }
    if in_list {
        s.push_str("</ul>\n");
    }
    s.push_str("</div>\n");
    s
}

/// The legend of the bars, drawn with the bars' own marks.
fn legend() -> String {
    format!(
        "<p class=\"legend\">{} In each bar: the green band is what the claim expects (its <code>expect:</code>), the dark line the 95 % interval of the number measured here with the number as a blue dot, the red diamond the post's own number (its data through the same recipe); every bar has its own axis.</p>\n",
        bar(&sample()).unwrap_or_default()
    )
}

/// The claims section.
pub fn render(c: &ClaimsContent) -> Result<String, ReportError> {
    let mut s = format!("<h2>Claims</h2>\n<p>{}</p>\n", html_escape(&claims_line(c)));
    let ClaimsContent::Checked {
        shared,
        rows,
        charts,
        base_note,
        base_label,
        ..
    } = c
    else {
        return Ok(s);
    };
    s.push_str(&shared_block(shared));
    if let Some(n) = base_note {
        s.push_str(&format!("<p class=\"note\">{}</p>\n", html_escape(n)));
    }
    let common = common_scale(rows);
    if !common.is_empty() {
        s.push_str(&format!(
            "<p class=\"shared\">scale of every claim: {}</p>\n",
            html_escape(&common.join("; "))
        ));
    }
    let base_label = base_label
        .as_deref()
        .filter(|_| rows.iter().any(|r| r.base.is_some()));
    if let Some(b) = base_label {
        s.push_str(&format!(
            "<p class=\"shared\">base: {}, the bundle compared with; its verdict of each claim is in the last column and in the claim's chart.</p>\n",
            html_escape(b)
        ));
    }
    let mut headers: Vec<String> = HEADERS.iter().map(|h| h.to_string()).collect();
    if base_label.is_some() {
        headers.push("base".to_string());
    }
    s.push_str("<table class=\"claims\">\n<thead><tr>");
    for h in &headers {
        let class = if h.starts_with("here") || h == "post" || h.starts_with("base") {
            " class=\"num\""
        } else {
            ""
        };
        s.push_str(&format!("<th{class}>{}</th>", html_escape(h)));
    }
    s.push_str("</tr></thead>\n");
    for variants in [false, true] {
        let of: Vec<&ClaimRow> = rows
            .iter()
            .filter(|r| r.verdict.variant == variants)
            .collect();
        if of.is_empty() {
            continue;
        }
        s.push_str(if variants {
            "<tbody class=\"variants\">\n"
        } else {
            "<tbody>\n"
        });
        if variants {
            s.push_str(&format!(
                "<tr class=\"group\"><th colspan=\"{}\">fslab's own variants (no quote from the post; not counted with its claims)</th></tr>\n",
                headers.len()
            ));
        }
        for r in of {
            s.push_str(&row(r, &common, base_label.is_some()));
        }
        s.push_str("</tbody>\n");
    }
    s.push_str("</table>\n");
    s.push_str(&legend());
    s.push_str("<h3>Each claim</h3>\n");
    for ch in charts {
        s.push_str(&format!(
            "<figure class=\"claim\" id=\"chart-{}\">\n",
            html_escape(&ch.id)
        ));
        match &ch.chart {
            Ok(chart) => s.push_str(&chart.to_svg()?),
            Err(why) => s.push_str(&format!(
                "<p class=\"note\"><b>{}</b>: {}</p>",
                html_escape(&ch.id),
                html_escape(&why.to_string())
            )),
        }
        s.push_str(&format!(
            "\n<figcaption><b>{}</b>: {}</figcaption>\n</figure>\n",
            html_escape(&ch.id),
            html_escape(&ch.caption)
        ));
    }
    Ok(s)
}
