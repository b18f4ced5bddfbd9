//! `perf stat` output in its two text formats, into one row type, [`PerfStatRow`]:
//!
//! - [`parse`] reads `perf stat -x,` (CSV, kind `perf-stat`), in [`csv`];
//! - [`parse_human`] reads the default human-readable format, the one pasted into mails
//!   (kind `perf-stat-human`), in [`human`].
//!
//! Two kinds rather than one that guesses, as fio's `fio` and `fio-terse`: an experiment
//! that runs `perf stat -x,` says so, and a mail's paste is read with the other. Both
//! fill the same columns, so both go to the bundle's `perf_stat` table; a field one
//! format does not print is null in its rows (the human format has no run time in ns,
//! the CSV has no header with the number of runs).

use serde::Serialize;

pub mod csv;
pub mod human;
mod metric_only;
mod number;
mod prefix;

pub use csv::parse;
pub use human::parse_human;

/// Whether perf could count the event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CounterStatus {
    Counted,
    NotSupported,
    NotCounted,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PerfStatRow {
    /// Seconds since the start, with `-I`.
    pub time_s: Option<f64>,
    /// `CPU3`, `S0`, `S0-D0-C1` with per-CPU or aggregated counting.
    pub cpu: Option<String>,
    /// How many CPUs an aggregate covers (`--per-socket` and the like).
    pub cpus: Option<u64>,
    /// With `--per-thread`: the thread as perf names it, `comm-pid` (`python3-21698`).
    pub thread: Option<String>,
    /// The event as perf names it (`task-clock:u`, `cpu_core/cycles/`). In the human
    /// format, the trailer's times are rows too: `seconds time elapsed`,
    /// `seconds user` and `seconds sys`, with unit `s`.
    pub event: String,
    /// With `-G CGROUP` or `--for-each-cgroup`: the cgroup the event was counted in
    /// (empty when perf printed an empty name).
    pub cgroup: Option<String>,
    pub value: Option<f64>,
    /// `msec` for task-clock; empty for counts; `s` for the human format's trailer.
    pub unit: Option<String>,
    pub status: CounterStatus,
    /// With `-r`: the standard deviation over the runs, in % of the mean.
    pub variance_pct: Option<f64>,
    /// CSV only: the time the counter ran, in ns.
    pub run_time_ns: Option<u64>,
    /// Percentage of the run this counter was counted.
    pub run_pct: Option<f64>,
    /// The derived metric (`0.045`, with unit `CPUs utilized`). With `--metric-only` a
    /// row is one metric: no counter (`value` null), its unit from the table's header
    /// (docs/parse-formats.md).
    pub metric_value: Option<f64>,
    pub metric_unit: Option<String>,
    /// Human format with `-r N`: N, from the header `Performance counter stats for
    /// '…' (N runs):` (the values are means over the runs). Null in CSV, which has no
    /// header, and without `-r`.
    pub runs: Option<u64>,
}
