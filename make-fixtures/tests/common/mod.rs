//! Helpers shared by the generator's integration tests.
#![allow(dead_code)]

pub mod jobs;

use std::path::PathBuf;
use std::process::{Command, Output};

/// The workspace root, where `fixtures/` and `target/` are.
pub fn root() -> PathBuf {
    let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_dir.parent().expect("workspace root").to_path_buf()
}

/// Runs the freshly built generator, which must succeed.
pub fn make_fixtures(args: &[&str], env: &[(&str, &std::path::Path)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_make-fixtures"));
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().expect("run make-fixtures");
    assert!(
        o.status.success(),
        "make-fixtures {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// A fresh empty directory under `target/`, named for the test.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = root().join("target/test-tmp/make-fixtures").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

/// The names of the entries of `dir`, sorted.
pub fn names(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}
