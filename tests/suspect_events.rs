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

/// The capture window given to copies of fixtures/why.sqlite (which
/// records none): 4.9 s to 5.9 s, around every row it has.
const WHY_WINDOW: (i64, i64) = (4_900_000_000, 5_900_000_000);

/// A copy of fixtures/why.sqlite in `dir` with [`WHY_WINDOW`] recorded.
fn why_copy(dir: &Path) -> PathBuf {
    let f = copy(&root().join("fixtures/why.sqlite"), dir, "why.sqlite");
    Connection::open(&f)
        .unwrap()
        .execute_batch(&format!(
            "CREATE TABLE ANALYSIS_DETAILS (globalVid INTEGER NOT NULL, duration INTEGER NOT NULL,
               startTime INTEGER NOT NULL, stopTime INTEGER NOT NULL);
             INSERT INTO ANALYSIS_DETAILS VALUES (0, {1} - {0}, {0}, {1});",
            WHY_WINDOW.0, WHY_WINDOW.1
        ))
        .unwrap();
    f
}

/// Adds to `table` a copy of its row `rowid` with `set` applied.
fn add_copy(c: &Connection, table: &str, rowid: i64, set: &str) {
    c.execute(
        &format!("INSERT INTO {table} SELECT * FROM {table} WHERE rowid = {rowid}"),
        [],
    )
    .unwrap();
    let n = c
        .execute(
            &format!("UPDATE {table} SET {set} WHERE rowid = last_insert_rowid()"),
            [],
        )
        .unwrap();
    assert_eq!(n, 1);
}

const HOUR_NS: i64 = 3_600_000_000_000;

/// The rows of why.sqlite's CPU side (and its CUDA sync and event
/// records) whose times cannot be right, added to or made in `c`:
/// the 30 ms `pthread_cond_wait` ending at i64::MAX (the row), and
/// copies of rows reversed, at 0 or at an impossible instant, longer than
/// the capture and an hour after it.
fn damage_cpu_side(c: &Connection) {
    let max = i64::MAX;
    c.execute(
        &format!("UPDATE OSRT_API SET end = {max} WHERE rowid = 1"),
        [],
    )
    .unwrap();
    add_copy(c, "OSRT_API", 2, "end = start - 1000");
    add_copy(c, "OSRT_API", 2, "start = 0");
    // Longer than the whole session (0 to 5.9 s), not only the window.
    add_copy(c, "OSRT_API", 2, "end = start + 7000000000");
    add_copy(
        c,
        "OSRT_API",
        2,
        &format!("start = start + {HOUR_NS}, end = end + {HOUR_NS}"),
    );
    add_copy(c, "SCHED_EVENTS", 2, &format!("start = {max}"));
    add_copy(c, "SCHED_EVENTS", 2, "start = 0");
    add_copy(c, "SCHED_EVENTS", 4, &format!("start = start + {HOUR_NS}"));
    for start in [i64::MIN, 5_410_000_000 + HOUR_NS] {
        c.execute(
            "INSERT INTO COMPOSITE_EVENTS (start, cpu, threadState, globalTid, cpuCycles)
               SELECT ?1, cpu, threadState, globalTid, cpuCycles FROM COMPOSITE_EVENTS LIMIT 1",
            [start],
        )
        .unwrap();
    }
    add_copy(
        c,
        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
        1,
        "end = start - 1",
    );
    add_copy(
        c,
        "CUPTI_ACTIVITY_KIND_CUDA_EVENT",
        1,
        &format!("timestamp = {max}"),
    );
}

/// Per table, per reason: what [`damage_cpu_side`] did.
fn cpu_side_counts() -> Value {
    let none = serde_json::json!({
        "end_before_start": 0, "bad_timestamp": 0, "longer_than_capture": 0, "outside_capture": 0
    });
    let counts = |ebs: u64, bad: u64, longer: u64, outside: u64| {
        serde_json::json!({
            "end_before_start": ebs, "bad_timestamp": bad,
            "longer_than_capture": longer, "outside_capture": outside
        })
    };
    serde_json::json!({
        "gpu_or_cuda_calls": none,
        "os_runtime_calls": counts(1, 2, 1, 1),
        "scheduling_events": counts(0, 2, 0, 1),
        "cpu_samples": counts(0, 1, 0, 1),
        "cuda_syncs": counts(1, 0, 0, 0),
        "cuda_event_records": counts(0, 1, 0, 0),
    })
}

/// OS runtime calls as `report stats --of osrt` gives them: per name,
/// (count, total ns).
fn osrt_stats(f: &Path) -> Vec<(String, u64, i64)> {
    let v = json_on(
        &[
            "report",
            "stats",
            "--of",
            "osrt",
            "--no-cache",
            "--format",
            "json",
        ],
        &[f.to_path_buf()],
    );
    let mut out: Vec<(String, u64, i64)> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["count"].as_u64().unwrap(),
                (r["total_ms"].as_f64().unwrap() * 1e6).round() as i64,
            )
        })
        .collect();
    out.sort();
    out
}

/// Rows of the OS runtime, scheduling, sample, sync and CUDA event tables
/// whose times cannot be right are left out and counted per file, per
/// table, per reason, by a summary's count-only read, a full load and a
/// cached one alike; every figure is that of the file without them, and
/// `report stats --of osrt` is plain SQL over the calls that can be right.
#[test]
fn cpu_side_rows_that_cannot_be_right_are_counted_per_table_and_left_out() {
    let damaged_dir = temp_dir("suspect_cpu_damaged");
    let clean_dir = temp_dir("suspect_cpu_clean");
    let damaged = why_copy(&damaged_dir);
    let clean = why_copy(&clean_dir);
    damage_cpu_side(&Connection::open(&damaged).unwrap());
    Connection::open(&clean)
        .unwrap()
        .execute("DELETE FROM OSRT_API WHERE rowid = 1", [])
        .unwrap();
    let files = [damaged.clone()];

    let want = cpu_side_counts();
    let summary = run("summary", &files);
    let file = &summary["files"][0];
    assert_eq!(file["suspect_events_by_table"], want, "{file}");
    assert_eq!(
        file["suspect_events"],
        serde_json::json!({
            "end_before_start": 2, "bad_timestamp": 6,
            "longer_than_capture": 1, "outside_capture": 3
        })
    );
    // a full load judges them alike, fresh and from the cache
    assert_eq!(run("all", &files)["summary"]["files"][0], *file);
    let cache = damaged_dir.join("cache");
    let cached = |section: &str| {
        json_on(
            &[
                "report",
                section,
                "--format",
                "json",
                "--cache-dir",
                cache.to_str().unwrap(),
            ],
            &files,
        )
    };
    cached("all");
    assert!(std::fs::read_dir(&cache).unwrap().count() > 0);
    assert_eq!(cached("summary")["files"][0], *file);

    let out = text_on(&["report", "summary", "--no-cache"], &files).replace("\n    ", " ");
    for line in [
        "! why.sqlite: 5 OS runtime calls left out, their times cannot be right (1 end before start, 2 zero or impossible timestamp, 1 longer than the capture, 1 outside the capture window)",
        "! why.sqlite: 3 scheduling events left out, their times cannot be right (2 zero or impossible timestamp, 1 outside the capture window)",
        "! why.sqlite: 2 CPU samples left out, their times cannot be right (1 zero or impossible timestamp, 1 outside the capture window)",
        "! why.sqlite: 1 CUDA sync record left out, its times cannot be right (1 end before start)",
        "! why.sqlite: 1 CUDA event record left out, its time cannot be right (1 zero or impossible timestamp)",
    ] {
        assert!(out.contains(line), "{line}\n{out}");
    }
    assert!(!out.contains("GPU event(s)"), "{out}");

    // The figures of the file without those rows, and how many were left
    // out of them said (skew reads GPU rows only: none).
    let strip = |v: &Value, dir: &Path| v.to_string().replace(&dir.display().to_string(), "");
    for (section, n) in [("why", 12), ("skew", 0)] {
        let mut got = run(section, &files);
        let want = run(section, std::slice::from_ref(&clean));
        assert_eq!(got["suspect_events_left_out"], n, "{section}");
        assert_eq!(want["suspect_events_left_out"], 0, "{section}");
        got["suspect_events_left_out"] = 0.into();
        assert_eq!(
            strip(&got, &damaged_dir),
            strip(&want, &clean_dir),
            "{section}"
        );
    }
    assert_eq!(osrt_stats(&damaged), osrt_stats(&clean));
    let said = |args: &[&str]| text_on(args, &files).replace("\n    ", " ");
    let osrt = "! 5 OS runtime calls whose times cannot be right were left out (1 end before start, 2 zero or impossible timestamp, 1 longer than the capture, 1 outside the capture window): report summary lists them per file";
    let out = said(&["report", "stats", "--of", "osrt", "--no-cache"]);
    assert!(out.contains(osrt), "{out}");
    let out = said(&["report", "why", "--no-cache"]);
    for line in [
        osrt,
        "! 1 CUDA event record whose time cannot be right was left out (1 zero or impossible timestamp)",
        "! 2 CPU samples whose times cannot be right were left out",
    ] {
        assert!(out.contains(line), "{line}\n{out}");
    }
    let out = said(&["report", "stats", "--of", "kernels", "--no-cache"]);
    assert!(!out.contains("cannot be right"), "{out}");
    // plain SQL over the calls whose times can be right
    let (a, b) = WHY_WINDOW;
    let c = Connection::open(&damaged).unwrap();
    let mut st = c
        .prepare(&format!(
            "SELECT s.value, count(*), sum(o.end - o.start) FROM OSRT_API o
               JOIN StringIds s ON s.id = o.nameId
             WHERE o.start > 0 AND o.end < {} AND o.end >= o.start
               AND o.end - o.start <= {b} - {a} AND o.end >= {a} AND o.start <= {b}
             GROUP BY s.value ORDER BY s.value",
            1i64 << 61
        ))
        .unwrap();
    let sql: Vec<(String, u64, i64)> = st
        .query_map([], |r| {
            Ok((r.get(0)?, r.get::<_, i64>(1)? as u64, r.get(2)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(osrt_stats(&damaged), sql);
    assert_eq!(sql, [("read".to_string(), 1, 11_990_000)]);
}

/// Calls and samples before `ANALYSIS_DETAILS.startTime` but inside the
/// session (CUDA initialisation before the analysis window opens, the
/// first samples) are real: kept in every figure, never said to be
/// impossible.
#[test]
fn rows_before_the_analysis_window_but_inside_the_session_are_real() {
    let dir = temp_dir("suspect_before_window");
    let f = copy(&root().join("fixtures/why.sqlite"), &dir, "why.sqlite");
    let c = Connection::open(&f).unwrap();
    let first_kernel: i64 = c
        .query_row(
            "SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let (calls, before): (i64, i64) = c
        .query_row(
            &format!(
                "SELECT count(*), total(end < {first_kernel}) FROM CUPTI_ACTIVITY_KIND_RUNTIME"
            ),
            [],
            |r| Ok((r.get(0)?, r.get::<_, f64>(1)? as i64)),
        )
        .unwrap();
    assert!(before > 0, "the fixture has calls before its first kernel");
    // The analysis window opens at the first kernel, as nsys records it
    // when the application's CUDA setup came first.
    c.execute_batch(&format!(
        "CREATE TABLE ANALYSIS_DETAILS (globalVid INTEGER NOT NULL, duration INTEGER NOT NULL,
           startTime INTEGER NOT NULL, stopTime INTEGER NOT NULL);
         INSERT INTO ANALYSIS_DETAILS VALUES (0, {} - {first_kernel}, {first_kernel}, {});",
        WHY_WINDOW.1, WHY_WINDOW.1
    ))
    .unwrap();
    drop(c);
    let files = vec![f];
    let s = run("summary", &files);
    let file = &s["files"][0];
    let total = |v: &Value| {
        v.as_object()
            .unwrap()
            .values()
            .map(|x| x.as_u64().unwrap())
            .sum::<u64>()
    };
    assert_eq!(total(&file["suspect_events"]), 0, "{file}");
    let loaded: i64 = s["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["runtime_calls"].as_i64().unwrap())
        .sum();
    assert_eq!(loaded, calls);
    let text = text_on(&["report", "summary", "--no-cache"], &files);
    assert!(!text.contains("cannot be right"), "{text}");
}

/// A real export whose CPU samples, scheduling events and an OS runtime
/// call precede its analysis window: nothing is said to be impossible.
#[cfg_attr(no_real_profiles, ignore = "../shared/real-profiles is absent")]
#[test]
fn a_real_exports_early_samples_are_real() {
    let f = real_profiles().join("nsys2023_2_cutlass_osrt.sqlite");
    let files = vec![f];
    let text = text_on(&["report", "summary", "--no-cache"], &files);
    assert!(!text.contains("cannot be right"), "{text}");
}
