//! Placeholder until the parser lands.
use super::{Output, ParseError};
pub fn parse(
    _kind: super::Kind,
    _text: &str,
) -> Result<Output<crate::parse::GeometryRow>, ParseError> {
    Err(ParseError::NotImplemented { kind: "mke2fs" })
}
