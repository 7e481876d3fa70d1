//! Figures whose meaning must be what they say: skew caveats in JSON, the
//! definitions of the step offset and mean lateness, and launch → start
//! times kept signed.

mod common;

use common::*;
use rusqlite::Connection;
use serde_json::Value;
use std::path::Path;

/// Text with runs of whitespace as one space: notes wrap at 100 columns.
fn flat(t: &str) -> String {
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn notes(g: &Value) -> Vec<String> {
    let notes: Vec<String> = g["notes"]
        .as_array()
        .unwrap_or_else(|| panic!("no notes: {g}"))
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect();
    // `note` stays for compatibility: the first caveat, or null.
    assert_eq!(
        g["note"],
        notes.first().map_or(Value::Null, |n| n.as_str().into())
    );
    notes
}

/// A copy of a fixture under target/, to be altered.
fn altered_copy(test: &str, fixture: &str) -> (std::path::PathBuf, Connection) {
    let path = temp_dir(test).join(Path::new(fixture).file_name().unwrap());
    std::fs::copy(root().join(fixture), &path).unwrap();
    let c = Connection::open(&path).unwrap();
    (path, c)
}

#[test]
fn a_group_across_hosts_carries_the_clock_caveat_in_json() {
    let args = [
        "report",
        "skew",
        "fixtures/two_node_a.sqlite",
        "fixtures/two_node_b.sqlite",
    ];
    let v = json(&[&args[..], &["--format", "json"]].concat());
    let g = &v["groups"][0];
    assert_eq!(g["devices"].as_array().unwrap().len(), 4);
    let n = notes(g);
    assert!(
        n.iter().any(|n| n.contains("2 hosts (node-a, node-b)")
            && n.contains("clocks aligned by collective ends (residual p90 ")),
        "{n:?}"
    );
    let t = text(&args);
    assert!(
        t.contains(
            "  ! s20: devices on 2 hosts (node-a, node-b), clocks aligned by collective ends"
        ),
        "{t}"
    );
}

#[test]
fn groups_split_off_a_shared_stream_id_say_so_first() {
    let v = json(&[
        "report",
        "skew",
        "fixtures/shared_stream_two_comms.sqlite",
        "--format",
        "json",
    ]);
    let groups = v["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    for g in groups {
        let n = notes(g);
        assert!(
            n[0].starts_with("one of 2 communicators on s20, told apart by their ends"),
            "{n:?}"
        );
        // One host, every rank recorded: nothing else applies.
        assert_eq!(n.len(), 1, "{n:?}");
    }
}

/// A group with several caveats lists them all, and `note` holds the first.
#[test]
fn every_caveat_that_applies_is_listed() {
    let (path, c) = altered_copy("figures_caveats", "fixtures/megatron_tp8.sqlite");
    // One NCCL kernel fewer on device 3's stream 20: its sequence departs.
    let n = c
        .execute(
            "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid = (
               SELECT k.rowid FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName
               WHERE k.deviceId = 3 AND k.streamId = 20 AND s.value LIKE 'ncclDevKernel%'
               ORDER BY k.start LIMIT 1 OFFSET 30)",
            [],
        )
        .unwrap();
    assert_eq!(n, 1);
    drop(c);
    let path = path.to_str().unwrap();
    let v = json(&["report", "skew", path, "--format", "json", "--no-cache"]);
    let g = &v["groups"][0];
    assert_eq!(g["key"], "s20");
    assert_eq!(g["sequence_consistent"], false);
    let n = notes(g);
    assert!(n.len() >= 2, "{n:?}");
    // The 31st is gone: there device 3 ran the next op, the others AllGather.
    assert!(
        n[0].starts_with("desync at instance 31: AllGather on 1 2 4 5 6 7, ReduceScatter on 3"),
        "{n:?}"
    );
    assert!(
        n.iter()
            .any(|n| n.starts_with("device 0 had a CUDA context but recorded no GPU activity")),
        "{n:?}"
    );
    // Untouched groups carry the missing device too.
    for g in v["groups"].as_array().unwrap() {
        assert!(notes(g).iter().any(|n| n.starts_with("device 0 ")), "{g}");
    }
    // Text names the missing device once, not per group.
    let t = text(&["report", "skew", path, "--no-cache"]);
    assert_eq!(t.matches("device 0 had a CUDA context").count(), 0, "{t}");
    assert!(
        flat(&t).contains("counts cover only the recorded devices: D0 had a CUDA context"),
        "{t}"
    );
    assert!(t.contains("  ! s20: desync at instance 31: "), "{t}");
}

/// A group with no caveat has an empty list and a null `note`.
#[test]
fn a_group_without_caveats_has_none() {
    let v = json(&[
        "report",
        "skew",
        "fixtures/stream_ids_differ.sqlite",
        "--format",
        "json",
    ]);
    for g in v["groups"].as_array().unwrap() {
        assert_eq!(notes(g), Vec::<String>::new(), "{g}");
        assert_eq!(g["note"], Value::Null);
    }
}

/// The NCCL kernels of stream 20 per device 1..7 of megatron_tp8, in start
/// order: (start, correlationId, pid).
fn stream20(c: &Connection) -> Vec<Vec<(i64, i64, i64)>> {
    (1..=7)
        .map(|dev| {
            let mut st = c
                .prepare(
                    "SELECT k.start, k.correlationId, (k.globalPid >> 24) & 16777215
                     FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName
                     WHERE k.deviceId = ?1 AND k.streamId = 20 AND s.value LIKE 'ncclDevKernel%'
                     ORDER BY k.start",
                )
                .unwrap();
            st.query_map([dev], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        })
        .collect()
}

/// `offset_in_step_ms` and `mean_lateness_ms_excluding_big`, computed by
/// hand from the file as the README defines them.
#[test]
fn step_offset_and_mean_lateness_are_what_the_readme_says() {
    let c = Connection::open_with_flags(
        root().join("fixtures/megatron_tp8.sqlite"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let ranks = stream20(&c);
    let n = ranks[0].len();
    assert!(ranks.iter().all(|r| r.len() == n));
    let big_ns = 20_000_000;
    let mut lateness_sum = [0i64; 7];
    let mut small = 0;
    let mut offsets = Vec::new();
    for k in 0..n {
        let starts: Vec<i64> = ranks.iter().map(|r| r[k].0).collect();
        let earliest = *starts.iter().min().unwrap();
        let latest = *starts.iter().max().unwrap();
        if latest - earliest > big_ns {
            // Late rank: latest start, lowest device on ties.
            let late = starts.iter().position(|&s| s == latest).unwrap();
            let (_, corr, pid) = ranks[late][k];
            let call_start: i64 = c
                .query_row(
                    "SELECT start FROM CUPTI_ACTIVITY_KIND_RUNTIME
                     WHERE correlationId = ?1 AND (globalTid >> 24) & 16777215 = ?2",
                    (corr, pid),
                    |r| r.get(0),
                )
                .unwrap();
            let step_start: i64 = c
                .query_row(
                    "SELECT n.start FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId
                     WHERE coalesce(n.text, s.value) = 'train_step' AND (n.globalTid >> 24) & 16777215 = ?1
                       AND n.start <= ?2 AND ?2 <= n.end",
                    (pid, call_start),
                    |r| r.get(0),
                )
                .unwrap();
            offsets.push((earliest - step_start) as f64 / 1e6);
        } else {
            small += 1;
            for (d, s) in starts.iter().enumerate() {
                lateness_sum[d] += s - earliest;
            }
        }
    }
    let v = json(&[
        "report",
        "skew",
        "fixtures/megatron_tp8.sqlite",
        "--format",
        "json",
    ]);
    let g = &v["groups"][0];
    assert_eq!(g["key"], "s20");
    let got: Vec<f64> = g["big_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["offset_in_step_ms"].as_f64().unwrap())
        .collect();
    assert_eq!(got.len(), 4);
    assert_eq!(got.len(), offsets.len());
    for (a, b) in got.iter().zip(&offsets) {
        assert!((a - b).abs() < 1e-9, "{got:?} vs {offsets:?}");
    }
    for (d, sum) in lateness_sum.iter().enumerate() {
        let want = *sum as f64 / small as f64 / 1e6;
        let got = g["mean_lateness_ms_excluding_big"][(d + 1).to_string()]
            .as_f64()
            .unwrap();
        assert!(
            (got - want).abs() < 1e-9,
            "device {}: {got} vs {want}",
            d + 1
        );
    }
    let t = text(&["report", "skew", "fixtures/megatron_tp8.sqlite"]);
    let t = flat(&t);
    assert!(
        t.contains(
            "offset_in_step_ms = the instance's earliest start − the start of the late rank's step"
        ),
        "{t}"
    );
    assert!(
        t.contains("mean_late_ms: start − the instance's earliest start, 0 when first, averaged over the instances that are not big events"),
        "{t}"
    );
}

/// With every instance a big event there is no mean to take: null, not 0.
#[test]
fn mean_lateness_is_null_when_every_instance_is_big() {
    let v = json(&[
        "report",
        "skew",
        "fixtures/megatron_tp8.sqlite",
        "--format",
        "json",
        "--big-skew-ms",
        "0",
    ]);
    let g = &v["groups"][0];
    assert_eq!(
        g["big_events"].as_array().unwrap().len() as i64,
        g["instances"].as_i64().unwrap()
    );
    for (_, m) in g["mean_lateness_ms_excluding_big"].as_object().unwrap() {
        assert_eq!(m, &Value::Null);
    }
}

/// A kernel that starts before its launch call returns keeps its negative
/// launch → start time in JSON, and text says what it means.
#[test]
fn negative_launch_to_start_keeps_its_sign() {
    let plain = json(&[
        "report",
        "all",
        "fixtures/megatron_tp8.sqlite",
        "--format",
        "json",
    ]);
    for d in plain["launch"]["devices"].as_array().unwrap() {
        assert_eq!(d["started_before_launch_returned"], 0, "{d}");
    }
    // The late kernel of the first big event (instance 55, late device 2).
    let late = &plain["launch"]["late_instances"][0];
    assert_eq!(late["instance"], 55);
    assert_eq!(late["device"], 2);
    let big = &plain["skew"]["groups"][0]["big_events"][0];
    let late_start = big["start_ns"].as_i64().unwrap()
        + (big["start_skew_ms"].as_f64().unwrap() * 1e6).round() as i64;
    let (path, c) = altered_copy("figures_negative_launch", "fixtures/megatron_tp8.sqlite");
    let (corr, pid): (i64, i64) = c
        .query_row(
            "SELECT correlationId, (globalPid >> 24) & 16777215 FROM CUPTI_ACTIVITY_KIND_KERNEL
             WHERE deviceId = 2 AND start = ?1",
            [late_start],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    // The launch call now returns 2 µs after the kernel started.
    let n = c
        .execute(
            "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = ?1
             WHERE correlationId = ?2 AND (globalTid >> 24) & 16777215 = ?3",
            (late_start + 2_000, corr, pid),
        )
        .unwrap();
    assert_eq!(n, 1);
    drop(c);
    let path = path.to_str().unwrap();
    let v = json(&["report", "launch", path, "--format", "json", "--no-cache"]);
    let x = &v["late_instances"][0];
    assert_eq!(x["instance"], 55);
    assert_eq!(x["api_end_to_start_ms"].as_f64().unwrap(), -0.002);
    let d2 = v["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["device"] == 2)
        .unwrap();
    assert_eq!(d2["started_before_launch_returned"], 1);
    assert_eq!(
        d2["most_before_launch_returned_ms"].as_f64().unwrap(),
        0.002
    );
    let t = text(&["report", "launch", path, "--no-cache"]);
    assert!(
        t.contains("  ! s20 instance 55: kernel started 2.0 µs before its launch call returned (clock granularity)"),
        "{t}"
    );
    assert!(
        t.contains("  ! device 2: 1 kernel started up to 2.0 µs before its launch call returned (clock granularity)"),
        "{t}"
    );
}
