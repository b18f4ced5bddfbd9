//! This host as the doctor sees it: [`crate::host::LocalHost`], plus realtime XFS
//! tried for real on two small loop devices when the probe mode asks for it.

use crate::devices::{self, PointResources};
use crate::host::{ConfigValue, Host, LocalHost, Probe, ProbeResult};
use crate::spec::{Backing, DevicePlan};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// This host ([`LocalHost`]), probing kernel features by using them as `probe` says.
pub struct ProbingHost {
    local: LocalHost,
    probe: Probe,
    work_dir: PathBuf,
    rt_probe: Mutex<Option<ProbeResult>>,
}

impl std::fmt::Debug for ProbingHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProbingHost")
            .field("probe", &self.probe)
            .field("work_dir", &self.work_dir)
            .finish_non_exhaustive()
    }
}

impl Default for ProbingHost {
    fn default() -> Self {
        ProbingHost::new(Probe::default(), crate::host::default_work_dir())
    }
}

impl ProbingHost {
    /// `work_dir` is where a probe puts its image files (as `fslab run` does).
    pub fn new(probe: Probe, work_dir: PathBuf) -> ProbingHost {
        ProbingHost {
            local: LocalHost::new(),
            probe,
            work_dir,
            rt_probe: Mutex::new(None),
        }
    }
}

impl Host for ProbingHost {
    fn which(&self, program: &str) -> Option<PathBuf> {
        self.local.which(program)
    }

    fn version_line(&self, path: &Path) -> Option<String> {
        self.local.version_line(path)
    }

    fn kernel_release(&self) -> String {
        self.local.kernel_release()
    }

    fn kernel_config(&self, key: &str) -> (ConfigValue, String) {
        self.local.kernel_config(key)
    }

    fn filesystems(&self) -> Vec<String> {
        self.local.filesystems()
    }

    fn fs_module(&self, fstype: &str) -> bool {
        self.local.fs_module(fstype)
    }

    fn probe_mode(&self) -> Probe {
        self.probe
    }

    fn probe_xfs_rt(&self) -> ProbeResult {
        let mut guard = match self.rt_probe.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if let Some(r) = guard.as_ref() {
            return r.clone();
        }
        let r = probe_xfs_rt(&self.work_dir, self);
        *guard = Some(r.clone());
        r
    }
}

/// Make a small XFS with a realtime device on two loop devices and mount it.
fn probe_xfs_rt(work_dir: &Path, host: &dyn Host) -> ProbeResult {
    if !nix::unistd::Uid::effective().is_root() {
        return ProbeResult::Inconclusive(
            "probing needs root (loop devices and mount)".to_string(),
        );
    }
    let Some(mkfs) = host.which("mkfs.xfs") else {
        return ProbeResult::Inconclusive("mkfs.xfs is not installed (xfsprogs)".into());
    };
    let work = match devices::WorkDir::open(work_dir) {
        Ok(w) => w,
        Err(e) => return ProbeResult::Inconclusive(e.to_string()),
    };
    let dir = work
        .points()
        .join(format!("probe-rt-{}", std::process::id()));
    let plans = [
        DevicePlan {
            name: "data".into(),
            size_bytes: 512 << 20,
            backing: Backing::File,
            medium: None,
            throttle: None,
        },
        DevicePlan {
            name: "rt".into(),
            size_bytes: 64 << 20,
            backing: Backing::File,
            medium: None,
            throttle: None,
        },
    ];
    let mut devs = match PointResources::provision(&work, dir, &plans) {
        Ok(d) => d,
        Err(e) => return ProbeResult::Inconclusive(format!("cannot attach loop devices: {e}")),
    };
    let (Some(data), Some(rt)) = (devs.device("data").cloned(), devs.device("rt").cloned()) else {
        return ProbeResult::Inconclusive("loop devices missing after provisioning".into());
    };
    let rtdev = rt.device.display().to_string();
    let made = duct::cmd(
        mkfs,
        [
            "-f".to_string(),
            "-r".to_string(),
            format!("rtdev={rtdev}"),
            data.device.display().to_string(),
        ],
    )
    .stdin_null()
    .stdout_null()
    .stderr_capture()
    .unchecked()
    .run();
    let result = match made {
        Ok(o) if o.status.success() => {
            match devs.mount(
                &data.device,
                &devs.mnt(),
                Some("xfs"),
                Some(&format!("rtdev={rtdev}")),
            ) {
                Ok(()) => {
                    let _ = devices::unmount(&devs.mnt());
                    ProbeResult::Works
                }
                Err(e) => {
                    let text = e.to_string();
                    ProbeResult::Fails(if text.contains("Function not implemented") {
                        "mount -o rtdev= failed with ENOSYS (Function not implemented)".into()
                    } else {
                        text.lines().next().unwrap_or_default().to_string()
                    })
                }
            }
        }
        Ok(o) => ProbeResult::Inconclusive(format!(
            "mkfs.xfs -r rtdev= failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => ProbeResult::Inconclusive(format!("cannot run mkfs.xfs: {e}")),
    };
    if let Err(e) = devs.release() {
        return ProbeResult::Inconclusive(format!(
            "{result:?}, but releasing the probe failed: {e}"
        ));
    }
    result
}
