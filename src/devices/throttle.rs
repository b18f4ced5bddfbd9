//! Block throttling of one device for one cgroup (`throttle: { read_iops, write_iops,
//! read_bps, write_bps }`).
//!
//! The cgroup itself (the point's, in which every step's process tree runs) is made
//! elsewhere; this module only writes the limits into a given cgroup directory: cgroup v2
//! `io.max` when that directory is in a unified hierarchy with the `io` controller, else
//! cgroup v1 `blkio.throttle.{read,write}_{iops,bps}_device`.
//!
//! **What a v1 throttle catches** (tested in tests/it/throttle.rs, recorded in docs/media.md):
//! only the I/O that the cgroup's own tasks submit: reads, direct (O_DIRECT) writes and
//! synchronous writeback (fsync in the task). Buffered writes that the kernel's flusher
//! threads write back later are submitted by the flusher, outside the cgroup, and escape.
//! Under v2 with the io controller, writeback is charged to the page's cgroup.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub use crate::spec::media::Throttle;

/// Which interface a cgroup directory offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThrottleInterface {
    /// cgroup v2 `io.max`.
    V2IoMax,
    /// cgroup v1 `blkio.throttle.*_device`.
    V1Blkio,
}

#[derive(Debug, thiserror::Error)]
pub enum ThrottleError {
    #[error("{dir}: neither io.max (cgroup v2 with the io controller) nor blkio.throttle.* (cgroup v1 blkio) is there")]
    NoInterface { dir: PathBuf },
    #[error("writing `{line}` to {file}: {source}")]
    Write {
        file: PathBuf,
        line: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a block device ({message})")]
    NotBlock { path: PathBuf, message: String },
}

/// The interface `dir` offers, if any.
pub fn interface(dir: &Path) -> Option<ThrottleInterface> {
    if dir.join("io.max").exists() {
        Some(ThrottleInterface::V2IoMax)
    } else if dir.join("blkio.throttle.read_iops_device").exists() {
        Some(ThrottleInterface::V1Blkio)
    } else {
        None
    }
}

/// Where a point's cgroup for throttling would live on this host, and with which
/// interface: the unified hierarchy when its root delegates `io`, else the v1 blkio
/// hierarchy. None when neither is mounted (doctor says so).
pub fn host_hierarchy() -> Option<(PathBuf, ThrottleInterface)> {
    for root in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
        let controllers = std::fs::read_to_string(format!("{root}/cgroup.controllers"));
        if controllers.is_ok_and(|c| c.split_whitespace().any(|w| w == "io")) {
            return Some((PathBuf::from(root), ThrottleInterface::V2IoMax));
        }
    }
    let v1 = Path::new("/sys/fs/cgroup/blkio");
    (interface(v1) == Some(ThrottleInterface::V1Blkio))
        .then(|| (v1.to_path_buf(), ThrottleInterface::V1Blkio))
}

/// The (major, minor) of a block device node.
pub fn device_numbers(path: &Path) -> Result<(u32, u32), ThrottleError> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let m = std::fs::metadata(path).map_err(|e| ThrottleError::NotBlock {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    if !m.file_type().is_block_device() {
        return Err(ThrottleError::NotBlock {
            path: path.to_path_buf(),
            message: "stat says it is not".into(),
        });
    }
    let rdev = m.rdev();
    Ok((
        nix::sys::stat::major(rdev) as u32,
        nix::sys::stat::minor(rdev) as u32,
    ))
}

/// Write `t`'s limits for device `dev` into the cgroup directory `dir`. Returns the
/// interface used.
pub fn apply(
    dir: &Path,
    dev: (u32, u32),
    t: &Throttle,
) -> Result<ThrottleInterface, ThrottleError> {
    let iface = interface(dir).ok_or_else(|| ThrottleError::NoInterface {
        dir: dir.to_path_buf(),
    })?;
    let writes = match iface {
        ThrottleInterface::V2IoMax => {
            if t.is_empty() {
                vec![]
            } else {
                vec![("io.max", t.io_max_line(dev))]
            }
        }
        ThrottleInterface::V1Blkio => t.v1_lines(dev),
    };
    for (file, line) in writes {
        let path = dir.join(file);
        std::fs::write(&path, &line).map_err(|source| ThrottleError::Write {
            file: path.clone(),
            line: line.clone(),
            source,
        })?;
    }
    Ok(iface)
}

/// Apply `t` for `device` in the point's cgroup, given as its directories (one per
/// hierarchy): the v2 one when it has `io.max`, else the v1 blkio one.
pub fn apply_to_cgroup(
    dirs: &[PathBuf],
    device: &Path,
    t: &Throttle,
) -> Result<ThrottleInterface, super::DeviceError> {
    let config = |message: String| super::DeviceError::Config {
        path: device.to_path_buf(),
        message,
    };
    let dev = device_numbers(device).map_err(|e| config(e.to_string()))?;
    let dir = [ThrottleInterface::V2IoMax, ThrottleInterface::V1Blkio]
        .into_iter()
        .find_map(|want| dirs.iter().find(|d| interface(d) == Some(want)))
        .ok_or_else(|| {
            config(format!(
                "throttle: the point's cgroup ({}) has neither io.max nor blkio.throttle.*",
                dirs.iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
    apply(dir, dev, t).map_err(|e| config(format!("throttle: {e}")))
}

/// The limits, the interface this host offers and what it catches, for the manifest.
pub fn describe(t: &Throttle) -> String {
    let limits = [
        ("read_iops", t.read_iops),
        ("write_iops", t.write_iops),
        ("read_bps", t.read_bps),
        ("write_bps", t.write_bps),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.map(|v| format!("{k}={v}")))
    .collect::<Vec<_>>()
    .join(" ");
    let how = match host_hierarchy() {
        Some((_, ThrottleInterface::V1Blkio)) => {
            "cgroup v1 blkio: catches reads, direct and fsync'd writes; buffered writeback escapes"
        }
        Some((_, ThrottleInterface::V2IoMax)) => {
            "cgroup v2 io.max: writeback charged to the dirtying cgroup"
        }
        None => "no cgroup blkio/io hierarchy here",
    };
    format!("{limits} ({how})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_for_both_interfaces() {
        let t = Throttle {
            read_iops: Some(100),
            write_bps: Some(1_000_000),
            ..Throttle::default()
        };
        assert_eq!(t.io_max_line((7, 3)), "7:3 wbps=1000000 riops=100");
        assert_eq!(
            t.v1_lines((7, 3)),
            vec![
                ("blkio.throttle.read_iops_device", "7:3 100".to_string()),
                ("blkio.throttle.write_bps_device", "7:3 1000000".to_string()),
            ]
        );
        assert!(Throttle::default().is_empty());
        assert!(!t.is_empty());
    }

    #[test]
    fn throttle_from_yaml_rejects_unknown_keys() {
        let t: Throttle = serde_yaml::from_str("{ read_iops: 100 }").unwrap();
        assert_eq!(t.read_iops, Some(100));
        assert!(serde_yaml::from_str::<Throttle>("{ read_ops: 100 }").is_err());
    }

    #[test]
    fn a_directory_without_either_interface_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let e = apply(d.path(), (7, 0), &Throttle::default()).unwrap_err();
        assert!(matches!(e, ThrottleError::NoInterface { .. }), "{e}");
        assert!(device_numbers(d.path()).is_err());
        assert!(device_numbers(Path::new("/dev/null")).is_err());
    }
}
