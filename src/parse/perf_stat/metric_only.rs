//! `perf stat --metric-only` tables (and `--topdown`, which prints its metrics that
//! way), in both formats: a header line names the metrics, each line under it gives
//! their values, one column per metric, after the usual prefix (the `-I` time stamp,
//! the CPU or aggregate and its CPUs, the `--per-thread` thread).
//!
//! ```text
//!    time,socket,cpus,GHz,insn per cycle,branch-misses of all branches,
//!        0.000683094,S0,8,0.593,2.00,0.60,
//!
//! #           time      %  tma_retiring %  tma_backend_bound
//!      1.001141351                 11.5                 34.9
//! ```
//!
//! Each value is a row: no counter (`value` null), the metric's name as `event` and its
//! unit as `metric_unit`, both from the header. perf prints a named metric as
//! `UNIT  NAME` (two spaces: `%  tma_retiring`, `MB  Total_Memory_BW`); any other
//! header is the metric's unit alone (`insn per cycle`, `GHz`, `retiring`), and is then
//! both. A value perf could not compute (an empty field) is no row.
//!
//! CSV: each field ends with the separator; the header's first fields are perf's names
//! of the prefix (`time`, `cpu`, `core`/`die`/`socket`/`node` and `cpus`, `comm-pid`),
//! and a line is read under it only when it has as many fields. Human: the header's
//! columns are right-aligned over the values, but perf pads the header's prefix apart
//! from the lines', so its labels are told apart by where each ends: the split of the
//! header's words into as many labels as the line has values whose label ends fall
//! closest to the values' ends (shifted so that the last ones meet).

use super::number::{plain_num, time_stamp};
use super::prefix::{is_aggregate, is_cpu, is_thread};
use super::{CounterStatus, PerfStatRow};

/// What a prefix column of a metric-only table holds, by perf's name for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PrefixCol {
    Time,
    Cpu,
    Aggregate,
    Cpus,
    Thread,
}

fn prefix_col(name: &str) -> Option<PrefixCol> {
    match name {
        "time" => Some(PrefixCol::Time),
        "cpu" | "CPU" => Some(PrefixCol::Cpu),
        "core" | "die" | "socket" | "node" | "cache" | "cluster" => Some(PrefixCol::Aggregate),
        "cpus" => Some(PrefixCol::Cpus),
        "comm-pid" | "thread" => Some(PrefixCol::Thread),
        _ => None,
    }
}

/// A metric's column: its name and unit, from the header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Column {
    event: String,
    unit: String,
}

fn column(label: &str) -> Column {
    let label = label.trim();
    match label.split_once("  ") {
        Some((u, n)) if !u.trim().is_empty() && !n.trim().is_empty() => Column {
            event: n.trim().to_string(),
            unit: u.trim().to_string(),
        },
        _ => Column {
            event: label.to_string(),
            unit: label.to_string(),
        },
    }
}

/// What a line gives before its values.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Prefix {
    time_s: Option<f64>,
    cpu: Option<String>,
    cpus: Option<u64>,
    thread: Option<String>,
}

fn row(p: &Prefix, col: &Column, v: f64) -> PerfStatRow {
    PerfStatRow {
        time_s: p.time_s,
        cpu: p.cpu.clone(),
        cpus: p.cpus,
        thread: p.thread.clone(),
        event: col.event.clone(),
        cgroup: None,
        value: None,
        unit: None,
        status: CounterStatus::Counted,
        variance_pct: None,
        run_time_ns: None,
        run_pct: None,
        metric_value: Some(v),
        metric_unit: Some(col.unit.clone()),
        runs: None,
    }
}

/// A CSV metric-only header: its prefix columns, its metrics, its number of fields.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct CsvHeader {
    prefix: Vec<PrefixCol>,
    columns: Vec<Column>,
    fields: usize,
}

/// The fields of a CSV line, without the empty one after the separator perf ends
/// each field with.
fn fields(line: &str, sep: char) -> Vec<&str> {
    let mut f: Vec<&str> = line.split(sep).map(str::trim).collect();
    if f.len() > 1 && f.last() == Some(&"") {
        f.pop();
    }
    f
}

/// `time,socket,cpus,GHz,insn per cycle,`: names only, at least one of them a metric.
pub(super) fn csv_header(line: &str, sep: char) -> Option<CsvHeader> {
    let f = fields(line, sep);
    if f.iter()
        .any(|x| x.is_empty() || x.starts_with('#') || x.parse::<f64>().is_ok())
    {
        return None;
    }
    let n = f.iter().take_while(|x| prefix_col(x).is_some()).count();
    if n == f.len() {
        return None;
    }
    Some(CsvHeader {
        prefix: f[..n].iter().filter_map(|x| prefix_col(x)).collect(),
        columns: f[n..].iter().map(|x| column(x)).collect(),
        fields: f.len(),
    })
}

/// The rows of a CSV line under `h`, when it has the header's fields and each reads as
/// what its column holds.
pub(super) fn csv_rows(h: &CsvHeader, line: &str, sep: char) -> Option<Vec<PerfStatRow>> {
    let f = fields(line, sep);
    if f.len() != h.fields {
        return None;
    }
    let mut p = Prefix::default();
    for (kind, x) in h.prefix.iter().zip(&f) {
        match kind {
            PrefixCol::Time => p.time_s = Some(x.parse().ok()?),
            PrefixCol::Cpu if is_cpu(x) || x.parse::<u64>().is_ok() => p.cpu = Some(x.to_string()),
            PrefixCol::Aggregate if is_aggregate(x) => p.cpu = Some(x.to_string()),
            PrefixCol::Cpus => p.cpus = Some(x.parse().ok()?),
            PrefixCol::Thread if is_thread(x) => p.thread = Some(x.to_string()),
            _ => return None,
        }
    }
    let mut rows = Vec::new();
    for (col, x) in h.columns.iter().zip(&f[h.prefix.len()..]) {
        if !x.is_empty() {
            rows.push(row(&p, col, x.parse().ok()?));
        }
    }
    Some(rows)
}

/// A human metric-only line: its prefix, and each value with where it ends.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct HumanValues {
    prefix: Prefix,
    values: Vec<(usize, f64)>,
}

/// The words of a line and where each starts and ends.
fn words(line: &str) -> Vec<(usize, usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices().chain([(line.len(), ' ')]) {
        match (c.is_ascii_whitespace(), start) {
            (true, Some(s)) => {
                out.push((s, i, &line[s..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    out
}

/// `23.0%`, `-46.6%`, `0.56`: a metric value as perf prints it (`%8.1f`, no grouping).
fn metric_value(s: &str) -> Option<f64> {
    let s = s.strip_suffix('%').unwrap_or(s);
    let (neg, s) = s.strip_prefix('-').map_or((false, s), |r| (true, r));
    let (v, _) = plain_num(s)?;
    Some(if neg { -v } else { v })
}

/// A line of only a prefix and metric values (at least one). perf right-aligns each
/// value in its column, so a line without a prefix that starts with its value (a
/// program's own `39`) is not one.
pub(super) fn human_values(line: &str) -> Option<HumanValues> {
    let w = words(line);
    let mut p = Prefix::default();
    let mut i = 0;
    if let Some(t) = w.first().and_then(|x| time_stamp(x.2)) {
        p.time_s = Some(t);
        i = 1;
    }
    if let Some(&(_, _, first)) = w.get(i) {
        if is_cpu(first) {
            p.cpu = Some(first.to_string());
            i += 1;
        } else if is_aggregate(first) {
            p.cpu = Some(first.to_string());
            i += 1;
            if let Some(n) = w.get(i).and_then(|x| x.2.parse().ok()) {
                p.cpus = Some(n);
                i += 1;
            }
        } else if is_thread(first) {
            p.thread = Some(first.to_string());
            i += 1;
        }
    }
    if i == 0 && w.first().is_some_and(|x| x.0 == 0) {
        return None;
    }
    let values: Option<Vec<(usize, f64)>> = w[i.min(w.len())..]
        .iter()
        .map(|&(_, end, s)| metric_value(s).map(|v| (end, v)))
        .collect();
    let values = values.filter(|v| !v.is_empty())?;
    Some(HumanValues { prefix: p, values })
}

/// The header's labels for `v`'s values, when its words split into as many.
pub(super) fn human_columns(header: &str, v: &HumanValues) -> Option<Vec<Column>> {
    let w: Vec<(usize, usize, &str)> = words(header)
        .into_iter()
        .skip_while(|x| x.2 == "#" || prefix_col(x.2).is_some())
        .collect();
    let (n, m) = (v.values.len(), w.len());
    // Metric names and units are words: a header with a number in it is a program's
    // line (`❯ perf stat -d ./false-sharing 12 1`).
    if m < n || w.iter().any(|x| metric_value(x.2).is_some()) {
        return None;
    }
    // The values' ends, shifted so that the last label ends where the last value does.
    let shift = w[m - 1].1 as i64 - v.values[n - 1].0 as i64;
    let target = |g: usize| v.values[g].0 as i64 + shift;
    // best[g][j]: the least cost of `g + 1` labels over the first `j + 1` words.
    const NONE: i64 = i64::MAX;
    let mut best = vec![vec![NONE; m]; n];
    let mut from = vec![vec![0usize; m]; n];
    for j in 0..m {
        best[0][j] = (w[j].1 as i64 - target(0)).abs();
    }
    for g in 1..n {
        for j in g..m {
            let cost = (w[j].1 as i64 - target(g)).abs();
            for k in (g - 1)..j {
                if best[g - 1][k] != NONE && best[g - 1][k] + cost < best[g][j] {
                    best[g][j] = best[g - 1][k] + cost;
                    from[g][j] = k;
                }
            }
        }
    }
    if best[n - 1][m - 1] == NONE {
        return None;
    }
    let mut ends = vec![m - 1; n];
    for g in (1..n).rev() {
        ends[g - 1] = from[g][ends[g]];
    }
    let mut cols = Vec::with_capacity(n);
    let mut first = 0;
    for end in ends {
        cols.push(column(&header[w[first].0..w[end].1]));
        first = end + 1;
    }
    Some(cols)
}

/// The rows of a human metric-only line under `header`.
pub(super) fn human_rows(header: &str, v: &HumanValues) -> Option<Vec<PerfStatRow>> {
    let cols = human_columns(header, v)?;
    Some(
        cols.iter()
            .zip(&v.values)
            .map(|(c, (_, x))| row(&v.prefix, c, *x))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(cols: &[Column]) -> Vec<(&str, &str)> {
        cols.iter()
            .map(|c| (c.event.as_str(), c.unit.as_str()))
            .collect()
    }

    /// Labels whose ends drift from the values' (a column wider than perf's 20, in a
    /// header printed with other widths): Kajol Jain's POWER9 hv_24x7 metrics, quoted in
    /// a reply on linux-kernel, 2020 ("perf stat --metric-only -M Total_Memory_BW,…").
    #[test]
    fn header_words_split_where_the_values_end() {
        let h = "#           time  MB  Total_Memory_BW MB  Memory_RD_BW_Chip_1 MB  Memory_WR_BW_Chip_1 MB  Memory_WR_BW_Chip_0 MB  Memory_RD_BW_Chip_0 ";
        let l = "     1.000067388                 36.4                      0.2                     36.3                     65.0                     72.1 ";
        let v = human_values(l).unwrap();
        assert_eq!(v.prefix.time_s, Some(1.000067388));
        let cols = human_columns(h, &v).unwrap();
        assert_eq!(
            names(&cols),
            [
                ("Total_Memory_BW", "MB"),
                ("Memory_RD_BW_Chip_1", "MB"),
                ("Memory_WR_BW_Chip_1", "MB"),
                ("Memory_WR_BW_Chip_0", "MB"),
                ("Memory_RD_BW_Chip_0", "MB"),
            ]
        );
        // The header's prefix padded apart from the line's (3 columns to the right), an
        // aggregate with its CPUs, values in %: `perf stat -C 1 --topdown` in Arm's
        // learning path "Analyze … with top-down" (Intel x86 part).
        let h = "                                    retiring      bad speculation       frontend bound        backend bound ";
        let l = "S0-D0-C1           1                 8.5%                 0.0%                 0.1%                91.4% ";
        let v = human_values(l).unwrap();
        assert_eq!(
            (v.prefix.cpu.as_deref(), v.prefix.cpus),
            (Some("S0-D0-C1"), Some(1))
        );
        let rows = human_rows(h, &v).unwrap();
        let got: Vec<(&str, Option<f64>)> = rows
            .iter()
            .map(|r| (r.event.as_str(), r.metric_value))
            .collect();
        assert_eq!(
            got,
            [
                ("retiring", Some(8.5)),
                ("bad speculation", Some(0.0)),
                ("frontend bound", Some(0.1)),
                ("backend bound", Some(91.4))
            ]
        );
        // More values than labels: not this header's line.
        assert_eq!(
            human_columns("#  time   GHz", &human_values(" 1 2").unwrap()),
            None
        );
        // A program's own number, and a command line above one, are not a table.
        assert_eq!(human_values("39"), None);
        let v = human_values("   39").unwrap();
        assert_eq!(
            human_columns("❯ perf stat -d ./false-sharing 12 1", &v),
            None
        );
    }

    #[test]
    fn csv_lines_need_the_headers_fields() {
        let h = csv_header("node,cpus,GHz,insn per cycle,", ',').unwrap();
        assert_eq!(h.prefix, [PrefixCol::Aggregate, PrefixCol::Cpus]);
        let r = csv_rows(&h, "N0,32,0.335,,", ',').unwrap();
        assert_eq!(
            (r.len(), r[0].cpu.as_deref(), r[0].cpus, r[0].metric_value),
            (1, Some("N0"), Some(32), Some(0.335))
        );
        // perf 6.1's header without `cpus`: a field more in the line than in the header.
        let h = csv_header("node,Ghz,frontend cycles idle,", ',').unwrap();
        assert_eq!(csv_rows(&h, "N0,32,0.335,2.10,", ','), None);
        assert_eq!(csv_header("1.0,msec,task-clock,", ','), None);
        assert_eq!(csv_header(" time,", ','), None);
        assert!(csv_rows(&h, "N0,x,0.1,", ',').is_none());
    }
}
