//! Placeholder until the parser lands.
use super::{Output, ParseError};
pub fn parse_stat(_text: &str) -> Result<Output<crate::blockmap::Extent>, ParseError> {
    Err(ParseError::NotImplemented {
        kind: "debugfs-stat",
    })
}
pub fn parse_ex(_text: &str) -> Result<Output<crate::blockmap::Extent>, ParseError> {
    Err(ParseError::NotImplemented { kind: "debugfs-ex" })
}
