use super::*;
use crate::import::mail::unquote as unquote_lines;
use crate::import::shell::{walk, LoopKind};

#[test]
fn commands_broken_after_an_option_with_a_value() {
    assert!(wrapped("mount -o", Some("loop,logbsize=256k /img /mnt")));
    assert!(wrapped("mkfs.xfs -f -l", Some("size=1310b,sunit=8 /img")));
    // a flag ends the command; the output below is no argument
    assert!(!wrapped(
        "mkfs.xfs -f",
        Some("meta-data=/dev/vdb isize=512 agcount=4,")
    ));
    assert!(!wrapped(
        "mkfs.xfs -l",
        Some("meta-data=/dev/vdb isize=512 agcount=4,")
    ));
    assert!(!wrapped("mount -o", Some("# umount /mnt")));
    assert!(!wrapped("mount -o", None));
}

fn lines(s: &str) -> Vec<PostLine> {
    let body: Vec<(usize, String)> = s
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.to_string()))
        .collect();
    unquote_lines(&body)
}

fn cmds(c: &Commands) -> Vec<(usize, String, bool)> {
    let mut v = Vec::new();
    for b in &c.blocks {
        walk(&b.nodes, &mut Vec::new(), &mut |c, _| {
            v.push((c.line, c.text(), c.timed))
        });
    }
    v
}

#[test]
fn prompts_of_every_shape() {
    for (line, want) in [
        ("# mkfs.xfs -f /dev/sdb", Some("mkfs.xfs -f /dev/sdb")),
        ("$ ./run.sh 1", Some("./run.sh 1")),
        ("root@vm:~# fio --name=x", Some("fio --name=x")),
        (
            "[root@host tmp]# xfs_io -c 'fsync' f",
            Some("xfs_io -c 'fsync' f"),
        ),
        ("This is prose.", None),
    ] {
        assert_eq!(after_prompt(line), want, "{line}");
    }
    assert!(!looks_like_command("mount options are fine here."));
    assert!(looks_like_command(
        "mount -o loop,logbsize=256k fs.img /mnt"
    ));
    assert!(!looks_like_command(
        "For the rest of us who don't live in the stratosphere"
    ));
    // `sh -c "…"` is the command its script is; a template of placeholders is none
    assert!(looks_like_command(
        "time sh -c \"dd if=/dev/zero of=/mnt/x bs=4k count=20 && sync\""
    ));
    assert!(!looks_like_command(
        "time sh -c \"dd if=/dev/zero of=[PATH] bs=[BLOCK_SIZE]k && sync\""
    ));
    assert!(looks_like_command("[ -d /mnt/x ] || mkdir /mnt/x"));
}

#[test]
fn numbered_steps_glued_root_prompts_and_prompt_directories() {
    // a numbered step before a prompt, a blank after the host's colon
    assert_eq!(after_prompt("2.   # zpool status"), Some("zpool status"));
    assert_eq!(after_prompt("10) $ sync"), Some("sync"));
    assert_eq!(
        after_prompt("bob@nas: /srv/pool$ time dd if=/dev/zero of=f bs=1M"),
        Some("time dd if=/dev/zero of=f bs=1M")
    );
    assert_eq!(after_prompt("3. Then wait."), None);
    assert_eq!(after_prompt("see http://host: /x$ y"), None);
    // the directory a prompt shows
    assert_eq!(prompt_dir("root@box:/data# ls").as_deref(), Some("/data"));
    assert_eq!(prompt_dir(":~$ fio --name=x").as_deref(), Some("~"));
    assert_eq!(
        prompt_dir("[root@ws mnt]# dd if=/dev/zero of=x").as_deref(),
        Some("mnt")
    );
    assert_eq!(
        prompt_dir("bob@nas: /srv/pool$ sync").as_deref(),
        Some("/srv/pool")
    );
    assert_eq!(prompt_dir("# sync"), None);
    // `#cd /x` among `# ` prompts is a prompt; alone, or a heading, it is not
    let c = find(&lines(
        "Steps:\n1. # mkdir -p /srv/t\n2. #cd /srv/t\n3. # time dd if=/dev/zero of=out bs=1M count=8\n",
    ));
    let got = cmds(&c);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[1].1, "dd if=/dev/zero of=out bs=1M count=8");
    let cwd = c.blocks.iter().rev().find_map(|b| match &b.nodes[0] {
        Node::Cmd(c) => c.cwd.clone(),
        _ => None,
    });
    assert_eq!(cwd.map(|c| c.dir).as_deref(), Some("/srv/t"));
    let c = find(&lines("#cd /srv/t\n\n#Throughput 12 MB/sec\n"));
    assert!(cmds(&c).is_empty(), "{:?}", cmds(&c));
}

#[test]
fn script_with_count_loop_and_time() {
    let c = find(&lines(
        "I ran:\n\n#!/bin/bash\n\numount /opt\nmkfs.xfs -f /dev/sdb -n parent=$1\nfor ((i=0;i<10;i++)); do\n\ttime fsstress -n 400 -d /opt/foo\ndone\n\n# ./dumb.sh 0\nreal 0m1.0s\n",
    ));
    let got = cmds(&c);
    assert_eq!(got[0], (5, "umount /opt".into(), false));
    assert_eq!(got[1].0, 6);
    assert_eq!(got[2], (8, "fsstress -n 400 -d /opt/foo".into(), true));
    assert_eq!(got[3], (11, "./dumb.sh 0".into(), false));
    let Node::Loop(l) = &c.blocks[0].nodes[2] else {
        panic!("{:?}", c.blocks[0].nodes)
    };
    assert_eq!(l.kind, LoopKind::Count(10));
    assert_eq!(c.blocks[1].kind, BlockKind::Prompt);
    assert!(!c.command_lines[11], "time output is not a command");
}

#[test]
fn continuations_brace_ranges_and_timed_loops() {
    let c = find(&lines(
        "tests:\n\n  mkfs.xfs -f -d rtinherit=1 \\\n           -r rtdev=/dev/pmem1s,extsize=$rtextsize /dev/pmem2s\n  for i in {1..1000}; \\\n  do dd if=/dev/zero of=/mnt/scratch/$i bs=$rtextsize count=1; done\n  time for i in {1..1000}; \\\n  do xfs_io -c \"truncate 4k\" /mnt/scratch/$i; done\n\nrtextsize 8k\n",
    ));
    assert_eq!(c.blocks.len(), 1);
    let nodes = &c.blocks[0].nodes;
    let Node::Cmd(mkfs) = &nodes[0] else { panic!() };
    assert_eq!(mkfs.line, 3);
    assert!(mkfs.text().ends_with("extsize=$rtextsize /dev/pmem2s"));
    let Node::Loop(dd) = &nodes[1] else { panic!() };
    assert_eq!(
        (dd.kind.clone(), dd.timed, dd.line),
        (LoopKind::Range(1, 1000), false, 5)
    );
    let Node::Loop(tr) = &nodes[2] else { panic!() };
    assert!(tr.timed);
    let Node::Cmd(x) = &tr.body[0] else { panic!() };
    assert_eq!(x.argv(), ["xfs_io", "-c", "truncate 4k", "/mnt/scratch/$i"]);
    assert!(x.timed);
}

#[test]
fn list_loops_and_assignments() {
    let c = find(&lines(
        "$ DEV=/dev/vdb\n$ for p in 1 0; do mkfs.xfs -f -n parent=$p $DEV; done\n",
    ));
    let got = cmds(&c);
    assert_eq!(
        got,
        [(2, "mkfs.xfs -f -n parent=$p /dev/vdb".to_string(), false)]
    );
    let Node::Loop(l) = &c.blocks[1].nodes[0] else {
        panic!("{:?}", c.blocks)
    };
    assert_eq!(l.kind, LoopKind::List(vec!["1".into(), "0".into()]));
}

#[test]
fn inline_commands_in_prose_and_quotes() {
    let c = find(&lines(
        "> Running on ext3, \"fsck -f\" takes about one hour.\n(Ric just made the fs with mkfs.ext3 -j -I 256 -E test_fs initially I think)\nThe test uses fs_mark to fill a drive.\n",
    ));
    let got = cmds(&c);
    assert_eq!(got[0], (1, "fsck -f".into(), false));
    assert_eq!(got[1], (2, "mkfs.ext3 -j -I 256 -E test_fs".into(), false));
    assert_eq!(got[2], (3, "fs_mark".into(), false));
}

#[test]
fn a_timed_command_quoted_in_a_sentence() {
    let w: Vec<&str> = "Test with `time memhog 128G` inside a 8G memcg"
        .split(' ')
        .collect();
    let (c, next) = timed_span(&w, 2, 7).unwrap();
    assert_eq!(c.words, ["memhog", "128G"]);
    assert!(c.timed);
    assert_eq!((c.line, next), (7, 5));
    // `time` named, no program in the backquotes; a capitalised word
    let w: Vec<&str> = "the `time` it takes".split(' ').collect();
    assert!(timed_span(&w, 1, 1).is_none());
    let w: Vec<&str> = "with `time Foo` here".split(' ').collect();
    assert!(timed_span(&w, 1, 1).is_none());
}
