//! One-line summaries that tools print at the end of a run, as posts quote them:
//!
//! * dd (GNU coreutils, any locale): `104857600 bytes (105 MB, 100 MiB) copied, 0.59 s,
//!   177 MB/s`, with a decimal comma (`1,2 GB/s`) and translated words (`kopiert`); BSD
//!   and macOS: `8192000000 bytes transferred in 159.062003 secs (51501929 bytes/sec)`;
//! * dbench: `Throughput 452.385 MB/sec (sync open)  32 clients  32 procs
//!   max_latency=1963.312 ms` and the lines of its operation table (`WriteX  2202803
//!   7.905  1376.989`: count, average and maximum latency in ms), with or without its
//!   `Operation  Count  AvgLat  MaxLat` header and rule;
//! * hdparm -tT: `Timing cached reads:   960 MB in  2.00 seconds = 479.59 MB/sec`.
//!
//! Text before a summary on its line (`2.6.27-rc8: Throughput …`, `#Throughput …`) is
//! returned as the row's `prefix`. Pure: text in, rows out; lines that are none of these
//! are not rows (a post is mostly other text).

use serde::Serialize;

/// One number of a summary line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryRow {
    /// 1-based line in the text.
    pub line: usize,
    /// `dd`, `dbench`, `hdparm`.
    pub tool: &'static str,
    /// `bytes`, `time`, `rate`, `throughput`, `max_latency`, `count`, `avg_latency`, …
    pub quantity: &'static str,
    pub value: f64,
    /// As the tool prints it, `/sec` written `/s` (`MB/s`, `ms`, `s`, `B`).
    pub unit: String,
    /// The number as printed.
    pub printed: String,
    /// What the line says the number is about: dbench's operation (`WriteX`), hdparm's
    /// `Timing cached reads`; empty for dd.
    pub name: String,
    /// Text before the summary on its line, trimmed (`2.6.27-rc8:` → `2.6.27-rc8`).
    pub prefix: String,
    /// Settings the line states: dbench's `clients` and `procs`.
    pub settings: Vec<(String, String)>,
}

/// dbench's operations (the first column of its table), sorted.
const DBENCH_OPS: &[&str] = &[
    "Close",
    "Deltree",
    "Find",
    "Flush",
    "LockX",
    "Mkdir",
    "NTCreateX",
    "Qfileinfo",
    "Qfsinfo",
    "Qpathinfo",
    "ReadX",
    "Rename",
    "Sfileinfo",
    "Unlink",
    "UnlockX",
    "WriteX",
];

/// A number as printed, with a decimal comma read as a point (`1,2`).
fn number(s: &str) -> Option<f64> {
    let s = s.trim();
    if s.is_empty() || !s.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let dot = if s.contains('.') {
        s.to_string()
    } else {
        s.replacen(',', ".", 1)
    };
    dot.parse().ok()
}

/// `MB/sec` → `MB/s`, `bytes/sec` → `B/s`, `secs` → `s`.
fn unit(u: &str) -> String {
    let u = u.trim().trim_end_matches([',', ')']);
    let u = u.replace("/sec", "/s").replace("bytes", "B");
    match u.as_str() {
        "sec" | "secs" | "seconds" => "s".into(),
        _ => u,
    }
}

fn label(prefix: &str) -> String {
    prefix
        .trim()
        .trim_start_matches(['#', '>', ' '])
        .trim_end_matches([':', ' ', '-'])
        .trim()
        .to_string()
}

struct Line<'a> {
    n: usize,
    out: &'a mut Vec<SummaryRow>,
}

impl Line<'_> {
    fn row(&mut self, tool: &'static str, quantity: &'static str, v: (f64, String, String)) {
        self.out.push(SummaryRow {
            line: self.n,
            tool,
            quantity,
            value: v.0,
            unit: v.1,
            printed: v.2,
            name: String::new(),
            prefix: String::new(),
            settings: Vec::new(),
        });
    }
}

/// `0.59 s`, `177 MB/s`: the number and its unit.
fn value_unit(s: &str) -> Option<(f64, String, String)> {
    let s = s.trim();
    let (v, u) = s.split_once(' ')?;
    Some((number(v)?, unit(u), s.to_string()))
}

/// GNU dd's last line: the bytes, then, after the parenthesis, the seconds and the rate.
fn dd_gnu(t: &str, mut at: Line) -> bool {
    let Some(first) = t.split_whitespace().next() else {
        return false;
    };
    let Some(bytes) = first.parse::<u64>().ok() else {
        return false;
    };
    // drop `(105 MB, 100 MiB)`: its commas are not the line's
    let mut flat = String::new();
    let mut depth = 0;
    for c in t.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ if depth == 0 => flat.push(c),
            _ => {}
        }
    }
    let parts: Vec<&str> = flat.split(", ").collect();
    let [.., secs, rate] = parts.as_slice() else {
        return false;
    };
    let (Some(s), Some(r)) = (value_unit(secs), value_unit(rate)) else {
        return false;
    };
    if s.1 != "s"
        || !r.1.ends_with("/s")
        || !flat[first.len()..].trim_start().starts_with(['b', 'B'])
    {
        return false;
    }
    at.row("dd", "bytes", (bytes as f64, "B".into(), first.to_string()));
    at.row("dd", "time", s);
    at.row("dd", "rate", r);
    true
}

/// BSD dd: `N bytes transferred in T secs (R bytes/sec)`.
fn dd_bsd(t: &str, mut at: Line) -> bool {
    let Some((head, rest)) = t.split_once(" bytes transferred in ") else {
        return false;
    };
    let Some(bytes) = head.trim().parse::<u64>().ok() else {
        return false;
    };
    let Some((secs, rate)) = rest.split_once(" (") else {
        return false;
    };
    let (Some(s), Some(r)) = (value_unit(secs), value_unit(rate.trim_end_matches(')'))) else {
        return false;
    };
    at.row(
        "dd",
        "bytes",
        (bytes as f64, "B".into(), head.trim().to_string()),
    );
    at.row("dd", "time", s);
    at.row("dd", "rate", r);
    true
}

/// `Throughput 452.385 MB/sec (sync open)  32 clients  32 procs  max_latency=1963.312 ms`.
fn dbench_summary(t: &str, mut at: Line) -> bool {
    let Some(i) = t.find("Throughput ") else {
        return false;
    };
    let prefix = label(&t[..i]);
    let words: Vec<&str> = t[i..].split_whitespace().collect();
    let (Some(v), Some(u)) = (words.get(1).and_then(|w| number(w)), words.get(2)) else {
        return false;
    };
    if !u.contains('/') {
        return false;
    }
    let start = at.out.len();
    at.row(
        "dbench",
        "throughput",
        (v, unit(u), format!("{} {u}", words[1])),
    );
    let mut settings = Vec::new();
    for (k, w) in words.iter().enumerate().skip(3) {
        if let Some(lat) = w.strip_prefix("max_latency=") {
            let u = words.get(k + 1).copied().unwrap_or("ms");
            if let Some(l) = number(lat) {
                at.row("dbench", "max_latency", (l, unit(u), format!("{w} {u}")));
            }
        } else if matches!(*w, "clients" | "procs") {
            if let Some(n) = words.get(k - 1).filter(|n| number(n).is_some()) {
                settings.push((w.to_string(), n.to_string()));
            }
        }
    }
    for r in &mut at.out[start..] {
        r.prefix.clone_from(&prefix);
        r.settings.clone_from(&settings);
    }
    true
}

/// A line of dbench's operation table: `WriteX  2202803  7.905  1376.989`.
fn dbench_op(t: &str, mut at: Line) -> bool {
    let w: Vec<&str> = t.split_whitespace().collect();
    let [op, count, avg, max] = w.as_slice() else {
        return false;
    };
    if !DBENCH_OPS.contains(op) {
        return false;
    }
    let (Some(c), Some(a), Some(m)) = (number(count), number(avg), number(max)) else {
        return false;
    };
    let start = at.out.len();
    at.row("dbench", "count", (c, "ops".into(), count.to_string()));
    at.row("dbench", "avg_latency", (a, "ms".into(), avg.to_string()));
    at.row("dbench", "max_latency", (m, "ms".into(), max.to_string()));
    for r in &mut at.out[start..] {
        r.name = op.to_string();
    }
    true
}

/// ` Timing buffered disk reads:  170 MB in  3.00 seconds =  56.62 MB/sec`.
fn hdparm(t: &str, mut at: Line) -> bool {
    let Some((name, rest)) = t.trim().split_once(':') else {
        return false;
    };
    if !name.starts_with("Timing ") || !name.ends_with("reads") {
        return false;
    }
    let Some((size, rest)) = rest.split_once(" in ") else {
        return false;
    };
    let Some((secs, rate)) = rest.split_once('=') else {
        return false;
    };
    let (Some(a), Some(b), Some(c)) = (value_unit(size), value_unit(secs), value_unit(rate)) else {
        return false;
    };
    let start = at.out.len();
    at.row("hdparm", "size", a);
    at.row("hdparm", "time", b);
    at.row("hdparm", "rate", c);
    for r in &mut at.out[start..] {
        r.name = name.trim().to_string();
    }
    true
}

/// Whether a line is dbench's table header or rule, or dd's `N+M records in/out`: lines
/// of a summary's block that give no number of their own.
pub fn is_furniture(t: &str) -> bool {
    let t = t.trim();
    let w: Vec<&str> = t.split_whitespace().collect();
    w == ["Operation", "Count", "AvgLat", "MaxLat"]
        || (t.len() > 8 && t.chars().all(|c| c == '-'))
        || (w.len() == 3
            && w[0].contains('+')
            && w[0].split('+').all(|n| n.parse::<u64>().is_ok())
            && matches!(w[1], "records" | "Datensätze" | "enregistrements"))
}

/// Every summary number in `text`, in order.
pub fn parse(text: &str) -> Vec<SummaryRow> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let t = raw.trim();
        let _ = dd_gnu(
            t,
            Line {
                n: i + 1,
                out: &mut out,
            },
        ) || dd_bsd(
            t,
            Line {
                n: i + 1,
                out: &mut out,
            },
        ) || dbench_summary(
            t,
            Line {
                n: i + 1,
                out: &mut out,
            },
        ) || dbench_op(
            t,
            Line {
                n: i + 1,
                out: &mut out,
            },
        ) || hdparm(
            t,
            Line {
                n: i + 1,
                out: &mut out,
            },
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(text: &str) -> Vec<(usize, &'static str, f64, String)> {
        parse(text)
            .into_iter()
            .map(|r| (r.line, r.quantity, r.value, r.unit))
            .collect()
    }

    #[test]
    fn dd_in_any_locale_and_bsd() {
        assert_eq!(
            vals("100000000 bytes (100 MB) copied, 11.1252 s, 9.0 MB/s"),
            [
                (1, "bytes", 1e8, "B".into()),
                (1, "time", 11.1252, "s".into()),
                (1, "rate", 9.0, "MB/s".into())
            ]
        );
        let de = vals("1073741824 Bytes (1,1 GB, 1,0 GiB) kopiert, 0,893 s, 1,2 GB/s");
        assert_eq!(de[1], (1, "time", 0.893, "s".into()));
        assert_eq!(de[2], (1, "rate", 1.2, "GB/s".into()));
        assert_eq!(
            vals("8192000000 bytes transferred in 159.062003 secs (51501929 bytes/sec)")[2],
            (1, "rate", 51501929.0, "B/s".into())
        );
        // dd's other lines are no numbers of their own
        assert!(is_furniture("4096+0 records out"));
        assert!(vals("4096+0 records in").is_empty());
    }

    #[test]
    fn dbench_summary_and_table() {
        let t = "2.6.27-rc8: Throughput 13.4231 MB/sec  4000 clients  4000 procs  max_latency=1421988.159 ms\n  WriteX       2202803     7.905  1376.989\n";
        let rows = parse(t);
        assert_eq!(
            (rows[0].quantity, rows[0].value, rows[0].unit.as_str()),
            ("throughput", 13.4231, "MB/s")
        );
        assert_eq!(
            (rows[1].quantity, rows[1].value, rows[1].unit.as_str()),
            ("max_latency", 1421988.159, "ms")
        );
        assert_eq!(rows[0].prefix, "2.6.27-rc8");
        assert_eq!(rows[0].settings[0], ("clients".into(), "4000".into()));
        assert_eq!(
            (rows[3].name.as_str(), rows[3].quantity, rows[3].value),
            ("WriteX", "avg_latency", 7.905)
        );
        assert_eq!(
            parse("#Throughput 884.406 MB/sec (sync open)")[0].prefix,
            ""
        );
        assert!(is_furniture("  Operation      Count    AvgLat    MaxLat"));
        // a word that is no operation
        assert!(parse("Total 3 4.0 5.0").is_empty());
    }

    #[test]
    fn hdparm_timing() {
        let rows = parse(" Timing cached reads:   960 MB in  2.00 seconds = 479.59 MB/sec");
        assert_eq!(rows[2].value, 479.59);
        assert_eq!(rows[2].unit, "MB/s");
        assert_eq!(rows[1].unit, "s");
        assert_eq!(rows[0].name, "Timing cached reads");
    }
}
