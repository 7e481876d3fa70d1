//! Issue 20's reproduction: one rank of `fixtures/per_rank/` captured from
//! its fourth collective on (every row of it that started before its third
//! NCCL kernel ended deleted, as a capture of that process started three
//! collectives later would record: its compute is missing too). The rank is
//! placed at instance 4, the other instances stay paired over the ranks
//! that have them with the original's skews, and its clock is aligned from
//! the instances it has, within the full capture's residual.

mod common;

use common::*;
use rusqlite::Connection;
use serde_json::Value;

/// The per-rank fixture with rank 1's capture starting where its `n`th NCCL
/// kernel ends: its GPU rows and runtime calls that started before are
/// deleted.
fn late_start(test: &str, n: usize) -> Vec<String> {
    let dir = temp_dir(test);
    let mut paths = Vec::new();
    for f in sqlite_files(&root().join("fixtures/per_rank")) {
        let to = dir.join(f.file_name().unwrap());
        std::fs::copy(&f, &to).unwrap();
        paths.push(to.display().to_string());
    }
    let c = Connection::open(dir.join("rank1.sqlite")).unwrap();
    let from: i64 = c
        .query_row(
            "SELECT k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName
             WHERE s.value LIKE 'nccl%' ORDER BY k.start LIMIT 1 OFFSET ?1",
            [n as i64 - 1],
            |r| r.get(0),
        )
        .unwrap();
    for table in [
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET",
        "CUPTI_ACTIVITY_KIND_RUNTIME",
    ] {
        c.execute(&format!("DELETE FROM {table} WHERE start <= ?1"), [from])
            .unwrap();
    }
    let nccl_left: i64 = c
        .query_row(
            "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName
             WHERE s.value LIKE 'nccl%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        nccl_left,
        33 - n as i64,
        "only the first {n} collectives are cut"
    );
    paths
}

fn skew(paths: &[String]) -> Value {
    let mut args = vec![
        "report",
        "skew",
        "--format",
        "json",
        "--instances",
        "--no-cache",
    ];
    args.extend(paths.iter().map(String::as_str));
    json(&args)["groups"][0].clone()
}

fn clock(paths: &[String]) -> Value {
    let mut args = vec!["report", "clock", "--format", "json", "--no-cache"];
    args.extend(paths.iter().map(String::as_str));
    json(&args)
}

fn original() -> Vec<String> {
    sqlite_files(&root().join("fixtures/per_rank"))
        .iter()
        .map(|p| p.display().to_string())
        .collect()
}

#[test]
fn a_rank_starting_three_collectives_late_is_placed_at_instance_four() {
    let paths = late_start("late_start_place", 3);
    let g = skew(&paths);
    assert_eq!(g["desync"], Value::Null, "{}", g["notes"]);
    assert_eq!(g["instances"], 33);
    let rank1 = &g["captured"][1];
    assert_eq!(rank1["device"], "gpu07.hpc.example:1");
    assert_eq!(
        (rank1["first"].as_u64(), rank1["last"].as_u64()),
        (Some(4), Some(33))
    );
    assert_eq!(rank1["confirmed"], true);
    for (i, c) in g["captured"].as_array().unwrap().iter().enumerate() {
        if i != 1 {
            assert_eq!(
                (c["first"].as_u64(), c["last"].as_u64()),
                (Some(1), Some(33))
            );
        }
    }
    // The text says it as the issue asks.
    let mut args = vec!["report", "skew", "--no-cache"];
    args.extend(paths.iter().map(String::as_str));
    let t = text(&args);
    assert!(
        t.contains("gpu07:1 r1: first captured instance 4, last 33"),
        "{t}"
    );
}

#[test]
fn instances_are_paired_over_the_ranks_that_have_them() {
    let before = skew(&original());
    let after = skew(&late_start("late_start_skew", 3));
    let (b, a) = (
        before["instance_list"].as_array().unwrap(),
        after["instance_list"].as_array().unwrap(),
    );
    assert_eq!(a.len(), b.len());
    for (k, (a, b)) in a.iter().zip(b).enumerate() {
        assert_eq!(a["op"], b["op"], "instance {}", k + 1);
        if k < 3 {
            // Three ranks of four: rank 1 is named missing.
            assert_eq!(a["ranks"], 3);
            assert_eq!(a["missing"], serde_json::json!(["gpu07.hpc.example:1"]));
        } else {
            // Every rank: the same figures as the full capture (on a clock
            // aligned from 30 instances instead of 33: within a µs).
            assert_eq!(a["ranks"], 4);
            for f in ["start_skew_ms", "end_skew_ms", "max_duration_ms"] {
                let d = (a[f].as_f64().unwrap() - b[f].as_f64().unwrap()).abs();
                assert!(d < 1e-3, "instance {} {f}: {a} vs {b}", k + 1);
            }
            assert_eq!(a["late_device"], b["late_device"], "instance {}", k + 1);
        }
    }
}

#[test]
fn the_late_rank_is_aligned_from_the_instances_it_has() {
    let before = clock(&original());
    let after = clock(&late_start("late_start_clock", 3));
    // Rank 1 shares rank 0's boot clock: its offset is exact whatever it
    // captured, and it is measured over the 30 instances it has.
    let (b, a) = (&before["files"][1], &after["files"][1]);
    assert_eq!(a["method"], "same-host");
    assert_eq!(a["host_clock"]["via"], "boot-clock");
    assert_eq!(a["offset_ms"], b["offset_ms"]);
    assert_eq!(a["instances_used"], 30);
    assert_eq!(b["instances_used"], 33);
    // The other host is fitted from every instance, as before (rank 0
    // has them all), within the full capture's residual.
    for f in [2, 3] {
        let (b, a) = (&before["files"][f], &after["files"][f]);
        assert_eq!(a["method"], "collective-ends");
        assert_eq!(a["instances_used"], 33);
        let residual = b["residual_end_skew_ms"]["p90"].as_f64().unwrap();
        let d = (a["offset_ms"].as_f64().unwrap() - b["offset_ms"].as_f64().unwrap()).abs();
        assert!(d <= residual, "offset moved {d} ms, residual {residual} ms");
    }
    assert_eq!(after["captured"][0]["first"], 4);
}
