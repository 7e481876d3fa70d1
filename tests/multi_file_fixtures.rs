//! The multi-file fixtures agree with their truth, read back with plain SQL (no rankline code):
//! the truth's offsets and drifts put every file on the reference clock, the clock tables say
//! what real exports say, and per-rank files name distinct GPUs and their ranks
//! (`make-fixtures/tests/scale_nodes.rs` checks `scale-nodes` is deterministic).

mod common;
use common::*;

use rusqlite::Connection;
use serde_json::Value;

fn truth(name: &str) -> Value {
    let text = std::fs::read_to_string(root().join("fixtures").join(name)).expect("truth file");
    serde_json::from_str(&text).expect("truth JSON")
}

fn open(path: &str) -> Connection {
    Connection::open_with_flags(
        root().join(path),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("open fixture")
}

fn one(db: &Connection, sql: &str) -> i64 {
    db.query_row(sql, [], |r| r.get(0)).expect(sql)
}

const SCENARIOS: [&str; 3] = ["multinode", "per_rank", "ends_disagree"];

#[test]
fn truth_maps_every_file_onto_the_reference_clock() {
    for name in SCENARIOS {
        let t = truth(&format!("{name}.truth.json"));
        let files = t["files"].as_array().unwrap();
        for g in t["groups"].as_array().unwrap() {
            let stream = g["stream"].as_i64().unwrap();
            // each member's NCCL kernels on the group's stream, on the reference clock
            let mut seqs: Vec<Vec<(f64, f64)>> = vec![];
            for m in g["members"].as_array().unwrap() {
                let f = &files[m["file"].as_u64().unwrap() as usize];
                let db = open(f["path"].as_str().unwrap());
                let first = f["first_event_ns"].as_i64().unwrap();
                let earliest = [
                    "CUPTI_ACTIVITY_KIND_KERNEL",
                    "CUPTI_ACTIVITY_KIND_RUNTIME",
                    "NVTX_EVENTS",
                ]
                .iter()
                .map(|tb| one(&db, &format!("SELECT min(start) FROM {tb}")))
                .min()
                .unwrap();
                assert_eq!(earliest, first, "{name}: {}", f["path"]);
                let (off, drift) = (
                    f["true_offset_ns"].as_f64().unwrap(),
                    f["true_drift_ppm"].as_f64().unwrap(),
                );
                let to_ref = |t: i64| t as f64 + off + drift * 1e-6 * (t - first) as f64;
                let mut q = db
                    .prepare("SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = ?1 AND streamId = ?2 ORDER BY start")
                    .unwrap();
                let v = q
                    .query_map([m["device"].as_i64().unwrap(), stream], |r| {
                        Ok((to_ref(r.get(0)?), to_ref(r.get(1)?)))
                    })
                    .unwrap()
                    .map(Result::unwrap)
                    .collect();
                seqs.push(v);
            }
            let inst = g["instances"].as_array().unwrap();
            let mut rows: Vec<Vec<(f64, f64)>> = (0..inst.len())
                .map(|i| seqs.iter().map(|s| s[i]).collect())
                .collect();
            let min_start = |r: &Vec<(f64, f64)>| r.iter().map(|x| x.0).fold(f64::MAX, f64::min);
            rows.sort_by(|a, b| min_start(a).total_cmp(&min_start(b)));
            for (r, ti) in rows.iter().zip(inst) {
                let starts = r.iter().map(|x| x.0);
                let ends = r.iter().map(|x| x.1);
                let skew = |it: &mut dyn Iterator<Item = f64>| {
                    let v: Vec<f64> = it.collect();
                    (v.iter().cloned().fold(f64::MIN, f64::max)
                        - v.iter().cloned().fold(f64::MAX, f64::min))
                        / 1e6
                };
                let key = format!("{name} {} #{}", g["key"], ti["number"]);
                let start_ns = ti["start_ns"].as_f64().unwrap();
                assert!((min_start(r) - start_ns).abs() < 1e3, "{key}");
                let s = skew(&mut starts.clone());
                assert!(
                    (s - ti["start_skew_ms"].as_f64().unwrap()).abs() < 1e-3,
                    "{key}"
                );
                let e = skew(&mut ends.clone());
                assert!(
                    (e - ti["end_skew_ms"].as_f64().unwrap()).abs() < 1e-3,
                    "{key}"
                );
            }
        }
    }
}

#[test]
fn clock_tables_say_what_real_exports_say() {
    for name in SCENARIOS {
        let t = truth(&format!("{name}.truth.json"));
        for f in t["files"].as_array().unwrap() {
            let db = open(f["path"].as_str().unwrap());
            let (utc, sys): (i64, i64) = db
                .query_row(
                    "SELECT utcEpochNs, systemClockNs FROM TARGET_INFO_SESSION_START_TIME",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .unwrap();
            let (start, stop, duration): (i64, i64, i64) = db
                .query_row(
                    "SELECT startTime, stopTime, duration FROM ANALYSIS_DETAILS",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .unwrap();
            assert_eq!(utc, f["utc_epoch_ns"].as_i64().unwrap());
            assert_eq!(sys, f["system_clock_ns"].as_i64().unwrap());
            assert_eq!(stop - start, duration);
            assert_eq!(start, sys, "startTime is the boot clock at capture start");
            let (first, last) = (
                f["first_event_ns"].as_i64().unwrap(),
                f["last_event_ns"].as_i64().unwrap(),
            );
            let inside = start <= first && last <= stop;
            match f["timebase"].as_str().unwrap() {
                "boot-clock" => assert!(inside, "{}", f["path"]),
                "session-relative" => {
                    assert!(!inside && 0 < first && last <= duration, "{}", f["path"])
                }
                other => panic!("timebase {other}"),
            }
            // UTC alignment: the stamps' UTC of timestamp 0, against the reference's
            let zero = |f: &Value| {
                let u = f["utc_epoch_ns"].as_i64().unwrap();
                match f["timebase"].as_str().unwrap() {
                    "boot-clock" => u - f["system_clock_ns"].as_i64().unwrap(),
                    _ => u,
                }
            };
            let utc_offset = (zero(f) - zero(&t["files"][0])) as f64 / 1e6;
            assert!((utc_offset - f["utc_offset_ms"].as_f64().unwrap()).abs() < 1e-6);
        }
    }
}

#[test]
fn per_rank_files_name_distinct_gpus_and_their_ranks() {
    let t = truth("per_rank.truth.json");
    let mut uuids = vec![];
    for (i, f) in t["files"].as_array().unwrap().iter().enumerate() {
        let db = open(f["path"].as_str().unwrap());
        assert_eq!(
            one(
                &db,
                "SELECT count(DISTINCT deviceId) FROM CUPTI_ACTIVITY_KIND_KERNEL"
            ),
            1
        );
        assert_eq!(
            one(&db, "SELECT max(deviceId) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
            0
        );
        let uuid: String = db
            .query_row(
                "SELECT g.uuid FROM TARGET_INFO_CUDA_DEVICE d JOIN TARGET_INFO_GPU g ON g.id = d.gpuId WHERE d.cudaId = 0",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(t["devices"][i]["uuid"], uuid.as_str());
        uuids.push(uuid);
        let env: Vec<String> = db
            .prepare(
                "SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:ENVIRONMENT_VARIABLE'",
            )
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert!(env.contains(&format!("RANK=\"{i}\"")), "{env:?}");
        assert!(env.contains(&"WORLD_SIZE=\"5\"".to_string()), "{env:?}");
        assert_eq!(t["devices"][i]["rank"], i);
    }
    let mut distinct = uuids.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 4, "{uuids:?}");
    assert_eq!(t["missing_ranks"], serde_json::json!([4]));
}
