//! [`BundleWriter`]: a bundle created (or reopened for `--resume`) and filled as a run
//! proceeds: the journal, capture tables in parts, logs and captures.

use super::files::lock_bundle;
use super::journal::{read_journal, Journal};
use super::{
    atomic_copy, atomic_write, io, parts, point_dir_name, runs_frame, stamped_id, write_parquet,
    Bundle, Manifest, PointStatus, RunRow, StoreError, CAPTURES_DIR, EXPERIMENT_FILE,
    FORMAT_VERSION, JOURNAL_FILE, LOGS_DIR, MANIFEST_FILE, RUNS_FILE,
};
use crate::frames;
use polars::prelude::{BooleanChunked, DataFrame, DataType};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Writes a bundle as a run proceeds. It holds an exclusive lock on the bundle's
/// directory, so that two runs (or two `--resume`s) never write one bundle.
#[derive(Debug)]
pub struct BundleWriter {
    dir: PathBuf,
    manifest: Manifest,
    runs: Vec<RunRow>,
    /// `runs.parquet` is behind the journal.
    runs_dirty: bool,
    /// Per table, its parts on disk not yet merged into `<table>.parquet` (only their
    /// names are kept in memory).
    pub(super) tables: BTreeMap<String, Vec<parts::Part>>,
    /// The `<seq>` of the next capture's parts.
    next_seq: u64,
    /// Small captures gathered in memory, in order, until they make one part (see
    /// [`append_table`](Self::append_table)).
    pub(super) gathered: Vec<(String, DataFrame)>,
    gathered_rows: usize,
    gathered_bytes: usize,
    /// The journal, opened by the first row.
    journal: Option<Journal>,
    /// False only in tests that simulate a killed run.
    flush_on_drop: bool,
    _lock: nix::fcntl::Flock<std::fs::File>,
}

/// Rows of one capture, staged on disk by [`BundleWriter::stage_part`] and made part of
/// the bundle, all at once, by [`BundleWriter::commit_parts`]. Dropped uncommitted (a
/// parse error), its rows are deleted.
#[derive(Debug)]
pub struct PartsTx {
    seq: u64,
    dir: PathBuf,
    /// (table, batch file name) in the order staged.
    staged: Vec<(String, String)>,
    done: bool,
}

impl Drop for PartsTx {
    fn drop(&mut self) {
        if !self.done && !self.staged.is_empty() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

impl Drop for BundleWriter {
    /// Whatever was not flushed yet is written now (an error, a panic): best effort,
    /// the journal and the captured text hold it anyway.
    fn drop(&mut self) {
        if self.flush_on_drop {
            let _ = self.flush();
        }
    }
}

/// Rows of small captures the writer gathers in memory before writing them as a part.
pub const GATHER_ROWS: usize = 65_536;
/// Bytes (polars' estimate) of small captures gathered in memory before they are written.
pub const GATHER_BYTES: usize = 32 << 20;

impl BundleWriter {
    /// A new bundle, `results_root/<experiment id>/<UTC timestamp>-<short id>/`, in the
    /// current format ([`FORMAT_VERSION`], whatever `manifest` says).
    pub fn create(results_root: &Path, mut manifest: Manifest) -> Result<BundleWriter, StoreError> {
        manifest.format_version = FORMAT_VERSION;
        let dir = results_root
            .join(&manifest.experiment.id)
            .join(stamped_id());
        std::fs::create_dir_all(dir.join(LOGS_DIR)).map_err(io(&dir))?;
        let yaml_path = dir.join(EXPERIMENT_FILE);
        atomic_write(&yaml_path, manifest.experiment.yaml.as_bytes()).map_err(io(&yaml_path))?;
        let w = BundleWriter {
            _lock: lock_bundle(&dir)?,
            dir,
            manifest,
            runs: Vec::new(),
            runs_dirty: false,
            tables: BTreeMap::new(),
            next_seq: 1,
            gathered: Vec::new(),
            gathered_rows: 0,
            gathered_bytes: 0,
            journal: None,
            flush_on_drop: true,
        };
        w.save_manifest()?;
        Ok(w)
    }

    /// Reopen a partial bundle to finish it (`--resume`). Parts a killed run left
    /// unmerged are merged into their tables now (a capture it had not committed is
    /// deleted: its point did not finish).
    pub fn reopen(dir: &Path) -> Result<BundleWriter, StoreError> {
        let lock = lock_bundle(dir)?;
        let b = Bundle::open(dir)?;
        let runs = read_journal(&dir.join(JOURNAL_FILE))?;
        let mut last = parts::remove_staging(dir)?.unwrap_or(0);
        if let Some((seq, _)) = parts::captures(dir)?.last() {
            last = last.max(*seq);
        }
        let mut tables = BTreeMap::new();
        for name in b.tables()? {
            if name == "runs" {
                continue;
            }
            let through = parts::through(&dir.join(format!("{name}.parquet")))?;
            last = last.max(through.unwrap_or(0));
            parts::remove_merged(dir, &name, through)?;
            tables.insert(name.clone(), parts::pending(dir, &name, through)?);
        }
        let mut w = BundleWriter {
            dir: dir.to_path_buf(),
            manifest: b.manifest,
            runs,
            // The journal may be ahead of runs.parquet (a run killed mid-point).
            runs_dirty: true,
            tables,
            next_seq: last + 1,
            gathered: Vec::new(),
            gathered_rows: 0,
            gathered_bytes: 0,
            journal: None,
            flush_on_drop: true,
            _lock: lock,
        };
        w.flush()?;
        Ok(w)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Drop the writer as a killed run would leave the bundle (nothing flushed).
    #[cfg(test)]
    pub(super) fn abandon(mut self) {
        self.flush_on_drop = false;
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }
    pub fn manifest_mut(&mut self) -> &mut Manifest {
        &mut self.manifest
    }
    pub fn runs(&self) -> &[RunRow] {
        &self.runs
    }

    pub fn save_manifest(&self) -> Result<(), StoreError> {
        let path = self.dir.join(MANIFEST_FILE);
        let bytes = serde_json::to_vec_pretty(&self.manifest).unwrap_or_default();
        atomic_write(&path, &bytes).map_err(io(&path))
    }

    /// Record a timed iteration: appended to the journal and fdatasynced before this
    /// returns, so the row survives anything that happens next. `runs.parquet` follows
    /// at the next [`flush`](Self::flush) (the end of the point): rewriting it after
    /// every iteration made the harness cost grow with the number of iterations.
    /// Readers never see less than the journal: [`Bundle::runs`] reads the journal
    /// when it is ahead of `runs.parquet`.
    pub fn append_run(&mut self, row: RunRow) -> Result<(), StoreError> {
        let mut line = serde_json::to_vec(&row).unwrap_or_default();
        line.push(b'\n');
        let journal = match &mut self.journal {
            Some(j) => j,
            None => self
                .journal
                .insert(Journal::open(&self.dir.join(JOURNAL_FILE))?),
        };
        journal.append(&line)?;
        self.runs.push(row);
        self.runs_dirty = true;
        Ok(())
    }

    /// Add rows to a table, merged into `<table>.parquet` at the next
    /// [`flush`](Self::flush). Small captures (a parsed `time`, an iteration's
    /// counters) are gathered in memory and written as one part (see [`parts`]) once
    /// they hold [`GATHER_ROWS`] rows or [`GATHER_BYTES`] bytes, or at the next flush
    /// or streamed capture: writing a part per capture cost more than a
    /// micro-benchmark's iteration. Memory stays bounded either way. The raw text the
    /// rows were parsed from is already on disk ([`save_capture`](Self::save_capture)).
    pub fn append_table(&mut self, table: &str, df: DataFrame) -> Result<(), StoreError> {
        self.gathered_rows += df.height();
        self.gathered_bytes += df.estimated_size();
        self.gathered.push((table.to_string(), df));
        if self.gathered_rows >= GATHER_ROWS || self.gathered_bytes >= GATHER_BYTES {
            self.write_gathered()?;
        }
        Ok(())
    }

    /// Write what is gathered in memory as parts, so that a [`Bundle`](super::Bundle)
    /// opened on the directory sees every table's rows so far (without merging the
    /// parts into the tables' files, which [`flush`](Self::flush) does).
    pub fn write_pending(&mut self) -> Result<(), StoreError> {
        self.write_gathered()
    }

    /// The gathered captures as one part per table, in one capture `<seq>` (each
    /// table's rows in the order they came).
    pub(super) fn write_gathered(&mut self) -> Result<(), StoreError> {
        if self.gathered.is_empty() {
            return Ok(());
        }
        let mut by_table: BTreeMap<&str, Vec<DataFrame>> = BTreeMap::new();
        for (t, df) in &self.gathered {
            by_table.entry(t.as_str()).or_default().push(df.clone());
        }
        let mut frames = Vec::new();
        for (t, dfs) in by_table {
            let df = if dfs.len() == 1 {
                dfs.into_iter().next().unwrap_or_default()
            } else {
                frames::concat_diagonal(&dfs)?
            };
            frames.push((t.to_string(), df));
        }
        let mut tx = self.next_parts();
        for (t, df) in frames {
            self.stage_part(&mut tx, &t, df)?;
        }
        self.commit_parts(tx)?;
        self.gathered.clear();
        self.gathered_rows = 0;
        self.gathered_bytes = 0;
        Ok(())
    }

    /// Start a capture whose rows come in batches (a streamed block map). What was
    /// gathered before it is written first, so that rows keep the order of captures.
    pub fn begin_parts(&mut self) -> Result<PartsTx, StoreError> {
        self.write_gathered()?;
        Ok(self.next_parts())
    }

    fn next_parts(&mut self) -> PartsTx {
        let seq = self.next_seq;
        self.next_seq += 1;
        PartsTx {
            seq,
            dir: parts::staging(&self.dir, seq),
            staged: Vec::new(),
            done: false,
        }
    }

    /// Write a batch of rows of `table` to disk (uncommitted: readers do not see it).
    pub fn stage_part(
        &self,
        tx: &mut PartsTx,
        table: &str,
        df: DataFrame,
    ) -> Result<(), StoreError> {
        let d = tx.dir.join(table);
        std::fs::create_dir_all(&d).map_err(io(&d))?;
        let name = format!("{:06}.parquet", tx.staged.len());
        write_parquet(&d.join(&name), &df)?;
        tx.staged.push((table.to_string(), name));
        Ok(())
    }

    /// Make a capture's staged rows part of the bundle, all at once (one rename).
    pub fn commit_parts(&mut self, mut tx: PartsTx) -> Result<(), StoreError> {
        tx.done = true;
        if tx.staged.is_empty() {
            return Ok(());
        }
        let target = parts::committed(&self.dir, tx.seq);
        if let Err(e) = std::fs::rename(&tx.dir, &target) {
            tx.done = false;
            return Err(io(&target)(e));
        }
        let pdir = self.dir.join(parts::DIR);
        std::fs::File::open(&pdir)
            .and_then(|d| d.sync_all())
            .map_err(io(&pdir))?;
        for (table, name) in std::mem::take(&mut tx.staged) {
            let path = target.join(&table).join(name);
            self.tables
                .entry(table)
                .or_default()
                .push(parts::Part { seq: tx.seq, path });
        }
        Ok(())
    }

    /// Write `runs.parquet` and merge every table's pending parts into its parquet
    /// file (streamed, atomically). The runner calls it at the end of each point and
    /// at exit.
    pub fn flush(&mut self) -> Result<(), StoreError> {
        if let Some(j) = &mut self.journal {
            j.trim()?;
        }
        self.write_gathered()?;
        if self.runs_dirty {
            runs_frame(&self.runs).and_then(|df| write_parquet(&self.dir.join(RUNS_FILE), &df))?;
            self.runs_dirty = false;
        }
        let names: Vec<String> = self
            .tables
            .iter()
            .filter(|(_, p)| !p.is_empty())
            .map(|(n, _)| n.clone())
            .collect();
        for name in names {
            let pending = self.tables.get(&name).cloned().unwrap_or_default();
            parts::merge(&self.dir, &name, &pending, None)?;
            self.tables.insert(name, Vec::new());
        }
        Ok(())
    }

    /// For `--resume`: keep only rows of points that finished (`ok` or `skipped`), so
    /// that points run again do not count their earlier iterations twice.
    pub fn retain_complete_points(&mut self) -> Result<(), StoreError> {
        let done: Vec<usize> = self
            .manifest
            .points
            .iter()
            .filter(|p| matches!(p.status, PointStatus::Ok | PointStatus::Skipped))
            .map(|p| p.index)
            .collect();
        self.retain_rows(&|point, _| done.contains(&point))?;
        for p in &mut self.manifest.points {
            if !done.contains(&p.index) && p.status != PointStatus::OtherShard {
                p.status = PointStatus::Pending;
                p.reason = None;
                p.iterations = 0;
            }
        }
        self.save_manifest()
    }

    /// For `--resume` of a run order: keep only the rows of the (point index,
    /// replicate) pairs in `done`, in `runs` and every table (a table without a
    /// `replicate` column, from a format-1 bundle, counts as replicate 1). The manifest
    /// is the caller's to update.
    pub fn retain_replicates(&mut self, done: &BTreeSet<(usize, u32)>) -> Result<(), StoreError> {
        self.retain_rows(&|point, replicate| done.contains(&(point, replicate)))
    }

    fn retain_rows(&mut self, keep_row: &dyn Fn(usize, u32) -> bool) -> Result<(), StoreError> {
        self.write_gathered()?;
        self.runs.retain(|r| keep_row(r.point_index, r.replicate));
        let journal = self.dir.join(JOURNAL_FILE);
        let mut text = Vec::new();
        for r in &self.runs {
            text.extend(serde_json::to_vec(r).unwrap_or_default());
            text.push(b'\n');
        }
        // A new file: the next row opens it again.
        self.journal = None;
        atomic_write(&journal, &text).map_err(io(&journal))?;
        write_parquet(&self.dir.join(RUNS_FILE), &runs_frame(&self.runs)?)?;
        self.runs_dirty = false;
        let mut names: Vec<String> = self.tables.keys().cloned().collect();
        for name in Bundle::parquet_tables(&self.dir)? {
            if name != "runs" && !names.contains(&name) {
                names.push(name);
            }
        }
        let keep = |df: DataFrame| -> Result<DataFrame, StoreError> {
            let Ok(idx) = df.column("point_index").and_then(|c| c.i64().cloned()) else {
                return Ok(df);
            };
            let reps = df
                .column("replicate")
                .ok()
                .and_then(|c| c.cast(&DataType::Int64).ok())
                .and_then(|c| c.i64().ok().cloned());
            let mask: BooleanChunked = idx
                .iter()
                .enumerate()
                .map(|(n, v)| {
                    let replicate = reps
                        .as_ref()
                        .and_then(|r| r.get(n))
                        .and_then(|r| u32::try_from(r).ok())
                        .unwrap_or(1);
                    Some(v.is_some_and(|i| keep_row(i as usize, replicate)))
                })
                .collect();
            df.filter(&mask).map_err(|source| StoreError::Polars {
                path: self.dir.clone(),
                source,
            })
        };
        for name in names {
            let pending = self.tables.get(&name).cloned().unwrap_or_default();
            parts::merge(&self.dir, &name, &pending, Some(&keep))?;
            self.tables.insert(name, Vec::new());
        }
        Ok(())
    }

    /// Move a point's logs and captures aside (`<dir>.interrupted-N`) before it runs
    /// again, so that the new run's files are not appended to the old ones.
    pub fn set_aside_logs(&self, point_index: usize, point_id: &str) -> Result<(), StoreError> {
        self.set_aside(point_index, point_id, None)
    }

    /// The same for some replicates of a point, whose files start with one of
    /// `prefixes` (their labels' `r02-`): only their files move, into one
    /// `<dir>.interrupted-N/`; the other replicates' files stay.
    pub fn set_aside_replicate_logs(
        &self,
        point_index: usize,
        point_id: &str,
        prefixes: &[String],
    ) -> Result<(), StoreError> {
        self.set_aside(point_index, point_id, Some(prefixes))
    }

    fn set_aside(
        &self,
        point_index: usize,
        point_id: &str,
        prefixes: Option<&[String]>,
    ) -> Result<(), StoreError> {
        let name = point_dir_name(point_index, point_id);
        for sub in [LOGS_DIR, CAPTURES_DIR] {
            let d = self.dir.join(sub).join(&name);
            if !d.exists() {
                continue;
            }
            let files: Vec<PathBuf> = match prefixes {
                None => Vec::new(),
                Some(ps) => std::fs::read_dir(&d)
                    .map_err(io(&d))?
                    .flatten()
                    .filter(|e| {
                        let f = e.file_name();
                        let f = f.to_string_lossy();
                        ps.iter().any(|p| f.starts_with(p.as_str()))
                    })
                    .map(|e| e.path())
                    .collect(),
            };
            if prefixes.is_some() && files.is_empty() {
                continue;
            }
            let mut n = 1;
            let target = loop {
                let t = self.dir.join(sub).join(format!("{name}.interrupted-{n}"));
                if !t.exists() {
                    break t;
                }
                n += 1;
            };
            if prefixes.is_none() {
                std::fs::rename(&d, &target).map_err(io(&d))?;
                continue;
            }
            std::fs::create_dir_all(&target).map_err(io(&target))?;
            for f in files {
                let to = target.join(f.file_name().unwrap_or_default());
                std::fs::rename(&f, &to).map_err(io(&f))?;
            }
        }
        Ok(())
    }

    /// A directory for this point's logs, created on demand.
    pub fn log_dir(&self, point_index: usize, point_id: &str) -> Result<PathBuf, StoreError> {
        let d = self
            .dir
            .join(LOGS_DIR)
            .join(point_dir_name(point_index, point_id));
        std::fs::create_dir_all(&d).map_err(io(&d))?;
        Ok(d)
    }

    /// Keep a capture's log file as it is (copied, never read into memory): the same
    /// place as [`save_capture`](Self::save_capture); a missing file is kept empty.
    pub fn save_capture_file(
        &self,
        point_index: usize,
        point_id: &str,
        name: &str,
        source: &Path,
    ) -> Result<PathBuf, StoreError> {
        let d = self.capture_dir(point_index, point_id)?;
        let p = d.join(format!("{name}.txt"));
        match atomic_copy(source, &p) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => atomic_write(&p, b""),
            copied => copied,
        }
        .map_err(io(&p))?;
        Ok(p)
    }

    /// Keep the raw text of a capture.
    pub fn save_capture(
        &self,
        point_index: usize,
        point_id: &str,
        name: &str,
        text: &str,
    ) -> Result<PathBuf, StoreError> {
        let d = self.capture_dir(point_index, point_id)?;
        let p = d.join(format!("{name}.txt"));
        atomic_write(&p, text.as_bytes()).map_err(io(&p))?;
        Ok(p)
    }

    /// `captures/<point>/`, created on demand.
    fn capture_dir(&self, point_index: usize, point_id: &str) -> Result<PathBuf, StoreError> {
        let d = self
            .dir
            .join(CAPTURES_DIR)
            .join(point_dir_name(point_index, point_id));
        std::fs::create_dir_all(&d).map_err(io(&d))?;
        Ok(d)
    }
}
