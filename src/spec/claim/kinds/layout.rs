//! `kind: layout`: how scattered the blocks of the selected files are, and where the
//! post's block listing is (`published`).

use super::{default_block, default_extents};
use crate::spec::claim::{CheckSchema, Expect, Selection};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// `kind: layout`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LayoutCheck {
    #[serde(default = "default_extents")]
    pub table: String,
    #[serde(default)]
    pub select: Selection,
    /// Bytes per block, to count blocks from extent lengths.
    #[serde(default = "default_block")]
    pub block_bytes: u64,
    /// The largest file must have at least this many blocks for the layout to say anything.
    #[serde(default)]
    pub min_blocks: u64,
    #[serde(default)]
    pub expect: Expect,
    #[serde(default)]
    pub at_scale: IndexMap<String, f64>,
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub published: Option<PublishedLayout>,
}

/// A block listing in the shape of `data/published/001_dir_blocks.csv`: `kind` (`data`
/// or `IND`), `segment`, `logical_start`, `physical_start`, `length`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedLayout {
    pub dataset: String,
    #[serde(default)]
    pub select: Selection,
}

impl CheckSchema for LayoutCheck {
    fn expect(&self) -> &Expect {
        &self.expect
    }
    fn selections(&self) -> Vec<(&'static str, &Selection)> {
        vec![("select", &self.select)]
    }
}
