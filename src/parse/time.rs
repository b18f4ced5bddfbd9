//! Placeholder until the parser lands.
use super::{Output, ParseError};
pub fn parse(_text: &str) -> Result<Output<serde_json::Value>, ParseError> {
    Err(ParseError::NotImplemented { kind: "time" })
}
