//! Placeholder until the parser lands.
use super::{Output, ParseError};
pub fn parse(_text: &str) -> Result<Output<crate::blockmap::Extent>, ParseError> {
    Err(ParseError::NotImplemented { kind: "filefrag" })
}
