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

use super::mounts::{mounts, MountEntry};
use super::DeviceError;
use serde::{Deserialize, Serialize};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    scratch_devices: Vec<String>,
}

fn absolute_entry(entry: &str, origin: &str) -> Result<Listed, String> {
    let t = entry.trim();
    if !t.starts_with('/') {
        return Err(format!(
            "{origin}: scratch device `{t}` is not an absolute path; write e.g. `/dev/sdb` or `/dev/disk/by-id/...`"
        ));
    }
    Ok(Listed {
        path: PathBuf::from(t),
        origin: origin.to_string(),
    })
}

/// Parse a config file's text (`scratch_devices: [/dev/sdX, ...]`). An empty file lists
/// nothing.
pub fn parse_config(text: &str, origin: &str) -> Result<Vec<Listed>, String> {
    let value: serde_yaml::Value =
        serde_yaml::from_str(text).map_err(|e| format!("{origin}: {e}"))?;
    if value.is_null() {
        return Ok(Vec::new());
    }
    let cfg: ConfigFile = serde_yaml::from_value(value).map_err(|e| {
        let m = e.to_string();
        if m.contains("unknown field") {
            format!("{origin}: {m} (the only key fslab reads is `scratch_devices`)")
        } else {
            format!("{origin}: {m}; expected `scratch_devices: [/dev/sdX, ...]`")
        }
    })?;
    cfg.scratch_devices
        .iter()
        .map(|e| absolute_entry(e, origin))
        .collect()
}

/// Parse `$FSLAB_SCRATCH_DEVICES`: colon-separated absolute paths; empty parts are ignored.
pub fn parse_env_list(text: &str) -> Result<Vec<Listed>, String> {
    text.split(':')
        .filter(|p| !p.trim().is_empty())
        .map(|p| absolute_entry(p, ENV_LIST))
        .collect()
}

/// The config file to read, from the environment: `$FSLAB_CONFIG` (explicit: it must
/// exist), else `$XDG_CONFIG_HOME/fslab/config.yaml` (when absolute), else
/// `$HOME/.config/fslab/config.yaml`. The flag says whether the path was explicit.
pub fn config_path(env: &dyn Fn(&str) -> Option<String>) -> Option<(PathBuf, bool)> {
    let set = |k: &str| env(k).filter(|v| !v.is_empty());
    if let Some(p) = set(ENV_CONFIG) {
        return Some((PathBuf::from(p), true));
    }
    if let Some(x) = set("XDG_CONFIG_HOME").filter(|x| x.starts_with('/')) {
        return Some((Path::new(&x).join("fslab/config.yaml"), false));
    }
    set("HOME").map(|h| (Path::new(&h).join(".config/fslab/config.yaml"), false))
}

impl ScratchList {
    /// Read the list from this process's environment and the config file.
    pub fn from_env() -> Result<ScratchList, DeviceError> {
        let env = |k: &str| std::env::var(k).ok();
        let mut list = ScratchList::default();
        if let Some((path, explicit)) = config_path(&env) {
            list.consulted.push(path.display().to_string());
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    check_config_permissions(&path)?;
                    let origin = path.display().to_string();
                    list.entries
                        .extend(
                            parse_config(&text, &origin).map_err(|m| DeviceError::Config {
                                path: path.clone(),
                                message: m,
                            })?,
                        );
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => {}
                Err(e) => {
                    return Err(DeviceError::Config {
                        path,
                        message: format!("cannot read it ({e})"),
                    })
                }
            }
        }
        list.consulted.push(format!("${ENV_LIST}"));
        if let Some(v) = env(ENV_LIST) {
            list.entries
                .extend(parse_env_list(&v).map_err(|m| DeviceError::Config {
                    path: PathBuf::from(format!("${ENV_LIST}")),
                    message: m,
                })?);
        }
        Ok(list)
    }

    /// A list from explicit entries (tests, notebooks).
    pub fn from_paths(paths: &[&Path]) -> ScratchList {
        ScratchList {
            entries: paths
                .iter()
                .map(|p| Listed {
                    path: p.to_path_buf(),
                    origin: "given".into(),
                })
                .collect(),
            consulted: vec!["given".into()],
        }
    }
}

/// A config that someone else could edit would let them choose what fslab formats.
fn check_config_permissions(path: &Path) -> Result<(), DeviceError> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    let me = nix::unistd::Uid::effective().as_raw();
    let mode = meta.permissions().mode();
    let problem = if meta.uid() != me && meta.uid() != 0 {
        Some(format!(
            "it is owned by uid {}, not by you (uid {me}) or root; `chown root: {}` it, or list the devices in ${ENV_LIST}",
            meta.uid(),
            path.display()
        ))
    } else if mode & 0o022 != 0 {
        Some(format!(
            "it is writable by group or others (mode {:o}); `chmod go-w` it",
            mode & 0o7777
        ))
    } else {
        None
    };
    match problem {
        Some(p) => Err(DeviceError::Config {
            path: path.to_path_buf(),
            message: format!("not trusted to list scratch devices: {p}"),
        }),
        None => Ok(()),
    }
}

/// Match a mapped path against the list. `canon` resolves a path through symlinks
/// (None when it does not exist). Both sides are resolved: a listed symlink (say
/// `/dev/disk/by-id/...`) matches a mapped path that resolves to the same node, and a
/// mapped symlink matches only when its target is what a listed entry resolves to.
/// Returns the canonical path, or the reason for refusing.
pub fn match_listed(
    given: &Path,
    list: &ScratchList,
    canon: &dyn Fn(&Path) -> Option<PathBuf>,
) -> Result<PathBuf, String> {
    let Some(target) = canon(given) else {
        return Err("it does not exist".into());
    };
    if list
        .entries
        .iter()
        .any(|l| canon(&l.path).is_some_and(|c| c == target))
    {
        return Ok(target);
    }
    let where_ = if list.consulted.is_empty() {
        "the scratch device list".to_string()
    } else {
        list.consulted.join(" or in ")
    };
    let how =
        format!("to let fslab destroy its data, list it under `scratch_devices:` in {where_}");
    if list.entries.is_empty() {
        return Err(format!("no scratch devices are listed; {how}"));
    }
    let listed = list
        .entries
        .iter()
        .map(|l| match canon(&l.path) {
            Some(c) if c != l.path => format!("{} (→ {})", l.path.display(), c.display()),
            Some(_) => l.path.display().to_string(),
            None => format!("{} (missing)", l.path.display()),
        })
        .collect::<Vec<_>>()
        .join(", ");
    if target != given {
        Err(format!(
            "it resolves through symlinks to {}, which is not a listed scratch device (listed: {listed}); {how}",
            target.display()
        ))
    } else {
        Err(format!(
            "it is not a listed scratch device (listed: {listed}); {how}"
        ))
    }
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

fn refuse(given: &Path, reason: impl Into<String>) -> DeviceError {
    DeviceError::Refused {
        device: given.display().to_string(),
        reason: reason.into(),
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
pub fn check_size(m: &MappedDevice, needed: u64) -> Result<(), String> {
    let iec = |b: u64| bytesize::ByteSize(b).display().iec().to_string();
    if m.size_bytes == 0 {
        return Err("it has no capacity (0 bytes; an unconfigured or empty device)".into());
    }
    if m.size_bytes < needed {
        return Err(format!(
            "it holds {} ({} bytes), less than the {} the experiment declares for device `{}`",
            iec(m.size_bytes),
            m.size_bytes,
            iec(needed),
            m.name
        ));
    }
    Ok(())
}

/// Check again right before use: still the same device, still unused.
pub fn recheck(m: &MappedDevice) -> Result<(), DeviceError> {
    let now = std::fs::canonicalize(&m.given).ok();
    if now.as_deref() != Some(m.device.as_path()) {
        return Err(refuse(
            &m.given,
            format!(
                "it resolved to {} when the run started and now resolves to {}",
                m.device.display(),
                now.map_or("nothing".into(), |p| p.display().to_string())
            ),
        ));
    }
    // The list entry that allowed it must still name this device (a by-id link follows
    // its disk; if the disk went, the device node is someone else's now).
    let listed_now = std::fs::canonicalize(&m.listed).ok();
    if listed_now.as_deref() != Some(m.device.as_path()) {
        return Err(refuse(
            &m.given,
            format!(
                "the scratch list's entry {} resolved to {} when the run started and now resolves to {}",
                m.listed.display(),
                m.device.display(),
                listed_now.map_or("nothing".into(), |p| p.display().to_string())
            ),
        ));
    }
    let dev = identify(&m.device).map_err(|r| refuse(&m.given, r))?;
    if dev.diskseq != m.diskseq {
        return Err(refuse(
            &m.given,
            format!(
                "its disk sequence number changed from {} to {} since the run started: another medium is behind the same device",
                m.diskseq.map_or("none".into(), |d| d.to_string()),
                dev.diskseq.map_or("none".into(), |d| d.to_string())
            ),
        ));
    }
    if dev.devno != m.devno {
        return Err(refuse(
            &m.given,
            format!(
                "its device number changed from {}:{} to {}:{} since the run started",
                m.devno.0, m.devno.1, dev.devno.0, dev.devno.1
            ),
        ));
    }
    check_unused(&dev).map_err(|r| refuse(&m.given, r))
}

/// A block device as sysfs sees it.
#[derive(Debug, Clone)]
struct BlockDev {
    path: PathBuf,
    devno: DevNo,
    /// e.g. `sdb`, `loop3`, `sdb1`.
    name: String,
    sysfs: PathBuf,
    size_bytes: u64,
    diskseq: Option<u64>,
}

fn devno_of(rdev: u64) -> DevNo {
    (nix::sys::stat::major(rdev), nix::sys::stat::minor(rdev))
}

fn parse_devno(text: &str) -> Option<DevNo> {
    let (a, b) = text.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

fn identify(path: &Path) -> Result<BlockDev, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot stat it: {e}"))?;
    let ft = meta.file_type();
    if !ft.is_block_device() {
        let what = if ft.is_file() {
            "a regular file"
        } else if ft.is_dir() {
            "a directory"
        } else if ft.is_char_device() {
            "a character device"
        } else {
            "not a device"
        };
        return Err(format!("it is not a block device ({what})"));
    }
    let devno = devno_of(meta.rdev());
    let sysfs =
        std::fs::canonicalize(format!("/sys/dev/block/{}:{}", devno.0, devno.1)).map_err(|e| {
            format!(
                "the kernel does not know block device {}:{} ({e})",
                devno.0, devno.1
            )
        })?;
    let name = sysfs
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let sectors: u64 = std::fs::read_to_string(sysfs.join("size"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    let diskseq = std::fs::read_to_string(sysfs.join("diskseq"))
        .ok()
        .and_then(|s| s.trim().parse().ok());
    Ok(BlockDev {
        path: path.to_path_buf(),
        devno,
        name,
        sysfs,
        size_bytes: sectors * 512,
        diskseq,
    })
}

/// The device and, for a whole disk, its partitions: `(name, devno, sysfs dir)`.
fn family(dev: &BlockDev) -> Vec<(String, DevNo, PathBuf)> {
    let mut out = vec![(dev.name.clone(), dev.devno, dev.sysfs.clone())];
    if dev.sysfs.join("partition").exists() {
        return out;
    }
    if let Ok(entries) = std::fs::read_dir(&dev.sysfs) {
        for e in entries.flatten() {
            let p = e.path();
            if p.join("partition").exists() {
                if let Some(d) = std::fs::read_to_string(p.join("dev"))
                    .ok()
                    .and_then(|t| parse_devno(&t))
                {
                    out.push((e.file_name().to_string_lossy().to_string(), d, p));
                }
            }
        }
    }
    out
}

fn rdev_of(path: &str) -> Option<DevNo> {
    if !path.starts_with('/') {
        return None;
    }
    let m = std::fs::metadata(path).ok()?;
    m.file_type().is_block_device().then(|| devno_of(m.rdev()))
}

/// Mount table entries of this namespace and of init's (when readable).
fn all_mounts() -> Vec<MountEntry> {
    let mut v = mounts();
    if let Ok(text) = std::fs::read_to_string("/proc/1/mountinfo") {
        for m in super::mounts::parse_mountinfo(&text) {
            if !v.contains(&m) {
                v.push(m);
            }
        }
    }
    v
}

/// The devices under a device: itself and, recursively, its `slaves/`.
fn with_slaves(devno: DevNo, out: &mut Vec<DevNo>) {
    if out.contains(&devno) || out.len() > 64 {
        return;
    }
    out.push(devno);
    let dir = format!("/sys/dev/block/{}:{}/slaves", devno.0, devno.1);
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if let Some(d) = std::fs::read_to_string(e.path().join("dev"))
                .ok()
                .and_then(|t| parse_devno(&t))
            {
                with_slaves(d, out);
            }
        }
    }
}

/// Every block device the root filesystem lives on.
fn root_devices(mount_table: &[MountEntry]) -> Vec<DevNo> {
    let mut out = Vec::new();
    if let Ok(m) = std::fs::metadata("/") {
        let d = devno_of(m.dev());
        if d.0 != 0 {
            with_slaves(d, &mut out);
        }
    }
    for m in mount_table
        .iter()
        .filter(|m| m.mount_point == Path::new("/"))
    {
        for d in m.devno.into_iter().chain(rdev_of(&m.source)) {
            if d.0 != 0 {
                with_slaves(d, &mut out);
            }
        }
    }
    out
}

fn mounted_where(devnos: &[DevNo], mount_table: &[MountEntry]) -> Option<(DevNo, PathBuf)> {
    mount_table.iter().find_map(|m| {
        let hit = m
            .devno
            .filter(|d| devnos.contains(d))
            .or_else(|| rdev_of(&m.source).filter(|d| devnos.contains(d)))?;
        Some((hit, m.mount_point.clone()))
    })
}

fn swap_users(devnos: &[DevNo]) -> Option<String> {
    let text = std::fs::read_to_string("/proc/swaps").ok()?;
    text.lines().skip(1).find_map(|l| {
        let name = super::mounts::unescape(l.split_whitespace().next()?);
        rdev_of(&name).filter(|d| devnos.contains(d)).map(|_| name)
    })
}

fn holders(sysfs: &Path) -> Vec<String> {
    std::fs::read_dir(sysfs.join("holders"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Why a family of devices is in use (mounted, swap, holders), or None.
fn in_use(fam: &[(String, DevNo, PathBuf)], mount_table: &[MountEntry]) -> Option<String> {
    let devnos: Vec<DevNo> = fam.iter().map(|f| f.1).collect();
    let own = fam.first().map(|f| f.1);
    let own_name = fam.first().map(|f| f.0.as_str());
    let name_of = |d: DevNo| {
        fam.iter()
            .find(|f| f.1 == d)
            .map_or_else(String::new, |f| f.0.clone())
    };
    if let Some((d, at)) = mounted_where(&devnos, mount_table) {
        let who = if Some(d) == own {
            "it is mounted".to_string()
        } else {
            format!("its partition {} is mounted", name_of(d))
        };
        return Some(format!("{who} at {}", at.display()));
    }
    if let Some(s) = swap_users(&devnos) {
        return Some(format!("it is in use as swap ({s} in /proc/swaps)"));
    }
    for (name, _, sysfs) in fam {
        let h = holders(sysfs);
        if !h.is_empty() {
            let kinds: Vec<String> = h
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
            let who = if Some(name.as_str()) == own_name {
                "it has holders".to_string()
            } else {
                format!("its partition {name} has holders")
            };
            return Some(format!("{who}: {}", kinds.join(", ")));
        }
    }
    None
}

/// For a loop device: the identity (st_dev, st_ino) and path of its backing file.
fn loop_backing(sysfs: &Path) -> Option<(PathBuf, Option<(u64, u64)>)> {
    let text = std::fs::read_to_string(sysfs.join("loop/backing_file")).ok()?;
    let path = PathBuf::from(text.trim().trim_end_matches(" (deleted)"));
    let id = std::fs::metadata(&path).ok().map(|m| (m.dev(), m.ino()));
    Some((path, id))
}

/// The checks for a device that is listed and a block device.
fn check_unused(dev: &BlockDev) -> Result<(), String> {
    let mount_table = all_mounts();
    let fam = family(dev);
    let devnos: Vec<DevNo> = fam.iter().map(|f| f.1).collect();
    let root = root_devices(&mount_table);
    if devnos.iter().any(|d| root.contains(d)) {
        return Err("it holds the root filesystem (/)".into());
    }
    if let Some(why) = in_use(&fam, &mount_table) {
        return Err(why);
    }
    // A loop device: the same backing file may be attached (and mounted) elsewhere, and
    // the backing file may itself be a block device.
    if let Some((backing, id)) = loop_backing(&dev.sysfs) {
        if let Some(bdev) = rdev_of(&backing.display().to_string()) {
            if root.contains(&bdev) {
                return Err(format!(
                    "it is a loop device on {}, which holds the root filesystem",
                    backing.display()
                ));
            }
            if let Ok(b) = identify(&backing) {
                if let Some(why) = in_use(&family(&b), &mount_table) {
                    return Err(format!(
                        "it is a loop device on {}, and of that device {why}",
                        backing.display()
                    ));
                }
            }
        }
        if let Ok(entries) = std::fs::read_dir("/sys/block") {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                if !name.starts_with("loop") || name == dev.name {
                    continue;
                }
                let Ok(sysfs) = std::fs::canonicalize(e.path()) else {
                    continue;
                };
                let Some((other_path, other_id)) = loop_backing(&sysfs) else {
                    continue;
                };
                let same = match (id, other_id) {
                    (Some(a), Some(b)) => a == b,
                    _ => other_path == backing,
                };
                if !same {
                    continue;
                }
                let Some(d) = std::fs::read_to_string(sysfs.join("dev"))
                    .ok()
                    .and_then(|t| parse_devno(&t))
                else {
                    continue;
                };
                let other = BlockDev {
                    path: PathBuf::from(format!("/dev/{name}")),
                    devno: d,
                    name: name.clone(),
                    sysfs,
                    size_bytes: 0,
                    diskseq: None,
                };
                if let Some(why) = in_use(&family(&other), &mount_table) {
                    return Err(format!(
                        "it is a loop device on {}, which is also attached as /dev/{name}, and {}",
                        backing.display(),
                        why.replacen("it ", "that ", 1)
                            .replacen("its ", "that device's ", 1)
                    ));
                }
            }
        }
    }
    // Last, ask the kernel: an exclusive open fails while anything claims the device
    // (a mount in another namespace, swap, md, dm, another exclusive opener).
    match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_EXCL.bits())
        .open(&dev.path)
    {
        Ok(_) => Ok(()),
        Err(e) if e.raw_os_error() == Some(nix::errno::Errno::EBUSY as i32) => Err(
            "the kernel refuses exclusive access to it (busy: mounted elsewhere, swap, or held by a driver)"
                .into(),
        ),
        Err(e) => Err(format!("cannot open it: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn config_lists_absolute_paths_and_refuses_anything_else() {
        let l = parse_config("scratch_devices: [/dev/sdb, /dev/disk/by-id/x]\n", "c.yaml").unwrap();
        assert_eq!(
            l.iter().map(|x| x.path.clone()).collect::<Vec<_>>(),
            [
                PathBuf::from("/dev/sdb"),
                PathBuf::from("/dev/disk/by-id/x")
            ]
        );
        assert_eq!(l[0].origin, "c.yaml");
        assert!(parse_config("", "c").unwrap().is_empty());
        assert!(parse_config("# nothing yet\n", "c").unwrap().is_empty());
        assert!(parse_config("scratch_devices: []\n", "c")
            .unwrap()
            .is_empty());
        let e = parse_config("scratch_device: [/dev/sdb]\n", "c").unwrap_err();
        assert!(e.contains("unknown field `scratch_device`"), "{e}");
        let e = parse_config("scratch_devices: [sdb]\n", "c").unwrap_err();
        assert!(e.contains("not an absolute path"), "{e}");
        let e = parse_config("scratch_devices: /dev/sdb\n", "c").unwrap_err();
        assert!(e.contains("expected `scratch_devices: [/dev/sdX"), "{e}");
        assert!(parse_config("scratch_devices: [/dev/sdb\n", "c").is_err());
    }

    #[test]
    fn env_list_is_colon_separated() {
        let l = parse_env_list("/dev/sdb::/dev/sdc: ").unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l[1].path, PathBuf::from("/dev/sdc"));
        assert_eq!(l[1].origin, ENV_LIST);
        assert!(parse_env_list("").unwrap().is_empty());
        assert!(parse_env_list("/dev/sdb:sdc").is_err());
    }

    #[test]
    fn config_path_prefers_explicit_then_xdg_then_home() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(a, _)| *a == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let all = env(&[
            ("FSLAB_CONFIG", "/etc/x.yaml"),
            ("XDG_CONFIG_HOME", "/x"),
            ("HOME", "/home/u"),
        ]);
        assert_eq!(
            config_path(&all),
            Some((PathBuf::from("/etc/x.yaml"), true))
        );
        let xdg = env(&[("XDG_CONFIG_HOME", "/x"), ("HOME", "/home/u")]);
        assert_eq!(
            config_path(&xdg),
            Some((PathBuf::from("/x/fslab/config.yaml"), false))
        );
        // A relative XDG_CONFIG_HOME is ignored, as the spec says.
        let rel = env(&[("XDG_CONFIG_HOME", "x"), ("HOME", "/home/u")]);
        assert_eq!(
            config_path(&rel),
            Some((PathBuf::from("/home/u/.config/fslab/config.yaml"), false))
        );
        assert_eq!(config_path(&env(&[("FSLAB_CONFIG", "")])), None);
    }

    fn fake_fs() -> impl Fn(&Path) -> Option<PathBuf> {
        let links: HashMap<&str, &str> = [
            ("/dev/sdb", "/dev/sdb"),
            ("/dev/sdc", "/dev/sdc"),
            ("/dev/disk/by-id/usb-x", "/dev/sdb"),
            ("/dev/disk/by-id/usb-y", "/dev/sdb"),
            ("/tmp/evil", "/dev/sda"),
            ("/dev/sda", "/dev/sda"),
        ]
        .into_iter()
        .collect();
        move |p: &Path| links.get(p.to_str()?).map(PathBuf::from)
    }

    #[test]
    fn matching_resolves_both_sides() {
        let canon = fake_fs();
        let list = ScratchList::from_paths(&[Path::new("/dev/disk/by-id/usb-x")]);
        // A listed symlink matches its target, and another name of the same node.
        assert_eq!(
            match_listed(Path::new("/dev/sdb"), &list, &canon),
            Ok(PathBuf::from("/dev/sdb"))
        );
        assert_eq!(
            match_listed(Path::new("/dev/disk/by-id/usb-y"), &list, &canon),
            Ok(PathBuf::from("/dev/sdb"))
        );
        // A different device is refused, naming what is listed.
        let e = match_listed(Path::new("/dev/sdc"), &list, &canon).unwrap_err();
        assert!(e.contains("not a listed scratch device"), "{e}");
        assert!(e.contains("/dev/disk/by-id/usb-x (→ /dev/sdb)"), "{e}");
        // A symlink to an unlisted device names where it leads.
        let list = ScratchList::from_paths(&[Path::new("/dev/sdb")]);
        let e = match_listed(Path::new("/tmp/evil"), &list, &canon).unwrap_err();
        assert!(e.contains("resolves through symlinks to /dev/sda"), "{e}");
        // Missing paths and empty lists.
        let e = match_listed(Path::new("/dev/sdz"), &list, &canon).unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
        let e = match_listed(Path::new("/dev/sdb"), &ScratchList::default(), &canon).unwrap_err();
        assert!(e.contains("no scratch devices are listed"), "{e}");
        // A listed entry that does not exist matches nothing.
        let list = ScratchList::from_paths(&[Path::new("/dev/gone")]);
        let e = match_listed(Path::new("/dev/sdb"), &list, &canon).unwrap_err();
        assert!(e.contains("/dev/gone (missing)"), "{e}");
    }

    #[test]
    fn a_mapped_device_must_hold_what_the_experiment_declares() {
        let m = MappedDevice {
            name: "data".into(),
            given: "/dev/sdb".into(),
            device: "/dev/sdb".into(),
            devno: (8, 16),
            size_bytes: 1 << 30,
            listed: "/dev/sdb".into(),
            diskseq: None,
        };
        assert!(check_size(&m, 1 << 30).is_ok());
        let e = check_size(&m, 2 << 30).unwrap_err();
        assert!(e.contains("holds 1.0 GiB") && e.contains("`data`"), "{e}");
        let empty = MappedDevice { size_bytes: 0, ..m };
        assert!(check_size(&empty, 0).unwrap_err().contains("no capacity"));
    }

    #[test]
    fn a_config_others_can_write_is_not_trusted() {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::set_permissions(f.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(check_config_permissions(f.path()).is_ok());
        std::fs::set_permissions(f.path(), std::fs::Permissions::from_mode(0o666)).unwrap();
        let e = check_config_permissions(f.path()).unwrap_err().to_string();
        assert!(e.contains("writable by group or others (mode 666)"), "{e}");
    }

    #[test]
    fn mappings_parse() {
        assert_eq!(
            parse_mapping("data=/dev/sdb").unwrap(),
            ("data".to_string(), PathBuf::from("/dev/sdb"))
        );
        assert!(parse_mapping("data").is_err());
        assert!(parse_mapping("=/dev/sdb").is_err());
        assert!(parse_mapping("data=sdb").is_err());
        assert!(parse_mapping("da ta=/dev/sdb").is_err());
    }

    #[test]
    fn regular_files_and_char_devices_are_not_block_devices() {
        let e = identify(Path::new("/dev/null")).unwrap_err();
        assert!(e.contains("not a block device (a character device)"), "{e}");
        let f = tempfile::NamedTempFile::new().unwrap();
        let e = identify(f.path()).unwrap_err();
        assert!(e.contains("a regular file"), "{e}");
    }
}
