//! Which of the experiment's commands is the workload: the timed command, else one whose
//! output the post shows with its numbers, else one named in a sentence that gives a
//! time, else a benchmark, else the last command that is not preparation.

use super::shell::Cmd;

/// What the post says about its commands besides the commands themselves: the lines of
/// sentences that give a time ("`fsck -f` takes about one hour") and of the commands whose
/// output right below them gave result numbers (dd's `… copied, 11.1 s, 9.0 MB/s` under
/// `# dd …`).
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    pub timed_sentences: Vec<usize>,
    pub reported: Vec<usize>,
}

/// The index of the workload among `cmds` (each with whether a sentence names it).
pub fn workload(cmds: &[(&Cmd, bool)], evidence: &Evidence) -> usize {
    cmds.iter()
        .position(|(c, _)| c.timed)
        .or_else(|| {
            cmds.iter()
                .position(|(c, _)| evidence.reported.contains(&c.line))
        })
        .or_else(|| {
            cmds.iter()
                .position(|(c, inline)| *inline && evidence.timed_sentences.contains(&c.line))
        })
        .or_else(|| cmds.iter().position(|(c, _)| c.program().is_benchmark()))
        .or_else(|| cmds.iter().rposition(|(c, _)| !c.program().is_setup()))
        .unwrap_or(cmds.len().saturating_sub(1))
}

/// The lines of the commands whose output, right below them (blank lines and a tool's
/// lines without numbers aside, `passable`: not prose), is tool output that gave rows (`output_lines`, post indices): their numbers report them.
pub fn reported(
    command_lines: &[bool],
    output_lines: &[bool],
    passable: &[bool],
    numbers: &[usize],
) -> Vec<usize> {
    let mut out = Vec::new();
    for k in (0..command_lines.len()).filter(|&k| command_lines[k]) {
        let below = (k + 1..command_lines.len())
            .take(4)
            .find(|&j| !passable[j] || command_lines[j] || output_lines[j]);
        if below.is_some_and(|j| output_lines[j] && !command_lines[j]) {
            out.push(numbers[k]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::reported;

    #[test]
    fn a_command_is_reported_by_the_output_right_below_it() {
        // 0: cmd, 1: output, 2: cmd, 3: cmd, 4: (blank or `1+0 records in`), 5: output,
        // 6: cmd, 7: prose, 8: output
        let cmd = [true, false, true, true, false, false, true, false, false];
        let out = [false, true, false, false, false, true, false, false, true];
        let blank = [true, true, true, true, true, true, true, false, true];
        let n = [10, 11, 12, 13, 14, 15, 16, 17, 18];
        assert_eq!(reported(&cmd, &out, &blank, &n), [10, 13]);
    }
}
