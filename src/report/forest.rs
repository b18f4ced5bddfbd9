//! The forest-plot bar of a claim's row in the HTML report: a small inline SVG with the
//! band the claim expects (shaded green, from `expect: {min, max}`), the measured
//! number's 95 % interval (a dark bar, the number a dot) and the post's number (a red
//! diamond), on an axis that holds all of them. Pure rendering of a verdict.

use super::html_escape;
use crate::analysis::claims::{ClaimVerdict, Expect};
use crate::labels::fmt_sig;

/// The bar's size in CSS pixels.
pub const WIDTH: f64 = 200.0;
pub const HEIGHT: f64 = 24.0;
/// Room at each end for the marks.
const PAD: f64 = 7.0;

/// What a bar places: the numbers of a verdict, or of the legend's sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Marks {
    pub measured: Option<f64>,
    /// The measured number's 95 % interval.
    pub interval: Option<(f64, f64)>,
    pub published: Option<f64>,
    /// The band; an open side reaches the bar's end.
    pub expect: (Option<f64>, Option<f64>),
    /// The bar in words: its tooltip and accessible name.
    pub title: String,
}

impl Marks {
    /// The marks of one verdict, with its claim's band.
    pub fn of(v: &ClaimVerdict, expect: Option<&Expect>) -> Marks {
        let expect = expect.map_or((None, None), |e| (e.min, e.max));
        let mut parts = Vec::new();
        match (v.measured, v.interval) {
            (Some(m), Some(i)) => parts.push(format!("here {} {}", fmt_sig(m, 4), i.label())),
            (Some(m), None) => parts.push(format!("here {} (no interval)", fmt_sig(m, 4))),
            (None, _) => parts.push("no number here".to_string()),
        }
        if let Some(p) = v.published {
            parts.push(format!("post {}", fmt_sig(p, 4)));
        }
        if (expect.0.is_some() || expect.1.is_some()) && !v.expected.is_empty() {
            parts.push(format!("expected {}", v.expected));
        }
        Marks {
            measured: v.measured,
            interval: v.interval.map(|i| (i.lo, i.hi)),
            published: v.published,
            expect,
            title: parts.join("; "),
        }
    }

    /// The axis: the smallest and largest number the bar shows, with some room.
    fn domain(&self) -> Option<(f64, f64)> {
        let values: Vec<f64> = [
            self.measured,
            self.interval.map(|i| i.0),
            self.interval.map(|i| i.1),
            self.published,
            self.expect.0,
            self.expect.1,
        ]
        .into_iter()
        .flatten()
        .filter(|x| x.is_finite())
        .collect();
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !lo.is_finite() {
            return None;
        }
        let span = if hi > lo {
            hi - lo
        } else if lo != 0.0 {
            lo.abs() * 0.2
        } else {
            1.0
        };
        // An open side of the band reaches past the numbers, so that it reads as open.
        let (min, max) = self.expect;
        let pad = |open: bool| span * if open { 0.25 } else { 0.08 };
        Some((
            lo - pad(min.is_none() && max.is_some()),
            hi + pad(max.is_none() && min.is_some()),
        ))
    }
}

/// The bar of one verdict, or None when it has no number to place (neither measured
/// nor published).
pub fn forest_svg(v: &ClaimVerdict, expect: Option<&Expect>) -> Option<String> {
    bar(&Marks::of(v, expect))
}

/// The bar of `m`, or None when it has no number to place.
pub fn bar(m: &Marks) -> Option<String> {
    if m.measured.is_none() && m.published.is_none() {
        return None;
    }
    let (lo, hi) = m.domain()?;
    let x = |value: f64| PAD + (value - lo) / (hi - lo) * (WIDTH - 2.0 * PAD);
    let mid = HEIGHT / 2.0;
    let label = html_escape(&m.title);
    let mut s = format!(
        "<svg class=\"forest\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" aria-label=\"{label}\"><title>{label}</title>"
    );
    s.push_str(&format!(
        "<line class=\"axis\" x1=\"0\" y1=\"{mid}\" x2=\"{WIDTH}\" y2=\"{mid}\" stroke=\"#ccc\" stroke-width=\"1\"/>"
    ));
    let (min, max) = m.expect;
    if min.is_some() || max.is_some() {
        let a = min.map_or(0.0, x);
        let b = max.map_or(WIDTH, x);
        s.push_str(&format!(
            "<rect class=\"band\" x=\"{a:.1}\" y=\"2\" width=\"{:.1}\" height=\"{}\" fill=\"#59a14f\" fill-opacity=\"0.22\"/>",
            (b - a).max(1.0),
            HEIGHT - 4.0
        ));
        for edge in [min, max].into_iter().flatten() {
            let ex = x(edge);
            s.push_str(&format!(
                "<line class=\"bound\" x1=\"{ex:.1}\" y1=\"2\" x2=\"{ex:.1}\" y2=\"{}\" stroke=\"#59a14f\" stroke-width=\"1.5\"/>",
                HEIGHT - 2.0
            ));
        }
    }
    if let Some((i_lo, i_hi)) = m.interval {
        let (a, b) = (x(i_lo), x(i_hi));
        s.push_str(&format!(
            "<line class=\"interval\" x1=\"{a:.1}\" y1=\"{mid}\" x2=\"{b:.1}\" y2=\"{mid}\" stroke=\"#333\" stroke-width=\"2.5\"/>"
        ));
        for end in [a, b] {
            s.push_str(&format!(
                "<line x1=\"{end:.1}\" y1=\"{}\" x2=\"{end:.1}\" y2=\"{}\" stroke=\"#333\" stroke-width=\"2\"/>",
                mid - 5.0,
                mid + 5.0
            ));
        }
    }
    if let Some(v) = m.measured {
        s.push_str(&format!(
            "<circle class=\"measured\" cx=\"{:.1}\" cy=\"{mid}\" r=\"4\" fill=\"#4e79a7\" stroke=\"#fff\" stroke-width=\"1\"/>",
            x(v)
        ));
    }
    if let Some(p) = m.published {
        let px = x(p);
        s.push_str(&format!(
            "<polygon class=\"post\" points=\"{px:.1},{} {:.1},{mid} {px:.1},{} {:.1},{mid}\" fill=\"#e15759\" stroke=\"#fff\" stroke-width=\"1\"/>",
            mid - 6.0,
            px + 5.0,
            mid + 6.0,
            px - 5.0
        ));
    }
    s.push_str("</svg>");
    Some(s)
}

/// The legend's sample bar: a band, an interval straddling its upper bound, the post
/// inside.
pub fn sample() -> Marks {
    Marks {
        measured: Some(1.12),
        interval: Some((1.02, 1.22)),
        published: Some(1.05),
        expect: (Some(0.95), Some(1.1)),
        title: "sample bar: band 0.95 – 1.1, here 1.12 [1.02, 1.22], post 1.05".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::{forest_svg, Marks, WIDTH};
    use crate::analysis::claims::{ClaimVerdict, Expect};
    use crate::analysis::interval::{Interval, Method};

    fn verdict(measured: Option<f64>, ci: Option<(f64, f64)>, post: Option<f64>) -> ClaimVerdict {
        let mut v = crate::report::claims::tests::blank_verdict();
        v.measured = measured;
        v.interval = ci.map(|(lo, hi)| Interval {
            lo,
            hi,
            level: 0.95,
            method: Method::FiellerWelch,
        });
        v.published = post;
        v.expected = "≤ 1.1".into();
        v
    }

    /// The marks sit where their numbers are on one axis: the band's bound between the
    /// interval's ends, the post's diamond left of the measured dot.
    #[test]
    fn marks_are_placed_on_one_axis() {
        let v = verdict(Some(1.278), Some((0.9377, 1.999)), Some(1.098));
        let e = Expect {
            min: None,
            max: Some(1.1),
        };
        let svg = forest_svg(&v, Some(&e)).unwrap();
        let attr = |class: &str, name: &str| -> f64 {
            let at = svg.find(&format!("class=\"{class}\"")).unwrap();
            let rest = &svg[at..];
            let key = format!(" {name}=\"");
            let i = rest.find(&key).unwrap() + key.len();
            rest[i..i + rest[i..].find('"').unwrap()].parse().unwrap()
        };
        let (a, b) = (attr("interval", "x1"), attr("interval", "x2"));
        let bound = attr("bound", "x1");
        let dot = attr("measured", "cx");
        assert!(a < bound && bound < b && a < dot && dot < b, "{svg}");
        // An open lower side: the band starts at the left edge.
        assert_eq!(attr("band", "x"), 0.0);
        assert!(attr("band", "width") < WIDTH);
        let post = svg.find("class=\"post\"").unwrap();
        let px: f64 = svg[post..].split("points=\"").nth(1).unwrap()[..5]
            .trim_end_matches(',')
            .parse()
            .unwrap();
        assert!(px < dot, "{svg}");
        assert!(svg.contains("<title>here 1.278 [0.9377, 1.999]"), "{svg}");
    }

    /// Nothing to place: no bar. One number alone still gets an axis around it.
    #[test]
    fn no_number_no_bar() {
        assert!(forest_svg(&verdict(None, None, None), None).is_none());
        let (lo, hi) = Marks::of(&verdict(Some(2.0), None, None), None)
            .domain()
            .unwrap();
        assert!(lo < 2.0 && 2.0 < hi);
        let (lo, hi) = Marks::of(&verdict(Some(0.0), None, None), None)
            .domain()
            .unwrap();
        assert!(lo < 0.0 && 0.0 < hi);
    }
}
