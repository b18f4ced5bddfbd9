use super::{Experiment, SpecError};
const GOOD: &str = r#"id: good
title: Good
devices:
  data: { size: 512MiB }
matrix:
  fs: [ext4, xfs]
setup:
  - run: mkfs.{{fs}} {{dev.data}}
  - mount: data
workload:
  run: fs_mark -d {{mnt}}/d{{iteration}} -n 10
  repeat: 2
"#;

fn err(text: &str) -> SpecError {
    Experiment::from_str_named(text, "bad.yaml").unwrap_err()
}

#[test]
fn a_good_file_loads() {
    let e = Experiment::from_str_named(GOOD, "good.yaml").unwrap();
    assert_eq!(e.id(), "good");
    assert_eq!(e.programs(), ["fs_mark".to_string()]);
}

#[test]
fn unknown_key_is_located_with_a_suggestion() {
    let text = GOOD.replace("  repeat: 2", "  repaet: 2");
    let e = err(&text);
    assert_eq!((e.line, e.column), (12, 3), "{e}");
    assert!(e.message.contains("unknown field `repaet`"), "{e}");
    assert_eq!(e.help.as_deref(), Some("did you mean `repeat`?"));
    assert!(e.to_string().starts_with("bad.yaml:12:3: "), "{e}");
}

#[test]
fn undefined_name_is_located() {
    let text = GOOD.replace("-n 10", "-n {{nfiles}}");
    let e = err(&text);
    assert_eq!(e.line, 11, "{e}");
    assert_eq!(e.column, 45, "{e}");
    assert!(e.message.contains("undefined name `{{nfiles}}`"), "{e}");
}

#[test]
fn iteration_outside_the_workload_is_undefined() {
    let text = GOOD.replace(
        "mkfs.{{fs}} {{dev.data}}",
        "mkfs.{{fs}} {{dev.data}} {{iteration}}",
    );
    let e = err(&text);
    assert_eq!(e.line, 8, "{e}");
    assert!(e.help.unwrap().contains("only in the workload"));
}

#[test]
fn undefined_device_is_located() {
    let e = err(&GOOD.replace("{{dev.data}}", "{{dev.rt}}"));
    assert_eq!(e.line, 8, "{e}");
}

#[test]
fn yaml_syntax_errors_are_located() {
    let e = err(&GOOD.replace("fs: [ext4, xfs]", "fs: [ext4, xfs"));
    assert!(e.line >= 6, "{e}");
}

#[test]
fn wrong_type_is_located() {
    let e = err(&GOOD.replace("repeat: 2", "repeat: [1, 2]"));
    assert!(e.line > 0, "{e}");
}

#[test]
fn empty_axis_is_refused() {
    let e = err(&GOOD.replace("fs: [ext4, xfs]", "fs: []"));
    assert_eq!(e.line, 6, "{e}");
    assert!(e.message.contains("no values"), "{e}");
}

#[test]
fn literal_block_devices_are_refused() {
    let e = err(&GOOD.replace("{{dev.data}}", "/dev/sda"));
    assert_eq!(e.line, 8, "{e}");
    assert!(e.help.unwrap().contains("logical devices only"));
    // Harmless device files are fine.
    Experiment::from_str_named(&GOOD.replace("-n 10", "-n 10 /dev/null"), "ok.yaml").unwrap();
}

#[test]
fn a_step_needs_exactly_one_action() {
    let e = err(&GOOD.replace("  - mount: data", "  - mount: data\n    sync: true"));
    assert!(
        e.message.contains("has 2 actions, `mount` and `sync`"),
        "{e}"
    );
    assert_eq!((e.line, e.column), (10, 5), "{e}");
}

#[test]
fn profile_naming_unknown_variable() {
    let text = format!("{GOOD}profiles:\n  quick: {{ fss: ext4 }}\n");
    let e = err(&text);
    assert_eq!(e.line, 14, "{e}");
    assert_eq!(e.help.as_deref(), Some("did you mean `fs`?"));
}

/// The device hole: a value that a step uses is read like a literal, wherever the
/// value is written.
const DD: &str = r#"id: dd
title: dd
devices:
  data: { size: 64MiB }
vars:
  bs: 1M
matrix:
  filename: [test-data, other]
profiles:
  big: { bs: 4M }
setup:
  - run: mkfs.ext4 -F {{dev.data}}
  - mount: data
workload:
  run: dd if={{filename}} of={{mnt}}/out bs={{bs}} count=1
"#;

#[test]
fn an_axis_value_that_names_a_device_is_refused_where_it_is_written() {
    Experiment::from_str_named(DD, "dd.yaml").unwrap();
    let e = err(&DD.replace("[test-data, other]", "[test-data, /dev/vda]"));
    assert_eq!((e.line, e.column), (8, 25), "{e}");
    assert!(
        e.message.contains("the workload uses `{{filename}}`"),
        "{e}"
    );
    assert!(e.message.contains("the matrix axis `filename`"), "{e}");
    assert!(e.message.contains("names the device `/dev/vda`"), "{e}");
    assert!(e.help.unwrap().contains("logical devices only"));
}

#[test]
fn a_var_that_names_a_device_is_refused_where_it_is_written() {
    let e = err(&DD
        .replace("  bs: 1M", "  bs: 1M\n  disk: /dev/nvme0n1")
        .replace("of={{mnt}}/out", "of={{disk}}"));
    assert_eq!((e.line, e.column), (7, 9), "{e}");
    assert!(e.message.contains("`vars.disk`"), "{e}");
    // Inside a longer word too, and with the device's name only half in the value.
    let e = err(&DD.replace("bs: 1M", "bs: \"1M oflag=direct of=/dev/sda\""));
    assert_eq!(e.line, 6, "{e}");
    let e = err(&DD.replace("bs: 1M", "bs: /dev/"));
    assert!(e.message.contains("names the device `/dev/`"), "{e}");
}

#[test]
fn a_profile_value_that_names_a_device_is_refused_where_it_is_written() {
    let e = err(&DD.replace("big: { bs: 4M }", "big: { bs: 4M, filename: /dev/sdb }"));
    assert_eq!((e.line, e.column), (10, 28), "{e}");
    assert!(e.message.contains("profile `big`"), "{e}");
}

#[test]
fn a_tool_choice_that_names_a_device_is_refused() {
    let text = DD.replace(
        "setup:",
        "tools:\n  copy:\n    choices:\n      - dd of=/dev/sdc\nsetup:",
    );
    let e = err(&text);
    assert!(
        e.message
            .contains("tool `copy` choice 1 names the device `/dev/sdc`"),
        "{e}"
    );
    assert_eq!(e.line, 14, "{e}");
}

#[test]
fn a_harmless_value_and_an_unused_device_value_load() {
    Experiment::from_str_named(
        &DD.replace("[test-data, other]", "[test-data, /dev/zero]"),
        "ok.yaml",
    )
    .unwrap();
    // A harmless prefix does not hide a device.
    let e = err(&DD.replace("[test-data, other]", "[test-data, /dev/null/../sda]"));
    assert!(e.message.contains("/dev/null/../sda"), "{e}");
}

#[test]
fn a_top_level_kernel_is_the_kernel_variable_of_every_point() {
    let text = GOOD.replace("title: Good\n", "title: Good\nkernel: uml-bookworm\n");
    let e = Experiment::from_str_named(&text, "k.yaml").unwrap();
    assert_eq!(e.def.kernel, None);
    assert_eq!(
        e.def.vars.get("kernel"),
        Some(&super::Value::Str("uml-bookworm".into()))
    );
    // a profile may change it, as it may any var
    let text = format!("{text}profiles:\n  here: {{ kernel: host }}\n");
    assert!(Experiment::from_str_named(&text, "k.yaml").is_ok());
}

#[test]
fn a_top_level_kernel_beside_a_kernel_axis_or_var_is_located() {
    let text = GOOD
        .replace("title: Good\n", "title: Good\nkernel: uml-bookworm\n")
        .replace(
            "  fs: [ext4, xfs]\n",
            "  fs: [ext4, xfs]\n  kernel: [host, uml-trixie]\n",
        );
    let e = err(&text);
    assert_eq!((e.line, e.column), (3, 9), "{e}");
    assert!(e.message.contains("both name the kernel"), "{e}");
    assert!(e.help.as_deref().unwrap().contains("keep one"), "{e:?}");
    let text = GOOD.replace(
        "title: Good\n",
        "title: Good\nkernel: uml-bookworm\nvars:\n  kernel: host\n",
    );
    assert!(err(&text).message.contains("`vars:` both name"));
    let text = GOOD.replace("title: Good\n", "title: Good\nkernel: \"uml bookworm\"\n");
    let e = err(&text);
    assert_eq!(e.line, 3, "{e}");
    assert!(e.message.contains("is not a kernel name"), "{e}");
}

#[test]
fn every_check_is_read_once_at_load_and_written_back_as_it_was() {
    let text = format!(
        "{GOOD}claims:\n  - id: c\n    text: t\n    check: {{ kind: ratio, metric: wall_s, numerator: {{ fs: xfs }}, denominator: {{ fs: ext4 }}, expect: {{ max: 2 }} }}\n"
    );
    let e = Experiment::from_str_named(&text, "c.yaml").unwrap();
    let spec = e.def.claims[0].check.as_ref().unwrap();
    assert_eq!(spec.read().map(|c| c.kind()), Some("ratio"));
    assert!(spec.error().is_none());
    let back = serde_yaml::to_value(&e.def.claims[0]).unwrap();
    assert_eq!(&back["check"], spec.raw());
    // One that does not read is refused at load, at its key: never a missing verdict later.
    let bad = text.replace("kind: ratio", "kind: ratioo");
    let err = err(&bad);
    assert_eq!((err.line, err.column), (16, 20), "{err}");
    assert!(err.message.contains("ratioo"), "{err}");
}
