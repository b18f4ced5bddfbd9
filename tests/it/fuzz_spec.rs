//! Property tests (bounded fuzzing) of the experiment loader and of `{{name}}`
//! substitution. Each property runs a fixed number of cases so that CI stays quick;
//! raise them locally with `PROPTEST_CASES=100000 cargo test --test fuzz_spec`.

use fslab::spec::{Piece, Template, Value};
use fslab::{Experiment, Plan};
use proptest::prelude::*;
use std::path::Path;

/// Experiments that load, to mutate.
fn seeds() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in ["experiments", "tests/experiments"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        for f in files {
            if f.extension().is_some_and(|x| x == "yaml") {
                out.push(std::fs::read_to_string(f).unwrap());
            }
        }
    }
    assert!(out.len() >= 3, "no seed experiments found");
    for s in &out {
        // Every seed loads, or the mutations below start from broken ground.
        Experiment::from_str_named(s, "seed.yaml").unwrap();
    }
    out
}

/// The loader's contract on any text: Ok, or a located error whose line exists.
fn check_load(text: &str) -> Result<(), TestCaseError> {
    match Experiment::from_str_named(text, "fuzz.yaml") {
        Ok(exp) => {
            // What loads also plans (or refuses) and renders without panicking.
            if let Ok(plan) = Plan::new(&exp, None, &[]) {
                for point in plan.points.iter().take(8) {
                    for step in exp.all_steps() {
                        if let Ok(words) = step.argv_templates() {
                            for w in words {
                                let _ = w.render(&|n| {
                                    point
                                        .vars
                                        .get(n)
                                        .cloned()
                                        .or_else(|| Some(Value::Str(format!("<{n}>"))))
                                });
                            }
                        }
                    }
                }
            }
        }
        Err(e) => {
            let all = yaml_lines(text);
            let lines = all.len();
            prop_assert!(
                e.line <= lines,
                "line {} of {} lines: {e}\n--- text\n{text}",
                e.line,
                lines
            );
            if e.line > 0 {
                prop_assert_eq!(e.snippet.as_deref(), all.get(e.line - 1).copied());
                let width = all.get(e.line - 1).map_or(0, |l| l.chars().count());
                prop_assert!(e.column <= width + 1, "column {} of {width}: {e}", e.column);
            }
            prop_assert!(!e.message.is_empty());
            let _ = e.to_string();
        }
    }
    Ok(())
}

/// Lines as YAML counts them: `\r\n`, `\r`, `\n`, NEL, LS and PS all end a line.
fn yaml_lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        match rest.find(['\r', '\n', '\u{85}', '\u{2028}', '\u{2029}']) {
            Some(i) => {
                out.push(&rest[..i]);
                let c = rest[i..].chars().next().unwrap_or('\n');
                let mut next = i + c.len_utf8();
                if c == '\r' && rest[next..].starts_with('\n') {
                    next += 1;
                }
                rest = &rest[next..];
            }
            None => {
                out.push(rest);
                break;
            }
        }
    }
    out
}

/// Text pieces that matter to YAML and to templates.
const TOKENS: &[&str] = &[
    ":",
    ": ",
    "- ",
    "-",
    "{",
    "}",
    "[",
    "]",
    ",",
    "\"",
    "'",
    "#",
    "\n",
    "\n  ",
    "\t",
    "  ",
    "{{",
    "}}",
    "{{fs}}",
    "{{mnt}}",
    "{{iteration}}",
    "{{dev.data}}",
    "{{ x }}",
    "/dev/sda",
    "rtdev=/dev/sdb",
    "run: ",
    "mount: ",
    "repeat: ",
    "times: ",
    "when: ",
    "matrix:",
    "vars:",
    "profiles:",
    "exclude:",
    "devices:",
    "size: ",
    "1GiB",
    "0",
    "-1",
    "1e400",
    "~",
    "null",
    "true",
    "[]",
    "{}",
    "&a",
    "*a",
    "!!str",
    "é",
    "\u{0}",
    "\r\n",
    "status",
    "iteration",
];

#[derive(Debug, Clone)]
enum Mutation {
    Delete { at: usize, len: usize },
    Insert { at: usize, token: usize },
    InsertChar { at: usize, c: char },
    DuplicateLine { line: usize },
    SwapLines { a: usize, b: usize },
    Indent { line: usize, by: i8 },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1usize..12).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(at, token)| Mutation::Insert { at, token }),
        (any::<usize>(), any::<char>()).prop_map(|(at, c)| Mutation::InsertChar { at, c }),
        any::<usize>().prop_map(|line| Mutation::DuplicateLine { line }),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines { a, b }),
        (any::<usize>(), -4i8..4).prop_map(|(line, by)| Mutation::Indent { line, by }),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len().max(1);
    match m {
        Mutation::Delete { at, len } => {
            let at = at % n;
            let end = (at + len).min(chars.len());
            chars[..at.min(chars.len())]
                .iter()
                .chain(&chars[end..])
                .collect()
        }
        Mutation::Insert { at, token } => {
            let at = at % (chars.len() + 1);
            let mut s: String = chars[..at].iter().collect();
            s.push_str(TOKENS[*token]);
            s.extend(&chars[at..]);
            s
        }
        Mutation::InsertChar { at, c } => {
            let at = at % (chars.len() + 1);
            let mut v = chars.clone();
            v.insert(at, *c);
            v.into_iter().collect()
        }
        Mutation::DuplicateLine { line } => {
            let mut lines: Vec<&str> = text.split('\n').collect();
            let i = line % lines.len();
            lines.insert(i, lines[i]);
            lines.join("\n")
        }
        Mutation::SwapLines { a, b } => {
            let mut lines: Vec<&str> = text.split('\n').collect();
            let (a, b) = (a % lines.len(), b % lines.len());
            lines.swap(a, b);
            lines.join("\n")
        }
        Mutation::Indent { line, by } => {
            let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
            let i = line % lines.len();
            let l = &lines[i];
            lines[i] = if *by >= 0 {
                format!("{}{l}", " ".repeat(*by as usize))
            } else {
                let drop = (-*by as usize).min(l.len() - l.trim_start_matches(' ').len());
                l[drop..].to_string()
            };
            lines.join("\n")
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn the_loader_survives_arbitrary_text(text in any::<String>()) {
        check_load(&text)?;
    }

    #[test]
    fn the_loader_survives_yaml_shaped_text(
        text in proptest::collection::vec(
            prop_oneof![
                (0..TOKENS.len()).prop_map(|i| TOKENS[i].to_string()),
                "[a-z_]{1,8}",
            ],
            0..80,
        ).prop_map(|v| v.concat())
    ) {
        check_load(&text)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn the_loader_survives_mutated_experiments(
        seed in any::<prop::sample::Index>(),
        mutations in proptest::collection::vec(mutation(), 1..6),
    ) {
        let seeds = seeds_cached();
        let mut text = seeds[seed.index(seeds.len())].clone();
        for m in &mutations {
            text = apply(&text, m);
        }
        check_load(&text)?;
    }
}

fn seeds_cached() -> &'static [String] {
    static SEEDS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    SEEDS.get_or_init(seeds)
}

/// A scalar value as a command could receive it: anything, shell syntax included.
fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<String>().prop_map(Value::Str),
        "[ ;|&$`'\"\\\\(){}<>*?\n\t-]{0,12}".prop_map(Value::Str),
        Just(Value::Str(String::new())),
        any::<i64>().prop_map(Value::Int),
        any::<bool>().prop_map(Value::Bool),
        any::<f64>().prop_map(Value::Float),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn template_parsing_never_panics(raw in any::<String>()) {
        if let Ok(t) = Template::parse(&raw) {
            // Literal pieces hold no reference; rendering gives one word.
            for p in &t.pieces {
                if let Piece::Lit(s) = p {
                    prop_assert!(!s.contains("{{"), "{:?}", t);
                }
            }
            let out = t.render(&|_| Some(Value::Str("v".into()))).unwrap();
            prop_assert_eq!(out.len(), 1);
            let _ = t.render_partial(&|_| None);
        }
    }

    /// A word with references to scalar values renders to exactly one argument: the
    /// literal text with each value in place, uninterpreted.
    #[test]
    fn a_scalar_value_is_always_exactly_one_argument(
        parts in proptest::collection::vec(
            prop_oneof![
                "[^{}]{0,6}".prop_map(|s| (true, s)),
                "[a-z]{1,4}".prop_map(|s| (false, s)),
            ],
            1..6,
        ),
        values in proptest::collection::vec(scalar(), 4),
    ) {
        let names = ["a", "b", "c", "d"];
        let mut raw = String::new();
        let mut expected = String::new();
        let lookup = |n: &str| names.iter().position(|x| *x == n).map(|i| values[i].clone());
        for (i, (is_lit, s)) in parts.iter().enumerate() {
            if *is_lit {
                raw.push_str(s);
                expected.push_str(s);
            } else {
                let name = names[i % names.len()];
                raw.push_str(&format!("{{{{{name}}}}}"));
                expected.push_str(&lookup(name).unwrap().to_string());
            }
        }
        let t = Template::parse(&raw).unwrap();
        let out = t.render(&lookup).unwrap();
        prop_assert_eq!(out, vec![expected]);
    }

    /// Through the whole path (YAML → experiment → plan → split command → render), a
    /// value never adds, removes or merges arguments, whatever it contains.
    #[test]
    fn no_value_injects_arguments_through_an_experiment(
        a in any::<String>(),
        b in "[ ;|&$`'\"\\\\(){}<>*?\n\t-]{0,16}",
        list in proptest::collection::vec("[ ;'\"a-z-]{0,6}", 0..4),
    ) {
        // The document is built as data and emitted by serde_yaml, so any string is
        // quoted correctly.
        let doc = serde_json::json!({
            "id": "fuzz",
            "title": "Fuzz",
            "vars": { "a": a, "b": b, "opts": list },
            "workload": { "run": "echo {{a}} x{{b}}y {{opts}} 'q {{a}}' end" },
        });
        let yaml = serde_yaml::to_string(&doc).unwrap();
        let exp = Experiment::from_str_named(&yaml, "fuzz.yaml");
        prop_assert!(exp.is_ok(), "{:?}\n{yaml}", exp.err());
        let exp = exp.unwrap();
        let plan = Plan::new(&exp, None, &[]).unwrap();
        let point = &plan.points[0];
        let mut argv = Vec::new();
        for t in exp.def.workload.argv_templates().unwrap() {
            argv.extend(t.render(&|n| point.vars.get(n).cloned()).unwrap());
        }
        let mut want = vec!["echo".to_string(), a.clone(), format!("x{b}y")];
        want.extend(list.iter().cloned());
        want.push(format!("q {a}"));
        want.push("end".into());
        prop_assert_eq!(argv, want);
    }
}
