//! XFS geometry as `mkfs.xfs` and `xfs_info` print it, into long-format
//! [`GeometryRow`]s (one row per `key=value`).
//!
//! ```text
//! meta-data=/dev/sdb               isize=512    agcount=4, agsize=1298176 blks
//!          =                       sectsz=512   attr=2, projid32bit=1
//! data     =                       bsize=4096   blocks=5192704, imaxpct=25
//!          =                       sunit=0      swidth=0 blks
//! naming   =version 2              bsize=4096   ascii-ci=0, ftype=1, parent=0
//! log      =internal log           bsize=4096   blocks=16384, version=2
//! realtime =none                   extsz=4096   blocks=0, rtextents=0
//!          =                       rgcount=0    rgsize=0 extents
//! ```
//!
//! * A line that starts with a section name (`meta-data`, `data`, `naming`, `log`,
//!   `realtime`), after any blanks (output quoted with an indent), opens that section; a
//!   line that starts with blanks and `=` continues it.
//!   Any `key=value` is accepted, so newer layouts (`exchange=`, `metadir=`, `parent=`,
//!   `rgcount=`, `zoned=` …) parse without changes here.
//! * The text right after a section's `=` and before its first `key=value` is the
//!   section's head: key `device` (the device path, `internal log`, `internal`,
//!   `external`, `none`) for every section but `naming`, where `version 2` becomes key
//!   `version`, value `2`.
//! * `unit` is the unit word printed after a value (`blks`, `extents`), which applies to
//!   that value only; values without one get the unit xfsprogs documents for them:
//!   `bytes` for `isize`, `sectsz`, `bsize`, `extsz`; `blks` for `agsize`, `blocks`, and
//!   `sunit`/`swidth` of `data` and `log` (xfsprogs prints one `blks` after `swidth` for
//!   both); `extents` for `rtextents` and `rgsize`. Other keys have no unit.
//! * `bytes`: `bytes` values as they are; `blks` times the block size (`data` `bsize`,
//!   or `log` `bsize` in the log section); `extents` times the realtime `extsz`.
//! * `Discarding blocks...Done.` and the V4 deprecation notice are known and skipped;
//!   anything else becomes a [`Warning`](super::Warning). Output that misses some of the
//!   five sections is returned with `partial = true`. Text without any geometry (say
//!   `mkfs.xfs` refusing an option) is a [`ParseError::Malformed`] quoting the tool.
//! * Several outputs in one text (two mkfs runs in a mail) give the rows of each in
//!   order, with a warning where the next one starts.

use super::text::{numbered, parse_f64, warning};
use super::{GeometryRow, Output, ParseError};

const KIND: &str = "mkfs.xfs/xfs_info";
const SECTIONS: [&str; 5] = ["meta-data", "data", "naming", "log", "realtime"];
const UNIT_WORDS: [&str; 5] = ["blks", "extents", "bytes", "blocks", "sectors"];

/// Parse `mkfs.xfs` or `xfs_info` output.
pub fn parse(text: &str) -> Result<Output<GeometryRow>, ParseError> {
    let mut out = Output::default();
    // The output block (one per `meta-data=` line) each row belongs to.
    let mut row_block: Vec<usize> = Vec::new();
    let mut block = 0usize;
    let mut seen: Vec<Vec<&'static str>> = vec![Vec::new()];
    let mut section: Option<&'static str> = None;
    let mut first_text: Option<(usize, &str)> = None;

    for (n, line) in numbered(text) {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        if first_text.is_none() {
            first_text = Some((n, trimmed));
        }
        let fields = if let Some((sec, rest)) = section_header(line) {
            if sec == "meta-data" && seen.get(block).is_some_and(|s| !s.is_empty()) {
                out.warnings.push(warning(
                    n,
                    line,
                    "another geometry output starts here; its rows follow the previous one's",
                ));
                block += 1;
                seen.push(Vec::new());
            }
            if let Some(s) = seen.get_mut(block) {
                if s.contains(&sec) {
                    out.warnings
                        .push(warning(n, line, format!("section `{sec}` appears twice")));
                } else {
                    s.push(sec);
                }
            }
            section = Some(sec);
            Some((sec, rest, true))
        } else if let Some(rest) = continuation(line) {
            match section {
                Some(sec) => Some((sec, rest, false)),
                None => {
                    out.warnings.push(warning(
                        n,
                        line,
                        "continuation line before any section line",
                    ));
                    None
                }
            }
        } else {
            if !is_known_message(trimmed) {
                out.warnings
                    .push(warning(n, line, "not a geometry line of mkfs.xfs/xfs_info"));
            }
            None
        };
        if let Some((sec, rest, opens)) = fields {
            let before = out.rows.len();
            parse_fields(sec, rest, opens, n, line, &mut out);
            row_block.extend(std::iter::repeat_n(block, out.rows.len() - before));
        }
    }

    if out.rows.is_empty() {
        return Err(match first_text {
            None => ParseError::NothingRecognised {
                kind: KIND,
                expected: "`meta-data=`, `data =`, `naming =`, `log =`, `realtime =` lines",
            },
            Some((line, text)) => ParseError::Malformed {
                kind: KIND,
                line,
                message: format!("no geometry lines; the tool printed: {text}"),
            },
        });
    }
    out.partial = seen
        .iter()
        .any(|s| !s.is_empty() && SECTIONS.iter().any(|want| !s.contains(want)));
    fill_bytes(&mut out.rows, &row_block);
    Ok(out)
}

/// A section's first line. It may be indented as a whole (a mail or a web page quoting
/// the output with leading blanks): the section name is looked for after them.
fn section_header(line: &str) -> Option<(&'static str, &str)> {
    let line = line.trim_start_matches([' ', '\t']);
    SECTIONS.iter().find_map(|&sec| {
        let rest = line.strip_prefix(sec)?;
        let rest = rest.trim_start_matches([' ', '\t']).strip_prefix('=')?;
        Some((sec, rest))
    })
}

fn continuation(line: &str) -> Option<&str> {
    if !line.starts_with([' ', '\t']) {
        return None;
    }
    line.trim_start().strip_prefix('=')
}

fn is_known_message(trimmed: &str) -> bool {
    trimmed.starts_with("Discarding blocks...")
        || trimmed.starts_with("V4 filesystems are deprecated")
}

/// Whitespace-separated tokens with their byte offsets in `s`.
fn tokens(s: &str) -> Vec<(usize, &str)> {
    let base = s.as_ptr() as usize;
    s.split_whitespace()
        .map(|t| (t.as_ptr() as usize - base, t))
        .collect()
}

fn parse_fields(
    section: &'static str,
    rest: &str,
    opens: bool,
    n: usize,
    line: &str,
    out: &mut Output<GeometryRow>,
) {
    let toks = tokens(rest);
    let first_kv = toks.iter().position(|(_, t)| t.contains('='));
    let head_end = first_kv
        .and_then(|i| toks.get(i))
        .map_or(rest.len(), |(o, _)| *o);
    let head = rest.get(..head_end).unwrap_or("").trim();
    if !head.is_empty() {
        if !opens {
            out.warnings.push(warning(
                n,
                line,
                format!("unexpected text `{head}` on a continuation line"),
            ));
        } else if section == "naming" {
            match head.strip_prefix("version") {
                Some(v) if v.starts_with([' ', '\t']) || v.is_empty() => {
                    out.rows.push(row(section, "version", v.trim(), None))
                }
                _ => out.rows.push(row(section, "naming", head, None)),
            }
        } else {
            out.rows.push(row(section, "device", head, None));
        }
    }
    let mut last_kv_row: Option<usize> = None;
    for (_, tok) in toks.iter().skip(first_kv.unwrap_or(toks.len())) {
        let tok = tok.trim_matches(',');
        if tok.is_empty() {
            continue;
        }
        if let Some((key, value)) = tok.split_once('=') {
            if key.is_empty() {
                out.warnings
                    .push(warning(n, line, format!("`{tok}` has no key before `=`")));
                last_kv_row = None;
                continue;
            }
            out.rows
                .push(row(section, key, value, implied_unit(section, key)));
            last_kv_row = Some(out.rows.len() - 1);
        } else if let (true, Some(i)) = (UNIT_WORDS.contains(&tok), last_kv_row) {
            if let Some(r) = out.rows.get_mut(i) {
                r.unit = Some(tok.to_string());
            }
            last_kv_row = None;
        } else {
            out.warnings
                .push(warning(n, line, format!("unexpected token `{tok}`")));
            last_kv_row = None;
        }
    }
}

fn row(section: &str, key: &str, value: &str, unit: Option<&str>) -> GeometryRow {
    GeometryRow {
        section: section.to_string(),
        key: key.to_string(),
        value: value.to_string(),
        number: parse_f64(value),
        unit: unit.map(str::to_string),
        bytes: None,
    }
}

fn implied_unit(section: &str, key: &str) -> Option<&'static str> {
    match key {
        "isize" | "sectsz" | "bsize" | "extsz" => Some("bytes"),
        "agsize" => Some("blks"),
        "blocks" if section != "naming" => Some("blks"),
        "sunit" | "swidth" if section == "data" || section == "log" => Some("blks"),
        "rtextents" | "rgsize" if section == "realtime" => Some("extents"),
        _ => None,
    }
}

fn whole(x: Option<f64>) -> Option<u64> {
    let x = x?;
    (x >= 0.0 && x.fract() == 0.0 && x < 1.8e19).then_some(x as u64)
}

fn fill_bytes(rows: &mut [GeometryRow], row_block: &[usize]) {
    let find = |rows: &[GeometryRow], block: usize, section: &str, key: &str| {
        rows.iter()
            .zip(row_block)
            .find(|(r, b)| **b == block && r.section == section && r.key == key)
            .and_then(|(r, _)| whole(r.number))
    };
    let blocks = row_block.iter().copied().max().map_or(0, |m| m + 1);
    let scales: Vec<_> = (0..blocks)
        .map(|b| {
            let data_bsize = find(rows, b, "data", "bsize");
            let log_bsize = find(rows, b, "log", "bsize").or(data_bsize);
            let extsz = find(rows, b, "realtime", "extsz");
            (data_bsize, log_bsize, extsz)
        })
        .collect();
    for (r, b) in rows.iter_mut().zip(row_block) {
        let Some(&(data_bsize, log_bsize, extsz)) = scales.get(*b) else {
            continue;
        };
        let scale = match r.unit.as_deref() {
            Some("bytes") => Some(1),
            Some("blks") | Some("blocks") if r.section == "log" => log_bsize,
            Some("blks") | Some("blocks") => data_bsize,
            Some("extents") => extsz,
            Some("sectors") => Some(512),
            _ => None,
        };
        r.bytes = scale.and_then(|s| whole(r.number)?.checked_mul(s));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get<'a>(rows: &'a [GeometryRow], section: &str, key: &str) -> &'a GeometryRow {
        rows.iter()
            .find(|r| r.section == section && r.key == key)
            .unwrap_or_else(|| panic!("no row {section}/{key}"))
    }

    #[test]
    fn units_apply_to_the_value_before_them() {
        let text = "meta-data=/dev/x isize=512 agcount=4, agsize=10 blks
data     =       bsize=4096 blocks=40, imaxpct=25
         =       sunit=2 swidth=4 blks
naming   =version 2 bsize=4096
log      =internal log bsize=1024 blocks=100, version=2
=        sectsz=512 sunit=0 blks, lazy-count=1
realtime =none extsz=4096 blocks=0, rtextents=0
         =       rgcount=3 rgsize=5 extents
";
        let out = parse(text).unwrap();
        // Line 6 starts with `=` without indentation: not a continuation.
        assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
        assert_eq!(out.warnings[0].line, 6);
        let sunit = get(&out.rows, "data", "sunit");
        assert_eq!(
            (sunit.unit.as_deref(), sunit.bytes),
            (Some("blks"), Some(8192))
        );
        let r = get(&out.rows, "meta-data", "agsize");
        assert_eq!((r.unit.as_deref(), r.bytes), (Some("blks"), Some(40960)));
        assert_eq!(get(&out.rows, "log", "blocks").bytes, Some(102_400));
        assert_eq!(get(&out.rows, "naming", "version").value, "2");
        assert_eq!(get(&out.rows, "log", "device").value, "internal log");
        assert!(!out.partial);
    }

    #[test]
    fn rgcount_is_a_count_rgsize_is_in_extents() {
        let out = parse(
            "realtime =none extsz=65536 blocks=0, rtextents=0\n          =  rgcount=3    rgsize=5 extents\n",
        )
        .unwrap();
        let c = get(&out.rows, "realtime", "rgcount");
        assert_eq!(
            (c.unit.as_deref(), c.bytes, c.number),
            (None, None, Some(3.0))
        );
        let s = get(&out.rows, "realtime", "rgsize");
        assert_eq!(
            (s.unit.as_deref(), s.bytes),
            (Some("extents"), Some(5 * 65536))
        );
        assert!(out.partial, "only one of five sections");
    }

    #[test]
    fn error_text_is_an_error() {
        let e = parse("unknown option -n parent=1\nUsage: mkfs.xfs\n").unwrap_err();
        assert!(e.to_string().contains("unknown option -n parent=1"), "{e}");
        assert!(matches!(
            parse(" \n\n"),
            Err(ParseError::NothingRecognised { .. })
        ));
    }
}
