//! A bundle's content hash: one sha256 that names what a bundle measured, so that a
//! reader of a reply (`fslab reply`) can check that the bundle they hold is the one the
//! numbers come from.
//!
//! The hashed files are `manifest.json`, `experiment.yaml`, `runs.jsonl` and every
//! top-level `*.parquet` (not `captures/`, `logs/`, notebooks, nor capture rows still in
//! `.parts/`). Their *listing* is one line per file, `<sha256 hex>  <name>\n` (two
//! spaces, as `sha256sum` prints it), sorted by name in byte order; the content hash is
//! the sha256 of that listing. In a shell, inside the bundle:
//!
//! ```text
//! sha256sum manifest.json experiment.yaml runs.jsonl *.parquet | LC_ALL=C sort -k2 | sha256sum
//! ```

use super::{parts, StoreError, EXPERIMENT_FILE, JOURNAL_FILE, MANIFEST_FILE};
use sha2::{Digest, Sha256};
use std::path::Path;

/// The files of a bundle hashed besides its `*.parquet`.
pub const HASHED_FILES: [&str; 3] = [MANIFEST_FILE, EXPERIMENT_FILE, JOURNAL_FILE];

/// The shell command that recomputes [`ContentHash::sha256`] inside a bundle directory.
pub const CONTENT_HASH_COMMAND: &str =
    "sha256sum manifest.json experiment.yaml runs.jsonl *.parquet | LC_ALL=C sort -k2 | sha256sum";

/// One hashed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashedFile {
    /// The file's name in the bundle directory.
    pub name: String,
    pub sha256: String,
}

/// A bundle's content hash and what it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentHash {
    /// sha256 (hex) of [`ContentHash::listing`].
    pub sha256: String,
    /// The hashed files, sorted by name (byte order).
    pub files: Vec<HashedFile>,
    /// Of [`HASHED_FILES`], those the bundle lacks (not in the listing).
    pub missing: Vec<&'static str>,
    /// Tables with capture rows still in `.parts/` (a run killed before it merged them):
    /// those rows are not covered.
    pub unmerged: Vec<String>,
}

impl ContentHash {
    /// The listing the hash is taken over: `<sha256>  <name>\n` per file, by name.
    pub fn listing(&self) -> String {
        self.files
            .iter()
            .map(|f| format!("{}  {}\n", f.sha256, f.name))
            .collect()
    }
}

/// The content hash of the bundle in `dir` (see the module docs).
pub fn content_hash(dir: &Path) -> Result<ContentHash, StoreError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| StoreError::Io { path, source }
    };
    let mut names: Vec<String> = Vec::new();
    let mut missing = Vec::new();
    for name in HASHED_FILES {
        if dir.join(name).is_file() {
            names.push(name.to_string());
        } else {
            missing.push(name);
        }
    }
    for e in std::fs::read_dir(dir).map_err(io(dir))? {
        let e = e.map_err(io(dir))?;
        let name = e.file_name().to_string_lossy().to_string();
        if name.ends_with(".parquet") && !name.starts_with('.') && e.path().is_file() {
            names.push(name);
        }
    }
    names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    let mut files = Vec::with_capacity(names.len());
    for name in names {
        let path = dir.join(&name);
        let (sha256, _) = crate::tools::build::sha256_file(&path).map_err(io(&path))?;
        files.push(HashedFile { name, sha256 });
    }
    let mut unmerged = Vec::new();
    for table in parts::tables(dir)? {
        let through = parts::through(&dir.join(format!("{table}.parquet")))?;
        if !parts::pending(dir, &table, through)?.is_empty() {
            unmerged.push(table);
        }
    }
    let mut h = ContentHash {
        sha256: String::new(),
        files,
        missing,
        unmerged,
    };
    h.sha256 = hex::encode(Sha256::digest(h.listing().as_bytes()));
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sha(bytes: &[u8]) -> String {
        hex::encode(Sha256::digest(bytes))
    }

    #[test]
    fn the_hash_is_over_the_sorted_listing_of_the_named_files() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("manifest.json"), b"{}").unwrap();
        std::fs::write(d.join("runs.parquet"), b"r").unwrap();
        std::fs::write(d.join("counters.parquet"), b"c").unwrap();
        std::fs::write(d.join("NOTES.md"), b"not hashed").unwrap();
        std::fs::create_dir(d.join("captures")).unwrap();
        let h = content_hash(d).unwrap();
        let names: Vec<&str> = h.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["counters.parquet", "manifest.json", "runs.parquet"]);
        assert_eq!(h.missing, [EXPERIMENT_FILE, JOURNAL_FILE]);
        let listing = format!(
            "{}  counters.parquet\n{}  manifest.json\n{}  runs.parquet\n",
            sha(b"c"),
            sha(b"{}"),
            sha(b"r")
        );
        assert_eq!(h.listing(), listing);
        assert_eq!(h.sha256, sha(listing.as_bytes()));
        // Any byte of a hashed file changes it; a file outside the listing does not.
        std::fs::write(d.join("NOTES.md"), b"changed").unwrap();
        assert_eq!(content_hash(d).unwrap().sha256, h.sha256);
        std::fs::write(d.join("runs.parquet"), b"R").unwrap();
        assert_ne!(content_hash(d).unwrap().sha256, h.sha256);
    }

    #[test]
    fn a_missing_directory_is_a_located_error() {
        let e = content_hash(Path::new("/nonexistent/fslab-bundle")).unwrap_err();
        assert!(
            e.to_string().starts_with("/nonexistent/fslab-bundle: "),
            "{e}"
        );
    }
}
