//! The executables a run starts: path, version and provenance, for the manifest.

use crate::plan::executes;
use crate::plan::Plan;
use crate::store::ExecutableRecord;
use std::collections::BTreeMap;

/// Every program the plan's steps start (over all points), resolved as the run resolves
/// it: a path as given; a bare name through a provisioned tool, then `PATH`.
pub fn record(plan: &Plan) -> BTreeMap<String, ExecutableRecord> {
    let mut out = BTreeMap::new();
    for point in &plan.points {
        for e in executes::executed(plan, point) {
            if out.contains_key(&e.word) {
                continue;
            }
            let Some(path) = crate::host::which(&e.word) else {
                continue;
            };
            let tool = crate::tools::owner_of(&path);
            let via = match (&e.tool, &tool) {
                (Some(_), _) => e.via(),
                (None, Some(t)) => format!("provisioned by fslab: {} {}", t.name, t.version),
                (None, None) => "PATH".to_string(),
            };
            let version = crate::host::version_line(&path)
                .unwrap_or_else(|| crate::host::tool_version(&path.display().to_string()));
            out.insert(
                e.word.clone(),
                ExecutableRecord {
                    path: path.display().to_string(),
                    version,
                    via,
                    provenance: tool.map(|t| t.provenance),
                },
            );
        }
    }
    out
}
