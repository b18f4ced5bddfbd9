//! Timing text, one [`TimeRow`] per timed command:
//!
//! * bash's `time` keyword: `real    0m18.807s` / `user    0m2.169s` / `sys    0m54.013s`
//!   (any spacing, `1h2m3.4s` forms, a decimal comma from the locale);
//! * `time -p` (bash or GNU): `real 18.80` / `user 2.16` / `sys 54.01`;
//! * BusyBox's `time` (QEMU and embedded test systems): `real\t0m 16.62s` / `user\t0m
//!   0.00s` / `sys\t0m 5.98s`, `1h 2m 03s` from an hour on;
//! * GNU `/usr/bin/time` default format, two lines:
//!   `0.00user 0.17system 0:00.17elapsed 95%CPU (0avgtext+0avgdata 2652maxresident)k` /
//!   `0inputs+0outputs (0major+353minor)pagefaults 0swaps`;
//! * GNU `/usr/bin/time -v` (`Command being timed: …` through `Exit status: …`);
//! * the time of Jörg Schilling's star, bosh and sdd, one line: `53:10.490r 1.020u
//!   1:29.420s 3% …` (real, user, system, CPU share).
//!
//! A text may hold many blocks in any mix (a mail with ten `time` runs): each becomes a
//! row, numbered from 0 in the order they appear. GNU time's `Command exited with
//! non-zero status N` and `Command terminated by signal N` set `exit_status` / `signal`
//! of the block that follows them. A block that starts but never ends (a `real` line
//! without `user`/`sys` at the end of the text, a `-v` block without `Exit status`) is
//! returned with `partial = true`; one that is cut short in the middle of the text gives
//! a warning. Every other non-blank line is a warning, so feeding a whole mail works.
//! Text without any of these is an error naming its first line, or the line of zsh's or
//! BSD's `time` output when it holds one (those formats are not read).
//! Lines of `-v` output with no field here (average sizes, socket messages, signals
//! delivered, page size) are recognised and skipped.

use super::text::{numbered, parse_f64, parse_i64, parse_u64, warning};
use super::{Output, ParseError};
use serde::Serialize;

/// One timed command.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct TimeRow {
    /// 0-based position of this block in the text.
    pub index: u64,
    /// 1-based line where the block starts.
    pub line: u64,
    /// `bash` (`0m1.234s`), `posix` (`time -p`), `busybox` (`0m 1.23s`), `gnu` (default
    /// `/usr/bin/time`), `gnu-verbose` (`/usr/bin/time -v`), `schily` (star's `…r …u …s`).
    pub format: String,
    /// Wall clock seconds.
    pub real_s: Option<f64>,
    pub user_s: Option<f64>,
    pub sys_s: Option<f64>,
    /// GNU: CPU share in percent (`?%` when the run took no measurable time → None).
    pub cpu_percent: Option<f64>,
    /// GNU: maximum resident set size, KiB.
    pub max_rss_kb: Option<u64>,
    pub major_faults: Option<u64>,
    pub minor_faults: Option<u64>,
    /// GNU: file system inputs and outputs (512-byte blocks, as getrusage counts them).
    pub fs_inputs: Option<u64>,
    pub fs_outputs: Option<u64>,
    pub swaps: Option<u64>,
    /// GNU -v only.
    pub voluntary_ctx_switches: Option<u64>,
    pub involuntary_ctx_switches: Option<u64>,
    /// GNU: `Exit status: N` (-v) or `Command exited with non-zero status N`. Not set
    /// for a default-format block without that line (GNU time prints it only when the
    /// status is not 0).
    pub exit_status: Option<i64>,
    /// GNU: `Command terminated by signal N`.
    pub signal: Option<i64>,
    /// GNU -v: the command line, as `Command being timed:` quotes it.
    pub command: Option<String>,
}

const KIND: &str = "time";

#[derive(PartialEq)]
enum Open {
    /// bash/posix: which of real/user/sys the block has.
    Shell { real: bool, user: bool, sys: bool },
    /// GNU default: the first line was read, waiting for the second.
    GnuFirst,
    /// GNU -v: waiting for `Exit status`.
    Verbose,
    /// Everything the format has was read.
    Complete,
}

struct State {
    out: Output<TimeRow>,
    cur: Option<(TimeRow, Open)>,
    /// `Command exited with …` / `terminated by signal …` seen, for the next block.
    pending_exit: Option<i64>,
    pending_signal: Option<i64>,
}

impl State {
    fn start(&mut self, n: usize, format: &str, open: Open) -> &mut TimeRow {
        self.close(n, false);
        let row = TimeRow {
            index: self.out.rows.len() as u64,
            line: n as u64,
            format: format.to_string(),
            exit_status: self.pending_exit.take(),
            signal: self.pending_signal.take(),
            ..TimeRow::default()
        };
        &mut self.cur.insert((row, open)).0
    }

    /// Finish the open block. `at_end`: the text ended, so an unfinished block makes the
    /// output partial instead of giving a warning.
    fn close(&mut self, n: usize, at_end: bool) {
        let Some((row, open)) = self.cur.take() else {
            return;
        };
        let complete = match open {
            Open::Shell { real, user, sys } => real && user && sys,
            Open::Complete => true,
            Open::GnuFirst | Open::Verbose => false,
        };
        if !complete {
            if at_end {
                self.out.partial = true;
            } else {
                self.out.warnings.push(warning(
                    row.line as usize,
                    "",
                    format!(
                        "{} block starting here is incomplete (next block or other text at line {n})",
                        row.format
                    ),
                ));
            }
        }
        self.out.rows.push(TimeRow {
            index: self.out.rows.len() as u64,
            ..row
        });
    }
}

/// Parse timing text.
pub fn parse(text: &str) -> Result<Output<TimeRow>, ParseError> {
    let mut st = State {
        out: Output::default(),
        cur: None,
        pending_exit: None,
        pending_signal: None,
    };
    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(rest) = t.strip_prefix("Command exited with non-zero status ") {
            if let Some(s) = parse_i64(rest.trim()) {
                st.close(n, false);
                st.pending_exit = Some(s);
                continue;
            }
        }
        if let Some(rest) = t.strip_prefix("Command terminated by signal ") {
            if let Some(s) = parse_i64(rest.trim()) {
                st.close(n, false);
                st.pending_signal = Some(s);
                continue;
            }
        }
        if shell_line(&mut st, n, t)
            || gnu_line(&mut st, n, t)
            || schily_line(&mut st, n, t)
            || verbose_line(&mut st, n, t)
        {
            continue;
        }
        st.out
            .warnings
            .push(warning(n, line, "not a line of time output"));
    }
    let end = text.lines().count();
    st.close(end, true);
    if st.out.rows.is_empty() {
        let foreign = numbered(text).find_map(|(n, l)| foreign_time(l.trim()).map(|w| (n, w)));
        let first = numbered(text).find(|(_, l)| !l.trim().is_empty());
        return Err(match (foreign, first) {
            (Some((line, what)), _) => ParseError::Malformed {
                kind: KIND,
                line,
                message: format!(
                    "this is {what}, which fslab does not read; give bash's `time` (or `time -p`), BusyBox's or GNU /usr/bin/time's output"
                ),
            },
            (None, Some((line, text))) => ParseError::Malformed {
                kind: KIND,
                line,
                message: format!(
                    "no `real`/`user`/`sys` lines, no GNU time lines; the text starts: {}",
                    text.trim()
                ),
            },
            (None, None) => ParseError::NothingRecognised {
                kind: KIND,
                expected:
                    "`real`/`user`/`sys` lines, GNU time's `…user …system …elapsed` or `-v` lines",
            },
        });
    }
    Ok(st.out)
}

/// Timing lines of shells and programs fslab does not read, named for the error:
/// zsh's `CMD  0.00s user 0.00s system 84% cpu 0.003 total` and BSD's (macOS)
/// `        0.00 real         0.00 user         0.00 sys`.
fn foreign_time(t: &str) -> Option<&'static str> {
    let w: Vec<&str> = t.split_whitespace().collect();
    if let [.., u, "user", s, "system", p, "cpu", _, "total"] = w.as_slice() {
        if u.ends_with('s') && s.ends_with('s') && p.ends_with('%') {
            return Some("zsh's `time` (`… user … system …% cpu … total`)");
        }
    }
    if let [r, "real", u, "user", s, "sys", ..] = w.as_slice() {
        if [r, u, s].iter().all(|x| parse_f64(x).is_some()) {
            return Some("BSD or macOS /usr/bin/time (`… real … user … sys`)");
        }
    }
    None
}

/// `0m18.807s`, `1h2m3.5s`, `18.807s`, or `18.80` (`time -p`). Returns seconds and
/// whether the value had the bash `…s` form.
fn shell_seconds(s: &str) -> Option<(f64, bool)> {
    if let Some(body) = s.strip_suffix('s') {
        let mut total = 0.0;
        let mut rest = body;
        if let Some((h, r)) = rest.split_once('h') {
            total += parse_u64(h)? as f64 * 3600.0;
            rest = r;
        }
        if let Some((m, r)) = rest.split_once('m') {
            total += parse_u64(m)? as f64 * 60.0;
            rest = r;
        }
        let secs = parse_f64(rest)? + total;
        (secs >= 0.0 && secs.is_finite()).then_some((secs, true))
    } else {
        let secs = parse_f64(s)?;
        (secs >= 0.0 && secs.is_finite()).then_some((secs, false))
    }
}

/// BusyBox's `time` (its applet, and the `time` of its shells) prints each figure with a
/// blank between the units: `0m 16.62s`, and `1h 2m 03s` from an hour on (miscutils/
/// time.c: `%um %u.%02us`, `%uh %um %02us`). The parts, each a number with its unit,
/// joined: `0m16.62s`.
fn busybox_value(parts: &[&str]) -> Option<String> {
    let [.., last] = parts else {
        return None;
    };
    if parts.len() < 2 || parts.len() > 3 || !last.ends_with('s') {
        return None;
    }
    let units_ok = parts
        .iter()
        .rev()
        .skip(1)
        .zip(["m", "h"])
        .all(|(p, unit)| p.strip_suffix(unit).is_some_and(|d| parse_u64(d).is_some()));
    units_ok.then(|| parts.concat())
}

fn shell_line(st: &mut State, n: usize, t: &str) -> bool {
    let mut parts = t.split_whitespace();
    let Some(name) = parts.next() else {
        return false;
    };
    if !matches!(name, "real" | "user" | "sys") {
        return false;
    }
    let values: Vec<&str> = parts.collect();
    let (value, busybox) = match values.as_slice() {
        [v] => ((*v).to_string(), false),
        more => match busybox_value(more) {
            Some(v) => (v, true),
            None => return false,
        },
    };
    let Some((secs, bash)) = shell_seconds(&value) else {
        return false;
    };
    let format = match (busybox, bash) {
        (true, _) => "busybox",
        (false, true) => "bash",
        (false, false) => "posix",
    };
    let continues = match &st.cur {
        Some((row, Open::Shell { real, user, sys })) if row.format == format => match name {
            "real" => false,
            "user" => !*user && !*sys,
            _ => !*sys,
        },
        _ => false,
    };
    if !continues {
        if name != "real" {
            st.out.warnings.push(warning(
                n,
                t,
                format!("`{name}` without the `real` line before it"),
            ));
        }
        st.start(
            n,
            format,
            Open::Shell {
                real: false,
                user: false,
                sys: false,
            },
        );
    }
    if let Some((row, Open::Shell { real, user, sys })) = st.cur.as_mut() {
        match name {
            "real" => {
                row.real_s = Some(secs);
                *real = true;
            }
            "user" => {
                row.user_s = Some(secs);
                *user = true;
            }
            _ => {
                row.sys_s = Some(secs);
                *sys = true;
            }
        }
        if *real && *user && *sys {
            st.close(n, false);
        }
    }
    true
}

/// `0:00.17` (m:ss.cc) or `1:02:03` (h:mm:ss) → seconds.
fn clock_seconds(s: &str) -> Option<f64> {
    let parts: Vec<&str> = s.split(':').collect();
    let secs = match parts.as_slice() {
        [m, s] => parse_u64(m)? as f64 * 60.0 + parse_f64(s)?,
        [h, m, s] => parse_u64(h)? as f64 * 3600.0 + parse_u64(m)? as f64 * 60.0 + parse_f64(s)?,
        _ => return None,
    };
    (secs >= 0.0 && secs.is_finite()).then_some(secs)
}

/// `53:10.490`, `1:02:03.5` or `12.345`: seconds.
fn clock_or_seconds(s: &str) -> Option<f64> {
    if s.contains(':') {
        clock_seconds(s)
    } else {
        parse_f64(s).filter(|v| *v >= 0.0 && v.is_finite())
    }
}

/// A duration as people print it: bash's `1m56.3s`, `1h2m3s`, `18.807s`, or minutes and
/// seconds without the `s` (`1m56`, `~1m56` without its `~`). Seconds.
pub fn duration_seconds(s: &str) -> Option<f64> {
    if s.ends_with('s') {
        return shell_seconds(s).filter(|(_, bash)| *bash).map(|(v, _)| v);
    }
    let (m, sec) = s.split_once('m')?;
    let whole = sec.split('.').next().unwrap_or("");
    if whole.len() != 2 || parse_u64(whole).is_none_or(|v| v >= 60) {
        return None;
    }
    let (h, m) = match m.split_once('h') {
        Some((h, m)) => (parse_u64(h)?, m),
        None => (0, m),
    };
    Some(h as f64 * 3600.0 + parse_u64(m)? as f64 * 60.0 + parse_f64(sec)?)
}

/// The time of Jörg Schilling's tools (star's `-time`, bosh's and sdd's `time`): real,
/// user and system time each with its letter after it, the CPU share after them:
/// `53:10.490r 0.260u 9.510s 95% …`. The `r` value starts the line; a `u` or `s` value
/// must follow it (a lone `12r` is no time).
fn schily_line(st: &mut State, n: usize, t: &str) -> bool {
    let tok: Vec<&str> = t.split_whitespace().collect();
    let Some(real) = tok
        .first()
        .and_then(|r| r.strip_suffix('r'))
        .and_then(clock_or_seconds)
    else {
        return false;
    };
    let value = |suffix: char| {
        tok.iter()
            .skip(1)
            .take(3)
            .find_map(|w| w.strip_suffix(suffix).and_then(clock_or_seconds))
    };
    let (user, sys) = (value('u'), value('s'));
    if user.is_none() && sys.is_none() {
        return false;
    }
    let cpu = tok.iter().skip(1).take(4).find_map(|w| percent(w));
    let row = st.start(n, "schily", Open::Complete);
    row.real_s = Some(real);
    row.user_s = user;
    row.sys_s = sys;
    row.cpu_percent = cpu;
    st.close(n, false);
    true
}

fn percent(s: &str) -> Option<f64> {
    parse_f64(s.strip_suffix('%')?)
}

fn gnu_line(st: &mut State, n: usize, t: &str) -> bool {
    let tok: Vec<&str> = t.split_whitespace().collect();
    // 0.00user 0.17system 0:00.17elapsed 95%CPU (0avgtext+0avgdata 2652maxresident)k
    if let [u, s, e, c, avg, rss] = tok.as_slice() {
        let fields = (|| {
            let user = parse_f64(u.strip_suffix("user")?)?;
            let sys = parse_f64(s.strip_suffix("system")?)?;
            let real = clock_seconds(e.strip_suffix("elapsed")?)?;
            let cpu = c.strip_suffix("%CPU")?;
            let cpu = if cpu == "?" {
                None
            } else {
                Some(parse_f64(cpu)?)
            };
            avg.strip_prefix('(')?.strip_suffix("avgdata")?;
            let rss = parse_u64(rss.strip_suffix("maxresident)k")?)?;
            Some((user, sys, real, cpu, rss))
        })();
        if let Some((user, sys, real, cpu, rss)) = fields {
            let row = st.start(n, "gnu", Open::GnuFirst);
            row.user_s = Some(user);
            row.sys_s = Some(sys);
            row.real_s = Some(real);
            row.cpu_percent = cpu;
            row.max_rss_kb = Some(rss);
            return true;
        }
    }
    // 0inputs+0outputs (0major+353minor)pagefaults 0swaps
    if let [io, faults, swaps] = tok.as_slice() {
        let fields = (|| {
            let (i, o) = io.split_once('+')?;
            let i = parse_u64(i.strip_suffix("inputs")?)?;
            let o = parse_u64(o.strip_suffix("outputs")?)?;
            let (maj, min) = faults.strip_prefix('(')?.split_once('+')?;
            let maj = parse_u64(maj.strip_suffix("major")?)?;
            let min = parse_u64(min.strip_suffix("minor)pagefaults")?)?;
            let sw = parse_u64(swaps.strip_suffix("swaps")?)?;
            Some((i, o, maj, min, sw))
        })();
        if let Some((i, o, maj, min, sw)) = fields {
            match st.cur.as_mut() {
                Some((row, open @ Open::GnuFirst)) => {
                    row.fs_inputs = Some(i);
                    row.fs_outputs = Some(o);
                    row.major_faults = Some(maj);
                    row.minor_faults = Some(min);
                    row.swaps = Some(sw);
                    *open = Open::Complete;
                    st.close(n, false);
                }
                _ => st.out.warnings.push(warning(
                    n,
                    t,
                    "GNU time's second line without the first one before it",
                )),
            }
            return true;
        }
    }
    false
}

const VERBOSE_IGNORED: [&str; 9] = [
    "Average shared text size (kbytes)",
    "Average unshared data size (kbytes)",
    "Average stack size (kbytes)",
    "Average total size (kbytes)",
    "Average resident set size (kbytes)",
    "Socket messages sent",
    "Socket messages received",
    "Signals delivered",
    "Page size (bytes)",
];

fn verbose_line(st: &mut State, n: usize, t: &str) -> bool {
    if let Some(cmd) = t.strip_prefix("Command being timed:") {
        let cmd = cmd.trim();
        let cmd = cmd
            .strip_prefix('"')
            .and_then(|c| c.strip_suffix('"'))
            .unwrap_or(cmd);
        st.start(n, "gnu-verbose", Open::Verbose).command = Some(cmd.to_string());
        return true;
    }
    let labels: [&str; 13] = [
        "User time (seconds)",
        "System time (seconds)",
        "Percent of CPU this job got",
        "Elapsed (wall clock) time (h:mm:ss or m:ss)",
        "Maximum resident set size (kbytes)",
        "Major (requiring I/O) page faults",
        "Minor (reclaiming a frame) page faults",
        "Voluntary context switches",
        "Involuntary context switches",
        "Swaps",
        "File system inputs",
        "File system outputs",
        "Exit status",
    ];
    let Some((label, value)) = labels
        .iter()
        .chain(VERBOSE_IGNORED.iter())
        .find_map(|l| Some((*l, t.strip_prefix(l)?.strip_prefix(':')?.trim())))
    else {
        return false;
    };
    if VERBOSE_IGNORED.contains(&label) {
        return true;
    }
    if !matches!(st.cur, Some((_, Open::Verbose))) {
        // A -v block whose `Command being timed` line is missing (cut off above).
        st.start(n, "gnu-verbose", Open::Verbose);
    }
    let Some((row, _)) = st.cur.as_mut() else {
        return true;
    };
    let bad = |st: &mut State| {
        st.out
            .warnings
            .push(warning(n, t, format!("`{label}` has an unreadable value")))
    };
    let num = parse_u64(value);
    let ok = match label {
        "User time (seconds)" => parse_f64(value).map(|v| row.user_s = Some(v)),
        "System time (seconds)" => parse_f64(value).map(|v| row.sys_s = Some(v)),
        "Percent of CPU this job got" => {
            row.cpu_percent = percent(value);
            Some(())
        }
        "Elapsed (wall clock) time (h:mm:ss or m:ss)" => {
            clock_seconds(value).map(|v| row.real_s = Some(v))
        }
        "Maximum resident set size (kbytes)" => num.map(|v| row.max_rss_kb = Some(v)),
        "Major (requiring I/O) page faults" => num.map(|v| row.major_faults = Some(v)),
        "Minor (reclaiming a frame) page faults" => num.map(|v| row.minor_faults = Some(v)),
        "Voluntary context switches" => num.map(|v| row.voluntary_ctx_switches = Some(v)),
        "Involuntary context switches" => num.map(|v| row.involuntary_ctx_switches = Some(v)),
        "Swaps" => num.map(|v| row.swaps = Some(v)),
        "File system inputs" => num.map(|v| row.fs_inputs = Some(v)),
        "File system outputs" => num.map(|v| row.fs_outputs = Some(v)),
        "Exit status" => parse_i64(value).map(|v| row.exit_status = Some(v)),
        _ => Some(()),
    };
    if ok.is_none() {
        bad(st);
    }
    if label == "Exit status" {
        if let Some((_, open)) = st.cur.as_mut() {
            *open = Open::Complete;
        }
        st.close(n, false);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_forms() {
        assert_eq!(shell_seconds("1m4.441s"), Some((64.441, true)));
        assert_eq!(shell_seconds("1h0m1.5s"), Some((3601.5, true)));
        assert_eq!(shell_seconds("0m0,256s"), Some((0.256, true)));
        assert_eq!(shell_seconds("18.80"), Some((18.8, false)));
        assert_eq!(shell_seconds("xm1s"), None);
        assert_eq!(clock_seconds("1:02:03"), Some(3723.0));
        assert_eq!(clock_seconds("0:00.17"), Some(0.17));
    }

    #[test]
    fn incomplete_blocks() {
        let out =
            parse("real 0m1.000s\nreal 0m2.000s\nuser 0m1.000s\nsys 0m0.500s\nreal 0m3.000s\n")
                .unwrap();
        assert_eq!(out.rows.len(), 3);
        assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
        assert_eq!(out.warnings[0].line, 1);
        assert!(out.partial);
        assert_eq!(out.rows[1].sys_s, Some(0.5));
        assert_eq!(out.rows[2].real_s, Some(3.0));
        assert_eq!(
            out.rows.iter().map(|r| r.index).collect::<Vec<_>>(),
            [0, 1, 2]
        );
    }

    #[test]
    fn gnu_two_lines_and_status() {
        let out = parse(
            "Command exited with non-zero status 2\n1.50user 0.25system 1:02:03elapsed ?%CPU (0avgtext+0avgdata 10maxresident)k\n3inputs+4outputs (5major+6minor)pagefaults 7swaps\n",
        )
        .unwrap();
        assert!(out.warnings.is_empty() && !out.partial);
        let r = &out.rows[0];
        assert_eq!(
            (r.user_s, r.sys_s, r.real_s),
            (Some(1.5), Some(0.25), Some(3723.0))
        );
        assert_eq!(
            (r.cpu_percent, r.exit_status, r.swaps),
            (None, Some(2), Some(7))
        );
        assert_eq!(
            (r.fs_inputs, r.fs_outputs, r.major_faults, r.minor_faults),
            (Some(3), Some(4), Some(5), Some(6))
        );
    }

    #[test]
    fn schily_times_and_durations() {
        // star -time, bosh's `time`: `r`/`u`/`s` after each value
        let out = parse("53:10.490r 1.020u 1:29.420s 3% 0M 0+0k\n").unwrap();
        let r = &out.rows[0];
        assert_eq!(r.format, "schily");
        assert_eq!(
            (r.real_s, r.user_s, r.sys_s, r.cpu_percent),
            (Some(3190.49), Some(1.02), Some(89.42), Some(3.0))
        );
        // a lone `12r` (a column, a revision) is no time
        assert!(parse("12r foo\n").is_err());
        assert_eq!(duration_seconds("1m56"), Some(116.0));
        assert_eq!(duration_seconds("1m56.3s"), Some(116.3));
        assert_eq!(duration_seconds("2h05m00"), Some(7500.0));
        assert_eq!(duration_seconds("12.5s"), Some(12.5));
        // not durations: minutes alone, seconds over 59, a plain number
        assert_eq!(duration_seconds("5m"), None);
        assert_eq!(duration_seconds("1m75"), None);
        assert_eq!(duration_seconds("18.80"), None);
    }
}
