//! The device policy: when fslab may format a block device it did not create.
//!
//! By default fslab only formats loop devices it attached itself to image files in its
//! work directory. A real device is used only when **both**
//!
//! 1. the user maps a logical device to it on the command line
//!    (`fslab run EXP --device data=/dev/sdX`), and
//! 2. the user's local configuration lists it as a scratch device: the file named by
//!    `$FSLAB_CONFIG`, else `$XDG_CONFIG_HOME/fslab/config.yaml`, else
//!    `~/.config/fslab/config.yaml` (`scratch_devices: [/dev/sdX, ...]`), or the
//!    colon-separated `$FSLAB_SCRATCH_DEVICES`.
//!
//! An experiment file can never name one (the loader refuses literal `/dev/` paths).
//! Even a listed device is refused, with the reason, when it: does not resolve (through
//! symlinks, both the mapped and the listed path) to the same device as a listed entry;
//! is not a block device; holds the root filesystem; is mounted (or one of its partitions
//! is); is used as swap; has holders (device-mapper, md, LVM); is a loop device whose
//! backing file is also attached to a loop device that is mounted or held; or the kernel
//! refuses to open it exclusively (someone else claims it).
//!
//! The listing and matching rules are pure functions ([`parse_config`],
//! [`parse_env_list`], [`config_path`], [`match_listed`]); the state checks read
//! `/proc/self/mountinfo`, `/proc/swaps` and sysfs.

mod config;
mod sysfs;

pub use config::{config_path, match_listed, parse_config, parse_env_list, ListError};

use super::DeviceError;
use serde::Serialize;
use std::path::{Path, PathBuf};
use sysfs::{check_unused, identify};

/// A device number, `(major, minor)`.
pub type DevNo = (u64, u64);

/// One listed scratch device and where it is listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Listed {
    pub path: PathBuf,
    /// The config file, or `FSLAB_SCRATCH_DEVICES`.
    pub origin: String,
}

/// The scratch devices the user allows fslab to format.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ScratchList {
    pub entries: Vec<Listed>,
    /// Where fslab looked (for messages): the config path and the variable.
    pub consulted: Vec<String>,
}

/// A logical device mapped to a real block device that passed every check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MappedDevice {
    /// The experiment's logical device name.
    pub name: String,
    /// The path the user gave.
    pub given: PathBuf,
    /// The canonical device node, e.g. `/dev/sdb`; this is what commands see.
    pub device: PathBuf,
    pub devno: DevNo,
    pub size_bytes: u64,
    /// The entry of the scratch list that allowed it (as written there, e.g. a
    /// `/dev/disk/by-id/…` link): re-resolved before each point.
    pub listed: PathBuf,
    /// The kernel's sequence number of the disk (`/sys/dev/block/M:m/diskseq`), which
    /// changes when another medium takes the same device number; None where the kernel
    /// has none.
    pub diskseq: Option<u64>,
}

pub const ENV_LIST: &str = "FSLAB_SCRATCH_DEVICES";
pub const ENV_CONFIG: &str = "FSLAB_CONFIG";

/// Why fslab will not write to a device (or use a path as one of a point's devices).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("it does not exist")]
    Missing,
    #[error("no scratch devices are listed; {}", how(consulted))]
    NothingListed { consulted: Vec<String> },
    #[error(
        "it is not a listed scratch device (listed: {listed}); {}",
        how(consulted)
    )]
    NotListed {
        listed: String,
        consulted: Vec<String>,
    },
    #[error(
        "it resolves through symlinks to {}, which is not a listed scratch device (listed: {listed}); {}",
        target.display(),
        how(consulted)
    )]
    ResolvesToUnlisted {
        target: PathBuf,
        listed: String,
        consulted: Vec<String>,
    },
    #[error("it has no capacity (0 bytes; an unconfigured or empty device)")]
    NoCapacity,
    #[error(
        "it holds {} ({have} bytes), less than the {} the experiment declares for device `{device}`",
        iec(*have),
        iec(*needed)
    )]
    TooSmall {
        have: u64,
        needed: u64,
        device: String,
    },
    #[error("cannot stat it: {0}")]
    CannotStat(String),
    #[error("it is not a block device ({0})")]
    NotBlock(&'static str),
    #[error("the kernel does not know block device {}:{} ({message})", devno.0, devno.1)]
    UnknownToKernel { devno: DevNo, message: String },
    #[error("it holds the root filesystem (/)")]
    HoldsRoot,
    #[error("{}", .0.said_of("it", "its"))]
    InUse(InUse),
    #[error("it is a loop device on {}, which holds the root filesystem", .0.display())]
    LoopOnRoot(PathBuf),
    #[error(
        "it is a loop device on {}, and of that device {}",
        backing.display(),
        why.said_of("it", "its")
    )]
    LoopBackingInUse { backing: PathBuf, why: InUse },
    #[error(
        "it is a loop device on {}, which is also attached as /dev/{name}, and {}",
        backing.display(),
        why.said_of("that", "that device's")
    )]
    LoopAlsoAttached {
        backing: PathBuf,
        name: String,
        why: InUse,
    },
    #[error("the kernel refuses exclusive access to it (busy: mounted elsewhere, swap, or held by a driver)")]
    Busy,
    #[error("cannot open it: {0}")]
    CannotOpen(String),
    #[error(
        "it resolved to {} when the run started and now resolves to {}",
        then.display(),
        now.as_ref().map_or("nothing".into(), |p| p.display().to_string())
    )]
    Moved { then: PathBuf, now: Option<PathBuf> },
    #[error(
        "the scratch list's entry {} resolved to {} when the run started and now resolves to {}",
        entry.display(),
        then.display(),
        now.as_ref().map_or("nothing".into(), |p| p.display().to_string())
    )]
    ListEntryMoved {
        entry: PathBuf,
        then: PathBuf,
        now: Option<PathBuf>,
    },
    #[error(
        "its disk sequence number changed from {} to {} since the run started: another medium is behind the same device",
        then.map_or("none".into(), |d| d.to_string()),
        now.map_or("none".into(), |d| d.to_string())
    )]
    DiskseqChanged { then: Option<u64>, now: Option<u64> },
    #[error(
        "its device number changed from {}:{} to {}:{} since the run started",
        then.0, then.1, now.0, now.1
    )]
    DevnoChanged { then: DevNo, now: DevNo },
    #[error("it is not one of this point's devices; commands may only name the loop devices fslab created and devices mapped with --device")]
    NotThisPointsDevice,
    #[error("a point's directory must be directly under {}", .0.display())]
    PointDirOutsideWork(PathBuf),
}

/// How a device (or one of its partitions) is in use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InUse {
    /// Mounted (`partition`: which of its partitions, if not the device itself).
    Mounted {
        partition: Option<String>,
        at: PathBuf,
    },
    /// Used as swap (the name in /proc/swaps).
    Swap(String),
    /// Held by device-mapper, md or another driver.
    Holders {
        partition: Option<String>,
        holders: Vec<String>,
    },
}

impl InUse {
    /// The sentence, with `subject` ("it") and `possessive` ("its") for the device.
    fn said_of(&self, subject: &str, possessive: &str) -> String {
        match self {
            InUse::Mounted { partition, at } => match partition {
                None => format!("{subject} is mounted at {}", at.display()),
                Some(p) => format!("{possessive} partition {p} is mounted at {}", at.display()),
            },
            InUse::Swap(s) => format!("{subject} is in use as swap ({s} in /proc/swaps)"),
            InUse::Holders { partition, holders } => {
                let kinds: Vec<String> = holders
                    .iter()
                    .map(|x| {
                        let k = if x.starts_with("dm-") {
                            " (device-mapper: LVM, crypt, multipath)"
                        } else if x.starts_with("md") {
                            " (md RAID)"
                        } else {
                            ""
                        };
                        format!("{x}{k}")
                    })
                    .collect();
                match partition {
                    None => format!("{subject} has holders: {}", kinds.join(", ")),
                    Some(p) => format!(
                        "{possessive} partition {p} has holders: {}",
                        kinds.join(", ")
                    ),
                }
            }
        }
    }
}

fn how(consulted: &[String]) -> String {
    let where_ = if consulted.is_empty() {
        "the scratch device list".to_string()
    } else {
        consulted.join(" or in ")
    };
    format!("to let fslab destroy its data, list it under `scratch_devices:` in {where_}")
}

fn iec(b: u64) -> String {
    bytesize::ByteSize(b).display().iec().to_string()
}

/// Parse `NAME=PATH` from `--device`.
pub fn parse_mapping(text: &str) -> Result<(String, PathBuf), DeviceError> {
    let bad = |m: &str| DeviceError::Mapping {
        given: text.to_string(),
        message: m.to_string(),
    };
    let (name, path) = text
        .split_once('=')
        .ok_or_else(|| bad("expected NAME=PATH, e.g. `data=/dev/sdb`"))?;
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(bad("NAME must be one of the experiment's logical devices"));
    }
    if !path.starts_with('/') {
        return Err(bad("PATH must be an absolute path to a block device"));
    }
    Ok((name.to_string(), PathBuf::from(path)))
}

fn refuse(given: &Path, reason: Refusal) -> DeviceError {
    DeviceError::Refused {
        device: given.display().to_string(),
        reason: Box::new(reason),
    }
}

/// Check a mapping against the list and the system's state.
pub fn approve(name: &str, given: &Path, list: &ScratchList) -> Result<MappedDevice, DeviceError> {
    let canonical = match_listed(given, list, &|p| std::fs::canonicalize(p).ok())
        .map_err(|r| refuse(given, r))?;
    let dev = identify(&canonical).map_err(|r| refuse(given, r))?;
    check_unused(&dev).map_err(|r| refuse(given, r))?;
    let listed = list
        .entries
        .iter()
        .find(|l| std::fs::canonicalize(&l.path).is_ok_and(|c| c == canonical))
        .map(|l| l.path.clone())
        .unwrap_or_else(|| canonical.clone());
    Ok(MappedDevice {
        name: name.to_string(),
        given: given.to_path_buf(),
        device: canonical,
        devno: dev.devno,
        size_bytes: dev.size_bytes,
        listed,
        diskseq: dev.diskseq,
    })
}

/// A mapped device must hold at least what the experiment declares for it (`needed`
/// bytes): results on a smaller device would not be the experiment's.
pub fn check_size(m: &MappedDevice, needed: u64) -> Result<(), Refusal> {
    if m.size_bytes == 0 {
        return Err(Refusal::NoCapacity);
    }
    if m.size_bytes < needed {
        return Err(Refusal::TooSmall {
            have: m.size_bytes,
            needed,
            device: m.name.clone(),
        });
    }
    Ok(())
}

/// Check again right before use: still the same device, still unused.
pub fn recheck(m: &MappedDevice) -> Result<(), DeviceError> {
    let now = std::fs::canonicalize(&m.given).ok();
    if now.as_deref() != Some(m.device.as_path()) {
        return Err(refuse(
            &m.given,
            Refusal::Moved {
                then: m.device.clone(),
                now,
            },
        ));
    }
    // The list entry that allowed it must still name this device (a by-id link follows
    // its disk; if the disk went, the device node is someone else's now).
    let listed_now = std::fs::canonicalize(&m.listed).ok();
    if listed_now.as_deref() != Some(m.device.as_path()) {
        return Err(refuse(
            &m.given,
            Refusal::ListEntryMoved {
                entry: m.listed.clone(),
                then: m.device.clone(),
                now: listed_now,
            },
        ));
    }
    let dev = identify(&m.device).map_err(|r| refuse(&m.given, r))?;
    if dev.diskseq != m.diskseq {
        return Err(refuse(
            &m.given,
            Refusal::DiskseqChanged {
                then: m.diskseq,
                now: dev.diskseq,
            },
        ));
    }
    if dev.devno != m.devno {
        return Err(refuse(
            &m.given,
            Refusal::DevnoChanged {
                then: m.devno,
                now: dev.devno,
            },
        ));
    }
    check_unused(&dev).map_err(|r| refuse(&m.given, r))
}

#[cfg(test)]
mod tests;
