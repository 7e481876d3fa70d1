//! Batched copies (schema 3.28.1's `copyCount`: `cudaMemcpyBatchAsync`
//! puts several copies in one memcpy record). A record counts the copies
//! it holds wherever copies are counted, against plain SQL
//! (`SUM(COALESCE(copyCount, 1))`); its time stays the record's; an export
//! without the column reads as before.

mod common;
use common::*;
use rusqlite::Connection;

/// The Megatron fixture (its memcpy table has `copyCount`, 1 on every row,
/// as real 2025.5+ exports do) with batches: every third memcpy holds 4
/// copies, every seventh else NULL.
fn batched(test: &str) -> (std::path::PathBuf, Connection) {
    let f = copy_fixture(test, "megatron_tp8.sqlite");
    let c = Connection::open(&f).unwrap();
    c.execute_batch(
        "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET copyCount = 4 WHERE rowid % 3 = 0;
         UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET copyCount = NULL WHERE rowid % 7 = 0 AND copyCount = 1;",
    )
    .unwrap();
    (f, c)
}

fn one(c: &Connection, sql: &str) -> u64 {
    c.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap() as u64
}

/// (Σ count, Σ copies) of `report stats --of copies` on `path`, and its text.
fn stats(path: &str) -> (u64, u64, String) {
    let v = json(&[
        "report",
        "stats",
        "--of",
        "copies",
        "--format",
        "json",
        "--no-cache",
        path,
    ]);
    let rows = v["rows"].as_array().unwrap();
    let sum = |k: &str| rows.iter().map(|r| r[k].as_u64().unwrap()).sum();
    let said = text(&["report", "stats", "--of", "copies", "--no-cache", path]);
    (sum("count"), sum("copies"), said)
}

/// Σ of the overlap report's per-device `copies`.
fn overlap_copies(path: &str) -> u64 {
    let v = json(&["report", "overlap", "--format", "json", "--no-cache", path]);
    v["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["copies"].as_u64().unwrap())
        .sum()
}

#[test]
fn a_batched_record_counts_its_copies_against_plain_sql() {
    let (f, c) = batched("batched_copies");
    let path = f.display().to_string();
    let records = one(&c, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY")
        + one(&c, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET");
    let copies = one(
        &c,
        "SELECT SUM(COALESCE(copyCount, 1)) FROM CUPTI_ACTIVITY_KIND_MEMCPY",
    ) + one(&c, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET");
    assert!(copies > records, "the fixture has batches");

    let (count, got, said) = stats(&path);
    assert_eq!((count, got), (records, copies));
    assert!(said.contains("batched copies (copyCount"), "{said}");
    assert_eq!(overlap_copies(&path), copies);
    // The summary's per-device memcpy counts too.
    let s = json(&["report", "summary", "--format", "json", "--no-cache", &path]);
    let memcpy: u64 = s["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["memcpy"].as_u64().unwrap())
        .sum();
    assert_eq!(
        memcpy,
        one(
            &c,
            "SELECT SUM(COALESCE(copyCount, 1)) FROM CUPTI_ACTIVITY_KIND_MEMCPY"
        )
    );
}

#[test]
fn an_export_without_the_column_counts_records() {
    let path = root()
        .join("fixtures/megatron_tp8.sqlite")
        .display()
        .to_string();
    let (count, copies, said) = stats(&path);
    assert_eq!(count, copies);
    assert!(!said.contains("batched copies"), "{said}");
    assert_eq!(overlap_copies(&path), count);
}

#[test]
fn the_stats_view_names_the_batched_rows() {
    use common::tui::{key, open_at, press, screen};
    use crossterm::event::KeyCode;
    use rankline::profile::Source;
    let (f, c) = batched("batched_copies_view");
    let htod = one(
        &c,
        "SELECT SUM(COALESCE(copyCount, 1)) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1",
    );
    let records = one(
        &c,
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1",
    );
    let (mut app, mut t) = open_at(&[Source::File(f)], None, 160, 48);
    press(&mut app, &mut t, "S");
    key(&mut app, &mut t, KeyCode::Tab);
    let s = screen(&t);
    assert!(s.contains("stats: copies"), "{s}");
    assert!(
        s.contains(&format!("Memcpy HtoD {htod} in {records}")),
        "{s}"
    );
}
