//! One extreme value substituted into one row of every column of every
//! table of two fixtures, each copy opened by the real binary in a child
//! process: every run ends with exit 0, or exit 1 and one line naming the
//! file — never a panic or a signal. One negative NVTX `textId` once took
//! the whole run down, so ids, indexes and counts are checked where used.

mod common;

use common::{root, temp_dir};
use rusqlite::{Connection, types::Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A valid database whose values are hostile (not the byte fuzzer's job).
const SEEDS: &[&str] = &["fixtures/two_node_a.sqlite", "fixtures/why.sqlite"];
/// Children running at once (the machine has 2 cores).
const PARALLEL: usize = 2;

fn values() -> Vec<(&'static str, Value)> {
    vec![
        ("-3", Value::Integer(-3)),
        ("-101", Value::Integer(-101)),
        ("2^31", Value::Integer(1 << 31)),
        ("-2^31", Value::Integer(-(1 << 31))),
        ("2^32+5", Value::Integer((1 << 32) + 5)),
        ("i64 min", Value::Integer(i64::MIN)),
        ("i64 max", Value::Integer(i64::MAX)),
        ("NULL", Value::Null),
        ("text", Value::Text("x\u{1b}[2J".into())),
        ("1.5", Value::Real(1.5)),
    ]
}

/// (table, column) of every column of every table in `db`.
fn columns(db: &Path) -> Vec<(String, String)> {
    let c = Connection::open(db).expect("open seed");
    let mut s = c
        .prepare(
            "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p \
             WHERE m.type = 'table' ORDER BY m.name, p.cid",
        )
        .expect("list columns");
    s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("columns")
        .map(|r| r.expect("column"))
        .collect()
}

/// Writes `seed` with `value` in the first row of `table.column` that
/// holds a value (else its first row); false when the table is empty or
/// the database refuses the value (a constraint).
fn substitute(seed: &[u8], out: &Path, table: &str, column: &str, value: &Value) -> bool {
    std::fs::write(out, seed).expect("write copy");
    let c = Connection::open(out).expect("open copy");
    let (t, col) = (quote(table), quote(column));
    let sql = format!(
        "UPDATE {t} SET {col} = ?1 WHERE rowid = coalesce(\
         (SELECT min(rowid) FROM {t} WHERE {col} IS NOT NULL), (SELECT min(rowid) FROM {t}))"
    );
    let changed = c.execute(&sql, [value]).unwrap_or(0) == 1;
    drop(c);
    changed
}

fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

struct Run {
    what: String,
    input: PathBuf,
    child: Child,
}

fn start(what: String, input: PathBuf) -> Run {
    let child = Command::new(env!("CARGO_BIN_EXE_rankline"))
        .args(["report", "all", "--format", "json", "--no-cache"])
        .arg(&input)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rankline");
    Run { what, input, child }
}

fn finish(run: Run) -> Option<String> {
    let o = run.child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&o.stderr);
    let name = run.input.display().to_string();
    let problem = match o.status.code() {
        None => Some(format!("killed by a signal ({})", o.status)),
        Some(_) if err.contains("panicked") || err.contains("internal error") => {
            Some("panicked".to_string())
        }
        Some(0) => None,
        Some(1) if err.lines().count() == 1 && err.contains(&name) => None,
        Some(1) => Some("exit 1 without exactly one line naming the file".to_string()),
        Some(c) => Some(format!("exit {c}")),
    };
    // Failing copies stay for a look; the rest would fill the disk.
    if problem.is_none() {
        let _ = std::fs::remove_file(&run.input);
    }
    problem.map(|p| format!("{}: {p}; stderr: {}", run.what, err.trim()))
}

#[test]
fn every_column_takes_every_extreme_value() {
    let base = temp_dir("value_sweep");
    let mut failures = Vec::new();
    let mut tried = 0;
    let mut running: Vec<Run> = Vec::new();
    for seed in SEEDS {
        let path = root().join(seed);
        let bytes = std::fs::read(&path).expect("read seed");
        for (table, column) in columns(&path) {
            for (label, value) in values() {
                let input = base.join(format!("run{tried}.sqlite"));
                if !substitute(&bytes, &input, &table, &column, &value) {
                    continue;
                }
                tried += 1;
                if running.len() == PARALLEL {
                    failures.extend(finish(running.remove(0)));
                }
                running.push(start(format!("{seed} {table}.{column} = {label}"), input));
            }
        }
    }
    for run in running {
        failures.extend(finish(run));
    }
    // Every column of both seeds takes at least its integers.
    assert!(tried > 3000, "only {tried} substitutions applied");
    assert!(
        failures.is_empty(),
        "{} of {tried} substitutions did not end cleanly:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let _ = std::fs::remove_dir_all(&base);
}
