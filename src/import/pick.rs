//! Which of the experiment's commands is the workload: the timed command, else one named
//! in a sentence that gives a time, else a benchmark, else the last command that is not
//! preparation.

use super::shell::Cmd;

/// The index of the workload among `cmds` (each with whether a sentence names it).
pub fn workload(cmds: &[(&Cmd, bool)], timed_sentences: &[usize]) -> usize {
    cmds.iter()
        .position(|(c, _)| c.timed)
        .or_else(|| {
            cmds.iter()
                .position(|(c, inline)| *inline && timed_sentences.contains(&c.line))
        })
        .or_else(|| cmds.iter().position(|(c, _)| c.program().is_benchmark()))
        .or_else(|| cmds.iter().rposition(|(c, _)| !c.program().is_setup()))
        .unwrap_or(cmds.len().saturating_sub(1))
}
