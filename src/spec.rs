//! Experiment files (YAML): schema and located errors.
#[derive(Debug, thiserror::Error)]
#[error("spec error")]
pub struct SpecError;
#[derive(Debug, Clone)]
pub struct Experiment;
