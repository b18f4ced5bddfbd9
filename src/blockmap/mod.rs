//! Block maps: where each file's data lives on disk.
mod extent;
pub use extent::Extent;
