//! What fslab and its agent in a guest say to each other: one JSON object a line over
//! the guest's second console (`con1`, the guest's `/dev/tty1`, raw mode), which the
//! host reaches through a pair of pipes.
//!
//! The agent speaks first ([`Reply::Ready`]); after that every [`Request`] but
//! [`Request::Cancel`] gets exactly one [`Reply`], in order. `Cancel` may come at any
//! time (it stops the command the agent runs) and gets no reply of its own.

use crate::run::counters::{OriginInfo, Snapshot};
use crate::spec::media::CounterSource;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// From fslab to the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Run a command in the guest; its output goes to `stdout` and `stderr` (files in
    /// the replicate's directory, which the guest sees writable through hostfs), which
    /// the agent truncates first and flushes to the host before it replies.
    Exec {
        argv: Vec<String>,
        cwd: PathBuf,
        stdout: PathBuf,
        stderr: PathBuf,
        timeout_ms: Option<u64>,
    },
    Mount {
        device: PathBuf,
        at: PathBuf,
        fstype: Option<String>,
        options: Option<String>,
    },
    Umount {
        at: PathBuf,
    },
    Mkdir {
        path: PathBuf,
    },
    /// `sync`, then drop the guest's page cache.
    DropCaches,
    /// `sync` in the guest (every filesystem there is the point's own).
    Sync,
    /// A small file of the guest's (`/proc/…`, `/sys/…`), as text.
    Read {
        path: PathBuf,
    },
    /// Resolve `counters:` in the guest (its `/sys`, `/proc` and tracefs, for its disks
    /// `devices`), replacing what was resolved before: [`Reply::CountersOpened`].
    CountersOpen {
        sources: Vec<CounterSource>,
        devices: Vec<PathBuf>,
    },
    /// Read the resolved counters now: [`Reply::Snapshot`].
    CountersRead,
    /// Start a block trace of the guest's disks `devices` (its tracefs) with a buffer
    /// of `buffer_kb` per CPU.
    TraceStart {
        devices: Vec<PathBuf>,
        buffer_kb: u64,
    },
    /// Stop the trace; its text goes to `out` (a file in the replicate's directory,
    /// flushed first: [`Reply::Traced`]), or is dropped when `out` is None.
    TraceStop {
        out: Option<PathBuf>,
    },
    /// Stop the command that runs now (the agent kills its process group).
    Cancel,
    /// Unmount everything, flush, power off.
    Poweroff,
}

/// From the agent to fslab.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Reply {
    /// The agent is up: the guest kernel's `uname -r`.
    Ready {
        release: String,
    },
    /// How a command ended, measured in the guest.
    Exited(Exited),
    Done {
        text: String,
    },
    /// The counters the guest resolved: what each origin counts, and what it said
    /// about the sources it could not read as asked.
    CountersOpened {
        origins: Vec<OriginInfo>,
        notes: Vec<String>,
    },
    Snapshot {
        snapshot: Snapshot,
    },
    /// A trace's text is in the file asked for; its clock (the guest's
    /// `CLOCK_MONOTONIC`, as the trace's timestamps) when tracing was switched on.
    Traced {
        start_mono_ns: u64,
    },
    Failed {
        message: String,
    },
}

/// A command's end, as [`crate::run::exec::ExecOutcome`] says it, in nanoseconds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exited {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub wall_ns: u64,
    pub user_ns: u64,
    pub sys_ns: u64,
    pub timed_out: bool,
    pub cancelled: bool,
    pub spawn_error: Option<String>,
}

/// One line of the protocol (no newline inside: JSON escapes it).
pub fn line<T: Serialize>(msg: &T) -> String {
    let mut s = serde_json::to_string(msg).unwrap_or_else(|e| {
        serde_json::json!({ "reply": "failed", "message": format!("encoding: {e}") }).to_string()
    });
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_replies_are_one_line_each_and_read_back() {
        let r = Request::Exec {
            argv: vec!["sh".into(), "-c".into(), "echo a\nb".into()],
            cwd: "/w".into(),
            stdout: "/w/o".into(),
            stderr: "/w/e".into(),
            timeout_ms: Some(5),
        };
        let l = line(&r);
        assert_eq!(l.matches('\n').count(), 1, "{l}");
        assert_eq!(serde_json::from_str::<Request>(l.trim()).unwrap(), r);
        let e = Reply::Exited(Exited {
            exit_code: Some(3),
            wall_ns: 7,
            ..Default::default()
        });
        assert_eq!(serde_json::from_str::<Reply>(line(&e).trim()).unwrap(), e);
        assert!(serde_json::from_str::<Request>(r#"{"op":"format_the_host"}"#).is_err());
    }

    /// The guest's counters cross the channel as they were read: the snapshot reads
    /// back equal, and so does what the agent resolved.
    #[test]
    fn counters_cross_the_channel_unchanged() {
        use crate::run::counters::PointCounters;
        let d = tempfile::tempdir().unwrap();
        let (sys, proc_) = (d.path().join("sys"), d.path().join("proc"));
        std::fs::create_dir_all(&proc_).unwrap();
        std::fs::write(proc_.join("vmstat"), "pgpgin 10\npgfault 7\n").unwrap();
        let c = PointCounters::resolve_in(
            &[CounterSource::Vmstat, CounterSource::Ext4],
            &[],
            &sys,
            &proc_,
        );
        let opened = Reply::CountersOpened {
            origins: c.describe(),
            notes: c.notes.clone(),
        };
        let snap = Reply::Snapshot { snapshot: c.read() };
        for r in [opened, snap] {
            assert_eq!(serde_json::from_str::<Reply>(line(&r).trim()).unwrap(), r);
        }
        let Reply::CountersOpened { origins, notes } = serde_json::from_str::<Reply>(
            line(&Reply::CountersOpened {
                origins: c.describe(),
                notes: c.notes.clone(),
            })
            .trim(),
        )
        .unwrap() else {
            unreachable!()
        };
        // The host's side names the rows as the guest resolved them.
        let here = PointCounters::elsewhere(origins, notes);
        assert_eq!(here.describe(), c.describe());
        assert!(
            here.notes.iter().any(|n| n.contains("no ext4 rows")),
            "{:?}",
            here.notes
        );
        let before = c.read();
        std::fs::write(proc_.join("vmstat"), "pgpgin 25\npgfault 7\n").unwrap();
        let rows = here.rows(&before, &c.read());
        let pgpgin = rows.iter().find(|r| r.delta.name == "pgpgin").unwrap();
        assert_eq!((pgpgin.source, pgpgin.delta.delta), ("vmstat", 15));
    }
}
