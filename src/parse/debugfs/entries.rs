//! The block-map grammar both formats share: a list entry (`(0-11):1234-1245`,
//! `(IND):77`, `(ETB0):12`) and the rows a file's entries become, numbered and flagged
//! as the module docs say.

use crate::parse::map::{MapRow, Unit};
use std::borrow::Cow;
use std::sync::Arc;

/// A block-map entry as listed: data range, indirect block or extent tree block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Entry {
    Data {
        logical: u64,
        physical: u64,
        blocks: u64,
        uninit: bool,
    },
    Meta {
        kind: Meta,
        physical: u64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Meta {
    Ind,
    Dind,
    Tind,
    Etb(u32),
}

impl Meta {
    fn flags(self) -> Cow<'static, str> {
        const ETB: [&str; 5] = [
            "metadata,etb0",
            "metadata,etb1",
            "metadata,etb2",
            "metadata,etb3",
            "metadata,etb4",
        ];
        match self {
            Meta::Ind => "metadata,ind".into(),
            Meta::Dind => "metadata,dind".into(),
            Meta::Tind => "metadata,tind".into(),
            Meta::Etb(n) => match ETB.get(n as usize) {
                Some(s) => Cow::Borrowed(s),
                None => format!("metadata,etb{n}").into(),
            },
        }
    }
}

/// Decimal digits at the start of `b`: (value, bytes used); None without digits or on
/// overflow.
pub(super) fn digits(b: &[u8]) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    let mut i = 0;
    while let Some(d) = b.get(i).map(|c| c.wrapping_sub(b'0')).filter(|d| *d <= 9) {
        // 19 digits always fit in a u64; only longer numbers can overflow.
        v = if i < 19 {
            v * 10 + u64::from(d)
        } else {
            v.checked_mul(10)?.checked_add(u64::from(d))?
        };
        i += 1;
    }
    (i > 0).then_some((v, i))
}

/// `N` or `N-M` at the start of `b`: (first, last, bytes used).
fn range(b: &[u8]) -> Option<(u64, u64, usize)> {
    let (first, n) = digits(b)?;
    if b.get(n) == Some(&b'-') {
        let (last, m) = digits(&b[n + 1..])?;
        Some((first, last, n + 1 + m))
    } else {
        Some((first, first, n))
    }
}

/// `(0-11):1234-1245`, `(5):1234`, `(3[u]):9`, `(IND):77`, `(ETB0):12`: the whole token.
#[cfg(test)]
fn parse_entry(tok: &str) -> Option<Entry> {
    parse_entry_prefix(tok.as_bytes()).and_then(|(e, used)| (used == tok.len()).then_some(e))
}

/// An entry at the start of `b`: (entry, bytes used).
pub(super) fn parse_entry_prefix(b: &[u8]) -> Option<(Entry, usize)> {
    if b.first() != Some(&b'(') {
        return None;
    }
    let b = &b[1..];
    if b.first().is_some_and(u8::is_ascii_digit) {
        let (l0, l1, mut i) = range(b)?;
        let uninit = b[i..].starts_with(b"[u]");
        if uninit {
            i += 3;
        }
        if b.get(i) != Some(&b')') || b.get(i + 1) != Some(&b':') {
            return None;
        }
        let (p0, p1, used) = range(&b[i + 2..])?;
        let blocks = l1.checked_sub(l0)?.checked_add(1)?;
        if p1.checked_sub(p0)?.checked_add(1)? != blocks {
            return None;
        }
        let entry = Entry::Data {
            logical: l0,
            physical: p0,
            blocks,
            uninit,
        };
        return Some((entry, 1 + i + 2 + used));
    }
    let close = b.iter().take(8).position(|&c| c == b')')?;
    let (name, rest) = (&b[..close], &b[close..]);
    let phys = rest.strip_prefix(b"):")?;
    let (physical, used) = digits(phys)?;
    let kind = match name {
        b"IND" => Meta::Ind,
        b"DIND" => Meta::Dind,
        b"TIND" => Meta::Tind,
        _ => {
            let level = name.strip_prefix(b"ETB")?;
            let (l, used) = digits(level)?;
            if used != level.len() {
                return None;
            }
            Meta::Etb(u32::try_from(l).ok()?)
        }
    };
    Some((Entry::Meta { kind, physical }, 1 + close + 2 + used))
}

/// Entries in listed order → rows (see the module docs for numbering and flags).
pub(super) fn push_rows(
    out: &mut Vec<MapRow>,
    file: u64,
    path: &str,
    inode: Option<u64>,
    size: Option<u64>,
    bs: Option<u64>,
    entries: &[Entry],
) {
    out.reserve(entries.len());
    let path: Arc<str> = Arc::from(path);
    let mut last_data = None;
    let mut n_data = 0u64;
    let mut end_of_data = 0u64;
    for (i, e) in entries.iter().enumerate() {
        if let Entry::Data {
            logical, blocks, ..
        } = e
        {
            last_data = Some(i);
            n_data += 1;
            end_of_data = end_of_data.max(logical.saturating_add(*blocks));
        }
    }
    let mul = |v: u64| bs.map(|b| v.saturating_mul(b));
    // Metadata rows get the index and offset of the next data extent: they are pushed with
    // "none follows" values and patched when that extent comes.
    let mut pending = 0usize;
    let mut data_index = 0u64;
    for (i, e) in entries.iter().enumerate() {
        let base = MapRow {
            file,
            path: Arc::clone(&path),
            inode,
            unit: Unit::Block,
            unit_bytes: bs,
            ..Default::default()
        };
        match *e {
            Entry::Data {
                logical,
                physical,
                blocks,
                uninit,
            } => {
                if pending > 0 {
                    let len = out.len();
                    for m in &mut out[len - pending..] {
                        m.index = data_index;
                        m.logical_bytes = mul(logical);
                    }
                    pending = 0;
                }
                let last = Some(i) == last_data;
                let eof = size.is_some_and(|sz| {
                    u128::from(logical.saturating_add(blocks)) * u128::from(bs.unwrap_or(0))
                        >= u128::from(sz)
                        && bs.is_some()
                });
                let flags = match (last, uninit, eof) {
                    (false, false, false) => "",
                    (true, false, false) => "last",
                    (false, true, false) => "unwritten",
                    (false, false, true) => "eof",
                    (true, true, false) => "last,unwritten",
                    (true, false, true) => "last,eof",
                    (false, true, true) => "unwritten,eof",
                    (true, true, true) => "last,unwritten,eof",
                };
                out.push(MapRow {
                    index: data_index,
                    logical_bytes: mul(logical),
                    physical_bytes: mul(physical),
                    length_bytes: mul(blocks),
                    flags: Cow::Borrowed(flags),
                    logical_start: Some(logical),
                    logical_end: Some(logical.saturating_add(blocks - 1)),
                    physical_start: Some(physical),
                    physical_end: Some(physical.saturating_add(blocks - 1)),
                    length: Some(blocks),
                    tool_flags: uninit.then(|| "[u]".to_string()),
                    ..base
                });
                data_index += 1;
            }
            Entry::Meta { kind, physical } => {
                out.push(MapRow {
                    index: n_data,
                    logical_bytes: mul(end_of_data),
                    physical_bytes: mul(physical),
                    length_bytes: bs,
                    flags: kind.flags(),
                    physical_start: Some(physical),
                    physical_end: Some(physical),
                    length: Some(1),
                    level: match kind {
                        Meta::Etb(l) => Some(l),
                        _ => None,
                    },
                    ..base
                });
                pending += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_up_to_u64_max() {
        assert_eq!(digits(b"0"), Some((0, 1)));
        assert_eq!(digits(b"4140, "), Some((4140, 4)));
        assert_eq!(
            digits(b"9999999999999999999"),
            Some((9_999_999_999_999_999_999, 19))
        );
        assert_eq!(digits(b"18446744073709551615"), Some((u64::MAX, 20)));
        assert_eq!(digits(b"18446744073709551616"), None, "overflow");
        assert_eq!(digits(b"x1"), None);
        // A list entry with a junk tail after its number is not a whole entry.
        assert_eq!(parse_entry("(1):2x"), None);
        assert_eq!(parse_entry_prefix(b"(1):2x").map(|(_, n)| n), Some(5));
    }

    #[test]
    fn entries() {
        assert_eq!(
            parse_entry("(0-11):4899-4910"),
            Some(Entry::Data {
                logical: 0,
                physical: 4899,
                blocks: 12,
                uninit: false
            })
        );
        assert_eq!(
            parse_entry("(256-2047[u]):35072-36863"),
            Some(Entry::Data {
                logical: 256,
                physical: 35072,
                blocks: 1792,
                uninit: true
            })
        );
        assert_eq!(
            parse_entry("(DIND):5412"),
            Some(Entry::Meta {
                kind: Meta::Dind,
                physical: 5412
            })
        );
        assert_eq!(
            parse_entry("(ETB1):36901"),
            Some(Entry::Meta {
                kind: Meta::Etb(1),
                physical: 36901
            })
        );
        assert_eq!(parse_entry("(0-11):4899-4911"), None, "lengths differ");
        assert_eq!(parse_entry("(11-0):1-2"), None);
        assert_eq!(parse_entry("(12"), None);
    }
}
