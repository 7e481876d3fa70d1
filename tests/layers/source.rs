//! Reads Rust source the way this test needs it: the module tree under `src/` (from `mod x;`
//! lines) and, per file, the module paths its code names (`use` trees, `crate::`/`super::`/
//! `self::` paths, paths through a child module), with comments and literals left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Which crate a module belongs to: the library (`src/lib.rs`) or the binary (`src/main.rs`),
/// whose files reach the library as `rankline::`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Crate {
    Lib,
    Bin,
}

/// A module: its crate and its path from the crate root (`["profile", "load"]`).
type ModulePath = (Crate, Vec<String>);

/// Every module that has a file of its own, and that file (`src/profile/load.rs`).
#[derive(Default)]
pub struct Tree {
    files: BTreeMap<ModulePath, String>,
    /// Files of test code (`#[cfg(test)] mod tests;` and what it declares).
    test_files: BTreeSet<String>,
}

/// A path written in a file: inside which inline modules, whether in test code, the segments.
#[derive(Debug, PartialEq)]
pub struct Written {
    pub inline: Vec<String>,
    pub test: bool,
    pub path: Vec<String>,
}

/// One file's use of another: the path as written, for the failure message.
pub struct Edge {
    pub from: String,
    pub to: String,
    pub path: String,
}

impl Tree {
    /// The modules of both crates, starting from `src/lib.rs` and `src/main.rs`.
    pub fn read(root: &Path) -> Tree {
        let mut tree = Tree::default();
        for (krate, file) in [(Crate::Lib, "src/lib.rs"), (Crate::Bin, "src/main.rs")] {
            tree.add(
                root,
                krate,
                vec![],
                file.to_string(),
                "src".to_string(),
                false,
            );
        }
        tree
    }

    fn add(
        &mut self,
        root: &Path,
        krate: Crate,
        path: Vec<String>,
        file: String,
        dir: String,
        test: bool,
    ) {
        let text = std::fs::read_to_string(root.join(&file)).expect("read source");
        assert!(
            !text.contains("#[path"),
            "{file}: #[path] is not understood by tests/layers"
        );
        for (child, test_child) in declared_modules(&code_only(&text)) {
            let flat = format!("{dir}/{child}.rs");
            let nested = format!("{dir}/{child}/mod.rs");
            let child_file = if root.join(&flat).is_file() {
                flat
            } else {
                assert!(root.join(&nested).is_file(), "{file}: mod {child}: no file");
                nested
            };
            let mut child_path = path.clone();
            child_path.push(child.clone());
            let child_dir = format!("{dir}/{child}");
            self.add(
                root,
                krate,
                child_path,
                child_file,
                child_dir,
                test || test_child,
            );
        }
        if test {
            self.test_files.insert(file.clone());
        }
        self.files.insert((krate, path), file);
    }

    pub fn files(&self) -> BTreeSet<String> {
        self.files.values().cloned().collect()
    }

    /// The module path of a file.
    pub fn module_of(&self, file: &str) -> ModulePath {
        let found = self.files.iter().find(|(_, f)| *f == file);
        found.expect("file in the tree").0.clone()
    }

    /// Every use of another file by the product code of each file of the tree. Test code is
    /// left out: nothing uses it (so it closes no cycle), and a test may check one layer
    /// through another.
    pub fn edges(&self, root: &Path) -> Vec<Edge> {
        let mut out = vec![];
        for ((krate, module), file) in &self.files {
            if self.test_files.contains(file) {
                continue;
            }
            let text = std::fs::read_to_string(root.join(file)).expect("read source");
            for Written { inline, test, path } in paths(&code_only(&text)) {
                if test {
                    continue;
                }
                if let Some(to) = self.resolve(*krate, module, &inline, &path)
                    && &to != file
                {
                    let (from, path) = (file.clone(), path.join("::"));
                    out.push(Edge { from, to, path });
                }
            }
        }
        out
    }

    /// The file that the longest module prefix of `path` lives in, written inside `module`
    /// (within its inline modules `inline`); `None` for paths into other crates or items.
    pub fn resolve(
        &self,
        krate: Crate,
        module: &[String],
        inline: &[String],
        path: &[String],
    ) -> Option<String> {
        let here: Vec<String> = module.iter().chain(inline).cloned().collect();
        let (mut krate, mut at, mut rest) = (krate, here.clone(), path);
        match path.first()?.as_str() {
            "crate" => (at, rest) = (vec![], &path[1..]),
            "self" => rest = &path[1..],
            "super" => {
                while rest.first().is_some_and(|s| s == "super") {
                    at.pop()?;
                    rest = &rest[1..];
                }
            }
            "rankline" if krate == Crate::Bin => {
                (krate, at, rest) = (Crate::Lib, vec![], &path[1..])
            }
            first => {
                // A bare first segment names a child module of the file's module.
                let mut child = module.to_vec();
                child.push(first.to_string());
                if !self.files.contains_key(&(krate, child.clone())) {
                    return None;
                }
                (at, rest) = (child, &path[1..]);
            }
        }
        for seg in rest {
            let mut next = at.clone();
            next.push(seg.clone());
            if !self.files.contains_key(&(krate, next.clone())) {
                break;
            }
            at = next;
        }
        // Inline modules live in the file of their nearest module that has one.
        while !self.files.contains_key(&(krate, at.clone())) {
            at.pop()?;
        }
        self.files.get(&(krate, at)).cloned()
    }
}

/// The text with comments, string and char literals blanked (newlines kept), so that only
/// code is searched for paths.
pub fn code_only(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let blank = |ch: char| if ch == '\n' { '\n' } else { ' ' };
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let at = |i: usize, s: &str| {
        s.chars()
            .enumerate()
            .all(|(k, ch)| c.get(i + k) == Some(&ch))
    };
    while i < c.len() {
        let start = i;
        if at(i, "//") {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if at(i, "/*") {
            let mut depth = 0;
            while i < c.len() {
                if at(i, "/*") {
                    depth += 1;
                    i += 2;
                } else if at(i, "*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if let Some(end) = raw_string_end(&c, i) {
            i = end;
        } else if c[i] == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c[i] == '\'' && c.get(i + 1) == Some(&'\\') {
            i += 3;
            while i < c.len() && c[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else if c[i] == '\'' && c.get(i + 2) == Some(&'\'') {
            i += 3;
        } else {
            out.push(c[i]);
            i += 1;
            continue;
        }
        let end = i.min(c.len());
        out.extend(c[start..end].iter().map(|&ch| blank(ch)));
    }
    out
}

/// Where a raw string literal (`r"…"`, `r#"…"#`, `br"…"`) starting at `i` ends.
fn raw_string_end(c: &[char], i: usize) -> Option<usize> {
    let ident_before = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
    let mut j = match (c[i], c.get(i + 1)) {
        ('r', _) => i + 1,
        ('b', Some('r')) => i + 2,
        _ => return None,
    };
    if ident_before {
        return None;
    }
    let hashes = c[j..].iter().take_while(|&&ch| ch == '#').count();
    j += hashes;
    if c.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < c.len() {
        if c[j] == '"'
            && c[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&ch| ch == '#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(c.len())
}

/// Identifiers and punctuation; `::` is one token.
pub fn tokens(code: &str) -> Vec<String> {
    let c: Vec<char> = code.chars().collect();
    let mut out = vec![];
    let mut i = 0;
    while i < c.len() {
        if c[i].is_alphanumeric() || c[i] == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(c[start..i].iter().collect());
        } else if c[i] == ':' && c.get(i + 1) == Some(&':') {
            out.push("::".to_string());
            i += 2;
        } else {
            if !c[i].is_whitespace() {
                out.push(c[i].to_string());
            }
            i += 1;
        }
    }
    out
}

fn is_ident(t: &str) -> bool {
    t.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// The modules declared with a file of their own (`mod x;`) outside inline modules, and
/// whether each is test code (`#[cfg(test)]`).
pub fn declared_modules(code: &str) -> Vec<(String, bool)> {
    let t = tokens(code);
    let mut out = vec![];
    for (i, inline) in inline_modules(&t).iter().enumerate() {
        if inline.is_empty() && t[i] == "mod" && t.get(i + 2).is_some_and(|s| s == ";") {
            out.push((t[i + 1].clone(), cfg_test_before(&t, i)));
        }
    }
    out
}

/// Whether the item whose `mod` keyword is token `i` carries `#[cfg(test)]`.
fn cfg_test_before(t: &[String], mut i: usize) -> bool {
    // past a visibility: `pub`, `pub(crate)`, `pub(super)`
    if i >= 4 && t[i - 1] == ")" && t[i - 3] == "(" && t[i - 4] == "pub" {
        i -= 4;
    } else if i >= 1 && t[i - 1] == "pub" {
        i -= 1;
    }
    let attr = ["#", "[", "cfg", "(", "test", ")", "]"];
    i >= attr.len() && t[i - attr.len()..i].iter().zip(attr).all(|(a, b)| a == b)
}

/// For each token, the inline modules (`mod tests { … }`) it sits in, innermost last, and
/// whether it is in test code.
fn inline_modules(t: &[String]) -> Vec<Vec<(String, bool)>> {
    let mut out = Vec::with_capacity(t.len());
    let mut depth = 0usize;
    let mut open: Vec<(String, bool, usize)> = vec![];
    for (i, tok) in t.iter().enumerate() {
        out.push(open.iter().map(|(n, test, _)| (n.clone(), *test)).collect());
        match tok.as_str() {
            "{" => {
                depth += 1;
                if i >= 2 && t[i - 2] == "mod" && is_ident(&t[i - 1]) {
                    open.push((t[i - 1].clone(), cfg_test_before(t, i - 2), depth));
                }
            }
            "}" => {
                if open.last().is_some_and(|(_, _, d)| *d == depth) {
                    open.pop();
                }
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
    }
    out
}

/// Every path of two or more segments in the code, with the inline modules it is written in:
/// `use` trees expanded (`use a::{b, c::d}` gives `a::b` and `a::c::d`) and paths in code.
pub fn paths(code: &str) -> Vec<Written> {
    let t = tokens(code);
    let inline = inline_modules(&t);
    let written = |i: usize, path: Vec<String>| Written {
        inline: inline[i].iter().map(|(n, _)| n.clone()).collect(),
        test: inline[i].iter().any(|(_, test)| *test),
        path,
    };
    let mut out = vec![];
    let mut i = 0;
    while i < t.len() {
        let after_sep = i > 0 && (t[i - 1] == "::" || t[i - 1] == "$");
        if t[i] == "use" {
            let mut trees = vec![];
            let at = i;
            i = use_tree(&t, i + 1, vec![], &mut trees);
            out.extend(trees.into_iter().map(|p| written(at, p)));
            continue;
        }
        if is_ident(&t[i]) && !after_sep && t.get(i + 1).is_some_and(|s| s == "::") {
            let mut path = vec![t[i].clone()];
            let mut j = i + 1;
            while t.get(j).is_some_and(|s| s == "::") && t.get(j + 1).is_some_and(|s| is_ident(s)) {
                path.push(t[j + 1].clone());
                j += 2;
            }
            if path.len() > 1 {
                out.push(written(i, path));
            }
            i = j.max(i + 1);
            continue;
        }
        i += 1;
    }
    out
}

/// Reads one use tree from token `i` under `prefix` into `out`; returns the index after it.
fn use_tree(
    t: &[String],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    if t.get(i).is_some_and(|s| s == "::") {
        i += 1;
    }
    loop {
        match t.get(i).map(String::as_str) {
            Some("{") => {
                i += 1;
                while t.get(i).is_some_and(|s| s != "}") {
                    i = use_tree(t, i, prefix.clone(), out);
                    if t.get(i).is_some_and(|s| s == ",") {
                        i += 1;
                    }
                }
                return i + 1;
            }
            Some("*") => {
                out.push(prefix);
                return i + 1;
            }
            Some(s) if is_ident(s) && s != "as" => {
                if s != "self" || prefix.is_empty() {
                    prefix.push(s.to_string());
                }
                i += 1;
                if t.get(i).is_some_and(|s| s == "::") {
                    i += 1;
                    continue;
                }
                if t.get(i).is_some_and(|s| s == "as") {
                    i += 2;
                }
                out.push(prefix);
                return i;
            }
            _ => return i + 1,
        }
    }
}

/// Where `text` (the source of `file`) names one of `names` when `file` is
/// none of `allowed` (a path ending in `/` allows every file under it):
/// one line per use, with the identifier. Comments and strings are not
/// code.
pub fn names_outside(file: &str, text: &str, allowed: &[&str], names: &[&str]) -> Vec<String> {
    if allowed
        .iter()
        .any(|m| file == *m || (m.ends_with('/') && file.starts_with(m)))
    {
        return Vec::new();
    }
    tokens(&code_only(text))
        .into_iter()
        .filter(|t| names.contains(&t.as_str()))
        .map(|t| format!("{file}: {t}"))
        .collect()
}
