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
        "%" => ("percent", 1.0),
        "x" | "X" | "×" => ("x", 1.0),
        "/s" | "/sec" => ("/s", 1.0),
        "MB/s" | "MiB/s" | "GB/s" | "GiB/s" | "KB/s" | "KiB/s" | "kB/s" => return rate_unit(s),
        "Kb/sec" | "Kb/s" => ("Kb/s", 1.0),
        "Mb/sec" | "Mb/s" => ("Mb/s", 1.0),
        "MB/sec" => ("MB/s", 1.0),
        "iops" | "IOPS" => ("IOPS", 1.0),
        _ => return None,
    })
}

fn rate_unit(s: &str) -> Option<(&'static str, f64)> {
    Some(match s {
        "MB/s" => ("MB/s", 1.0),
        "MiB/s" => ("MiB/s", 1.0),
        "GB/s" => ("GB/s", 1.0),
        "GiB/s" => ("GiB/s", 1.0),
        "KB/s" | "kB/s" => ("KB/s", 1.0),
        "KiB/s" => ("KiB/s", 1.0),
        _ => return None,
    })
}

/// A unit word after a bare number.
pub(super) fn word_unit(w: &str) -> Option<(&'static str, f64)> {
    let w = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '/' && c != '%');
    if let Some(u) = size_unit(w) {
        return Some((u, 1.0));
    }
    Some(match w.to_ascii_lowercase().as_str() {
        "s" | "sec" | "secs" | "second" | "seconds" => ("s", 1.0),
        "ms" | "msec" | "milliseconds" | "millisecond" => ("ms", 1.0),
        "us" | "usec" | "microseconds" => ("us", 1.0),
        "min" | "mins" | "minute" | "minutes" => ("min", 1.0),
        "hour" | "hours" | "hr" | "hrs" => ("min", 60.0),
        "percent" | "%" => ("percent", 1.0),
        "times" => ("x", 1.0),
        "iops" => ("IOPS", 1.0),
        "transactions/sec" | "transactions/s" | "tps" => ("transactions/s", 1.0),
        "reqs/sec" | "reqs/s" | "requests/sec" | "requests/s" | "req/s" => ("requests/s", 1.0),
        "ops/sec" | "ops/s" | "files/sec" | "files/s" => ("/s", 1.0),
        _ => return None,
    })
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
        "percent" => "percent",
        "x" => "ratio",
        "/s" | "IOPS" | "MB/s" | "MiB/s" | "GB/s" | "GiB/s" | "KB/s" | "KiB/s" | "Kb/s"
        | "Mb/s" | "requests/s" | "transactions/s" => "rate",
        "Kb" | "Mb" | "Gb" => "size",
        "year" => "year",
        "" => "number",
        _ => "count",
    }
}
