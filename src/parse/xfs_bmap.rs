//! Placeholder until the parser lands.
use super::{Output, ParseError};
pub fn parse_bmap(_text: &str) -> Result<Output<crate::blockmap::Extent>, ParseError> {
    Err(ParseError::NotImplemented { kind: "xfs_bmap" })
}
pub fn parse_fiemap(_text: &str) -> Result<Output<crate::blockmap::Extent>, ParseError> {
    Err(ParseError::NotImplemented {
        kind: "xfs_io-fiemap",
    })
}
