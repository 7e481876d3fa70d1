//! The source layout keeps its layers: no file under `src/` reaches itself through other
//! files' paths (no import cycles), dependencies point one way, `profile` → `analysis` →
//! `report` | `tui` (report and tui apart), and time lives in one place (only the two time
//! modules map between clocks, `time.rs`), and the app changes only in its state module, the frame
//! and the run loop (`app_writes.rs`). Read from the source text, so a new cycle, a path
//! against the layers or a clock mapped by hand fails here, naming the files and the paths.

mod app_writes;
mod cycles;
mod source;
mod time;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cycles::{Graph, cycles};
use source::{Crate, Edge, Tree};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Each file's uses of other files, and the paths that make each one (for messages).
fn file_graph(tree: &Tree, root: &Path) -> (Graph, BTreeMap<(String, String), String>) {
    let mut graph = Graph::new();
    let mut why = BTreeMap::new();
    for file in tree.files() {
        graph.entry(file).or_default();
    }
    for Edge { from, to, path } in tree.edges(root) {
        graph.entry(from.clone()).or_default().insert(to.clone());
        why.entry((from, to)).or_insert(path);
    }
    (graph, why)
}

/// The layer a library module belongs to: its first path segment, when it is one of the four.
fn layer(tree: &Tree, file: &str) -> Option<&'static str> {
    let (krate, path) = tree.module_of(file);
    let first = path.first().map(String::as_str);
    match (krate, first) {
        (Crate::Lib, Some("profile")) => Some("profile"),
        (Crate::Lib, Some("analysis")) => Some("analysis"),
        (Crate::Lib, Some("report")) => Some("report"),
        (Crate::Lib, Some("tui")) => Some("tui"),
        _ => None,
    }
}

/// Layers a layer must not use.
fn forbidden(from: &str) -> &'static [&'static str] {
    match from {
        "profile" => &["analysis", "report", "tui"],
        "analysis" => &["report", "tui"],
        "report" => &["tui"],
        "tui" => &["report"],
        _ => &[],
    }
}

#[test]
fn no_file_under_src_reaches_itself_through_others() {
    let tree = Tree::read(&root());
    let (graph, why) = file_graph(&tree, &root());
    assert!(graph.len() > 100, "only {} files found", graph.len());
    let found = cycles(&graph);
    let shown: Vec<String> = found
        .iter()
        .map(|(group, cycle)| {
            let steps: Vec<String> = cycle
                .windows(2)
                .map(|w| {
                    format!(
                        "{} -> {} ({})",
                        w[0],
                        w[1],
                        why[&(w[0].clone(), w[1].clone())]
                    )
                })
                .collect();
            let members: Vec<&str> = group.iter().map(String::as_str).collect();
            format!(
                "{} files reach each other ({}), for example:\n    {}",
                group.len(),
                members.join(", "),
                steps.join("\n    ")
            )
        })
        .collect();
    assert!(
        shown.is_empty(),
        "import cycles between files:\n  {}",
        shown.join("\n  ")
    );
}

#[test]
fn dependencies_point_one_way_between_layers() {
    let tree = Tree::read(&root());
    let mut wrong = vec![];
    for Edge { from, to, path } in tree.edges(&root()) {
        if let (Some(a), Some(b)) = (layer(&tree, &from), layer(&tree, &to))
            && forbidden(a).contains(&b)
        {
            wrong.push(format!("{from} ({a}) uses {to} ({b}): {path}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "against the layers:\n  {}",
        wrong.join("\n  ")
    );
}

/// The module of `analysis` a library file belongs to (`analysis::clock` for
/// `src/analysis/clock/ends.rs`), if any.
fn analysis_module(tree: &Tree, file: &str) -> Option<String> {
    let (krate, path) = tree.module_of(file);
    match (krate, path.first().map(String::as_str), path.get(1)) {
        (Crate::Lib, Some("analysis"), Some(m)) => Some(format!("analysis::{m}")),
        _ => None,
    }
}

/// Within `analysis`, no two modules use each other (the clock fits read
/// a matching's rows, never its types, while the matching reads the
/// clock): each module can be read knowing only those below it.
#[test]
fn no_two_analysis_modules_use_each_other() {
    let tree = Tree::read(&root());
    let mut uses: BTreeMap<(String, String), String> = BTreeMap::new();
    for Edge { from, to, path } in tree.edges(&root()) {
        if let (Some(a), Some(b)) = (analysis_module(&tree, &from), analysis_module(&tree, &to))
            && a != b
        {
            uses.entry((a, b)).or_insert(format!("{from}: {path}"));
        }
    }
    let both: Vec<String> = uses
        .iter()
        .filter(|((a, b), _)| a < b && uses.contains_key(&(b.clone(), a.clone())))
        .map(|((a, b), why)| format!("{a} ⇄ {b}: {why}; {}", uses[&(b.clone(), a.clone())]))
        .collect();
    assert!(
        both.is_empty(),
        "analysis modules that use each other:\n  {}",
        both.join("\n  ")
    );
}

/// What `rule` finds in every file under `src/` (given its path and text).
fn in_every_file(rule: fn(&str, &str) -> Vec<String>) -> Vec<String> {
    let tree = Tree::read(&root());
    let mut found = Vec::new();
    for file in tree.files() {
        let text = std::fs::read_to_string(root().join(&file)).expect("read");
        found.extend(rule(&file, &text));
    }
    found
}

#[test]
fn only_the_two_time_modules_map_between_clocks() {
    let found = in_every_file(time::uses_outside);
    assert!(
        found.is_empty(),
        "the clock mapping used outside {:?} (ask the time module for aligned times):\n  {}",
        time::TIME_MODULES,
        found.join("\n  ")
    );
}

#[test]
fn only_the_state_the_frame_and_the_run_loop_change_the_app() {
    let found = in_every_file(app_writes::writes_outside);
    assert!(
        found.is_empty(),
        "the app changed outside the files allowed to (an action in tui::state does it):\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn the_app_rule_catches_a_write_and_nothing_in_comments() {
    let code = r#"
// app.session_mut() in a comment is fine
fn f(app: &mut App) { app.session_mut().quit = true; app.chrome_mut(); }
"#;
    assert_eq!(
        app_writes::writes_outside("src/tui/ui/timeline.rs", code),
        ["src/tui/ui/timeline.rs: session_mut"]
    );
    assert_eq!(
        app_writes::writes_outside("src/tui/export.rs", code),
        [
            "src/tui/export.rs: session_mut",
            "src/tui/export.rs: chrome_mut"
        ]
    );
    assert!(
        app_writes::writes_outside("src/tui/run.rs", "fn f(a: &mut App) { a.session_mut(); }")
            .is_empty()
    );
}

#[test]
fn the_time_rule_catches_a_mapping_and_nothing_in_comments_or_strings() {
    let code = r#"
// clock.to_reference(f, t) in a comment is fine
fn f(c: &Alignment) -> i64 { let s = "to_file"; c.to_reference(0, 5) }
"#;
    assert_eq!(
        time::uses_outside("src/tui/ui/timeline.rs", code),
        ["src/tui/ui/timeline.rs: to_reference"]
    );
    assert!(time::uses_outside("src/tui/capture/time.rs", code).is_empty());
    assert!(time::uses_outside("src/analysis/clock/ends.rs", code).is_empty());
}

fn graph(edges: &[(&str, &str)]) -> Graph {
    let mut g = Graph::new();
    for (a, b) in edges {
        g.entry(a.to_string()).or_default().insert(b.to_string());
        g.entry(b.to_string()).or_default();
    }
    g
}

#[test]
fn cycle_finder_finds_made_up_cycles_and_nothing_else() {
    // a -> b -> c -> a is one cycle; d -> e and c -> d hang off it; f <-> g is another.
    let g = graph(&[
        ("a", "b"),
        ("b", "c"),
        ("c", "a"),
        ("c", "d"),
        ("d", "e"),
        ("f", "g"),
        ("g", "f"),
    ]);
    let found: Vec<Vec<String>> = cycles(&g).into_iter().map(|(_, cycle)| cycle).collect();
    assert_eq!(found, [["a", "b", "c", "a"].as_slice(), &["f", "g", "f"]]);
    let groups: Vec<usize> = cycles(&g).iter().map(|(group, _)| group.len()).collect();
    assert_eq!(groups, [3, 2]);
    let tree_only = graph(&[("a", "b"), ("a", "c"), ("b", "c"), ("c", "d")]);
    assert!(cycles(&tree_only).is_empty());
}

#[test]
fn paths_come_from_use_trees_and_code_but_not_comments_or_strings() {
    let code = source::code_only(
        r##"
//! uses crate::nothing::here
use super::{raw::{self, Columns}, spec};
use crate::profile::model::*;
fn f() { let s = "crate::not::this"; let r = r#"super::nor::this"#; let c = '"'; }
/* crate::nor::block */ fn g() -> crate::analysis::skew::Skew { self::child::make() }
#[cfg(test)]
mod tests {
    use super::*;
}
"##,
    );
    let found: Vec<(Vec<String>, bool, String)> = source::paths(&code)
        .into_iter()
        .map(|w| (w.inline, w.test, w.path.join("::")))
        .collect();
    let expect = [
        (vec![], false, "super::raw"),
        (vec![], false, "super::raw::Columns"),
        (vec![], false, "super::spec"),
        (vec![], false, "crate::profile::model"),
        (vec![], false, "crate::analysis::skew::Skew"),
        (vec![], false, "self::child::make"),
        (vec!["tests"], true, "super"),
    ];
    let expect: Vec<(Vec<String>, bool, String)> = expect
        .iter()
        .map(|(i, t, p)| {
            (
                i.iter().map(|s: &&str| s.to_string()).collect(),
                *t,
                p.to_string(),
            )
        })
        .collect();
    assert_eq!(found, expect);
}

#[test]
fn a_use_from_a_test_module_is_not_an_edge_but_a_sibling_use_is() {
    let tree = Tree::read(&root());
    let (krate, module) = tree.module_of("src/profile/load.rs");
    let sibling = ["super", "spec", "TABLES"].map(String::from);
    let own = ["super", "x"].map(String::from);
    assert_eq!(
        tree.resolve(krate, &module, &[], &sibling).as_deref(),
        Some("src/profile/spec.rs")
    );
    let in_tests = tree.resolve(krate, &module, &["tests".to_string()], &own);
    assert_eq!(in_tests.as_deref(), Some("src/profile/load.rs"));
}
