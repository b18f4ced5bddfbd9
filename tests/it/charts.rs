//! Every chart kind rendered from real data (bundles measured on this machine, the real
//! block map of an ext3 image, and the published numbers of seed 000), checked as XML
//! (SVG) and as PNG, with the expected series. The files stay in
//! /var/tmp/fslab-test-stats/charts/out/ for a person to look at.

use crate::support;

use fslab::analysis::{point_stats, StatsOptions};
use fslab::plot::{Chart, ChartData};
use fslab::Bundle;
use quick_xml::events::Event;
use quick_xml::Reader;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// What a parsed SVG contains.
#[derive(Debug, Default)]
struct Svg {
    elements: BTreeMap<String, usize>,
    texts: Vec<String>,
    /// (element, stroke or fill colour) of drawn shapes.
    colours: Vec<(String, String)>,
    /// Number of points of each polyline.
    polylines: Vec<(String, usize)>,
    width: u32,
    height: u32,
}

impl Svg {
    fn count(&self, name: &str) -> usize {
        self.elements.get(name).copied().unwrap_or(0)
    }
    fn has_text(&self, t: &str) -> bool {
        self.texts.iter().any(|x| x.contains(t))
    }
    /// Distinct colours of one element kind.
    fn colours_of(&self, name: &str) -> BTreeSet<String> {
        self.colours
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, c)| c.clone())
            .collect()
    }
}

fn parse_svg(svg: &str) -> Svg {
    let mut reader = Reader::from_str(svg);
    let mut out = Svg::default();
    let mut in_text = false;
    let mut text = String::new();
    let mut depth = 0i32;
    let mut root: Option<String> = None;
    loop {
        let ev = reader
            .read_event()
            .unwrap_or_else(|e| panic!("not well-formed XML at {}: {e}", reader.buffer_position()));
        let (start, empty) = match &ev {
            Event::Start(s) => (Some(s.clone()), false),
            Event::Empty(s) => (Some(s.clone()), true),
            _ => (None, false),
        };
        if let Some(s) = start {
            let name = String::from_utf8_lossy(s.name().as_ref()).to_string();
            root.get_or_insert_with(|| name.clone());
            *out.elements.entry(name.clone()).or_default() += 1;
            let mut stroke = None;
            let mut fill = None;
            for a in s.attributes() {
                let a = a.expect("attribute");
                let key = String::from_utf8_lossy(a.key.as_ref()).to_string();
                let value = a.unescape_value().expect("attribute value").to_string();
                match key.as_str() {
                    "stroke" => stroke = Some(value),
                    "fill" => fill = Some(value),
                    "points" if name == "polyline" => out.polylines.push((
                        stroke.clone().unwrap_or_default(),
                        value.split_whitespace().count(),
                    )),
                    "width" if name == "svg" => out.width = value.parse().unwrap_or(0),
                    "height" if name == "svg" => out.height = value.parse().unwrap_or(0),
                    _ => {}
                }
            }
            // polyline's points may come before its stroke: fix the colour afterwards.
            if name == "polyline" {
                if let (Some(last), Some(st)) = (out.polylines.last_mut(), &stroke) {
                    last.0 = st.clone();
                }
            }
            let colour = if name == "polyline" {
                stroke
            } else {
                fill.or(stroke)
            };
            if let Some(c) = colour {
                out.colours.push((name.clone(), c.to_uppercase()));
            }
            in_text = name == "text" && !empty;
            text.clear();
            if !empty {
                depth += 1;
            }
        }
        match ev {
            Event::Text(t) if in_text => text.push_str(&t.decode().expect("text")),
            Event::GeneralRef(r) if in_text => {
                let resolved = match r.resolve_char_ref().expect("character reference") {
                    Some(c) => c.to_string(),
                    None => match r.decode().expect("entity").as_ref() {
                        "lt" => "<".into(),
                        "gt" => ">".into(),
                        "amp" => "&".into(),
                        "quot" => "\"".into(),
                        "apos" => "'".into(),
                        other => panic!("undefined entity &{other};"),
                    },
                };
                text.push_str(&resolved);
            }
            Event::End(_) => {
                depth -= 1;
                if in_text {
                    out.texts.push(std::mem::take(&mut text).trim().to_string());
                }
                in_text = false;
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(depth, 0, "unbalanced elements");
    assert_eq!(root.as_deref(), Some("svg"), "root element is not <svg>");
    out
}

/// Check the PNG signature and the IHDR size.
fn check_png(path: &PathBuf, size: (u32, u32)) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(
        &bytes[..8],
        b"\x89PNG\r\n\x1a\n",
        "{} is not a PNG",
        path.display()
    );
    assert_eq!(&bytes[12..16], b"IHDR");
    let w = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let h = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert_eq!((w, h), size);
    assert!(
        bytes.len() > 5_000,
        "suspiciously small PNG: {} bytes",
        bytes.len()
    );
}

fn out_dir() -> PathBuf {
    let d = support::scratch().join("out");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Render as SVG (returned parsed) and as PNG and SVG files.
fn render(chart: &Chart, name: &str) -> Svg {
    let svg = chart.to_svg().expect("svg");
    let parsed = parse_svg(&svg);
    assert_eq!((parsed.width, parsed.height), chart.size);
    assert_eq!(parsed.count("svg"), 1);
    assert!(
        parsed.count("text") >= 5,
        "too little text: {:?}",
        parsed.texts
    );
    let dir = out_dir();
    chart.save(&dir.join(format!("{name}.svg"))).unwrap();
    let png = dir.join(format!("{name}.png"));
    chart.save(&png).unwrap();
    check_png(&png, chart.size);
    assert_eq!(
        std::fs::read_to_string(dir.join(format!("{name}.svg"))).unwrap(),
        svg,
        "saved SVG differs from to_svg()"
    );
    parsed
}

const BLUE: &str = "#4E79A7";
const ORANGE: &str = "#F28E2B";
const RED: &str = "#E15759";

#[test]
fn mean_with_ci_whiskers_from_a_real_bundle() {
    let (a, _) = support::real_bundles();
    let runs = Bundle::open(&a).unwrap().runs().unwrap();
    let stats = point_stats(&runs, &StatsOptions::default()).unwrap();
    let chart = Chart::mean_ci(&stats).unwrap();
    assert_eq!(chart.series_names(), ["mean, 95% CI", "first iteration"]);
    let svg = render(&chart, "mean_ci");
    // One dot per point plus the legend's.
    let blue_circles = svg
        .colours
        .iter()
        .filter(|(n, c)| n == "circle" && c == BLUE)
        .count();
    assert_eq!(blue_circles, 2 + 1);
    // Whisker and two caps per point, in the series colour; an interval that reaches
    // below zero (few, noisy samples) is cut at zero and has no lower cap there.
    let lows = stats.column("ci_low").unwrap().f64().unwrap().clone();
    let expected: usize = lows
        .iter()
        .map(|lo| if lo.expect("ci_low") >= 0.0 { 3 } else { 2 })
        .sum();
    let whiskers = svg
        .polylines
        .iter()
        .filter(|(c, _)| c.to_uppercase() == BLUE)
        .count();
    assert_eq!(whiskers, expected, "ci_low {:?}", stats.column("ci_low"));
    // First iteration: one triangle per point plus the legend's.
    let triangles = svg
        .colours
        .iter()
        .filter(|(n, c)| n == "polygon" && c == ORANGE)
        .count();
    assert_eq!(triangles, 2 + 1);
    for t in [
        "fs=ext4",
        "fs=xfs",
        "wall time (s)",
        "mean, 95% CI",
        "first iteration",
        "point",
    ] {
        assert!(svg.has_text(t), "missing text {t:?} in {:?}", svg.texts);
    }
}

#[test]
fn time_against_iteration_one_line_per_point() {
    let (a, _) = support::real_bundles();
    let runs = Bundle::open(&a).unwrap().runs().unwrap();
    let chart = Chart::iterations(&runs, "wall_s").unwrap();
    assert_eq!(chart.series_names(), ["fs=ext4", "fs=xfs"]);
    let svg = render(&chart, "iterations");
    // Each point's line has one vertex per iteration (6), in its own colour.
    let lines: Vec<&(String, usize)> = svg.polylines.iter().filter(|(_, n)| *n == 6).collect();
    assert_eq!(lines.len(), 2, "{:?}", svg.polylines);
    let colours: BTreeSet<String> = lines.iter().map(|(c, _)| c.to_uppercase()).collect();
    assert_eq!(colours.len(), 2);
    assert!(svg.has_text("iteration"));
    assert!(svg.has_text("wall time (s)"));

    // The published seed 000 numbers show the first-run effect on the same chart kind.
    let seed = support::seed_000_runs();
    let chart = Chart::iterations(&seed, "wall_s").unwrap();
    let svg = render(&chart, "iterations_seed000");
    assert_eq!(svg.polylines.iter().filter(|(_, n)| *n == 10).count(), 2);
    assert!(svg.has_text("parent=0") && svg.has_text("parent=1"));
}

#[test]
fn extent_layout_coloured_by_file_from_a_real_block_map() {
    let (a, _) = support::real_bundles();
    let extents = Bundle::open(&a)
        .unwrap()
        .table_if_present("extents")
        .unwrap()
        .expect("extents table");
    let n_extents = extents.height();
    // The directory grew between its files' data: many extents, as in seed 001.
    assert!(n_extents > 20, "only {n_extents} extents");
    let chart = Chart::extents(&extents).unwrap();
    assert_eq!(chart.series_names(), ["/d", "/big1", "/big2"]);
    let svg = render(&chart, "extents");
    // One segment per extent plus one legend sample per file.
    let palette = [BLUE, ORANGE, RED];
    let segments = svg
        .polylines
        .iter()
        .filter(|(c, n)| *n == 2 && palette.contains(&c.to_uppercase().as_str()))
        .count();
    assert_eq!(segments, n_extents + 3);
    let colours = svg.colours_of("polyline");
    for c in [BLUE, ORANGE, RED] {
        assert!(colours.contains(c), "no {c} segments: {colours:?}");
    }
    assert!(
        svg.has_text("logical offset in file (MiB)")
            || svg.has_text("logical offset in file (KiB)")
    );
    assert!(svg.has_text("physical offset on device (MiB)"));
}

#[test]
fn published_against_rerun_normalised_to_each_baseline() {
    let (a, b) = support::real_bundles();
    let sa = point_stats(
        &Bundle::open(&a).unwrap().runs().unwrap(),
        &StatsOptions::default(),
    )
    .unwrap();
    let sb = point_stats(
        &Bundle::open(&b).unwrap().runs().unwrap(),
        &StatsOptions::default(),
    )
    .unwrap();
    let chart =
        Chart::normalised(&[("run A", &sa, "mean"), ("run B", &sb, "mean")], "fs=ext4").unwrap();
    assert_eq!(chart.series_names(), ["run A", "run B"]);
    let svg = render(&chart, "normalised");
    // Two bars per point (2 points) plus a legend swatch per series, in two colours.
    let bars = svg
        .colours
        .iter()
        .filter(|(n, c)| n == "rect" && (c == BLUE || c == ORANGE))
        .count();
    assert_eq!(bars, 2 * 2 + 2);
    // Each set's baseline is exactly 1; a point of these real runs within half a percent
    // of its baseline also reads 1.00, so count what the data gives, baselines included.
    let reads_one = |s: &polars::prelude::DataFrame| {
        let ids = s.column("point_id").unwrap().str().unwrap();
        let means = s.column("mean").unwrap().f64().unwrap();
        let base = ids
            .iter()
            .zip(means.iter())
            .find(|(id, _)| *id == Some("fs=ext4"))
            .and_then(|(_, m)| m)
            .unwrap();
        means
            .iter()
            .flatten()
            .filter(|m| format!("{:.2}", m / base) == "1.00")
            .count()
    };
    let (ones_a, ones_b) = (reads_one(&sa), reads_one(&sb));
    assert!(ones_a >= 1 && ones_b >= 1, "{sa} {sb}");
    assert_eq!(
        svg.texts.iter().filter(|t| t.as_str() == "1.00").count(),
        ones_a + ones_b
    );
    assert!(svg.has_text("relative to fs=ext4 (×)"));

    // Published numbers against their own baseline: seed 000's parent=1 relative to parent=0.
    let seed = point_stats(&support::seed_000_runs(), &StatsOptions::default()).unwrap();
    let chart = Chart::normalised(&[("published (seed 000)", &seed, "mean")], "parent=0").unwrap();
    let svg = render(&chart, "normalised_seed000");
    // Steady-state means 14.082 and 14.292 (hand-computed from the post): ratio 1.01.
    assert!(svg.texts.iter().any(|t| t == "1.01"), "{:?}", svg.texts);
    assert!(matches!(
        Chart::normalised(&[("x", &seed, "mean")], "parent=9"),
        Err(fslab::plot::PlotError::Data(_))
    ));
}

#[test]
fn distribution_per_point_with_warmup_and_outliers() {
    let seed = support::seed_000_runs();
    let chart = Chart::distribution(&seed, &StatsOptions::default()).unwrap();
    let svg = render(&chart, "distribution_seed000");
    // Warm-up (the 18.8 s and 20.7 s first runs) marked apart: two triangles + legend.
    let triangles = svg
        .colours
        .iter()
        .filter(|(n, c)| n == "polygon" && c == ORANGE)
        .count();
    assert_eq!(triangles, 2 + 1);
    let names = chart.series_names();
    assert_eq!(names[0], "steady state");
    assert_eq!(names[1], "warm-up");
    // Steady-state dots (non-outliers) + outlier crosses = 9 per point.
    let dots = svg
        .colours
        .iter()
        .filter(|(n, c)| n == "circle" && c == BLUE)
        .count()
        - 1;
    let outliers = if names.len() == 3 {
        // a Cross is two polylines
        (svg.polylines
            .iter()
            .filter(|(c, _)| c.to_uppercase() == RED)
            .count()
            - 2)
            / 2
    } else {
        0
    };
    assert_eq!(dots + outliers, 18);
    // One box per point: a closed 5-vertex outline.
    assert_eq!(svg.polylines.iter().filter(|(_, n)| *n == 5).count(), 2);

    let (a, _) = support::real_bundles();
    let runs = Bundle::open(&a).unwrap().runs().unwrap();
    let chart = Chart::distribution(&runs, &StatsOptions::default()).unwrap();
    let svg = render(&chart, "distribution");
    assert!(svg.has_text("fs=ext4") && svg.has_text("fs=xfs") && svg.has_text("wall time (s)"));
    assert_eq!(svg.polylines.iter().filter(|(_, n)| *n == 5).count(), 2);
}

#[test]
fn unsupported_extension_and_empty_data_are_errors() {
    let seed = support::seed_000_runs();
    let chart = Chart::iterations(&seed, "wall_s").unwrap();
    assert!(matches!(
        chart.save(&out_dir().join("x.gif")),
        Err(fslab::plot::PlotError::Format(_))
    ));
    let empty = seed.head(Some(0));
    assert!(matches!(
        Chart::iterations(&empty, "wall_s"),
        Err(fslab::report::ChartError::Plot(
            fslab::plot::PlotError::Empty(_)
        ))
    ));
}

/// A real block trace of one step on a loop device: `dd` with the given arguments.
fn real_io_rows(point: &str, dd_args: &[&str]) -> Vec<serde_json::Value> {
    use fslab::devices::trace::BlockTrace;
    let dir = support::scratch().join(format!("io-{point}-{:x}", rand::random::<u16>()));
    std::fs::create_dir_all(&dir).unwrap();
    let image = dir.join("d.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let lo = fslab::devices::attach(&image).unwrap();
    let dev = fslab::devices::throttle::device_numbers(&lo.device).unwrap();
    let trace = BlockTrace::start(&[dev], 4096).unwrap();
    for args in dd_args {
        let mut a: Vec<String> = args.split_whitespace().map(String::from).collect();
        a.push(format!("if={}", lo.device.display()));
        let out = std::process::Command::new("dd").args(&a).output().unwrap();
        assert!(out.status.success());
    }
    let text = trace.finish().unwrap();
    let id = fslab::devices::backing_id(&lo.device).unwrap();
    fslab::devices::detach(&lo.device, id).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let out = fslab::parse::block_trace::parse(&text.text, text.start_mono);
    assert!(!out.rows.is_empty());
    out.rows
        .iter()
        .map(|r| {
            let mut v = serde_json::to_value(r).unwrap();
            v["point_id"] = serde_json::Value::from(point);
            v
        })
        .collect()
}

#[test]
fn io_trace_and_compare_from_real_block_traces() {
    // "seq": one sequential read; "scatter": 4 KiB reads 1 MiB apart, then a write.
    let mut rows = real_io_rows("fs=seq", &["of=/dev/null iflag=direct bs=64k count=400"]);
    let scatter: Vec<String> = (0..40)
        .map(|i| {
            format!(
                "of=/dev/null iflag=direct bs=4k count=1 skip={}",
                (i * 37 % 60) * 256
            )
        })
        .collect();
    let mut args: Vec<&str> = scatter.iter().map(String::as_str).collect();
    args.push("of=/dev/null iflag=direct bs=4k count=1");
    rows.extend(real_io_rows("fs=scatter", &args));
    // A write in the scattered point, so both colours are drawn.
    let mut w = rows.last().unwrap().clone();
    w["op"] = "write".into();
    w["t_s"] = (w["t_s"].as_f64().unwrap() + 0.001).into();
    rows.push(w);
    let df = fslab::frames::from_records(&rows).unwrap();

    let one = Chart::io_trace(&df, Some("fs=scatter")).unwrap();
    let svg = render(&one, "io_trace");
    for t in [
        "offset (MB)",
        "MB/s",
        "seeks/s",
        "fs=scatter",
        "read",
        "write",
    ] {
        assert!(svg.has_text(t), "missing {t}: {:?}", svg.texts);
    }
    let circles = svg.colours_of("circle");
    assert!(
        circles.contains(BLUE) && circles.contains(RED),
        "{circles:?}"
    );
    assert_eq!(one.series_names(), ["read", "write", "seeks/s"]);

    let two =
        Chart::io_compare(&df, ("fs=seq", "sequential"), ("fs=scatter", "scattered")).unwrap();
    let svg = render(&two, "io_compare");
    assert!(svg.has_text("sequential") && svg.has_text("scattered"));
    // Three panels per column: two columns draw six y-axis descriptions.
    let descs = svg
        .texts
        .iter()
        .filter(|t| ["offset (MB)", "MB/s", "seeks/s"].contains(&t.as_str()))
        .count();
    assert_eq!(descs, 6, "{:?}", svg.texts);
    // The rate lines: read, write and seeks per column.
    assert!(svg.polylines.len() >= 6, "{:?}", svg.polylines);
    let ChartData::Io { traces } = &two.data else {
        panic!("not an io chart")
    };
    let seeks = |i: usize| traces[i].bins.seeks_per_s.iter().sum::<f64>();
    assert!(seeks(1) > seeks(0), "the scattered point seeks more");
    assert!(Chart::io_trace(&df, Some("fs=none")).is_err());
}
