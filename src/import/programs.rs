//! The programs a post runs, as the draft sees them: file systems' `mkfs.*`, `mount`, the
//! benchmarks (`fsstress`, `fs_mark`, `fio`, `bonnie++`), the tools whose output fslab
//! parses, plain shell utilities, scripts, and anything else (a `tools:` entry).

/// What a program is, for the draft. Anything not listed is [`Program::Other`] and
/// becomes a `tools:` entry of the draft.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// `mkfs.xfs`, `mkfs.ext4`, `mke2fs` (fs `ext2`), …
    Mkfs(String),
    Mount,
    Umount,
    Mkdir,
    Sync,
    Dd,
    Fsstress,
    FsMark,
    Fio,
    XfsIo,
    Bonnie,
    /// `fsck`, `fsck.ext4`, `e2fsck`, `xfs_repair`.
    Fsck,
    Debugfs,
    Filefrag,
    XfsBmap,
    XfsInfo,
    Dumpe2fs,
    /// Plain shell utilities (`rm`, `cp`, `echo`, `cat`, `df`, …).
    Util,
    /// A script file run from the prompt (`./dumb.sh 0`, `sh test.sh`).
    Script(String),
    /// Anything else: kept, and made a `tools:` entry.
    Other(String),
}

const UTILS: &[&str] = &[
    "rm",
    "cp",
    "mv",
    "echo",
    "cat",
    "df",
    "du",
    "ls",
    "touch",
    "tar",
    "sleep",
    "rmdir",
    "ln",
    "truncate",
    "fallocate",
    "fstrim",
    "blockdev",
    "losetup",
    "modprobe",
    "sysctl",
    "tee",
    "find",
    "chmod",
    "chown",
    "stat",
    "mkswap",
    "wipefs",
    "cd",
    "export",
    "true",
    "uname",
];

impl Program {
    pub fn of(word: &str) -> Program {
        let base = word.rsplit('/').next().unwrap_or(word);
        if let Some(fs) = base.strip_prefix("mkfs.") {
            return Program::Mkfs(fs.to_string());
        }
        match base {
            "mkfs" => Program::Mkfs(String::new()),
            "mke2fs" => Program::Mkfs("ext2".into()),
            "mount" => Program::Mount,
            "umount" => Program::Umount,
            "mkdir" => Program::Mkdir,
            "sync" => Program::Sync,
            "dd" => Program::Dd,
            "fsstress" => Program::Fsstress,
            "fs_mark" | "fsmark" => Program::FsMark,
            "fio" => Program::Fio,
            "xfs_io" => Program::XfsIo,
            "bonnie++" | "bonnie" => Program::Bonnie,
            "fsck" | "e2fsck" | "xfs_repair" => Program::Fsck,
            b if b.starts_with("fsck.") => Program::Fsck,
            "debugfs" => Program::Debugfs,
            "filefrag" => Program::Filefrag,
            "xfs_bmap" => Program::XfsBmap,
            "xfs_info" | "xfs_growfs" => Program::XfsInfo,
            "dumpe2fs" | "tune2fs" => Program::Dumpe2fs,
            b if UTILS.contains(&b) => Program::Util,
            b if (word.starts_with("./") || word.ends_with(".sh")) && !b.is_empty() => {
                Program::Script(b.to_string())
            }
            b => Program::Other(b.to_string()),
        }
    }

    /// Known to the importer (not [`Program::Other`]).
    pub fn is_known(&self) -> bool {
        !matches!(self, Program::Other(_))
    }

    /// A program that prepares or tidies (mkfs, mount, umount, mkdir, sync, a utility):
    /// never the workload unless the post times it.
    pub fn is_setup(&self) -> bool {
        matches!(
            self,
            Program::Mkfs(_)
                | Program::Mount
                | Program::Umount
                | Program::Mkdir
                | Program::Sync
                | Program::Util
        )
    }

    /// A benchmark or workload program (what a post times).
    pub fn is_benchmark(&self) -> bool {
        matches!(
            self,
            Program::Fsstress | Program::FsMark | Program::Fio | Program::Bonnie
        )
    }
}

/// What the last positional argument of a benchmark is, for naming an axis over it
/// (`dbench … 32`: the number of clients, dbench(1)'s `numclients`).
pub(super) fn last_positional(program: &str) -> Option<&'static str> {
    match program.rsplit('/').next()? {
        "dbench" | "tbench" => Some("clients"),
        _ => None,
    }
}

/// Programs recognised at the start of a bare line or inside a sentence, besides the
/// [`Program`] kinds.
pub(super) const OTHER_WORKLOADS: &[&str] = &[
    "dbench",
    "iozone",
    "pgbench",
    "postmark",
    "filebench",
    "sysbench",
    "stress-ng",
    "xfs_repair",
    "xfs_db",
    "seekwatcher",
    "blktrace",
    "perf",
    "git",
    "make",
];
