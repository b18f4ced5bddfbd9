//! The chart of one claim: its number as measured, each estimate a row with its 95 %
//! interval, against the band the claim expects (`expect: {min, max}`, shaded) and the
//! post's own number (a red line). The estimates come computed (a claim verdict's
//! number and interval, one row per bundle or kernel); this file only draws.

use super::draw::{
    category_label, color, legend_box, tick, value_range, DrawResult, FixedTicks, CAPTION, DESC,
    GRID, GRID_LIGHT, INK, LABEL,
};
use super::fonts::FAMILY;
use super::{Chart, ChartData, PlotError};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One row of a claim chart: a number with its interval, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimEstimate {
    /// Where the number comes from: a bundle, a kernel.
    pub label: String,
    pub value: Option<f64>,
    /// The 95 % interval of `value`.
    pub interval: Option<(f64, f64)>,
    /// Said in the row when there is no number (why).
    pub note: Option<String>,
}

/// What a claim chart draws.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimPlot {
    /// The axis: what the number is, with its unit.
    pub x_label: String,
    /// The claim's `expect:` bounds (either may be open).
    pub expect: (Option<f64>, Option<f64>),
    /// The post's number, computed with the claim's recipe from the published data.
    pub published: Option<f64>,
    pub rows: Vec<ClaimEstimate>,
}

/// The height of a row, and the room above the rows that holds the legend, in pixels.
const ROW_PX: u32 = 62;
const HEADROOM_PX: u32 = 95;

/// The post's colour (Tableau red) and the expected band's (Tableau green).
const POST: RGBColor = RGBColor(0xE1, 0x57, 0x59);
const BAND: RGBColor = RGBColor(0x59, 0xA1, 0x4F);

impl ClaimPlot {
    /// Every number the chart places on its axis.
    fn values(&self) -> impl Iterator<Item = f64> + '_ {
        self.rows
            .iter()
            .flat_map(|r| {
                [r.value, r.interval.map(|i| i.0), r.interval.map(|i| i.1)]
                    .into_iter()
                    .flatten()
            })
            .chain(self.published)
            .chain(self.expect.0)
            .chain(self.expect.1)
            .filter(|v| v.is_finite())
    }

    /// The band in words: `≤ 1.1`, `≥ 1.2`, `0.95 – 1.05`.
    fn band_label(&self) -> Option<String> {
        match self.expect {
            (Some(lo), Some(hi)) => Some(format!("{} – {}", tick(&lo), tick(&hi))),
            (None, Some(hi)) => Some(format!("≤ {}", tick(&hi))),
            (Some(lo), None) => Some(format!("≥ {}", tick(&lo))),
            (None, None) => None,
        }
    }
}

impl Chart {
    /// The chart of one claim, titled `title`. Nothing to draw (no row has a number and
    /// the post has none) is [`PlotError::Empty`].
    pub fn claim(title: impl Into<String>, plot: ClaimPlot) -> Result<Chart, PlotError> {
        if plot.rows.iter().all(|r| r.value.is_none()) && plot.published.is_none() {
            return Err(PlotError::Empty(
                "neither a measured nor a published number".into(),
            ));
        }
        let longest = plot
            .rows
            .iter()
            .map(|r| r.label.chars().count())
            .max()
            .unwrap_or(0);
        let height = 175 + HEADROOM_PX + ROW_PX * plot.rows.len().max(1) as u32;
        let width = (760 + 9 * longest as u32).min(1400);
        Ok(Chart {
            title: title.into(),
            size: (width, height),
            data: ChartData::Claim(plot),
        })
    }
}

/// The legend entries of a claim chart.
pub(super) fn series_names(p: &ClaimPlot) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(b) = p.band_label() {
        v.push(format!("expected: {b}"));
    }
    if let Some(x) = p.published {
        v.push(format!("post: {}", tick(&round4(x))));
    }
    if p.rows.iter().any(|r| r.value.is_some()) {
        v.push("here: number, 95 % interval".into());
    }
    v
}

/// Four significant digits, for the labels.
fn round4(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(3 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    p: &ClaimPlot,
) -> DrawResult<DB> {
    let n = p.rows.len().max(1);
    // The first row on top: row i at height n - 1 - i.
    let at = |i: usize| (n - 1 - i) as f64;
    let labels: Vec<String> = p.rows.iter().rev().map(|r| r.label.clone()).collect();
    let (x0, x1) = value_range(p.values(), false);
    let (x0, x1) = {
        let pad = (x1 - x0) * 0.08;
        (x0 - pad, x1 + pad)
    };
    let headroom = f64::from(HEADROOM_PX) / f64::from(ROW_PX);
    let y = FixedTicks {
        lo: -0.5,
        hi: n as f64 - 0.5 + headroom,
        keys: (0..n).map(|i| i as f64).collect(),
    };
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FAMILY, CAPTION))
        .margin(20)
        .x_label_area_size(55)
        .y_label_area_size((20 + 9 * longest as u32).max(90))
        .build_cartesian_2d(x0..x1, y.clone())?;
    let fmt = |v: &f64| category_label(&labels, *v);
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc(p.x_label.as_str())
        .x_label_formatter(&tick)
        .y_label_formatter(&fmt)
        .label_style((FAMILY, LABEL))
        .axis_desc_style((FAMILY, DESC))
        .bold_line_style(GRID)
        .light_line_style(GRID_LIGHT)
        .draw()?;
    let (y_lo, y_hi) = (-0.5, n as f64 - 0.5 + headroom);
    if let Some(band) = p.band_label() {
        let lo = p.expect.0.unwrap_or(x0).max(x0);
        let hi = p.expect.1.unwrap_or(x1).min(x1);
        chart
            .draw_series([Rectangle::new(
                [(lo, y_lo), (hi, y_hi)],
                BAND.mix(0.16).filled(),
            )])?
            .label(format!("expected: {band}"))
            .legend(|(x, y)| {
                Rectangle::new([(x, y - 6), (x + 20, y + 6)], BAND.mix(0.35).filled())
            });
        let edges = [p.expect.0, p.expect.1];
        chart.draw_series(
            edges
                .into_iter()
                .flatten()
                .map(|b| PathElement::new(vec![(b, y_lo), (b, y_hi)], BAND.stroke_width(2))),
        )?;
    }
    if let Some(post) = p.published {
        chart
            .draw_series([DashedPathElement::new(
                vec![(post, y_lo), (post, y_hi)],
                8,
                5,
                POST.stroke_width(3),
            )])?
            .label(format!("post: {}", tick(&round4(post))))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], POST.stroke_width(3)));
    }
    let c = color(0);
    let whisker = c.stroke_width(3);
    chart.draw_series(p.rows.iter().enumerate().flat_map(|(i, r)| {
        let yy = at(i);
        r.interval
            .map(|(lo, hi)| {
                vec![
                    PathElement::new(vec![(lo, yy), (hi, yy)], whisker),
                    PathElement::new(vec![(lo, yy - 0.12), (lo, yy + 0.12)], whisker),
                    PathElement::new(vec![(hi, yy - 0.12), (hi, yy + 0.12)], whisker),
                ]
            })
            .unwrap_or_default()
    }))?;
    if p.rows.iter().any(|r| r.value.is_some()) {
        chart
            .draw_series(
                p.rows
                    .iter()
                    .enumerate()
                    .filter_map(|(i, r)| r.value.map(|v| Circle::new((v, at(i)), 7, c.filled()))),
            )?
            .label("here: number, 95 % interval")
            .legend(move |(x, y)| Circle::new((x + 10, y), 6, c.filled()));
    }
    // The numbers in words beside their marks; a row without one says why.
    let style = TextStyle::from((FAMILY, LABEL).into_font())
        .color(&INK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    chart.draw_series(p.rows.iter().enumerate().filter_map(|(i, r)| {
        let text = match (r.value, r.interval) {
            (Some(v), Some((lo, hi))) => format!(
                "{} [{}, {}]",
                tick(&round4(v)),
                tick(&round4(lo)),
                tick(&round4(hi))
            ),
            (Some(v), None) => format!("{} (no interval)", tick(&round4(v))),
            (None, _) => return None,
        };
        Some(Text::new(
            text,
            (r.value.unwrap_or(x0), at(i) - 0.14),
            style.clone(),
        ))
    }))?;
    let grey = INK.mix(0.8);
    let left = TextStyle::from((FAMILY, LABEL).into_font())
        .color(&grey)
        .pos(Pos::new(HPos::Left, VPos::Center));
    chart.draw_series(
        p.rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.value.is_none())
            .map(|(i, r)| {
                Text::new(
                    format!(
                        "no number here{}",
                        r.note
                            .as_deref()
                            .map(|w| format!(": {w}"))
                            .unwrap_or_default()
                    ),
                    (x0 + (x1 - x0) * 0.02, at(i)),
                    left.clone(),
                )
            }),
    )?;
    legend_box(&mut chart, SeriesLabelPosition::UpperRight)
}
