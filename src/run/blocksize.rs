//! The block size of a point's filesystem for block-map captures that print block
//! numbers without it (debugfs): taken from the point's geometry captures (dumpe2fs,
//! mke2fs, xfs_info, mkfs.xfs), never assumed.

/// Block sizes the point's geometry captures gave, with the words of their commands.
#[derive(Debug, Default)]
pub struct Known {
    seen: Vec<(Vec<String>, u64)>,
}

impl Known {
    pub fn add(&mut self, words: Vec<String>, block_size: u64) {
        self.seen.push((words, block_size));
    }

    /// The block size for a capture whose command has `words`: the latest geometry
    /// capture naming the same device or mount point (a word of one is a word of the
    /// other or a path under it); else the point's only block size, when all geometry
    /// captures agree. None when there is none, or several that disagree.
    pub fn for_command(&self, words: &[String]) -> Option<u64> {
        let targets = |ws: &[String]| -> Vec<String> {
            ws.iter().filter(|w| w.starts_with('/')).cloned().collect()
        };
        let mine = targets(words);
        let under =
            |a: &str, b: &str| a == b || a.strip_prefix(b).is_some_and(|r| r.starts_with('/'));
        for (ws, bs) in self.seen.iter().rev() {
            let theirs = targets(ws);
            if mine.iter().any(|m| theirs.iter().any(|t| under(m, t))) {
                return Some(*bs);
            }
        }
        let first = self.seen.first()?.1;
        self.seen
            .iter()
            .all(|(_, bs)| *bs == first)
            .then_some(first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn same_device_or_mount_first_then_the_only_one() {
        let mut k = Known::default();
        assert_eq!(k.for_command(&w("debugfs -R stat /dev/loop3")), None);
        k.add(w("dumpe2fs -h /dev/loop3"), 1024);
        assert_eq!(k.for_command(&w("filefrag -v /p/mnt/f")), Some(1024));
        k.add(w("xfs_info /p/mnt2"), 4096);
        assert_eq!(
            k.for_command(&w("debugfs -R stat_/f /dev/loop3")),
            Some(1024)
        );
        assert_eq!(k.for_command(&w("xfs_bmap -v /p/mnt2/f")), Some(4096));
        // Two sizes and nothing names either device: unknown.
        assert_eq!(k.for_command(&w("debugfs -R ex /dev/loop9")), None);
    }
}
