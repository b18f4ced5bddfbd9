//! What the doctor says about `medium:`, `throttle:` and `trace: io`.

use super::{Host, Problem, ProblemKind};
use crate::host::Findings;
use crate::plan::{Phase, Plan, Point};
use crate::spec::media::TraceKind;

pub(super) fn check(plan: &Plan, point: &Point, host: &dyn Host, pc: &mut Findings) {
    let fs = host.filesystems();
    for d in &point.devices {
        if let Some(m) = &d.medium {
            if fs.iter().any(|f| f == "fuse") {
                pc.note(format!(
                    "device {}: medium {} is a model served through FUSE (a substitution for the post's disk; docs/media.md)",
                    d.name,
                    m.label()
                ));
            } else {
                pc.add(Problem {
                    kind: ProblemKind::MissingKernelFeature,
                    subject: "fuse".into(),
                    message: format!(
                        "device {}: medium {} needs FUSE, and the kernel lists no `fuse` filesystem",
                        d.name,
                        m.label()
                    ),
                    fix: Some("modprobe fuse".into()),
                });
            }
        }
        if d.throttle.is_some_and(|t| !t.is_empty()) {
            match crate::devices::throttle::host_hierarchy() {
                Some((root, crate::devices::throttle::ThrottleInterface::V1Blkio)) => pc.note(format!(
                    "device {}: throttle through cgroup v1 blkio at {}: it catches reads, direct and fsync'd writes; buffered writeback escapes (docs/media.md)",
                    d.name,
                    root.display()
                )),
                Some((root, _)) => pc.note(format!(
                    "device {}: throttle through cgroup v2 io.max at {}",
                    d.name,
                    root.display()
                )),
                None => pc.add(Problem {
                    kind: ProblemKind::MissingKernelFeature,
                    subject: "throttle".into(),
                    message: format!(
                        "device {}: throttle: needs cgroup v2 with the io controller or cgroup v1 blkio, and neither is mounted",
                        d.name
                    ),
                    fix: Some("mount the blkio cgroup (v1) or enable io in the v2 root's cgroup.subtree_control".into()),
                }),
            }
        }
    }
    let traced = Phase::ALL
        .into_iter()
        .flat_map(|ph| plan.steps(point, ph))
        .any(|s| s.trace == Some(TraceKind::Io));
    if traced && !fs.iter().any(|f| f == "tracefs") {
        pc.add(Problem {
            kind: ProblemKind::MissingKernelFeature,
            subject: "tracefs".into(),
            message:
                "trace: io needs tracefs and the block tracepoints; the kernel lists no `tracefs`"
                    .into(),
            fix: Some("a kernel with CONFIG_FTRACE and CONFIG_BLK_DEV_IO_TRACE".into()),
        });
    }
}
