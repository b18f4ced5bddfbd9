//! Rich display in Jupyter through the evcxr kernel.
//!
//! evcxr calls `evcxr_display()` on a cell's last value when the method exists; bring
//! the trait into scope (`use fslab::notebook::*;`: `fslab::notebook` is this module,
//! re-exported under the name notebooks import) and a DataFrame shows as an HTML
//! table, a chart as inline SVG, a bundle as a summary. Everything here only formats:
//! the work is done by the library functions the CLI calls too.

use crate::analysis::{AnalysisError, BundleSummary};
use crate::report::html_escape;
use crate::run::{Event, EventSink};
use crate::store::Bundle;
use polars::prelude::*;
use std::fmt::Write;
use std::sync::Arc;

/// Emit something to evcxr as rich output.
pub trait EvcxrDisplay {
    fn evcxr_display(&self);
}

fn emit(mime: &str, content: &str) {
    println!("EVCXR_BEGIN_CONTENT {mime}\n{content}\nEVCXR_END_CONTENT");
}

/// HTML shown as is.
#[derive(Debug, Clone)]
pub struct Html(pub String);

/// An SVG image shown inline.
#[derive(Debug, Clone)]
pub struct Svg(pub String);

impl EvcxrDisplay for Html {
    fn evcxr_display(&self) {
        emit("text/html", &self.0);
    }
}

impl EvcxrDisplay for Svg {
    fn evcxr_display(&self) {
        emit("image/svg+xml", &self.0);
    }
}

impl EvcxrDisplay for DataFrame {
    fn evcxr_display(&self) {
        emit("text/plain", &format!("{self}"));
        emit("text/html", &html_table(self, 60));
    }
}

impl EvcxrDisplay for Bundle {
    fn evcxr_display(&self) {
        let summary = self
            .runs()
            .map_err(AnalysisError::from)
            .and_then(|runs| BundleSummary::new(self, &runs));
        match summary {
            Ok(s) => emit("text/html", &bundle_html(&s)),
            Err(e) => emit(
                "text/plain",
                &format!(
                    "{}: cannot summarise the bundle: {e}",
                    self.path().display()
                ),
            ),
        }
    }
}

fn cell(v: AnyValue<'_>) -> String {
    match v {
        AnyValue::Null => String::new(),
        AnyValue::Float64(x) => format!("{x:.4}"),
        AnyValue::Float32(x) => format!("{x:.4}"),
        AnyValue::String(s) => s.to_string(),
        other => other.to_string(),
    }
}

/// An HTML table of the first `max_rows` rows (and the last few when there are more).
pub fn html_table(df: &DataFrame, max_rows: usize) -> String {
    let mut s = String::from("<table class=\"fslab-frame\" style=\"border-collapse:collapse;font-size:12px\">\n<thead><tr>");
    for c in df.columns() {
        let _ = write!(
            s,
            "<th style=\"border-bottom:1px solid #888;padding:2px 8px;text-align:right\">{}<br><small>{}</small></th>",
            html_escape(c.name()),
            html_escape(&c.dtype().to_string())
        );
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    let h = df.height();
    let rows: Vec<usize> = if h <= max_rows {
        (0..h).collect()
    } else {
        (0..max_rows - 5).chain(h - 5..h).collect()
    };
    let mut prev = None;
    for i in rows {
        if prev.is_some_and(|p: usize| i != p + 1) {
            let _ = writeln!(
                s,
                "<tr><td colspan=\"{}\" style=\"text-align:center\">… {} rows …</td></tr>",
                df.width(),
                i - prev.unwrap_or(0) - 1
            );
        }
        s.push_str("<tr>");
        for c in df.columns() {
            let v = c.get(i).map(cell).unwrap_or_default();
            let _ = write!(
                s,
                "<td style=\"padding:2px 8px;text-align:right\">{}</td>",
                html_escape(&v)
            );
        }
        s.push_str("</tr>\n");
        prev = Some(i);
    }
    let _ = write!(
        s,
        "</tbody></table>\n<p><small>{} rows × {} columns</small></p>",
        h,
        df.width()
    );
    s
}

/// A bundle's summary as the notebook shows it: what ran, how it ended, the counts,
/// the host, each point.
pub fn bundle_html(s: &BundleSummary) -> String {
    let e = &s.host;
    let mut out = format!(
        "<h4>{} — {}</h4><p>{}<br>profile <b>{}</b>, status <b>{}</b>, {} → {}<br>{}<br>kernel {}, {}, {} × {}, {} MiB</p><ul>",
        html_escape(&s.experiment_id),
        html_escape(&s.title),
        html_escape(&s.path.display().to_string()),
        html_escape(s.profile.as_deref().unwrap_or("-")),
        html_escape(s.status.as_str()),
        html_escape(&s.started_at),
        html_escape(s.finished_at.as_deref().unwrap_or("-")),
        html_escape(&s.counts()),
        html_escape(&e.kernel),
        html_escape(&e.distribution),
        e.cores,
        html_escape(&e.cpu_model),
        e.memory_mib
    );
    for p in &s.points {
        let _ = write!(
            out,
            "<li><code>{}</code>: {} ({} iterations){}</li>",
            html_escape(&p.id),
            html_escape(p.status.as_str()),
            p.iterations,
            p.reason
                .as_ref()
                .map(|r| format!(" — {}", html_escape(r)))
                .unwrap_or_default()
        );
    }
    out.push_str("</ul>");
    out
}

/// Progress as plain lines (a notebook cannot draw a progress bar): pass to
/// `RunOptions::with_events`.
pub fn progress_lines() -> EventSink {
    Arc::new(|e: &Event| match e {
        Event::Started {
            bundle,
            points,
            replicates,
            iterations,
            order,
            seed,
        } => {
            println!(
                "fslab: {points} points, {replicates} replicates, {iterations} timed iterations, {order} order{} → {}",
                seed.map(|s| format!(" (seed {s})")).unwrap_or_default(),
                bundle.display()
            )
        }
        Event::PointStarted { .. } => {}
        Event::ReplicateStarted {
            id,
            replicate,
            replicates,
            position,
            of,
            ..
        } => println!("fslab: [{position}/{of}] point {id}, replicate {replicate}/{replicates}"),
        Event::Iteration {
            iteration,
            repeat,
            wall_s,
            ok,
            ..
        } => {
            println!(
                "fslab:   iteration {iteration}/{repeat}: {wall_s:.3} s{}",
                if *ok { "" } else { " (failed)" }
            )
        }
        Event::PointFinished {
            id, status, reason, ..
        } => println!(
            "fslab: point {id}: {status}{}",
            reason
                .as_ref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default()
        ),
        Event::Warning(w) => println!("fslab: warning: {w}"),
        Event::Reclaimed(r) => println!("fslab: {}", r.describe()),
        Event::Step { .. } => {}
    })
}

impl EvcxrDisplay for crate::plot::Chart {
    fn evcxr_display(&self) {
        match self.to_svg() {
            Ok(svg) => emit("image/svg+xml", &svg),
            Err(e) => emit("text/plain", &format!("chart could not be drawn: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_table_escapes_and_elides() {
        let df = df!("name" => (0..100).map(|i| format!("<f{i}>")).collect::<Vec<_>>(), "x" => (0..100).map(f64::from).collect::<Vec<_>>()).unwrap();
        let h = html_table(&df, 20);
        assert!(h.contains("&lt;f0&gt;") && h.contains("&lt;f99&gt;") && !h.contains("<f50>"));
        assert!(h.contains("… 80 rows …"), "{h}");
        assert!(h.contains("100 rows × 2 columns"));
    }
}
