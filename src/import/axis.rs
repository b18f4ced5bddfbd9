//! A matrix axis of a draft experiment: its name, values, the post's line it came from,
//! and why (shared by the draft and the places that find axes: case branches, ranges).

/// One matrix axis of the draft.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub name: String,
    pub values: Vec<String>,
    pub line: usize,
    /// Where the values came from, for the comment.
    pub why: String,
}
