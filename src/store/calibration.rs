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
    /// `fslab stress --delay-pct PCT`: each stress process busy-waits (on the CPU) for
    /// `pct` % of the time it has spent working, every 64 operations and after the last.
    StressDelay { pct: f64 },
    /// fio's own per-I/O stall, as a busy-wait: `--thinktime=USEC --thinktime_spin=USEC
    /// --thinktime_blocks=BLOCKS`, `ios` I/Os a run (the job's size ÷ block size), so
    /// `usec × ⌊ios ÷ blocks⌋` µs a run.
    FioSpin { usec: u64, blocks: u64, ios: u64 },
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
            Injection::StressDelay { pct } => Expected::Ratio(1.0 + pct / 100.0),
            Injection::FioSpin { usec, blocks, ios } => {
                Expected::AddedSeconds(*usec as f64 * 1e-6 * (ios / (*blocks).max(1)) as f64)
            }
            Injection::Throttle { .. } => Expected::Unknown,
        }
    }

    /// A short label for side B's point id: `stress-delay=2%`.
    pub fn label(&self) -> String {
        match self {
            Injection::StressDelay { pct } => format!("stress-delay={pct}%"),
            Injection::FioSpin { usec, blocks, .. } => format!("fio-spin={usec}us/{blocks}"),
            Injection::Throttle { device, .. } => format!("throttle={device}"),
        }
    }
}

impl fmt::Display for Injection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Injection::StressDelay { pct } => write!(
                f,
                "side B's `fslab stress` busy-waits for {pct} % of the time each of its processes spends working (`--delay-pct {pct}`): a {pct} % slowdown of the operations by construction"
            ),
            Injection::FioSpin { usec, blocks, ios } => write!(
                f,
                "side B's fio spins {usec} µs every {blocks} I/Os (`--thinktime={usec} --thinktime_spin={usec} --thinktime_blocks={blocks}`), {} s a run of {ios} I/Os",
                *usec as f64 * 1e-6 * (ios / (*blocks).max(1)) as f64
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
