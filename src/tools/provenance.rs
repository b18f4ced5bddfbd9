//! `provenance.json`: where a provisioned tool came from and how it was built.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// The file name next to an installed tool's programs.
pub const FILE: &str = "provenance.json";

/// What a tool was built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// A Debian source package (`.dsc`, `.orig.tar.*`, `.debian.tar.*`) of a newer suite.
    DebianSource,
    /// An upstream release tarball given with `--tarball FILE --sha256 HEX`.
    Tarball,
    /// A git checkout given with `--git URL --ref TAG`.
    Git,
}

/// One input of the build and its sha256.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Input {
    /// The file name (or the git URL for a checkout).
    pub name: String,
    /// sha256 of the file (for a git checkout: the commit id it resolved to).
    pub sha256: String,
    pub bytes: u64,
}

/// Where a provisioned tool came from and how it was built.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The tool (`xfsprogs`).
    pub name: String,
    /// Its upstream version (`6.13.0`).
    pub version: String,
    pub source: SourceKind,
    /// `Debian source package xfsprogs 6.13.0-2+deb13u1 (trixie)`, the tarball's path,
    /// or `URL at REF (commit)`.
    pub origin: String,
    /// The Debian package version, for a Debian source package.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debian_version: Option<String>,
    /// The apt source line used (for a Debian source package).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apt_source: Option<String>,
    /// Every input file and its sha256.
    pub inputs: Vec<Input>,
    /// Patches applied (Debian's `debian/patches/series`, in order).
    #[serde(default)]
    pub patches: Vec<String>,
    /// The build commands, in order, as run.
    pub build_commands: Vec<String>,
    /// `gcc (Debian 12.2.0-14) 12.2.0`.
    pub compiler: String,
    /// The build dependencies that fslab installed with apt-get (those that were missing).
    #[serde(default)]
    pub build_dependencies: Vec<String>,
    /// Every build dependency with the version installed when it was built
    /// (`libinih-dev 55-1`).
    #[serde(default)]
    pub build_dependency_versions: Vec<String>,
    /// The directory the tool was built for and installed into.
    pub prefix: String,
    /// `uname -r` and the distribution of the build machine.
    pub built_on: String,
    pub built_at: String,
    /// The build log (relative to the install directory).
    pub log: String,
}

impl Provenance {
    /// Read `<dir>/provenance.json`.
    pub fn read(dir: &Path) -> std::io::Result<Provenance> {
        read_record(&dir.join(FILE))
    }

    /// Write `<dir>/provenance.json`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        write_record(&dir.join(FILE), self)
    }

    /// A few words on the source: `Debian source package xfsprogs 6.13.0-2+deb13u1 (trixie)`.
    pub fn source_line(&self) -> String {
        self.origin.clone()
    }
}

/// Read a provenance record (JSON); a record that does not parse is `InvalidData`.
pub(crate) fn read_record<T: serde::de::DeserializeOwned>(path: &Path) -> std::io::Result<T> {
    let text = std::fs::read_to_string(path)?;
    serde_json::from_str(&text).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// Write a provenance record as pretty JSON with a final newline.
pub(crate) fn write_record<T: Serialize>(path: &Path, record: &T) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(record).map_err(std::io::Error::other)?;
    std::fs::write(path, text + "\n")
}
