//! Result bundles.
#[derive(Debug, thiserror::Error)]
#[error("store error")]
pub struct StoreError;
#[derive(Debug, Clone)]
pub struct Bundle;
