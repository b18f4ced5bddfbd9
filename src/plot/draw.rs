//! Drawing each chart kind on any plotters backend (SVG string or PNG file).

use super::fonts::FAMILY;
use super::MAX_EXTENT_FILES;
use super::{
    Chart, ChartData, CiPoint, DistributionGroup, FileExtents, GroupedSeries, IterationLine,
    NormalisedSeries,
};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub(super) type DrawResult<DB> =
    Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Tableau 10: distinct, colour-blind friendly, readable on white.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4E, 0x79, 0xA7),
    RGBColor(0xF2, 0x8E, 0x2B),
    RGBColor(0xE1, 0x57, 0x59),
    RGBColor(0x76, 0xB7, 0xB2),
    RGBColor(0x59, 0xA1, 0x4F),
    RGBColor(0xED, 0xC9, 0x48),
    RGBColor(0xB0, 0x7A, 0xA1),
    RGBColor(0xFF, 0x9D, 0xA7),
    RGBColor(0x9C, 0x75, 0x5F),
    RGBColor(0xBA, 0xB0, 0xAC),
];
pub(super) const INK: RGBColor = RGBColor(0x33, 0x33, 0x33);
const OTHER: RGBColor = RGBColor(0xB0, 0xB0, 0xB0);

pub(super) fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

// plotters draws SVG text at size / 1.24 px.
pub(super) const CAPTION: u32 = 27;
pub(super) const LABEL: u32 = 18;
pub(super) const DESC: u32 = 20;
pub(super) const LEGEND: u32 = 18;
const VALUE: u32 = 16;
pub(super) const GRID: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);
pub(super) const GRID_LIGHT: RGBColor = RGBColor(0xF4, 0xF4, 0xF4);

/// A chart with one category per label along x and values along y, in fslab's style
/// (caption, areas, fonts, grid). The mesh is drawn; series are the caller's.
#[allow(clippy::type_complexity)]
fn category_chart<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    title: &str,
    labels: &[String],
    y: std::ops::Range<f64>,
    x_desc: &str,
    y_desc: &str,
) -> Result<
    ChartContext<'a, DB, Cartesian2d<FixedTicks, plotters::coord::types::RangedCoordf64>>,
    DrawingAreaErrorKind<DB::ErrorType>,
> {
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FAMILY, CAPTION))
        .margin(20)
        .x_label_area_size(55)
        .y_label_area_size(85)
        .build_cartesian_2d(FixedTicks::categories(labels.len()), y)?;
    let fmt = |x: &f64| category_label(labels, *x);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&fmt)
        .y_label_formatter(&tick)
        .label_style((FAMILY, LABEL))
        .axis_desc_style((FAMILY, DESC))
        .bold_line_style(GRID)
        .light_line_style(GRID_LIGHT)
        .draw()?;
    Ok(chart)
}

pub(super) fn draw<DB: DrawingBackend>(
    chart: &Chart,
    root: &DrawingArea<DB, Shift>,
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    match &chart.data {
        ChartData::MeanCi {
            y_label,
            points,
            ci_level,
        } => mean_ci(root, &chart.title, y_label, *ci_level, points),
        ChartData::Iterations { y_label, lines } => iterations(root, &chart.title, y_label, lines),
        ChartData::Extents { files } => extents(root, &chart.title, files),
        ChartData::Normalised {
            baseline,
            labels,
            series,
        } => normalised(root, &chart.title, baseline, labels, series),
        ChartData::Distribution {
            y_label,
            threshold,
            groups,
        } => distribution(root, &chart.title, y_label, *threshold, groups),
        ChartData::Grouped {
            x_label,
            y_label,
            labels,
            series,
        } => grouped(root, &chart.title, x_label, y_label, labels, series),
        ChartData::Io { traces } => super::io::draw(root, &chart.title, traces),
        ChartData::Claim(p) => super::claim::draw(root, &chart.title, p),
    }
}

/// A value range with 5 % padding; from zero when `zero_based` and all values are
/// non-negative.
pub(super) fn value_range(values: impl IntoIterator<Item = f64>, zero_based: bool) -> (f64, f64) {
    let (mut lo, mut hi) = values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if zero_based && lo >= 0.0 {
        lo = 0.0;
    }
    if hi <= lo {
        let d = if hi == 0.0 { 1.0 } else { hi.abs() * 0.1 };
        hi += d;
        if !(zero_based && lo == 0.0) {
            lo -= d;
        }
    }
    let pad = (hi - lo) * 0.05;
    let lo = if zero_based && lo == 0.0 {
        0.0
    } else {
        lo - pad
    };
    (lo, hi + pad)
}

/// Axis tick text: at most 6 decimals, trailing zeros trimmed.
pub(super) fn tick(v: &f64) -> String {
    let r = (v * 1e6).round() / 1e6;
    if r == 0.0 {
        "0".to_string()
    } else {
        format!("{r}")
    }
}

/// A linear f64 axis whose ticks are exactly the given values (categories at 0..n,
/// iteration numbers).
#[derive(Clone)]
pub(super) struct FixedTicks {
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) keys: Vec<f64>,
}

impl FixedTicks {
    fn categories(n: usize) -> Self {
        FixedTicks {
            lo: -0.5,
            hi: n.max(1) as f64 - 0.5,
            keys: (0..n).map(|i| i as f64).collect(),
        }
    }
}

impl Ranged for FixedTicks {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.hi - self.lo;
        if span <= 0.0 {
            return (limit.0 + limit.1) / 2;
        }
        let t = (value - self.lo) / span;
        limit.0 + (t * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.keys.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

pub(super) fn category_label(labels: &[String], x: f64) -> String {
    let i = x.round();
    if (x - i).abs() > 1e-6 || i < 0.0 {
        return String::new();
    }
    labels.get(i as usize).cloned().unwrap_or_default()
}

pub(super) fn legend_box<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    position: SeriesLabelPosition,
) -> DrawResult<DB>
where
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    chart
        .configure_series_labels()
        .label_font((FAMILY, LEGEND))
        .background_style(WHITE.mix(0.85))
        .border_style(INK.mix(0.5))
        .position(position)
        .draw()
}

/// The plot corner whose region (35 % of the width, 30 % of the height) holds the fewest
/// data points, for the legend; upper right on a tie.
fn quiet_corner(
    points: impl IntoIterator<Item = (f64, f64)>,
    x: (f64, f64),
    y: (f64, f64),
) -> SeriesLabelPosition {
    let corners = [
        (SeriesLabelPosition::UpperRight, true, true),
        (SeriesLabelPosition::UpperLeft, false, true),
        (SeriesLabelPosition::LowerRight, true, false),
        (SeriesLabelPosition::LowerLeft, false, false),
    ];
    let mut counts = [0usize; 4];
    let (w, h) = (x.1 - x.0, y.1 - y.0);
    for (px, py) in points {
        for (i, (_, right, upper)) in corners.iter().enumerate() {
            let in_x = if *right {
                px >= x.1 - 0.35 * w
            } else {
                px <= x.0 + 0.35 * w
            };
            let in_y = if *upper {
                py >= y.1 - 0.3 * h
            } else {
                py <= y.0 + 0.3 * h
            };
            if in_x && in_y {
                counts[i] += 1;
            }
        }
    }
    let best = (0..4).min_by_key(|i| (counts[*i], *i)).unwrap_or(0);
    corners[best].0.clone()
}

/// Where a mean/CI chart's axis and whiskers stop: zero when every mean and first value is
/// non-negative (times, sizes, counts), since a wide t interval of few samples can reach
/// below zero, which such a quantity cannot; None (no floor) otherwise.
fn ci_floor(points: &[CiPoint]) -> Option<f64> {
    points
        .iter()
        .all(|p| p.mean >= 0.0 && p.first.is_none_or(|f| f >= 0.0))
        .then_some(0.0)
}

fn mean_ci<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    y_label: &str,
    ci_level: f64,
    points: &[CiPoint],
) -> DrawResult<DB> {
    let n = points.len();
    let labels: Vec<String> = points.iter().map(|p| p.label.clone()).collect();
    let floor = ci_floor(points);
    let clip = |v: f64| floor.map_or(v, |f| v.max(f));
    let (y0, y1) = value_range(
        points.iter().flat_map(|p| {
            [
                Some(p.mean),
                p.ci.map(|c| clip(c.0)),
                p.ci.map(|c| c.1),
                p.first,
            ]
            .into_iter()
            .flatten()
        }),
        false,
    );
    let y0 = floor.map_or(y0, |f| y0.max(f));
    let mut chart = category_chart(root, title, &labels, y0..y1, "point", y_label)?;
    let c = color(0);
    let whisker = c.stroke_width(2);
    chart.draw_series(points.iter().enumerate().flat_map(|(i, p)| {
        let x = i as f64;
        p.ci.map(|(lo, hi)| {
            let cut = clip(lo);
            let mut v = vec![
                PathElement::new(vec![(x, cut), (x, hi)], whisker),
                PathElement::new(vec![(x - 0.08, hi), (x + 0.08, hi)], whisker),
            ];
            // A whisker cut at zero has no cap there: the interval goes on below.
            if cut == lo {
                v.push(PathElement::new(
                    vec![(x - 0.08, lo), (x + 0.08, lo)],
                    whisker,
                ));
            }
            v
        })
        .unwrap_or_default()
    }))?;
    chart
        .draw_series(
            points
                .iter()
                .enumerate()
                .map(|(i, p)| Circle::new((i as f64, p.mean), 6, c.filled())),
        )?
        .label(format!("mean, {:.0}% CI", ci_level * 100.0))
        .legend(move |(x, y)| Circle::new((x + 10, y), 6, c.filled()));
    if points.iter().any(|p| p.first.is_some()) {
        let f = color(1);
        chart
            .draw_series(points.iter().enumerate().filter_map(|(i, p)| {
                p.first
                    .map(|v| TriangleMarker::new((i as f64 + 0.12, v), 8, f.filled()))
            }))?
            .label("first iteration")
            .legend(move |(x, y)| TriangleMarker::new((x + 10, y), 8, f.filled()));
    }
    let corner = quiet_corner(
        points.iter().enumerate().flat_map(|(i, p)| {
            let x = i as f64;
            [Some(p.mean), p.ci.map(|c| c.0), p.ci.map(|c| c.1), p.first]
                .into_iter()
                .flatten()
                .map(move |v| (x, v))
        }),
        (-0.5, n as f64 - 0.5),
        (y0, y1),
    );
    legend_box(&mut chart, corner)
}

fn iterations<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    y_label: &str,
    lines: &[IterationLine],
) -> DrawResult<DB> {
    let max_it = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .max()
        .unwrap_or(1)
        .max(1);
    let min_it = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .min()
        .unwrap_or(1)
        .min(max_it);
    let step = ((max_it - min_it) / 15 + 1).max(1);
    let keys: Vec<f64> = (min_it..=max_it)
        .step_by(step as usize)
        .map(|i| i as f64)
        .collect();
    let (y0, y1) = value_range(
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)),
        false,
    );
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FAMILY, CAPTION))
        .margin(20)
        .x_label_area_size(55)
        .y_label_area_size(85)
        .build_cartesian_2d(
            FixedTicks {
                lo: min_it as f64 - 0.5,
                hi: max_it as f64 + 0.5,
                keys,
            },
            y0..y1,
        )?;
    chart
        .configure_mesh()
        .x_desc("iteration")
        .y_desc(y_label)
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .label_style((FAMILY, LABEL))
        .axis_desc_style((FAMILY, DESC))
        .bold_line_style(GRID)
        .light_line_style(GRID_LIGHT)
        .draw()?;
    for (i, line) in lines.iter().enumerate() {
        let c = color(i);
        let pts: Vec<(f64, f64)> = line.points.iter().map(|(x, y)| (*x as f64, *y)).collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))?
            .label(line.name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3)));
        chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 4, c.filled())))?;
    }
    let corner = quiet_corner(
        lines
            .iter()
            .flat_map(|l| l.points.iter().map(|(x, y)| (*x as f64, *y))),
        (min_it as f64 - 0.5, max_it as f64 + 0.5),
        (y0, y1),
    );
    legend_box(&mut chart, corner)
}

/// A binary unit for a byte count: (divisor, name).
fn byte_unit(max: f64) -> (f64, &'static str) {
    const KIB: f64 = 1024.0;
    if max >= KIB * KIB * KIB * 4.0 {
        (KIB * KIB * KIB, "GiB")
    } else if max >= KIB * KIB * 4.0 {
        (KIB * KIB, "MiB")
    } else if max >= KIB * 4.0 {
        (KIB, "KiB")
    } else {
        (1.0, "B")
    }
}

fn extents<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    files: &[FileExtents],
) -> DrawResult<DB> {
    let all = || files.iter().flat_map(|f| f.extents.iter());
    let max_l = all().map(|(l, _, n)| l + n).fold(0.0, f64::max);
    let max_p = all().map(|(_, p, n)| p + n).fold(0.0, f64::max);
    let (dx, ux) = byte_unit(max_l);
    let (dy, uy) = byte_unit(max_p);
    let (x0, x1) = value_range(all().flat_map(|(l, _, n)| [l / dx, (l + n) / dx]), true);
    let (y0, y1) = value_range(all().flat_map(|(_, p, n)| [p / dy, (p + n) / dy]), false);
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FAMILY, CAPTION))
        .margin(20)
        .x_label_area_size(55)
        .y_label_area_size(95)
        .build_cartesian_2d(x0..x1, y0..y1)?;
    chart
        .configure_mesh()
        .x_desc(format!("logical offset in file ({ux})"))
        .y_desc(format!("physical offset on device ({uy})"))
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .label_style((FAMILY, LABEL))
        .axis_desc_style((FAMILY, DESC))
        .bold_line_style(GRID)
        .light_line_style(GRID_LIGHT)
        .draw()?;
    let segments = |f: &FileExtents, c: RGBColor| {
        f.extents
            .iter()
            .map(|(l, p, n)| {
                PathElement::new(
                    vec![(l / dx, p / dy), ((l + n) / dx, (p + n) / dy)],
                    c.stroke_width(3),
                )
            })
            .collect::<Vec<_>>()
    };
    let starts = |f: &FileExtents, c: RGBColor| {
        f.extents
            .iter()
            .map(|(l, p, _)| Circle::new((l / dx, p / dy), 3, c.filled()))
            .collect::<Vec<_>>()
    };
    for (i, f) in files.iter().take(MAX_EXTENT_FILES).enumerate() {
        let c = color(i);
        chart
            .draw_series(segments(f, c))?
            .label(f.path.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3)));
        chart.draw_series(starts(f, c))?;
    }
    if files.len() > MAX_EXTENT_FILES {
        let rest = &files[MAX_EXTENT_FILES..];
        let mut first = true;
        for f in rest {
            let series = chart.draw_series(segments(f, OTHER))?;
            if first {
                series
                    .label(format!("{} other files", rest.len()))
                    .legend(|(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], OTHER.stroke_width(3))
                    });
                first = false;
            }
            chart.draw_series(starts(f, OTHER))?;
        }
    }
    let corner = quiet_corner(
        all().flat_map(|(l, p, n)| [(l / dx, p / dy), ((l + n) / dx, (p + n) / dy)]),
        (x0, x1),
        (y0, y1),
    );
    legend_box(&mut chart, corner)
}

fn normalised<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    baseline: &str,
    labels: &[String],
    series: &[NormalisedSeries],
) -> DrawResult<DB> {
    let bars: Vec<(&str, &[Option<f64>])> = series
        .iter()
        .map(|s| (s.name.as_str(), s.ratios.as_slice()))
        .collect();
    let y_desc = format!("relative to {baseline} (×)");
    bar_chart(
        root,
        title,
        "point",
        &y_desc,
        labels,
        &bars,
        Some(1.0),
        |r| format!("{r:.2}"),
    )
}

fn grouped<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    labels: &[String],
    series: &[GroupedSeries],
) -> DrawResult<DB> {
    let bars: Vec<(&str, &[Option<f64>])> = series
        .iter()
        .map(|s| (s.name.as_str(), s.values.as_slice()))
        .collect();
    bar_chart(root, title, x_label, y_label, labels, &bars, None, |v| {
        let s = crate::labels::fmt_sig(v, 3);
        if s.contains('.') && !s.contains('e') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    })
}

/// Bars per category, the series side by side, each bar with its value above it; an
/// optional horizontal reference line (1.0 on normalised charts).
#[allow(clippy::too_many_arguments)]
fn bar_chart<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    labels: &[String],
    series: &[(&str, &[Option<f64>])],
    reference: Option<f64>,
    value_text: impl Fn(f64) -> String,
) -> DrawResult<DB> {
    let n = labels.len();
    let k = series.len().max(1);
    let (_, y1) = value_range(
        series
            .iter()
            .flat_map(|(_, v)| v.iter().flatten().copied())
            .chain(reference),
        true,
    );
    let y1 = y1 * 1.06; // room for the value labels above the bars
    let mut chart = category_chart(root, title, labels, 0.0..y1, x_desc, y_desc)?;
    if let Some(r) = reference {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(-0.5, r), (n as f64 - 0.5, r)],
            INK.stroke_width(1),
        )))?;
    }
    let width = 0.8 / k as f64;
    let value_style =
        TextStyle::from((FAMILY, VALUE).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom));
    for (s_i, (name, values)) in series.iter().enumerate() {
        let c = color(s_i);
        let x_of = |i: usize| i as f64 - 0.4 + s_i as f64 * width;
        chart
            .draw_series(values.iter().enumerate().filter_map(|(i, r)| {
                r.map(|r| {
                    Rectangle::new(
                        [(x_of(i) + 0.01, 0.0), (x_of(i) + width - 0.01, r)],
                        c.filled(),
                    )
                })
            }))?
            .label(name.to_string())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 16, y + 6)], c.filled()));
        chart.draw_series(values.iter().enumerate().filter_map(|(i, r)| {
            r.map(|r| {
                Text::new(
                    value_text(r),
                    (x_of(i) + width / 2.0, r),
                    value_style.clone(),
                )
            })
        }))?;
    }
    let corner = quiet_corner(
        series.iter().enumerate().flat_map(|(s_i, (_, values))| {
            // A bar covers its whole height.
            values.iter().enumerate().flat_map(move |(i, r)| {
                let x = i as f64 - 0.4 + (s_i as f64 + 0.5) * width;
                r.map(|r| [(x, r), (x, r * 0.5), (x, 0.0)])
                    .into_iter()
                    .flatten()
            })
        }),
        (-0.5, n as f64 - 0.5),
        (0.0, y1),
    );
    legend_box(&mut chart, corner)
}

/// Deterministic horizontal jitter in [−0.17, 0.17] for the k-th dot of a group.
fn jitter(k: usize) -> f64 {
    ((k as f64 * 0.618_033_988_75).fract() - 0.5) * 0.34
}

fn distribution<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    y_label: &str,
    threshold: f64,
    groups: &[DistributionGroup],
) -> DrawResult<DB> {
    let n = groups.len();
    let labels: Vec<String> = groups.iter().map(|g| g.label.clone()).collect();
    let (y0, y1) = value_range(
        groups
            .iter()
            .flat_map(|g| g.steady.iter().chain(&g.warmup).chain(&g.outliers).copied()),
        false,
    );
    let mut chart = category_chart(root, title, &labels, y0..y1, "point", y_label)?;
    // Boxes first, dots over them.
    let box_style = INK.stroke_width(2);
    chart.draw_series(groups.iter().enumerate().flat_map(|(i, g)| {
        let x = i as f64;
        g.boxplot
            .map(|[q1, med, q3, lo, hi]| {
                vec![
                    PathElement::new(
                        vec![
                            (x - 0.28, q1),
                            (x + 0.28, q1),
                            (x + 0.28, q3),
                            (x - 0.28, q3),
                            (x - 0.28, q1),
                        ],
                        box_style,
                    ),
                    PathElement::new(vec![(x - 0.28, med), (x + 0.28, med)], INK.stroke_width(4)),
                    PathElement::new(vec![(x, q3), (x, hi)], box_style),
                    PathElement::new(vec![(x, q1), (x, lo)], box_style),
                    PathElement::new(vec![(x - 0.1, hi), (x + 0.1, hi)], box_style),
                    PathElement::new(vec![(x - 0.1, lo), (x + 0.1, lo)], box_style),
                ]
            })
            .unwrap_or_default()
    }))?;
    let steady = color(0);
    chart
        .draw_series(groups.iter().enumerate().flat_map(|(i, g)| {
            g.steady.iter().enumerate().map(move |(k, v)| {
                Circle::new((i as f64 + jitter(k), *v), 5, steady.mix(0.8).filled())
            })
        }))?
        .label("steady state")
        .legend(move |(x, y)| Circle::new((x + 10, y), 5, steady.filled()));
    if groups.iter().any(|g| !g.warmup.is_empty()) {
        let c = color(1);
        chart
            .draw_series(groups.iter().enumerate().flat_map(|(i, g)| {
                g.warmup
                    .iter()
                    .map(move |v| TriangleMarker::new((i as f64 + 0.22, *v), 8, c.filled()))
            }))?
            .label("warm-up")
            .legend(move |(x, y)| TriangleMarker::new((x + 10, y), 8, c.filled()));
    }
    if groups.iter().any(|g| !g.outliers.is_empty()) {
        let c = color(2);
        chart
            .draw_series(groups.iter().enumerate().flat_map(|(i, g)| {
                g.outliers.iter().enumerate().map(move |(k, v)| {
                    Cross::new((i as f64 + jitter(k + 7), *v), 7, c.stroke_width(3))
                })
            }))?
            .label(format!("outlier (|M| > {threshold})"))
            .legend(move |(x, y)| Cross::new((x + 10, y), 7, c.stroke_width(3)));
    }
    let corner = quiet_corner(
        groups.iter().enumerate().flat_map(|(i, g)| {
            let x = i as f64;
            g.steady
                .iter()
                .chain(&g.warmup)
                .chain(&g.outliers)
                .copied()
                .chain(g.boxplot.iter().flat_map(|b| b.iter().copied()))
                .map(move |v| (x, v))
        }),
        (-0.5, n as f64 - 0.5),
        (y0, y1),
    );
    legend_box(&mut chart, corner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_pad_and_start_at_zero_for_positive_values() {
        assert_eq!(value_range([10.0, 20.0], true), (0.0, 21.0));
        let (lo, hi) = value_range([10.0, 20.0], false);
        assert!((lo - 9.5).abs() < 1e-12 && (hi - 20.5).abs() < 1e-12);
        assert_eq!(value_range(Vec::<f64>::new(), true), (0.0, 1.0));
        let (lo, hi) = value_range([5.0, 5.0], false);
        assert!(lo < 5.0 && hi > 5.0);
    }

    #[test]
    fn legend_goes_to_the_emptiest_corner() {
        let pos = |pts: &[(f64, f64)]| quiet_corner(pts.iter().copied(), (0.0, 10.0), (0.0, 10.0));
        assert!(matches!(pos(&[]), SeriesLabelPosition::UpperRight));
        assert!(matches!(pos(&[(9.0, 9.0)]), SeriesLabelPosition::UpperLeft));
        assert!(matches!(
            pos(&[(9.0, 9.0), (1.0, 9.0)]),
            SeriesLabelPosition::LowerRight
        ));
        assert!(matches!(
            pos(&[(9.0, 9.0), (1.0, 9.0), (9.0, 1.0)]),
            SeriesLabelPosition::LowerLeft
        ));
    }

    #[test]
    fn ci_whiskers_of_non_negative_quantities_stop_at_zero() {
        let p = |mean: f64, first: Option<f64>| CiPoint {
            label: "a".into(),
            mean,
            ci: Some((mean - 3.0, mean + 3.0)),
            first,
        };
        assert_eq!(ci_floor(&[p(1.0, None), p(10.0, Some(12.0))]), Some(0.0));
        assert_eq!(
            ci_floor(&[p(1.0, None), p(-0.5, None)]),
            None,
            "a negative mean"
        );
        assert_eq!(
            ci_floor(&[p(1.0, Some(-1.0))]),
            None,
            "a negative first value"
        );
        // The chart of a 2-sample point whose interval reaches below zero: no negative tick.
        let svg = |point: CiPoint| {
            Chart {
                title: "t".into(),
                size: (400, 300),
                data: ChartData::MeanCi {
                    y_label: "seconds".into(),
                    ci_level: 0.95,
                    points: vec![point],
                },
            }
            .to_svg()
            .unwrap()
        };
        // y tick labels: the text after each right-aligned <text> element.
        let negative_ticks = |svg: &str| {
            let lines: Vec<&str> = svg.lines().collect();
            lines
                .windows(2)
                .filter(|w| w[0].contains("text-anchor=\"end\""))
                .filter(|w| w[1].trim_start().starts_with('-'))
                .count()
        };
        let s = svg(p(1.0, None));
        assert_eq!(negative_ticks(&s), 0, "negative tick label in {s}");
        assert!(
            negative_ticks(&svg(p(-0.5, None))) > 0,
            "signed quantities keep their negative axis"
        );
    }

    #[test]
    fn ticks_and_units() {
        assert_eq!(tick(&0.30000000000000004), "0.3");
        assert_eq!(tick(&14.0), "14");
        assert_eq!(byte_unit(10.0 * 1024.0 * 1024.0), (1024.0 * 1024.0, "MiB"));
        assert_eq!(byte_unit(100.0), (1.0, "B"));
        assert_eq!(category_label(&["a".into(), "b".into()], 1.0), "b");
        assert_eq!(category_label(&["a".into()], 0.5), "");
        assert_eq!(category_label(&["a".into()], -1.0), "");
    }
}
