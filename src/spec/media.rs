//! The media and throttle settings of a device, and the trace setting of a step: pure
//! types of the experiment file. The disk model that uses them is in
//! `devices::medium::model`; the throttle is applied by `devices::throttle`.

use serde::{Deserialize, Serialize};

/// A medium as the experiment file names it: a model's name or explicit parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged, try_from = "RawMedium")]
pub enum Medium {
    Named(NamedMedium),
    Explicit(DiskParams),
}

/// The named models. Their parameters and sources: [`NamedMedium::params`] and
/// docs/media.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NamedMedium {
    /// A 7200 rpm 3.5" SATA disk of 2008 (the class of Seagate's Barracuda 7200.11).
    #[serde(rename = "hdd-2008")]
    Hdd2008,
    /// A 5400 rpm 2.5" laptop disk of the same years.
    #[serde(rename = "laptop-5400")]
    Laptop5400,
    /// No model: in an experiment, the loop device sits on the image file as without
    /// `medium:` (a served image given `none` is charged nothing: the control for the FUSE
    /// overhead in tests).
    #[serde(rename = "none")]
    None,
}

impl NamedMedium {
    pub const ALL: [NamedMedium; 3] = [Self::Hdd2008, Self::Laptop5400, Self::None];

    pub fn name(self) -> &'static str {
        match self {
            Self::Hdd2008 => "hdd-2008",
            Self::Laptop5400 => "laptop-5400",
            Self::None => "none",
        }
    }

    /// The parameters, or None for `none`. Which of them come from a published figure
    /// and which are assumptions is said, with the sources, in `docs/media.md`
    /// ("Named models": each parameter's source, or "assumption").
    ///
    /// `hdd-2008`: average seek 8.5 ms, 7200 rpm (4.17 ms half rotation), 32 MB cache,
    /// 100 MB/s, full stroke 15 ms (chosen so that the √distance curve through the
    /// average gives a settle time of about 1 ms).
    ///
    /// `laptop-5400`: average seek 12 ms, full stroke 22 ms, 5400 rpm (5.56 ms half
    /// rotation), 8 MB cache, 60 MB/s.
    pub fn params(self) -> Option<DiskParams> {
        match self {
            Self::Hdd2008 => Some(DiskParams {
                seek_avg_ms: 8.5,
                seek_full_ms: 15.0,
                rpm: 7200.0,
                mb_per_s: 100.0,
                cache_mb: 32.0,
            }),
            Self::Laptop5400 => Some(DiskParams {
                seek_avg_ms: 12.0,
                seek_full_ms: 22.0,
                rpm: 5400.0,
                mb_per_s: 60.0,
                cache_mb: 8.0,
            }),
            Self::None => None,
        }
    }

    pub fn parse(s: &str) -> Option<NamedMedium> {
        Self::ALL.into_iter().find(|m| m.name() == s)
    }
}

impl Medium {
    /// The disk parameters, or None when nothing is modelled.
    pub fn params(&self) -> Option<DiskParams> {
        match self {
            Medium::Named(n) => n.params(),
            Medium::Explicit(p) => Some(*p),
        }
    }

    /// A short label: the model's name, or `custom`.
    pub fn label(&self) -> &'static str {
        match self {
            Medium::Named(n) => n.name(),
            Medium::Explicit(_) => "custom",
        }
    }
}

/// Explicit parameters (`medium: { seek_avg_ms, seek_full_ms, rpm, mb_per_s, cache_mb }`).
/// Megabytes are 10⁶ bytes, as disk datasheets count them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiskParams {
    pub seek_avg_ms: f64,
    pub seek_full_ms: f64,
    pub rpm: f64,
    pub mb_per_s: f64,
    #[serde(default)]
    pub cache_mb: f64,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    #[error("{field} must be a positive finite number, not {value}")]
    NotPositive { field: &'static str, value: f64 },
    #[error("cache_mb must be 0 or more, not {0}")]
    NegativeCache(f64),
    #[error(
        "seek_full_ms {full} is too long for seek_avg_ms {avg}: a settle + √distance curve \
         through that average reaches at most {max:.2} ms (15/8 × the average) at full stroke"
    )]
    FullStrokeTooLong { avg: f64, full: f64, max: f64 },
    #[error(
        "seek_full_ms {full} is shorter than seek_avg_ms {avg}: the full stroke is the longest seek"
    )]
    FullStrokeTooShort { avg: f64, full: f64 },
    #[error("a modelled device needs a size above 0 bytes")]
    EmptyDevice,
}

/// E[√u] for the distance u = |x − y| of two independent uniform positions on [0, 1]:
/// ∫₀¹ 2(1 − u)√u du = 8/15.
pub const MEAN_SQRT_DISTANCE: f64 = 8.0 / 15.0;

impl DiskParams {
    pub fn validate(&self) -> Result<(), ModelError> {
        for (field, value) in [
            ("seek_avg_ms", self.seek_avg_ms),
            ("seek_full_ms", self.seek_full_ms),
            ("rpm", self.rpm),
            ("mb_per_s", self.mb_per_s),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(ModelError::NotPositive { field, value });
            }
        }
        if !(self.cache_mb.is_finite() && self.cache_mb >= 0.0) {
            return Err(ModelError::NegativeCache(self.cache_mb));
        }
        if self.seek_full_ms < self.seek_avg_ms {
            return Err(ModelError::FullStrokeTooShort {
                avg: self.seek_avg_ms,
                full: self.seek_full_ms,
            });
        }
        let max = self.seek_avg_ms / MEAN_SQRT_DISTANCE;
        if self.seek_full_ms > max + 1e-9 {
            return Err(ModelError::FullStrokeTooLong {
                avg: self.seek_avg_ms,
                full: self.seek_full_ms,
                max,
            });
        }
        Ok(())
    }

    /// The settle time (a seek of the shortest nonzero distance), in ms: the curve's
    /// constant so that its mean over random pairs is `seek_avg_ms`.
    pub fn settle_ms(&self) -> f64 {
        (self.seek_avg_ms - self.seek_full_ms * MEAN_SQRT_DISTANCE) / (1.0 - MEAN_SQRT_DISTANCE)
    }

    /// Half a rotation, in ms: the expected rotational latency.
    pub fn half_rotation_ms(&self) -> f64 {
        30_000.0 / self.rpm
    }

    pub fn bytes_per_s(&self) -> f64 {
        self.mb_per_s * 1e6
    }

    pub fn cache_bytes(&self) -> u64 {
        (self.cache_mb * 1e6) as u64
    }
}

/// A device's `medium:` as written: a medium, or a `{{var}}` that names one per point
/// (so that a profile can switch a seed to a disk model).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged, try_from = "RawMedium")]
pub enum MediumSpec {
    Fixed(Medium),
    Var(String),
}

/// A `medium:` that names no medium.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MediumError {
    #[error(
        "unknown medium `{0}`: use one of {known}, or explicit parameters \
         {{ seek_avg_ms, seek_full_ms, rpm, mb_per_s, cache_mb }}",
        known = NamedMedium::ALL.map(|m| m.name()).join(", ")
    )]
    Unknown(String),
    #[error(transparent)]
    Template(#[from] super::TemplateError),
}

impl TryFrom<RawMedium> for MediumSpec {
    type Error = MediumError;
    fn try_from(raw: RawMedium) -> Result<MediumSpec, MediumError> {
        match raw {
            RawMedium::Name(n) if n.contains("{{") => Ok(MediumSpec::Var(n)),
            other => Medium::try_from(other).map(MediumSpec::Fixed),
        }
    }
}

impl MediumSpec {
    /// The medium at a point (`none` is a medium too: served, charged nothing).
    pub fn resolve(
        &self,
        lookup: &dyn Fn(&str) -> Option<super::Value>,
    ) -> Result<Medium, MediumError> {
        match self {
            MediumSpec::Fixed(m) => Ok(*m),
            MediumSpec::Var(t) => {
                let name = super::Template::parse(t)?.render(lookup)?.join(" ");
                Medium::try_from(RawMedium::Name(name))
            }
        }
    }

    /// The parameters, when they are known before the plan (not a `{{var}}`).
    pub fn params(&self) -> Option<DiskParams> {
        match self {
            MediumSpec::Fixed(m) => m.params(),
            MediumSpec::Var(_) => None,
        }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawMedium {
    Name(String),
    Params(DiskParams),
}

impl TryFrom<RawMedium> for Medium {
    type Error = MediumError;
    fn try_from(raw: RawMedium) -> Result<Medium, MediumError> {
        match raw {
            RawMedium::Params(p) => Ok(Medium::Explicit(p)),
            RawMedium::Name(n) => NamedMedium::parse(&n)
                .map(Medium::Named)
                .ok_or(MediumError::Unknown(n)),
        }
    }
}

/// The limits; None leaves a direction unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Throttle {
    #[serde(default)]
    pub read_iops: Option<u64>,
    #[serde(default)]
    pub write_iops: Option<u64>,
    #[serde(default)]
    pub read_bps: Option<u64>,
    #[serde(default)]
    pub write_bps: Option<u64>,
}

impl Throttle {
    pub fn is_empty(&self) -> bool {
        self.read_iops.is_none()
            && self.write_iops.is_none()
            && self.read_bps.is_none()
            && self.write_bps.is_none()
    }

    /// The v2 `io.max` line for `dev` (keys left out stay as they are).
    pub fn io_max_line(&self, (major, minor): (u32, u32)) -> String {
        let mut line = format!("{major}:{minor}");
        for (key, v) in [
            ("rbps", self.read_bps),
            ("wbps", self.write_bps),
            ("riops", self.read_iops),
            ("wiops", self.write_iops),
        ] {
            if let Some(v) = v {
                line.push_str(&format!(" {key}={v}"));
            }
        }
        line
    }

    /// The v1 files and the line each gets, for `dev`.
    pub fn v1_lines(&self, (major, minor): (u32, u32)) -> Vec<(&'static str, String)> {
        [
            ("blkio.throttle.read_iops_device", self.read_iops),
            ("blkio.throttle.write_iops_device", self.write_iops),
            ("blkio.throttle.read_bps_device", self.read_bps),
            ("blkio.throttle.write_bps_device", self.write_bps),
        ]
        .into_iter()
        .filter_map(|(f, v)| v.map(|v| (f, format!("{major}:{minor} {v}"))))
        .collect()
    }
}

/// What a step records while it runs (`trace: io`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceKind {
    /// Every block request of the point's devices (`io.parquet`, `io_summary.parquet`).
    Io,
}

/// A source of kernel counters that the workload reads before and after every timed
/// iteration (`counters:` on the workload; `counters.parquet`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CounterSource {
    /// The XFS statistics of the point's XFS filesystems (`/sys/fs/xfs/<dev>/stats/stats`).
    Xfs,
    /// `/proc/diskstats` for the point's devices.
    Diskstats,
    /// Selected `/proc/vmstat` counters (system-wide).
    Vmstat,
    /// ext4's per-filesystem sysfs counters (`/sys/fs/ext4/<dev>/`).
    Ext4,
    /// XFS log items of the point's XFS filesystems, counted on the kernel's tracepoints:
    /// `attri_finished`, the finishing steps of deferred attr updates
    /// (`xfs:xfs_defer_pending_finish`, optype `attr`: on a filesystem that logs its
    /// xattr updates, as parent pointers make it, one ATTRI intent item each), and
    /// `attri_elided`, the ATTRI intents never written to the log because their done item
    /// committed in the same checkpoint (`xfs:xfs_cil_whiteout_skip`, `XFS_LI_ATTRI`).
    XfsLogItems,
}

impl CounterSource {
    pub const ALL: [CounterSource; 5] = [
        Self::Xfs,
        Self::Diskstats,
        Self::Vmstat,
        Self::Ext4,
        Self::XfsLogItems,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Xfs => "xfs",
            Self::Diskstats => "diskstats",
            Self::Vmstat => "vmstat",
            Self::Ext4 => "ext4",
            Self::XfsLogItems => "xfs_log_items",
        }
    }
}

/// `counters:` as written: `all`, a list of sources, or
/// `{ sources: all | [...], sync: true }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Counters {
    pub sources: Vec<CounterSource>,
    /// Flush the point's own filesystems (syncfs, outside the timed command) just before
    /// each read, so that what an iteration queued (a log checkpoint, dirty pages) is
    /// written, and counted, within that iteration instead of whenever the kernel gets
    /// to it. Off by default: it changes what the next iteration starts from.
    pub sync: bool,
}

impl<'de> Deserialize<'de> for Counters {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let choices = || {
            CounterSource::ALL
                .iter()
                .map(|s| format!("`{}`", s.name()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let one = |s: &str| {
            CounterSource::ALL
                .into_iter()
                .find(|c| c.name() == s)
                .ok_or_else(|| {
                    D::Error::custom(format!(
                        "unknown counter source `{s}`: use {} or `all`",
                        choices()
                    ))
                })
        };
        let sources = |v: &serde_yaml::Value| -> Result<Vec<CounterSource>, D::Error> {
            match v {
                serde_yaml::Value::String(s) if s == "all" => Ok(CounterSource::ALL.to_vec()),
                serde_yaml::Value::String(s) => Ok(vec![one(s)?]),
                serde_yaml::Value::Sequence(items) => items
                    .iter()
                    .map(|i| match i.as_str() {
                        Some(s) => one(s),
                        None => Err(D::Error::custom(format!(
                            "`counters` lists source names ({}), not {i:?}",
                            choices()
                        ))),
                    })
                    .collect(),
                _ => Err(D::Error::custom(format!(
                    "`counters` is `all`, a list of {}, or `{{ sources: [...], sync: true }}`",
                    choices()
                ))),
            }
        };
        let v = serde_yaml::Value::deserialize(d)?;
        let (mut out, sync) = match &v {
            serde_yaml::Value::Mapping(m) => {
                let mut out = None;
                let mut sync = false;
                for (k, val) in m {
                    match k.as_str() {
                        Some("sources") => out = Some(sources(val)?),
                        Some("sync") => {
                            sync = val.as_bool().ok_or_else(|| {
                                let val = serde_yaml::to_string(val).unwrap_or_default();
                                D::Error::custom(format!(
                                    "`counters.sync` is `true` or `false`, not `{}`",
                                    val.trim()
                                ))
                            })?
                        }
                        _ => {
                            let k = k.as_str().map_or_else(|| format!("{k:?}"), str::to_string);
                            return Err(D::Error::custom(format!(
                                "unknown key `{k}` in `counters`: use `sources` and `sync`"
                            )));
                        }
                    }
                }
                let out = out.ok_or_else(|| {
                    D::Error::custom(
                        "`counters` as a map needs `sources` (`all` or a list), e.g. `{ sources: [xfs], sync: true }`",
                    )
                })?;
                (out, sync)
            }
            other => (sources(other)?, false),
        };
        out.sort();
        out.dedup();
        Ok(Counters { sources: out, sync })
    }
}
