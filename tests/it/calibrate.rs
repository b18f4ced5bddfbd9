//! `fslab calibrate`: one point as two sides in interleaved pairs on real loop devices;
//! the bundle's `calibration` table and manifest record, and the printed summary, agree.

use crate::common::{text, Scratch};
use fslab::analysis::calibration::rate_text;
use fslab::store::{Injection, RateEvent};
use fslab::Bundle;
use std::path::Path;

/// A tiny metadata workload: a fresh ext4, `fslab stress` twice (one warm-up).
const EXP: &str = r#"
id: cal-tiny
title: tiny calibration
devices:
  data: { size: 64MiB }
setup:
  - run: mkfs.ext4 -F -q {{dev.data}}
  - mount: data
workload:
  run: "{{fslab}} stress -n 300 -p 1 -z -f creat=1,mkdir=1 -d {{mnt}}/it{{iteration}} -s 1 --threads"
  repeat: 2
teardown:
  - umount: "{{mnt}}"
"#;

fn experiment(s: &Scratch) -> String {
    let p = s.root.join("cal-tiny.yaml");
    std::fs::write(&p, EXP).unwrap();
    p.display().to_string()
}

/// Run a calibration of 6 pairs into `out`; its stdout.
fn calibrate(s: &Scratch, exp: &str, out: &Path, extra: &[&str]) -> String {
    let mut args = vec![
        "calibrate",
        exp,
        "--pairs",
        "6",
        "--per-side",
        "3",
        "--seed",
        "7",
        "--quiet",
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = s.run(&args);
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// The printed summary says what the manifest's record and the table say.
fn check_consistent(out: &Path, printed: &str) -> fslab::store::CalibrationRecord {
    let b = Bundle::open(out).unwrap();
    let rec = b
        .manifest()
        .calibration
        .clone()
        .expect("a calibration record");
    let table = b.table("calibration").unwrap();
    assert_eq!(table.height(), 2, "6 pairs, 3 a side: 2 comparisons");
    assert_eq!(rec.comparisons, 2);
    assert_eq!((rec.design.pairs, rec.design.per_side), (6, 3));
    let comparisons = table.column("comparison").unwrap().u32().unwrap();
    assert_eq!(comparisons.into_no_null_iter().collect::<Vec<_>>(), [1, 2]);
    // Every pair ran: 6 replicates a side.
    let order = b.manifest().run_order.as_ref().unwrap();
    assert_eq!(order.pairs.len(), 12);
    assert!(printed.contains(&format!("  bundle:       {}\n", out.display())));
    assert!(printed.contains("  comparisons:  2\n"), "{printed}");
    assert!(
        printed.contains("  pairs:        6 (3 replicates a side per comparison)\n"),
        "{printed}"
    );
    assert!(printed.contains("  wall time:    "), "{printed}");
    for r in &rec.rates {
        // Coverage counts the comparisons whose interval is bounded (Fieller's is not
        // when side A's mean is not clearly away from 0 at its spread).
        if r.event == RateEvent::IntervalCovers {
            assert!(r.of <= 2, "{r:?}");
        } else {
            assert_eq!(r.of, 2, "{r:?}");
        }
        let line = format!("{}: {}", r.meaning, rate_text(r));
        assert!(printed.contains(&line), "missing {line:?} in\n{printed}");
    }
    match rec.detectable_median {
        Some(x) => assert!(
            printed.contains(&format!(
                "  detectable:   ≥ {}× B ÷ A at 90 % power",
                fslab::analysis::fmt_sig(x, 4)
            )),
            "{printed}"
        ),
        None => assert!(printed.contains("  detectable:   not known"), "{printed}"),
    }
    // The table's verdicts are what the rates count.
    let tier = table.column("tier_same").unwrap().str().unwrap();
    let differs = tier.iter().filter(|t| *t == Some("not_reproduced")).count() as u64;
    let rate = rec
        .rates
        .iter()
        .find(|r| r.event == RateEvent::TierDiffers)
        .unwrap();
    assert_eq!(rate.count, differs);
    rec
}

#[test]
fn an_a_a_calibration_records_and_prints_the_same_rates() {
    let s = Scratch::new("cal");
    let exp = experiment(&s);
    let out = s.root.join("aa");
    let printed = calibrate(&s, &exp, &out, &[]);
    let rec = check_consistent(&out, &printed);
    assert_eq!(rec.design.injection, None);
    assert_eq!(rec.truth, Some(1.0));
    assert!(
        printed.starts_with("calibration (A/A) of point "),
        "{printed}"
    );
    assert!(printed.contains("  injection:    none\n"), "{printed}");
    assert!(
        printed.contains("  tier rule false-positive rate: "),
        "{printed}"
    );
    assert!(
        printed.contains("  compare false-positive rate: "),
        "{printed}"
    );
    assert!(s.loops().is_empty() && s.mounts().is_empty());
}

#[test]
fn an_injected_delay_is_recorded_with_its_truth_and_power() {
    let s = Scratch::new("cali");
    let exp = experiment(&s);
    let out = s.root.join("inj");
    let printed = calibrate(&s, &exp, &out, &["--inject", "delay:pct=50"]);
    let rec = check_consistent(&out, &printed);
    assert_eq!(rec.design.injection, Some(Injection::Delay { pct: 50.0 }));
    assert_eq!(rec.truth, Some(1.5));
    assert!(
        printed.contains(
            "  injection:    side B's workload command runs under `fslab delay --pct 50`"
        ),
        "{printed}"
    );
    assert!(printed.contains("  true ratio:   1.5"), "{printed}");
    assert!(printed.contains("  tier rule power: "), "{printed}");
    assert!(printed.contains("  coverage: "), "{printed}");
    let b = Bundle::open(&out).unwrap();
    let t = b.table("calibration").unwrap();
    let inj = t.column("injected").unwrap().str().unwrap();
    assert!(inj.iter().all(|i| i == Some("delay=50%")));
    // Side B's steps ran under the wrapper, side A's under the wrapper with no delay.
    let runs = b.runs().unwrap();
    assert_eq!(runs.height(), 24, "12 replicates of 2 iterations");
    let note = &b
        .manifest()
        .points
        .iter()
        .find(|p| p.id == rec.design.side_b)
        .unwrap()
        .notes;
    assert!(
        note.iter().any(|n| n.starts_with("calibration: ")),
        "{note:?}"
    );
    assert!(s.loops().is_empty() && s.mounts().is_empty());
}

#[test]
fn a_bad_injection_is_a_clear_error_before_anything_runs() {
    let s = Scratch::new("calb");
    let exp = experiment(&s);
    let cases: [(&str, &str); 5] = [
        (
            "slow:pct=2",
            "unknown kind `slow`; expected one of delay:pct=2",
        ),
        ("delay:pct=0", "`pct=0`: expected a percentage above 0"),
        (
            "fio-spin:usec=10,blocks=8,ios=100",
            "fio-spin injection needs a workload run by fio",
        ),
        (
            "throttle:device=log,read_iops=10",
            "the point has no device `log`; its devices: data",
        ),
        (
            "medium:device=data,pct=2",
            "the device has no disk model (`medium:`",
        ),
    ];
    for (spec, says) in cases {
        let out = s.root.join("never");
        let o = s.run(&[
            "calibrate",
            &exp,
            "--pairs",
            "6",
            "--inject",
            spec,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{spec}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{spec}: {err}");
        assert!(!out.exists());
        assert!(s.bundles("cal-tiny").is_empty(), "{spec}: nothing ran");
    }
}

/// A tiny I/O workload on the disk model: 20 random 4 KiB direct reads a replicate.
const MODELLED: &str = r#"
id: cal-modelled
title: tiny modelled calibration
devices:
  data: { size: 64MiB, medium: hdd-2008 }
setup:
  - run: mkfs.ext4 -F -q -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 {{dev.data}}
  - mount: { device: data, options: noatime }
  - run: fio --name=layout --filename={{mnt}}/f --size=4M --rw=write --bs=1M --direct=1 --ioengine=psync
workload:
  run: fio --name=r --filename={{mnt}}/f --size=4M --io_size=80K --rw=randread --bs=4k --direct=1 --ioengine=psync --output-format=json
  parse: fio
teardown:
  - umount: "{{mnt}}"
"#;

#[test]
fn a_slower_disk_model_in_side_b_is_compared_on_fios_own_runtime() {
    let s = Scratch::new("calm");
    let exp = s.root.join("cal-modelled.yaml");
    std::fs::write(&exp, MODELLED).unwrap();
    let out = s.root.join("disk");
    let printed = calibrate(
        &s,
        exp.to_str().unwrap(),
        &out,
        &[
            "--inject",
            "medium:device=data,pct=50",
            "--metric",
            "fio.runtime_ms",
            "--warmup",
            "0",
        ],
    );
    let rec = check_consistent(&out, &printed);
    assert_eq!(
        rec.design.injection,
        Some(Injection::Medium {
            device: "data".into(),
            pct: 50.0
        })
    );
    assert_eq!(rec.design.metric, "fio.runtime_ms");
    assert_eq!(rec.truth, Some(1.5));
    assert!(
        printed.contains("  metric:       fio.runtime_ms (warm-up 0)"),
        "{printed}"
    );
    // Every comparison has fio's own times on both sides, and a disk model half as slow
    // again shows: each side's mean is fio's runtime in ms, B's well above A's.
    let t = Bundle::open(&out).unwrap().table("calibration").unwrap();
    let a = t.column("a_mean").unwrap().f64().unwrap();
    let b = t.column("b_mean").unwrap().f64().unwrap();
    for (a, b) in a.iter().zip(b.iter()) {
        let (a, b) = (a.expect("side A's fio runtime"), b.expect("side B's"));
        assert!(a > 100.0 && b / a > 1.3, "A {a} ms, B {b} ms");
    }
    // The same numbers computed again from the bundle with --from.
    let again = s.run(&["calibrate", "--from", out.to_str().unwrap()]);
    assert!(again.status.success(), "{}", text(&again));
    let again = String::from_utf8_lossy(&again.stdout);
    assert!(again.contains("  metric:       fio.runtime_ms"), "{again}");
    assert!(s.loops().is_empty() && s.mounts().is_empty());
}

/// `--from` keeps the bundle's own level and threshold unless given, and refuses values
/// that cannot be a level or a band (a committed calibration at α 0.01, ± 1 %).
#[test]
fn from_keeps_the_bundles_level_and_refuses_a_bad_one() {
    let s = Scratch::new("calf");
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/data/calibration/fio-modelled-aa"
    );
    let o = s.run(&["calibrate", "--from", dir]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("α = 0.01, threshold 1 %"), "{out}");
    assert!(
        out.contains("(0.5 % by design: the lower end of a 99 % interval)"),
        "{out}"
    );
    let o = s.run(&["calibrate", "--from", dir, "--alpha", "0.05"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("α = 0.05, threshold 1 %"));
    for bad in [["--alpha", "2"], ["--threshold", "-1"]] {
        let o = s.run(&["calibrate", "--from", dir, bad[0], bad[1]]);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("expected a"),
            "{}",
            text(&o)
        );
    }
}
