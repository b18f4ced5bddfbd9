//! Runner.
#[derive(Debug, thiserror::Error)]
#[error("run error")]
pub struct RunError;
