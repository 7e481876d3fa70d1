//! Bad input: one clear line naming the file and the problem, a non-zero
//! exit, never a panic.

mod common;
use common::*;
use rusqlite::Connection;
use std::path::Path;

fn make_nsys_like(path: &Path, rows: usize) {
    let c = Connection::open(path).unwrap();
    c.execute_batch(
        "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
         CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
           deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
           correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL);
         INSERT INTO StringIds VALUES (1, 'gemm');",
    )
    .unwrap();
    let tx = c.unchecked_transaction().unwrap();
    {
        let mut st = tx.prepare("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?1, ?2, 0, 1, 7, ?3, 16777216, 1, 1)").unwrap();
        for i in 0..rows as i64 {
            // from 1 µs: an event at timestamp 0 cannot be right
            st.execute(((i + 1) * 1000, (i + 1) * 1000 + 500, i))
                .unwrap();
        }
    }
    tx.commit().unwrap();
}

#[test]
fn missing_file() {
    let o = rankline(&["report", "summary", "no/such/file.sqlite"]);
    assert_one_line_error(&o, "no/such/file.sqlite", "no such file");
}

#[test]
fn directory() {
    // A directory is read as its exports: one without any is an input error.
    let d = temp_dir("bad_dir");
    let o = rankline(&["report", "summary", d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_one_line_error(
        &o,
        d.to_str().unwrap(),
        "a directory with no .sqlite exports or .nsys-rep reports in it",
    );
}

#[test]
fn not_sqlite() {
    let o = rankline(&["report", "all", "Cargo.toml"]);
    assert_one_line_error(&o, "Cargo.toml", "not an SQLite database");
}

#[test]
fn empty_file() {
    let d = temp_dir("bad_empty");
    let f = d.join("empty.sqlite");
    std::fs::write(&f, b"").unwrap();
    let o = rankline(&["report", "all", f.to_str().unwrap()]);
    assert_one_line_error(&o, f.to_str().unwrap(), "empty file");
}

#[test]
fn sqlite_but_not_nsys() {
    let d = temp_dir("bad_not_nsys");
    let f = d.join("other.sqlite");
    Connection::open(&f)
        .unwrap()
        .execute_batch("CREATE TABLE users (id INTEGER, name TEXT);")
        .unwrap();
    let o = rankline(&["report", "all", f.to_str().unwrap()]);
    assert_one_line_error(&o, f.to_str().unwrap(), "not an Nsight Systems export");
}

#[test]
fn truncated_database() {
    let d = temp_dir("bad_truncated");
    let f = d.join("cut.sqlite");
    make_nsys_like(&f, 20_000);
    let len = std::fs::metadata(&f).unwrap().len();
    let bytes = std::fs::read(&f).unwrap();
    std::fs::write(&f, &bytes[..(len / 2) as usize]).unwrap();
    let o = rankline(&["report", "all", f.to_str().unwrap()]);
    assert_one_line_error(&o, f.to_str().unwrap(), "truncated");
}

#[test]
fn corrupted_database() {
    let d = temp_dir("bad_corrupt");
    let f = d.join("corrupt.sqlite");
    make_nsys_like(&f, 20_000);
    let mut bytes = std::fs::read(&f).unwrap();
    // Smash every page after the schema page: b-tree headers become garbage.
    let page = 4096;
    for p in (2 * page..bytes.len()).step_by(page) {
        for b in &mut bytes[p..p + 64] {
            *b = 0xA5;
        }
    }
    std::fs::write(&f, &bytes).unwrap();
    let o = rankline(&["report", "all", f.to_str().unwrap()]);
    assert_one_line_error(&o, f.to_str().unwrap(), "corrupted");
}

#[test]
fn a_bad_file_among_good_ones_is_reported_and_the_rest_load() {
    let d = temp_dir("bad_among_good");
    let good = d.join("good.sqlite");
    make_nsys_like(&good, 10);
    let o = rankline(&[
        "report",
        "summary",
        "--format",
        "json",
        good.to_str().unwrap(),
        "missing.sqlite",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("missing.sqlite: no such file"), "{err}");
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["devices"][0]["kernels"], 10);
    assert_eq!(v["files"].as_array().unwrap().len(), 1);
}

#[test]
fn bad_options_are_one_line_too() {
    let o = rankline(&["report", "summary", "Cargo.toml", "--window", "2", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--window"), "{}", stderr(&o));
    let o = rankline(&["report", "nccl", "x.sqlite", "--comm-pattern", "("]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}

#[test]
fn bad_keymap_names_file_and_line() {
    let d = temp_dir("bad_keymap");
    let f = d.join("keymap.toml");
    std::fs::write(&f, "[timeline]\npan_left = { keys = [\"Left\"], desc = \"ok\" }\nzoom_in = { keys = [\"ctrl-nonsense-key\"], desc = \"x\" }\n").unwrap();
    let o = rankline(&[
        "fixtures/megatron_tp8.sqlite",
        "--keymap",
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&format!("{}:3:", f.display())), "{err}");
}

#[test]
fn usage_errors_are_one_line() {
    for args in [
        &["report"][..],
        &["report", "bogus", "x.sqlite"],
        &["report", "all", "x.sqlite", "--trim", "1"],
        &["--frob"],
    ] {
        let o = rankline(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("rankline: "), "{err}");
    }
    // Help still prints in full, and succeeds.
    let o = rankline(&["--help"]);
    assert!(o.status.success() && stdout(&o).contains("Usage:"));
}
