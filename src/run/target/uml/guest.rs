//! One User-Mode Linux guest, seen from the host: booted with the replicate's image
//! files as its ubd disks, the host's `/` as its read-only root (hostfs), the
//! replicate's directory writable at the same path, fslab's agent as its init, and
//! its kernel log in a file. It is always stopped: powered off when the replicate is
//! done, killed (its whole process group, and the point's cgroup it runs in) when it
//! does not answer, on Ctrl-C, on error, and when the [`Guest`] is dropped. A guest
//! whose fslab was SIGKILLed powers itself off when its channel closes; `fslab cleanup`
//! kills what is left through the point's cgroup (the ownership record names it).

use super::protocol::{line, Reply, Request};
use super::GuestError;
use crate::devices::PointCgroup;
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// From starting the kernel to the agent's first word (a boot takes 1.5–3 s here).
const BOOT_TIMEOUT: Duration = Duration::from_secs(90);
/// From `poweroff` to the kernel's exit.
const POWEROFF_TIMEOUT: Duration = Duration::from_secs(30);
/// After a cancel, how long the agent has to stop the command and answer.
const CANCEL_GRACE: Duration = Duration::from_secs(10);
/// A request without its own timeout (mount, sync, …) that takes longer than this
/// means a hung guest.
pub(super) const REQUEST_TIMEOUT: Duration = Duration::from_secs(600);
/// Beyond a command's own timeout (which the agent enforces), what the host waits.
const TIMEOUT_SLACK: Duration = Duration::from_secs(30);

/// How to boot a guest.
pub(super) struct Boot<'a> {
    /// The kernel program (`linux.uml`).
    pub(super) kernel: &'a Path,
    /// Environment for the kernel process only (a loader's library path).
    pub(super) kernel_env: &'a [(String, String)],
    pub(super) mem_bytes: u64,
    /// Image files, as ubd0, ubd1, …
    pub(super) disks: &'a [PathBuf],
    /// The replicate's directory: writable in the guest, at the same path.
    pub(super) dir: &'a Path,
    /// Where the guest's kernel log (its console) goes.
    pub(super) console: &'a Path,
    /// The fslab program the guest runs as its agent.
    pub(super) agent: &'a Path,
    /// Host directories the guest reads (the agent's, the provisioned tools'): shown
    /// read-only at their own paths where the guest's own tmpfs would hide them.
    pub(super) host_dirs: &'a [PathBuf],
    pub(super) cgroup: Option<&'a PointCgroup>,
}

/// A running guest.
pub(super) struct Guest {
    child: Child,
    to_guest: std::fs::File,
    lines: mpsc::Receiver<String>,
    console: PathBuf,
    /// The guest kernel's `uname -r`, from the agent.
    pub(super) release: String,
    /// How long the boot took, to the agent's first word.
    pub(super) boot: Duration,
    stopped: bool,
}

/// A word safe inside single quotes and a hostfs mount option.
fn plain_path(p: &Path) -> Result<String, GuestError> {
    let s = p.display().to_string();
    if s.contains(['\'', ',', '\n', ' ']) || !p.is_absolute() {
        return Err(GuestError::Path(p.to_path_buf()));
    }
    Ok(s)
}

/// The guest's own tmpfs mounts: they hide whatever the host has under them.
pub(super) const GUEST_TMPFS: [&str; 2] = ["/tmp", "/run"];

/// Whether the guest's own tmpfs hides `p` (a host path under `/tmp` or `/run`).
pub(super) fn hidden_in_guest(p: &Path) -> bool {
    GUEST_TMPFS.iter().any(|t| p.starts_with(t))
}

/// The guest's init: mount what the agent needs, then become the agent.
///
/// `/tmp` and `/run` are the guest's own tmpfs, so a host path under them is not seen
/// through the read-only root: each of `read_only` that is hidden is mounted back,
/// read-only, at its own path (parents first), and the replicate's directory `dir` is
/// mounted writable at its own path, its mount point made first (in the tmpfs when it
/// is hidden; on the host's root it exists).
fn init_script(dir: &str, agent: &str, read_only: &[String]) -> String {
    let mut shown: Vec<&String> = read_only
        .iter()
        .filter(|p| hidden_in_guest(Path::new(p)))
        .collect();
    shown.sort_by_key(|p| Path::new(p).components().count());
    shown.dedup();
    let mut host_dirs = String::new();
    for p in shown {
        host_dirs.push_str(&format!(
            "mkdir -p '{p}' && mount -r -t hostfs -o '{p}' hostfs '{p}'\n"
        ));
    }
    format!(
        "#!/bin/sh\n\
         # fslab: init of a User-Mode Linux guest (docs/kernels.md)\n\
         PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n\
         export PATH\n\
         mount -t proc proc /proc\n\
         mount -t sysfs sysfs /sys\n\
         mount -t tmpfs -o mode=1777 tmpfs /tmp\n\
         mount -t tmpfs -o mode=755 tmpfs /run\n\
         mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null\n\
         {host_dirs}\
         mkdir -p '{dir}'\n\
         if mount -t hostfs -o '{dir}' hostfs '{dir}'; then\n\
         \x20 exec '{agent}' guest-agent /dev/tty1\n\
         fi\n\
         echo 'fslab: the guest agent did not start'\n\
         echo o > /proc/sysrq-trigger\n"
    )
}

impl Guest {
    /// Boot a guest and wait for its agent.
    pub(super) fn boot(b: &Boot) -> Result<Guest, GuestError> {
        let dir = plain_path(b.dir)?;
        let agent = plain_path(b.agent)?;
        let read_only = b
            .host_dirs
            .iter()
            .filter(|p| hidden_in_guest(p))
            .map(|p| plain_path(p))
            .collect::<Result<Vec<_>, _>>()?;
        let init = b.dir.join("guest-init");
        {
            use std::os::unix::fs::OpenOptionsExt;
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .truncate(true)
                .write(true)
                .mode(0o755)
                .open(&init)
                .map_err(GuestError::io(format!("writing {}", init.display())))?;
            f.write_all(init_script(&dir, &agent, &read_only).as_bytes())
                .map_err(GuestError::io(format!("writing {}", init.display())))?;
        }
        let uml_dir = b.dir.join("uml");
        std::fs::create_dir_all(&uml_dir)
            .map_err(GuestError::io(format!("creating {}", uml_dir.display())))?;
        let mut args: Vec<String> = vec![
            format!("mem={}M", b.mem_bytes >> 20),
            "rootfstype=hostfs".into(),
            "rootflags=/".into(),
            "ro".into(),
            format!("init={}", plain_path(&init)?),
            // The guest's pid file and control socket live in the replicate's directory.
            format!("uml_dir={}", plain_path(&uml_dir)?),
            "umid=guest".into(),
            "con=null".into(),
            "con0=null,fd:1".into(),
            "con1=fd:3,fd:4".into(),
            "ssl=null".into(),
        ];
        for (n, d) in b.disks.iter().enumerate() {
            args.push(format!("ubd{n}={}", plain_path(d)?));
        }
        let console = std::fs::File::create(b.console)
            .map_err(GuestError::io(format!("creating {}", b.console.display())))?;
        let console_err = console
            .try_clone()
            .map_err(GuestError::io("the console log"))?;
        let pipe =
            || nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(std::io::Error::from);
        let (in_r, in_w): (OwnedFd, OwnedFd) = pipe().map_err(GuestError::io("a pipe"))?;
        let (out_r, out_w): (OwnedFd, OwnedFd) = pipe().map_err(GuestError::io("a pipe"))?;
        let (in_fd, out_fd) = (in_r.as_raw_fd(), out_w.as_raw_fd());
        let procs = b.cgroup.map(PointCgroup::procs_paths).unwrap_or_default();
        let mut cmd = Command::new(b.kernel);
        cmd.args(&args)
            .envs(b.kernel_env.iter().map(|(k, v)| (k, v)))
            .current_dir(b.dir)
            .stdin(Stdio::null())
            .stdout(console)
            .stderr(console_err);
        // SAFETY: the closure only calls dup2, fcntl and writes cgroup files (system
        // calls, async-signal-safe).
        unsafe {
            cmd.pre_exec(move || {
                crate::devices::cgroup::join_procs(&procs)?;
                for (from, to) in [(in_fd, 3), (out_fd, 4)] {
                    if from == to {
                        // dup2 onto itself keeps close-on-exec: clear it.
                        if nix::libc::fcntl(to, nix::libc::F_SETFD, 0) < 0 {
                            return Err(std::io::Error::last_os_error());
                        }
                    } else if nix::libc::dup2(from, to) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        // In the child, 3 is written before 4 is: the guest's end of the second pipe
        // must not be 3 (it never is: the first pipe took the lower descriptors).
        if out_fd == 3 {
            return Err(GuestError::Io {
                what: "arranging the guest's channel".into(),
                source: std::io::Error::other("pipe descriptors collide with 3 and 4"),
            });
        }
        let started = Instant::now();
        let child = cmd
            .spawn()
            .map_err(GuestError::io(format!("starting {}", b.kernel.display())))?;
        drop(in_r);
        drop(out_w);
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(std::fs::File::from(out_r)).lines() {
                let Ok(l) = l else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let mut g = Guest {
            child,
            to_guest: std::fs::File::from(in_w),
            lines,
            console: b.console.to_path_buf(),
            release: String::new(),
            boot: Duration::ZERO,
            stopped: false,
        };
        match g.wait_reply(started + BOOT_TIMEOUT, None)? {
            Reply::Ready { release } => {
                g.release = release;
                g.boot = started.elapsed();
                Ok(g)
            }
            other => {
                g.kill();
                Err(GuestError::Protocol(format!(
                    "the agent's first word was {other:?}"
                )))
            }
        }
    }

    /// Send a request and wait for its reply: at most `timeout` (then the guest is
    /// killed); when `cancel` is set meanwhile, the agent is told to stop the command.
    pub(super) fn request(
        &mut self,
        req: &Request,
        timeout: Duration,
        cancel: Option<&AtomicBool>,
    ) -> Result<Reply, GuestError> {
        if self.stopped {
            return Err(GuestError::Stopped {
                why: "it was stopped earlier".into(),
                console: self.console_tail(),
            });
        }
        self.write(req)?;
        self.wait_reply(Instant::now() + timeout, cancel)
    }

    /// A request with a command's timeout: the agent enforces it; the host waits a
    /// little longer before it calls the guest hung.
    pub(super) fn deadline_for(timeout: Option<Duration>) -> Duration {
        timeout.map_or(Duration::from_secs(7 * 24 * 3600), |t| t + TIMEOUT_SLACK)
    }

    fn write(&mut self, req: &Request) -> Result<(), GuestError> {
        let l = line(req);
        if let Err(e) = self
            .to_guest
            .write_all(l.as_bytes())
            .and_then(|()| self.to_guest.flush())
        {
            self.kill();
            return Err(GuestError::Stopped {
                why: format!("its channel closed ({e})"),
                console: self.console_tail(),
            });
        }
        Ok(())
    }

    fn wait_reply(
        &mut self,
        deadline: Instant,
        cancel: Option<&AtomicBool>,
    ) -> Result<Reply, GuestError> {
        let mut grace: Option<Instant> = None;
        loop {
            match self.lines.recv_timeout(Duration::from_millis(20)) {
                Ok(l) => match serde_json::from_str::<Reply>(l.trim()) {
                    Ok(r) => return Ok(r),
                    // Not the agent's (nothing else writes there): said, and waited on.
                    Err(e) => {
                        eprintln!("fslab: guest: unreadable reply ({e}): {l}");
                        continue;
                    }
                },
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    self.kill();
                    return Err(GuestError::Stopped {
                        why: "it stopped answering (its channel closed)".into(),
                        console: self.console_tail(),
                    });
                }
            }
            if let Ok(Some(st)) = self.child.try_wait() {
                self.stopped = true;
                self.kill();
                return Err(GuestError::Stopped {
                    why: format!("the kernel exited ({st})"),
                    console: self.console_tail(),
                });
            }
            if grace.is_none() && cancel.is_some_and(|c| c.load(Ordering::SeqCst)) {
                self.write(&Request::Cancel)?;
                grace = Some(Instant::now() + CANCEL_GRACE);
            }
            let now = Instant::now();
            if now >= deadline || grace.is_some_and(|g| now >= g) {
                self.kill();
                return Err(GuestError::Hung {
                    console: self.console_tail(),
                });
            }
        }
    }

    /// Power the guest off (killing it when it does not stop in time).
    pub(super) fn power_off(&mut self) -> Result<(), GuestError> {
        if self.stopped {
            return Ok(());
        }
        let sent = self.write(&Request::Poweroff);
        let until = Instant::now() + POWEROFF_TIMEOUT;
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                self.stopped = true;
                // Its helper processes (same group) go with it.
                self.kill();
                return sent;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.kill();
        Err(GuestError::Hung {
            console: self.console_tail(),
        })
    }

    /// Kill the kernel and its helpers (UML makes its own session and process group,
    /// led by the kernel process), and reap it.
    pub(super) fn kill(&mut self) {
        let pid = Pid::from_raw(self.child.id() as i32);
        let _ = killpg(pid, Signal::SIGKILL);
        let _ = kill(pid, Signal::SIGKILL);
        let _ = self.child.wait();
        self.stopped = true;
    }

    /// The last lines of the guest's kernel log.
    pub(super) fn console_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.console).unwrap_or_default();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        format!(
            "{} (kernel log: {})",
            lines[lines.len().saturating_sub(5)..].join(" | "),
            self.console.display()
        )
    }
}

impl Drop for Guest {
    fn drop(&mut self) {
        if !self.stopped {
            self.kill();
        } else {
            // Stopped: its helpers may still be exiting.
            let _ = killpg(Pid::from_raw(self.child.id() as i32), Signal::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_dirs_under_the_guests_tmpfs_are_mounted_back_at_their_own_paths() {
        let s = init_script(
            "/tmp/w/p/x",
            "/tmp/t/debug/fslab",
            &[
                "/tmp/t/debug".into(),
                "/root/.cache/fslab/tools".into(),
                "/run/a/b".into(),
                "/run/a".into(),
            ],
        );
        let lines: Vec<&str> = s.lines().collect();
        let at = |needle: &str| {
            lines
                .iter()
                .position(|l| l.contains(needle))
                .unwrap_or_else(|| panic!("{needle}: {s}"))
        };
        // After the tmpfs that hides them; the parent before the child; read-only.
        let tmp = at("tmpfs /tmp");
        let run_a = at("-o '/run/a' hostfs '/run/a'");
        let run_ab = at("-o '/run/a/b' hostfs '/run/a/b'");
        let debug = at("mount -r -t hostfs -o '/tmp/t/debug' hostfs '/tmp/t/debug'");
        assert!(tmp < run_a && run_a < run_ab && tmp < debug, "{s}");
        // A directory the root shows as it is is not mounted again.
        assert!(!s.contains(".cache"), "{s}");
        // The replicate's directory: its mount point made in the tmpfs, then writable.
        let mk = at("mkdir -p '/tmp/w/p/x'");
        let rw = at("mount -t hostfs -o '/tmp/w/p/x' hostfs '/tmp/w/p/x'");
        assert!(
            debug < mk && mk < rw && rw < at("exec '/tmp/t/debug/fslab'"),
            "{s}"
        );
    }
}
