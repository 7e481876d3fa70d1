//! Events whose times cannot be right (issue 22): end before start, a zero
//! timestamp, longer than the capture, outside the capture window. They
//! are counted per file in `report summary`, and skew, launch and overlap
//! leave them out and say how many: every figure equals that of a copy
//! with those rows deleted.

mod common;
use common::split::copy;
use common::*;
use rusqlite::Connection;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Copies of fixtures/per_rank in `dir`.
fn per_rank_copy(dir: &Path) -> Vec<PathBuf> {
    sqlite_files(&root().join("fixtures/per_rank"))
        .iter()
        .map(|f| copy(f, dir, f.file_name().unwrap().to_str().unwrap()))
        .collect()
}

/// rank2.sqlite's damaged rows: (table, rowid, SQL making it wrong).
/// Kernels 3, 5 and 7 compute (a NCCL kernel left out would leave a hole
/// in the rank's sequence, which matching cannot place yet); the window
/// is the capture's 62.6 s.
const DAMAGE: [(&str, i64, &str); 4] = [
    ("CUPTI_ACTIVITY_KIND_KERNEL", 3, "end = start - 1000"),
    ("CUPTI_ACTIVITY_KIND_KERNEL", 5, "start = 0"),
    (
        "CUPTI_ACTIVITY_KIND_KERNEL",
        7,
        "end = start + 100000000000",
    ),
    (
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        7,
        "start = 500000000000, end = 500000001000",
    ),
];

fn run(section: &str, files: &[PathBuf]) -> Value {
    json_on(
        &["report", section, "--format", "json", "--no-cache"],
        files,
    )
}

#[test]
fn suspect_events_are_counted_and_left_out_of_skew_launch_and_overlap() {
    let damaged_dir = temp_dir("suspect_damaged");
    let deleted_dir = temp_dir("suspect_deleted");
    let damaged = per_rank_copy(&damaged_dir);
    let deleted = per_rank_copy(&deleted_dir);
    let (a, b) = (
        Connection::open(&damaged[2]).unwrap(),
        Connection::open(&deleted[2]).unwrap(),
    );
    for (table, rowid, set) in DAMAGE {
        let n = a
            .execute(
                &format!("UPDATE {table} SET {set} WHERE rowid = {rowid}"),
                [],
            )
            .unwrap();
        assert_eq!(n, 1);
        b.execute(&format!("DELETE FROM {table} WHERE rowid = {rowid}"), [])
            .unwrap();
    }
    drop((a, b));

    let summary = run("summary", &damaged);
    let files = summary["files"].as_array().unwrap();
    assert_eq!(
        files[2]["suspect_events"],
        serde_json::json!({
            "end_before_start": 1,
            "bad_timestamp": 1,
            "longer_than_capture": 1,
            "outside_capture": 1,
        })
    );
    // a full load (`report all`) judges them alike
    assert_eq!(
        run("all", &damaged)["summary"]["files"][2]["suspect_events"],
        files[2]["suspect_events"]
    );
    for i in [0, 1, 3] {
        assert_eq!(files[i]["suspect_events"]["end_before_start"], 0);
        assert_eq!(files[i]["suspect_events"]["outside_capture"], 0);
    }
    let out = text_on(&["report", "summary", "--no-cache"], &damaged).replace("\n    ", " ");
    assert!(
        out.contains("! rank2.sqlite: 4 GPU event(s) or CUDA call(s) left out, their times cannot be right (1 end before start, 1 zero or impossible timestamp, 1 longer than the capture, 1 outside the capture window)"),
        "{out}"
    );

    // The same figures as without the rows, and the count said (overlap
    // reads no CUDA calls: its three GPU events).
    for (section, n) in [("skew", 4), ("launch", 4), ("overlap", 3)] {
        let mut got = run(section, &damaged);
        let want = run(section, &deleted);
        assert_eq!(got["suspect_events_left_out"], n, "{section}");
        assert_eq!(want["suspect_events_left_out"], 0, "{section}");
        got["suspect_events_left_out"] = 0.into();
        let strip = |v: &Value, dir: &Path| v.to_string().replace(&dir.display().to_string(), "");
        assert_eq!(
            strip(&got, &damaged_dir),
            strip(&want, &deleted_dir),
            "{section}"
        );
        let out = text_on(&["report", section, "--no-cache"], &damaged).replace("\n    ", " ");
        assert!(
            out.contains(&format!(
                "! {n} GPU event(s) or CUDA call(s) whose times cannot be right were left out"
            )),
            "{section}: {out}"
        );
    }
}
