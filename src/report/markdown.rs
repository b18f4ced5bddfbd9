//! The Markdown report, for pasting into a mail: plain-text fixed-width tables in code
//! blocks, no pictures. Renders a [`Content`]; computes nothing.

use super::cells::{
    claim_text_cells, claims_line, environment_rows, mail_cells, point_status_rows, stats_aligns,
    stats_intro, stats_note, stop_rows, subtitle, CLAIM_HEADERS, MAIL_HEADERS,
};
use super::claims::{common_scale, own_scale};
use super::content::{ClaimsContent, Content};
use crate::analysis::text_grid::{render_grid, Align};
use crate::labels::metric_label;

/// The report as Markdown.
pub fn render(c: &Content) -> String {
    let mut s = format!("# {}\n\n", c.summary.title);
    for (k, v) in subtitle(&c.summary) {
        s.push_str(&format!("- {k}: {v}\n"));
    }
    // What a reader came for first: the verdicts, then what they were measured on.
    if let Some(claims) = &c.claims {
        s.push_str(&format!("\n## Claims\n\n{}\n", claims_line(claims)));
        if let ClaimsContent::Checked { rows, shared, .. } = claims {
            s.push('\n');
            for line in shared.iter().filter(|l| !l.starts_with("scale: ")) {
                s.push_str(&format!("{line}\n"));
            }
            let common = common_scale(rows);
            if !common.is_empty() {
                s.push_str(&format!("scale of every claim: {}\n", common.join("; ")));
            }
            // The post's claims, then fslab's variants apart.
            for (variants, heading) in
                [(false, ""), (true, "fslab's own variants (not counted):\n")]
            {
                let cells: Vec<Vec<String>> = rows
                    .iter()
                    .filter(|r| r.verdict.variant == variants)
                    .map(|r| claim_text_cells(&r.verdict))
                    .collect();
                if cells.is_empty() {
                    continue;
                }
                s.push_str(&format!("\n{heading}```\n"));
                s.push_str(&render_grid(&CLAIM_HEADERS, &[Align::Left; 6], &cells));
                s.push_str("```\n");
                for r in rows.iter().filter(|r| r.verdict.variant == variants) {
                    let own = own_scale(&r.verdict, &common);
                    if !own.is_empty() {
                        s.push_str(&format!("- {} scale: {own}\n", r.verdict.name()));
                    }
                }
            }
        }
    }
    s.push_str("\n## Environment\n\n```\n");
    s.push_str(&render_grid(
        &["property", "value"],
        &[Align::Left, Align::Left],
        &environment_rows(&c.summary),
    ));
    s.push_str("```\n");
    let not_ok = point_status_rows(&c.summary);
    if !not_ok.is_empty() {
        s.push_str("\n## Points that did not complete\n\n```\n");
        s.push_str(&render_grid(
            &["point", "status", "reason"],
            &[Align::Left; 3],
            &not_ok,
        ));
        s.push_str("```\n");
    }
    let stops = stop_rows(&c.summary);
    if !stops.is_empty() {
        s.push_str("\n## Why repetition stopped\n\n```\n");
        s.push_str(&render_grid(&["point", "stop"], &[Align::Left; 2], &stops));
        s.push_str("```\n");
    }
    s.push_str(&format!(
        "\n## Per-point statistics\n\n{}\n",
        stats_intro(c.warmup)
    ));
    for m in &c.stats {
        s.push_str(&format!(
            "\n### {}\n\n{}.\n\n```\n",
            metric_label(&m.metric),
            stats_note(&m.rows, &m.resolution)
        ));
        let cells: Vec<Vec<String>> = m.rows.iter().map(mail_cells).collect();
        s.push_str(&render_grid(
            &MAIL_HEADERS,
            &stats_aligns(MAIL_HEADERS.len()),
            &cells,
        ));
        let flagged: usize = m.rows.iter().map(|r| r.outliers).sum();
        let failed: usize = m.rows.iter().map(|r| r.n_failed).sum();
        if flagged + failed > 0 {
            s.push_str(&format!(
                "({flagged} outlier(s) flagged, {failed} failed iteration(s))\n"
            ));
        }
        s.push_str("```\n");
    }
    if let Some(cmp) = &c.comparison {
        s.push_str("\n## Comparison\n\n```\n");
        s.push_str(&cmp.render_text());
        s.push_str("```\n");
    }
    s.push_str("\nCharts: see the HTML report (`fslab report BUNDLE -o report.html`).\n");
    s
}
