//! What `fslab calibrate` records in `manifest.json` (`calibration`): the design (which
//! point ran as two sides, how many pairs, how many replicates a side each comparison
//! takes, the decision rules' settings), the effect injected into side B if any, and the
//! rates measured so far with their intervals. The rows behind the rates, one per
//! comparison, are the bundle's `calibration` table. The analysis computes both
//! (`analysis::calibration`); the store only keeps them.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A known slowdown put into side B of a calibration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Injection {
    /// Side B's workload command runs under `fslab delay --pct PCT --`, which times the
    /// command and then waits `pct` % of that time before it exits (a sleep to 200 µs
    /// before the deadline, then a busy-wait to it), inside the timed region; side A's
    /// runs under `fslab delay --pct 0 --`, so both sides start the same wrapper. Any
    /// workload; the command's own time grows by exactly `pct` %.
    Delay { pct: f64 },
    /// As [`Injection::Delay`], but the wait is CPU time: `fslab delay --cpu --pct PCT
    /// --` busy-waits until its own CPU time has grown by `pct` % of the command's CPU
    /// time (user + system, its whole process tree). Meant for the metric `cpu_s`
    /// (`user_s + sys_s`), which waiting for a CPU does not change.
    CpuDelay { pct: f64 },
    /// `fslab stress --delay-pct PCT`: each stress process busy-waits (on the CPU) for
    /// `pct` % of the time it has spent working, every 64 operations and after the last.
    StressDelay { pct: f64 },
    /// fio's own per-I/O stall, as a busy-wait: `--thinktime=USEC --thinktime_spin=USEC
    /// --thinktime_blocks=BLOCKS`, `ios` I/Os a run (the job's size ÷ block size), so
    /// `usec × ⌊ios ÷ blocks⌋` µs a run. fio 3.33 (Debian 12) stalls with
    /// `thinktime_spin` (measured: 6 IOPS, against about 19,000 with the same thinktime
    /// as a sleep): use `Delay` for fio there.
    FioSpin { usec: u64, blocks: u64, ios: u64 },
    /// Side B's device served by its disk model (`medium:`) with every time it charges
    /// `pct` % longer: seeks × (1 + pct/100), the rotation speed and the media rate ÷ (1 +
    /// pct/100). The model keeps its own clock, so each request's charge, and the charge of
    /// the whole stream, grows by exactly `pct` %; the host's own time per request (the
    /// FUSE round trip, the loop worker) is not scaled.
    Medium { device: String, pct: f64 },
    /// A cgroup block-I/O throttle on side B's device (`throttle:` of that device).
    Throttle {
        device: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        read_iops: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        write_iops: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        read_bps: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        write_bps: Option<u64>,
    },
}

/// What an injection is expected to do to side B's metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Expected {
    /// A known ratio B ÷ A.
    Ratio(f64),
    /// A known number of seconds added to each timed iteration; the ratio is
    /// 1 + seconds ÷ the mean of side A.
    AddedSeconds(f64),
    /// Not known in advance (a throttle slows what it catches by an amount that depends
    /// on the workload): power is measured, coverage is not.
    Unknown,
}

impl Injection {
    /// The expected effect on `wall_s` of side B's timed iterations.
    pub fn expected(&self) -> Expected {
        match self {
            Injection::Delay { pct }
            | Injection::CpuDelay { pct }
            | Injection::StressDelay { pct }
            | Injection::Medium { pct, .. } => Expected::Ratio(1.0 + pct / 100.0),
            Injection::FioSpin { usec, blocks, ios } => {
                Expected::AddedSeconds(*usec as f64 * 1e-6 * (ios / (*blocks).max(1)) as f64)
            }
            Injection::Throttle { .. } => Expected::Unknown,
        }
    }

    /// A short label for side B's point id: `stress-delay=2%`.
    pub fn label(&self) -> String {
        match self {
            Injection::Delay { pct } => format!("delay={pct}%"),
            Injection::CpuDelay { pct } => format!("cpu-delay={pct}%"),
            Injection::StressDelay { pct } => format!("stress-delay={pct}%"),
            Injection::FioSpin { usec, blocks, .. } => format!("fio-spin={usec}us/{blocks}"),
            Injection::Medium { device, pct } => format!("medium={device}+{pct}%"),
            Injection::Throttle { device, .. } => format!("throttle={device}"),
        }
    }
}

impl fmt::Display for Injection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Injection::Delay { pct } => write!(
                f,
                "side B's workload command runs under `fslab delay --pct {pct}`, which waits {pct} % of the command's own measured time before exiting, inside the timed region (side A's under `fslab delay --pct 0`): a {pct} % slowdown of the command by construction"
            ),
            Injection::CpuDelay { pct } => write!(
                f,
                "side B's workload command runs under `fslab delay --cpu --pct {pct}`, which busy-waits until it has used {pct} % of the command's own CPU time (user + system) before exiting, inside the timed region (side A's under `fslab delay --cpu --pct 0`): a {pct} % growth of the command's CPU time by construction"
            ),
            Injection::StressDelay { pct } => write!(
                f,
                "side B's `fslab stress` busy-waits for {pct} % of the time each of its processes spends working (`--delay-pct {pct}`): a {pct} % slowdown of the operations by construction"
            ),
            Injection::FioSpin { usec, blocks, ios } => write!(
                f,
                "side B's fio spins {usec} µs every {blocks} I/Os (`--thinktime={usec} --thinktime_spin={usec} --thinktime_blocks={blocks}`), {} s a run of {ios} I/Os",
                *usec as f64 * 1e-6 * (ios / (*blocks).max(1)) as f64
            ),
            Injection::Medium { device, pct } => write!(
                f,
                "side B's device `{device}` served by its disk model with every charge {pct} % longer (seeks × {s}, rotation speed and media rate ÷ {s}); the host's own time per request (FUSE round trip, loop worker), on both sides alike, is not scaled",
                s = 1.0 + pct / 100.0
            ),
            Injection::Throttle {
                device,
                read_iops,
                write_iops,
                read_bps,
                write_bps,
            } => {
                let limits: Vec<String> = [
                    ("read_iops", read_iops),
                    ("write_iops", write_iops),
                    ("read_bps", read_bps),
                    ("write_bps", write_bps),
                ]
                .iter()
                .filter_map(|(k, v)| v.map(|v| format!("{k} {v}")))
                .collect();
                write!(
                    f,
                    "side B's device `{device}` throttled by its cgroup ({}); the slowdown this causes is not known in advance",
                    limits.join(", ")
                )
            }
        }
    }
}

/// Why an `--inject` spec was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InjectionSpecError {
    #[error("--inject {spec:?}: unknown kind `{kind}`; expected one of {KINDS}")]
    UnknownKind { spec: String, kind: String },
    #[error("--inject {spec:?}: `{kind}` has no setting `{key}`; its settings: {known}")]
    UnknownKey {
        spec: String,
        kind: &'static str,
        key: String,
        known: &'static str,
    },
    #[error("--inject {spec:?}: `{key}={value}`: {expected}")]
    BadValue {
        spec: String,
        key: String,
        value: String,
        expected: &'static str,
    },
    #[error("--inject {spec:?}: `{item}` is not KEY=VALUE")]
    NotKeyValue { spec: String, item: String },
    #[error("--inject {spec:?}: `{kind}` needs `{key}` (e.g. {example})")]
    Missing {
        spec: String,
        kind: &'static str,
        key: &'static str,
        example: &'static str,
    },
}

/// The kinds `--inject` knows, with an example each.
const KINDS: &str = "delay:pct=2 (any workload), cpu-delay:pct=2 (any workload, for --metric cpu_s), stress-delay:pct=2 (`{{fslab}} stress`), fio-spin:usec=U,blocks=B,ios=N (fio), medium:device=NAME,pct=2 (a device with a disk model, `medium:`), throttle:device=NAME,read_iops=N[,write_iops=N,read_bps=N,write_bps=N]";

impl std::str::FromStr for Injection {
    type Err = InjectionSpecError;

    /// `KIND:KEY=VALUE,KEY=VALUE` (see [`KINDS`]).
    fn from_str(spec: &str) -> Result<Injection, InjectionSpecError> {
        let (kind, rest) = spec.split_once(':').unwrap_or((spec, ""));
        let mut kv = Vec::new();
        for item in rest.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| InjectionSpecError::NotKeyValue {
                    spec: spec.into(),
                    item: item.into(),
                })?;
            kv.push((k.trim().to_string(), v.trim().to_string()));
        }
        let (kind, known, example): (&'static str, &'static [&'static str], &'static str) =
            match kind.trim() {
                "delay" => ("delay", &["pct"], "delay:pct=2"),
                "cpu-delay" => ("cpu-delay", &["pct"], "cpu-delay:pct=2"),
                "stress-delay" => ("stress-delay", &["pct"], "stress-delay:pct=2"),
                "fio-spin" => (
                    "fio-spin",
                    &["usec", "blocks", "ios"],
                    "fio-spin:usec=100,blocks=64,ios=16384",
                ),
                "medium" => ("medium", &["device", "pct"], "medium:device=data,pct=2"),
                "throttle" => (
                    "throttle",
                    &["device", "read_iops", "write_iops", "read_bps", "write_bps"],
                    "throttle:device=data,read_iops=2000",
                ),
                other => {
                    return Err(InjectionSpecError::UnknownKind {
                        spec: spec.into(),
                        kind: other.into(),
                    })
                }
            };
        let known_text: &'static str = match kind {
            "delay" | "cpu-delay" | "stress-delay" => "pct",
            "fio-spin" => "usec, blocks, ios",
            "medium" => "device, pct",
            _ => "device, read_iops, write_iops, read_bps, write_bps",
        };
        for (k, _) in &kv {
            if !known.contains(&k.as_str()) {
                return Err(InjectionSpecError::UnknownKey {
                    spec: spec.into(),
                    kind,
                    key: k.clone(),
                    known: known_text,
                });
            }
        }
        let get = |key: &'static str| kv.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        let need = |key: &'static str| {
            get(key).ok_or_else(|| InjectionSpecError::Missing {
                spec: spec.into(),
                kind,
                key,
                example,
            })
        };
        let bad = |key: &str, value: &str, expected: &'static str| InjectionSpecError::BadValue {
            spec: spec.into(),
            key: key.into(),
            value: value.into(),
            expected,
        };
        let pct = |v: String| -> Result<f64, InjectionSpecError> {
            match v.trim_end_matches('%').parse::<f64>() {
                Ok(p) if p > 0.0 && p <= 1000.0 => Ok(p),
                _ => Err(bad(
                    "pct",
                    &v,
                    "expected a percentage above 0 and at most 1000 (e.g. pct=2)",
                )),
            }
        };
        let count = |key: &'static str, v: String| -> Result<u64, InjectionSpecError> {
            match v.parse::<u64>() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(bad(key, &v, "expected a whole number above 0")),
            }
        };
        Ok(match kind {
            "delay" => Injection::Delay {
                pct: pct(need("pct")?)?,
            },
            "cpu-delay" => Injection::CpuDelay {
                pct: pct(need("pct")?)?,
            },
            "stress-delay" => Injection::StressDelay {
                pct: pct(need("pct")?)?,
            },
            "fio-spin" => Injection::FioSpin {
                usec: count("usec", need("usec")?)?,
                blocks: count("blocks", need("blocks")?)?,
                ios: count("ios", need("ios")?)?,
            },
            "medium" => Injection::Medium {
                device: need("device")?,
                pct: pct(need("pct")?)?,
            },
            _ => {
                let opt = |key: &'static str| get(key).map(|v| count(key, v)).transpose();
                Injection::Throttle {
                    device: need("device")?,
                    read_iops: opt("read_iops")?,
                    write_iops: opt("write_iops")?,
                    read_bps: opt("read_bps")?,
                    write_bps: opt("write_bps")?,
                }
            }
        })
    }
}

/// How a calibration is laid out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct CalibrationDesign {
    /// The experiment's point that both sides run (its id in the plan).
    pub point: String,
    /// The point ids of the two sides in this bundle.
    pub side_a: String,
    pub side_b: String,
    /// Pairs asked for: replicates a side, run in blocks of one replicate of each side,
    /// the order within a block random (the bundle's `run_order`).
    pub pairs: u32,
    /// Replicates a side per comparison: comparison c takes pairs c·k + 1 … (c + 1)·k.
    pub per_side: u32,
    /// The runs column compared.
    pub metric: String,
    /// Leading iterations of each replicate left out as warm-up.
    pub warmup: usize,
    /// `fslab compare`'s significance level (on the Holm-adjusted p-value).
    pub alpha: f64,
    /// `fslab compare`'s noise threshold, in percent; also the half-width of the band of
    /// the tier rule's "no difference" claim.
    pub threshold_pct: f64,
    /// What was injected into side B; None for an A/A calibration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub injection: Option<Injection>,
}

/// A counted event of the comparisons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RateEvent {
    /// `fslab compare`'s verdict is `significant` (either direction).
    CompareSignificant,
    /// … and side B is the slower.
    CompareSignificantSlower,
    /// `fslab compare`'s adjusted p-value is below α (significant or within the noise
    /// threshold), either direction.
    CompareBelowAlpha,
    /// The tier rule on the claim "B is within ± threshold of A" says `not reproduced`:
    /// it calls a difference larger than the threshold.
    TierDiffers,
    /// … says `reproduced`: it shows the sides the same within the threshold.
    TierSame,
    /// The tier rule on the claim "B is slower than A" (B ÷ A ≥ 1) says `reproduced`.
    TierSlower,
    /// The 95 % interval of B ÷ A covers the true ratio (1, or the injected effect).
    IntervalCovers,
}

impl RateEvent {
    pub const ALL: [RateEvent; 7] = [
        RateEvent::CompareSignificant,
        RateEvent::CompareSignificantSlower,
        RateEvent::CompareBelowAlpha,
        RateEvent::TierDiffers,
        RateEvent::TierSame,
        RateEvent::TierSlower,
        RateEvent::IntervalCovers,
    ];

    /// What the event is, in words.
    pub fn label(self) -> &'static str {
        match self {
            RateEvent::CompareSignificant => "`fslab compare`: significant (either way)",
            RateEvent::CompareSignificantSlower => "`fslab compare`: significant, B slower",
            RateEvent::CompareBelowAlpha => "`fslab compare`: adjusted p < α (either way)",
            RateEvent::TierDiffers => {
                "tier rule, claim \"B within ± threshold of A\": not reproduced"
            }
            RateEvent::TierSame => "tier rule, claim \"B within ± threshold of A\": reproduced",
            RateEvent::TierSlower => "tier rule, claim \"B slower than A\": reproduced",
            RateEvent::IntervalCovers => "95 % interval of B ÷ A covers the true ratio",
        }
    }
}

/// How often an event happened, with its interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateRecord {
    pub event: RateEvent,
    /// What the rate is here: a false-positive rate, power, coverage, or a rate shown
    /// for orientation.
    pub meaning: String,
    pub count: u64,
    pub of: u64,
    pub rate: Option<f64>,
    /// The 95 % Clopper–Pearson interval of the rate.
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// The rate the rule is designed to have here, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nominal: Option<f64>,
}

/// A calibration as `manifest.json` records it, updated after each comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct CalibrationRecord {
    pub design: CalibrationDesign,
    /// Comparisons done (each is a row of the `calibration` table).
    pub comparisons: u32,
    /// The median over the comparisons of the smallest ratio B ÷ A each could have
    /// detected with 90 % power at its own spread; None without one (and in records
    /// written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detectable_median: Option<f64>,
    /// The true ratio B ÷ A the coverage is checked against: 1 for A/A, the injected
    /// effect otherwise; None when it is not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truth: Option<f64>,
    /// How the truth was obtained.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truth_note: Option<String>,
    pub rates: Vec<RateRecord>,
    /// Every verdict of this calibration states this (the unit, the design, and the
    /// injection when there is one).
    pub stated: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inject_specs_parse_and_bad_ones_say_what_is_right() {
        assert_eq!(
            "delay:pct=2".parse::<Injection>(),
            Ok(Injection::Delay { pct: 2.0 })
        );
        assert_eq!(
            "cpu-delay:pct=2".parse::<Injection>(),
            Ok(Injection::CpuDelay { pct: 2.0 })
        );
        assert_eq!(
            "stress-delay:pct=0.5%".parse::<Injection>(),
            Ok(Injection::StressDelay { pct: 0.5 })
        );
        assert_eq!(
            "fio-spin:usec=10,blocks=8,ios=100".parse::<Injection>(),
            Ok(Injection::FioSpin {
                usec: 10,
                blocks: 8,
                ios: 100
            })
        );
        assert_eq!(
            "throttle:device=data, read_iops=200".parse::<Injection>(),
            Ok(Injection::Throttle {
                device: "data".into(),
                read_iops: Some(200),
                write_iops: None,
                read_bps: None,
                write_bps: None
            })
        );
        let e = |s: &str| s.parse::<Injection>().unwrap_err().to_string();
        assert!(e("slow:pct=2").contains("unknown kind `slow`; expected one of delay:pct=2"));
        assert!(e("delay").contains("needs `pct` (e.g. delay:pct=2)"));
        assert!(e("delay:pct=-1").contains("`pct=-1`: expected a percentage above 0"));
        assert!(e("delay:pct=2,usec=3").contains("has no setting `usec`; its settings: pct"));
        assert!(e("delay:2").contains("`2` is not KEY=VALUE"));
        assert!(e("throttle:read_iops=5").contains("needs `device`"));
        assert!(e("throttle:device=d,read_iops=x").contains("expected a whole number"));
    }
}
