//! Why a claim cannot be checked: the loader's errors and the reasons a measure gives.

use crate::analysis::AnalysisError;
use crate::published::PublishedError;
use crate::spec::claim::IoShape;
use crate::store::StoreError;
use polars::prelude::PolarsError;

#[derive(Debug, thiserror::Error)]
pub enum ClaimsError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Spec(#[from] crate::spec::SpecError),
    #[error(transparent)]
    Polars(#[from] PolarsError),
}

/// Why a check's number (measured or published) cannot be computed: the verdict's
/// reason, word for word.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// The bundle (or the published dataset) lacks the rows or columns the check needs.
    #[error("missing data: {0}")]
    MissingData(String),
    /// The selected points did not run here, or no point has the selection.
    #[error("{0}")]
    NotRun(String),
    /// The rows are there but give no number (a zero denominator, too few groups, …).
    #[error("{0}")]
    NoNumber(String),
    /// This bundle cannot test the claim at all (e.g. no disk model under the traces).
    #[error("{0}")]
    Untestable(String),
    /// An `io_summary` check that is not one value or one ratio.
    #[error("{0}")]
    Shape(#[from] IoShape),
    /// A table the check reads is missing and would come from a block trace.
    #[error("{0}; a block trace needs `trace: io` on the step (docs/media.md)")]
    Untraced(Box<MeasureError>),
    /// A column of a table or dataset cannot be read.
    #[error("{what}: {source}")]
    Column { what: String, source: AnalysisError },
    #[error(transparent)]
    Analysis(#[from] AnalysisError),
    #[error(transparent)]
    Polars(#[from] PolarsError),
    #[error(transparent)]
    Published(#[from] PublishedError),
}

impl MeasureError {
    /// A column read of `what` that failed: a missing column is missing data.
    pub(super) fn column(e: AnalysisError, what: &str, col: &str) -> MeasureError {
        match e {
            AnalysisError::MissingColumn { available, .. } => MeasureError::MissingData(format!(
                "{what} has no column `{col}` (columns: {available})"
            )),
            other => MeasureError::Analysis(other),
        }
    }
}
