//! NCCL payloads exported as tables (`nsys export --dynamic-tables=all`,
//! schema 3.28.1) read as the same payloads exported as blobs
//! (`--include-blobs=true`): the generator writes one capture both ways
//! (`make-fixtures/src/payload_tables.rs`), and every report must be the
//! same — communicators, bytes, bandwidth, skews — but for the sentence
//! that names where the sizes came from. The fields are found through
//! `NVTX_EXPORT_TRANSLATION`, never by guessing the sanitised spelling.

mod common;
use common::*;
use rankline::analysis::bandwidth::{FROM_TABLES, UNVERIFIED};
use rusqlite::Connection;
use serde_json::Value;

/// Every report section as JSON (`report all`), the file's name made one.
fn all(path: &str, stem: &str) -> String {
    let v = json(&["report", "all", "--format", "json", "--no-cache", path]);
    serde_json::to_string_pretty(&v)
        .unwrap()
        .replace(&format!("{stem}.sqlite"), "FILE.sqlite")
}

/// The two exports of one capture: (blobs, tables), relative to the root.
const PAIRS: [(&str, &str); 2] = [
    ("fixtures/payloads.sqlite", "fixtures/payload_tables.sqlite"),
    (
        "fixtures/jobs/3d_sync_compute_payloads.sqlite",
        "fixtures/jobs/3d_sync_compute_payload_tables.sqlite",
    ),
];

fn stem(path: &str) -> &str {
    path.rsplit('/').next().unwrap().trim_end_matches(".sqlite")
}

#[test]
fn the_tables_export_holds_no_blob_and_a_table_per_schema_and_process() {
    for (_, tables) in PAIRS {
        let c = Connection::open(root().join(tables)).unwrap();
        let one = |sql: &str| -> i64 { c.query_row(sql, [], |r| r.get(0)).unwrap() };
        assert_eq!(
            one("SELECT count(*) FROM NVTX_EVENTS WHERE binaryData IS NOT NULL"),
            0
        );
        assert!(one("SELECT count(*) FROM NVTX_EVENTS_PAYLOAD_SCHEMAS") > 0);
        assert!(
            one(
                "SELECT count(*) FROM sqlite_master WHERE name LIKE 'DYNAMIC_NVTXPAYLOAD_DATATYPE_%'"
            ) > 1
        );
        assert!(one("SELECT count(*) FROM NVTX_EXPORT_TRANSLATION") > 0);
    }
}

#[test]
fn every_report_on_the_tables_export_equals_the_blob_exports() {
    for (blobs, tables) in PAIRS {
        let a = all(&root().join(blobs).display().to_string(), stem(blobs));
        let b = all(&root().join(tables).display().to_string(), stem(tables));
        // Sizes were found in both, and said to come from where they came.
        assert!(a.contains(UNVERIFIED), "{blobs}");
        assert!(
            b.contains(FROM_TABLES) && !b.contains(UNVERIFIED),
            "{tables}"
        );
        let b = b.replace(FROM_TABLES, UNVERIFIED);
        assert!(
            a == b,
            "{tables} differs from {blobs}:\n{}",
            first_difference(&a, &b)
        );
    }
}

/// The first line where `a` and `b` differ, with its neighbours.
fn first_difference(a: &str, b: &str) -> String {
    let (la, lb): (Vec<_>, Vec<_>) = (a.lines().collect(), b.lines().collect());
    let at = la
        .iter()
        .zip(&lb)
        .position(|(x, y)| x != y)
        .unwrap_or(la.len().min(lb.len()));
    let from = at.saturating_sub(3);
    format!(
        "blobs:\n{}\ntables:\n{}",
        la[from..(at + 2).min(la.len())].join("\n"),
        lb[from..(at + 2).min(lb.len())].join("\n")
    )
}

/// Whether `report nccl` found sizes in `path`, and its bandwidth rows.
fn sizes(path: &str) -> (Value, Value) {
    let v = json(&["report", "nccl", "--format", "json", "--no-cache", path]);
    (
        v["bandwidth"]["sizes_recorded"].clone(),
        v["bandwidth"]["groups"].clone(),
    )
}

#[test]
fn fields_are_found_through_the_translation_whatever_the_columns_are_named() {
    let (sized, groups) = sizes(&root().join(PAIRS[0].1).display().to_string());
    assert_eq!(sized, Value::Bool(true));
    assert!(!groups.as_array().unwrap().is_empty());

    // Renamed columns, the translation saying so: the same sizes.
    let f = copy_fixture("payload_tables_renamed", "payload_tables.sqlite");
    let c = Connection::open(&f).unwrap();
    let tables: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE name LIKE 'DYNAMIC_NVTXPAYLOAD%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for t in &tables {
        let cols: Vec<String> = c
            .prepare(&format!("SELECT name FROM pragma_table_info('{t}')"))
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for col in cols.iter().filter(|c| *c != "eventId") {
            c.execute_batch(&format!(
                "ALTER TABLE \"{t}\" RENAME COLUMN \"{col}\" TO \"f_{col}\""
            ))
            .unwrap();
        }
    }
    c.execute_batch(
        "UPDATE NVTX_EXPORT_TRANSLATION SET sanitizedName = 'f_' || sanitizedName;
         INSERT INTO NVTX_EXPORT_TRANSLATION VALUES ('Root', 'f_Root');",
    )
    .unwrap();
    drop(c);
    assert_eq!(sizes(&f.display().to_string()), (sized, groups));

    // Without the translation no field is found: no size is guessed.
    let f = copy_fixture("payload_tables_untranslated", "payload_tables.sqlite");
    Connection::open(&f)
        .unwrap()
        .execute_batch("DELETE FROM NVTX_EXPORT_TRANSLATION")
        .unwrap();
    let path = f.display().to_string();
    assert_eq!(sizes(&path).0, Value::Bool(false));
    let said = text(&["report", "nccl", "--no-cache", &path]);
    assert!(said.contains("none decodable"), "{said}");
}
