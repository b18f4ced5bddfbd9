//! A block of commands as the post wrote it (after a prompt, in a `#!` script, bare, or
//! named in a sentence), with its parsed shell nodes: what `commands` finds and
//! `sequences`, `draft` and the rest read.

use super::shell::Node;

/// How a block was written in the post.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// After `#!/bin/sh`.
    Script,
    /// After a shell prompt.
    Prompt,
    /// Command lines without a prompt.
    Bare,
    /// Named in a sentence.
    Inline,
}

/// A block of commands.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub kind: BlockKind,
    pub line: usize,
    pub nodes: Vec<Node>,
    /// Quote depth of its lines.
    pub depth: usize,
}
