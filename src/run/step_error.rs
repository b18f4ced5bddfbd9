//! Why a step could not be prepared, run as a builtin, or stored: the typed errors
//! behind a point's `failed` status and the runner's warnings.

use crate::devices::throttle::ThrottleError;
use crate::devices::trace::TraceError;
use crate::devices::DeviceError;
use crate::frames::FrameError;
use crate::parse::ParseError;
use crate::spec::{CommandError, TemplateError};
use crate::store::StoreError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StepError {
    #[error(transparent)]
    Command(#[from] CommandError),
    #[error(transparent)]
    Template(#[from] TemplateError),
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error("{0}")]
    Spawn(std::io::Error),
    #[error(transparent)]
    Spawner(#[from] super::spawner::SpawnerError),
    #[error(
        "`{0}` is outside this point's directory; builtins may only touch {{{{mnt}}}} and {{{{work}}}}"
    )]
    OutsidePoint(String),
    #[error("mkdir {}: {source}", path.display())]
    Mkdir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("keeping the command's output in {}: {source}", path.display())]
    Log {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("drop caches: {0}")]
    DropCaches(std::io::Error),
    #[error("trace: io: {0}")]
    TraceDevice(#[from] ThrottleError),
    #[error("trace: io: the point has no devices to trace")]
    TraceNoDevices,
    #[error("trace: io: {0} cannot trace block requests")]
    TraceUnsupported(String),
    #[error("trace: io: {0}")]
    Trace(#[from] TraceError),
    #[error("{0}")]
    Frame(#[from] FrameError),
    #[error("{0}")]
    Table(#[from] polars::prelude::PolarsError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{label}: {source}")]
    Parse { label: String, source: ParseError },
    #[error(transparent)]
    Kind(ParseError),
    #[error(transparent)]
    Guest(#[from] super::target::GuestError),
}
