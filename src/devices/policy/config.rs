//! The scratch device list: where the user's local configuration lists the devices
//! fslab may format, and matching a mapped path against it. Pure but for reading the
//! config file and the environment.

use super::{Listed, Refusal, ScratchList, ENV_CONFIG, ENV_LIST};
use crate::devices::DeviceError;
use serde::Deserialize;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    scratch_devices: Vec<String>,
}

/// A scratch device list that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListError {
    #[error("{origin}: scratch device `{entry}` is not an absolute path; write e.g. `/dev/sdb` or `/dev/disk/by-id/...`")]
    NotAbsolute { origin: String, entry: String },
    #[error("{origin}: {message}")]
    Yaml { origin: String, message: String },
    #[error("{origin}: {message} (the only key fslab reads is `scratch_devices`)")]
    UnknownKey { origin: String, message: String },
    #[error("{origin}: {message}; expected `scratch_devices: [/dev/sdX, ...]`")]
    Shape { origin: String, message: String },
}

fn absolute_entry(entry: &str, origin: &str) -> Result<Listed, ListError> {
    let t = entry.trim();
    if !t.starts_with('/') {
        return Err(ListError::NotAbsolute {
            origin: origin.to_string(),
            entry: t.to_string(),
        });
    }
    Ok(Listed {
        path: PathBuf::from(t),
        origin: origin.to_string(),
    })
}

/// Parse a config file's text (`scratch_devices: [/dev/sdX, ...]`). An empty file lists
/// nothing.
pub fn parse_config(text: &str, origin: &str) -> Result<Vec<Listed>, ListError> {
    let value: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| ListError::Yaml {
        origin: origin.to_string(),
        message: e.to_string(),
    })?;
    if value.is_null() {
        return Ok(Vec::new());
    }
    let cfg: ConfigFile = serde_yaml::from_value(value).map_err(|e| {
        let origin = origin.to_string();
        let message = e.to_string();
        if message.contains("unknown field") {
            ListError::UnknownKey { origin, message }
        } else {
            ListError::Shape { origin, message }
        }
    })?;
    cfg.scratch_devices
        .iter()
        .map(|e| absolute_entry(e, origin))
        .collect()
}

/// Parse `$FSLAB_SCRATCH_DEVICES`: colon-separated absolute paths; empty parts are ignored.
pub fn parse_env_list(text: &str) -> Result<Vec<Listed>, ListError> {
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
                                message: m.to_string(),
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
                    message: m.to_string(),
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
pub(super) fn check_config_permissions(path: &Path) -> Result<(), DeviceError> {
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
) -> Result<PathBuf, Refusal> {
    let Some(target) = canon(given) else {
        return Err(Refusal::Missing);
    };
    if list
        .entries
        .iter()
        .any(|l| canon(&l.path).is_some_and(|c| c == target))
    {
        return Ok(target);
    }
    let consulted = list.consulted.clone();
    if list.entries.is_empty() {
        return Err(Refusal::NothingListed { consulted });
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
        Err(Refusal::ResolvesToUnlisted {
            target,
            listed,
            consulted,
        })
    } else {
        Err(Refusal::NotListed { listed, consulted })
    }
}
