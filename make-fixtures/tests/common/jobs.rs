//! The scenario engine's jobs (`fixtures/jobs/`) as the tests read them.

use std::path::PathBuf;

use rusqlite::Connection;
use serde_json::Value;

/// A job: its name, truth and files (one, or the truth's `files[]` in order).
pub struct Job {
    pub name: String,
    pub t: Value,
    pub dbs: Vec<Connection>,
}

/// Every job of `fixtures/jobs/`.
pub fn jobs() -> Vec<Job> {
    let dir = super::root().join("fixtures/jobs");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixtures/jobs")
        .filter_map(|e| {
            let n = e.unwrap().file_name().to_string_lossy().to_string();
            n.strip_suffix(".truth.json").map(str::to_string)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 16, "{names:?}");
    names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(dir.join(format!("{name}.truth.json"))).unwrap();
            let t: Value = serde_json::from_str(&text).unwrap();
            let paths: Vec<PathBuf> = match t["files"].as_array() {
                Some(files) => files
                    .iter()
                    .map(|f| super::root().join(f["path"].as_str().unwrap()))
                    .collect(),
                None => vec![dir.join(format!("{name}.sqlite"))],
            };
            let dbs = paths
                .iter()
                .map(|p| {
                    assert!(p.is_file(), "{name}: no {}", p.display());
                    Connection::open(p).unwrap()
                })
                .collect();
            Job { name, t, dbs }
        })
        .collect()
}
