//! The library's error type. Each module has its own typed error; [`Error`] wraps them
//! all, so that code calling several modules (a notebook cell, a script, a tool built on
//! fslab) can use `?` across them and still match on what went wrong:
//!
//! ```no_run
//! fn first_point_mean(dir: &str) -> fslab::Result<f64> {
//!     let runs = fslab::Bundle::open(dir)?.runs()?; // StoreError
//!     let stats = fslab::analysis::point_stats(&runs, &Default::default())?; // AnalysisError
//!     let mean = stats.column("mean")?.f64()?.get(0); // PolarsError
//!     Ok(mean.unwrap_or(f64::NAN))
//! }
//! ```

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Spec(#[from] crate::spec::SpecError),
    #[error(transparent)]
    Plan(#[from] crate::plan::PlanError),
    #[error(transparent)]
    Device(#[from] crate::devices::DeviceError),
    #[error(transparent)]
    Run(#[from] crate::run::RunError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error(transparent)]
    Parse(#[from] crate::parse::ParseError),
    #[error(transparent)]
    Analysis(#[from] crate::analysis::AnalysisError),
    #[error(transparent)]
    Plot(#[from] crate::plot::PlotError),
    #[error(transparent)]
    Report(#[from] crate::report::ReportError),
    /// A chart computed from a runs or `io` frame (`Chart::iterations`, …).
    #[error(transparent)]
    Chart(#[from] crate::report::ChartError),
    #[error(transparent)]
    Published(#[from] crate::published::PublishedError),
    #[error(transparent)]
    Reshape(#[from] crate::published::ReshapeError),
    #[error(transparent)]
    Frame(#[from] crate::frames::FrameError),
    #[error(transparent)]
    Claims(#[from] crate::analysis::claims::ClaimsError),
    #[error(transparent)]
    Merge(#[from] crate::store::merge::MergeError),
    #[error(transparent)]
    Blockmap(#[from] crate::blockmap::BlockmapError),
    #[error(transparent)]
    Notebook(#[from] crate::run::jupyter::NotebookError),
    #[error(transparent)]
    Ipynb(#[from] crate::ipynb::IpynbError),
    #[error(transparent)]
    Tools(#[from] crate::tools::build::BuildError),
    #[error(transparent)]
    Shard(#[from] crate::shard::ShardError),
    #[error(transparent)]
    Stress(#[from] crate::stress::StressError),
    #[error(transparent)]
    Polars(#[from] polars::error::PolarsError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
