//! `fixtures/jobs/cuda_graphs` with a CUDA graph's kernel as a late rank,
//! and the truth of that case. The job replays each forward from a graph
//! and plants a 30 ms `pthread_cond_wait` on rank 1 right before a
//! `cudaGraphLaunch`; its collectives are launched eagerly, so no graph
//! kernel is ever a collective's late rank. Recording rank 1's PP send that
//! follows the late replay as the graph's next node, as a graph that
//! captured the send has it (the replay's correlation id, a node and graph
//! id; its own launch call gone), makes one. Its times are the truth's.

use super::{root, temp_dir};
use rusqlite::{Connection, params};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What the truth says of the planted case: the stalled rank's replay and
/// the PP send on that rank it made late.
pub struct Planted {
    pub rank: i64,
    pub pid: i64,
    /// The late rank's device, as rankline numbers it (one host: its id).
    pub device: i64,
    pub stream: i64,
    /// The replay's `cudaGraphLaunch`: correlation id, start and end (ns).
    pub corr: i64,
    pub launch: (i64, i64),
    /// The send's start, the earliest other rank's start of its instance,
    /// the instance's start skew.
    pub start: i64,
    pub first_peer: i64,
    pub start_skew: i64,
    /// The stall's length (ns).
    pub stall_ns: i64,
}

/// The derived job, the planted case, the stall's OSRT row and the
/// kernels in graph replays (the truth's, and the send).
pub struct GraphLate {
    pub job: PathBuf,
    pub case: Planted,
    pub stall: (i64, i64),
    pub graph_kernels: usize,
}

pub fn truth() -> Value {
    let p = root().join("fixtures/jobs/cuda_graphs.truth.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn i(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// The planted replay (the one whose first kernel is the delay's late op).
fn planted_launch(t: &Value) -> &Value {
    let d = &t["delays"][0];
    assert_eq!(d["kind"], "cpu_stall");
    t["graph_launches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["rank"] == d["rank"] && g["kernels"][0]["start"] == d["late_op"]["start"])
        .expect("the planted graph launch")
}

pub fn planted(t: &Value) -> Planted {
    let d = &t["delays"][0];
    let g = planted_launch(t);
    let made = d["made_late"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["late_rank"] == d["rank"] && m["group"].as_str().unwrap().starts_with("pp/"))
        .expect("a PP instance made late on the stalled rank");
    let inst = t["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["group"] == made["group"] && x["index"] == made["index"])
        .unwrap();
    let members = inst["members"].as_array().unwrap();
    let late = members.iter().find(|m| m["rank"] == d["rank"]).unwrap();
    let first_peer = members
        .iter()
        .filter(|m| m["rank"] != d["rank"])
        .map(|m| i(&m["start"]))
        .min()
        .unwrap();
    let start = i(&late["start"]);
    // Only a send that runs after the replay's last node can be its next.
    let nodes = g["kernels"].as_array().unwrap();
    assert!(start > i(&nodes.last().unwrap()["end"]));
    let rank = i(&d["rank"]);
    let pid = t["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["rank"] == rank)
        .map(|r| i(&r["pid"]))
        .unwrap();
    Planted {
        rank,
        pid,
        device: i(&late["device"]),
        stream: i(&late["stream"]),
        corr: i(&g["correlation_id"]),
        launch: (i(&g["start"]), i(&g["end"])),
        start,
        first_peer,
        start_skew: i(&inst["start_skew_ns"]),
        stall_ns: (d["ms"].as_f64().unwrap() * 1e6).round() as i64,
    }
}

/// SQL true of a row of process `pid` whose thread is in column `tid`
/// (nsys's globalTid: the pid above the low 24 bits).
fn of_pid(tid: &str, pid: i64) -> String {
    format!("(({tid} >> 24) & 16777215) = {pid}")
}

/// The planted `pthread_cond_wait` of `job`: its OSRT row (start, end),
/// the stall's length, ending before the replay's launch.
pub fn stall(job: &Path, c: &Planted) -> (i64, i64) {
    let db = Connection::open(job).unwrap();
    let mut q = db
        .prepare(&format!(
            "SELECT o.start, o.\"end\" FROM OSRT_API o JOIN StringIds s ON s.id = o.nameId
              WHERE s.value = 'pthread_cond_wait' AND {}
                AND o.\"end\" - o.start = ?1 AND o.\"end\" <= ?2",
            of_pid("o.globalTid", c.pid)
        ))
        .unwrap();
    let rows: Vec<(i64, i64)> = q
        .query_map(params![c.stall_ns, c.launch.0], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), 1, "the planted stall: {rows:?}");
    rows[0]
}

/// The derived job, written under `target/test-tmp/<test>`.
pub fn graph_kernel_late(test: &str) -> GraphLate {
    let t = truth();
    let case = planted(&t);
    let g = planted_launch(&t);
    let nodes = g["kernels"].as_array().unwrap();
    let job = temp_dir(test).join("cuda_graphs.sqlite");
    std::fs::copy(root().join("fixtures/jobs/cuda_graphs.sqlite"), &job).unwrap();
    let db = Connection::open(&job).unwrap();
    let key = "deviceId = ?1 AND streamId = ?2 AND start = ?3";
    let at = params![case.device, case.stream, case.start];
    let own: i64 = db
        .query_row(
            &format!("SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE {key}"),
            at,
            |r| r.get(0),
        )
        .unwrap();
    let node = nodes.iter().map(|k| i(&k["graph_node_id"])).max().unwrap() + 1;
    let set = format!(
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = {}, graphNodeId = {node},
           graphId = {} WHERE {key}",
        case.corr,
        i(&nodes[0]["graph_id"])
    );
    assert_eq!(db.execute(&set, at).unwrap(), 1);
    let gone = db
        .execute(
            &format!(
                "DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId = ?1 AND {}",
                of_pid("globalTid", case.pid)
            ),
            params![own],
        )
        .unwrap();
    assert_eq!(gone, 1, "the send's own launch call");
    drop(db);
    GraphLate {
        stall: stall(&job, &case),
        job,
        case,
        graph_kernels: replayed(&t) + 1,
    }
}

/// The kernels the truth lists in graph replays.
pub fn replayed(t: &Value) -> usize {
    t["graph_launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["kernels"].as_array().unwrap().len())
        .sum()
}
