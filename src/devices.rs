//! Scratch devices.
#[derive(Debug, thiserror::Error)]
#[error("device error")]
pub struct DeviceError;
