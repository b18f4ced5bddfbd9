//! The agent: fslab itself, as the guest's init (`fslab guest-agent /dev/tty1`, exec'd
//! by the init script once `/proc`, `/sys`, `/tmp` and the replicate's directory are
//! mounted). It answers [`Request`]s over the guest's second console until fslab says
//! `poweroff` or its end of the channel closes, then flushes and powers the guest off.
//!
//! Commands run as the local target runs them: through a [`Spawner`] (forked once;
//! each command is then `posix_spawn`ed, so no page tables of fslab are copied: in a
//! UML guest a fork of fslab costs about 100 ms), else by [`exec::exec`]; in their own
//! process group, output appended to files, timed from `exec` to reaping, CPU time of
//! the whole tree. Here every number is the guest kernel's.

use super::protocol::{line, Exited, Reply, Request};
use crate::devices::throttle::device_numbers;
use crate::devices::trace::BlockTrace;
use crate::devices::PointCgroup;
use crate::run::counters::PointCounters;
use crate::run::exec::{self, ExecOutcome};
use crate::run::spawner::Spawner;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsFd;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// Why the agent could not serve.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("guest agent: {what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> AgentError {
    let what = what.into();
    move |source| AgentError::Io { what, source }
}

/// Serve requests on `channel` (a tty: it is put in raw mode), then power the guest off.
/// Returns only when the guest could not be powered off (not PID 1: a test).
pub fn serve(channel: &Path) -> Result<(), AgentError> {
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(channel)
        .map_err(io(format!("opening {}", channel.display())))?;
    raw_mode(&tty).map_err(io(format!("raw mode on {}", channel.display())))?;
    let reader = tty
        .try_clone()
        .map_err(io(format!("duplicating {}", channel.display())))?;
    let mut out = tty;
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap_or_default()
        .trim()
        .to_string();
    send(&mut out, &Reply::Ready { release })?;

    let cancel = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel::<Request>();
    {
        let cancel = Arc::clone(&cancel);
        std::thread::spawn(move || {
            for l in BufReader::new(reader).lines() {
                let Ok(l) = l else { break };
                let l = l.trim();
                if l.is_empty() {
                    continue;
                }
                match serde_json::from_str::<Request>(l) {
                    Ok(Request::Cancel) => cancel.store(true, Ordering::SeqCst),
                    Ok(r) => {
                        if tx.send(r).is_err() {
                            break;
                        }
                    }
                    // Not ours: said on the kernel console, the request is dropped.
                    Err(e) => eprintln!("fslab guest agent: unreadable request: {e}: {l}"),
                }
            }
            // fslab's end closed: power off (the sender drops here).
        });
    }
    // No cgroups in the guest: the spawner joins none.
    let mut state = State {
        spawner: PointCgroup::create(&[])
            .ok()
            .and_then(|cg| Spawner::start(&cg).ok()),
        counters: None,
        trace: None,
    };
    while let Ok(req) = rx.recv() {
        if req == Request::Poweroff {
            break;
        }
        cancel.store(false, Ordering::SeqCst);
        let reply = handle(req, &cancel, &mut state);
        send(&mut out, &reply)?;
    }
    // A trace still running is switched off and its instance removed.
    drop(state);
    power_off();
    Ok(())
}

/// What the agent keeps between requests.
struct State {
    spawner: Option<Spawner>,
    /// `counters:` as resolved in the guest.
    counters: Option<PointCounters>,
    /// A block trace of the guest's disks, running around a step.
    trace: Option<BlockTrace>,
}

fn send(out: &mut std::fs::File, reply: &Reply) -> Result<(), AgentError> {
    out.write_all(line(reply).as_bytes())
        .and_then(|()| out.flush())
        .map_err(io("answering fslab"))
}

/// No echo, no line editing, no newline translation: bytes pass as they are.
fn raw_mode(tty: &std::fs::File) -> std::io::Result<()> {
    use nix::sys::termios::{cfmakeraw, tcgetattr, tcsetattr, SetArg};
    let mut t = tcgetattr(tty.as_fd()).map_err(std::io::Error::from)?;
    cfmakeraw(&mut t);
    tcsetattr(tty.as_fd(), SetArg::TCSANOW, &t).map_err(std::io::Error::from)
}

/// Run one command: through the spawner while it works, else from the agent itself.
fn run(
    spawner: &mut Option<Spawner>,
    argv: &[String],
    cwd: &Path,
    stdout: &Path,
    stderr: &Path,
    timeout: Option<Duration>,
    cancel: &AtomicBool,
) -> std::io::Result<ExecOutcome> {
    if let Some(s) = spawner {
        match s.run(argv, cwd, stdout, stderr, timeout, cancel) {
            Ok(o) => return Ok(o),
            Err(e) => {
                // Whether it ran is unknown: said, and the next command starts without.
                *spawner = None;
                return Err(std::io::Error::other(e.to_string()));
            }
        }
    }
    exec::exec(argv, cwd, stdout, stderr, timeout, cancel, None)
}

fn handle(req: Request, cancel: &AtomicBool, state: &mut State) -> Reply {
    let failed = |message: String| Reply::Failed { message };
    let spawner = &mut state.spawner;
    match req {
        Request::Exec {
            argv,
            cwd,
            stdout,
            stderr,
            timeout_ms,
        } => {
            for p in [&stdout, &stderr] {
                if let Err(e) = std::fs::File::create(p) {
                    return failed(format!("creating {}: {e}", p.display()));
                }
            }
            let timeout = timeout_ms.map(Duration::from_millis);
            let r = run(spawner, &argv, &cwd, &stdout, &stderr, timeout, cancel);
            // Orphans of the command were reparented to the agent (PID 1): reap them.
            reap();
            // What the command wrote reaches the host's files before fslab reads them.
            for p in [&stdout, &stderr] {
                if let Ok(f) = std::fs::OpenOptions::new().append(true).open(p) {
                    let _ = f.sync_all();
                }
            }
            match r {
                Ok(o) => Reply::Exited(Exited {
                    exit_code: o.exit_code,
                    signal: o.signal,
                    wall_ns: o.wall.as_nanos() as u64,
                    user_ns: o.user.as_nanos() as u64,
                    sys_ns: o.sys.as_nanos() as u64,
                    timed_out: o.timed_out,
                    cancelled: o.cancelled,
                    spawn_error: o.spawn_error,
                }),
                Err(e) => failed(format!("running {}: {e}", argv.join(" "))),
            }
        }
        Request::Mount {
            device,
            at,
            fstype,
            options,
        } => {
            if let Err(e) = std::fs::create_dir_all(&at) {
                return failed(format!("creating {}: {e}", at.display()));
            }
            let mut c = Command::new("mount");
            if let Some(t) = fstype {
                c.args(["-t", &t]);
            }
            if let Some(o) = options {
                c.args(["-o", &o]);
            }
            c.arg(&device).arg(&at);
            tool(c)
        }
        Request::Umount { at } => {
            let mut c = Command::new("umount");
            c.arg(&at);
            tool(c)
        }
        Request::Mkdir { path } => match std::fs::create_dir_all(&path) {
            Ok(()) => Reply::Done {
                text: String::new(),
            },
            Err(e) => failed(format!("mkdir {}: {e}", path.display())),
        },
        Request::Sync => {
            nix::unistd::sync();
            Reply::Done {
                text: String::new(),
            }
        }
        Request::DropCaches => {
            nix::unistd::sync();
            match std::fs::write("/proc/sys/vm/drop_caches", "3\n") {
                Ok(()) => Reply::Done {
                    text: String::new(),
                },
                Err(e) => failed(format!("drop caches: {e}")),
            }
        }
        Request::Read { path } => match std::fs::read_to_string(&path) {
            Ok(text) => Reply::Done { text },
            Err(e) => failed(format!("reading {}: {e}", path.display())),
        },
        Request::CountersOpen { sources, devices } => {
            let c = PointCounters::resolve_in(
                &sources,
                &devices,
                Path::new("/sys"),
                Path::new("/proc"),
            );
            let reply = Reply::CountersOpened {
                origins: c.describe(),
                notes: c.notes.clone(),
            };
            state.counters = Some(c);
            reply
        }
        Request::CountersRead => Reply::Snapshot {
            snapshot: state
                .counters
                .as_ref()
                .map(PointCounters::read)
                .unwrap_or_default(),
        },
        Request::TraceStart { devices, buffer_kb } => {
            // One trace at a time: an earlier one is switched off first.
            state.trace = None;
            let numbers = match devices
                .iter()
                .map(|d| device_numbers(d))
                .collect::<Result<Vec<_>, _>>()
            {
                Ok(n) if !n.is_empty() => n,
                Ok(_) => return failed("no devices to trace".into()),
                Err(e) => return failed(e.to_string()),
            };
            match BlockTrace::start(&numbers, buffer_kb) {
                Ok(t) => {
                    state.trace = Some(t);
                    Reply::Done {
                        text: String::new(),
                    }
                }
                Err(e) => failed(e.to_string()),
            }
        }
        Request::TraceStop { out } => {
            let Some(t) = state.trace.take() else {
                return failed("no trace is running".into());
            };
            let Some(out) = out else {
                drop(t);
                return Reply::Done {
                    text: String::new(),
                };
            };
            let started = t.start_mono();
            match t.finish() {
                Ok(text) => match write_synced(&out, text.text.as_bytes()) {
                    Ok(()) => Reply::Traced {
                        start_mono_ns: (started.max(0.0) * 1e9) as u64,
                    },
                    Err(e) => failed(format!("writing {}: {e}", out.display())),
                },
                Err(e) => failed(e.to_string()),
            }
        }
        Request::Cancel | Request::Poweroff => Reply::Done {
            text: String::new(),
        },
    }
}

/// Run a system tool; a failure carries its status and output.
fn tool(mut c: Command) -> Reply {
    c.stdin(std::process::Stdio::null());
    let shown = format!("{c:?}");
    match c.output() {
        Ok(o) if o.status.success() => Reply::Done {
            text: String::from_utf8_lossy(&o.stdout).to_string(),
        },
        Ok(o) => Reply::Failed {
            message: format!(
                "{shown}: {}: {}{}",
                o.status,
                String::from_utf8_lossy(&o.stdout).trim(),
                String::from_utf8_lossy(&o.stderr).trim()
            ),
        },
        Err(e) => Reply::Failed {
            message: format!("{shown}: {e}"),
        },
    }
}

/// Write a file and flush it to the host before fslab reads it.
fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = std::fs::File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

fn reap() {
    use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
    use nix::unistd::Pid;
    while let Ok(st) = waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
        if st == WaitStatus::StillAlive {
            break;
        }
    }
}

/// Flush and power off. The images are the guest's disks: what the guest wrote
/// reaches them before the guest stops.
fn power_off() {
    nix::unistd::sync();
    if std::process::id() == 1 {
        let _ = nix::sys::reboot::reboot(nix::sys::reboot::RebootMode::RB_POWER_OFF);
    }
}
