//! One self-contained report file for a bundle: the environment, per-point statistics,
//! claim verdicts when the bundle has them, the charts, and optionally a comparison
//! with another bundle.
//!
//! HTML embeds the charts as inline SVG and needs nothing else to display. Markdown is
//! meant for pasting into a mail: plain-text fixed-width tables in code blocks, no
//! pictures.

use crate::analysis::compare::environment_facts;
use crate::analysis::text_grid::{frame_to_text, render_grid, Align};
use crate::analysis::{
    compare_runs, fmt_sig, metric_label, point_stats_rows, AnalysisError, CompareOptions,
    Comparison, PointStatsRow, Resolution, StatsOptions, Unit, Warmup, DEFAULT_THRESHOLD_PCT,
};
use crate::plot::{Chart, PlotError};
use crate::store::{Bundle, PointStatus, StoreError};
use polars::prelude::DataFrame;
use serde_json::Value;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Analysis(#[from] AnalysisError),
    #[error(transparent)]
    Plot(#[from] PlotError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("unsupported report file `{0}`: use .html or .md")]
    Format(PathBuf),
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    Html,
    Markdown,
}

impl ReportFormat {
    /// From a file name: `.html`/`.htm` or `.md`/`.markdown`.
    pub fn from_path(path: &Path) -> Option<ReportFormat> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "html" | "htm" => Some(ReportFormat::Html),
            "md" | "markdown" => Some(ReportFormat::Markdown),
            _ => None,
        }
    }
}

/// What to put in the report.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportOptions {
    /// The metric of the charts and of the comparison.
    pub metric: String,
    pub warmup: Warmup,
    /// Significance level of the comparison.
    pub alpha: f64,
    /// Noise threshold of the comparison, in percent.
    pub threshold_pct: f64,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            metric: "wall_s".to_string(),
            warmup: Warmup::default(),
            alpha: 0.05,
            threshold_pct: DEFAULT_THRESHOLD_PCT,
        }
    }
}

/// Everything the report shows, computed once for both formats.
struct Content {
    title: String,
    subtitle: Vec<(String, String)>,
    environment: Vec<(String, String)>,
    point_status: Vec<Vec<String>>,
    /// (point, why the run stopped repeating it).
    stops: Vec<Vec<String>>,
    /// (metric, rows, the resolution used under MAD = 0).
    stats: Vec<(String, Vec<PointStatsRow>, Resolution)>,
    claims: Option<DataFrame>,
    comparison: Option<Comparison>,
    /// (caption, chart) — rendered only in HTML.
    charts: Vec<(String, Chart)>,
}

fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

fn human_bytes(v: &str) -> String {
    let Ok(n) = v.parse::<f64>() else {
        return v.to_string();
    };
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = n;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < units.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{} {} ({n} B)", fmt_sig(x, 4), units[u])
    }
}

fn gather(
    bundle: &Bundle,
    other: Option<&Bundle>,
    opts: &ReportOptions,
) -> Result<Content, ReportError> {
    let m = bundle.manifest();
    let runs = bundle.runs()?;
    let title = m.experiment.title.clone();
    let mut subtitle = vec![("bundle".to_string(), bundle.path().display().to_string())];
    for (label, value) in [
        ("experiment", Some(&m.experiment.id)),
        ("experiment file", m.experiment.file.as_ref()),
        ("profile", m.profile.as_ref()),
        ("started", Some(&m.started_at)),
        ("finished", m.finished_at.as_ref()),
        ("fslab", Some(&m.fslab_version)),
    ] {
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            subtitle.push((label.to_string(), v.clone()));
        }
    }
    if !m.overrides.is_empty() {
        let list: Vec<String> = m
            .overrides
            .iter()
            .map(|(k, v)| format!("{k}={}", text(Some(v)).unwrap_or_default()))
            .collect();
        subtitle.push(("overrides".to_string(), list.join(" ")));
    }
    let environment = environment_facts(m)
        .into_iter()
        .filter(|(k, _)| k.starts_with("environment."))
        .map(|(k, v)| {
            let key = k.trim_start_matches("environment.").to_string();
            let v = if key == "memory_bytes" || key.ends_with(".size_bytes") {
                human_bytes(&v)
            } else {
                v
            };
            (key, v)
        })
        .collect();
    let point_status = m
        .points
        .iter()
        .filter(|p| p.status != PointStatus::Ok)
        .map(|p| {
            vec![
                p.id.clone(),
                p.status.to_string(),
                p.reason.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let stops = m
        .points
        .iter()
        .filter_map(|p| {
            p.repeat_stop
                .as_ref()
                .map(|r| vec![p.id.clone(), r.clone()])
        })
        .collect();
    let mut metrics = vec![opts.metric.clone()];
    for extra in ["wall_s", "user_s", "sys_s"] {
        if !metrics.iter().any(|m| m == extra) && runs.column(extra).is_ok() {
            metrics.push(extra.to_string());
        }
    }
    let mut stats = Vec::new();
    for metric in &metrics {
        let resolution = Resolution::for_metric(metric, Some(m));
        let sopts = StatsOptions {
            metric: metric.clone(),
            warmup: opts.warmup,
            resolution: Some(resolution),
            ..StatsOptions::default()
        };
        stats.push((metric.clone(), point_stats_rows(&runs, &sopts)?, resolution));
    }
    let claims = bundle.table_if_present("claims")?;
    let other_runs = other.map(Bundle::runs).transpose()?;
    let comparison = match (other, &other_runs) {
        (Some(o), Some(o_runs)) => Some(compare_runs(
            o_runs,
            &runs,
            Some(o.manifest()),
            Some(m),
            &CompareOptions {
                metric: opts.metric.clone(),
                warmup: opts.warmup,
                alpha: opts.alpha,
                threshold_pct: opts.threshold_pct,
            },
        )?),
        _ => None,
    };
    let comparison = comparison.map(|mut c| {
        if let Some(o) = other {
            c.base_label = o.describe();
        }
        c.new_label = bundle.describe();
        c
    });
    let sopts = StatsOptions {
        metric: opts.metric.clone(),
        warmup: opts.warmup,
        resolution: Some(Resolution::for_metric(&opts.metric, Some(m))),
        ..StatsOptions::default()
    };
    let stats_frame = crate::analysis::point_stats(&runs, &sopts)?;
    // A chart with nothing to draw (e.g. no point has a steady state) is left out.
    let mut charts = Vec::new();
    for (caption, chart) in [
        (
            "Steady-state mean per point with its 95 % confidence interval; the triangle is the first iteration.",
            Chart::mean_ci(&stats_frame),
        ),
        (
            "Every iteration in order: warm-up and drift.",
            Chart::iterations(&runs, &opts.metric),
        ),
        (
            "Distribution per point: box of the steady state (quartiles, whiskers within 1.5 IQR), every iteration as a dot.",
            Chart::distribution(&runs, &sopts),
        ),
    ] {
        match chart {
            Ok(c) => charts.push((caption.to_string(), c)),
            Err(PlotError::Empty(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    if let (Some(o), Some(o_runs)) = (other, &other_runs) {
        let base_stats = crate::analysis::point_stats(o_runs, &sopts)?;
        let first_id = crate::analysis::samples_by_point(&runs, &opts.metric)?
            .first()
            .map(|p| p.point_id.clone());
        if let Some(baseline) = first_id {
            match Chart::normalised(
                &[
                    (o.label().as_str(), &base_stats, "mean"),
                    (bundle.label().as_str(), &stats_frame, "mean"),
                ],
                &baseline,
            ) {
                Ok(chart) => charts.push((
                    format!("Both runs, each relative to its own {baseline}, so that different machines compare."),
                    chart,
                )),
                Err(PlotError::Data(_)) | Err(PlotError::Empty(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    if let Some(extents) = bundle.table_if_present("extents")? {
        match Chart::extents(&extents) {
            Ok(chart) => charts.push((
                "Extent layout: where each file's data lies on the device.".to_string(),
                chart,
            )),
            Err(PlotError::Empty(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    if let Some(io) = bundle.table_if_present("io")? {
        charts.extend(io_charts(&io, m)?);
    }
    Ok(Content {
        title,
        subtitle,
        environment,
        point_status,
        stops,
        stats,
        claims,
        comparison,
        charts,
    })
}

/// The seekwatcher-style charts of a bundle's block traces (`trace: io`): the first two
/// traced points side by side, then each traced point on its own.
fn io_charts(
    io: &DataFrame,
    m: &crate::store::Manifest,
) -> Result<Vec<(String, Chart)>, ReportError> {
    let traced: Vec<String> = crate::analysis::str_values(io, "report", "point_id")?
        .into_iter()
        .flatten()
        .fold(Vec::new(), |mut v, p| {
            if !v.contains(&p) {
                v.push(p);
            }
            v
        });
    // In plan order.
    let mut traced: Vec<(usize, String)> = traced
        .into_iter()
        .map(|p| {
            let i = m
                .points
                .iter()
                .position(|q| q.id == p)
                .unwrap_or(usize::MAX);
            (i, p)
        })
        .collect();
    traced.sort();
    let medium = m
        .environment
        .devices
        .iter()
        .filter_map(|d| {
            d.medium
                .as_ref()
                .filter(|md| md.substitution)
                .map(|md| format!("{} on the {} disk model", d.name, md.model))
        })
        .collect::<Vec<_>>();
    let on = if medium.is_empty() {
        "the loop devices as they are (no disk model)".to_string()
    } else {
        medium.join(", ")
    };
    let mut out = Vec::new();
    let keep = |r: Result<Chart, PlotError>| match r {
        Ok(c) => Ok(Some(c)),
        Err(PlotError::Empty(_)) => Ok(None),
        Err(e) => Err(e),
    };
    if let [(_, a), (_, b), ..] = traced.as_slice() {
        if let Some(c) = keep(Chart::io_compare(io, (a, a), (b, b)))? {
            out.push((
                format!("Block I/O of {a} and {b} side by side, seekwatcher-style (position on the device, throughput, seeks per second against time), on {on}; each side is the point's first traced iteration."),
                c,
            ));
        }
    }
    for (_, p) in &traced {
        if let Some(c) = keep(Chart::io_trace(io, Some(p)))? {
            out.push((
                format!("Block I/O of {p}: every request's position, the read (blue) and write (red) throughput and the seeks per second, on {on}."),
                c,
            ));
        }
    }
    Ok(out)
}

fn opt(v: Option<f64>, sig: usize) -> String {
    v.map(|v| fmt_sig(v, sig)).unwrap_or_default()
}

const STATS_HEADERS: [&str; 15] = [
    "point",
    "unit",
    "n",
    "first",
    "first vs mean",
    "mean",
    "95% CI",
    "σ",
    "CV",
    "min",
    "median",
    "max",
    "outliers",
    "failed",
    "warm-up",
];

/// "first vs mean": the % difference, or "no steady state" (never +0.0 %).
fn first_vs_mean(r: &PointStatsRow) -> String {
    if r.no_steady_state {
        return "no steady state".to_string();
    }
    r.first_vs_mean_pct
        .map(|p| format!("{p:+.1}%"))
        .unwrap_or_default()
}

fn unit_cell(r: &PointStatsRow) -> String {
    match r.unit {
        Unit::Iteration => "iteration".to_string(),
        Unit::Replicate => format!("replicate (of {})", r.replicates),
    }
}

fn stats_cells(r: &PointStatsRow) -> Vec<String> {
    vec![
        r.point_id.clone(),
        unit_cell(r),
        r.n.to_string(),
        opt(r.first, 4),
        first_vs_mean(r),
        opt(r.mean, 4),
        match (r.ci_low, r.ci_high) {
            (Some(lo), Some(hi)) => format!("{} – {}", fmt_sig(lo, 4), fmt_sig(hi, 4)),
            _ => String::new(),
        },
        opt(r.std, 3),
        r.cv_pct.map(|c| format!("{c:.1}%")).unwrap_or_default(),
        opt(r.min, 4),
        opt(r.median, 4),
        opt(r.max, 4),
        r.outliers.to_string(),
        r.n_failed.to_string(),
        r.n_warmup.to_string(),
    ]
}

fn stats_aligns(n: usize) -> Vec<Align> {
    let mut a = vec![Align::Right; n];
    a[0] = Align::Left;
    a
}

/// The narrower table for mail: about 80 columns.
const MAIL_HEADERS: [&str; 10] = [
    "point", "unit", "n", "mean", "±95% CI", "CV", "min", "max", "first", "vs mean",
];

fn mail_cells(r: &PointStatsRow) -> Vec<String> {
    vec![
        r.point_id.clone(),
        r.unit.name().to_string(),
        r.n.to_string(),
        opt(r.mean, 4),
        match (r.ci_low, r.ci_high) {
            (Some(lo), Some(hi)) => format!("±{}", fmt_sig((hi - lo) / 2.0, 3)),
            _ => String::new(),
        },
        r.cv_pct.map(|c| format!("{c:.1}%")).unwrap_or_default(),
        opt(r.min, 4),
        opt(r.max, 4),
        opt(r.first, 4),
        first_vs_mean(r),
    ]
}

fn warmup_note(w: Warmup) -> String {
    w.describe()
}

/// The unit(s) of a stats table in words.
fn unit_note(rows: &[PointStatsRow]) -> String {
    let replicate = rows.iter().any(|r| r.unit == Unit::Replicate);
    let iteration = rows.iter().any(|r| r.unit == Unit::Iteration);
    match (iteration, replicate) {
        (_, false) => "unit: iteration".to_string(),
        (false, true) => "unit: replicate (each replicate's steady-state iterations averaged; n counts replicates)".to_string(),
        (true, true) => "unit: replicate where a point has several replicates (n counts replicates), else iteration".to_string(),
    }
}

fn stats_note(rows: &[PointStatsRow], resolution: &Resolution) -> String {
    format!(
        "{}; outliers among steady-state iterations, {}",
        unit_note(rows),
        resolution.describe()
    )
}

/// Render the report as a string.
pub fn render_report(
    bundle: &Bundle,
    compare_with: Option<&Bundle>,
    opts: &ReportOptions,
    format: ReportFormat,
) -> Result<String, ReportError> {
    let c = gather(bundle, compare_with, opts)?;
    Ok(match format {
        ReportFormat::Markdown => markdown(&c, opts),
        ReportFormat::Html => html(&c, opts)?,
    })
}

/// Render the report into `path` (`.html` or `.md`).
pub fn write_report(
    bundle: &Bundle,
    compare_with: Option<&Bundle>,
    opts: &ReportOptions,
    path: &Path,
) -> Result<(), ReportError> {
    let format =
        ReportFormat::from_path(path).ok_or_else(|| ReportError::Format(path.to_path_buf()))?;
    let out = render_report(bundle, compare_with, opts, format)?;
    std::fs::write(path, out).map_err(|source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn markdown(c: &Content, opts: &ReportOptions) -> String {
    let mut s = format!("# {}\n\n", c.title);
    for (k, v) in &c.subtitle {
        s.push_str(&format!("- {k}: {v}\n"));
    }
    // What a reader came for first: the claims, then what they were measured on.
    if let Some(claims) = &c.claims {
        s.push_str("\n## Claims\n\n```\n");
        s.push_str(&frame_to_text(claims, None, 4));
        s.push_str("```\n");
    }
    s.push_str("\n## Environment\n\n```\n");
    let rows: Vec<Vec<String>> = c
        .environment
        .iter()
        .map(|(k, v)| vec![k.clone(), v.clone()])
        .collect();
    s.push_str(&render_grid(
        &["property", "value"],
        &[Align::Left, Align::Left],
        &rows,
    ));
    s.push_str("```\n");
    if !c.point_status.is_empty() {
        s.push_str("\n## Points that did not complete\n\n```\n");
        s.push_str(&render_grid(
            &["point", "status", "reason"],
            &[Align::Left; 3],
            &c.point_status,
        ));
        s.push_str("```\n");
    }
    if !c.stops.is_empty() {
        s.push_str("\n## Why repetition stopped\n\n```\n");
        s.push_str(&render_grid(
            &["point", "stop"],
            &[Align::Left; 2],
            &c.stops,
        ));
        s.push_str("```\n");
    }
    s.push_str(&format!(
        "\n## Per-point statistics\n\nSteady state: {}. CI: Student t interval of the mean. Outliers: |modified z-score| > 3.5 (flagged, not dropped). A point whose iterations are all warm-up has no steady state.\n",
        warmup_note(opts.warmup)
    ));
    for (metric, rows, resolution) in &c.stats {
        s.push_str(&format!(
            "\n### {}\n\n{}.\n\n```\n",
            metric_label(metric),
            stats_note(rows, resolution)
        ));
        let cells: Vec<Vec<String>> = rows.iter().map(mail_cells).collect();
        s.push_str(&render_grid(
            &MAIL_HEADERS,
            &stats_aligns(MAIL_HEADERS.len()),
            &cells,
        ));
        let flagged: usize = rows.iter().map(|r| r.outliers).sum();
        let failed: usize = rows.iter().map(|r| r.n_failed).sum();
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

/// `s` as HTML text (or a double-quoted attribute value): `&`, `<`, `>` and `"` escaped.
pub fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn html_table(headers: &[&str], aligns: &[Align], rows: &[Vec<String>]) -> String {
    let mut s = String::from("<table>\n<thead><tr>");
    for (i, h) in headers.iter().enumerate() {
        let class = if aligns.get(i) == Some(&Align::Right) {
            " class=\"num\""
        } else {
            ""
        };
        s.push_str(&format!("<th{class}>{}</th>", html_escape(h)));
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        s.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let class = if aligns.get(i) == Some(&Align::Right) {
                " class=\"num\""
            } else {
                ""
            };
            s.push_str(&format!("<td{class}>{}</td>", html_escape(cell)));
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

fn html(c: &Content, opts: &ReportOptions) -> Result<String, ReportError> {
    let mut s = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<h1>{}</h1>\n<dl>\n",
        html_escape(&c.title),
        html_escape(&c.title)
    );
    for (k, v) in &c.subtitle {
        s.push_str(&format!(
            "<dt>{}</dt><dd>{}</dd>\n",
            html_escape(k),
            html_escape(v)
        ));
    }
    s.push_str("</dl>\n");
    // What a reader came for first: the claims, then what they were measured on.
    if let Some(claims) = &c.claims {
        s.push_str("<h2>Claims</h2>\n<pre>");
        s.push_str(&html_escape(&frame_to_text(claims, None, 4)));
        s.push_str("</pre>\n");
    }
    s.push_str("<h2>Environment</h2>\n");
    let rows: Vec<Vec<String>> = c
        .environment
        .iter()
        .map(|(k, v)| vec![k.clone(), v.clone()])
        .collect();
    s.push_str(&html_table(
        &["property", "value"],
        &[Align::Left, Align::Left],
        &rows,
    ));
    if !c.point_status.is_empty() {
        s.push_str("<h2>Points that did not complete</h2>\n");
        s.push_str(&html_table(
            &["point", "status", "reason"],
            &[Align::Left; 3],
            &c.point_status,
        ));
    }
    if !c.stops.is_empty() {
        s.push_str("<h2>Why repetition stopped</h2>\n");
        s.push_str(&html_table(&["point", "stop"], &[Align::Left; 2], &c.stops));
    }
    s.push_str(&format!(
        "<h2>Per-point statistics</h2>\n<p>Steady state: {}. CI: Student t interval of the mean. Outliers: |modified z-score| &gt; 3.5 (flagged, not dropped). A point whose iterations are all warm-up has no steady state.</p>\n",
        html_escape(&warmup_note(opts.warmup))
    ));
    for (metric, rows, resolution) in &c.stats {
        s.push_str(&format!(
            "<h3>{}</h3>\n<p>{}.</p>\n",
            html_escape(&metric_label(metric)),
            html_escape(&stats_note(rows, resolution))
        ));
        let cells: Vec<Vec<String>> = rows.iter().map(stats_cells).collect();
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
    use super::*;

    #[test]
    fn format_from_extension() {
        assert_eq!(
            ReportFormat::from_path(Path::new("a/r.HTML")),
            Some(ReportFormat::Html)
        );
        assert_eq!(
            ReportFormat::from_path(Path::new("r.md")),
            Some(ReportFormat::Markdown)
        );
        assert_eq!(ReportFormat::from_path(Path::new("r.pdf")), None);
        assert_eq!(ReportFormat::from_path(Path::new("r")), None);
    }

    #[test]
    fn html_escapes_and_bytes_read_well() {
        assert_eq!(html_escape("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
        assert_eq!(human_bytes("536870912"), "512.0 MiB (536870912 B)");
        assert_eq!(human_bytes("12"), "12 B");
        assert_eq!(human_bytes("x"), "x");
    }

    /// Issue 31: a reader came for the claims; they come before the environment, in
    /// both formats.
    #[test]
    fn the_claims_come_before_the_environment() {
        let c = Content {
            title: "t".into(),
            subtitle: Vec::new(),
            environment: vec![("kernel".into(), "6.18".into())],
            point_status: Vec::new(),
            stops: Vec::new(),
            stats: Vec::new(),
            claims: Some(polars::prelude::df!("id" => ["c1"], "tier" => ["inconclusive"]).unwrap()),
            comparison: None,
            charts: Vec::new(),
        };
        let opts = ReportOptions::default();
        let md = markdown(&c, &opts);
        let (a, b) = (
            md.find("## Claims").unwrap(),
            md.find("## Environment").unwrap(),
        );
        assert!(a < b, "{md}");
        let h = html(&c, &opts).unwrap();
        let (a, b) = (
            h.find("<h2>Claims").unwrap(),
            h.find("<h2>Environment").unwrap(),
        );
        assert!(a < b, "{h}");
    }
}
