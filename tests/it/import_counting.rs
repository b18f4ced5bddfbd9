//! `fslab import` on counting loops: a loop that names files from 1 (`for i in $(seq 1
//! N)`, `{1..N}`) gives its step `times_from: 1`, so that `{{i}}` names the post's files
//! (`f_1` … `f_N`, not `f_0` … `f_N-1`), in `fslab plan` and in a real run. The post is
//! written in the style of linux-ext4 replies (its fixture's `#|` note says so).

use super::common::{text, walk, Scratch};
use super::import::draft_of;
use super::import_dirs::styled;
use fslab::spec::{CommandSpec, Step, Value};

fn line(s: &Step) -> String {
    match &s.run {
        Some(CommandSpec::Line(l)) => l.clone(),
        other => format!("{other:?}"),
    }
}

/// The draft's setup step that runs `touch`.
fn touch_step(e: &fslab::Experiment) -> &fslab::spec::Step {
    e.def
        .setup
        .iter()
        .find(|s| line(s).starts_with("touch"))
        .unwrap()
}

#[test]
fn a_loop_from_one_names_the_posts_files() {
    let text = styled("ext4-unlink-seq-files.txt");
    let (_, e) = draft_of(&text);
    // `for i in $(seq 1 10000); do touch /mnt/test/f_$i; done`
    let touch = touch_step(&e);
    assert_eq!(line(touch), "touch {{mnt}}/f_{{i}}");
    assert_eq!(touch.times, Some(Value::Int(10000)));
    assert_eq!(touch.times_from, Some(Value::Int(1)));
    // `time for i in {1..10000}; do rm /mnt/test/f_$i; done`: the same names
    let w = &e.def.workload;
    assert_eq!(line(w), "rm {{mnt}}/f_{{i}}");
    assert_eq!(
        (w.times.clone(), w.times_from.clone()),
        (Some(Value::Int(10000)), Some(Value::Int(1)))
    );
    assert_eq!((w.index_of(0), w.index_of(9999)), (1, 10000));
    // a loop from 0 (`for ((i=0;i<N;i++))`) needs no `times_from`
    let (d, e) = draft_of(&text.replace("for i in $(seq 1 10000)", "for ((i=0;i<10000;i++))"));
    let touch = touch_step(&e);
    assert_eq!(
        (touch.times.clone(), touch.times_from.clone()),
        (Some(Value::Int(10000)), None)
    );
    assert!(!d.yaml.unwrap().contains("times_from: 0"));
}

/// `fslab plan` shows the values `{{i}}` takes; a real run (a loop device, as root) makes
/// and removes `f_1` … `f_5`, as the post's loops do (`ls` after the loop lists them).
#[test]
fn plan_and_a_real_run_use_the_posts_names() {
    let post = styled("ext4-unlink-seq-files.txt")
        .replace("10000", "5")
        .replace("ls /mnt/test | wc -l", "ls /mnt/test");
    let (d, _) = draft_of(&post);
    let s = Scratch::new("tfrom");
    let yaml = s.root.join("unlink.yaml");
    std::fs::write(&yaml, d.yaml.unwrap()).unwrap();
    let o = s.run(&["plan", yaml.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let plan = String::from_utf8_lossy(&o.stdout);
    assert!(
        plan.contains("5 × (i = 1 … 5) touch {{mnt}}/f_{{i}}"),
        "{plan}"
    );
    assert!(
        plan.contains("5 × (i = 1 … 5) rm {{mnt}}/f_{{i}}"),
        "{plan}"
    );
    let o = s.run(&["run", yaml.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
    let bundle = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let ls = walk(std::path::Path::new(&bundle))
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with("-ls.stdout"))
        .unwrap_or_else(|| panic!("no ls log in {bundle}"));
    let names: Vec<String> = std::fs::read_to_string(ls)
        .unwrap()
        .split_whitespace()
        .filter(|n| *n != "lost+found")
        .map(str::to_string)
        .collect();
    assert_eq!(names, ["f_1", "f_2", "f_3", "f_4", "f_5"]);
}

/// A timed loop inside an untimed counting loop (`for r in 1 2 3; do time for i in $(seq 1
/// 1000); do xfs_io …`): each outer run is one timed run, so the outer loop is the
/// workload's `repeat: 3` and the inner one its `times: 1000` (from 1), as at top level;
/// also `time (for …)` in a subshell, and a repetition loop's variable is `{{iteration}}`.
#[test]
fn a_timed_loop_in_a_counting_loop_is_repeat_over_times() {
    let text = styled("xfs-repeated-timed-loop.txt");
    let (d, e) = draft_of(&text);
    let w = &e.def.workload;
    assert_eq!(
        line(w),
        "xfs_io -f -d -c \"pwrite -D 0 4k\" {{mnt}}/d/f{{i}}"
    );
    assert_eq!(
        (w.times.clone(), w.times_from.clone()),
        (Some(Value::Int(1000)), Some(Value::Int(1)))
    );
    assert_eq!(format!("{:?}", w.repeat), "Some(Count(Int(3)))");
    let yaml = d.yaml.unwrap();
    assert!(
        yaml.contains("each run of `for r in 1 2 3` is one timed run (`repeat:`)"),
        "{yaml}"
    );
    let post = |body: &str| {
        format!("Subject: t\n\n# mkfs.ext4 -F /dev/vdc\n# mount /dev/vdc /mnt/test\n# {body}\n")
    };
    let (_, e) = draft_of(&post(
        "for run in $(seq 5); do time (for f in $(seq 1 100); do touch /mnt/test/f_$f; done); done",
    ));
    let w = &e.def.workload;
    assert_eq!(line(w), "touch {{mnt}}/f_{{i}}");
    assert_eq!(w.times, Some(Value::Int(100)));
    assert_eq!(format!("{:?}", w.repeat), "Some(Count(Int(5)))");
    // `for ((r=0;r<3;r++))` around a timed loop over one file: repeat 3 × times 1000
    let (_, e) = draft_of(&post(
        "for ((r=0;r<3;r++)); do time for i in {1..1000}; do touch /mnt/test/x; done; done",
    ));
    let w = &e.def.workload;
    assert_eq!(
        (line(w), w.times.clone()),
        ("touch {{mnt}}/x".into(), Some(Value::Int(1000)))
    );
    assert_eq!(format!("{:?}", w.repeat), "Some(Count(Int(3)))");
    // the repetition loop's variable: `{{iteration}}` (1, 2, 3 as the post's `$r`)
    let (_, e) = draft_of(&post(
        "for r in $(seq 1 3); do time fs_mark -d /mnt/test/run$r -n 100; done",
    ));
    assert_eq!(
        line(&e.def.workload),
        "{{fs_mark}} -d {{mnt}}/run{{iteration}} -n 100"
    );
    assert_eq!(
        format!("{:?}", e.def.workload.repeat),
        "Some(Count(Int(3)))"
    );
    // the whole nest under `time`: one timed run of all of it, as before
    let (_, e) = draft_of(&post(
        "time for r in 1 2 3; do for i in $(seq 1 10); do touch /mnt/test/f_$i; done; done",
    ));
    assert!(e.def.workload.repeat.is_none());
    assert!(format!("{:?}", e.def.workload.run).contains("for i in $(seq 1 10)"));
}
