//! The HTML report: one self-contained page, the charts inline as SVG (nothing to
//! fetch). Renders a [`Content`]; computes nothing.

use super::cells::{
    environment_rows, point_status_rows, stats_aligns, stats_cells, stats_intro, stats_note,
    stop_rows, subtitle, STATS_HEADERS,
};
use super::content::Content;
use super::ReportError;
use crate::analysis::text_grid::Align;
use crate::labels::metric_label;

/// `s` as HTML text (or a double-quoted attribute value): `&`, `<`, `>` and `"` escaped.
pub fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn html_table(headers: &[&str], aligns: &[Align], rows: &[Vec<String>]) -> String {
    let class = |i: usize| {
        if aligns.get(i) == Some(&Align::Right) {
            " class=\"num\""
        } else {
            ""
        }
    };
    let mut s = String::from("<table>\n<thead><tr>");
    for (i, h) in headers.iter().enumerate() {
        s.push_str(&format!("<th{}>{}</th>", class(i), html_escape(h)));
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        s.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            s.push_str(&format!("<td{}>{}</td>", class(i), html_escape(cell)));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody>\n</table>\n");
    s
}

const CSS: &str = "body{font-family:sans-serif;max-width:1250px;margin:2em auto;padding:0 1em;color:#222}\
h1{font-size:1.6em}h2{margin-top:1.6em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:.6em 0;font-size:.92em}\
th,td{padding:.25em .7em;border-bottom:1px solid #e4e4e4;text-align:left;vertical-align:top}\
th{background:#f4f4f4}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}\
pre{background:#f7f7f7;padding:.8em;overflow-x:auto;font-size:.88em}\
figure{margin:1.2em 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}\
figcaption{color:#555;font-size:.9em;margin-top:.3em}dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}\
dt{font-weight:bold}dd{margin:0}";

/// The report as one HTML page.
pub fn render(c: &Content) -> Result<String, ReportError> {
    let title = &c.summary.title;
    let mut s = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{CSS}{}</style>\n</head>\n<body>\n<h1>{}</h1>\n<dl>\n",
        html_escape(title),
        super::html_claims::CSS,
        html_escape(title)
    );
    for (k, v) in subtitle(&c.summary) {
        s.push_str(&format!(
            "<dt>{}</dt><dd>{}</dd>\n",
            html_escape(&k),
            html_escape(&v)
        ));
    }
    s.push_str("</dl>\n");
    // What a reader came for first: the verdicts and a chart of each claim, then what
    // they were measured on.
    if let Some(claims) = &c.claims {
        s.push_str(&super::html_claims::render(claims)?);
    }
    s.push_str("<h2>Environment</h2>\n");
    s.push_str(&html_table(
        &["property", "value"],
        &[Align::Left, Align::Left],
        &environment_rows(&c.summary),
    ));
    let not_ok = point_status_rows(&c.summary);
    if !not_ok.is_empty() {
        s.push_str("<h2>Points that did not complete</h2>\n");
        s.push_str(&html_table(
            &["point", "status", "reason"],
            &[Align::Left; 3],
            &not_ok,
        ));
    }
    let stops = stop_rows(&c.summary);
    if !stops.is_empty() {
        s.push_str("<h2>Why repetition stopped</h2>\n");
        s.push_str(&html_table(&["point", "stop"], &[Align::Left; 2], &stops));
    }
    s.push_str(&format!(
        "<h2>Per-point statistics</h2>\n<p>{}</p>\n",
        html_escape(&stats_intro(c.warmup))
    ));
    for m in &c.stats {
        s.push_str(&format!(
            "<h3>{}</h3>\n<p>{}.</p>\n",
            html_escape(&metric_label(&m.metric)),
            html_escape(&stats_note(&m.rows, &m.resolution))
        ));
        let cells: Vec<Vec<String>> = m.rows.iter().map(stats_cells).collect();
        s.push_str(&html_table(
            &STATS_HEADERS,
            &stats_aligns(STATS_HEADERS.len()),
            &cells,
        ));
    }
    if let Some(cmp) = &c.comparison {
        s.push_str("<h2>Comparison</h2>\n<pre>");
        s.push_str(&html_escape(&cmp.render_text()));
        s.push_str("</pre>\n");
    }
    s.push_str("<h2>Charts</h2>\n");
    for (caption, chart) in &c.charts {
        let svg = chart.to_svg()?;
        s.push_str("<figure>\n");
        s.push_str(&svg);
        s.push_str(&format!(
            "\n<figcaption>{}</figcaption>\n</figure>\n",
            html_escape(caption)
        ));
    }
    s.push_str("</body>\n</html>\n");
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::html_escape;

    #[test]
    fn html_escapes() {
        assert_eq!(html_escape("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
    }
}
