//! The filesystems a draft can make (`mkfs.NAME`), and the name a word of a post gives
//! one (`/xfs`, `/mnt/ext4/t`, `mkfs.btrfs`, `-t f2fs`): shared by the rules that find a
//! filesystem axis (`grid`, a post's labelled rows) and by the devices they declare
//! (`host_paths::per_filesystem`).

/// Filesystems a post may name, most specific first (`ext4` before `ext3`).
pub(super) const FILESYSTEMS: &[&str] =
    &["ext4", "ext3", "ext2", "xfs", "btrfs", "f2fs", "bcachefs"];

/// Whether `w` is the name of a filesystem a draft can make.
pub(super) fn is_filesystem(w: &str) -> bool {
    FILESYSTEMS.contains(&w)
}

/// The filesystem a word names as one of its parts (`/xfs`, `/mnt/ext4/t`, `mkfs.xfs`,
/// `type=btrfs`): the only one it names, else none.
pub(super) fn named_in(word: &str) -> Option<&'static str> {
    let mut found: Option<&'static str> = None;
    for part in word.split(|c: char| !c.is_ascii_alphanumeric()) {
        if let Some(fs) = FILESYSTEMS.iter().copied().find(|f| *f == part) {
            if found.is_some_and(|f| f != fs) {
                return None;
            }
            found = Some(fs);
        }
    }
    found
}

/// The command that makes `fs` on `dev` without asking (`-F` for the ext family, `-f`
/// for the others).
pub(super) fn mkfs_command(fs: &str, dev: &str) -> String {
    let force = if fs.starts_with("ext") { "-F" } else { "-f" };
    format!("mkfs.{fs} {force} {dev}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filesystem_a_word_names() {
        assert_eq!(named_in("/xfs"), Some("xfs"));
        assert_eq!(named_in("/mnt/ext4/t"), Some("ext4"));
        assert_eq!(named_in("mkfs.btrfs"), Some("btrfs"));
        assert_eq!(named_in("/mnt/ext4fs"), None);
        assert_eq!(named_in("/mnt/xfs-vs-ext4"), None);
        assert_eq!(named_in("32"), None);
        assert_eq!(
            mkfs_command("ext4", "{{dev.ext4}}"),
            "mkfs.ext4 -F {{dev.ext4}}"
        );
        assert_eq!(
            mkfs_command("xfs", "{{dev.xfs}}"),
            "mkfs.xfs -f {{dev.xfs}}"
        );
    }
}
