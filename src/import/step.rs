//! The steps of a draft: what each does ([`Action`]), with its post line, loops and
//! comment ([`Step`]). Kept apart from `draft` so that the modules that shape a step
//! (`nested`, `workdir`, `replies`) and the one that builds the draft do not import each
//! other.

/// A step's `times:` and the first value of its `{{i}}` (`times_from:`, 0 unless the
/// post's loop starts elsewhere and the command names its variable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Times {
    pub count: u64,
    pub from: i64,
}

/// What a step does.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Run {
        name: String,
        command: String,
        parse: Option<&'static str>,
    },
    /// A command given as its words: `sh -c` with a here-document (the format runs no
    /// shell, so the post's here-document is kept in a `sh -c` script: [`super::heredocs`]).
    Words {
        name: String,
        argv: Vec<String>,
        parse: Option<&'static str>,
    },
    Mount {
        device: String,
        options: Option<String>,
    },
    Mkdir(String),
    Sync,
    DropCaches,
    Umount,
}

/// One step of the draft, with the post line it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub line: usize,
    pub action: Action,
    pub times: Option<Times>,
    pub repeat: Option<u64>,
    /// `when: { axis: [values] }`: the points the step runs at (a `case` branch's).
    pub when: Option<(String, Vec<String>)>,
    /// Comment after the step (`# line N: …`, `# guess: …`).
    pub comment: String,
}
