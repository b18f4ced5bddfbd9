//! `fslab import` on a reply that quotes a script and shows another: the draft is the
//! least-quoted script (the replier's own), a `# guess:` above the workload names both
//! scripts' lines, and the other script's commands the draft does not run are written as
//! comments at the end, never dropped. The post is written in the style of linux-ext4
//! threads (its fixture's `#|` note says so); Darrick J. Wong's real reply
//! (`xfs-pptr-benchme-reply.txt`) is checked in `import_shell.rs`.

use super::import::{draft_of, note_at};
use super::import_dirs::{line_of, styled};
use fslab::import::NoteKind;
use fslab::spec::CommandSpec;

#[test]
fn the_repliers_own_script_is_the_draft() {
    let text = styled("ext4-reply-modified-script.txt");
    let (d, e) = draft_of(&text);
    let run = |s: &fslab::spec::Step| match &s.run {
        Some(CommandSpec::Line(l)) => l.clone(),
        other => format!("{other:?}"),
    };
    // the replier's fio (`--numjobs=4`), after its `dd`, not the quoted one after `fallocate`
    assert!(
        run(&e.def.workload).ends_with("--time_based --numjobs=4 --group_reporting"),
        "{}",
        run(&e.def.workload)
    );
    let setup: Vec<String> = e.def.setup.iter().map(run).collect();
    assert!(setup
        .iter()
        .any(|s| s.starts_with("dd if=/dev/zero of={{mnt}}/testfile")));
    assert!(!setup.iter().any(|s| s.contains("fallocate")), "{setup:?}");
    let (quoted, own) = (
        line_of(&text, "> #!/bin/sh"),
        1 + text.lines().position(|l| l == "#!/bin/sh").unwrap(),
    );
    let (q_end, own_end) = (
        line_of(&text, "> fio --name"),
        line_of(&text, "--numjobs=4"),
    );
    let yaml = d.yaml.as_deref().unwrap();
    let header = format!(
        "# guess: the workload is the least-quoted script's (lines {own}–{own_end}, unquoted: the replier's own); the other at lines {quoted}–{q_end}, quoted 1 deep, is written at the end as comments\nworkload:"
    );
    assert!(yaml.contains(&header), "{header}\n{yaml}");
    // the quoted script's commands the draft does not run, each with its line
    let fallocate = line_of(&text, "> fallocate");
    for want in [
        format!("#   line {fallocate}: fallocate -l 8G /mnt/ext4/testfile\n"),
        format!("#   line {q_end}: fio --name=randw --filename=/mnt/ext4/testfile --rw=randwrite --bs=4k --direct=1 --ioengine=libaio --iodepth=32 --runtime=60 --time_based\n"),
    ] {
        assert!(yaml.contains(&want), "{want}\n{yaml}");
    }
    // the commands both scripts run are not listed twice
    assert!(
        !yaml.contains(&format!("#   line {}: mkfs.ext4", quoted + 1)),
        "{yaml}"
    );
    note_at(&d, quoted, NoteKind::Unmapped, "another script");
    note_at(
        &d,
        own_end,
        NoteKind::Guess,
        "the workload is the least-quoted script's",
    );
}
