//! The scenario engine's jobs (`fixtures/jobs/`) hold together: each truth file agrees with
//! its .sqlite as SQL reads it (every NCCL kernel one member of one instance, payloads naming
//! the kernel's communicator, graph kernels carrying their launch), and with itself (members
//! per communicator, one op per instance, ends within the stated spread, stream ids by the
//! policy, delays that make their instances late, siblings that really end together).

mod common;

use std::collections::{BTreeMap, HashMap};

use common::jobs::{Job, jobs};
use rusqlite::Connection;
use serde_json::Value;

/// A kernel as its file holds it: (file, device, stream, start, end).
type Key = (usize, i64, i64, i64, i64);

/// A member's kernel as its file holds it.
fn in_file(t: &Value, m: &Value) -> Key {
    let file = t["ranks"][u(&m["rank"]) as usize]["file"]
        .as_i64()
        .unwrap_or(0) as usize;
    let at = |k: &str| m[format!("file_{k}")].as_i64().unwrap_or_else(|| u(&m[k]));
    (
        file,
        u(&m["device"]),
        u(&m["stream"]),
        at("start"),
        at("end"),
    )
}

fn u(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn arr(v: &Value) -> &Vec<Value> {
    v.as_array().unwrap_or_else(|| panic!("not an array: {v}"))
}

/// Each group (communicator or exchange) by name: (kind, ranks, streams, instances).
fn groups(t: &Value) -> HashMap<String, (String, Vec<i64>, Vec<i64>, i64)> {
    let mut m = HashMap::new();
    for c in arr(&t["communicators"]) {
        let kind = c["kind"].as_str().unwrap().to_string();
        let ranks = arr(&c["ranks"]).iter().map(u).collect();
        let streams = arr(&c["streams"]).iter().map(u).collect();
        m.insert(
            c["name"].as_str().unwrap().into(),
            (kind, ranks, streams, u(&c["instances"])),
        );
    }
    for x in arr(&t["exchanges"]) {
        let ranks = arr(&x["ranks"]).iter().map(u).collect();
        let streams = arr(&x["streams"]).iter().map(u).collect();
        m.insert(
            x["name"].as_str().unwrap().into(),
            ("exchange".into(), ranks, streams, u(&x["instances"])),
        );
    }
    m
}

fn count(db: &Connection, sql: &str) -> i64 {
    db.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// The op of an NCCL kernel's short name: `ncclDevKernel_AllGather_RING_LL128` → AllGather.
fn op_of(short: &str) -> &str {
    let rest = short.strip_prefix("ncclDevKernel_").unwrap();
    rest.split('_').next().unwrap()
}

#[test]
fn every_nccl_kernel_is_one_member_of_one_instance() {
    for Job { name, t, dbs } in jobs() {
        // (file, device, stream, start, end) → the instance's op, for every member of the truth
        let mut members: HashMap<Key, Vec<String>> = HashMap::new();
        for i in arr(&t["instances"]) {
            for m in arr(&i["members"]) {
                members
                    .entry(in_file(&t, m))
                    .or_default()
                    .push(i["op"].as_str().unwrap().into());
            }
        }
        let mut kernels = 0;
        for (f, db) in dbs.iter().enumerate() {
            let mut st = db
                .prepare(
                    "SELECT k.deviceId, k.streamId, k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName WHERE s.value LIKE 'ncclDevKernel%'",
                )
                .unwrap();
            let rows: Vec<(Key, String)> = st
                .query_map([], |r| {
                    Ok(((f, r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?), r.get(4)?))
                })
                .unwrap()
                .map(Result::unwrap)
                .collect();
            kernels += rows.len();
            for (key, short) in rows {
                let ops = members
                    .get(&key)
                    .unwrap_or_else(|| panic!("{name}: kernel {key:?} in no instance"));
                assert_eq!(
                    ops.len(),
                    1,
                    "{name}: kernel {key:?} in {} instances",
                    ops.len()
                );
                assert_eq!(ops[0], op_of(&short), "{name}: kernel {key:?}");
            }
        }
        assert_eq!(
            kernels,
            members.values().map(Vec::len).sum::<usize>(),
            "{name}"
        );
    }
}

#[test]
fn instances_hold_together() {
    for Job { name, t, .. } in jobs() {
        let groups = groups(&t);
        let spread = u(&t["end_jitter_ns"]);
        let mut count: BTreeMap<String, i64> = BTreeMap::new();
        for i in arr(&t["instances"]) {
            let g = i["group"].as_str().unwrap();
            let (_, ranks, streams, _) = &groups[g];
            let n = count.entry(g.to_string()).or_insert(0);
            *n += 1;
            assert_eq!(u(&i["index"]), *n, "{name}: {g} numbered in order");
            let m = arr(&i["members"]);
            let got: Vec<i64> = m.iter().map(|m| u(&m["rank"])).collect();
            assert_eq!(&got, ranks, "{name}: {g} #{n} members");
            for (x, s) in m.iter().zip(streams) {
                assert_eq!(u(&x["stream"]), *s, "{name}: {g} #{n} stream");
            }
            let starts: Vec<i64> = m.iter().map(|m| u(&m["start"])).collect();
            let ends: Vec<i64> = m.iter().map(|m| u(&m["end"])).collect();
            let (lo, hi) = (ends.iter().min().unwrap(), ends.iter().max().unwrap());
            assert_eq!(u(&i["end_skew_ns"]), hi - lo, "{name}: {g} #{n}");
            assert!(
                hi - lo <= spread,
                "{name}: {g} #{n} ends {} ns apart",
                hi - lo
            );
            let latest = starts.iter().max().unwrap();
            assert_eq!(
                u(&i["start_skew_ns"]),
                latest - starts.iter().min().unwrap()
            );
            let late = m.iter().find(|m| u(&m["start"]) == *latest).unwrap();
            assert_eq!(i["late_rank"], late["rank"], "{name}: {g} #{n} late rank");
        }
        for (g, (kind, _, _, n)) in &groups {
            if kind != "pp" {
                assert_eq!(count.get(g).copied().unwrap_or(0), *n, "{name}: {g} count");
            }
        }
        // a pipeline communicator's instances are its exchanges'
        for c in arr(&t["communicators"])
            .iter()
            .filter(|c| c["kind"] == "pp")
        {
            let sum: i64 = arr(&c["exchanges"])
                .iter()
                .map(|x| count[x.as_str().unwrap()])
                .sum();
            assert_eq!(sum, u(&c["instances"]), "{name}: {}", c["name"]);
        }
    }
}

#[test]
fn stream_ids_follow_the_policy() {
    for Job { name, t, .. } in jobs() {
        let policy = t["stream_policy"].as_str().unwrap().to_string();
        let stream = |kind: &str| -> Vec<(Vec<i64>, Vec<i64>)> {
            arr(&t["communicators"])
                .iter()
                .filter(|c| c["kind"] == kind)
                .map(|c| {
                    (
                        arr(&c["ranks"]).iter().map(u).collect(),
                        arr(&c["streams"]).iter().map(u).collect(),
                    )
                })
                .collect()
        };
        let all_same = |kind: &str| {
            stream(kind)
                .iter()
                .all(|(_, s)| s.iter().all(|x| *x == s[0]))
        };
        let kinds = ["tp", "pp", "dp", "ep", "gradnorm", "emb"];
        match policy.as_str() {
            "dedicated" | "shared" => {
                for k in kinds {
                    assert!(all_same(k), "{name}: {k} streams differ across ranks");
                }
                let ids: Vec<(String, i64)> = kinds
                    .iter()
                    .filter_map(|k| stream(k).first().map(|(_, s)| (k.to_string(), s[0])))
                    .collect();
                for (a, sa) in &ids {
                    for (b, sb) in &ids {
                        let one = policy == "shared"
                            && [a, b].iter().all(|x| ["tp", "dp"].contains(&x.as_str()));
                        assert!(a == b || (sa == sb) == one, "{name}: {a} {sa}, {b} {sb}");
                    }
                }
                assert_ne!(
                    ids[0].1, 7,
                    "{name}: an NCCL stream is not the compute stream"
                );
            }
            "lazy" => {
                // the first and last stages meet TP and PP in opposite orders
                let (pp_ranks, pp_streams) = &stream("pp")[0];
                assert_ne!(pp_streams[0], pp_streams[pp_ranks.len() - 1], "{name}: pp");
                let tp = stream("tp");
                assert_ne!(
                    tp.first().unwrap().1[0],
                    tp.last().unwrap().1[0],
                    "{name}: tp"
                );
            }
            "sync_on_compute" => {
                for k in ["tp", "gradnorm", "emb"] {
                    assert!(
                        stream(k).iter().all(|(_, s)| s.iter().all(|x| *x == 7)),
                        "{name}: {k}"
                    );
                }
                for k in ["pp", "dp"] {
                    assert!(
                        stream(k).iter().all(|(_, s)| s.iter().all(|x| *x != 7)),
                        "{name}: {k}"
                    );
                }
            }
            other => panic!("{name}: policy {other}"),
        }
    }
}

#[test]
fn each_delay_makes_its_own_rank_late() {
    for Job { name, t, .. } in jobs() {
        let delays = arr(&t["delays"]);
        if name.starts_with("3d_lockstep") {
            assert!(delays.is_empty(), "{name}");
        }
        for d in delays {
            let ns = d["ms"].as_f64().unwrap() * 1e6;
            let op = &d["late_op"];
            let late = (u(&op["start"]) - u(&op["start_without"])) as f64;
            assert!(
                late >= 0.95 * ns && late <= ns + 1e5,
                "{name}: late op {late} ns of {ns}"
            );
            // its partners may take some of it back in waits of their own, not most of it
            let made = arr(&d["made_late"]);
            assert!(
                made.iter()
                    .any(|m| m["late_rank"] == d["rank"] && u(&m["by_ns"]) as f64 >= 0.5 * ns),
                "{name}: delay on rank {} makes none of its own instances late",
                d["rank"]
            );
        }
    }
}

#[test]
fn siblings_end_together_and_only_delays_part_them() {
    for Job { name, t, .. } in jobs() {
        let groups = groups(&t);
        let threshold = u(&t["sibling_threshold_ns"]);
        let mut ends: HashMap<String, Vec<(String, i64)>> = HashMap::new();
        for i in arr(&t["instances"]) {
            let end = arr(&i["members"])
                .iter()
                .map(|m| u(&m["end"]))
                .max()
                .unwrap();
            ends.entry(i["group"].as_str().unwrap().into())
                .or_default()
                .push((i["op"].as_str().unwrap().into(), end));
        }
        let alike = |a: &str, b: &str| {
            let (x, y) = (&ends[a], &ends[b]);
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|(p, q)| p.0 == q.0 && (p.1 - q.1).abs() <= threshold)
        };
        let listed: HashMap<String, Vec<String>> = arr(&t["siblings"])
            .iter()
            .map(|s| {
                let v = arr(&s["indistinguishable_from"])
                    .iter()
                    .map(|x| x.as_str().unwrap().to_string());
                (s["group"].as_str().unwrap().to_string(), v.collect())
            })
            .collect();
        for (g, sibs) in &listed {
            for (h, (kind, ..)) in &groups {
                if h == g || *kind != groups[g].0 || !ends.contains_key(h) {
                    continue;
                }
                assert_eq!(sibs.contains(h), alike(g, h), "{name}: {g} ~ {h}");
            }
        }
        // with nothing planted, TP groups of one stage, PP pairs and DP groups never part
        if name.starts_with("3d_lockstep") {
            for (g, sibs) in &listed {
                assert!(!sibs.is_empty(), "{name}: {g} has no sibling");
            }
        }
        // a planted delay on one TP group parts it from its sibling
        if name.starts_with("3d_dedicated") {
            assert!(
                listed["tp/1"].is_empty() && listed["dp/0"] == ["dp/1"],
                "{name}"
            );
        }
    }
}

/// The payload of NCCL's range `blob` (nsys's 32-byte record header, then the payload):
/// (schema id, communicator id, the 64 bits at payload offset 8, the 32 at offset 16).
fn decode(blob: &[u8]) -> (u32, u64, u64, u32) {
    let word = |at: usize| u32::from_le_bytes(blob[at..at + 4].try_into().unwrap());
    let long = |at: usize| u64::from_le_bytes(blob[at..at + 8].try_into().unwrap());
    // AllGather's payload ends after the size
    let third = if blob.len() >= 52 { word(48) } else { 0 };
    (word(8), long(32), long(40), third)
}

#[test]
fn payloads_name_each_kernels_communicator() {
    for Job { name, t, dbs } in jobs() {
        // Its payloads are in tables, not blobs: tests/payload_tables.rs holds every report
        // on it to the blob export's.
        if name.ends_with("_payload_tables") {
            continue;
        }
        if t["payloads"] != true {
            for db in &dbs {
                let n = count(db, "SELECT count(*) FROM NVTX_EVENTS WHERE domainId = 1");
                assert_eq!(n, 0, "{name}: NCCL ranges without payloads");
            }
            continue;
        }
        // (file, device, stream, start) of each NCCL kernel → its communicator's id, group, name
        let mut comm_of: HashMap<Key, (u64, String, String)> = HashMap::new();
        let groups = groups(&t);
        let mut ids: HashMap<String, u64> = HashMap::new();
        for c in arr(&t["communicators"]) {
            let hex = c["comm_id"].as_str().unwrap().trim_start_matches("0x");
            ids.insert(
                c["name"].as_str().unwrap().into(),
                u64::from_str_radix(hex, 16).unwrap(),
            );
        }
        let exchanges: HashMap<&str, &str> = arr(&t["exchanges"])
            .iter()
            .map(|x| {
                (
                    x["name"].as_str().unwrap(),
                    x["communicator"].as_str().unwrap(),
                )
            })
            .collect();
        for i in arr(&t["instances"]) {
            let g = i["group"].as_str().unwrap();
            let comm = exchanges.get(g).copied().unwrap_or(g);
            for m in arr(&i["members"]) {
                comm_of.insert(in_file(&t, m), (ids[comm], g.into(), comm.into()));
            }
        }
        let (mut launched, mut seen) = (0, 0);
        for (f, db) in dbs.iter().enumerate() {
            // each NCCL kernel's launch call, and the NCCL ranges of its thread since the one
            // before: the calls that issued it
            let mut st = db
                .prepare(
                    "SELECT k.deviceId, k.streamId, k.start, r.start, r.end, r.globalTid, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId AND r.globalTid / 16777216 = k.globalPid / 16777216 WHERE s.value LIKE 'ncclDevKernel%' ORDER BY r.globalTid, r.start",
                )
                .unwrap();
            type Launch = (Key, i64, i64, i64);
            let launches: Vec<Launch> = st
                .query_map([], |r| {
                    let kernel = (f, r.get(0)?, r.get(1)?, r.get(2)?, r.get(6)?);
                    Ok((kernel, r.get(3)?, r.get(4)?, r.get(5)?))
                })
                .unwrap()
                .map(Result::unwrap)
                .collect();
            launched += launches.len();
            let mut ranges = db
                .prepare(
                    "SELECT n.start, n.end, s.value, n.binaryData FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId WHERE n.domainId = 1 AND s.value != 'ncclCommInitRankConfig' AND n.globalTid = ?1 AND n.start > ?2 AND n.start < ?3 ORDER BY n.start",
                )
                .unwrap();
            let mut prev = (0, 0);
            for (kernel, call_start, call_end, tid) in launches {
                let from = if prev.0 == tid { prev.1 } else { 0 };
                prev = (tid, call_end);
                let rows: Vec<(i64, i64, String, Option<Vec<u8>>)> = ranges
                    .query_map(rusqlite::params![tid, from, call_start], |r| {
                        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                    })
                    .unwrap()
                    .map(Result::unwrap)
                    .collect();
                let (want, group, comm_name) = &comm_of[&kernel];
                let enclosing = rows
                    .last()
                    .unwrap_or_else(|| panic!("{name}: no NCCL range"));
                assert!(
                    enclosing.1 > call_end,
                    "{name}: the launch is inside {}",
                    enclosing.2
                );
                let mut calls = 0;
                for (_, _, text, blob) in rows.iter().filter(|r| r.3.is_some()) {
                    let (_, comm, _, peer) = decode(blob.as_ref().unwrap());
                    assert_eq!(
                        comm, *want,
                        "{name}: {text} of {group} names another communicator"
                    );
                    if text == "ncclSend" || text == "ncclRecv" {
                        let size = groups[comm_name].1.len() as u32;
                        assert!(peer < size, "{name}: {text} peer {peer} in {comm_name}");
                    }
                    calls += 1;
                }
                assert!(calls >= 1, "{name}: {group}'s kernel without a payload");
            }
            // one communicator init per communicator and member, naming its size and rank
            let mut st = db
                .prepare(
                    "SELECT n.globalTid / 16777216 % 16777216, n.binaryData FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId WHERE s.value = 'ncclCommInitRankConfig'",
                )
                .unwrap();
            let inits: Vec<(i64, Vec<u8>)> = st
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let pids: HashMap<i64, i64> = arr(&t["ranks"])
                .iter()
                .map(|r| (u(&r["pid"]), u(&r["rank"])))
                .collect();
            for (pid, blob) in inits {
                let (schema, comm, word8, _) = decode(&blob);
                assert_eq!(
                    schema,
                    (1 << 24) + 11,
                    "{name}: CommInitRankConfig's schema"
                );
                let (nranks, rank) = ((word8 & 0xffff_ffff) as usize, (word8 >> 32) as i64);
                let c = arr(&t["communicators"])
                    .iter()
                    .find(|c| ids[c["name"].as_str().unwrap()] == comm)
                    .unwrap();
                let ranks = arr(&c["ranks"]);
                assert_eq!(nranks, ranks.len(), "{name}: {}", c["name"]);
                assert_eq!(
                    u(&ranks[rank as usize]),
                    pids[&pid],
                    "{name}: {}",
                    c["name"]
                );
                seen += 1;
            }
        }
        assert_eq!(
            launched,
            comm_of.len(),
            "{name}: every NCCL kernel has its launch"
        );
        let members: usize = arr(&t["communicators"])
            .iter()
            .map(|c| arr(&c["ranks"]).len())
            .sum();
        assert_eq!(seen, members, "{name}: communicator inits");
    }
}

#[test]
fn graph_kernels_carry_their_launch() {
    for Job { name, t, dbs } in jobs() {
        let Some(launches) = t["graph_launches"].as_array() else {
            let sql = "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId IS NOT NULL";
            for db in &dbs {
                assert_eq!(count(db, sql), 0, "{name}: graph kernels without graphs");
            }
            continue;
        };
        // a job with CUDA graphs is one host's file
        let db = &dbs[0];
        let pids: HashMap<i64, i64> = arr(&t["ranks"])
            .iter()
            .map(|r| (u(&r["rank"]), u(&r["pid"])))
            .collect();
        let mut planted = 0;
        for l in launches {
            let pid = pids[&u(&l["rank"])];
            let (call_start, api): (i64, String) = db
                .query_row(
                    "SELECT r.start, s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE r.correlationId = ?1 AND r.globalTid / 16777216 % 16777216 = ?2",
                    rusqlite::params![u(&l["correlation_id"]), pid],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .unwrap();
            assert_eq!(api, "cudaGraphLaunch_v10000", "{name}");
            assert_eq!(call_start, u(&l["start"]), "{name}");
            let n: i64 = db
                .query_row(
                    "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = ?1 AND globalPid / 16777216 % 16777216 = ?2 AND graphNodeId IS NOT NULL AND graphId = 1",
                    rusqlite::params![u(&l["correlation_id"]), pid],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(
                n as usize,
                arr(&l["kernels"]).len(),
                "{name}: one call, all its kernels"
            );
            if !l["planted_delay"].is_null() {
                planted += 1;
                assert!(u(&l["late_ns"]) > 29_000_000, "{name}: {l}");
                // the thread sat in pthread_cond_wait right before the call
                let wait_end: i64 = db
                    .query_row(
                        "SELECT max(o.end) FROM OSRT_API o JOIN StringIds s ON s.id = o.nameId WHERE s.value = 'pthread_cond_wait' AND o.globalTid / 16777216 % 16777216 = ?1 AND o.end <= ?2",
                        rusqlite::params![pid, call_start],
                        |r| r.get(0),
                    )
                    .unwrap();
                assert!(
                    call_start - wait_end < 200_000,
                    "{name}: the wait ends right before the launch"
                );
            }
        }
        assert_eq!(planted, 1, "{name}: the one late launch");
    }
}

#[test]
fn job_files_stay_small() {
    let mut todo = vec![common::root().join("fixtures/jobs")];
    while let Some(dir) = todo.pop() {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                // a job of several files: a few MB at most
                let total: u64 = std::fs::read_dir(&p)
                    .unwrap()
                    .map(|f| f.unwrap().metadata().unwrap().len())
                    .sum();
                assert!(
                    total <= 2600 * 1024,
                    "{} is {} KiB",
                    p.display(),
                    total / 1024
                );
                todo.push(p);
                continue;
            }
            let size = std::fs::metadata(&p).unwrap().len();
            if p.extension().is_some_and(|x| x == "sqlite") {
                // A dynamic-tables export has a table per process and payload schema, a page
                // each at least.
                let tables = p.to_string_lossy().contains("_payload_tables");
                let limit = if tables { 760 } else { 560 };
                assert!(
                    size <= limit * 1024,
                    "{} is {} KiB",
                    p.display(),
                    size / 1024
                );
            }
        }
    }
}
