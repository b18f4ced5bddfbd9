//! Matrix expansion.
#[derive(Debug, thiserror::Error)]
#[error("plan error")]
pub struct PlanError;
#[derive(Debug, Clone)]
pub struct Plan;
#[derive(Debug, Clone)]
pub struct Point;
