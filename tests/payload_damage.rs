//! Damaged NCCL payloads never lie: a lost range or payload shifts no
//! rank's sequence, impossible layouts, cut records and absurd sizes give
//! no figure (and say why), and copied rows count once. Each case mutates a
//! copy of `fixtures/payloads.sqlite` (4 ranks, one communicator, known
//! sizes) the way nsys's dropped events or a damaged file would.

mod common;
use common::*;
use rusqlite::Connection;
use serde_json::Value;
use std::path::{Path, PathBuf};

const PAYLOADS: &str = "fixtures/payloads.sqlite";

/// A copy of the payloads fixture, changed by `sql`.
fn damaged(test: &str, sql: &str) -> PathBuf {
    let dir = temp_dir(test);
    let f = dir.join("payloads.sqlite");
    std::fs::copy(root().join(PAYLOADS), &f).unwrap();
    Connection::open(&f).unwrap().execute_batch(sql).unwrap();
    f
}

fn path(f: &Path) -> &str {
    f.to_str().unwrap()
}

fn skew(f: &str) -> Value {
    json(&[
        "report",
        "skew",
        "--no-cache",
        "--instances",
        "--format",
        "json",
        f,
    ])
}

fn nccl(f: &str) -> Value {
    json(&["report", "nccl", "--no-cache", "--format", "json", f])
}

/// What pairs an instance: its members, op, times and who was late.
fn pairing(v: &Value) -> Vec<Vec<Value>> {
    let groups = v["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "one communicator, one group: {groups:?}");
    groups[0]["instance_list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            [
                "instance",
                "op",
                "start_ns",
                "start_skew_ms",
                "end_skew_ms",
                "late_device",
                "early_device",
                "ranks",
                "missing",
            ]
            .iter()
            .map(|k| i[*k].clone())
            .collect()
        })
        .collect()
}

/// Rank 0's first NCCL call (an `ncclAllReduce`): the row nsys drops.
const FIRST_CALL: &str = "(SELECT e.rowid FROM NVTX_EVENTS e JOIN StringIds s ON s.id = e.textId
     WHERE e.binaryData IS NOT NULL AND s.value = 'ncclAllReduce'
     ORDER BY e.globalTid, e.start LIMIT 1)";

#[test]
fn a_lost_range_or_payload_shifts_nothing() {
    let intact = skew(PAYLOADS);
    let cases = [
        (
            "lost_range",
            format!("DELETE FROM NVTX_EVENTS WHERE rowid = {FIRST_CALL};"),
        ),
        (
            "lost_payload",
            format!("UPDATE NVTX_EVENTS SET binaryData = NULL WHERE rowid = {FIRST_CALL};"),
        ),
    ];
    for (name, sql) in cases {
        let f = damaged(&format!("payload_damage_{name}"), &sql);
        let got = skew(path(&f));
        assert_eq!(pairing(&got), pairing(&intact), "{name}");
        let g = &got["groups"][0];
        assert_eq!(g["sequence_consistent"], true, "{name}");
        assert_eq!(
            g["without_calls"],
            serde_json::json!([{"device": 0, "placed": 1, "left_out": 0}]),
            "{name}"
        );
        let notes = g["notes"].to_string();
        assert!(
            notes.contains("no NCCL call with a payload names 1 kernel of device 0"),
            "{name}: {notes}"
        );
        // No GPU time changed: the gate holds.
        let o = rankline(&[
            "diff",
            "--no-cache",
            PAYLOADS,
            path(&f),
            "--fail-on-regression",
            "5",
        ]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stdout(&o));
    }
}

#[test]
fn ranks_whose_records_are_cut_short_are_not_read_another_way() {
    // Ranks 0 and 1 write nsys's record header: cut 8 bytes off each.
    let f = damaged(
        "payload_damage_cut",
        "UPDATE NVTX_EVENTS SET binaryData = substr(binaryData, 1, length(binaryData) - 8)
         WHERE binaryData IS NOT NULL AND globalTid IN
           (SELECT DISTINCT globalTid FROM NVTX_EVENTS WHERE binaryData IS NOT NULL
            ORDER BY globalTid LIMIT 2);",
    );
    let got = skew(path(&f));
    // One group still: the cut records name no communicator of their own.
    assert_eq!(pairing(&got), pairing(&skew(PAYLOADS)));
    let n = nccl(path(&f));
    let note = n["bandwidth"]["note"].as_str().unwrap();
    assert!(
        note.contains("40 of 80 payloads not decodable")
            && note.contains("40 cut short of (or longer than) the length their record header"),
        "{note}"
    );
    // Ranks 2 and 3 still give their sizes; nothing is read from the cut ones.
    let sizes: Vec<i64> = n["devices"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["bytes"].as_i64())
        .collect();
    assert!(sizes.iter().all(|&b| b < 1 << 40), "{sizes:?}");
}

#[test]
fn impossible_layouts_and_sizes_give_no_figure_and_say_why() {
    let cases = [
        (
            "overlap_0",
            "UPDATE NVTX_PAYLOAD_SCHEMA_ENTRIES SET offset = 0 WHERE name = 'Message size [bytes]';",
            "80 whose schema's entries overlap or lie outside its payload size",
        ),
        (
            "overlap_4",
            "UPDATE NVTX_PAYLOAD_SCHEMA_ENTRIES SET offset = 4 WHERE name = 'Message size [bytes]';",
            "80 whose schema's entries overlap or lie outside its payload size",
        ),
        (
            "outside",
            "UPDATE NVTX_PAYLOAD_SCHEMAS SET payloadSize = 12;",
            "80 whose schema's entries overlap or lie outside its payload size",
        ),
        (
            // The size field's top byte set (after nsys's 32-byte header, or
            // in a bare payload): 2^62 and more.
            "huge",
            "UPDATE NVTX_EVENTS SET binaryData = CAST(
               CASE WHEN length(binaryData) > 32
                 THEN substr(binaryData, 1, 47) || x'7f' || substr(binaryData, 49)
                 ELSE substr(binaryData, 1, 15) || x'7f' || substr(binaryData, 17) END
             AS BLOB) WHERE binaryData IS NOT NULL;",
            "80 with a message size above 2^48 bytes",
        ),
    ];
    for (name, sql, why) in cases {
        let f = damaged(&format!("payload_damage_{name}"), sql);
        let n = nccl(path(&f));
        let b = &n["bandwidth"];
        assert_eq!(b["sizes_recorded"], false, "{name}");
        let note = b["note"].as_str().unwrap();
        assert!(
            note.contains("80 NCCL payloads present, none decodable with the declared schemas")
                && note.contains(why),
            "{name}: {note}"
        );
        assert!(
            b["group_ops"]
                .as_array()
                .unwrap()
                .iter()
                .all(|o| o["bytes"].is_null()),
            "{name}: {b}"
        );
        // Without communicators the ranks still pair by their sequence.
        let s = skew(path(&f));
        assert_eq!(s["groups"][0]["match_method"], "sequence", "{name}");
        assert_eq!(pairing(&s), pairing(&skew(PAYLOADS)), "{name}");
    }
}

#[test]
fn payloads_that_cannot_be_read_are_counted_not_ignored() {
    let f = damaged(
        "payload_damage_unreadable",
        "UPDATE NVTX_EVENTS SET binaryData = 'not hex' WHERE binaryData IS NOT NULL;",
    );
    let note = nccl(path(&f))["bandwidth"]["note"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        note.contains("80 NCCL payloads present, none decodable")
            && note.contains("80 not readable as bytes"),
        "{note}"
    );
}

#[test]
fn copied_payload_rows_count_once() {
    let f = damaged(
        "payload_damage_copies",
        "INSERT INTO NVTX_EVENTS SELECT * FROM NVTX_EVENTS WHERE binaryData IS NOT NULL;",
    );
    let ops = |v: &Value| v["bandwidth"]["group_ops"].clone();
    let n = nccl(path(&f));
    assert_eq!(ops(&n), ops(&nccl(PAYLOADS)));
    let all_reduce = ops(&n)
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["op"] == "AllReduce")
        .unwrap()["bytes"]
        .as_u64();
    assert_eq!(all_reduce, Some(144 << 20));
    let note = n["bandwidth"]["note"].as_str().unwrap();
    assert!(
        note.contains("80 duplicated payload rows counted once"),
        "{note}"
    );
}
