//! File primitives: atomic writes, parquet files, the writer's lock on a bundle.

use super::{io, StoreError};
use polars::prelude::{DataFrame, ParquetReader, ParquetWriter, SerReader};
use std::io::Write;
use std::path::Path;

/// Write `bytes` to `path` atomically: a temporary file in the same directory, fsync,
/// rename over the target, fsync the directory.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
        // No half-written file stays behind (a full filesystem, say).
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
