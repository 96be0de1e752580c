//! The modules form a one-way stack: no top-level module of the library imports, directly or
//! through others, a module that imports it back, and no subcommand of the command line one that
//! imports it back. Read from the sources: a reference `crate::X…` or `loggps_predict::X…`
//! (`super::X` between the command line's files) outside comments and test modules is an
//! import of `X`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Graph = BTreeMap<String, BTreeSet<String>>;

/// Whether a source file is a test module of its own (`tests.rs`): not an import of the code.
fn is_tests(rel: &Path) -> bool {
    rel.file_name().is_some_and(|n| n == "tests.rs")
}

/// The code of a source file: its test module and comments left out.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names that follow each `prefix` in `code`.
fn named_after<'a>(code: &'a str, prefix: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    code.match_indices(prefix).filter_map(move |(i, _)| {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            return None;
        }
        let rest = &code[i + prefix.len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        Some(&rest[..end])
    })
}

/// Every `.rs` file under `dir`, with its path relative to `dir`.
fn sources(dir: &Path, rel: &Path, out: &mut Vec<(std::path::PathBuf, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let (path, name) = (entry.path(), entry.file_name());
        if path.is_dir() {
            sources(&path, &rel.join(&name), out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push((rel.join(&name), std::fs::read_to_string(&path).unwrap()));
        }
    }
}

/// The library's top-level modules and what each imports of the others.
fn library_graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    sources(src, Path::new(""), &mut files);
    let top = |rel: &Path| -> String {
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        first.trim_end_matches(".rs").to_string()
    };
    let modules: BTreeSet<String> = (files.iter())
        .map(|(rel, _)| top(rel))
        .filter(|m| !["lib", "main", "cli"].contains(&m.as_str()))
        .collect();
    let mut g = Graph::new();
    for (rel, text) in &files {
        let from = top(rel);
        if !modules.contains(&from) || is_tests(rel) {
            continue;
        }
        let code = code(text);
        let names = named_after(&code, "crate::").chain(named_after(&code, "loggps_predict::"));
        let to: BTreeSet<String> = names
            .filter(|m| modules.contains(*m) && **m != from)
            .map(String::from)
            .collect();
        g.entry(from).or_default().extend(to);
    }
    g
}

/// The command line's files (but `mod.rs`, their parent) and what each imports of the others.
fn cli_graph(cli: &Path) -> Graph {
    let mut files = Vec::new();
    sources(cli, Path::new(""), &mut files);
    let name = |rel: &Path| rel.to_string_lossy().trim_end_matches(".rs").to_string();
    let modules: BTreeSet<String> = (files.iter().map(|(rel, _)| name(rel)))
        .filter(|m| m != "mod")
        .collect();
    let mut g = Graph::new();
    for (rel, text) in &files {
        let from = name(rel);
        if from == "mod" {
            continue;
        }
        let code = code(text);
        let to: BTreeSet<String> = named_after(&code, "super::")
            .filter(|m| modules.contains(*m) && **m != from)
            .map(String::from)
            .collect();
        g.entry(from).or_default().extend(to);
    }
    g
}

/// A circle of `g`, as the modules along it, if there is one.
fn circle(g: &Graph) -> Option<Vec<String>> {
    // 0: not seen, 1: on the path, 2: done.
    fn visit(
        g: &Graph,
        m: &str,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(m.to_string(), 1);
        path.push(m.to_string());
        for next in g.get(m).into_iter().flatten() {
            match state.get(next).copied().unwrap_or(0) {
                1 => {
                    let at = path.iter().position(|x| x == next).unwrap();
                    let mut c = path[at..].to_vec();
                    c.push(next.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(g, next, state, path) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(m.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in g.keys() {
        if state.get(m).copied().unwrap_or(0) == 0
            && let Some(c) = visit(g, m, &mut state, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_librarys_modules_import_one_way() {
    let g = library_graph(&root().join("src"));
    // The stack's bottom and top as they stand: the reading finds the imports.
    assert!(
        g["trace"].contains("model") && g["replay"].contains("graph"),
        "{g:?}"
    );
    assert_eq!(circle(&g), None, "modules importing each other back");
}

#[test]
fn the_command_lines_files_import_one_way() {
    let g = cli_graph(&root().join("src/cli"));
    assert!(g["predict"].contains("sweep"), "{g:?}");
    assert_eq!(circle(&g), None, "files importing each other back");
}

/// The search finds a circle where there is one, and reads past comments and test modules.
#[test]
fn a_circle_is_found() {
    let mut g = Graph::new();
    for (a, b) in [("trace", "model"), ("model", "error"), ("error", "trace")] {
        g.entry(a.into()).or_default().insert(b.into());
    }
    g.entry("replay".into()).or_default().insert("trace".into());
    assert_eq!(
        circle(&g),
        Some(
            vec!["error", "trace", "model", "error"]
                .into_iter()
                .map(String::from)
                .collect()
        )
    );
    let text = "use crate::a::X;\n// crate::b\nfn f() { crate::c::g(); my_crate::d(); }\n\
                #[cfg(test)]\nmod tests { use crate::e; }\n";
    let c = code(text);
    let names: Vec<&str> = named_after(&c, "crate::").collect();
    assert_eq!(names, ["a", "c"]);
}
