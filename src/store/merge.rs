//! Shards of one plan (`fslab run --shard K/N`) and merging their bundles into one
//! (`fslab merge`).
//!
//! A merged bundle is an ordinary bundle: one `runs.jsonl`/`runs.parquet`, one of each
//! capture table, every shard's `logs/` and `captures/`. Its manifest's `merged` keeps
//! each shard's environment (host, kernel, CPU, tools, devices) and which points ran
//! there; [`point_environment`] answers where a point was measured.

use super::journal::read_journal;
use super::{
    atomic_write, io, runs_frame, write_parquet, Bundle, BundleStatus, Environment, Manifest,
    PointRecord, PointStatus, RunRow, StoreError, ToolRecord, CAPTURES_DIR, EXPERIMENT_FILE,
    JOURNAL_FILE, LOGS_DIR, MANIFEST_FILE, RUNS_FILE,
};
use crate::frames;
use crate::shard::Shard;
use polars::prelude::DataFrame;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What a shard's manifest says about the split.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ShardInfo {
    /// `K/N`.
    pub shard: String,
    /// The full plan's point ids, in plan order (every shard's, not only this one's).
    pub plan_points: Vec<String>,
    /// [`crate::shard::plan_hash`] of `plan_points`.
    pub plan_sha256: String,
}

impl ShardInfo {
    pub fn new(shard: Shard, plan_points: Vec<String>) -> ShardInfo {
        ShardInfo {
            shard: shard.to_string(),
            plan_sha256: crate::shard::plan_hash(plan_points.iter().map(String::as_str)),
            plan_points,
        }
    }

    /// The shard, or None when the manifest's text is not `K/N`.
    pub fn parsed(&self) -> Option<Shard> {
        self.shard.parse().ok()
    }
}

/// One shard of a merged bundle: where it came from and what it ran on.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MergedShard {
    /// `K/N`.
    pub shard: String,
    /// The shard bundle's directory when it was merged.
    pub source: String,
    pub status: BundleStatus,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub environment: Environment,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, ToolRecord>,
    /// Plan indices of the points this shard ran.
    pub points: Vec<usize>,
}

/// What `fslab merge` recorded.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MergeInfo {
    /// N: how many shards the plan was split into.
    pub shards_total: usize,
    pub plan_points: Vec<String>,
    pub plan_sha256: String,
    pub shards: Vec<MergedShard>,
    /// Shards (`K/N`) that were not given (only with `--partial`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// True when shards were missing (`--partial`).
    #[serde(default)]
    pub partial: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("name at least one shard bundle to merge")]
    Nothing,
    #[error(
        "{bundle}: not a shard (it was run without --shard K/N); only shards of one plan merge"
    )]
    NotAShard { bundle: PathBuf },
    #[error("{bundle}: its status is `{status}`; finish it first (`fslab run --resume {bundle}`)")]
    Unfinished {
        bundle: PathBuf,
        status: BundleStatus,
    },
    #[error(
        "refusing to merge: different {what}: {first} has {first_value}, {other} has {other_value}"
    )]
    Differs {
        what: &'static str,
        first: PathBuf,
        first_value: String,
        other: PathBuf,
        other_value: String,
    },
    #[error("refusing to merge: overlapping points: {point} ran in both {first} and {other}")]
    Overlap {
        point: String,
        first: PathBuf,
        other: PathBuf,
    },
    #[error("refusing to merge: missing shards {} of {n}; give every shard's bundle, or --partial to merge what there is (the bundle is then marked partial)", missing.join(", "))]
    Missing { missing: Vec<String>, n: usize },
    #[error("{0}: already exists; merge into a new directory")]
    Exists(PathBuf),
}

/// Merge shard bundles into a new bundle at `out` (which must not exist). Refuses shards
/// of different experiments (sha256), profiles, overrides or plans, overlapping points,
/// and missing shards unless `partial`.
pub fn merge(bundles: &[PathBuf], out: &Path, partial: bool) -> Result<Bundle, MergeError> {
    if bundles.is_empty() {
        return Err(MergeError::Nothing);
    }
    if out.exists() {
        return Err(MergeError::Exists(out.to_path_buf()));
    }
    let mut shards: Vec<(Shard, Bundle)> = Vec::new();
    for dir in bundles {
        let b = Bundle::open(dir)?;
        let shard = b
            .manifest
            .shard
            .as_ref()
            .and_then(ShardInfo::parsed)
            .ok_or_else(|| MergeError::NotAShard {
                bundle: dir.clone(),
            })?;
        if matches!(
            b.manifest.status,
            BundleStatus::Running | BundleStatus::Interrupted
        ) {
            return Err(MergeError::Unfinished {
                bundle: dir.clone(),
                status: b.manifest.status,
            });
        }
        shards.push((shard, b));
    }
    check_same_plan(&shards)?;
    // Who ran each point.
    let n_points = shards[0].1.manifest.points.len();
    let mut owner: Vec<Option<usize>> = vec![None; n_points];
    for (bi, (_, b)) in shards.iter().enumerate() {
        for p in &b.manifest.points {
            if p.status == PointStatus::OtherShard || p.index >= n_points {
                continue;
            }
            if let Some(prev) = owner[p.index] {
                return Err(MergeError::Overlap {
                    point: p.id.clone(),
                    first: shards[prev].1.path().to_path_buf(),
                    other: b.path().to_path_buf(),
                });
            }
            owner[p.index] = Some(bi);
        }
    }
    let n = shards[0].0.n();
    let missing: Vec<String> = (1..=n)
        .filter(|k| !shards.iter().any(|(s, _)| s.k() == *k))
        .map(|k| format!("{k}/{n}"))
        .collect();
    if !missing.is_empty() && !partial {
        return Err(MergeError::Missing { missing, n });
    }
    shards.sort_by_key(|(s, _)| s.k());
    // Recompute owners in sorted order.
    let owner_of = |index: usize| -> Option<&(Shard, Bundle)> {
        shards.iter().find(|(_, b)| {
            b.manifest
                .points
                .get(index)
                .is_some_and(|p| p.status != PointStatus::OtherShard)
        })
    };

    let first = &shards[0].1.manifest;
    let info = first.shard.clone().unwrap_or_default();
    let mut points: Vec<PointRecord> = Vec::with_capacity(n_points);
    for (i, template) in first.points.iter().enumerate() {
        match owner_of(i) {
            Some((_, b)) => points.push(b.manifest.points[i].clone()),
            None => {
                let mut p = template.clone();
                p.status = PointStatus::MissingShard;
                p.reason = Some(format!(
                    "shard {}/{n} was not merged (--partial)",
                    crate::shard::shard_of(i, n)
                ));
                p.iterations = 0;
                p.repeat_stop = None;
                p.repeat_stops.clear();
                points.push(p);
            }
        }
    }
    let merged_shards: Vec<MergedShard> = shards
        .iter()
        .map(|(s, b)| MergedShard {
            shard: s.to_string(),
            source: b.path().display().to_string(),
            status: b.manifest.status,
            started_at: b.manifest.started_at.clone(),
            finished_at: b.manifest.finished_at.clone(),
            environment: b.manifest.environment.clone(),
            tools: b.manifest.tools.clone(),
            points: b
                .manifest
                .points
                .iter()
                .filter(|p| p.status != PointStatus::OtherShard)
                .map(|p| p.index)
                .collect(),
        })
        .collect();
    let all_ok = points.iter().all(|p| p.status == PointStatus::Ok);
    let manifest = Manifest {
        started_at: shards
            .iter()
            .map(|(_, b)| b.manifest.started_at.clone())
            .min()
            .unwrap_or_default(),
        finished_at: shards
            .iter()
            .map(|(_, b)| b.manifest.finished_at.clone())
            .collect::<Option<Vec<String>>>()
            .and_then(|v| v.into_iter().max()),
        status: if all_ok {
            BundleStatus::Complete
        } else {
            BundleStatus::Partial
        },
        points,
        // Every shard's executables (the first shard's record of a program wins).
        executables: shards
            .iter()
            .rev()
            .fold(BTreeMap::new(), |mut acc, (_, b)| {
                acc.extend(b.manifest.executables.clone());
                acc
            }),
        shard: None,
        // Each shard ran its own order on its own machine: their bundles keep them.
        run_order: None,
        calibration: None,
        sequential: None,
        merged: Some(MergeInfo {
            shards_total: n,
            plan_points: info.plan_points,
            plan_sha256: info.plan_sha256,
            shards: merged_shards,
            partial: !missing.is_empty(),
            missing,
        }),
        ..first.clone()
    };

    // Build beside the target, then rename: a failed merge leaves no half bundle.
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty());
    let parent = parent.unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(io(parent))?;
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "merged".into());
    let tmp = parent.join(format!(".{name}.merging-{}", std::process::id()));
    let built = build(&shards, &manifest, &tmp)
        .and_then(|()| std::fs::rename(&tmp, out).map_err(|e| MergeError::Store(io(out)(e))));
    if let Err(e) = built {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    Ok(Bundle::open(out)?)
}

fn build(shards: &[(Shard, Bundle)], manifest: &Manifest, dir: &Path) -> Result<(), MergeError> {
    std::fs::create_dir_all(dir.join(LOGS_DIR)).map_err(io(dir))?;
    let yaml = dir.join(EXPERIMENT_FILE);
    atomic_write(&yaml, manifest.experiment.yaml.as_bytes()).map_err(io(&yaml))?;
    // Runs: every shard's journal, in plan order then iteration order.
    let mut rows: Vec<RunRow> = Vec::new();
    for (_, b) in shards {
        rows.extend(read_journal(&b.path().join(JOURNAL_FILE))?);
    }
    rows.sort_by_key(|r| (r.point_index, r.replicate, r.iteration));
    let mut text = Vec::new();
    for r in &rows {
        text.extend(serde_json::to_vec(r).unwrap_or_default());
        text.push(b'\n');
    }
    let journal = dir.join(JOURNAL_FILE);
    atomic_write(&journal, &text).map_err(io(&journal))?;
    write_parquet(&dir.join(RUNS_FILE), &runs_frame(&rows)?)?;
    // Capture tables: one of each, rows of every shard.
    let mut tables: BTreeMap<String, Vec<DataFrame>> = BTreeMap::new();
    for (_, b) in shards {
        for name in b.tables()? {
            if name != "runs" {
                let df = b.table(&name)?;
                tables.entry(name).or_default().push(df);
            }
        }
    }
    for (name, parts) in &tables {
        let all = frames::concat_diagonal(parts).map_err(StoreError::from)?;
        write_parquet(&dir.join(format!("{name}.parquet")), &all)?;
    }
    // Logs and raw captures: per-point directories, so shards never collide.
    for (_, b) in shards {
        for sub in [LOGS_DIR, CAPTURES_DIR] {
            copy_tree(&b.path().join(sub), &dir.join(sub))?;
        }
    }
    let mpath = dir.join(MANIFEST_FILE);
    let bytes = serde_json::to_vec_pretty(manifest).unwrap_or_default();
    atomic_write(&mpath, &bytes).map_err(io(&mpath))?;
    Ok(())
}

/// Copy regular files and directories under `from` to `to` (links are not followed).
fn copy_tree(from: &Path, to: &Path) -> Result<(), StoreError> {
    if !from.is_dir() {
        return Ok(());
    }
    for e in walkdir::WalkDir::new(from).follow_links(false) {
        let e = e.map_err(|e| {
            let p = e.path().unwrap_or(from).to_path_buf();
            StoreError::Io {
                path: p,
                source: e.into(),
            }
        })?;
        let rel = e.path().strip_prefix(from).unwrap_or(e.path());
        let target = to.join(rel);
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&target).map_err(io(&target))?;
        } else if e.file_type().is_file() {
            std::fs::copy(e.path(), &target).map_err(io(&target))?;
        }
    }
    Ok(())
}

fn check_same_plan(shards: &[(Shard, Bundle)]) -> Result<(), MergeError> {
    let (s0, b0) = &shards[0];
    let m0 = &b0.manifest;
    let info0 = m0.shard.clone().unwrap_or_default();
    for (s, b) in &shards[1..] {
        let m = &b.manifest;
        let info = m.shard.clone().unwrap_or_default();
        let differs = |what: &'static str, a: String, b2: String| MergeError::Differs {
            what,
            first: b0.path().to_path_buf(),
            first_value: a,
            other: b.path().to_path_buf(),
            other_value: b2,
        };
        if m.experiment.sha256 != m0.experiment.sha256 {
            return Err(differs(
                "experiment sha256",
                m0.experiment.sha256.clone(),
                m.experiment.sha256.clone(),
            ));
        }
        if m.profile != m0.profile {
            let show = |p: &Option<String>| p.clone().unwrap_or_else(|| "no profile".into());
            return Err(differs("profile", show(&m0.profile), show(&m.profile)));
        }
        if m.overrides != m0.overrides {
            return Err(differs(
                "overrides",
                serde_json::Value::Object(m0.overrides.clone()).to_string(),
                serde_json::Value::Object(m.overrides.clone()).to_string(),
            ));
        }
        if s.n() != s0.n() {
            return Err(differs("number of shards", s0.to_string(), s.to_string()));
        }
        if info.plan_sha256 != info0.plan_sha256 || m.points.len() != m0.points.len() {
            return Err(differs(
                "plan (point list hash)",
                info0.plan_sha256.clone(),
                info.plan_sha256.clone(),
            ));
        }
    }
    Ok(())
}

/// Where the point with plan index `index` was measured: its shard's environment in a
/// merged bundle, else the bundle's own.
pub fn point_environment(m: &Manifest, index: usize) -> &Environment {
    m.merged
        .as_ref()
        .and_then(|mi| mi.shards.iter().find(|s| s.points.contains(&index)))
        .map_or(&m.environment, |s| &s.environment)
}

/// How two environments differ in what can change a measurement: host, kernel,
/// distribution, CPU, cores, memory, tool versions. Empty when they agree.
pub fn environment_differences(a: &Environment, b: &Environment) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = |name: &str, x: String, y: String| {
        if x != y {
            out.push(format!("{name} `{x}` vs `{y}`"));
        }
    };
    field("host", a.hostname.clone(), b.hostname.clone());
    field("kernel", a.kernel.clone(), b.kernel.clone());
    field(
        "distribution",
        a.distribution.clone(),
        b.distribution.clone(),
    );
    field("CPU", a.cpu_model.clone(), b.cpu_model.clone());
    field("cores", a.cores.to_string(), b.cores.to_string());
    field(
        "memory",
        a.memory_bytes.to_string(),
        b.memory_bytes.to_string(),
    );
    let none = || "(not recorded)".to_string();
    let (a_tools, b_tools) = (versions_by_name(&a.tools), versions_by_name(&b.tools));
    let names: BTreeSet<&str> = a_tools.keys().chain(b_tools.keys()).copied().collect();
    for t in names {
        field(
            &format!("{t} version"),
            a_tools.get(t).cloned().unwrap_or_else(none),
            b_tools.get(t).cloned().unwrap_or_else(none),
        );
    }
    out
}

/// The recorded tool versions by the program's name: the runs record each program by the
/// word that started it, a path for fslab itself (`{{fslab}}`) and for tools given with
/// `--set`, and where a binary lives is not a difference between two runs; its version
/// is. Programs of one name (a build under /opt beside PATH's) give their versions
/// together, sorted.
pub fn versions_by_name(tools: &BTreeMap<String, String>) -> BTreeMap<&str, String> {
    let mut by_name: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (program, version) in tools {
        let name = Path::new(program)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(program);
        by_name.entry(name).or_default().insert(version);
    }
    by_name
        .into_iter()
        .map(|(name, versions)| (name, versions.into_iter().collect::<Vec<_>>().join(", ")))
        .collect()
}

/// For a merged bundle: one line per pair of shards whose environments differ, naming
/// their points (a claim comparing those points compares machines too). Empty otherwise.
pub fn shard_differences(m: &Manifest) -> Vec<String> {
    let Some(mi) = &m.merged else {
        return Vec::new();
    };
    let ids = |s: &MergedShard| -> String {
        s.points
            .iter()
            .filter_map(|&i| m.points.get(i).map(|p| p.id.clone()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = Vec::new();
    for (i, a) in mi.shards.iter().enumerate() {
        for b in &mi.shards[i + 1..] {
            let d = environment_differences(&a.environment, &b.environment);
            if !d.is_empty() {
                out.push(format!(
                    "points [{}] (shard {}) and [{}] (shard {}) ran on differing hardware or software: {}",
                    ids(a),
                    a.shard,
                    ids(b),
                    b.shard,
                    d.join(", ")
                ));
            }
        }
    }
    out
}

/// For two bundles compared point by point: one line per set of differences, naming the
/// points (matched by id) whose two measurements ran on differing hardware or software.
pub fn compared_differences(base: &Manifest, new: &Manifest) -> Vec<String> {
    let mut groups: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    for p in &base.points {
        let Some(q) = new.points.iter().find(|q| q.id == p.id) else {
            continue;
        };
        if p.status != PointStatus::Ok || q.status != PointStatus::Ok {
            continue;
        }
        let d = environment_differences(
            point_environment(base, p.index),
            point_environment(new, q.index),
        );
        if d.is_empty() {
            continue;
        }
        match groups.iter_mut().find(|(diff, _)| *diff == d) {
            Some((_, ids)) => ids.push(p.id.clone()),
            None => groups.push((d, vec![p.id.clone()])),
        }
    }
    groups
        .into_iter()
        .map(|(d, ids)| {
            format!(
                "points [{}] ran on differing hardware or software in the two bundles: {}",
                ids.join(", "),
                d.join(", ")
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_name_each_field_that_differs() {
        let mut a = Environment {
            hostname: "n1".into(),
            kernel: "6.1".into(),
            cores: 2,
            ..Default::default()
        };
        a.tools.insert("fs_mark".into(), "3.3".into());
        assert!(environment_differences(&a, &a.clone()).is_empty());
        let mut b = a.clone();
        b.hostname = "n2".into();
        b.tools.insert("fs_mark".into(), "3.4".into());
        b.tools.insert("xfs_io".into(), "6.1".into());
        let d = environment_differences(&a, &b);
        assert_eq!(d.len(), 3, "{d:?}");
        assert!(d[0].contains("host `n1` vs `n2`"), "{d:?}");
        assert!(d.iter().any(|x| x.contains("fs_mark version")), "{d:?}");
        assert!(
            d.iter()
                .any(|x| x.contains("xfs_io version `(not recorded)`")),
            "{d:?}"
        );
    }

    #[test]
    fn tools_are_compared_by_name_not_by_the_path_they_ran_from() {
        let mut a = Environment::default();
        a.tools
            .insert("/work/a/target/debug/fslab".into(), "fslab 0.1.0".into());
        a.tools.insert("mkfs.xfs".into(), "6.1.0".into());
        let mut b = Environment::default();
        b.tools
            .insert("/work/b/target/debug/fslab".into(), "fslab 0.1.0".into());
        b.tools.insert("mkfs.xfs".into(), "6.1.0".into());
        assert!(environment_differences(&a, &b).is_empty());
        b.tools
            .insert("/work/b/target/debug/fslab".into(), "fslab 0.2.0".into());
        b.tools.insert("/opt/x/mkfs.xfs".into(), "6.13.0".into());
        assert_eq!(
            environment_differences(&a, &b),
            [
                "fslab version `fslab 0.1.0` vs `fslab 0.2.0`",
                "mkfs.xfs version `6.1.0` vs `6.1.0, 6.13.0`"
            ]
        );
    }

    #[test]
    fn a_point_is_found_in_its_shard_environment() {
        let mut m = Manifest::default();
        m.environment.hostname = "first".into();
        assert_eq!(point_environment(&m, 1).hostname, "first");
        m.merged = Some(MergeInfo {
            shards: vec![
                MergedShard {
                    points: vec![0],
                    environment: Environment {
                        hostname: "a".into(),
                        ..Default::default()
                    },
                    ..Default::default()
                },
                MergedShard {
                    points: vec![1],
                    environment: Environment {
                        hostname: "b".into(),
                        ..Default::default()
                    },
                    ..Default::default()
                },
            ],
            ..Default::default()
        });
        assert_eq!(point_environment(&m, 1).hostname, "b");
        assert_eq!(point_environment(&m, 0).hostname, "a");
    }

    #[test]
    fn comparisons_and_merged_shards_name_the_points_on_differing_machines() {
        let point = |i: usize, id: &str| PointRecord {
            id: id.into(),
            index: i,
            status: PointStatus::Ok,
            ..Default::default()
        };
        let env = |h: &str| Environment {
            hostname: h.into(),
            ..Default::default()
        };
        let mut a = Manifest {
            points: vec![point(0, "fs=ext4"), point(1, "fs=xfs")],
            environment: env("n1"),
            ..Default::default()
        };
        let mut b = a.clone();
        assert!(compared_differences(&a, &b).is_empty());
        assert!(shard_differences(&a).is_empty());
        b.environment = env("n2");
        let w = compared_differences(&a, &b);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("[fs=ext4, fs=xfs]") && w[0].contains("host `n1` vs `n2`"));
        // Merged: point 1 ran on n2, so only point 0 differs from b... and within a,
        // the two shards differ.
        a.merged = Some(MergeInfo {
            shards: vec![
                MergedShard {
                    shard: "1/2".into(),
                    points: vec![0],
                    environment: env("n1"),
                    ..Default::default()
                },
                MergedShard {
                    shard: "2/2".into(),
                    points: vec![1],
                    environment: env("n2"),
                    ..Default::default()
                },
            ],
            ..Default::default()
        });
        let w = compared_differences(&a, &b);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("[fs=ext4]"), "{w:?}");
        let s = shard_differences(&a);
        assert_eq!(s.len(), 1, "{s:?}");
        assert!(
            s[0].contains("[fs=ext4] (shard 1/2) and [fs=xfs] (shard 2/2)"),
            "{s:?}"
        );
    }

    #[test]
    fn an_old_manifest_without_shard_fields_still_reads() {
        let m: Manifest = serde_json::from_str(
            r#"{"fslab_version":"0.1.0","experiment":{"id":"e","title":"t","file":null,"sha256":"x","yaml":""},
                "profile":null,"overrides":{},"matrix_axes":[],"started_at":"s","finished_at":null,
                "status":"complete","environment":{"kernel":"","distribution":"","cpu_model":"","cores":1,
                "memory_bytes":0,"hostname":"","tools":{},"devices":[]},"points":[]}"#,
        )
        .unwrap();
        assert!(m.shard.is_none() && m.merged.is_none());
        // And a manifest without shards writes no shard fields.
        let text = serde_json::to_string(&m).unwrap();
        assert!(
            !text.contains("shard") && !text.contains("merged"),
            "{text}"
        );
    }
}
