//! One self-contained report file for a bundle: claim verdicts when the bundle has them,
//! the environment, per-point statistics, the charts, and optionally a comparison with
//! another bundle.
//!
//! As in criterion, the analysis computes and the report only renders:
//! - [`content`]: the one step that gathers everything a report shows, once: the
//!   bundle's summary (`analysis::BundleSummary`), the statistics per metric, the
//!   claims table, the comparison, and the charts with their frames computed;
//! - [`charts`]: which charts a bundle gets, and the `Chart` constructors that start
//!   from a runs or `io` frame (they compute with `analysis`, then `plot` draws);
//! - [`html`] (charts inline as SVG, needs nothing else to display) and [`markdown`]
//!   (for pasting into a mail: plain-text fixed-width tables in code blocks, no
//!   pictures) render a [`content::Content`]; [`cells`] holds the words and table cells
//!   both share.
//! - `fslab reply`: [`reply_content`] gathers a bundle's answer to its post (verdicts,
//!   comparison, substitutions, content hash), [`reply`] renders it as a plain-text
//!   block of 72 columns ([`wrap`] fits text to them).

pub mod cells;
pub mod charts;
pub mod claims;
pub mod content;
pub mod forest;
pub mod html;
pub mod html_claims;
pub mod markdown;
pub mod reply;
pub mod reply_content;
mod reply_table;
pub mod wrap;

pub use charts::ChartError;
pub use content::Content;
pub use html::html_escape;

use crate::analysis::{AnalysisError, Warmup, DEFAULT_THRESHOLD_PCT};
use crate::plot::PlotError;
use crate::store::{Bundle, StoreError};
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

impl From<ChartError> for ReportError {
    fn from(e: ChartError) -> Self {
        match e {
            ChartError::Analysis(e) => ReportError::Analysis(e),
            ChartError::Plot(e) => ReportError::Plot(e),
        }
    }
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

/// Render the report as a string.
pub fn render_report(
    bundle: &Bundle,
    compare_with: Option<&Bundle>,
    opts: &ReportOptions,
    format: ReportFormat,
) -> Result<String, ReportError> {
    let c = Content::gather(bundle, compare_with, opts)?;
    Ok(match format {
        ReportFormat::Markdown => markdown::render(&c),
        ReportFormat::Html => html::render(&c)?,
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

#[cfg(test)]
mod tests {
    use super::ReportFormat;
    use std::path::Path;

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
}
