//! The lines fio's normal output prints under a direction line (`read: IOPS=…`), read into
//! numbers: fio 3's and fio 2's latency statistics (`slat (nsec): min=2942, max=87863,
//! avg=3222.02, stdev=1233.34`, also `clat`, `lat` and the fsync section's `sync`), the
//! percentile blocks (`clat percentiles (usec):` and the `|  1.00th=[  273], …` lines
//! under it, wrapped over as many lines as fio needs), and the statistics of the samples
//! (`bw (  KiB/s): min=…, max=…, per=…, avg=…, stdev=…, samples=…`, fio 2's `bw (KB/s)  :`,
//! `iops        : min=…`). Each number keeps its text as printed; a latency keeps the unit
//! fio printed (`usec` → `us`, `nsec` → `ns`, `msec` → `ms`, the importer's time units),
//! converted to nothing. fio shortens large numbers with `k`/`M`/`G` (×1000: `1238.6k`).
//! The latency distribution (`lat (usec)   : 50=60.60%, 100=31.05%`) is the share of I/Os
//! per bucket, no statistic of the run: it is recognised, to be reported, not read. fio
//! 3.30's per-priority lines (`clat prio 1/0 (msec): min=…`, `clat prio 1/0 (10.01% of
//! IOs) percentiles (msec):`) are read like the others, with their [`Prio`]; so are those
//! of fio 3.18 to 3.29, which knew two priorities, `high` and `low` (`high prio_clat
//! (usec): min=…`, `low prio_lat (usec): …`, `high prio (19.97%) clat percentiles
//! (usec):`). A line of these forms whose priority, share or numbers cannot be read is
//! [`Detail::Unread`] (a percentile block's head: [`Detail::UnreadBlock`]), never a guess.

/// One number of a line: the statistic (`min`, `avg`, a percentile `99.90`), its value,
/// its unit, and its text as printed (`avg= 1.65`, `99.90th=[ 8586]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Num {
    pub stat: String,
    pub value: f64,
    pub unit: String,
    pub printed: String,
}

/// A line fio prints under a direction line.
#[derive(Debug, Clone, PartialEq)]
pub enum Detail {
    /// `slat`/`clat`/`lat`/`sync (usec): min=…, max=…, avg=…, stdev=…`: the quantity
    /// (`clat`) and its numbers, each with its statistic.
    Stats { quantity: String, nums: Vec<Num> },
    /// `bw (  KiB/s): …` / `iops : …`: `bandwidth_samples` or `iops_samples`.
    Samples { quantity: String, nums: Vec<Num> },
    /// `clat percentiles (usec):`: the quantity of the rows below (`clat_percentile`)
    /// and their unit.
    PercentileHead { quantity: String, unit: String },
    /// `lat (usec)   : 50=60.60%, …`, with the unit printed.
    Distribution { unit: String },
    /// `clat prio 1/0 (msec): min=…` (fio 3.30 on, with `cmdprio_percentage` or per-I/O
    /// priorities), `high prio_clat (msec): min=…` (fio 3.19 to 3.29): the statistics of
    /// the I/Os of one priority, as `Stats`.
    PrioStats {
        quantity: String,
        prio: Prio,
        nums: Vec<Num>,
    },
    /// `clat prio 1/0 (10.01% of IOs) percentiles (msec):`, `high prio (10.01%) clat
    /// percentiles (msec):` (fio 3.18 to 3.29): the head of one priority's percentile
    /// block, and the share of the I/Os it had (`10.01% of IOs`, `10.01%`).
    PrioPercentileHead {
        quantity: String,
        unit: String,
        prio: Prio,
        share: Option<Num>,
    },
    /// A latency or sample line whose unit or numbers cannot be read: why.
    Unread(String),
    /// The head of a percentile block that cannot be read (its unit, its priority or its
    /// share): why. The `|` lines under it are fio's, and not read either.
    UnreadBlock(String),
}

/// An I/O priority as fio prints it: `class/level` (`1/0`), from fio 3.36 on
/// `class/level/hint` (`2/0/0`); before 3.30 `high` or `low`.
#[derive(Debug, Clone, PartialEq)]
pub struct Prio {
    pub printed: String,
    /// The class's name (ioprio_set(2)): `none` (0), `rt` (1), `be` (2), `idle` (3).
    /// None for `high` and `low`: fio before 3.30 named no class (before 3.28 `high` was
    /// the I/Os `cmdprio_percentage` sent in the RT class; from 3.28 the higher of the
    /// job's priority and the one `cmdprio_class`/`cmdprio` set), and the importer does
    /// not guess one.
    pub class: Option<String>,
}

impl Prio {
    fn read(s: &str) -> Option<Prio> {
        let parts: Vec<&str> = s.split('/').collect();
        if !(2..=3).contains(&parts.len())
            || !parts
                .iter()
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        {
            return None;
        }
        let class = match parts[0] {
            "0" => "none",
            "1" => "rt",
            "2" => "be",
            "3" => "idle",
            _ => return None,
        };
        Some(Prio {
            printed: s.to_string(),
            class: Some(class.into()),
        })
    }

    /// fio 3.18 to 3.29's `high` and `low`.
    fn relative(word: &str) -> Option<Prio> {
        matches!(word, "high" | "low").then(|| Prio {
            printed: word.to_string(),
            class: None,
        })
    }

    /// The settings of its rows: `prio` (as printed) and, when fio named it, `prio_class`.
    pub fn settings(&self) -> Vec<(String, String)> {
        let mut out = vec![("prio".to_string(), self.printed.clone())];
        if let Some(c) = &self.class {
            out.push(("prio_class".into(), c.clone()));
        }
        out
    }
}

/// `clat prio 1/0`, `clat prio 1/0 (10.01% of IOs)`: the quantity, the priority and the
/// text in parentheses after it.
fn prio_head(pre: &str) -> Option<(String, Prio, Option<&str>)> {
    let (q, rest) = pre.split_once(" prio ")?;
    if !matches!(q, "clat" | "slat" | "lat") {
        return None;
    }
    let (p, paren) = match rest.split_once(' ') {
        Some((p, x)) => (p, Some(x.strip_prefix('(')?.strip_suffix(')')?)),
        None => (rest, None),
    };
    Some((q.to_string(), Prio::read(p)?, paren))
}

/// `high prio_clat`, `low prio_lat` (fio 3.19 to 3.29): the quantity and the priority.
fn old_prio_stats(name: &str) -> Option<(String, Prio)> {
    let (w, q) = name.split_once(' ')?;
    let q = q.strip_prefix("prio_")?;
    matches!(q, "clat" | "lat").then_some(())?;
    Some((q.to_string(), Prio::relative(w)?))
}

/// `high prio (19.97%) clat` (fio 3.18 to 3.29): the quantity, the priority and the
/// text in parentheses.
fn old_prio_pct_head(pre: &str) -> Option<(String, Prio, &str)> {
    let (w, rest) = pre.split_once(" prio (")?;
    let (paren, q) = rest.split_once(") ")?;
    matches!(q, "clat" | "lat").then_some(())?;
    Some((q.to_string(), Prio::relative(w)?, paren))
}

/// A name of fio's priority forms, read or not: `clat prio …` (a latency, then `prio`),
/// `high prio_clat` (two words, the second `prio_…`), `high prio (…) clat` (`prio`
/// second, a latency last).
fn prio_like(name: &str) -> bool {
    let w: Vec<&str> = name.split_whitespace().collect();
    let lat = |x: &str| matches!(x, "clat" | "slat" | "lat" | "sync");
    match w.as_slice() {
        [first, "prio", ..] if lat(first) => true,
        [_, second] => second.starts_with("prio_"),
        [_, "prio", .., last] => lat(last),
        _ => false,
    }
}

/// The share of the I/Os a priority had: `10.01% of IOs` (fio 3.30 on), `10.01%` (before).
fn share(paren: &str) -> Option<Num> {
    let v = paren.strip_suffix(" of IOs").unwrap_or(paren);
    Some(Num {
        stat: "share".into(),
        value: number(v.strip_suffix('%')?)?,
        unit: "%".into(),
        printed: paren.to_string(),
    })
}

/// fio's time units in parentheses, as the importer writes them.
fn time_unit(u: &str) -> Option<&'static str> {
    Some(match u {
        "nsec" => "ns",
        "usec" => "us",
        "msec" => "ms",
        "sec" => "s",
        _ => return None,
    })
}

/// A number as fio's `num2str` prints it: digits, a fraction, an SI suffix (`k`, `M`, `G`:
/// ×1000).
fn number(s: &str) -> Option<f64> {
    let s = s.trim();
    let (digits, mult) = match s.char_indices().last() {
        Some((i, 'k')) => (&s[..i], 1e3),
        Some((i, 'M')) => (&s[..i], 1e6),
        Some((i, 'G')) => (&s[..i], 1e9),
        _ => (s, 1.0),
    };
    if digits.is_empty()
        || !digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        || !digits.starts_with(|c: char| c.is_ascii_digit())
    {
        return None;
    }
    digits.parse::<f64>().ok().map(|v| v * mult)
}

/// The `key=number` fields of a line as numbers in `unit`.
fn nums(fields: Vec<(String, f64, String)>, unit: &str) -> Vec<Num> {
    fields
        .into_iter()
        .map(|(stat, value, printed)| Num {
            stat,
            value,
            unit: unit.into(),
            printed,
        })
        .collect()
}

/// `min=275 , max=87560 , avg=6571.88, stdev=2799.57`: each `key=value` with its text.
fn fields(rest: &str) -> Option<Vec<(String, f64, String)>> {
    let mut out = Vec::new();
    for f in rest.split(',') {
        let printed = f.trim();
        if printed.is_empty() {
            continue;
        }
        let (k, v) = printed.split_once('=')?;
        let k = k.trim();
        let v = v.trim().strip_suffix('%').unwrap_or(v.trim());
        out.push((k.to_string(), number(v)?, printed.to_string()));
    }
    (!out.is_empty()).then_some(out)
}

/// `name (unit)` before the colon, white space collapsed: (`clat`, `usec`).
fn name_unit(head: &str) -> Option<(String, String)> {
    let (name, unit) = head.split_once('(')?;
    let unit = unit.strip_suffix(')')?;
    let unit: String = unit.split_whitespace().collect();
    Some((name.trim().to_string(), unit))
}

/// The line `t` (trimmed), if it is one fio prints under a direction line and carries
/// numbers; None for any other line (fio's `cpu`/`IO depths` lines included).
pub fn detail(t: &str) -> Option<Detail> {
    let norm = t.split_whitespace().collect::<Vec<_>>().join(" ");
    // `clat percentiles (usec):`, `lat percentiles (nsec):`, `sync percentiles (nsec):`
    if let Some((pre, rest)) = norm.split_once(" percentiles (") {
        let head = prio_head(pre)
            .map(|(q, p, paren)| (q, p, paren.map(|x| (x, true))))
            .or_else(|| old_prio_pct_head(pre).map(|(q, p, paren)| (q, p, Some((paren, false)))));
        if let Some((q, prio, paren)) = head {
            let unit = rest.strip_suffix("):")?;
            let Some(u) = time_unit(unit) else {
                return Some(Detail::UnreadBlock(format!(
                    "fio's `{pre}` percentiles in `{unit}`, a unit the importer does not know"
                )));
            };
            // `10.01% of IOs` (3.30 on, which may print none), `10.01%` (before)
            let share = match paren {
                Some((x, _)) => match share(x) {
                    Some(n) => Some(n),
                    None => {
                        return Some(Detail::UnreadBlock(format!(
                            "fio's `{pre}` percentiles: the share `{x}` is not `N%` or `N% of IOs`"
                        )))
                    }
                },
                None => None,
            };
            return Some(Detail::PrioPercentileHead {
                quantity: format!("{q}_percentile"),
                unit: u.into(),
                prio,
                share,
            });
        }
        if prio_like(pre) {
            return Some(Detail::UnreadBlock(format!(
                "fio's `{pre}` percentiles: a priority the importer does not read"
            )));
        }
        if matches!(pre, "clat" | "slat" | "lat" | "sync") {
            let unit = rest.strip_suffix("):")?;
            return Some(match time_unit(unit) {
                Some(u) => Detail::PercentileHead {
                    quantity: format!("{pre}_percentile"),
                    unit: u.into(),
                },
                None => Detail::UnreadBlock(format!(
                    "fio's `{pre}` percentiles in `{unit}`, a unit the importer does not know"
                )),
            });
        }
        return None;
    }
    let (head, rest) = norm.split_once(':')?;
    let head = head.trim();
    if head == "iops" {
        return Some(samples("iops_samples", "IOPS", rest));
    }
    let (name, unit) = name_unit(head)?;
    let prio = match prio_head(&name) {
        Some((q, p, None)) => Some((q, p)),
        _ => old_prio_stats(&name),
    };
    if let Some((q, prio)) = prio {
        return Some(match (time_unit(&unit), fields(rest)) {
            (Some(u), Some(f)) => Detail::PrioStats {
                quantity: q,
                prio,
                nums: nums(f, u),
            },
            _ => Detail::Unread(format!(
                "fio's `{name} ({unit})` line: a unit or a field the importer does not read"
            )),
        });
    }
    if prio_like(&name) {
        return Some(Detail::Unread(format!(
            "fio's `{name} ({unit})` line: a priority the importer does not read"
        )));
    }
    match name.as_str() {
        "bw" => Some(samples("bandwidth_samples", &bw_unit(&unit)?, rest)),
        "slat" | "clat" | "lat" | "sync" => {
            let Some(u) = time_unit(&unit) else {
                return Some(Detail::Unread(format!(
                    "fio's `{name}` in `{unit}`, a unit the importer does not know"
                )));
            };
            if name == "lat" && !rest.contains("min=") {
                // the distribution: `2=0.63%, 4=1.71%`
                return Some(Detail::Distribution { unit: unit.clone() });
            }
            let Some(f) = fields(rest) else {
                return Some(Detail::Unread(format!(
                    "fio's `{name} ({unit})` line: a field that is not `key=number`"
                )));
            };
            Some(Detail::Stats {
                quantity: name,
                nums: nums(f, u),
            })
        }
        _ => None,
    }
}

/// fio's bandwidth unit in `bw (  KiB/s)`, fio 2's `bw (KB/s)` and `bw (KB  /s)`, as the
/// importer writes rates (fio 2's `KB` is kept as printed, like its direction lines).
fn bw_unit(u: &str) -> Option<String> {
    match u {
        "B/s" | "KiB/s" | "MiB/s" | "GiB/s" | "KB/s" | "MB/s" | "GB/s" | "kB/s" => {
            Some(u.to_string())
        }
        _ => None,
    }
}

/// `min=…, max=…, per=…, avg=…, stdev=…, samples=…` of `bw`/`iops`: the values in `unit`,
/// `per` in percent, `samples` a count.
fn samples(quantity: &str, unit: &str, rest: &str) -> Detail {
    let Some(f) = fields(rest) else {
        return Detail::Unread(format!(
            "fio's `{quantity}` line: a field that is not `key=number`"
        ));
    };
    Detail::Samples {
        quantity: quantity.into(),
        nums: f
            .into_iter()
            .map(|(k, v, p)| Num {
                unit: match k.as_str() {
                    "per" => "%".into(),
                    "samples" => String::new(),
                    _ => unit.into(),
                },
                stat: k,
                value: v,
                printed: p,
            })
            .collect(),
    }
}

/// A percentile entry that is not `P th=[V]`: its text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("fio percentile `{0}` is not `P th=[V]`")]
pub struct BadPercentile(pub String);

/// A line of a percentile block (`|  1.00th=[  273],  5.00th=[  285],`): each percentile
/// (`1.00`), its value in `unit`, its text. None when the line is not one (the block
/// ended), Err when it is but an entry cannot be read.
pub fn percentiles(t: &str, unit: &str) -> Option<Result<Vec<Num>, BadPercentile>> {
    let rest = t.trim().strip_prefix('|')?;
    let mut out = Vec::new();
    for piece in rest.split(',') {
        let printed = piece.trim();
        if printed.is_empty() {
            continue;
        }
        let entry = printed.split_once("th=[").and_then(|(p, v)| {
            let v = v.strip_suffix(']')?;
            let p = p.trim();
            p.parse::<f64>().ok()?;
            Some((p.to_string(), number(v)?))
        });
        let Some((p, v)) = entry else {
            return Some(Err(BadPercentile(printed.to_string())));
        };
        out.push(Num {
            stat: p,
            value: v,
            unit: unit.into(),
            printed: printed.to_string(),
        });
    }
    Some(Ok(out))
}

#[cfg(test)]
mod tests {
    use super::{detail, percentiles, Detail};

    fn nums(d: Option<Detail>) -> Vec<(String, f64, String, String)> {
        match d {
            Some(Detail::Stats { nums, .. }) | Some(Detail::Samples { nums, .. }) => nums
                .into_iter()
                .map(|n| (n.stat, n.value, n.unit, n.printed))
                .collect(),
            other => panic!("{other:?}"),
        }
    }

    fn n(s: &str, v: f64, u: &str, p: &str) -> (String, f64, String, String) {
        (s.into(), v, u.into(), p.into())
    }

    #[test]
    fn latency_lines_of_fio_3_and_fio_2() {
        assert_eq!(
            nums(detail(
                "clat (nsec): min=865, max=1238.6k, avg=25283.31, stdev=24400.58"
            )),
            [
                n("min", 865.0, "ns", "min=865"),
                n("max", 1238600.0, "ns", "max=1238.6k"),
                n("avg", 25283.31, "ns", "avg=25283.31"),
                n("stdev", 24400.58, "ns", "stdev=24400.58")
            ]
        );
        // fio 2: a space before each comma, `avg= 1.65`
        assert_eq!(
            nums(detail(
                "slat (usec): min=0 , max=120 , avg= 1.65, stdev= 3.46"
            ))[2],
            n("avg", 1.65, "us", "avg= 1.65")
        );
        assert_eq!(
            nums(detail("lat (msec): min=2, max=2134, avg=30.1, stdev=2.2"))[1],
            n("max", 2134.0, "ms", "max=2134")
        );
        assert_eq!(
            detail("lat (usec)   : 50=60.60%, 100=31.05%, 250=2.83%"),
            Some(Detail::Distribution {
                unit: "usec".into()
            })
        );
        assert_eq!(
            detail("lat (msec) : 2=49.50%, 4=2.44%, 10=0.03%"),
            Some(Detail::Distribution {
                unit: "msec".into()
            })
        );
        assert!(matches!(
            detail("clat (fortnights): min=1, max=2, avg=1.5, stdev=0.5"),
            Some(Detail::Unread(_))
        ));
        assert!(matches!(
            detail("clat (usec): min=1, max=lots, avg=1.5, stdev=0.5"),
            Some(Detail::Unread(_))
        ));
        assert_eq!(
            detail("clat percentiles (usec):"),
            Some(Detail::PercentileHead {
                quantity: "clat_percentile".into(),
                unit: "us".into()
            })
        );
        // fio's other lines, and prose, are no details
        assert_eq!(
            detail("cpu          : usr=1.11%, sys=12.24%, ctx=2048"),
            None
        );
        assert_eq!(detail("The latency (as I said): fine"), None);
    }

    #[test]
    fn sample_statistics() {
        let got = nums(detail(
            "bw (  KiB/s): min= 1033, max= 1056, per=100.00%, avg=1044.22, stdev= 9.56, samples=9",
        ));
        assert_eq!(got[0], n("min", 1033.0, "KiB/s", "min= 1033"));
        assert_eq!(got[2], n("per", 100.0, "%", "per=100.00%"));
        assert_eq!(got[5], n("samples", 9.0, "", "samples=9"));
        // fio 2.0's `bw (KB/s)  :` and 2.2's `bw (KB  /s):`
        assert_eq!(
            nums(detail(
                "bw (KB/s)  : min= 6048, max= 8800, per=99.91%, avg=7745.68, stdev=695.83"
            ))[3],
            n("avg", 7745.68, "KB/s", "avg=7745.68")
        );
        assert_eq!(
            nums(detail(
                "bw (KB  /s): min=    0, max= 8800, per=99.91%, avg=7745.68, stdev=695.83"
            ))[1],
            n("max", 8800.0, "KB/s", "max= 8800")
        );
        // non-breaking spaces of a mail client
        assert_eq!(
            nums(detail(
                "iops\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}\u{a0}\u{a0} : min= 2066, max= 2112, avg=2088.67, stdev=19.14, samples=9"
            ))[2],
            n("avg", 2088.67, "IOPS", "avg=2088.67")
        );
    }

    #[test]
    fn priority_lines_of_fio_3_30() {
        match detail("clat prio 1/0 (msec): min=8, max=166, avg=24.64, stdev= 5.93") {
            Some(Detail::PrioStats {
                quantity,
                prio,
                nums,
            }) => {
                assert_eq!((quantity.as_str(), prio.printed.as_str()), ("clat", "1/0"));
                assert_eq!(prio.class.as_deref(), Some("rt"));
                assert_eq!(nums[3].printed, "stdev= 5.93");
                assert_eq!((nums[2].value, nums[2].unit.as_str()), (24.64, "ms"));
            }
            other => panic!("{other:?}"),
        }
        match detail("clat prio 2/0/0 (10.01% of IOs) percentiles (usec):") {
            Some(Detail::PrioPercentileHead {
                quantity,
                unit,
                prio,
                share,
            }) => {
                assert_eq!(
                    (quantity.as_str(), unit.as_str()),
                    ("clat_percentile", "us")
                );
                assert_eq!(
                    (prio.printed.as_str(), prio.class.as_deref()),
                    ("2/0/0", Some("be"))
                );
                let share = share.unwrap();
                assert_eq!(
                    (share.value, share.printed.as_str()),
                    (10.01, "10.01% of IOs")
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            detail("clat prio 9/0 (usec): min=1, max=2, avg=1.5, stdev=0.5"),
            None | Some(Detail::Unread(_))
        ));
        assert!(matches!(
            detail("clat prio 1/0 (usec): min=1, max=x, avg=1.5, stdev=0.5"),
            Some(Detail::Unread(_))
        ));
    }

    /// fio 3.19-3.29's forms (lines of tests/fixtures/world/fio/fio-3.29-normal-cmdprio.txt):
    /// `high`/`low` as printed, no class.
    #[test]
    fn priority_lines_of_fio_3_29() {
        match detail("high prio_clat (nsec): min=107, max=6028.4k, avg=74121.60, stdev=203554.58") {
            Some(Detail::PrioStats {
                quantity,
                prio,
                nums,
            }) => {
                assert_eq!((quantity.as_str(), prio.printed.as_str()), ("clat", "high"));
                assert_eq!(prio.class, None);
                assert_eq!(prio.settings(), [("prio".to_string(), "high".to_string())]);
                assert_eq!(
                    (
                        nums[1].value,
                        nums[1].unit.as_str(),
                        nums[1].printed.as_str()
                    ),
                    (6028400.0, "ns", "max=6028.4k")
                );
            }
            other => panic!("{other:?}"),
        }
        match detail("low prio_lat (usec): min=26, max=16929, avg=170.74, stdev=474.69") {
            Some(Detail::PrioStats { quantity, prio, .. }) => {
                assert_eq!((quantity.as_str(), prio.printed.as_str()), ("lat", "low"));
            }
            other => panic!("{other:?}"),
        }
        match detail("high prio (19.97%) clat percentiles (usec):") {
            Some(Detail::PrioPercentileHead {
                quantity,
                unit,
                prio,
                share,
            }) => {
                assert_eq!(
                    (quantity.as_str(), unit.as_str(), prio.printed.as_str()),
                    ("clat_percentile", "us", "high")
                );
                let share = share.unwrap();
                assert_eq!(
                    (share.value, share.unit.as_str(), share.printed.as_str()),
                    (19.97, "%", "19.97%")
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            detail("low prio (90.15%) lat percentiles (msec):"),
            Some(Detail::PrioPercentileHead { ref quantity, ref unit, .. })
                if quantity == "lat_percentile" && unit == "ms"
        ));
    }

    /// What looks like a priority line but cannot be read is reported, never read as
    /// another line or guessed.
    #[test]
    fn unreadable_priority_lines_are_said() {
        for line in [
            "medium prio_clat (usec): min=1, max=2, avg=1.5, stdev=0.5",
            "high prio_slat (usec): min=1, max=2, avg=1.5, stdev=0.5",
            "high prio_clat (usec): min=1, max=x, avg=1.5, stdev=0.5",
            "high prio_clat (fortnights): min=1, max=2, avg=1.5, stdev=0.5",
            "clat prio 9/0 (usec): min=1, max=2, avg=1.5, stdev=0.5",
        ] {
            assert!(matches!(detail(line), Some(Detail::Unread(_))), "{line}");
        }
        for line in [
            "high prio (lots) clat percentiles (usec):",
            "high prio (5%) slat percentiles (usec):",
            "high prio (5%) clat percentiles (fortnights):",
            "medium prio (5%) clat percentiles (usec):",
            "clat prio 1/0 (most of IOs) percentiles (usec):",
            "clat percentiles (fortnights):",
        ] {
            assert!(
                matches!(detail(line), Some(Detail::UnreadBlock(_))),
                "{line}"
            );
        }
        // prose with a parenthesis is no fio line
        assert_eq!(detail("The io prio (RT): fine"), None);
        assert_eq!(
            detail("high prio (as I said) matters percentiles (mostly):"),
            None
        );
    }

    #[test]
    fn percentile_lines() {
        let got: Vec<(String, f64)> = percentiles(
            "     |  1.00th=[   29],  5.00th=[   32], 10.00th=[   36],",
            "us",
        )
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|n| (n.stat, n.value))
        .collect();
        assert_eq!(
            got,
            [
                ("1.00".into(), 29.0),
                ("5.00".into(), 32.0),
                ("10.00".into(), 36.0)
            ]
        );
        let last = percentiles("| 99.99th=[10421]", "us").unwrap().unwrap();
        assert_eq!(
            (last[0].printed.as_str(), last[0].value),
            ("99.99th=[10421]", 10421.0)
        );
        assert!(percentiles("| 99.99th=[oops]", "us").unwrap().is_err());
        assert!(percentiles("lat (usec) : 50=1%", "us").is_none());
    }
}
