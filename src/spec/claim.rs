//! The `check:` of a claim as written: kinds, selections, statistics, expectations,
//! and the check made when an experiment is loaded (a misspelt key or kind is a located
//! error, like any other key). `analysis::claims` measures them.

pub use super::truncate_need::{TruncatePathNeed, TruncatePathNeeds};
use super::Value as SpecValue;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// The matrix axis whose values are kernels (`kernel: [host, uml-bookworm, …]`). A claim
/// over a bundle with this axis is checked once per kernel unless one of its selections
/// pins it (`analysis::claims` per kernel; the values it pins are checked at load).
pub const KERNEL_AXIS: &str = "kernel";

/// `needs:` of a claim: what its mechanism needs, checked in the bundle (issue 28). A
/// claim whose mechanism is absent here is `not applicable: mechanism absent`, with the
/// measured evidence, whatever its number says.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Needs {
    /// The block allocator the claim is about. `ext3` is absent when the ext3 points were
    /// mounted by the ext4 driver (every kernel since 4.3).
    #[serde(default)]
    pub allocator: Option<Allocator>,
    /// The same check over another selection (its `select` replaced) must give a number
    /// at least `min_difference` away: e.g. an "ext3 is scattered" claim means something
    /// only if ext4's directory, laid out by the allocator the claim contrasts, differs.
    #[serde(default)]
    pub contrast: Option<Contrast>,
    /// XFS inodes whose extended attributes (parent pointers among them) spilled out of
    /// the inode into attr fork blocks, in every selected point and replicate.
    #[serde(default)]
    pub attr_forks: Option<AttrForks>,
    /// The path the kernel took to truncate inside an allocation unit (an XFS realtime
    /// extent), as the `truncate_path` table records it per point and replicate (`parse:
    /// truncate-path`): every point the check selects must have taken this one, or, for
    /// a ratio that compares two paths, each side its own.
    #[serde(default)]
    pub truncate_path: Option<TruncatePathNeeds>,
    /// The claim's number rests on how long fsync/flush takes on the medium. A guest's
    /// flushes never reach the host's disk (User-Mode Linux's ubd opens its images
    /// without O_DIRECT), so in a bundle whose points ran in a guest the claim cannot be
    /// checked.
    #[serde(default)]
    pub flush_latency: bool,
}

/// `needs: { attr_forks: … }`: the inodes with an attr fork extent, counted in the
/// `fsmap` table (`xfs_io -c fsmap` parsed as `xfs_io-fsmap`: distinct inodes with `attr`
/// extents), per selected point and replicate. Each count must be at least `min_inodes`
/// (the spill regime) or at most `max_inodes` (every attr in the inode's literal area).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AttrForks {
    pub select: Selection,
    #[serde(default)]
    pub min_inodes: Option<u64>,
    #[serde(default)]
    pub max_inodes: Option<u64>,
}

/// `scale_check:` of an experiment: the variable whose values are the scales a claim was
/// measured at (e.g. `n`, fsstress's operations per process). Each scale is its own
/// bundle of one profile (`--set n=10000`, …).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ScaleCheck {
    pub var: String,
}

/// `scale:` of an experiment: how its scale is judged beyond its variables one by one
/// (issue 28: derived totals and the filesystem's fill).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct ScaleSpec {
    /// Derived totals, compared instead of their factors: `files_total: [files, loops]`
    /// is files × loops, so that 100,000 files in one loop count as much as 1,000 in 100.
    #[serde(default)]
    pub totals: IndexMap<String, Vec<String>>,
    /// The post's fill of the filesystem, compared with the fill measured in the bundle.
    #[serde(default)]
    pub fill: Option<FillScale>,
}

/// `scale: fill:`: the post's share of the inodes in use after the workload, measured in
/// the bundle from `dumpe2fs -h` (the `geometry` table's `inode_count` and
/// `free_inodes`).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FillScale {
    /// The post's share of inodes in use, 0 to 1.
    pub inodes: f64,
    /// Where that share comes from: said with every scale note (a post rarely prints
    /// it, so it is often derived from an assumption, which this must name).
    pub basis: String,
}

/// A block allocator a claim can be about.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Allocator {
    /// ext3's own allocator (the ext3 driver, removed in Linux 4.3).
    Ext3,
}

/// `needs: { contrast: … }`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Contrast {
    /// Replaces the check's `select` for the contrasting number.
    pub select: Selection,
    /// The least absolute difference between the two numbers for the mechanism to count
    /// as present.
    pub min_difference: f64,
}

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
    pub(crate) fn miss(&self, v: f64) -> f64 {
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
    pub(crate) fn decisive(&self, values: &[f64]) -> Option<f64> {
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
    pub(crate) fn apply(self, v: &[f64]) -> Option<f64> {
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

/// The `check:` of a claim. A kind of check is its struct below (what is written) and
/// its evaluator in `analysis::claims::kinds` (how it is measured); this enum, with
/// [`Check::KINDS`] and [`Check::schema`], is where a kind is registered on this side.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Check {
    Ratio(RatioCheck),
    FirstVsRest(FirstVsRestCheck),
    Flat(FlatCheck),
    Layout(LayoutCheck),
    IoSummary(IoSummaryCheck),
    GapShare(GapShareCheck),
}

/// What a kind of check says as written, for the checks made when an experiment is
/// loaded; implemented once per kind, beside its struct.
pub trait CheckSchema {
    /// The kind, as written after `kind:`.
    fn name(&self) -> &'static str;

    /// What it expects of the measured number.
    fn expect(&self) -> &Expect;

    /// The selections of the check (measured side), by key.
    fn selections(&self) -> Vec<(&'static str, &Selection)>;

    /// The kind's own rules beyond serde's (e.g. `io_summary`'s one value or one ratio).
    fn validate(&self) -> Result<(), CheckError> {
        Ok(())
    }

    /// The column the check reads from the `runs` table (`wall_s`, `sys_s`, …), for the
    /// kinds that read one; None for the others and for other tables.
    fn runs_metric(&self) -> Option<&str> {
        None
    }

    /// A ratio whose numerator and denominator select the same rows: 1 by
    /// construction, whatever was measured.
    fn same_sides(&self) -> bool {
        false
    }
}

impl Check {
    /// The kinds, as written after `kind:` (each variant's serde tag; a test holds them
    /// equal).
    pub const KINDS: [&'static str; 6] = [
        "ratio",
        "first_vs_rest",
        "flat",
        "layout",
        "io_summary",
        "gap_share",
    ];

    /// The kind's written form behind one interface: the only match on the kind here.
    pub fn schema(&self) -> &dyn CheckSchema {
        match self {
            Check::Ratio(c) => c,
            Check::FirstVsRest(c) => c,
            Check::Flat(c) => c,
            Check::Layout(c) => c,
            Check::IoSummary(c) => c,
            Check::GapShare(c) => c,
        }
    }

    pub fn kind(&self) -> &'static str {
        self.schema().name()
    }

    /// The selections of the check (measured side), for load-time checks and for the
    /// points a mechanism's `needs:` are checked at.
    pub(crate) fn selections(&self) -> Vec<(&'static str, &Selection)> {
        self.schema().selections()
    }

    /// The column the check reads from the `runs` table (`wall_s`, `sys_s`, …), for the
    /// kinds that read one; None for the others and for other tables.
    pub fn runs_metric(&self) -> Option<&str> {
        self.schema().runs_metric()
    }

    /// Whether every selection of the check pins `iteration` to 1: it reads only the
    /// first timed run of each filesystem, which ends before the second starts, so the
    /// number of runs that follow cannot change what it measures.
    pub fn first_iteration_only(&self) -> bool {
        let first = |c: &Cond| match c {
            Cond::Value(v) => v.as_u64() == Some(1),
            Cond::Range(r) => r.min == Some(1.0) && r.max == Some(1.0),
        };
        let sels = self.selections();
        !sels.is_empty()
            && sels
                .iter()
                .all(|(_, s)| s.get("iteration").is_some_and(first))
    }

    /// A ratio whose numerator and denominator select the same rows: 1 by
    /// construction, whatever was measured.
    pub fn same_sides(&self) -> bool {
        self.schema().same_sides()
    }

    /// What it expects of the measured number.
    pub fn expect(&self) -> &Expect {
        self.schema().expect()
    }
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
    /// The fewest replicates a side for a tier other than `inconclusive` (default 3;
    /// `min_samples` is its old name).
    #[serde(default, alias = "min_samples")]
    pub min_replicates: Option<usize>,
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
    pub(crate) fn shape(&self) -> Result<(), IoShape> {
        match (&self.select, &self.numerator, &self.denominator) {
            (Some(_), None, None) | (None, Some(_), Some(_)) => Ok(()),
            (Some(_), _, _) => Err(IoShape::Both),
            (None, Some(_), None) => Err(IoShape::NoDenominator),
            (None, None, Some(_)) => Err(IoShape::NoNumerator),
            (None, None, None) => Err(IoShape::Neither),
        }
    }
}

/// How an `io_summary` check fails to be one value or one ratio.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IoShape {
    #[error("an io_summary check has either `select` (one value) or `numerator` and `denominator` (a ratio), not both")]
    Both,
    #[error("an io_summary check with a `numerator` needs a `denominator`")]
    NoDenominator,
    #[error("an io_summary check with a `denominator` needs a `numerator`")]
    NoNumerator,
    #[error(
        "an io_summary check needs `select` (one value) or `numerator` and `denominator` (a ratio)"
    )]
    Neither,
}

impl IoShape {
    /// What would be right.
    pub const HELP: &'static str =
        "write `select: {…}` for one value, or `numerator: {…}` and `denominator: {…}` for a ratio";

    /// The key to point at.
    pub fn key(self) -> &'static str {
        match self {
            IoShape::Both => "select",
            IoShape::NoDenominator => "numerator",
            IoShape::NoNumerator => "denominator",
            IoShape::Neither => "io_summary",
        }
    }
}

/// Why a claim's `check:` cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("a selection condition is a value (`fs: ext4`), a list of values (`fs: [ext3, ext4]`) or a range with only `min` and `max` (`iteration: {{ min: 2 }}`)")]
    Condition,
    #[error("missing field `kind`: say which kind of check this is ({})", Check::KINDS.join(", "))]
    MissingKind,
    /// serde's message (an unknown key, kind or metric, a wrong type).
    #[error(transparent)]
    Yaml(serde_yaml::Error),
    #[error("`expect`: min {min} is above max {max}; nothing can satisfy it")]
    EmptyExpect { min: f64, max: f64 },
    #[error("`{key}`: {shape}; {help}", key = .0.key(), shape = .0, help = IoShape::HELP)]
    IoShape(IoShape),
    #[error("`{name}`: the range for `{column}` gives neither `min` nor `max`")]
    EmptyRange { name: String, column: String },
}

/// Read a claim's `check:`; serde's errors are made friendlier.
pub fn parse_check(raw: &serde_yaml::Value) -> Result<Check, CheckError> {
    let check: Check = serde_yaml::from_value(raw.clone()).map_err(|e| {
        let m = e.to_string();
        if m.contains("untagged enum Cond") {
            CheckError::Condition
        } else if m.contains("missing field `kind`") {
            CheckError::MissingKind
        } else {
            CheckError::Yaml(e)
        }
    })?;
    if let (Some(min), Some(max)) = (check.expect().min, check.expect().max) {
        if min > max {
            return Err(CheckError::EmptyExpect { min, max });
        }
    }
    check.schema().validate()?;

    for (name, sel) in check.selections() {
        for (col, cond) in sel {
            if let Cond::Range(r) = cond {
                if r.min.is_none() && r.max.is_none() {
                    return Err(CheckError::EmptyRange {
                        name: name.to_string(),
                        column: col.to_string(),
                    });
                }
            }
        }
    }
    Ok(check)
}

fn default_runs() -> String {
    "runs".into()
}
fn default_extents() -> String {
    "extents".into()
}
fn default_wall() -> String {
    "wall_s".into()
}
fn default_value() -> String {
    "value".into()
}
fn default_run() -> String {
    "run".into()
}
fn default_block() -> u64 {
    4096
}
fn default_x() -> String {
    "x".into()
}

/// `kind: gap_share`: how much of the gap between two sides one part carries,
/// `(part on a − part on b) ÷ (whole on a − whole on b)`: e.g. pass 2's share of the
/// ext3–ext4 e2fsck gap. Within each side, `metric` is summed over the rows of one
/// iteration that `part` (or `whole`) selects, averaged over the replicate's
/// iterations, and the side's number is the mean over its replicates.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GapShareCheck {
    #[serde(default = "default_runs")]
    pub table: String,
    #[serde(default = "default_wall")]
    pub metric: String,
    /// The side the gap is measured from (e.g. `{ fs: ext3 }`) …
    pub a: Selection,
    /// … and the side it is measured to (e.g. `{ fs: ext4 }`).
    pub b: Selection,
    /// The rows of the part (e.g. `{ row_kind: pass, pass: "2" }`).
    pub part: Selection,
    /// The rows of the whole (default: every row of the side).
    #[serde(default)]
    pub whole: Selection,
    #[serde(default)]
    pub expect: Expect,
    #[serde(default)]
    pub at_scale: IndexMap<String, f64>,
    #[serde(default = "default_share")]
    pub unit: String,
    #[serde(default)]
    pub note: Option<String>,
    /// The fewest replicates a side for a decisive tier (default 3).
    #[serde(default, alias = "min_samples")]
    pub min_replicates: Option<usize>,
}

fn default_share() -> String {
    "share of the gap".into()
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
    /// The fewest replicates a side for a tier other than `inconclusive` (default 3;
    /// `min_samples` is its old name).
    #[serde(default, alias = "min_samples")]
    pub min_replicates: Option<usize>,
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
    /// The fewest replicates for a tier other than `inconclusive` (default 3; each
    /// replicate has one first run; `min_samples` is its old name).
    #[serde(default, alias = "min_samples")]
    pub min_replicates: Option<usize>,
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

/// How a `flat` check measures flatness.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FlatStatistic {
    #[default]
    MaxOverMin,
    LogSlope,
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
    /// How "flat" is measured: `max_over_min` (default), the largest group ÷ the
    /// smallest, which grows with noise and with the number of groups; or `log_slope`,
    /// the slope of ln(metric) on ln(across) (a size or a number), per block of
    /// replicates with a Student-t interval over them: 0 is flat, and 0.0376 is a
    /// factor 1.2 over a 128× range.
    #[serde(default)]
    pub statistic: FlatStatistic,
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
    /// The fewest replicates per group for a tier other than `inconclusive` (default 5;
    /// `min_samples` is its old name).
    #[serde(default, alias = "min_samples")]
    pub min_replicates: Option<usize>,
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
