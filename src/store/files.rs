//! File primitives: atomic writes, parquet files, the writer's lock on a bundle.

use super::{io, StoreError};
use polars::prelude::{DataFrame, ParquetReader, ParquetWriter, SerReader};
use std::io::Write;
use std::path::Path;

/// Write `bytes` to `path` atomically: a temporary file in the same directory, fsync,
/// rename over the target, fsync the directory.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace(path, |tmp| {
        let mut f = std::fs::File::create(tmp)?;
        f.write_all(bytes)?;
        f.sync_all()
    })
}

/// Copy `source` to `path` atomically, as [`atomic_write`] writes (streamed: the file is
/// never read into memory).
pub fn atomic_copy(source: &Path, path: &Path) -> std::io::Result<()> {
    replace(path, |tmp| {
        std::fs::copy(source, tmp)?;
        std::fs::File::open(tmp)?.sync_all()
    })
}

/// Replace `path` by what `write` wrote and fsynced to a temporary file beside it
/// (`.NAME.tmp-PID`): rename it over `path`, fsync the directory. On an error no
/// temporary file stays behind (a full filesystem, say).
fn replace(path: &Path, write: impl FnOnce(&Path) -> std::io::Result<()>) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    if let Err(e) = write(&tmp).and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::File::open(dir)?.sync_all()
}

/// Write a DataFrame as parquet, atomically.
pub fn write_parquet(path: &Path, df: &DataFrame) -> Result<(), StoreError> {
    let mut buf = Vec::new();
    let mut df = df.clone();
    ParquetWriter::new(&mut buf)
        .finish(&mut df)
        .map_err(|source| StoreError::Polars {
            path: path.to_path_buf(),
            source,
        })?;
    atomic_write(path, &buf).map_err(io(path))
}

/// Read a parquet file into a DataFrame.
pub fn read_parquet(path: &Path) -> Result<DataFrame, StoreError> {
    let f = std::fs::File::open(path).map_err(io(path))?;
    ParquetReader::new(f)
        .finish()
        .map_err(|source| StoreError::Polars {
            path: path.to_path_buf(),
            source,
        })
}

/// Lock a bundle directory for writing, or say who holds it.
pub(super) fn lock_bundle(dir: &Path) -> Result<nix::fcntl::Flock<std::fs::File>, StoreError> {
    let f = std::fs::File::open(dir).map_err(io(dir))?;
    nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusiveNonblock).map_err(
        |(_, e)| match e {
            nix::errno::Errno::EWOULDBLOCK => StoreError::Locked {
                path: dir.to_path_buf(),
            },
            e => io(dir)(e.into()),
        },
    )
}
