//! `FSLAB_DATA_DIR` moves the published data; `load_from` reads an explicit path.
//! Alone in its own test binary: it sets a process-wide environment variable.

use fslab::published;

/// FSLAB_DATA_DIR points the loader elsewhere; load_from reads an explicit path.
#[test]
fn data_dir_override_and_explicit_path() {
    let default = published::published_dir();
    let file = default.join("003_xfs_rt_truncate.csv");
    let direct = published::load_from(&file).unwrap();
    assert_eq!(direct.shape(), published::load("003").unwrap().shape());

    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("published")).unwrap();
    std::fs::copy(&file, tmp.path().join("published/003_xfs_rt_truncate.csv")).unwrap();
    std::env::set_var(published::DATA_DIR_ENV, tmp.path());
    let from_override = published::load("xfs-rt-truncate");
    let missing = published::load("000");
    std::env::remove_var(published::DATA_DIR_ENV);
    assert_eq!(from_override.unwrap().shape(), direct.shape());
    assert!(matches!(missing, Err(published::PublishedError::Io { .. })));
}
