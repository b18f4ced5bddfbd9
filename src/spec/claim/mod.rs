//! The `check:` of a claim as written: kinds, selections, statistics, expectations,
//! and the check made when an experiment is loaded (a misspelt key or kind is a located
//! error, like any other key). `analysis::claims` measures them.
//!
//! Each kind of check is one file of `kinds/` (its struct and its [`CheckSchema`]),
//! registered once in `kinds::claim_kinds`: the [`Check`] enum, [`Check::KINDS`],
//! [`Check::kind`] and [`Check::schema`] are made from that list here, and the
//! evaluators in `analysis::claims::kinds` from the same list there.

pub(crate) mod kinds;
mod written;

pub use written::CheckSpec;

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
    /// The reading of the post these needs are the mechanism of, when the post can be
    /// read two ways (its fsstress ran the whole `-f` list, or `creat` alone). A bundle
    /// run under another reading (its variables do not match `when`) checks the claim
    /// without `allocator`, `contrast` and `attr_forks`, and its verdict says which
    /// reading it assumes.
    #[serde(default)]
    pub reading: Option<Reading>,
}

/// `needs: { reading: … }`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Reading {
    /// The bundle's variables (vars or a profile's values) that run this reading, e.g.
    /// `{ fsstress_f: all }`.
    pub when: IndexMap<String, SpecValue>,
    /// This reading in words, said with each verdict checked under it.
    pub says: String,
    /// The other reading in words, said with each verdict checked under it (without
    /// the needs).
    pub otherwise: String,
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

/// `{ min: A, max: B }` (either may be left out). Only a mapping is a range: a list such
/// as `iteration: [1, 3]` is a list of values (1 or 3), never the range 1..3, although
/// serde would read a two-element list into a struct of two fields.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct Range {
    pub min: Option<f64>,
    pub max: Option<f64>,
}

/// The fields of [`Range`] as written, read only from a mapping.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RangeFields {
    #[serde(default)]
    min: Option<f64>,
    #[serde(default)]
    max: Option<f64>,
}

impl<'de> Deserialize<'de> for Range {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Range, D::Error> {
        struct MapOnly;
        impl<'de> serde::de::Visitor<'de> for MapOnly {
            type Value = Range;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a mapping with `min` and/or `max`")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Range, A::Error> {
                let f =
                    RangeFields::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(Range {
                    min: f.min,
                    max: f.max,
                })
            }
        }
        d.deserialize_map(MapOnly)
    }
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

/// Makes, from the registration list (`kinds::claim_kinds`), the re-export of what each
/// kind's file defines (its struct and the types of its keys), the [`Check`] enum (one
/// variant a kind, its serde tag the kind's name), [`Check::KINDS`], [`Check::kind`] and
/// [`Check::schema`].
macro_rules! check_enum {
    ($($module:ident: $variant:ident($check:ident)),+ $(,)?) => {
        $(pub use kinds::$module::*;)+

        /// The `check:` of a claim. A kind of check is its file in `spec/claim/kinds/`
        /// (what is written) and its evaluator in `analysis/claims/kinds/` (how it is
        /// measured), registered once in `kinds::claim_kinds`; this enum is made from
        /// that list.
        #[derive(Debug, Clone, Deserialize, Serialize)]
        #[serde(tag = "kind", rename_all = "snake_case")]
        pub enum Check {
            $($variant($check)),+
        }

        impl Check {
            /// The kinds, as written after `kind:`: each kind's file name, which is its
            /// variant's serde tag (a test holds them equal).
            pub const KINDS: [&'static str; [$(stringify!($module)),+].len()] =
                [$(stringify!($module)),+];

            /// The kind, as written after `kind:`.
            pub fn kind(&self) -> &'static str {
                match self {
                    $(Check::$variant(_) => stringify!($module)),+
                }
            }

            /// The kind's written form behind one interface.
            pub fn schema(&self) -> &dyn CheckSchema {
                match self {
                    $(Check::$variant(c) => c),+
                }
            }
        }
    };
}

kinds::claim_kinds!(check_enum);

/// What a kind of check says as written, for the checks made when an experiment is
/// loaded; implemented once per kind, beside its struct.
pub trait CheckSchema {
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

#[cfg(test)]
mod tests {
    use super::{Cond, Range, SpecValue};

    fn cond(yaml: &str) -> Cond {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn a_two_number_list_is_a_list_of_values_not_a_range() {
        assert_eq!(
            cond("[1, 3]"),
            Cond::Value(SpecValue::List(vec![SpecValue::Int(1), SpecValue::Int(3)]))
        );
    }

    #[test]
    fn a_mapping_is_a_range_and_a_misspelt_bound_is_not() {
        assert_eq!(
            cond("{ min: 2 }"),
            Cond::Range(Range {
                min: Some(2.0),
                max: None
            })
        );
        assert_eq!(
            cond("{ min: 1, max: 3.5 }"),
            Cond::Range(Range {
                min: Some(1.0),
                max: Some(3.5)
            })
        );
        assert!(serde_yaml::from_str::<Cond>("{ mini: 2 }").is_err());
    }
}
