//! Block maps of an *unmounted* ext2/3/4 image through ONE `debugfs` process.
//!
//! [`Session`] runs `debugfs -f - IMAGE` (read-only) and feeds it commands on stdin.
//! Before each command it writes a comment `# fslab <n>`, which debugfs echoes verbatim on
//! stdout, so the output splits per command without guessing; a batch ends with
//! `# fslab-end <n>`, so batches can follow one another in the same process (a tree is
//! listed level by level with `ls -p`, then every inode is `stat`ed, all in one process).
//! The text of each `stat` goes through the pure parser [`crate::parse::debugfs`] with the
//! block size read from the image's superblock.
//!
//! Paths given by the caller are resolved by debugfs (`stat "PATH"`, relative to the
//! image root). Paths with `"` or a newline cannot be quoted for debugfs and are reported
//! as errors. Tree walks `stat` by inode number (`stat <12>`), so any name works there.

use super::walk::{PathError, Unmapped};
use super::{BlockmapError, Extent, FileEntry};
use crate::parse::debugfs::{parse_stat_report, InodeStat};
use crate::parse::Warning;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};

/// The block map of (part of) an image.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImageMap {
    pub block_size: u64,
    pub files: Vec<FileEntry>,
    pub inodes: Vec<InodeStat>,
    pub extents: Vec<Extent>,
    pub errors: Vec<PathError>,
    /// Parser warnings (lines of debugfs output it did not understand).
    pub warnings: Vec<Warning>,
}

/// The filesystem block size from an ext2/3/4 superblock (1024 bytes into the image).
pub fn image_block_size(image: &Path) -> Result<u64, BlockmapError> {
    let io = |source| BlockmapError::Io {
        path: image.to_path_buf(),
        source,
    };
    let mut f = std::fs::File::open(image).map_err(io)?;
    let mut sb = [0u8; 2048];
    f.read_exact(&mut sb).map_err(io)?;
    let sb = &sb[1024..];
    let magic = u16::from_le_bytes([sb[0x38], sb[0x39]]);
    if magic != 0xEF53 {
        return Err(BlockmapError::NotExt {
            image: image.to_path_buf(),
            reason: format!("superblock magic {magic:#06x}, want 0xef53"),
        });
    }
    let log = u32::from_le_bytes([sb[24], sb[25], sb[26], sb[27]]);
    if log > 6 {
        return Err(BlockmapError::NotExt {
            image: image.to_path_buf(),
            reason: format!("s_log_block_size {log}"),
        });
    }
    Ok(1024u64 << log)
}

/// A running `debugfs -f - IMAGE`.
pub struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<Vec<String>>>,
    seq: u64,
    image: PathBuf,
}

impl Session {
    /// Start debugfs (from `PATH`) on `image`, read-only.
    pub fn open(image: &Path) -> Result<Session, BlockmapError> {
        Session::open_with(Path::new("debugfs"), image)
    }

    /// Start the given debugfs binary on `image`, read-only.
    pub fn open_with(debugfs: &Path, image: &Path) -> Result<Session, BlockmapError> {
        let mut child = Command::new(debugfs)
            .arg("-f")
            .arg("-")
            .arg(image)
            .env("DEBUGFS_PAGER", "__none__")
            .env("PAGER", "__none__")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| BlockmapError::Io {
                path: debugfs.to_path_buf(),
                source,
            })?;
        let stdin = child.stdin.take();
        let (tx, rx) = mpsc::channel();
        if let Some(out) = child.stdout.take() {
            std::thread::spawn(move || {
                let mut r = BufReader::with_capacity(1 << 16, out);
                let mut buf = Vec::new();
                loop {
                    buf.clear();
                    match r.read_until(b'\n', &mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            let line = String::from_utf8_lossy(&buf);
                            let line = line.trim_end_matches('\n').to_string();
                            if tx.send(line).is_err() {
                                break;
                            }
                        }
                    }
                }
            });
        }
        let stderr = Arc::new(Mutex::new(Vec::new()));
        if let Some(err) = child.stderr.take() {
            let sink = Arc::clone(&stderr);
            std::thread::spawn(move || {
                for line in BufReader::new(err).lines().map_while(Result::ok) {
                    if let Ok(mut v) = sink.lock() {
                        v.push(line);
                    }
                }
            });
        }
        Ok(Session {
            child,
            stdin,
            lines: rx,
            stderr,
            seq: 0,
            image: image.to_path_buf(),
        })
    }

    /// What debugfs has printed on stderr so far (its error messages).
    pub fn stderr(&self) -> Vec<String> {
        self.stderr.lock().map(|v| v.clone()).unwrap_or_default()
    }

    fn died(&mut self, what: &str) -> BlockmapError {
        // Give the stderr reader a moment to collect the last words.
        let status = self.child.wait().ok();
        std::thread::sleep(std::time::Duration::from_millis(50));
        BlockmapError::Debugfs {
            image: self.image.clone(),
            message: format!(
                "{what} (exit {}): {}",
                status.map_or("?".into(), |s| s.to_string()),
                self.stderr().join(" | ")
            ),
        }
    }

    /// Run `commands` (one line each) and return the stdout text of each.
    pub fn run(&mut self, commands: &[String]) -> Result<Vec<String>, BlockmapError> {
        let first = self.seq;
        let end = first + commands.len() as u64;
        let mut script = String::new();
        for (i, c) in commands.iter().enumerate() {
            if c.contains('\n') {
                return Err(BlockmapError::Debugfs {
                    image: self.image.clone(),
                    message: format!("command with a newline: {c:?}"),
                });
            }
            script.push_str(&format!("# fslab {}\n{c}\n", first + i as u64));
        }
        script.push_str(&format!("# fslab-end {end}\n"));
        self.seq = end + 1;
        // The reader thread drains stdout meanwhile, so a large batch cannot deadlock.
        let write = match self.stdin.as_mut() {
            Some(w) => w.write_all(script.as_bytes()).and_then(|_| w.flush()),
            None => Err(std::io::Error::other("stdin closed")),
        };
        if write.is_err() {
            return Err(self.died("debugfs stopped reading commands"));
        }
        let mut outputs = vec![String::new(); commands.len()];
        let mut current: Option<usize> = None;
        let end_marker = format!("# fslab-end {end}");
        loop {
            let Ok(line) = self.lines.recv() else {
                return Err(self.died("debugfs exited before finishing its commands"));
            };
            if line == end_marker {
                break;
            }
            if let Some(n) = line
                .strip_prefix("# fslab ")
                .and_then(|n| n.parse::<u64>().ok())
            {
                if (first..end).contains(&n) {
                    current = Some((n - first) as usize);
                    continue;
                }
            }
            if let Some(i) = current {
                outputs[i].push_str(&line);
                outputs[i].push('\n');
            }
        }
        Ok(outputs)
    }

    /// Close stdin and wait for debugfs.
    pub fn close(mut self) -> Result<(), BlockmapError> {
        self.stdin.take();
        let status = self.child.wait().map_err(|source| BlockmapError::Io {
            path: self.image.clone(),
            source,
        })?;
        // debugfs counts failed commands in its exit status; those are reported per path.
        let _ = status;
        Ok(())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stdin.take();
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Quote a path for a debugfs command, or say why it cannot be.
fn quote(path: &str) -> Option<String> {
    if path.contains('"') || path.contains('\n') || path.contains('\r') {
        return None;
    }
    let abs = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    };
    Some(format!("\"{abs}\""))
}

/// `stat` every target (`(shown path, debugfs argument)`) in one batch and parse.
fn stat_all(
    session: &mut Session,
    block_size: u64,
    targets: &[(String, String)],
    map: &mut ImageMap,
) -> Result<(), BlockmapError> {
    let commands: Vec<String> = targets
        .iter()
        .map(|(_, arg)| format!("stat {arg}"))
        .collect();
    let before = session.stderr().len();
    let outputs = session.run(&commands)?;
    for ((path, _), text) in targets.iter().zip(outputs) {
        match parse_stat_report(&text, Some(block_size)) {
            Ok(mut r) if !r.inodes.is_empty() => {
                for s in &mut r.inodes {
                    s.path = path.clone();
                    map.files.push(FileEntry {
                        path: path.clone(),
                        inode: s.inode,
                        size_bytes: s.size_bytes,
                        is_dir: s.file_type.as_deref() == Some("directory"),
                    });
                }
                let shared: std::sync::Arc<str> = path.as_str().into();
                for e in &mut r.extents {
                    e.path = std::sync::Arc::clone(&shared);
                }
                map.inodes.extend(r.inodes);
                map.extents.extend(r.extents);
                map.warnings.extend(r.warnings.into_iter().filter(|w| {
                    // The echo carries our quoted argument; its path is already known.
                    !w.reason.starts_with("no stat output")
                }));
            }
            _ => map.errors.push(PathError {
                path: path.clone(),
                error: "debugfs printed no inode (see stderr)".into(),
                why: Unmapped::Failed,
            }),
        }
    }
    let errs = session.stderr();
    if errs.len() > before {
        // Attach debugfs's own messages to the first paths without output.
        let msgs: Vec<&String> = errs[before..]
            .iter()
            .filter(|l| !l.starts_with("debugfs "))
            .collect();
        let mut it = msgs.into_iter();
        for e in map
            .errors
            .iter_mut()
            .filter(|e| e.error.starts_with("debugfs printed no inode"))
        {
            if let Some(m) = it.next() {
                e.error = m.clone();
            }
        }
    }
    Ok(())
}

/// The block maps of the given paths inside `image`, in one debugfs process.
pub fn map_image_paths(image: &Path, paths: &[String]) -> Result<ImageMap, BlockmapError> {
    let block_size = image_block_size(image)?;
    let mut map = ImageMap {
        block_size,
        ..Default::default()
    };
    let mut targets = Vec::new();
    for p in paths {
        match quote(p) {
            Some(q) => targets.push((p.clone(), q)),
            None => map.errors.push(PathError {
                path: p.clone(),
                error: "cannot pass a path with `\"` or a newline to debugfs".into(),
                why: Unmapped::Failed,
            }),
        }
    }
    let mut session = Session::open(image)?;
    stat_all(&mut session, block_size, &targets, &mut map)?;
    session.close()?;
    Ok(map)
}

/// One `ls -p` line: `/ino/mode/uid/gid/name/size/` (directories: `/ino/mode/uid/gid/name//`).
fn parse_ls_line(line: &str) -> Option<(u64, u32, String)> {
    let rest = line.strip_prefix('/')?;
    let mut it = rest.splitn(5, '/');
    let ino: u64 = it.next()?.parse().ok()?;
    let mode = u32::from_str_radix(it.next()?, 8).ok()?;
    let _uid = it.next()?;
    let _gid = it.next()?;
    let tail = it.next()?;
    // tail = "name/size/" or "name//"; names cannot contain '/'.
    let (name, _) = tail.split_once('/')?;
    Some((ino, mode, unescape(name)))
}

/// debugfs prints bytes outside 32..127 and `\` as `\xNN`.
fn unescape(name: &str) -> String {
    let b = name.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 4 <= b.len() && b[i + 1] == b'x' {
            let hex = std::str::from_utf8(&b[i + 2..i + 4]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

const S_IFMT: u32 = 0o170000;
const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;

/// The block maps of every regular file and directory under each of `roots` (paths inside
/// the image, e.g. `/`): `ls -p` level by level, then `stat` of every inode, all in one
/// debugfs process. Paths are shown from the image root (`/dir/file`); rows come in the
/// order [`super::walk::map_tree`] gives for the mounted tree (depth first, siblings by
/// name).
pub fn map_image_tree(image: &Path, roots: &[&str]) -> Result<ImageMap, BlockmapError> {
    let block_size = image_block_size(image)?;
    let mut map = ImageMap {
        block_size,
        ..Default::default()
    };
    let mut level: Vec<(PathBuf, String)> = Vec::new();
    for root in roots {
        let shown = if root.starts_with('/') {
            root.to_string()
        } else {
            format!("/{root}")
        };
        match quote(root) {
            Some(q) => level.push((PathBuf::from(shown), q)),
            None => map.errors.push(PathError {
                path: root.to_string(),
                error: "cannot pass a path with `\"` or a newline to debugfs".into(),
                why: Unmapped::Failed,
            }),
        }
    }
    let mut session = Session::open(image)?;
    // (shown path, debugfs argument)
    let mut found: Vec<(PathBuf, String)> = level.clone();
    while !level.is_empty() {
        let commands: Vec<String> = level.iter().map(|(_, a)| format!("ls -p {a}")).collect();
        let outputs = session.run(&commands)?;
        let mut next = Vec::new();
        for ((dir, _), text) in level.iter().zip(outputs) {
            for line in text.lines() {
                let Some((ino, mode, name)) = parse_ls_line(line) else {
                    continue;
                };
                if ino == 0 || name == "." || name == ".." {
                    continue;
                }
                let kind = mode & S_IFMT;
                if kind != S_IFDIR && kind != S_IFREG {
                    continue;
                }
                let path = dir.join(&name);
                let arg = format!("<{ino}>");
                found.push((path.clone(), arg.clone()));
                if kind == S_IFDIR {
                    next.push((path, arg));
                }
            }
        }
        level = next;
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found.dedup_by(|a, b| a.0 == b.0);
    let targets: Vec<(String, String)> = found
        .into_iter()
        .map(|(p, a)| (p.to_string_lossy().into_owned(), a))
        .collect();
    stat_all(&mut session, block_size, &targets, &mut map)?;
    session.close()?;
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ls_lines() {
        assert_eq!(
            parse_ls_line("/12/100644/0/0/small.txt/12/"),
            Some((12, 0o100644, "small.txt".into()))
        );
        assert_eq!(
            parse_ls_line("/8193/040755/0/0/dir//"),
            Some((8193, 0o40755, "dir".into()))
        );
        assert_eq!(
            parse_ls_line("/13/100644/0/0/a\\x5cb\\x0a/0/"),
            Some((13, 0o100644, "a\\b\n".into()))
        );
        assert_eq!(parse_ls_line(""), None);
    }

    #[test]
    fn quoting() {
        assert_eq!(quote("a b"), Some("\"/a b\"".into()));
        assert_eq!(quote("/x"), Some("\"/x\"".into()));
        assert_eq!(quote("a\"b"), None);
    }
}
