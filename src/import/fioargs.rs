//! fio's options written as a job file writes them, after `fio` on a line of its own
//! (`fio configuration：rw bs=4096 size=1GB numjobs=2 runtime=60`, `fio config: randread
//! bs=4k iodepth=32`): the command fio would run is `fio --name=… --rw=rw --bs=4096
//! --size=1GB …`. A word `key=value` is the option `--key=value`, a bare mode of fio's
//! `rw` (`randread`, `rw`) is `--rw=MODE`, a word that ends with `:` (`configuration:`)
//! is the author's, not fio's; a job name is added when none is given (fio runs no job
//! without one). Only when every argument reads so: a line with `--` options or a job file
//! is fio's own and stays as written.

use super::block::Block;
use super::shell::{Cmd, Node};
use super::{Note, NoteKind};

/// Values of fio's `rw` option.
const RW_MODES: &[&str] = &[
    "read",
    "write",
    "randread",
    "randwrite",
    "rw",
    "readwrite",
    "randrw",
    "trim",
    "randtrim",
    "trimwrite",
];

/// fio's words for the post's (`--name=` first), or None when they are not all written
/// job-file style.
fn as_options(args: &[String]) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut key_values = 0;
    for a in args {
        let a = a.trim_end_matches(',');
        if a.ends_with(':') && a.len() > 1 && a.chars().all(|c| c.is_ascii_alphabetic() || c == ':')
        {
            continue;
        }
        if RW_MODES.contains(&a) {
            out.push(format!("--rw={a}"));
            continue;
        }
        let (k, v) = a.split_once('=')?;
        if k.is_empty()
            || v.is_empty()
            || !k
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            return None;
        }
        key_values += 1;
        out.push(format!("--{k}={v}"));
    }
    if key_values < 2 {
        return None;
    }
    if !out.iter().any(|w| w.starts_with("--name=")) {
        out.insert(0, "--name=job".into());
    }
    Some(out)
}

fn rewrite_nodes(nodes: &mut [Node], notes: &mut Vec<Note>) {
    for n in nodes {
        match n {
            Node::Cmd(c) => rewrite(c, notes),
            Node::Loop(l) => rewrite_nodes(&mut l.body, notes),
            _ => {}
        }
    }
}

fn rewrite(c: &mut Cmd, notes: &mut Vec<Note>) {
    let at = c.program_index();
    if c.words.get(at).map(String::as_str) != Some("fio") || c.heredoc.is_some() {
        return;
    }
    let Some(opts) = as_options(&c.words[at + 1..]) else {
        return;
    };
    notes.push(Note::new(
        c.line,
        NoteKind::Guess,
        &format!(
            "fio's options written as a job file writes them (`{}`): the draft runs `fio {}`{}",
            c.words[at + 1..].join(" "),
            opts.join(" "),
            if opts[0] == "--name=job" {
                " (the job name is the draft's)"
            } else {
                ""
            }
        ),
    ));
    c.words.truncate(at + 1);
    c.words.extend(opts);
}

/// Rewrite every fio command of the blocks whose options are written job-file style.
pub(super) fn rewrite_blocks(blocks: &mut [Block], notes: &mut Vec<Note>) {
    for b in blocks {
        rewrite_nodes(&mut b.nodes, notes);
    }
}

#[cfg(test)]
mod tests {
    use super::as_options;

    fn w(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    #[test]
    fn job_file_style_options_after_fio() {
        assert_eq!(
            as_options(&w(
                "configuration: rw bs=4096 size=1GB numjobs=2 runtime=60"
            ))
            .unwrap(),
            [
                "--name=job",
                "--rw=rw",
                "--bs=4096",
                "--size=1GB",
                "--numjobs=2",
                "--runtime=60"
            ]
        );
        assert_eq!(
            as_options(&w("name=t randread bs=4k iodepth=32")).unwrap(),
            ["--name=t", "--rw=randread", "--bs=4k", "--iodepth=32"]
        );
        // fio's own command lines, a job file, a sentence
        assert_eq!(as_options(&w("--rw=read --bs=4k")), None);
        assert_eq!(as_options(&w("job.fio")), None);
        assert_eq!(as_options(&w("is slow with bs=4k")), None);
        assert_eq!(as_options(&w("bs=4k")), None);
    }
}
