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

#[test]
fn a_loop_from_one_names_the_posts_files() {
    let text = styled("ext4-unlink-seq-files.txt");
    let (_, e) = draft_of(&text);
    // `for i in $(seq 1 10000); do touch /mnt/test/f_$i; done`
    let touch = e
        .def
        .setup
        .iter()
        .find(|s| line(s).starts_with("touch"))
        .unwrap();
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
    let touch = e
        .def
        .setup
        .iter()
        .find(|s| line(s).starts_with("touch"))
        .unwrap();
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
