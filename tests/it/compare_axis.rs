//! `fslab compare BUNDLE --by AXIS` (issue 43, part 4): the two rt-path kernels of seed
//! 003 (`data/reruns/003-paths`, `uml-rt-zero` against `uml-rt-convert`, the post's loop
//! and the one-process variant), through the real binary, with a calibration of this host.

use std::process::{Command, Output};

fn fslab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fslab"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .expect("run fslab")
}

#[test]
fn the_two_rt_path_kernels_are_compared_point_by_point_with_their_power() {
    let o = fslab(&["compare", "data/reruns/003-paths", "--by", "kernel"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with("== kernel: uml-rt-zero → uml-rt-convert (both sides from one run, their replicates interleaved in randomised blocks (seed "),
        "{out}"
    );
    // The four points of the other axes, each once, with what it could detect.
    for point in [
        "layout=rt,loop=processes,rtextsize=8k",
        "layout=rt,loop=processes,rtextsize=1024k",
        "layout=rt,loop=one-process,rtextsize=8k",
        "layout=rt,loop=one-process,rtextsize=1024k",
    ] {
        assert_eq!(
            out.lines()
                .filter(|l| l.ends_with(&format!("  {point}")))
                .count(),
            1,
            "{point} in the table:\n{out}"
        );
        assert!(
            out.lines()
                .any(|l| l.starts_with(&format!("  {point}: could detect ≥ "))
                    || l.starts_with(&format!("  {point}: no power: "))),
            "{point}'s power line:\n{out}"
        );
    }
    assert!(out.contains("(90 % power, 5 replicates a side)"), "{out}");
    // The JSON has one comparison with a power per row.
    let j = fslab(&[
        "compare",
        "data/reruns/003-paths",
        "--by",
        "kernel",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    let rows = v[0]["comparison"]["rows"].as_array().unwrap().len();
    assert_eq!((rows, v[0]["power"].as_array().unwrap().len()), (4, 4));
}

#[test]
fn a_calibration_of_another_design_is_said_to_be_another_rule() {
    let o = fslab(&[
        "compare",
        "data/reruns/003-paths",
        "--by",
        "kernel",
        "--calibration",
        "data/calibration/stress-create-aa",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out
        .lines()
        .find(|l| l.starts_with("calibrated on this host: `fslab compare`'s false-positive rate: "))
        .unwrap_or_else(|| panic!("no calibration line:\n{out}"));
    assert!(
        line.contains(
            "over 66 comparisons of 3 replicates a side (wall_s, α = 0.05, threshold 2 %)"
        ),
        "{line}"
    );
    assert!(
        line.contains("NOT this comparison's design (5 replicates a side here)"),
        "{line}"
    );
}

#[test]
fn a_wrong_axis_value_or_bundle_is_a_clear_error() {
    let cases: [(&[&str], &str); 3] = [
        (&["--by", "fs"], "no axis `fs`; its columns: "),
        (&["--by", "kernel", "--against", "uml-x"], "--against uml-x: axis `kernel` has no such value; its values: uml-rt-zero, uml-rt-convert"),
        (&["--by", "kernel", "--calibration", "data/reruns/003-b"], "not a calibration bundle"),
    ];
    for (extra, says) in cases {
        let mut args = vec!["compare", "data/reruns/003-paths"];
        args.extend_from_slice(extra);
        let o = fslab(&args);
        assert!(!o.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn two_bundles_compared_with_a_calibration_get_its_rate_and_design() {
    let o = fslab(&[
        "compare",
        "data/reruns/000-published",
        "data/reruns/000-published-b",
        "--calibration",
        "data/calibration/fio-modelled-aa",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out
        .lines()
        .find(|l| {
            l.starts_with(
                "calibrated on this host: `fslab compare`'s false-positive rate: 0 % (0 of 50; ",
            )
        })
        .unwrap_or_else(|| panic!("no calibration line:\n{out}"));
    assert!(
        line.contains("(fio.runtime_ms, α = 0.01, threshold 1 %)"),
        "{line}"
    );
    assert!(
        line.contains(
            "NOT this comparison's design (metric wall_s here, α = 0.05 here, threshold 2 % here"
        ),
        "{line}"
    );
    // Without --calibration, no such line.
    let plain = fslab(&[
        "compare",
        "data/reruns/000-published",
        "data/reruns/000-published-b",
    ]);
    assert!(!String::from_utf8_lossy(&plain.stdout).contains("calibrated on this host"));
}
