//! What a bundle is, as facts gathered once: the experiment, how the run ended, the
//! host, each point's status and how many runs ended how. `fslab show`, the report
//! and the notebook display each render this one summary (they choose what to show,
//! never recount it).

use super::compare::environment_facts;
use super::{str_values, AnalysisError};
use crate::store::{Bundle, BundleStatus, Manifest, PointStatus, RunStatus, StoredNotebook};
use polars::prelude::DataFrame;
use serde_json::Value;
use std::path::PathBuf;

/// The host a bundle ran on.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSummary {
    pub kernel: String,
    pub distribution: String,
    pub cores: usize,
    pub cpu_model: String,
    pub memory_mib: u64,
}

/// A guest kernel the steps ran in (`target: uml`).
#[derive(Debug, Clone, PartialEq)]
pub struct GuestSummary {
    pub name: String,
    pub kind: String,
    pub release: String,
    pub memory_mib: u64,
}

/// The order the (point, replicate) pairs ran in.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOrderSummary {
    /// `fixed` or `random`.
    pub order: String,
    pub seed: Option<u64>,
    /// How many (point, replicate) pairs the order holds.
    pub pairs: usize,
}

/// One matrix point as the manifest records it.
#[derive(Debug, Clone, PartialEq)]
pub struct PointSummary {
    pub index: usize,
    pub id: String,
    pub status: PointStatus,
    pub reason: Option<String>,
    /// Timed iterations recorded, over all replicates.
    pub iterations: u32,
    /// Replicates that recorded why they stopped repeating (0 or 1 for a single one).
    pub replicates: usize,
    /// Why repetition stopped, in words.
    pub stop: Option<String>,
}

/// How many of something ended in each status, in the status type's order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Tally {
    pub total: usize,
    /// (status, count), only the statuses that occur.
    pub by_status: Vec<(String, usize)>,
}

impl Tally {
    fn count<'a>(order: &[&str], values: impl Iterator<Item = &'a str>) -> Tally {
        let mut by_status: Vec<(String, usize)> = Vec::new();
        let mut total = 0;
        for v in values {
            total += 1;
            match by_status.iter_mut().find(|(s, _)| s == v) {
                Some((_, n)) => *n += 1,
                None => by_status.push((v.to_string(), 1)),
            }
        }
        // Known statuses in their declaration order, then any other in order of appearance.
        let rank = |s: &str| order.iter().position(|o| *o == s).unwrap_or(order.len());
        by_status.sort_by_key(|(s, _)| rank(s));
        Tally { total, by_status }
    }

    /// The count of one status (0 when it does not occur).
    pub fn of(&self, status: &str) -> usize {
        self.by_status
            .iter()
            .find(|(s, _)| s == status)
            .map_or(0, |(_, n)| *n)
    }

    /// `5 runs (4 ok, 1 failed)`, `1 run (1 ok)`, `0 runs`: the count of `noun`s.
    pub fn describe(&self, noun: &str) -> String {
        let plural = if self.total == 1 { "" } else { "s" };
        if self.total == 0 {
            return format!("0 {noun}s");
        }
        let parts: Vec<String> = self
            .by_status
            .iter()
            .map(|(s, n)| format!("{n} {s}"))
            .collect();
        format!("{} {noun}{plural} ({})", self.total, parts.join(", "))
    }
}

/// A bundle's facts, computed once (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct BundleSummary {
    pub path: PathBuf,
    pub experiment_id: String,
    pub title: String,
    pub experiment_file: Option<String>,
    pub profile: Option<String>,
    pub status: BundleStatus,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub fslab_version: String,
    /// Each `--set` as `key=value`.
    pub overrides: Vec<String>,
    pub run_order: Option<RunOrderSummary>,
    pub host: HostSummary,
    pub guests: Vec<GuestSummary>,
    /// (tool, version) of the tools the run used.
    pub tools: Vec<(String, String)>,
    /// Every environment fact of the manifest (host, tools, devices), as
    /// `fslab compare` keys them without the `environment.` prefix; raw values.
    pub environment: Vec<(String, String)>,
    pub points: Vec<PointSummary>,
    /// The points by status.
    pub point_tally: Tally,
    /// The rows of `runs.parquet` (timed iterations) by status.
    pub run_tally: Tally,
    pub tables: Vec<String>,
    pub notebooks: Vec<StoredNotebook>,
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl BundleSummary {
    /// The summary of `bundle`, whose runs frame (`Bundle::runs`) the caller has read
    /// (a report reads it once for the summary and the statistics).
    pub fn new(bundle: &Bundle, runs: &DataFrame) -> Result<BundleSummary, AnalysisError> {
        let mut s = BundleSummary::of_manifest(bundle.manifest(), runs)?;
        s.path = bundle.path().to_path_buf();
        s.tables = bundle.tables()?;
        s.notebooks = bundle.notebooks()?;
        Ok(s)
    }

    /// The summary of what a manifest and a runs frame say (no path, tables or
    /// notebooks: those are the bundle directory's).
    pub fn of_manifest(m: &Manifest, runs: &DataFrame) -> Result<BundleSummary, AnalysisError> {
        let e = &m.environment;
        let statuses = if runs.column("status").is_ok() {
            str_values(runs, "runs", "status")?
        } else {
            vec![Some(RunStatus::Ok.as_str().to_string()); runs.height()]
        };
        let run_order: Vec<&str> = RunStatus::ALL.iter().map(|s| s.as_str()).collect();
        let point_order: Vec<&str> = PointStatus::ALL.iter().map(|s| s.as_str()).collect();
        Ok(BundleSummary {
            path: PathBuf::new(),
            experiment_id: m.experiment.id.clone(),
            title: m.experiment.title.clone(),
            experiment_file: m.experiment.file.clone(),
            profile: m.profile.clone(),
            status: m.status,
            started_at: m.started_at.clone(),
            finished_at: m.finished_at.clone(),
            fslab_version: m.fslab_version.clone(),
            overrides: m
                .overrides
                .iter()
                .map(|(k, v)| format!("{k}={}", text(v)))
                .collect(),
            run_order: m.run_order.as_ref().map(|o| RunOrderSummary {
                order: o.order.to_string(),
                seed: o.seed,
                pairs: o.pairs.len(),
            }),
            host: HostSummary {
                kernel: e.kernel.clone(),
                distribution: e.distribution.clone(),
                cores: e.cores,
                cpu_model: e.cpu_model.clone(),
                memory_mib: e.memory_bytes >> 20,
            },
            guests: e
                .guests
                .iter()
                .map(|g| GuestSummary {
                    name: g.name.clone(),
                    kind: g.kind.clone(),
                    release: g.release.clone(),
                    memory_mib: g.memory_bytes >> 20,
                })
                .collect(),
            tools: e
                .tools
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            environment: environment_facts(m)
                .into_iter()
                .filter_map(|(k, v)| {
                    k.strip_prefix("environment.")
                        .map(|key| (key.to_string(), v))
                })
                .collect(),
            points: m
                .points
                .iter()
                .map(|p| PointSummary {
                    index: p.index,
                    id: p.id.clone(),
                    status: p.status,
                    reason: p.reason.clone(),
                    iterations: p.iterations,
                    replicates: p.repeat_stops.len(),
                    stop: p.repeat_stop.clone(),
                })
                .collect(),
            point_tally: Tally::count(&point_order, m.points.iter().map(|p| p.status.as_str())),
            run_tally: Tally::count(
                &run_order,
                statuses.iter().map(|s| s.as_deref().unwrap_or("(none)")),
            ),
            tables: Vec::new(),
            notebooks: Vec::new(),
        })
    }

    /// `5 points (5 ok), 75 runs (74 ok, 1 failed)`: the counts every rendering shows.
    pub fn counts(&self) -> String {
        format!(
            "{}, {}",
            self.point_tally.describe("point"),
            self.run_tally.describe("run")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{BundleSummary, Tally};
    use crate::store::{Manifest, PointRecord, PointStatus};
    use polars::prelude::df;

    #[test]
    fn tallies_count_in_status_order() {
        let t = Tally::count(
            &["ok", "failed", "timeout"],
            ["failed", "ok", "ok", "odd"].into_iter(),
        );
        assert_eq!(t.total, 4);
        assert_eq!(t.describe("run"), "4 runs (2 ok, 1 failed, 1 odd)");
        assert_eq!(t.of("timeout"), 0);
        assert_eq!(Tally::default().describe("run"), "0 runs");
    }

    #[test]
    fn a_summary_counts_points_and_runs() {
        let m = Manifest {
            points: vec![
                PointRecord {
                    id: "fs=a".into(),
                    status: PointStatus::Ok,
                    iterations: 2,
                    ..PointRecord::default()
                },
                PointRecord {
                    id: "fs=b".into(),
                    index: 1,
                    status: PointStatus::Failed,
                    reason: Some("mkfs failed".into()),
                    iterations: 1,
                    ..PointRecord::default()
                },
            ],
            ..Manifest::default()
        };
        let runs = df!(
            "point_id" => ["fs=a", "fs=a", "fs=b"],
            "status" => ["ok", "ok", "failed"],
        )
        .unwrap();
        let s = BundleSummary::of_manifest(&m, &runs).unwrap();
        assert_eq!(
            s.counts(),
            "2 points (1 ok, 1 failed), 3 runs (2 ok, 1 failed)"
        );
        assert_eq!(s.points[1].reason.as_deref(), Some("mkfs failed"));
    }
}
