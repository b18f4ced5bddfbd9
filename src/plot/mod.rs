//! Charts from result frames, drawn with plotters: SVG strings for notebooks and
//! reports, SVG or PNG files for mail and papers.
//!
//! Plot only draws. Each constructor reads a frame whose numbers are already computed
//! (statistics, roles, quartiles, rates come with the frame; the frames of the
//! statistics module are made for it) and returns a [`Chart`] (the data it will draw,
//! already extracted); [`Chart::to_svg`], [`Chart::save`] (`.svg` or `.png`) render it:
//! - [`Chart::mean_ci`]: mean per point with confidence-interval whiskers and the first
//!   iteration marked apart (a per-point statistics frame);
//! - [`Chart::iteration_lines`]: the metric against the iteration number, one line per
//!   point (warm-up and drift);
//! - [`Chart::extents`]: physical against logical offset of each extent, one colour per
//!   file (the seekwatcher-like directory pictures);
//! - [`Chart::normalised`]: several result sets (published, rerun…) each divided by its
//!   own baseline point, so that different hardware compares;
//! - [`Chart::grouped`]: bars of a value per category and series from a tidy frame
//!   (e2fsck time per pass and filesystem);
//! - [`Chart::distribution_of`]: box plot with every iteration as a dot, warm-up and
//!   outliers marked (a frame of each iteration's role and each point's box);
//! - [`Chart::io_traces`]: seekwatcher-style block-I/O traces ([`IoTrace`]);
//! - [`Chart::claim`]: one claim's number per bundle or kernel with its interval,
//!   against the band it expects and the post's number ([`ClaimPlot`]).
//!
//! The constructors that start from a runs or `io` frame (`Chart::iterations`,
//! `Chart::distribution`, `Chart::io_trace`, `Chart::io_compare`) compute first, so they
//! live a layer up, in `report::charts`, and call these.
//!
//! Text needs a TrueType font at run time (see [`fonts`]): Debian's `fonts-dejavu-core`.
//! Plot derives only what a chart's geometry needs: in [`Chart::normalised`], each
//! series divided by its baseline point.

mod claim;
mod draw;
pub mod fonts;
mod io;

pub use claim::{ClaimEstimate, ClaimPlot};
pub use io::{IoRates, IoTrace};

use crate::frames::{self, ColumnError};
use crate::labels::metric_label;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("cannot draw the chart: {0}")]
    Draw(String),
    #[error("cannot draw chart text: {0}")]
    Font(#[from] fonts::NoFont),
    #[error("nothing to plot: {0}")]
    Empty(String),
    #[error("{0}")]
    Data(String),
    #[error("unsupported chart file `{0}`: use .svg or .png")]
    Format(PathBuf),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Column(#[from] ColumnError),
}

/// One point of a mean/CI chart.
#[derive(Debug, Clone, PartialEq)]
pub struct CiPoint {
    pub label: String,
    pub mean: f64,
    pub ci: Option<(f64, f64)>,
    pub first: Option<f64>,
}

/// One line of an iterations chart.
#[derive(Debug, Clone, PartialEq)]
pub struct IterationLine {
    pub name: String,
    /// (iteration, value)
    pub points: Vec<(i64, f64)>,
}

/// The extents of one file, in bytes: (logical, physical, length).
#[derive(Debug, Clone, PartialEq)]
pub struct FileExtents {
    pub path: String,
    pub extents: Vec<(f64, f64, f64)>,
}

/// One result set of a normalised chart: value / baseline value per label.
#[derive(Debug, Clone, PartialEq)]
pub struct NormalisedSeries {
    pub name: String,
    pub ratios: Vec<Option<f64>>,
}

/// One series of a grouped bar chart: its value per label.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupedSeries {
    pub name: String,
    pub values: Vec<Option<f64>>,
}

/// The iterations of one point for a distribution chart.
#[derive(Debug, Clone, PartialEq)]
pub struct DistributionGroup {
    pub label: String,
    /// Steady-state values that are not outliers.
    pub steady: Vec<f64>,
    pub warmup: Vec<f64>,
    pub outliers: Vec<f64>,
    /// (q1, median, q3, lower whisker, upper whisker) of the steady state.
    pub boxplot: Option<[f64; 5]>,
}

/// What a chart draws.
#[derive(Debug, Clone, PartialEq)]
pub enum ChartData {
    MeanCi {
        y_label: String,
        ci_level: f64,
        points: Vec<CiPoint>,
    },
    Iterations {
        y_label: String,
        lines: Vec<IterationLine>,
    },
    Extents {
        files: Vec<FileExtents>,
    },
    Normalised {
        baseline: String,
        labels: Vec<String>,
        series: Vec<NormalisedSeries>,
    },
    Distribution {
        y_label: String,
        threshold: f64,
        groups: Vec<DistributionGroup>,
    },
    Grouped {
        x_label: String,
        y_label: String,
        labels: Vec<String>,
        series: Vec<GroupedSeries>,
    },
    /// Block-I/O traces ([`Chart::io_traces`]): one column each.
    Io {
        traces: Vec<IoTrace>,
    },
    /// One claim's estimates against its expected band and the post's number
    /// ([`Chart::claim`]).
    Claim(ClaimPlot),
}

/// A chart ready to render.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub title: String,
    /// Width and height in pixels.
    pub size: (u32, u32),
    pub data: ChartData,
}

/// (point_id, value) pairs of one result set.
type PointValues = Vec<(String, Option<f64>)>;

/// Files beyond this many share one grey "other files" series in extent charts.
pub const MAX_EXTENT_FILES: usize = 10;

/// The magnitude of a label such as `4096`, `4k`, `1024k`, `2GiB` or `0.5`: the number
/// times its unit (k/m/g/t as powers of 1024, with or without `iB`/`B`).
fn magnitude(label: &str) -> Option<f64> {
    let t = label.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().ok()?;
    let unit = unit.trim().to_ascii_lowercase();
    let unit = unit
        .strip_suffix("ib")
        .or_else(|| unit.strip_suffix('b'))
        .unwrap_or(&unit);
    let scale = match unit {
        "" => 1.0,
        "k" => 1024.0,
        "m" => 1024.0 * 1024.0,
        "g" => 1024.0 * 1024.0 * 1024.0,
        "t" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some(n * scale)
}

/// The indices of `labels` by magnitude, when every label has one (None otherwise).
fn magnitude_order(labels: &[String]) -> Option<Vec<usize>> {
    let m: Vec<f64> = labels.iter().map(|l| magnitude(l)).collect::<Option<_>>()?;
    let mut order: Vec<usize> = (0..labels.len()).collect();
    order.sort_by(|a, b| m[*a].total_cmp(&m[*b]));
    Some(order)
}

fn categorical_width(n: usize) -> u32 {
    (240 + 130 * n as u32).clamp(800, 2400)
}

/// Labels for points: the `key=value` pairs that are the same for every point are
/// dropped (`fs=ext4,size=4096`, `fs=xfs,size=4096` → `fs=ext4`, `fs=xfs`).
pub fn short_labels(ids: &[String]) -> Vec<String> {
    let split: Vec<Vec<&str>> = ids.iter().map(|id| id.split(',').collect()).collect();
    let common: Vec<&str> = match split.first() {
        Some(first) if ids.len() > 1 => first
            .iter()
            .copied()
            .filter(|kv| split.iter().all(|s| s.contains(kv)))
            .collect(),
        _ => Vec::new(),
    };
    split
        .iter()
        .zip(ids)
        .map(|(parts, id)| {
            let kept: Vec<&str> = parts
                .iter()
                .copied()
                .filter(|kv| !common.contains(kv))
                .collect();
            if kept.is_empty() {
                id.clone()
            } else {
                kept.join(",")
            }
        })
        .collect()
}

fn f64_col(df: &polars::prelude::DataFrame, name: &str) -> Result<Vec<Option<f64>>, PlotError> {
    Ok(frames::f64_values(df, "chart", name)?)
}

fn str_col(df: &polars::prelude::DataFrame, name: &str) -> Result<Vec<Option<String>>, PlotError> {
    Ok(frames::str_values(df, "chart", name)?)
}

impl Chart {
    /// Mean per point with its confidence interval as whiskers and the first iteration
    /// as a separate marker, from a per-point statistics frame (columns
    /// `point_id`, `metric`, `mean`, `ci_low`, `ci_high`, `ci_level`, `first`).
    pub fn mean_ci(stats: &polars::prelude::DataFrame) -> Result<Chart, PlotError> {
        let ids: Vec<String> = str_col(stats, "point_id")?
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect();
        let labels = short_labels(&ids);
        let means = f64_col(stats, "mean")?;
        let lows = f64_col(stats, "ci_low")?;
        let highs = f64_col(stats, "ci_high")?;
        let firsts = if stats.column("first").is_ok() {
            f64_col(stats, "first")?
        } else {
            vec![None; stats.height()]
        };
        let metric = if stats.column("metric").is_ok() {
            str_col(stats, "metric")?.into_iter().flatten().next()
        } else {
            None
        }
        .unwrap_or_else(|| "value".to_string());
        let ci_level = if stats.column("ci_level").is_ok() {
            f64_col(stats, "ci_level")?.into_iter().flatten().next()
        } else {
            None
        }
        .unwrap_or(0.95);
        let points: Vec<CiPoint> = labels
            .into_iter()
            .enumerate()
            .filter_map(|(i, label)| {
                Some(CiPoint {
                    label,
                    mean: means[i]?,
                    ci: lows[i].zip(highs[i]),
                    first: firsts[i],
                })
            })
            .collect();
        if points.is_empty() {
            return Err(PlotError::Empty("no point has a mean".into()));
        }
        Ok(Chart {
            title: format!(
                "{}: steady-state mean and {:.0}% CI per point",
                metric_label(&metric),
                ci_level * 100.0
            ),
            size: (categorical_width(points.len()), 600),
            data: ChartData::MeanCi {
                y_label: metric_label(&metric),
                ci_level,
                points,
            },
        })
    }

    /// The metric against the iteration number, one line per point, from a frame of the
    /// values to draw (columns `point_id`, `iteration`, `metric`; the iteration frame of
    /// the statistics module: ok iterations, points in plan order). Lines follow the
    /// first appearance of each point; a row with a null value names a point without
    /// drawing it (its label still counts when labels are shortened).
    pub fn iteration_lines(
        frame: &polars::prelude::DataFrame,
        metric: &str,
    ) -> Result<Chart, PlotError> {
        let ids = str_col(frame, "point_id")?;
        let iterations = f64_col(frame, "iteration")?;
        let values = f64_col(frame, metric)?;
        let mut names: Vec<String> = Vec::new();
        let mut points: Vec<Vec<(i64, f64)>> = Vec::new();
        for (i, id) in ids.into_iter().enumerate() {
            let id = id.unwrap_or_default();
            let k = names.iter().position(|n| *n == id).unwrap_or_else(|| {
                names.push(id);
                points.push(Vec::new());
                names.len() - 1
            });
            if let (Some(it), Some(v)) = (iterations[i], values[i]) {
                points[k].push((it as i64, v));
            }
        }
        let lines: Vec<IterationLine> = short_labels(&names)
            .into_iter()
            .zip(points)
            .map(|(name, points)| IterationLine { name, points })
            .filter(|l| !l.points.is_empty())
            .collect();
        if lines.is_empty() {
            return Err(PlotError::Empty(format!(
                "no ok iteration has a {metric} value"
            )));
        }
        Ok(Chart {
            title: format!("{} per iteration", metric_label(metric)),
            size: (1000, 600),
            data: ChartData::Iterations {
                y_label: metric_label(metric),
                lines,
            },
        })
    }

    /// Physical against logical offset of every extent, one colour per file, from an
    /// extents frame (columns `path`, `logical_bytes`, `physical_bytes`,
    /// `length_bytes`; rows without a physical offset are skipped).
    pub fn extents(extents: &polars::prelude::DataFrame) -> Result<Chart, PlotError> {
        let paths = str_col(extents, "path")?;
        let logical = f64_col(extents, "logical_bytes")?;
        let physical = f64_col(extents, "physical_bytes")?;
        let length = f64_col(extents, "length_bytes")?;
        let mut files: Vec<FileExtents> = Vec::new();
        for i in 0..extents.height() {
            let (Some(l), Some(p)) = (logical[i], physical[i]) else {
                continue;
            };
            let path = paths[i].clone().unwrap_or_default();
            let len = length[i].unwrap_or(0.0);
            match files.iter_mut().find(|f| f.path == path) {
                Some(f) => f.extents.push((l, p, len)),
                None => files.push(FileExtents {
                    path,
                    extents: vec![(l, p, len)],
                }),
            }
        }
        if files.is_empty() {
            return Err(PlotError::Empty("no extent has a physical location".into()));
        }
        Ok(Chart {
            title: "Extent layout: physical against logical offset".to_string(),
            size: (1000, 700),
            data: ChartData::Extents { files },
        })
    }

    /// Several result sets, each divided by its own value at `baseline` (a `point_id`),
    /// side by side per point. Each entry is (name, frame, value column); frames need
    /// `point_id`. Points are those of the first set, then any others. A set without
    /// rows (points that did not run here) is left out; a set with rows but no value at
    /// the baseline is an error.
    pub fn normalised(
        sets: &[(&str, &polars::prelude::DataFrame, &str)],
        baseline: &str,
    ) -> Result<Chart, PlotError> {
        let mut ids: Vec<String> = Vec::new();
        let mut columns: Vec<(String, PointValues)> = Vec::new();
        for (name, df, col) in sets.iter().filter(|(_, df, _)| df.height() > 0) {
            let pids = str_col(df, "point_id")?;
            let values = f64_col(df, col)?;
            let pairs: Vec<(String, Option<f64>)> = pids
                .into_iter()
                .map(Option::unwrap_or_default)
                .zip(values)
                .collect();
            for (id, _) in &pairs {
                if !ids.contains(id) {
                    ids.push(id.clone());
                }
            }
            columns.push((name.to_string(), pairs));
        }
        let mut series = Vec::new();
        for (name, pairs) in columns {
            let base = pairs
                .iter()
                .find(|(id, _)| id == baseline)
                .and_then(|(_, v)| *v)
                .filter(|v| *v != 0.0)
                .ok_or_else(|| {
                    PlotError::Data(format!(
                        "`{name}` has no non-zero value at the baseline point `{baseline}`"
                    ))
                })?;
            let ratios = ids
                .iter()
                .map(|id| {
                    pairs
                        .iter()
                        .find(|(p, _)| p == id)
                        .and_then(|(_, v)| *v)
                        .map(|v| v / base)
                })
                .collect();
            series.push(NormalisedSeries { name, ratios });
        }
        if series.is_empty() {
            return Err(PlotError::Empty("no result set".into()));
        }
        let labels = short_labels(&ids);
        let baseline_label = ids
            .iter()
            .position(|i| i == baseline)
            .map(|i| labels[i].clone())
            .unwrap_or_else(|| baseline.to_string());
        Ok(Chart {
            title: format!("Each result set relative to its own {baseline_label}"),
            size: (categorical_width(ids.len()), 600),
            data: ChartData::Normalised {
                baseline: baseline_label,
                labels,
                series,
            },
        })
    }

    /// Bars of `value` per `label` (along the x axis, in order of appearance), one
    /// colour per `series`, from a tidy frame with at most one row per (label, series):
    /// the values are drawn as they are (aggregate first, e.g. with
    /// the statistics module's `group_mean`). Series that look like point ids are shortened
    /// as on the other charts.
    pub fn grouped(
        df: &polars::prelude::DataFrame,
        label: &str,
        series: &str,
        value: &str,
    ) -> Result<Chart, PlotError> {
        let label_vals = str_col(df, label)?;
        let series_vals = str_col(df, series)?;
        let values = f64_col(df, value)?;
        let mut labels: Vec<String> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        let mut cells: Vec<(usize, usize, Option<f64>)> = Vec::new();
        for i in 0..df.height() {
            let l = label_vals[i].clone().unwrap_or_default();
            let s = series_vals[i].clone().unwrap_or_default();
            let li = labels.iter().position(|x| *x == l).unwrap_or_else(|| {
                labels.push(l.clone());
                labels.len() - 1
            });
            let si = names.iter().position(|x| *x == s).unwrap_or_else(|| {
                names.push(s.clone());
                names.len() - 1
            });
            if cells.iter().any(|(a, b, _)| *a == li && *b == si) {
                return Err(PlotError::Data(format!(
                    "more than one row for {label}={l}, {series}={s}: aggregate first"
                )));
            }
            cells.push((li, si, values[i]));
        }
        if cells.iter().all(|(_, _, v)| v.is_none()) {
            return Err(PlotError::Empty(format!("no row has a {value} value")));
        }
        // Labels that are all numbers or sizes (`4k`, `64k`, `1024k`) go in their order
        // of magnitude, not of first appearance; other labels keep their order.
        if let Some(order) = magnitude_order(&labels) {
            let rank: Vec<usize> = {
                let mut r = vec![0; order.len()];
                for (new, old) in order.iter().enumerate() {
                    r[*old] = new;
                }
                r
            };
            labels = order.iter().map(|i| labels[*i].clone()).collect();
            for c in &mut cells {
                c.0 = rank[c.0];
            }
        }
        let series_out: Vec<GroupedSeries> = short_labels(&names)
            .into_iter()
            .enumerate()
            .map(|(si, name)| GroupedSeries {
                name,
                values: (0..labels.len())
                    .map(|li| {
                        cells
                            .iter()
                            .find(|(a, b, _)| *a == li && *b == si)
                            .and_then(|(_, _, v)| *v)
                    })
                    .collect(),
            })
            .collect();
        Ok(Chart {
            title: format!("{} per {label}", metric_label(value)),
            size: (
                categorical_width(labels.len() * series_out.len().max(1) / 2 + 1),
                600,
            ),
            data: ChartData::Grouped {
                x_label: label.replace('_', " "),
                y_label: metric_label(value),
                labels,
                series: series_out,
            },
        })
    }

    /// Every iteration of every point as a dot over a box plot of the steady state,
    /// warm-up and outliers marked apart, from a frame of the iterations and their roles
    /// (the distribution frame of the statistics module: columns `point_id`, `value`,
    /// `role` (`steady`, `warm-up`, `outlier`), each point's box `q1`, `median`, `q3`,
    /// `whisker_low`, `whisker_high`, and `metric`, `outlier_threshold`). Points follow
    /// their first appearance.
    pub fn distribution_of(frame: &polars::prelude::DataFrame) -> Result<Chart, PlotError> {
        let ids = str_col(frame, "point_id")?;
        let values = f64_col(frame, "value")?;
        let roles = str_col(frame, "role")?;
        let boxes =
            ["q1", "median", "q3", "whisker_low", "whisker_high"].map(|c| f64_col(frame, c));
        let [q1, median, q3, low, high] = boxes;
        let (q1, median, q3, low, high) = (q1?, median?, q3?, low?, high?);
        let metric = str_col(frame, "metric")?
            .into_iter()
            .flatten()
            .next()
            .unwrap_or_else(|| "value".to_string());
        let threshold = f64_col(frame, "outlier_threshold")?
            .into_iter()
            .flatten()
            .next()
            .unwrap_or(f64::NAN);
        let mut ids_seen: Vec<String> = Vec::new();
        let mut groups: Vec<DistributionGroup> = Vec::new();
        for (i, id) in ids.into_iter().enumerate() {
            let id = id.unwrap_or_default();
            let k = ids_seen.iter().position(|n| *n == id).unwrap_or_else(|| {
                ids_seen.push(id);
                groups.push(DistributionGroup {
                    label: String::new(),
                    steady: Vec::new(),
                    warmup: Vec::new(),
                    outliers: Vec::new(),
                    boxplot: match (q1[i], median[i], q3[i], low[i], high[i]) {
                        (Some(a), Some(b), Some(c), Some(d), Some(e)) => Some([a, b, c, d, e]),
                        _ => None,
                    },
                });
                ids_seen.len() - 1
            });
            let Some(v) = values[i] else { continue };
            let g = &mut groups[k];
            match roles[i].as_deref() {
                Some("warm-up") => g.warmup.push(v),
                Some("outlier") => g.outliers.push(v),
                _ => g.steady.push(v),
            }
        }
        for (g, label) in groups.iter_mut().zip(short_labels(&ids_seen)) {
            g.label = label;
        }
        if groups
            .iter()
            .all(|g| g.steady.is_empty() && g.warmup.is_empty() && g.outliers.is_empty())
        {
            return Err(PlotError::Empty(format!(
                "no ok iteration has a {metric} value"
            )));
        }
        Ok(Chart {
            title: format!("{}: every iteration per point", metric_label(&metric)),
            size: (categorical_width(groups.len()), 600),
            data: ChartData::Distribution {
                y_label: metric_label(&metric),
                threshold,
                groups,
            },
        })
    }

    /// Replace the title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = title.into();
        self
    }

    /// Replace the size in pixels.
    pub fn with_size(mut self, width: u32, height: u32) -> Self {
        self.size = (width, height);
        self
    }

    /// The legend entries the chart draws, in order.
    pub fn series_names(&self) -> Vec<String> {
        match &self.data {
            ChartData::MeanCi {
                points, ci_level, ..
            } => {
                let mut v = vec![format!("mean, {:.0}% CI", ci_level * 100.0)];
                if points.iter().any(|p| p.first.is_some()) {
                    v.push("first iteration".into());
                }
                v
            }
            ChartData::Iterations { lines, .. } => lines.iter().map(|l| l.name.clone()).collect(),
            ChartData::Extents { files } => {
                let mut v: Vec<String> = files
                    .iter()
                    .take(MAX_EXTENT_FILES)
                    .map(|f| f.path.clone())
                    .collect();
                if files.len() > MAX_EXTENT_FILES {
                    v.push(format!("{} other files", files.len() - MAX_EXTENT_FILES));
                }
                v
            }
            ChartData::Normalised { series, .. } => series.iter().map(|s| s.name.clone()).collect(),
            ChartData::Grouped { series, .. } => series.iter().map(|s| s.name.clone()).collect(),
            ChartData::Io { traces } => io::series_names(traces),
            ChartData::Claim(p) => claim::series_names(p),
            ChartData::Distribution {
                groups, threshold, ..
            } => {
                let mut v = vec!["steady state".to_string()];
                if groups.iter().any(|g| !g.warmup.is_empty()) {
                    v.push("warm-up".into());
                }
                if groups.iter().any(|g| !g.outliers.is_empty()) {
                    v.push(format!("outlier (|M| > {threshold})"));
                }
                v
            }
        }
    }

    /// Render as an SVG document.
    pub fn to_svg(&self) -> Result<String, PlotError> {
        fonts::ensure()?;
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, self.size).into_drawing_area();
            draw::draw(self, &root).map_err(|e| PlotError::Draw(e.to_string()))?;
            root.present().map_err(|e| PlotError::Draw(e.to_string()))?;
        }
        Ok(out)
    }

    /// Write an SVG file.
    pub fn save_svg(&self, path: &Path) -> Result<(), PlotError> {
        let svg = self.to_svg()?;
        std::fs::write(path, svg).map_err(|source| PlotError::Io {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Write a PNG file (RGB, `size` pixels).
    pub fn save_png(&self, path: &Path) -> Result<(), PlotError> {
        fonts::ensure()?;
        let root = BitMapBackend::new(path, self.size).into_drawing_area();
        draw::draw(self, &root).map_err(|e| PlotError::Draw(e.to_string()))?;
        root.present()
            .map_err(|e| PlotError::Draw(format!("{}: {e}", path.display())))
    }

    /// Write `.svg` or `.png` according to the file extension.
    pub fn save(&self, path: &Path) -> Result<(), PlotError> {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("svg") => self.save_svg(path),
            Some("png") => self.save_png(path),
            _ => Err(PlotError::Format(path.to_path_buf())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_drop_what_all_points_share() {
        let ids = vec![
            "fs=ext4,size=4096".to_string(),
            "fs=xfs,size=4096".to_string(),
        ];
        assert_eq!(short_labels(&ids), ["fs=ext4", "fs=xfs"]);
        let one = vec!["fs=ext4".to_string()];
        assert_eq!(short_labels(&one), ["fs=ext4"]);
        let same = vec!["a=1".to_string(), "a=1".to_string()];
        assert_eq!(short_labels(&same), ["a=1", "a=1"]);
    }

    /// Sizes as x labels (seed 003's rtextsize, as the runs met them: 1024k, 8k, 4k) go
    /// from small to large, each bar with its own value; words keep their order.
    #[test]
    fn grouped_bars_put_sizes_in_order_of_magnitude() {
        use polars::prelude::*;
        let df = df!(
            "rtextsize" => ["1024k", "8k", "4k", "64k", "1024k"],
            "point_id" => ["rt", "rt", "rt", "rt", "hint"],
            "wall_s" => [Some(9.0), Some(2.0), Some(1.0), Some(4.0), Some(0.5)],
        )
        .unwrap();
        let c = Chart::grouped(&df, "rtextsize", "point_id", "wall_s").unwrap();
        let ChartData::Grouped { labels, series, .. } = &c.data else {
            panic!("{c:?}")
        };
        assert_eq!(labels, &["4k", "8k", "64k", "1024k"]);
        assert_eq!(
            series[0].values,
            [Some(1.0), Some(2.0), Some(4.0), Some(9.0)]
        );
        assert_eq!(series[1].values, [None, None, None, Some(0.5)]);
        assert_eq!(magnitude("2GiB"), Some(2.0 * 1024.0 * 1024.0 * 1024.0));
        assert_eq!(magnitude("4096"), Some(4096.0));
        assert_eq!(magnitude("ext4"), None);
        assert_eq!(magnitude_order(&["b".into(), "a".into()]), None);
    }

    #[test]
    fn grouped_bars_keep_the_order_of_appearance() {
        use polars::prelude::*;
        let df = df!(
            "pass" => ["1", "2", "1", "2", "3"],
            "point_id" => ["fs=ext3", "fs=ext3", "fs=ext4", "fs=ext4", "fs=ext4"],
            "real_s" => [Some(0.3), Some(0.1), Some(0.2), None, Some(0.05)],
        )
        .unwrap();
        let c = Chart::grouped(&df, "pass", "point_id", "real_s").unwrap();
        let ChartData::Grouped {
            labels,
            series,
            x_label,
            ..
        } = &c.data
        else {
            panic!("{c:?}")
        };
        assert_eq!(labels, &["1", "2", "3"]);
        assert_eq!(x_label, "pass");
        assert_eq!(series[0].name, "fs=ext3");
        assert_eq!(series[0].values, [Some(0.3), Some(0.1), None]);
        assert_eq!(series[1].values, [Some(0.2), None, Some(0.05)]);
        assert_eq!(c.series_names(), ["fs=ext3", "fs=ext4"]);
        let svg = c.to_svg().unwrap();
        assert!(svg.contains("fs=ext4") && svg.contains("<rect"));
        // Two rows for one bar: the caller has to aggregate.
        let dup = df!("l" => ["a", "a"], "s" => ["x", "x"], "v" => [1.0, 2.0]).unwrap();
        assert!(matches!(
            Chart::grouped(&dup, "l", "s", "v"),
            Err(PlotError::Data(_))
        ));
        let none = df!("l" => ["a"], "s" => ["x"], "v" => [None::<f64>]).unwrap();
        assert!(matches!(
            Chart::grouped(&none, "l", "s", "v"),
            Err(PlotError::Empty(_))
        ));
    }

    #[test]
    fn normalised_leaves_out_sets_without_rows() {
        use polars::prelude::*;
        let a = df!("point_id" => ["k=1", "k=2"], "v" => [2.0, 3.0]).unwrap();
        let empty = a.clear();
        let c = Chart::normalised(&[("a", &a, "v"), ("none here", &empty, "v")], "k=1").unwrap();
        assert_eq!(c.series_names(), ["a"]);
        let ChartData::Normalised { series, .. } = &c.data else {
            panic!("{c:?}")
        };
        assert_eq!(series[0].ratios, [Some(1.0), Some(1.5)]);
        // Rows but no baseline value: an error, as before.
        let b = df!("point_id" => ["k=2"], "v" => [1.0]).unwrap();
        assert!(Chart::normalised(&[("a", &a, "v"), ("b", &b, "v")], "k=1").is_err());
        assert!(Chart::normalised(&[("none", &empty, "v")], "k=1").is_err());
    }
}
