//! What perf stat prints before a counter's value, in every format: an aggregate id
//! (`--per-socket` …), a CPU (`-A`), a thread (`--per-thread`). Shared by the CSV, the
//! human and the `--metric-only` readers.

/// An aggregate id printed before the value: `S0`, `S0-D0`, `S0-D0-C1`, `N0`.
pub(super) fn is_aggregate(s: &str) -> bool {
    let mut parts = s.split('-');
    parts.all(|p| {
        let mut c = p.chars();
        matches!(c.next(), Some('S' | 'D' | 'C' | 'N' | 'L'))
            && !c.as_str().is_empty()
            && c.as_str().chars().all(|d| d.is_ascii_digit())
    })
}

/// `CPU3`.
pub(super) fn is_cpu(s: &str) -> bool {
    s.strip_prefix("CPU")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// `python3-21698`: `--per-thread`'s `comm-pid` (perf prints the thread's comm, a dash
/// and its id). An aggregate id (`S0-D0`) or a CPU is not one.
pub(super) fn is_thread(s: &str) -> bool {
    s.rsplit_once('-').is_some_and(|(comm, pid)| {
        !comm.trim().is_empty()
            && !pid.is_empty()
            && pid.bytes().all(|b| b.is_ascii_digit())
            && !is_aggregate(s)
            && !is_cpu(s)
    })
}
