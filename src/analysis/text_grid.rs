//! Fixed-width plain-text grids (columns under headers), for terminals and mail. Not to
//! be confused with a bundle's tables (`<name>.parquet`).

use super::fmt_sig;
use polars::prelude::*;

/// Column alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// Render rows under headers, columns separated by two spaces, widths from the content
/// (in characters), no trailing spaces.
pub fn render_grid(headers: &[&str], aligns: &[Align], rows: &[Vec<String>]) -> String {
    let ncols = headers.len();
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(ncols) {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        let mut out = String::new();
        for (i, width) in widths.iter().enumerate() {
            let cell = cells.get(i).map(String::as_str).unwrap_or("");
            let pad = width.saturating_sub(cell.chars().count());
            if i > 0 {
                out.push_str("  ");
            }
            match aligns.get(i).copied().unwrap_or(Align::Left) {
                Align::Left => {
                    out.push_str(cell);
                    out.push_str(&" ".repeat(pad));
                }
                Align::Right => {
                    out.push_str(&" ".repeat(pad));
                    out.push_str(cell);
                }
            }
        }
        out.trim_end().to_string()
    };
    let header: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    let mut out = String::new();
    out.push_str(&line(&header));
    out.push('\n');
    out.push_str(&line(&rule));
    out.push('\n');
    for row in rows {
        out.push_str(&line(row));
        out.push('\n');
    }
    out
}

/// One cell of a frame as text: floats with `sig` significant digits, nulls empty.
pub fn cell_text(col: &Column, row: usize, sig: usize) -> String {
    match col.get(row) {
        Ok(AnyValue::Null) | Err(_) => String::new(),
        Ok(AnyValue::Float64(v)) => fmt_sig(v, sig),
        Ok(AnyValue::Float32(v)) => fmt_sig(f64::from(v), sig),
        Ok(AnyValue::String(s)) => s.to_string(),
        Ok(AnyValue::StringOwned(s)) => s.to_string(),
        Ok(other) => other.to_string(),
    }
}

/// A whole frame (or the named columns of it) as a fixed-width text table; numbers
/// right-aligned.
pub fn frame_to_text(df: &DataFrame, columns: Option<&[&str]>, sig: usize) -> String {
    let cols: Vec<&Column> = match columns {
        Some(names) => names.iter().filter_map(|n| df.column(n).ok()).collect(),
        None => df.columns().iter().collect(),
    };
    let headers: Vec<&str> = cols.iter().map(|c| c.name().as_str()).collect();
    let aligns: Vec<Align> = cols
        .iter()
        .map(|c| {
            if c.dtype().is_primitive_numeric() {
                Align::Right
            } else {
                Align::Left
            }
        })
        .collect();
    let rows: Vec<Vec<String>> = (0..df.height())
        .map(|r| cols.iter().map(|c| cell_text(c, r, sig)).collect())
        .collect();
    render_grid(&headers, &aligns, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_width_columns() {
        let t = render_grid(
            &["point", "mean"],
            &[Align::Left, Align::Right],
            &[
                vec!["fs=ext4".into(), "1.5".into()],
                vec!["fs=xfs".into(), "12.25".into()],
            ],
        );
        assert_eq!(
            t,
            "point     mean\n-------  -----\nfs=ext4    1.5\nfs=xfs   12.25\n"
        );
    }

    #[test]
    fn frames_render_with_significant_digits() {
        let df = df!("p" => ["a", "b"], "x" => [Some(1.23456), None], "n" => [3i64, 10]).unwrap();
        let t = frame_to_text(&df, Some(&["p", "x", "n"]), 3);
        assert_eq!(t, "p     x   n\n-  ----  --\na  1.23   3\nb        10\n");
    }
}
