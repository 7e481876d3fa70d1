//! The multi-node jobs of `fixtures/jobs/` (issue 43) hold together as SQL reads their files:
//! every file's timestamps map back to true time by its truth's offset and drift (to 1 ns),
//! its session tables say what the truth says, each file holds its host's ranks, the
//! communicators span nodes as the layout says (none spans every node in nodes_pp_dp), a
//! node-level stall holds up every rank of its node at once, and the clock faults are exactly
//! what their truth says.

mod common;

use std::collections::{BTreeSet, HashMap};

use common::jobs::Job;
use rusqlite::Connection;
use serde_json::Value;

/// The jobs of several files, each of the five scenarios among them.
fn jobs() -> Vec<Job> {
    let out: Vec<Job> = common::jobs::jobs()
        .into_iter()
        .filter(|j| j.t["files"].is_array())
        .collect();
    let names: Vec<&str> = out.iter().map(|j| j.name.as_str()).collect();
    for want in [
        "nodes_3d",
        "nodes_3d_payloads",
        "nodes_3d_ranks",
        "nodes_3d_ranks_payloads",
        "nodes_pp_dp",
        "nodes_pp_dp_payloads",
        "scaled_rank",
        "boot43",
    ] {
        assert!(names.contains(&want), "{want} not among {names:?}");
    }
    out
}

fn u(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn arr(v: &Value) -> &Vec<Value> {
    v.as_array().unwrap_or_else(|| panic!("not an array: {v}"))
}

/// `t_file + offset + (t_file − anchor)·((1 + drift·10⁻⁶)/scale − 1)`: the truth's mapping of
/// file `file`'s timestamp onto true time (`offset_ns_to_true`) or the reference's.
fn map(file: &Value, offset: &str, t_file: i64) -> f64 {
    let k = (1.0 + f(&file["drift_ppm"]) * 1e-6) / f(&file["scale"]);
    let since = (t_file - u(&file["anchor_file_ns"])) as f64;
    (t_file + u(&file[offset])) as f64 + since * (k - 1.0)
}

fn one_i64(db: &Connection, sql: &str) -> i64 {
    db.query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn file_timestamps_map_back_to_true_time_within_a_nanosecond() {
    for Job { name, t, .. } in jobs() {
        let files = arr(&t["files"]);
        let reference = &files[0];
        assert_eq!(t["reference"], reference["path"], "{name}");
        assert_eq!(u(&reference["offset_ns_to_reference"]), 0, "{name}");
        // the reference file's timestamp is true time minus this
        let ref_off = u(&reference["offset_ns_to_true"]);
        let mut checked = 0;
        for i in arr(&t["instances"]) {
            for m in arr(&i["members"]) {
                let file = &files[u(&t["ranks"][u(&m["rank"]) as usize]["file"]) as usize];
                for (at, truth) in [("file_start", "start"), ("file_end", "end")] {
                    let (tf, tt) = (u(&m[at]), u(&m[truth]));
                    let to_true = map(file, "offset_ns_to_true", tf) - tt as f64;
                    let to_ref = map(file, "offset_ns_to_reference", tf) - (tt - ref_off) as f64;
                    assert!(
                        to_true.abs() <= 1.0 && to_ref.abs() <= 1.0,
                        "{name}: {} {at} {tf} → {to_true} ns from true, {to_ref} from the reference",
                        file["path"]
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 1000, "{name}: {checked}");
    }
}

#[test]
fn a_hosts_boot_clock_maps_onto_the_reference_as_its_files_do() {
    for Job { name, t, .. } in jobs() {
        let files = arr(&t["files"]);
        for h in arr(&t["hosts"]) {
            let (boot, off, drift) = (
                u(&h["boot_ns"]),
                u(&h["offset_ns_to_reference"]),
                f(&h["drift_ppm"]),
            );
            for file in files.iter().filter(|x| x["host"] == h["host"]) {
                assert_eq!(file["drift_ppm"], h["drift_ppm"], "{name}");
                assert_eq!(file["utc_error_ns"], h["utc_error_ns"], "{name}");
                assert_eq!(file["timebase"], h["timebase"], "{name}");
                if file["scale"] != 1.0 {
                    continue;
                }
                // a boot-clock file's timestamps are the boot clock; a session-relative one's
                // are the boot clock less its reading at the capture start (systemClockNs)
                let sys = u(&file["system_clock_ns"]);
                let base = if file["timebase"] == "boot-clock" {
                    assert_eq!(u(&file["anchor_file_ns"]), sys, "{name}");
                    0
                } else {
                    assert_eq!(u(&file["anchor_file_ns"]), 0, "{name}");
                    sys
                };
                for tf in [0, 5_000_000_000, 12_000_000_000].map(|x| x + u(&file["anchor_file_ns"]))
                {
                    let tb = base + tf;
                    let by_host = (tb + off) as f64 + drift * 1e-6 * (tb - boot) as f64;
                    let by_file = map(file, "offset_ns_to_reference", tf);
                    // two roundings: the host's reading at this file's start, and the file's
                    assert!(
                        (by_host - by_file).abs() <= 1.5,
                        "{name}: {} at {tf}: host {by_host}, file {by_file}",
                        file["path"]
                    );
                }
            }
        }
    }
}

#[test]
fn session_tables_say_what_the_truth_says() {
    for Job { name, t, dbs } in jobs() {
        let mut true_utc_of_zero = BTreeSet::new();
        for (file, db) in arr(&t["files"]).iter().zip(&dbs) {
            let path = file["path"].as_str().unwrap();
            let (utc, sys): (i64, i64) = db
                .query_row(
                    "SELECT utcEpochNs, systemClockNs FROM TARGET_INFO_SESSION_START_TIME",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .unwrap();
            assert_eq!(utc, u(&file["utc_epoch_ns"]), "{name}: {path}");
            assert_eq!(sys, u(&file["system_clock_ns"]), "{name}: {path}");
            // one true UTC for all: each stamp is off by its host's error only
            true_utc_of_zero.insert(utc - u(&file["utc_error_ns"]) - u(&file["session_true_ns"]));
            let (start, stop): (i64, i64) = db
                .query_row(
                    "SELECT startTime, stopTime FROM ANALYSIS_DETAILS",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .unwrap();
            let (from, to) = (u(&file["anchor_file_ns"]), u(&file["stop_file_ns"]));
            if file["timebase"] == "boot-clock" {
                assert_eq!(
                    (start, stop),
                    (from, to),
                    "{name}: {path} brackets its events"
                );
            } else {
                assert_eq!(
                    (start, stop),
                    (sys, sys + to),
                    "{name}: {path} on the boot clock"
                );
            }
            for table in [
                "CUPTI_ACTIVITY_KIND_KERNEL",
                "CUPTI_ACTIVITY_KIND_RUNTIME",
                "CUPTI_ACTIVITY_KIND_MEMCPY",
                "NVTX_EVENTS",
            ] {
                let (lo, hi) = (
                    one_i64(db, &format!("SELECT min(start) FROM {table}")),
                    one_i64(
                        db,
                        &format!("SELECT max(coalesce(end, start)) FROM {table}"),
                    ),
                );
                assert!(
                    from < lo && hi < to,
                    "{name}: {path} {table} outside its capture"
                );
            }
        }
        assert_eq!(true_utc_of_zero.len(), 1, "{name}: {true_utc_of_zero:?}");
    }
}

#[test]
fn captures_are_long_enough_for_drift_to_matter() {
    for Job { name, t, .. } in jobs() {
        for file in arr(&t["files"]) {
            let span = u(&file["stop_true_ns"]) - u(&file["session_true_ns"]);
            // two steps 5 s apart at least: a few ppm move ends by tens of µs
            assert!(span >= 5_000_000_000, "{name}: {} {span} ns", file["path"]);
        }
        let hosts = arr(&t["hosts"]);
        let faulty: Vec<&Value> = arr(&t["faults"])
            .iter()
            .filter(|x| x["kind"] == "boot43")
            .map(|x| &x["host"])
            .collect();
        for (n, h) in hosts.iter().enumerate() {
            let drift = f(&h["drift_ppm"]).abs();
            assert!(
                (n == 0 && drift == 0.0) || (2.0..=5.0).contains(&drift),
                "{name}: {h}"
            );
            let utc = u(&h["utc_error_ns"]).abs();
            assert!((2_000_000..=9_000_000).contains(&utc), "{name}: {h}");
            if faulty.contains(&&h["host"]) {
                continue;
            }
            // booted hours apart
            for other in &hosts[..n] {
                let apart = (u(&h["boot_ns"]) - u(&other["boot_ns"])).abs();
                assert!(apart >= 3_600_000_000_000, "{name}: {h} vs {other}");
            }
        }
    }
}

#[test]
fn each_file_holds_its_hosts_ranks() {
    for Job { name, t, dbs } in jobs() {
        let ranks = arr(&t["ranks"]);
        let gpn = u(&t["layout"]["gpus_per_node"]);
        for (fi, (file, db)) in arr(&t["files"]).iter().zip(&dbs).enumerate() {
            let path = file["path"].as_str().unwrap();
            let mine: Vec<&Value> = ranks
                .iter()
                .filter(|r| u(&r["file"]) == fi as i64)
                .collect();
            let want: Vec<i64> = mine.iter().map(|r| u(&r["rank"])).collect();
            assert_eq!(want, arr(&file["ranks"]).iter().map(u).collect::<Vec<_>>());
            let mut st = db
                .prepare("SELECT pid FROM PROCESSES ORDER BY pid")
                .unwrap();
            let pids: Vec<i64> = st
                .query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let mut expect: Vec<i64> = mine.iter().map(|r| u(&r["pid"])).collect();
            expect.sort();
            assert_eq!(pids, expect, "{name}: {path}");
            let host: String = db
                .query_row(
                    "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(host, file["host"].as_str().unwrap(), "{name}: {path}");
            // every GPU of the host is listed; each rank's kernels on its index on the node
            assert_eq!(one_i64(db, "SELECT count(*) FROM TARGET_INFO_GPU"), gpn);
            for r in &mine {
                let sql = format!(
                    "SELECT count(DISTINCT deviceId), min(deviceId) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid / 16777216 % 16777216 = {}",
                    u(&r["pid"])
                );
                let (n, d): (i64, i64) = db
                    .query_row(&sql, [], |x| Ok((x.get(0)?, x.get(1)?)))
                    .unwrap();
                assert_eq!((n, d), (1, u(&r["rank"]) % gpn), "{name}: {path}");
                assert_eq!(r["device"], d, "{name}");
            }
            if file["timebase"] == "session-relative" {
                let env: String = db
                    .query_row(
                        "SELECT value FROM META_DATA_CAPTURE WHERE value LIKE 'RANK=%'",
                        [],
                        |r| r.get(0),
                    )
                    .unwrap();
                assert_eq!(env, format!("RANK=\"{}\"", want[0]), "{name}: {path}");
            }
        }
    }
}

/// The nodes each communicator's ranks run on.
fn comm_nodes(t: &Value) -> Vec<(String, BTreeSet<i64>)> {
    let ranks = arr(&t["ranks"]);
    arr(&t["communicators"])
        .iter()
        .map(|c| {
            let nodes = arr(&c["ranks"])
                .iter()
                .map(|r| u(&ranks[u(r) as usize]["node"]))
                .collect();
            (c["name"].as_str().unwrap().to_string(), nodes)
        })
        .collect()
}

#[test]
fn communicators_span_nodes_as_the_layout_says() {
    for Job { name, t, .. } in jobs() {
        let nodes = u(&t["layout"]["nodes"]);
        let all: BTreeSet<i64> = (0..nodes).collect();
        let comms = comm_nodes(&t);
        for (c, on) in &comms {
            // tensor parallelism within a node, the others across
            let within = c.starts_with("tp/");
            assert_eq!(on.len() == 1, within, "{name}: {c} on {on:?}");
        }
        let spanning: Vec<&String> = comms.iter().filter(|c| c.1 == all).map(|c| &c.0).collect();
        if name.starts_with("nodes_pp_dp") {
            assert!(spanning.is_empty(), "{name}: {spanning:?} span every node");
            // node 3 shares no communicator with node 0, but is reached through the others
            assert!(
                comms
                    .iter()
                    .all(|c| !(c.1.contains(&0) && c.1.contains(&3)))
            );
            let mut reached = BTreeSet::from([0]);
            for _ in 0..nodes {
                for (_, on) in &comms {
                    if !on.is_disjoint(&reached) {
                        reached.extend(on);
                    }
                }
            }
            assert_eq!(reached, all, "{name}");
        } else {
            assert_eq!(spanning, ["world/0"], "{name}");
        }
    }
}

#[test]
fn a_node_level_stall_holds_up_every_rank_of_its_node_at_once() {
    for Job { name, t, dbs } in jobs() {
        let events = arr(&t["node_events"]);
        if !name.starts_with("nodes_3d")
            && !name.starts_with("nodes_pp4")
            && name != "nodes_tp2"
            && !["scaled_rank", "boot43", "boot43_nodes"].contains(&name.as_str())
        {
            assert!(events.is_empty(), "{name}");
            continue;
        }
        assert_eq!(events.len(), 1, "{name}");
        let e = &events[0];
        let ranks = arr(&t["ranks"]);
        let on_node: Vec<i64> = ranks
            .iter()
            .filter(|r| r["node"] == e["node"])
            .map(|r| u(&r["rank"]))
            .collect();
        assert_eq!(arr(&e["ranks"]).iter().map(u).collect::<Vec<_>>(), on_node);
        let stalls = arr(&e["stalls"]);
        let starts: Vec<i64> = stalls.iter().map(|s| u(&s["start"])).collect();
        let (lo, hi) = (starts.iter().min().unwrap(), starts.iter().max().unwrap());
        assert!(hi - lo < 1_000_000, "{name}: stalls {starts:?} not at once");
        assert_eq!(*lo, u(&e["start_ns"]), "{name}");
        let ms = f(&e["ms"]);
        for s in stalls {
            assert_eq!(u(&s["end"]) - u(&s["start"]), (ms * 1e6) as i64, "{name}");
            // the wait is in the rank's file, on its clock
            let r = &ranks[u(&s["rank"]) as usize];
            let fi = u(&r["file"]) as usize;
            let file = &arr(&t["files"])[fi];
            let sql = format!(
                "SELECT o.start FROM OSRT_API o WHERE o.globalTid / 16777216 % 16777216 = {}",
                u(&r["pid"])
            );
            let mut st = dbs[fi].prepare(&sql).unwrap();
            let found = st
                .query_map([], |x| x.get::<_, i64>(0))
                .unwrap()
                .map(Result::unwrap)
                .any(|at| {
                    (map(file, "offset_ns_to_true", at) - u(&s["start"]) as f64).abs() <= 1.0
                });
            assert!(found, "{name}: rank {} has no wait at its stall", r["rank"]);
        }
        // every rank of the node is the late one of an instance it made late by most of it
        let made = arr(&e["instances"]);
        for r in &on_node {
            assert!(
                made.iter()
                    .any(|m| u(&m["late_rank"]) == *r && f(&m["by_ns"]) >= 0.5 * ms * 1e6),
                "{name}: rank {r} not made late"
            );
        }
    }
}

/// A whole job of its own (no base): the faulty host's file boots under a
/// minute before its capture, and its ANALYSIS_DETAILS window overlaps
/// its events read on the boot clock and read from the session start.
fn a_window_that_cannot_decide(name: &str, x: &Value, dbs: &[Connection]) {
    assert_eq!(arr(&x["files"]).len(), 1, "{name}");
    let db = &dbs[u(&x["node"]) as usize];
    let sys = one_i64(
        db,
        "SELECT systemClockNs FROM TARGET_INFO_SESSION_START_TIME",
    );
    assert!(
        sys < 60_000_000_000 && sys == u(&x["boot_ns"]),
        "{name}: {sys}"
    );
    let (a, b) = (
        one_i64(db, "SELECT startTime FROM ANALYSIS_DETAILS"),
        one_i64(db, "SELECT stopTime FROM ANALYSIS_DETAILS"),
    );
    let lo = one_i64(db, "SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL");
    let hi = one_i64(db, "SELECT max(end) FROM CUPTI_ACTIVITY_KIND_KERNEL");
    for (s, e) in [(a, b), (a - sys, b - sys)] {
        assert!(
            s <= hi && lo <= e,
            "{name}: window {s}..{e} misses {lo}..{hi}"
        );
    }
}

/// (deviceId, streamId, start, end) of every kernel of `db`, in order.
fn kernels(db: &Connection) -> Vec<(i64, i64, i64, i64)> {
    let mut st = db
        .prepare(
            "SELECT deviceId, streamId, start, end FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY rowid",
        )
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn clock_faults_are_what_their_truth_says() {
    let all = jobs();
    let base = all.iter().find(|j| j.name == "nodes_3d_ranks").unwrap();
    for Job { name, t, dbs } in &all {
        let faults = arr(&t["faults"]);
        if !["scaled_rank", "boot43", "boot43_nodes"].contains(&name.as_str()) {
            assert!(faults.is_empty(), "{name}");
            continue;
        }
        assert_eq!(faults.len(), 1, "{name}");
        let x = &faults[0];
        if name == "boot43_nodes" {
            a_window_that_cannot_decide(name, x, dbs);
            continue;
        }
        let files = arr(&t["files"]);
        let ours: HashMap<&str, usize> = files
            .iter()
            .enumerate()
            .map(|(i, f)| (f["path"].as_str().unwrap(), i))
            .collect();
        // the same run as the base job: a file no fault touches is the base's own
        let touched: Vec<&str> = match x["kind"].as_str().unwrap() {
            "scaled" => vec![x["file"].as_str().unwrap()],
            "boot43" => arr(&x["files"])
                .iter()
                .map(|p| p.as_str().unwrap())
                .collect(),
            other => panic!("{name}: fault {other}"),
        };
        for (i, file) in files.iter().enumerate() {
            let path = file["path"].as_str().unwrap();
            assert_eq!(
                path.starts_with(&format!("fixtures/jobs/{name}/")),
                touched.contains(&path),
                "{name}: {path}"
            );
            assert_eq!(base.t["files"][i]["ranks"], file["ranks"], "{name}");
            let (a, b) = (kernels(&dbs[i]), kernels(&base.dbs[i]));
            assert_eq!(a.len(), b.len(), "{name}: {path}");
            let sys = one_i64(
                &dbs[i],
                "SELECT systemClockNs FROM TARGET_INFO_SESSION_START_TIME",
            );
            match (touched.contains(&path), x["kind"].as_str().unwrap()) {
                (false, _) => assert_eq!(a, b, "{name}: {path}"),
                (true, "scaled") => {
                    // timestamps from the capture start (0) times the factor
                    let k = f(&x["factor"]);
                    assert_eq!(k, 1.5);
                    for (p, q) in a.iter().zip(&b) {
                        for (s, r) in [(p.2, q.2), (p.3, q.3)] {
                            assert!((s as f64 - k * r as f64).abs() <= 1.0, "{name}: {s} vs {r}");
                        }
                    }
                }
                (true, _) => {
                    // the events are the base's; only the boot reading is under a minute
                    assert_eq!(a, b, "{name}: {path}");
                    assert!(
                        sys < 60_000_000_000,
                        "{name}: {path} booted {sys} ns before"
                    );
                    let was = one_i64(
                        &base.dbs[i],
                        "SELECT systemClockNs FROM TARGET_INFO_SESSION_START_TIME",
                    );
                    assert!(was > 3_600_000_000_000, "{name}");
                }
            }
        }
        assert!(touched.iter().all(|p| ours.contains_key(p)), "{name}");
    }
}
