//! The units people print after numbers: size suffixes (`k`, `MiB`, `Kb`), time and rate
//! suffixes (`s`, `/s`, `MB/s`, `Kb/sec`), unit words (`seconds`, `IOPS`, `reqs/sec`), counted
//! nouns (`files`, `subdirectories`), and the quantity name a unit gives a row.

pub(super) fn size_unit(s: &str) -> Option<&'static str> {
    Some(match s {
        "k" | "K" => "KiB",
        "M" => "MiB",
        "G" | "g" => "GiB",
        "T" => "TiB",
        "KiB" | "Ki" => "KiB",
        "MiB" | "Mi" => "MiB",
        "GiB" | "Gi" => "GiB",
        "TiB" | "Ti" => "TiB",
        "KB" | "kB" | "kb" => "KB",
        // sysbench and others print `Kb`/`Mb`/`Gb`, kept as printed
        "Kb" => "Kb",
        "Mb" => "Mb",
        "Gb" => "Gb",
        "MB" | "mb" => "MB",
        "GB" | "gb" => "GB",
        "TB" | "tb" => "TB",
        "B" | "bytes" => "bytes",
        _ => return None,
    })
}

pub(super) fn suffix_unit(s: &str) -> Option<(&'static str, f64)> {
    if let Some(u) = size_unit(s) {
        return Some((u, 1.0));
    }
    Some(match s {
        "s" | "sec" | "secs" => ("s", 1.0),
        "ms" => ("ms", 1.0),
        "us" | "µs" => ("us", 1.0),
        "ns" => ("ns", 1.0),
        "min" | "mins" => ("min", 1.0),
        "h" | "hr" | "hrs" => ("min", 60.0),
        "%" => ("%", 1.0),
        "x" | "X" | "×" => ("x", 1.0),
        "/s" | "/sec" => ("/s", 1.0),
        "MB/s" | "MiB/s" | "GB/s" | "GiB/s" | "KB/s" | "KiB/s" | "kB/s" => return rate_unit(s),
        "Kb/sec" | "Kb/s" => ("Kb/s", 1.0),
        "Mb/sec" | "Mb/s" => ("Mb/s", 1.0),
        "MB/sec" => ("MB/s", 1.0),
        "iops" | "IOPS" => ("IOPS", 1.0),
        // `KBps`: bytes (a capital B); `kbps`, `Mbps`: bits
        "KBps" | "kBps" => ("KB/s", 1.0),
        "MBps" => ("MB/s", 1.0),
        "GBps" => ("GB/s", 1.0),
        "kbps" | "Kbps" => ("Kb/s", 1.0),
        "Mbps" => ("Mb/s", 1.0),
        _ => return None,
    })
}

/// `MB/s`, `mb/s`, `KiB/s`: a byte rate (a lower-case `b` is read as bytes, as people
/// writing `kb/s` mostly mean).
fn rate_unit(s: &str) -> Option<(&'static str, f64)> {
    Some(match s.to_ascii_lowercase().as_str() {
        "mb/s" => ("MB/s", 1.0),
        "mib/s" => ("MiB/s", 1.0),
        "gb/s" => ("GB/s", 1.0),
        "gib/s" => ("GiB/s", 1.0),
        "kb/s" => ("KB/s", 1.0),
        "kib/s" => ("KiB/s", 1.0),
        "b/s" | "bytes/s" => ("B/s", 1.0),
        _ => return None,
    })
}

/// A unit word after a bare number.
pub(super) fn word_unit(w: &str) -> Option<(&'static str, f64)> {
    let w = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '/' && c != '%');
    if let Some(u) = size_unit(w) {
        return Some((u, 1.0));
    }
    if let Some(u) = suffix_unit(w).filter(|_| w.contains('/')) {
        return Some(u);
    }
    Some(match w.to_ascii_lowercase().as_str() {
        "s" | "sec" | "secs" | "second" | "seconds" => ("s", 1.0),
        "ms" | "msec" | "milliseconds" | "millisecond" => ("ms", 1.0),
        "us" | "usec" | "microseconds" => ("us", 1.0),
        "min" | "mins" | "minute" | "minutes" => ("min", 1.0),
        "hour" | "hours" | "hr" | "hrs" => ("min", 60.0),
        "percent" | "%" => ("%", 1.0),
        "times" => ("x", 1.0),
        "iops" => ("IOPS", 1.0),
        "transactions/sec" | "transactions/s" | "tps" => ("transactions/s", 1.0),
        "reqs/sec" | "reqs/s" | "requests/sec" | "requests/s" | "req/s" => ("requests/s", 1.0),
        "ops/sec" | "ops/s" | "files/sec" | "files/s" => ("/s", 1.0),
        "qps" | "queries/s" | "queries/sec" => ("qps", 1.0),
        // a rate after a blank, in any case (`88.7 MB/s`, `31.9 kb/s`, `452 MB/sec`)
        l => return rate_unit(&l.replace("/sec", "/s")),
    })
}

/// A size unit written as a word (`megabytes`, `KB`) for `N megabytes per second`.
fn size_word(w: &str) -> Option<&'static str> {
    Some(match w.to_ascii_lowercase().as_str() {
        "bytes" | "b" => "B",
        "kilobytes" | "kb" => "KB",
        "kibibytes" | "kib" => "KiB",
        "megabytes" | "mb" => "MB",
        "mebibytes" | "mib" => "MiB",
        "gigabytes" | "gb" => "GB",
        "gibibytes" | "gib" => "GiB",
        _ => return None,
    })
}

/// A rate in words after a number, `megabytes per second`, `MB a second`: the unit and
/// how many words it took.
pub(super) fn rate_words(words: &[&str]) -> Option<(String, usize)> {
    let [size, per, second, ..] = words else {
        return None;
    };
    let second = second
        .trim_end_matches(|c: char| !c.is_alphanumeric())
        .to_ascii_lowercase();
    (matches!(*per, "per" | "a") && matches!(second.as_str(), "second" | "sec" | "s"))
        .then(|| size_word(size).map(|u| (format!("{u}/s"), 3)))
        .flatten()
}

/// Nouns counted by a number (`256 subdirectories` → `directories`).
pub(super) fn count_noun(w: &str) -> Option<String> {
    let w = w
        .trim_matches(|c: char| !c.is_alphanumeric() && c != '_')
        .to_ascii_lowercase();
    let canonical = match w.as_str() {
        "subdirectories" | "subdirs" | "dirs" | "directory" | "subdirectory" | "dir" => {
            "directories"
        }
        "file" | "files" => "files",
        "directories" => "directories",
        "runs" => "runs",
        "inodes" => "inodes",
        "blocks" => "blocks",
        "extents" => "extents",
        "seeks" => "seeks",
        "run" | "iterations" | "iteration" | "passes" => "runs",
        "thread" | "threads" | "process" | "processes" | "procs" | "jobs" => "processes",
        "op" | "ops" | "operations" | "operation" => "ops",
        "inode" => "inodes",
        "block" => "blocks",
        "extent" => "extents",
        "transaction" | "transactions" => "transactions",
        "disk" | "disks" | "drive" | "drives" => "disks",
        "cpu" | "cpus" | "cores" | "core" => "cpus",
        _ => "",
    };
    if !canonical.is_empty() {
        return Some(canonical.to_string());
    }
    None
}

/// A quantity name from a unit, for rows with no better name.
pub fn quantity_name(unit: &str) -> &'static str {
    match unit {
        "s" | "ms" | "us" | "ns" | "min" => "time",
        "KiB" | "MiB" | "GiB" | "TiB" | "KB" | "MB" | "GB" | "TB" | "bytes" => "size",
        "%" => "percent",
        "x" => "ratio",
        "/s" | "IOPS" | "MB/s" | "MiB/s" | "GB/s" | "GiB/s" | "KB/s" | "KiB/s" | "Kb/s"
        | "Mb/s" | "B/s" | "requests/s" | "transactions/s" | "qps" => "rate",
        "Kb" | "Mb" | "Gb" => "size",
        "year" => "year",
        "" => "number",
        _ => "count",
    }
}
