//! Why a run stops.

use crate::devices::DeviceError;
use crate::store::StoreError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(
        "fslab run needs root to attach loop devices and mount filesystems (running as uid {uid})"
    )]
    NotRoot { uid: u32 },
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "interrupted; everything fslab attached or mounted was released. Partial results: {bundle}"
    )]
    Interrupted { bundle: PathBuf },
    #[error("{point}: {message}")]
    Step { point: String, message: String },
    #[error("cannot resume {bundle}: {message}")]
    Resume { bundle: PathBuf, message: String },
    #[error(transparent)]
    Spec(#[from] crate::spec::SpecError),
    #[error(transparent)]
    Plan(#[from] crate::plan::PlanError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Guest(#[from] super::target::GuestError),
    #[error(transparent)]
    Calibrate(#[from] super::calibrate::CalibrateError),
    /// A [`RunHook`](super::RunHook) failed (what it was doing, and why).
    #[error("{what}: {source}")]
    Hook {
        what: &'static str,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error(transparent)]
    UntilDecided(#[from] super::until::UntilError),
}
