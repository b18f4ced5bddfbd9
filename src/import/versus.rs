//! Two tables with the same header, one under the other with only a `vs.` line (and
//! blank lines) between them, as commit messages put a before and an after run:
//!
//! ```text
//! FSUse%        Count         Size    Files/sec     App Overhead
//!      8         1000        10240         30.5            28242
//!
//! vs.
//!
//! FSUse%        Count         Size    Files/sec     App Overhead
//!      8         1000        10240         45.8            28620
//! ```
//!
//! The first table's rows get the setting `change: before`, the second's `change: after`.

use super::tables::Table;

fn versus(t: &str) -> bool {
    matches!(
        t.trim().to_ascii_lowercase().as_str(),
        "vs" | "vs." | "vs:" | "versus" | "versus:"
    )
}

/// Does table `b` follow table `a` across a `vs.` line, with the same columns?
fn paired(a: &Table, b: &Table, texts: &[&str]) -> bool {
    let (Some(end), Some(start)) = (a.rows.last().map(|r| r.0), b.header) else {
        return false;
    };
    let between = texts.get(end + 1..start).unwrap_or(&[]);
    a.columns == b.columns
        && between.iter().filter(|t| versus(t)).count() == 1
        && between.iter().all(|t| t.trim().is_empty() || versus(t))
}

/// `before` or `after` for table `i` when it is one side of such a pair.
pub fn side(tables: &[Table], i: usize, texts: &[&str]) -> Option<&'static str> {
    if let Some(next) = tables.get(i + 1) {
        if paired(&tables[i], next, texts) {
            return Some("before");
        }
    }
    let prev = i.checked_sub(1).and_then(|p| tables.get(p))?;
    paired(prev, &tables[i], texts).then_some("after")
}
