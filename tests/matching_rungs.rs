//! Rungs 1 and 2 of collective matching, on synthetic data shaped like the
//! documented tables (no real export here carries them; the output marks
//! them unverified).

mod common;
use common::*;
use rusqlite::Connection;
use serde_json::Value;

/// NCCL kernels as (globalPid, streamId, correlationId, deviceId, position
/// on its stream), in start order per stream.
const NCCL_KERNELS: &str = "SELECT k.globalPid, k.streamId, k.correlationId, k.deviceId,
      ROW_NUMBER() OVER (PARTITION BY k.globalPid, k.streamId ORDER BY k.start) AS pos
    FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName
    WHERE s.value LIKE 'nccl%'";

fn skew(f: &std::path::Path) -> Value {
    let o = rankline(&["report", "skew", f.to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

#[test]
fn operation_ids_match_instances_when_present() {
    let f = copy_fixture("rung_operation_id", "megatron_tp8.sqlite");
    let c = Connection::open(&f).unwrap();
    c.execute_batch("CREATE TABLE NCCL_GPU_OPERATIONS (operationId INTEGER NOT NULL, globalPid INTEGER, correlationId INTEGER, extra TEXT);")
        .unwrap();
    c.execute(
        &format!("INSERT INTO NCCL_GPU_OPERATIONS SELECT 1000000 * streamId + pos, globalPid, correlationId, 'x' FROM ({NCCL_KERNELS}) AS t"),
        [],
    )
    .unwrap();
    drop(c);
    let v = skew(&f);
    let groups = v["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 3);
    for g in groups {
        assert_eq!(g["match_method"], "operation-id", "{}", g["key"]);
        assert_eq!(g["match_verified"], false);
    }
    let counts: Vec<i64> = groups
        .iter()
        .map(|g| g["instances"].as_i64().unwrap())
        .collect();
    assert_eq!(counts, vec![225, 2, 10]);
    // Same pairing as the sequence rung here, so the same big events.
    assert_eq!(groups[0]["big_events"].as_array().unwrap().len(), 4);
}

#[test]
fn nccl_nvtx_communicator_ids_split_a_shared_stream() {
    let f = copy_fixture("rung_nvtx", "shared_stream_two_comms.sqlite");
    let c = Connection::open(&f).unwrap();
    // The payload schemas as a real export declares them, and one NCCL API
    // range around each NCCL kernel's launch call with the communicator id
    // where its schema puts it: devices 0,1 and 2,3 are different
    // communicators on the same stream id.
    c.execute_batch(include_str!(
        "../make-fixtures/src/nccl_payload_schemas.sql"
    ))
    .unwrap();
    let rows: Vec<(i64, i64, i64, i64)> = {
        let mut st = c
            .prepare(&format!(
                "SELECT r.start, r.end, r.globalTid, t.deviceId FROM ({NCCL_KERNELS}) AS t
                 JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = t.correlationId
                   AND (r.globalTid >> 24) = (t.globalPid >> 24)"
            ))
            .unwrap();
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(rows.len(), 32);
    for (start, end, tid, dev) in rows {
        let comm: u64 = if dev < 2 {
            0x1111_2222_3333_4444
        } else {
            0x5555_6666_7777_8888
        };
        let hex: String = comm
            .to_le_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        c.execute(
            "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId, binaryData) VALUES (?1, ?2, 59, 'ncclAllReduce', ?3, 1, ?4)",
            (start - 100, end + 100, tid, hex),
        )
        .unwrap();
    }
    drop(c);
    let v = skew(&f);
    let groups = v["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2, "{groups:?}");
    for g in groups {
        assert_eq!(g["match_method"], "nvtx");
        assert_eq!(g["match_verified"], false);
        assert_eq!(g["instances"], 8);
        assert_eq!(g["end_aligned"], true);
    }
    assert_eq!(groups[0]["devices"], serde_json::json!([0, 1]));
    assert_eq!(groups[1]["devices"], serde_json::json!([2, 3]));
}

/// Kernels launched from a CUDA graph link to the graph launch, are counted
/// as such, and a late one is judged by that launch call like any kernel
/// (issue 42: it was issued no earlier than the call's end).
#[test]
fn graph_kernels_are_flagged_and_judged_by_their_launch_call() {
    let f = copy_fixture("graph_kernels", "megatron_tp8.sqlite");
    let o = rankline(&[
        "report",
        "launch",
        f.to_str().unwrap(),
        "--format",
        "json",
        "--no-cache",
    ]);
    let before: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let late = &before["late_instances"][0];
    assert_eq!(late["verdict"], "cpu-late");
    let c = Connection::open(&f).unwrap();
    // Mark device 2's AllGather kernels (the first big event's late rank) and
    // nothing else as launched from a graph.
    let n = c
        .execute(
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET graphNodeId = 7 WHERE deviceId = 2 AND shortName IN
               (SELECT id FROM StringIds WHERE value = 'ncclDevKernel_AllGather_RING_LL')",
            [],
        )
        .unwrap();
    assert!(n > 0);
    drop(c);
    let o = rankline(&[
        "report",
        "launch",
        f.to_str().unwrap(),
        "--format",
        "json",
        "--no-cache",
    ]);
    let after: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(after["graph_kernels"], n as i64);
    assert_eq!(after["kernels_with_launch"], before["kernels_with_launch"]);
    let late = &after["late_instances"][0];
    assert_eq!(late["device"], 2);
    assert_eq!(late["from_graph"], true);
    let was = &before["late_instances"][0];
    for k in ["verdict", "cpu_delay_ms", "api_end_to_start_ms", "api"] {
        assert_eq!(late[k], was[k], "{k}");
    }
}
