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
            let here = match crate::devices::throttle::host_hierarchy() {
                Some((root, iface)) => format!("{iface:?} at {}", root.display()),
                None => "no cgroup blkio/io hierarchy here".into(),
            };
            pc.add(Problem {
                kind: ProblemKind::MissingKernelFeature,
                subject: "throttle".into(),
                message: format!(
                    "device {}: throttle: is not applied yet: it needs the point's cgroup ({here})",
                    d.name
                ),
                fix: None,
            });
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
