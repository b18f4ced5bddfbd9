//! `counters:` on the workload: kernel counters read just before and just after every
//! timed iteration, stored as deltas in `counters.parquet` (one row per iteration,
//! source, device and counter). The files are named and differenced by
//! [`crate::parse::counters`]; this module finds and reads them for a point.
//!
//! Reading is a handful of small sysfs/procfs files per iteration, outside the timed
//! command (BENCHMARKS.md measures it).

use crate::devices::throttle::device_numbers;
use crate::devices::trace::{dev_filter, EventCount};
use crate::devices::PointResources;
use crate::parse::counters::{self as parse, Delta, Sample};
use crate::spec::media::CounterSource;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where a source's numbers come from, and what they cover.
#[derive(Debug)]
struct Origin {
    source: CounterSource,
    /// The device (kernel name, e.g. `loop3`) for per-device and per-filesystem sources.
    device: Option<String>,
    /// `filesystem`, `device` or `system`: what the numbers count.
    scope: &'static str,
    at: Reading,
}

/// What an origin is read from.
#[derive(Debug)]
enum Reading {
    /// A file, or a directory of files (ext4), under `/sys` or `/proc`.
    File(PathBuf),
    /// `xfs_log_items`: the tracepoint counts of one filesystem.
    Tracepoints(LogItemProbe),
    /// Another kernel's (a guest's): its agent reads it ([`PointCounters::elsewhere`]).
    Elsewhere,
}

impl Reading {
    /// The file an origin reads (None for tracepoints and another kernel's).
    fn path(&self) -> Option<&Path> {
        match self {
            Reading::File(p) => Some(p),
            Reading::Tracepoints(_) | Reading::Elsewhere => None,
        }
    }
}

/// What one origin counts, without how it is read: what a guest's agent tells fslab
/// about the counters it resolved in the guest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OriginInfo {
    pub source: CounterSource,
    pub device: Option<String>,
    /// `filesystem`, `device` or `system`.
    pub scope: String,
}

/// The scopes an origin may have.
const SCOPES: [&str; 3] = ["filesystem", "device", "system"];

/// The counts behind `xfs_log_items` for one XFS filesystem, running from when the
/// point's counters were resolved (after mount) until the point ends.
#[derive(Debug)]
struct LogItemProbe {
    /// `xfs_defer_pending_finish` with optype `attr`: the finishing steps of deferred attr
    /// updates. Each step logs the done item of one ATTRI intent on a filesystem that
    /// logs its xattr updates (parent pointers on); an update that takes several
    /// transactions makes a new intent per step, so this counts ATTRI intents where
    /// `xfs_defer_create_intent` (once per update) would not.
    attr: EventCount,
    /// `xfs_cil_whiteout_skip` of `XFS_LI_ATTRI` items: intents never written to the log.
    elided: EventCount,
}

/// `XFS_LI_ATTRI` (fs/xfs/libxfs/xfs_log_format.h).
const XFS_LI_ATTRI: u32 = 0x1246;

impl LogItemProbe {
    fn start(dev: (u32, u32)) -> Result<LogItemProbe, crate::devices::trace::TraceError> {
        let on_dev = dev_filter(&[dev]);
        Ok(LogItemProbe {
            attr: EventCount::start(
                "xfs",
                "xfs_defer_pending_finish",
                &format!("{on_dev} && name == \"attr\""),
            )?,
            elided: EventCount::start(
                "xfs",
                "xfs_cil_whiteout_skip",
                &format!("{on_dev} && type == {XFS_LI_ATTRI:#x}"),
            )?,
        })
    }

    /// The samples of one read; none when a count is not exact (events dropped).
    fn read(&self) -> Vec<Sample> {
        let (Ok((attr, d1)), Ok((elided, d2))) = (self.attr.count(), self.elided.count()) else {
            return Vec::new();
        };
        if d1 + d2 > 0 {
            return Vec::new();
        }
        let sample = |name: &str, value| Sample {
            group: "log_items".into(),
            name: name.into(),
            value,
            unit: "count",
            gauge: false,
            wraps_at_32: false,
        };
        vec![
            sample("attri_finished", attr),
            sample("attri_elided", elided),
        ]
    }
}

/// One read of every origin (by its index among the point's origins). A guest's agent
/// sends it as JSON.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot(Vec<(usize, Vec<Sample>)>);

/// The counters a point reads, resolved once its filesystems are mounted (by the
/// target's session: it knows where the kernel's files are).
pub struct PointCounters {
    origins: Vec<Origin>,
    devices: Vec<(u32, u32)>,
    /// What was said about sources that could not be read as asked (said once a point).
    pub notes: Vec<String>,
}

/// A row of `counters.parquet` (before the key columns): where the counter was read,
/// and its delta.
#[derive(Debug, Clone, Serialize)]
pub struct CounterRow {
    pub source: &'static str,
    pub scope: &'static str,
    pub device: Option<String>,
    #[serde(flatten)]
    pub delta: Delta,
}

/// The kernel's name of a block device (`/dev/loop3` → `loop3`), through sysfs.
fn kernel_name(major: u32, minor: u32) -> Option<String> {
    let target = std::fs::read_link(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    Some(target.file_name()?.to_string_lossy().to_string())
}

impl PointCounters {
    /// Resolve the sources for a point's devices (`sysfs`/`proc` are the roots, `/sys`
    /// and `/proc` outside tests).
    pub(super) fn resolve(sources: &[CounterSource], devs: &PointResources) -> PointCounters {
        Self::resolve_in(
            sources,
            &devs
                .devices()
                .iter()
                .map(|d| d.device.clone())
                .collect::<Vec<_>>(),
            Path::new("/sys"),
            Path::new("/proc"),
        )
    }

    /// No counters: the target cannot read them (`why`, said once for the point).
    pub(super) fn unavailable(sources: &[CounterSource], why: &str) -> PointCounters {
        PointCounters {
            origins: Vec::new(),
            devices: Vec::new(),
            notes: if sources.is_empty() {
                Vec::new()
            } else {
                vec![why.to_string()]
            },
        }
    }

    /// The counters another kernel resolved and reads (a guest's agent, with the
    /// guest's `/sys` and `/proc`): `origins` as it described them, its `notes`. This
    /// side only names the rows; the snapshots come from there
    /// ([`Session::read_counters`](super::target::Session::read_counters)).
    pub(super) fn elsewhere(origins: Vec<OriginInfo>, mut notes: Vec<String>) -> PointCounters {
        let mut kept = Vec::new();
        for o in origins {
            match SCOPES.iter().find(|s| **s == o.scope) {
                Some(scope) => kept.push(Origin {
                    source: o.source,
                    device: o.device,
                    scope,
                    at: Reading::Elsewhere,
                }),
                // Both ends are this program: said, not guessed.
                None => notes.push(format!(
                    "counters: {}: unknown scope `{}`; no {} rows",
                    o.source.name(),
                    o.scope,
                    o.source.name()
                )),
            }
        }
        PointCounters {
            origins: kept,
            devices: Vec::new(),
            notes,
        }
    }

    /// What each origin counts, in order (what [`elsewhere`](Self::elsewhere) takes).
    pub(super) fn describe(&self) -> Vec<OriginInfo> {
        self.origins
            .iter()
            .map(|o| OriginInfo {
                source: o.source,
                device: o.device.clone(),
                scope: o.scope.to_string(),
            })
            .collect()
    }

    /// Whether there is anything to read.
    pub(super) fn is_empty(&self) -> bool {
        self.origins.is_empty()
    }

    /// Resolve the sources under other roots than `/sys` and `/proc` (a target whose
    /// kernel files are elsewhere; the tests).
    pub(super) fn resolve_in(
        sources: &[CounterSource],
        device_paths: &[PathBuf],
        sys: &Path,
        proc_: &Path,
    ) -> PointCounters {
        let mut origins = Vec::new();
        let mut notes = Vec::new();
        let devices: Vec<(u32, u32)> = device_paths
            .iter()
            .filter_map(|p| device_numbers(p).ok())
            .collect();
        let named: Vec<((u32, u32), String)> = devices
            .iter()
            .filter_map(|&(a, b)| kernel_name(a, b).map(|n| ((a, b), n)))
            .collect();
        let names: Vec<String> = named.iter().map(|(_, n)| n.clone()).collect();
        for &source in sources {
            match source {
                CounterSource::Xfs => {
                    let own: Vec<&String> = names
                        .iter()
                        .filter(|n| sys.join("fs/xfs").join(n).join("stats/stats").is_file())
                        .collect();
                    for n in &own {
                        origins.push(Origin {
                            source,
                            device: Some((*n).clone()),
                            scope: "filesystem",
                            at: Reading::File(sys.join("fs/xfs").join(n).join("stats/stats")),
                        });
                    }
                    // Per-filesystem statistics exist since Linux 4.4 (/sys/fs/xfs/<dev>/):
                    // then a point without a mounted XFS has no XFS rows. Only a kernel
                    // without them falls back to the global file, and says so.
                    let per_fs = sys.join("fs/xfs").is_dir();
                    if own.is_empty() && per_fs {
                        notes.push(
                            "counters: xfs: no XFS filesystem of this point is mounted when the workload starts; no xfs rows".into(),
                        );
                    } else if own.is_empty() {
                        let global = proc_.join("fs/xfs/stat");
                        if global.is_file() {
                            notes.push(format!(
                                "counters: xfs: this kernel has no per-filesystem XFS statistics; {} counts every XFS filesystem on the machine (scope: system)",
                                global.display()
                            ));
                            origins.push(Origin {
                                source,
                                device: None,
                                scope: "system",
                                at: Reading::File(global),
                            });
                        } else {
                            notes.push(
                                "counters: xfs: no XFS statistics here (the kernel has neither /sys/fs/xfs nor /proc/fs/xfs/stat); no xfs rows".into(),
                            );
                        }
                    }
                }
                CounterSource::Ext4 => {
                    let own: Vec<&String> = names
                        .iter()
                        .filter(|n| sys.join("fs/ext4").join(n).is_dir())
                        .collect();
                    if own.is_empty() {
                        notes.push(
                            "counters: ext4: no ext4 filesystem of this point is mounted when the workload starts; no ext4 rows".into(),
                        );
                    }
                    for n in own {
                        origins.push(Origin {
                            source,
                            device: Some(n.clone()),
                            scope: "filesystem",
                            at: Reading::File(sys.join("fs/ext4").join(n)),
                        });
                    }
                }
                CounterSource::Diskstats => {
                    if devices.is_empty() {
                        notes.push(
                            "counters: diskstats: the point has no devices; no diskstats rows"
                                .into(),
                        );
                    } else {
                        origins.push(Origin {
                            source,
                            device: None,
                            scope: "device",
                            at: Reading::File(proc_.join("diskstats")),
                        });
                    }
                }
                CounterSource::Vmstat => origins.push(Origin {
                    source,
                    device: None,
                    scope: "system",
                    at: Reading::File(proc_.join("vmstat")),
                }),
                CounterSource::XfsLogItems => {
                    let own: Vec<&((u32, u32), String)> = named
                        .iter()
                        .filter(|(_, n)| sys.join("fs/xfs").join(n).is_dir())
                        .collect();
                    if own.is_empty() {
                        notes.push(
                            "counters: xfs_log_items: no XFS filesystem of this point is mounted when the workload starts; no xfs_log_items rows".into(),
                        );
                    }
                    for (dev, n) in own {
                        match LogItemProbe::start(*dev) {
                            Ok(p) => origins.push(Origin {
                                source,
                                device: Some(n.clone()),
                                scope: "filesystem",
                                at: Reading::Tracepoints(p),
                            }),
                            Err(e) => notes.push(format!(
                                "counters: xfs_log_items: {n}: cannot count the XFS log-item tracepoints ({e}); no xfs_log_items rows"
                            )),
                        }
                    }
                }
            }
        }
        PointCounters {
            origins,
            devices,
            notes,
        }
    }

    /// Read every origin now. A file that cannot be read gives no samples (and so no
    /// rows): the iteration's rows say what was measured, never a made-up zero.
    pub(super) fn read(&self) -> Snapshot {
        Snapshot(
            self.origins
                .iter()
                .enumerate()
                .map(|(i, o)| (i, self.read_one(o)))
                .collect(),
        )
    }

    fn read_one(&self, o: &Origin) -> Vec<Sample> {
        let file = |name: Option<&str>| {
            let p = o.at.path()?;
            std::fs::read_to_string(name.map_or_else(|| p.to_path_buf(), |n| p.join(n))).ok()
        };
        match o.source {
            CounterSource::Xfs => file(None)
                .map(|t| parse::xfs_stats(&t).0)
                .unwrap_or_default(),
            CounterSource::Diskstats => file(None)
                .map(|t| parse::diskstats(&t, &self.devices))
                .unwrap_or_default(),
            CounterSource::Vmstat => file(None).map(|t| parse::vmstat(&t)).unwrap_or_default(),
            CounterSource::Ext4 => {
                let files: Vec<(&str, String)> = parse::EXT4_FILES
                    .iter()
                    .filter_map(|(n, _, _)| file(Some(n)).map(|t| (*n, t)))
                    .collect();
                parse::ext4(&files)
            }
            CounterSource::XfsLogItems => match &o.at {
                Reading::Tracepoints(p) => p.read(),
                Reading::File(_) | Reading::Elsewhere => Vec::new(),
            },
        }
    }

    /// The rows of one iteration: every counter's delta between two snapshots.
    pub(super) fn rows(&self, before: &Snapshot, after: &Snapshot) -> Vec<CounterRow> {
        let mut out = Vec::new();
        for ((i, b), (j, a)) in before.0.iter().zip(&after.0) {
            // Snapshots of this point's origins only (another kernel's agent sent them).
            let Some(o) = self.origins.get(*i).filter(|_| i == j) else {
                continue;
            };
            for d in parse::deltas(b, a) {
                out.push(CounterRow {
                    source: o.source.name(),
                    scope: o.scope,
                    // diskstats: the group is the device's kernel name.
                    device: o.device.clone().or_else(|| {
                        (o.source == CounterSource::Diskstats).then(|| d.group.clone())
                    }),
                    delta: d,
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_without_per_filesystem_xfs_stats_falls_back_to_the_global_file_and_says_so() {
        let d = tempfile::tempdir().unwrap();
        let (sys, proc_) = (d.path().join("sys"), d.path().join("proc"));
        std::fs::create_dir_all(proc_.join("fs/xfs")).unwrap();
        std::fs::write(proc_.join("fs/xfs/stat"), "log 1 2 3 4 5\n").unwrap();
        std::fs::write(proc_.join("vmstat"), "pgpgin 10\n").unwrap();
        let c = PointCounters::resolve_in(
            &[
                CounterSource::Xfs,
                CounterSource::Vmstat,
                CounterSource::Ext4,
            ],
            &[],
            &sys,
            &proc_,
        );
        assert_eq!(c.origins.len(), 2);
        assert_eq!(c.origins[0].scope, "system");
        assert!(
            c.notes[0].contains("counts every XFS filesystem"),
            "{:?}",
            c.notes
        );
        assert!(c.notes[1].contains("no ext4 rows"), "{:?}", c.notes);
        let before = c.read();
        std::fs::write(proc_.join("fs/xfs/stat"), "log 4 2 3 4 9\n").unwrap();
        std::fs::write(proc_.join("vmstat"), "pgpgin 25\n").unwrap();
        let rows = c.rows(&before, &c.read());
        let get = |n: &str| rows.iter().find(|r| r.delta.name == n).unwrap();
        assert_eq!(get("xs_log_writes").delta.delta, 3);
        assert_eq!(get("xs_log_force_sleep").delta.delta, 4);
        assert_eq!(
            (get("pgpgin").delta.delta, get("pgpgin").source),
            (15, "vmstat")
        );
        assert_eq!(rows.len(), 6);
    }
}
