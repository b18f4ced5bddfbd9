//! The `check:` of a claim as written: kinds, selections, statistics, expectations.

use super::*;

/// `expect:` — bounds on the measured number.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    #[serde(default)]
    pub min: Option<f64>,
    #[serde(default)]
    pub max: Option<f64>,
}

impl Expect {
    pub fn holds(&self, v: f64) -> bool {
        self.min.is_none_or(|m| v >= m) && self.max.is_none_or(|m| v <= m)
    }

    /// How far outside the bounds `v` is (0 inside), relative to the bound.
    pub(super) fn miss(&self, v: f64) -> f64 {
        let below = self.min.map_or(0.0, |m| {
            if v < m {
                (m - v) / m.abs().max(1e-12)
            } else {
                0.0
            }
        });
        let above = self.max.map_or(0.0, |m| {
            if v > m {
                (v - m) / m.abs().max(1e-12)
            } else {
                0.0
            }
        });
        below.max(above)
    }

    /// Of several per-point values, the one that decides: the furthest outside the
    /// bounds, or when all hold, the closest to a bound.
    pub(super) fn decisive(&self, values: &[f64]) -> Option<f64> {
        let key = |v: f64| {
            let miss = self.miss(v);
            if miss > 0.0 {
                miss
            } else {
                // Inside: negative distance to the nearest bound (closer → larger).
                let dmin = self.min.map_or(f64::INFINITY, |m| v - m);
                let dmax = self.max.map_or(f64::INFINITY, |m| m - v);
                -dmin.min(dmax)
            }
        };
        values
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .max_by(|a, b| key(*a).total_cmp(&key(*b)))
    }
}

impl fmt::Display for Expect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.min, self.max) {
            (Some(a), Some(b)) => write!(f, "between {} and {}", num(a), num(b)),
            (Some(a), None) => write!(f, "≥ {}", num(a)),
            (None, Some(b)) => write!(f, "≤ {}", num(b)),
            (None, None) => f.write_str("(anything)"),
        }
    }
}

/// A selection condition on one column.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum Cond {
    Range(Range),
    Value(SpecValue),
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Range {
    #[serde(default)]
    pub min: Option<f64>,
    #[serde(default)]
    pub max: Option<f64>,
}

/// Column → condition; all must hold.
pub type Selection = IndexMap<String, Cond>;

/// How rows are summarised.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Stat {
    #[default]
    Mean,
    Median,
    Min,
    Max,
    Sum,
    Count,
}

impl Stat {
    pub(super) fn apply(self, v: &[f64]) -> Option<f64> {
        if v.is_empty() {
            return None;
        }
        Some(match self {
            Stat::Mean => v.iter().sum::<f64>() / v.len() as f64,
            Stat::Median => {
                let mut s = v.to_vec();
                s.sort_by(f64::total_cmp);
                let n = s.len();
                if n % 2 == 1 {
                    s[n / 2]
                } else {
                    (s[n / 2 - 1] + s[n / 2]) / 2.0
                }
            }
            Stat::Min => v.iter().copied().fold(f64::INFINITY, f64::min),
            Stat::Max => v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            Stat::Sum => v.iter().sum(),
            Stat::Count => v.len() as f64,
        })
    }
}

/// The `check:` of a claim.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Check {
    Ratio(RatioCheck),
    FirstVsRest(FirstVsRestCheck),
    Flat(FlatCheck),
    Layout(LayoutCheck),
    IoSummary(IoSummaryCheck),
}

/// What every kind of check states besides how it measures.
pub(super) struct Stated<'a> {
    pub(super) expect: &'a Expect,
    pub(super) at_scale: &'a IndexMap<String, f64>,
    pub(super) unit: &'a str,
    pub(super) note: Option<&'a str>,
}

impl Check {
    pub fn kind(&self) -> &'static str {
        match self {
            Check::Ratio(_) => "ratio",
            Check::FirstVsRest(_) => "first_vs_rest",
            Check::Flat(_) => "flat",
            Check::Layout(_) => "layout",
            Check::IoSummary(_) => "io_summary",
        }
    }

    /// What the check itself requires beyond its YAML shape (serde checks the shape):
    /// the word to point at, the problem, and what would be right.
    pub fn validate(&self) -> Result<(), (Option<String>, String, String)> {
        match self {
            Check::IoSummary(c) => c.validate(),
            _ => Ok(()),
        }
    }

    pub(super) fn stated(&self) -> Stated<'_> {
        let (expect, at_scale, unit, note) = match self {
            Check::Ratio(c) => (&c.expect, &c.at_scale, c.unit.as_str(), &c.note),
            Check::FirstVsRest(c) => (&c.expect, &c.at_scale, c.unit.as_str(), &c.note),
            Check::Flat(c) => (&c.expect, &c.at_scale, c.unit.as_str(), &c.note),
            Check::Layout(c) => (
                &c.expect,
                &c.at_scale,
                "discontiguous block pairs / block pairs",
                &c.note,
            ),
            Check::IoSummary(c) => (&c.expect, &c.at_scale, c.unit(), &c.note),
        };
        Stated {
            expect,
            at_scale,
            unit,
            note: note.as_deref(),
        }
    }

    /// The value in this bundle.
    pub(super) fn measure(&self, ev: &Evidence) -> Result<Measure, String> {
        match self {
            Check::Ratio(c) => measure_ratio(c, ev),
            Check::FirstVsRest(c) => measure_first_vs_rest(c, ev),
            Check::Flat(c) => measure_flat(c, ev),
            Check::Layout(c) => measure_layout(c, ev),
            Check::IoSummary(c) => super::io::measure_io_summary(c, ev),
        }
    }

    /// The same value from the post's numbers, when the check says where they are.
    pub(super) fn published(&self, ev: &Evidence) -> Option<Result<f64, String>> {
        match self {
            Check::Ratio(c) => c.published.as_ref().map(|p| published_ratio(p, ev)),
            Check::FirstVsRest(c) => c
                .published
                .as_ref()
                .map(|p| published_first_vs_rest(p, &c.expect, ev)),
            Check::Flat(c) => c.published.as_ref().map(|p| published_flat(p, ev)),
            Check::Layout(c) => c
                .published
                .as_ref()
                .map(|p| published_layout(p, &c.expect, ev)),
            // The posts give block traces as pictures, not numbers.
            Check::IoSummary(_) => None,
        }
    }
}

pub(super) fn default_runs() -> String {
    "runs".into()
}
pub(super) fn default_extents() -> String {
    "extents".into()
}
pub(super) fn default_wall() -> String {
    "wall_s".into()
}
pub(super) fn default_value() -> String {
    "value".into()
}
pub(super) fn default_run() -> String {
    "run".into()
}
pub(super) fn default_block() -> u64 {
    4096
}
pub(super) fn default_x() -> String {
    "x".into()
}

/// `kind: ratio`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RatioCheck {
    #[serde(default = "default_runs")]
    pub table: String,
    #[serde(default = "default_wall")]
    pub metric: String,
    #[serde(default)]
    pub stat: Stat,
    pub numerator: Selection,
    pub denominator: Selection,
    #[serde(default)]
    pub expect: Expect,
    #[serde(default)]
    pub at_scale: IndexMap<String, f64>,
    #[serde(default = "default_x")]
    pub unit: String,
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub published: Option<PublishedRatio>,
    /// The fewest samples per side for a tier other than `inconclusive` (default 3).
    #[serde(default)]
    pub min_samples: Option<usize>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedRatio {
    pub dataset: String,
    #[serde(default = "default_value")]
    pub metric: String,
    #[serde(default)]
    pub stat: Stat,
    pub numerator: Selection,
    pub denominator: Selection,
}

/// `kind: first_vs_rest`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FirstVsRestCheck {
    #[serde(default = "default_runs")]
    pub table: String,
    #[serde(default = "default_wall")]
    pub metric: String,
    #[serde(default)]
    pub select: Selection,
    #[serde(default)]
    pub expect: Expect,
    #[serde(default)]
    pub at_scale: IndexMap<String, f64>,
    #[serde(default = "default_x")]
    pub unit: String,
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub published: Option<PublishedFirstVsRest>,
    /// The fewest samples per side for a tier other than `inconclusive` (default 3; the
    /// first run is one sample per point).
    #[serde(default)]
    pub min_samples: Option<usize>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedFirstVsRest {
    pub dataset: String,
    #[serde(default = "default_value")]
    pub metric: String,
    #[serde(default)]
    pub select: Selection,
    /// Columns that tell the series apart (each is one "point").
    #[serde(default)]
    pub by: Vec<String>,
    /// The column that numbers the runs.
    #[serde(default = "default_run")]
    pub iteration: String,
}

/// `kind: flat`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlatCheck {
    #[serde(default = "default_runs")]
    pub table: String,
    #[serde(default = "default_wall")]
    pub metric: String,
    #[serde(default)]
    pub stat: Stat,
    #[serde(default)]
    pub select: Selection,
    /// The column (usually a matrix axis) the metric should not depend on.
    pub across: String,
    #[serde(default)]
    pub expect: Expect,
    #[serde(default)]
    pub at_scale: IndexMap<String, f64>,
    #[serde(default = "default_x")]
    pub unit: String,
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub published: Option<PublishedFlat>,
    /// The fewest samples per group for a tier other than `inconclusive` (default 3).
    #[serde(default)]
    pub min_samples: Option<usize>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedFlat {
    pub dataset: String,
    #[serde(default = "default_value")]
    pub metric: String,
    #[serde(default)]
    pub stat: Stat,
    #[serde(default)]
    pub select: Selection,
    pub across: String,
}

/// `kind: layout`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LayoutCheck {
    #[serde(default = "default_extents")]
    pub table: String,
    #[serde(default)]
    pub select: Selection,
    /// Bytes per block, to count blocks from extent lengths.
    #[serde(default = "default_block")]
    pub block_bytes: u64,
    /// The largest file must have at least this many blocks for the layout to say anything.
    #[serde(default)]
    pub min_blocks: u64,
    #[serde(default)]
    pub expect: Expect,
    #[serde(default)]
    pub at_scale: IndexMap<String, f64>,
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub published: Option<PublishedLayout>,
}

/// A block listing in the shape of `data/published/001_dir_blocks.csv`: `kind` (`data`
/// or `IND`), `segment`, `logical_start`, `physical_start`, `length`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedLayout {
    pub dataset: String,
    #[serde(default)]
    pub select: Selection,
}

/// A column of `io_summary` (one row per traced step and iteration), or a number derived
/// from its columns.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum IoMetric {
    Requests,
    Reads,
    Writes,
    Bytes,
    /// Data requests that do not start where the previous one ended.
    Seeks,
    /// The sum of the seeks' distances, in bytes.
    SeekDistanceBytes,
    DurationS,
    SeeksPerS,
    MbPerS,
    /// `seek_distance_bytes ÷ seeks`: how far the average seek goes.
    MeanSeekBytes,
}

impl IoMetric {
    pub const ALL: [IoMetric; 10] = [
        IoMetric::Requests,
        IoMetric::Reads,
        IoMetric::Writes,
        IoMetric::Bytes,
        IoMetric::Seeks,
        IoMetric::SeekDistanceBytes,
        IoMetric::DurationS,
        IoMetric::SeeksPerS,
        IoMetric::MbPerS,
        IoMetric::MeanSeekBytes,
    ];

    /// The name as written in a claim (and, except `mean_seek_bytes`, the column).
    pub fn name(self) -> &'static str {
        match self {
            IoMetric::Requests => "requests",
            IoMetric::Reads => "reads",
            IoMetric::Writes => "writes",
            IoMetric::Bytes => "bytes",
            IoMetric::Seeks => "seeks",
            IoMetric::SeekDistanceBytes => "seek_distance_bytes",
            IoMetric::DurationS => "duration_s",
            IoMetric::SeeksPerS => "seeks_per_s",
            IoMetric::MbPerS => "mb_per_s",
            IoMetric::MeanSeekBytes => "mean_seek_bytes",
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            IoMetric::Requests | IoMetric::Reads | IoMetric::Writes => "requests",
            IoMetric::Seeks => "seeks",
            IoMetric::Bytes | IoMetric::SeekDistanceBytes | IoMetric::MeanSeekBytes => "bytes",
            IoMetric::DurationS => "s",
            IoMetric::SeeksPerS => "seeks/s",
            IoMetric::MbPerS => "MB/s",
        }
    }
}

/// `kind: io_summary`: a number from the block traces (`trace: io`) of the selected
/// points, one sample per traced step and iteration. Either one value (`select`: the
/// `stat` of the metric) or a ratio of two (`numerator` ÷ `denominator`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct IoSummaryCheck {
    pub metric: IoMetric,
    #[serde(default)]
    pub stat: Stat,
    /// The traced step (its label, the `capture` column); default: every traced step.
    #[serde(default)]
    pub step: Option<String>,
    /// One value: the rows to summarise.
    #[serde(default)]
    pub select: Option<Selection>,
    /// A ratio: the rows above the line …
    #[serde(default)]
    pub numerator: Option<Selection>,
    /// … and below it.
    #[serde(default)]
    pub denominator: Option<Selection>,
    /// Only a disk model (`medium:`) makes seeks cost what they did on a disk: without
    /// one on the bundle's devices the claim is not applicable.
    #[serde(default)]
    pub needs_medium: bool,
    #[serde(default)]
    pub expect: Expect,
    #[serde(default)]
    pub at_scale: IndexMap<String, f64>,
    /// Default: `x` for a ratio, the metric's unit for one value.
    #[serde(default)]
    pub unit: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
    /// The fewest samples per side for a tier other than `inconclusive` (default 3).
    #[serde(default)]
    pub min_samples: Option<usize>,
}

impl IoSummaryCheck {
    pub fn unit(&self) -> &str {
        match (&self.unit, &self.select) {
            (Some(u), _) => u,
            (None, Some(_)) => self.metric.unit(),
            (None, None) => "x",
        }
    }

    /// One value or one ratio, not both and not half of one.
    fn validate(&self) -> Result<(), (Option<String>, String, String)> {
        let help = "write `select: {…}` for one value, or `numerator: {…}` and `denominator: {…}` for a ratio".to_string();
        match (&self.select, &self.numerator, &self.denominator) {
            (Some(_), None, None) | (None, Some(_), Some(_)) => Ok(()),
            (Some(_), _, _) => Err((
                Some("select".into()),
                "an io_summary check has either `select` (one value) or `numerator` and `denominator` (a ratio), not both".into(),
                help,
            )),
            (None, Some(_), None) => Err((
                Some("numerator".into()),
                "an io_summary check with a `numerator` needs a `denominator`".into(),
                help,
            )),
            (None, None, Some(_)) => Err((
                Some("denominator".into()),
                "an io_summary check with a `denominator` needs a `numerator`".into(),
                help,
            )),
            (None, None, None) => Err((
                Some("io_summary".into()),
                "an io_summary check needs `select` (one value) or `numerator` and `denominator` (a ratio)".into(),
                help,
            )),
        }
    }
}
