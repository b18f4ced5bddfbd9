//! Placeholder until the parser lands.
use super::{Output, ParseError};
pub fn parse(_text: &str) -> Result<Output<crate::parse::GeometryRow>, ParseError> {
    Err(ParseError::NotImplemented { kind: "mkfs.xfs" })
}
