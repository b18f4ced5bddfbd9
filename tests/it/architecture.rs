//! The one-way architecture, checked on the code itself (issue 14).
//!
//! A top-level module is the first path segment under `src/` (`src/spec/mod.rs` and
//! `src/spec/locate.rs` are both `spec`). Module A depends on module B when A's library
//! code (not its unit tests) names `crate::B…`, `use crate::{B, …}`, or reaches B through
//! `super::` from a file whose parent is the crate root. Doc links count: they are
//! references too. `src/lib.rs` and `src/main.rs` (the roots) are left out.
//!
//! The test fails when two modules depend on each other, directly or through others,
//! and names every edge of the cycle with the file and line that makes it. A second
//! test shows the check failing on a fixture crate that has a cycle, and a third keeps
//! the graph in `docs/architecture.md` equal to the one seen here
//! (`FSLAB_BLESS=1 cargo nextest run -E 'test(architecture)'` rewrites it).
//!
//! Rooms stay small enough to read: no file under `src/` holds more than
//! [`MAX_LINES`] lines, its unit tests included (issue 31).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Where in the code an edge comes from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Site {
    file: String,
    line: usize,
}

/// Top-level module → the modules it depends on, each with its first site.
type Graph = BTreeMap<String, BTreeMap<String, Site>>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file below `src/`: `a/b.rs` → [a, b], `a/mod.rs` → [a].
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs").to_string();
    if stem != "mod" {
        parts.push(stem);
    }
    parts
}

/// A file that holds only unit tests (`tests.rs`, `claims_tests.rs`, `…/tests/…`).
fn is_test_file(rel: &Path) -> bool {
    let stem = rel
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    stem == "tests"
        || stem.ends_with("_tests")
        || rel.parent().is_some_and(|p| p.iter().any(|s| s == "tests"))
}

/// The lines of `text` that are not test code, with their 1-based numbers: the item
/// after a `#[cfg(test)]` attribute (a block, counted by braces, or a one-line item)
/// is dropped.
fn library_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((i, line)) = lines.next() {
        if !line.trim_start().starts_with("#[cfg(test)]") {
            out.push((i + 1, line));
            continue;
        }
        // Further attributes of the same item.
        while lines
            .peek()
            .is_some_and(|(_, l)| l.trim_start().starts_with("#["))
        {
            lines.next();
        }
        let mut depth: i64 = 0;
        let mut opened = false;
        for (_, l) in lines.by_ref() {
            depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
            opened |= l.contains('{');
            if (opened && depth <= 0) || (!opened && l.trim_end().ends_with(';')) {
                break;
            }
        }
    }
    out
}

fn ident_at(s: &str) -> Option<&str> {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    (end > 0).then(|| &s[..end])
}

/// The heads of a `{a, b::c, d as e}` group that starts at `s` (after the `{`).
fn group_heads(s: &str) -> Vec<&str> {
    let mut depth = 0;
    let mut start = 0;
    let mut heads = Vec::new();
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                heads.extend(ident_at(s[start..i].trim_start()));
                return heads;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                heads.extend(ident_at(s[start..i].trim_start()));
                start = i + 1;
            }
            _ => {}
        }
    }
    heads.extend(ident_at(s[start..].trim_start()));
    heads
}

/// The crate-root names a piece of code refers to: `crate::x`, `crate::{x, y}`, and
/// `super::…::x` when the `super`s climb to the root from `path`.
fn root_names(code: &str, path: &[String]) -> Vec<String> {
    let mut names = Vec::new();
    let bytes = code.as_bytes();
    let word_start =
        |i: usize| i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
    let push_after = |rest: &str, names: &mut Vec<String>| {
        if let Some(group) = rest.strip_prefix('{') {
            names.extend(group_heads(group).into_iter().map(str::to_string));
        } else if let Some(id) = ident_at(rest) {
            names.push(id.to_string());
        }
    };
    for (i, _) in code.match_indices("crate::") {
        if word_start(i) {
            push_after(&code[i + "crate::".len()..], &mut names);
        }
    }
    let mut i = 0;
    while let Some(k) = code[i..].find("super::") {
        let at = i + k;
        let mut rest = &code[at..];
        let mut ups = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            ups += 1;
            rest = r;
        }
        // Only `super`s that climb to the crate root leave the top-level module.
        if word_start(at) && ups >= path.len() {
            push_after(rest, &mut names);
        }
        i = at + "super::".len() * ups.max(1);
    }
    names
}

/// The dependency graph of the top-level modules of the crate in `src`.
fn module_graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let rels: Vec<PathBuf> = files
        .iter()
        .map(|f| f.strip_prefix(src).expect("below src").to_path_buf())
        .collect();
    let top = |rel: &Path| module_path(rel).first().cloned().unwrap_or_default();
    let modules: BTreeSet<String> = rels
        .iter()
        .map(|r| top(r))
        .filter(|m| m != "lib" && m != "main")
        .collect();
    let mut graph: Graph = modules
        .iter()
        .map(|m| (m.clone(), BTreeMap::new()))
        .collect();
    for (file, rel) in files.iter().zip(&rels) {
        let from = top(rel);
        if !modules.contains(&from) || is_test_file(rel) {
            continue;
        }
        let path = module_path(rel);
        let text = std::fs::read_to_string(file).expect("read a source file");
        for (line, code) in library_lines(&text) {
            for to in root_names(code, &path) {
                if to != from && modules.contains(&to) {
                    graph
                        .get_mut(&from)
                        .expect("known module")
                        .entry(to)
                        .or_insert_with(|| Site {
                            file: rel.display().to_string(),
                            line,
                        });
                }
            }
        }
    }
    graph
}

/// The groups of modules that depend on each other (strongly connected, more than one).
fn cycles(graph: &Graph) -> Vec<BTreeSet<String>> {
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(m) = todo.pop() {
            for to in graph.get(&m).into_iter().flat_map(|e| e.keys()) {
                if seen.insert(to.clone()) {
                    todo.push(to.clone());
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|m| (m, reach(m))).collect();
    let mut out: Vec<BTreeSet<String>> = Vec::new();
    for m in graph.keys() {
        if out.iter().any(|c| c.contains(m)) {
            continue;
        }
        let group: BTreeSet<String> = graph
            .keys()
            .filter(|o| *o == m || (reachable[m].contains(*o) && reachable[o].contains(m)))
            .cloned()
            .collect();
        if group.len() > 1 {
            out.push(group);
        }
    }
    out
}

/// Each cycle with the edges inside it and where they come from.
fn describe(graph: &Graph, cycles: &[BTreeSet<String>]) -> String {
    let mut s = String::new();
    for c in cycles {
        s.push_str(&format!(
            "cycle: {}\n",
            c.iter().cloned().collect::<Vec<_>>().join(" ")
        ));
        for from in c {
            for (to, site) in &graph[from] {
                if c.contains(to) {
                    s.push_str(&format!(
                        "  {from} -> {to}  (src/{}:{})\n",
                        site.file, site.line
                    ));
                }
            }
        }
    }
    s
}

/// The graph as the text block kept in `docs/architecture.md`.
fn render(graph: &Graph) -> String {
    let width = graph.keys().map(String::len).max().unwrap_or(0);
    let mut s = String::new();
    for (from, to) in graph {
        let deps: Vec<&str> = to.keys().map(String::as_str).collect();
        let deps = if deps.is_empty() {
            "(nothing)".to_string()
        } else {
            deps.join(", ")
        };
        s.push_str(&format!("{from:width$} → {deps}\n"));
    }
    s
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn no_cycles_between_top_level_modules() {
    let graph = module_graph(&root().join("src"));
    assert!(
        graph.contains_key("spec") && graph.contains_key("run"),
        "{graph:?}"
    );
    let found = cycles(&graph);
    assert!(
        found.is_empty(),
        "top-level modules depend on each other:\n{}",
        describe(&graph, &found)
    );
}

#[test]
fn the_check_reports_a_cycle_in_a_fixture_crate() {
    let src = root().join("tests/fixtures/architecture/cycle/src");
    let graph = module_graph(&src);
    let found = cycles(&graph);
    let text = describe(&graph, &found);
    // a → b by `crate::b`, b → a by `super::super::a` from b/inner.rs; c → a only, and
    // a's unit tests naming `crate::c` do not count.
    assert_eq!(found.len(), 1, "{text}");
    assert_eq!(
        found[0].iter().map(String::as_str).collect::<Vec<_>>(),
        ["a", "b"],
        "{text}"
    );
    assert!(text.contains("a -> b  (src/a.rs:"), "{text}");
    assert!(text.contains("b -> a  (src/b/inner.rs:"), "{text}");
    assert_eq!(
        graph["c"].keys().map(String::as_str).collect::<Vec<_>>(),
        ["a"]
    );
    assert!(!graph["a"].contains_key("c"), "{graph:?}");
    // `use crate::{d, …}` groups and a module below a file (`d` depends on nothing).
    assert_eq!(
        graph["e"].keys().map(String::as_str).collect::<Vec<_>>(),
        ["c", "d"]
    );
}

#[test]
fn docs_show_the_graph_the_check_sees() {
    const BEGIN: &str = "<!-- module graph: begin (tests/it/architecture.rs) -->\n```text\n";
    const END: &str = "```\n<!-- module graph: end -->";
    let graph = module_graph(&root().join("src"));
    let want = render(&graph);
    let path = root().join("docs/architecture.md");
    let doc = std::fs::read_to_string(&path).expect("docs/architecture.md");
    let (Some(b), Some(e)) = (doc.find(BEGIN), doc.find(END)) else {
        panic!("docs/architecture.md has no module graph block ({BEGIN:?} … {END:?})");
    };
    let have = &doc[b + BEGIN.len()..e];
    if have != want && std::env::var_os("FSLAB_BLESS").is_some() {
        let new = format!("{}{want}{}", &doc[..b + BEGIN.len()], &doc[e..]);
        std::fs::write(&path, new).expect("rewrite docs/architecture.md");
        return;
    }
    assert_eq!(
        have, want,
        "docs/architecture.md shows another module graph than the code has; rerun with FSLAB_BLESS=1"
    );
}

/// Library code (not its unit tests) that uses a string where the crate has a type:
/// a `Result` whose error is a `String` (or a tuple holding one), or a status compared
/// with a literal (`status == "ok"`, `Some("ok")`). Each hit: `file:line: text`.
fn stringly_typed(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut hits = Vec::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap_or(&f).to_path_buf();
        if is_test_file(&rel) {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in library_lines(&text) {
            let code = line.split("//").next().unwrap_or("");
            let string_error = code
                .match_indices("Result<")
                .any(|(i, _)| error_type(&code[i + "Result<".len()..]).is_some_and(names_string));
            let status_literal = ["status == \"", "status != \"", "Some(\"ok\")", "\"ok\" =>"]
                .iter()
                .any(|p| code.contains(p));
            if string_error || status_literal {
                hits.push(format!("src/{}:{n}: {}", rel.display(), line.trim()));
            }
        }
    }
    hits
}

/// The error type of `Result<T, E>` from the text after `Result<`: what follows the
/// top-level comma, up to the closing `>` (None for `Result<T>` aliases or cut lines).
fn error_type(after: &str) -> Option<&str> {
    let mut depth = 0i32;
    let mut comma = None;
    for (i, c) in after.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            '>' if depth == 0 => return comma.map(|c: usize| after[c + 1..i].trim()),
            '>' => depth -= 1,
            ',' if depth == 0 => comma = Some(i),
            _ => {}
        }
    }
    None
}

/// A type that is, or holds, `String`.
fn names_string(ty: &str) -> bool {
    ty.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w == "String")
}

#[test]
fn library_errors_and_statuses_are_types_not_strings() {
    let hits = stringly_typed(&root().join("src"));
    assert!(
        hits.is_empty(),
        "typed errors and status enums instead of strings (issue 14):\n{}",
        hits.join("\n")
    );
}

#[test]
fn the_string_check_finds_a_string_error_and_a_status_literal() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::write(
        src.join("a.rs"),
        "fn f() -> Result<u8, String> { Ok(1) }\nfn g(s: &str) -> bool { s.status == \"ok\" }\nfn h() -> Result<Vec<(u8, String)>, E> { todo!() }\n#[cfg(test)]\nmod tests {\n    fn t() -> Result<(), String> { Ok(()) }\n}\n",
    )
    .unwrap();
    let hits = stringly_typed(src);
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert!(hits[0].starts_with("src/a.rs:1:"), "{hits:?}");
    assert!(hits[1].starts_with("src/a.rs:2:"), "{hits:?}");
}

/// The most lines a file under `src/` may hold, unit tests included: a longer file is
/// split into files of one concern each (docs/architecture.md, Conventions).
const MAX_LINES: usize = 900;

/// Each `.rs` file below `dir` with more than `max` lines, as `path: N lines` (the path
/// from `dir`'s parent, so `src/…`), longest first.
fn long_files(dir: &Path, max: usize) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(dir, &mut files);
    let base = dir.parent().unwrap_or(dir);
    let mut long: Vec<(usize, String)> = files
        .iter()
        .filter_map(|f| {
            let text =
                std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let n = text.lines().count();
            let rel = f.strip_prefix(base).unwrap_or(f).display().to_string();
            (n > max).then_some((n, rel))
        })
        .collect();
    long.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    long.into_iter()
        .map(|(n, f)| format!("{f}: {n} lines"))
        .collect()
}

#[test]
fn no_file_in_src_is_longer_than_the_limit() {
    let long = long_files(&root().join("src"), MAX_LINES);
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines; split each into files of one concern:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_length_check_names_a_long_file_and_its_length() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("a")).unwrap();
    std::fs::write(src.join("a/long.rs"), "// x\n".repeat(MAX_LINES + 1)).unwrap();
    std::fs::write(src.join("exact.rs"), "// x\n".repeat(MAX_LINES)).unwrap();
    std::fs::write(src.join("a/notes.txt"), "x\n".repeat(2 * MAX_LINES)).unwrap();
    assert_eq!(
        long_files(&src, MAX_LINES),
        [format!("src/a/long.rs: {} lines", MAX_LINES + 1)]
    );
}

/// The modules named in the first column of the rooms table (`## Rooms` in
/// docs/architecture.md): `` `spec` ``, `` `store::merge` ``, `` `cli` (binary) ``.
fn rooms_table_modules(doc: &str) -> Vec<String> {
    let Some(start) = doc.find("\n## Rooms\n") else {
        return Vec::new();
    };
    let section = &doc[start + 1..];
    let section = section[3..]
        .find("\n## ")
        .map_or(section, |e| &section[..e + 3]);
    section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once('`').map(|(m, _)| m.to_string()))
        .collect()
}

/// What the rooms table and `src/` disagree on: a top-level module without a row, and
/// a row naming a module that does not exist (`a::b` is `src/a/b.rs` or `src/a/b/mod.rs`).
fn rooms_problems(doc: &str, src: &Path) -> Vec<String> {
    let named = rooms_table_modules(doc);
    let mut top: BTreeSet<String> = BTreeSet::new();
    for e in std::fs::read_dir(src).unwrap_or_else(|e| panic!("{}: {e}", src.display())) {
        let p = e.expect("directory entry").path();
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        let dir_module = p.is_dir() && p.join("mod.rs").exists();
        let file_module =
            p.extension().is_some_and(|x| x == "rs") && name != "lib" && name != "main";
        if dir_module || file_module {
            top.insert(name);
        }
    }
    let mut out: Vec<String> = top
        .iter()
        .filter(|m| !named.contains(m))
        .map(|m| format!("module `{m}` has no row in the rooms table"))
        .collect();
    for m in &named {
        let rel = m.replace("::", "/");
        if !src.join(format!("{rel}.rs")).exists() && !src.join(&rel).join("mod.rs").exists() {
            out.push(format!(
                "the rooms table names `{m}`, which is not a module in src/"
            ));
        }
    }
    out
}

#[test]
fn the_rooms_table_names_every_module_and_only_modules() {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    assert!(rooms_table_modules(&doc).len() > 10, "no rooms table found");
    let problems = rooms_problems(&doc, &root().join("src"));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_rooms_check_names_a_missing_row_and_a_module_that_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("a")).unwrap();
    std::fs::write(src.join("a/mod.rs"), "").unwrap();
    std::fs::write(src.join("a/b.rs"), "").unwrap();
    std::fs::write(src.join("c.rs"), "").unwrap();
    std::fs::write(src.join("lib.rs"), "").unwrap();
    let doc = "# x\n## Rooms\n| module | owns |\n|---|---|\n| `a` | … |\n| `a::b` | … |\n\
               | `gone` (binary) | … |\n\n## Conventions\n| `c` | not the table |\n";
    assert_eq!(
        rooms_problems(doc, &src),
        [
            "module `c` has no row in the rooms table",
            "the rooms table names `gone`, which is not a module in src/",
        ]
    );
}

/// `use super::*;` outside unit tests, as `file:line`: a file split out of its parent
/// names what it uses (issue 31); a `mod tests` block, or a file holding only tests,
/// may take its parent's whole namespace.
fn glob_super_imports(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let base = src.parent().unwrap_or(src);
    let mut hits = Vec::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap_or(&f);
        if is_test_file(rel) {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in library_lines(&text) {
            if line.trim() == "use super::*;" {
                let shown = f.strip_prefix(base).unwrap_or(&f).display().to_string();
                hits.push(format!("{shown}:{n}"));
            }
        }
    }
    hits
}

#[test]
fn no_glob_import_of_the_parent_outside_unit_tests() {
    let hits = glob_super_imports(&root().join("src"));
    assert!(
        hits.is_empty(),
        "`use super::*` outside `mod tests`; list what the file uses:\n{}",
        hits.join("\n")
    );
}

#[test]
fn the_glob_import_check_finds_one_outside_tests_only() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("a")).unwrap();
    std::fs::write(
        src.join("a/split.rs"),
        "use super::*;\nfn f() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
    )
    .unwrap();
    std::fs::write(src.join("a/tests.rs"), "use super::*;\n").unwrap();
    assert_eq!(glob_super_imports(&src), ["src/a/split.rs:1"]);
}
