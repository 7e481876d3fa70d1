//! `report summary` without a cache entry counts the runtime calls and NVTX
//! ranges by SQL instead of loading them: it answers exactly as the full
//! load (`report all`'s summary) does, on every fixture and real export,
//! and on exports whose rows hold values the loader drops or converts.

mod common;
use common::*;
use rusqlite::Connection;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `report summary` (counted) and the summary of `report all` (loaded),
/// both fresh, with `extra` options.
fn counted_and_loaded(input: &Path, extra: &[&str]) -> (Value, Value) {
    let input = input.to_str().unwrap();
    let run = |section: &str| {
        let mut args = vec!["report", section, input, "--format", "json", "--no-cache"];
        args.extend_from_slice(extra);
        json(&args)
    };
    (run("summary"), run("all")["summary"].clone())
}

/// Every fixture: the single files and the multi-file directories.
fn fixture_inputs() -> Vec<PathBuf> {
    let dir = root().join("fixtures");
    let mut inputs = sqlite_files(&dir);
    for d in ["multinode", "per_rank", "ends_disagree", "diff"] {
        inputs.push(dir.join(d));
    }
    inputs
}

#[test]
fn counted_summaries_answer_as_the_full_load_on_every_fixture() {
    for f in fixture_inputs() {
        let (counted, loaded) = counted_and_loaded(&f, &[]);
        assert_eq!(counted, loaded, "{}", f.display());
        assert!(counted["span_ns"].is_array(), "{}", f.display());
    }
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn counted_summaries_answer_as_the_full_load_on_real_profiles() {
    for f in sqlite_files(&real_profiles()) {
        let (counted, loaded) = counted_and_loaded(&f, &[]);
        assert_eq!(counted, loaded, "{}", f.display());
    }
}

#[test]
fn a_summary_in_a_window_answers_as_the_full_load() {
    let f = root().join("fixtures/megatron_tp8.sqlite");
    let whole = json(&["report", "summary", f.to_str().unwrap(), "--format", "json"]);
    let (lo, hi) = (
        whole["span_ns"][0].as_i64().unwrap() as f64 / 1e9,
        whole["span_ns"][1].as_i64().unwrap() as f64 / 1e9,
    );
    let (a, b) = (
        format!("{}", lo + (hi - lo) * 0.3),
        format!("{}", lo + (hi - lo) * 0.6),
    );
    let (counted, loaded) = counted_and_loaded(&f, &["--trim", &a, &b]);
    assert_eq!(counted, loaded);
    assert_ne!(
        counted["devices"], whole["devices"],
        "the window counts less"
    );
}

/// Replaces `table` by a copy whose columns have no type (no affinity), so
/// that text and real values stay as written.
fn untyped(c: &Connection, table: &str) {
    let cols: Vec<String> = c
        .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let select: Vec<String> = cols
        .iter()
        .map(|n| format!("+\"{n}\" AS \"{n}\""))
        .collect();
    c.execute_batch(&format!(
        "ALTER TABLE {table} RENAME TO old_copy;
         CREATE TABLE {table} AS SELECT {} FROM old_copy ORDER BY rowid;
         DROP TABLE old_copy;",
        select.join(", ")
    ))
    .unwrap();
}

#[test]
fn rows_the_loader_drops_or_converts_are_counted_as_it_keeps_them() {
    let d = temp_dir("summary_counts_odd_rows");
    let f = d.join("odd.sqlite");
    std::fs::copy(root().join("fixtures/megatron_tp8.sqlite"), &f).unwrap();
    let before = counted_and_loaded(&f, &[]).0;
    let c = Connection::open(&f).unwrap();
    untyped(&c, "CUPTI_ACTIVITY_KIND_RUNTIME");
    untyped(&c, "NVTX_EVENTS");
    c.execute_batch(
        "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = NULL WHERE rowid = 1;
         UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = ' ' || start || ' ' WHERE rowid = 2;
         UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = 'x' WHERE rowid = 3;
         UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = start + 0.5 WHERE rowid = 4;
         UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = CAST(globalTid AS TEXT) WHERE rowid = 5;
         UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = start - 1000 WHERE rowid = 6;
         UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = NULL WHERE rowid = 7;
         UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = ' 100', end = 200.7,
           globalTid = CAST(globalTid AS TEXT) WHERE rowid IN (8, 9);
         UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = X'01' WHERE rowid = 10;
         UPDATE NVTX_EVENTS SET eventType = 59.0 WHERE rowid = 1;
         UPDATE NVTX_EVENTS SET end = NULL WHERE rowid = 2;
         UPDATE NVTX_EVENTS SET end = ' ' || (end + 7) WHERE rowid = 3;
         UPDATE NVTX_EVENTS SET start = 'abc' WHERE rowid = 4;
         UPDATE NVTX_EVENTS SET globalTid = NULL WHERE rowid = 5;
         UPDATE NVTX_EVENTS SET eventType = '59' WHERE rowid = 6;
         UPDATE NVTX_EVENTS SET eventType = 315 WHERE rowid = 7;
         UPDATE NVTX_EVENTS SET end = start - 5 WHERE rowid = 8;
         UPDATE NVTX_EVENTS SET start = CAST(start AS TEXT), eventType = 34.0,
           end = 9223372036854775807 WHERE eventType = 34;",
    )
    .unwrap();
    // A thread of its own with a domain creation only, and ranges with
    // extreme times on another new thread.
    c.execute_batch(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, domainId, text)
           SELECT min(start), NULL, 75, globalTid + 77, 5, 'dom' FROM NVTX_EVENTS
           WHERE typeof(globalTid) = 'integer';
         INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, text)
           SELECT 1, '9e30', 60, globalTid + 78, 'far' FROM NVTX_EVENTS
           WHERE typeof(globalTid) = 'integer' LIMIT 2;",
    )
    .unwrap();
    drop(c);
    let (counted, loaded) = counted_and_loaded(&f, &[]);
    assert_eq!(counted, loaded);
    assert_ne!(counted["span_ns"], before["span_ns"], "the odd rows count");
    assert_ne!(counted["devices"], before["devices"], "the odd rows count");
}

#[test]
fn a_summary_of_an_export_with_nvtx_payloads_answers_as_the_full_load() {
    let d = temp_dir("summary_counts_payloads");
    let f = d.join("payloads.sqlite");
    std::fs::copy(root().join("fixtures/shared_stream_two_comms.sqlite"), &f).unwrap();
    let c = Connection::open(&f).unwrap();
    // An NCCL API range with a communicator id around every runtime call.
    c.execute_batch(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId, binaryData)
           SELECT start - 100, end + 100, 59, 'ncclAllReduce', globalTid, 1, '4444333322221111'
           FROM CUPTI_ACTIVITY_KIND_RUNTIME;",
    )
    .unwrap();
    drop(c);
    let (counted, loaded) = counted_and_loaded(&f, &[]);
    assert_eq!(counted, loaded);
}

#[test]
fn files_from_the_cache_and_counted_files_together_answer_as_the_full_load() {
    let d = temp_dir("summary_counts_mixed");
    let (inputs, cache) = (d.join("in"), d.join("cache"));
    std::fs::create_dir_all(&inputs).unwrap();
    for f in sqlite_files(&root().join("fixtures/multinode")) {
        std::fs::copy(&f, inputs.join(f.file_name().unwrap())).unwrap();
    }
    let (dir, cache) = (inputs.to_str().unwrap(), cache.to_str().unwrap());
    // Only node1 has a cache entry: it opens whole, the others are counted.
    let node1 = inputs.join("node1.sqlite");
    text(&[
        "report",
        "all",
        node1.to_str().unwrap(),
        "--cache-dir",
        cache,
    ]);
    let args = [
        "report",
        "summary",
        dir,
        "--format",
        "json",
        "--cache-dir",
        cache,
    ];
    let mixed = json(&args);
    let loaded = json(&["report", "all", dir, "--format", "json", "--no-cache"]);
    assert_eq!(mixed, loaded["summary"]);
}
