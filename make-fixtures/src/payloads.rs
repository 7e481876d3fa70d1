//! `fixtures/payloads.sqlite`: 4 GPUs, one process each, one communicator on stream 20
//! running AllReduce, AllGather, ReduceScatter, Broadcast and SendRecv with known message
//! sizes. Each NCCL kernel's launch call sits inside an NCCL API range (NCCL's NVTX domain,
//! id 1): its own call, or the ncclGroupEnd of grouped calls. Each call's `binaryData`
//! carries the payload NCCL records, laid out by the schema rows a real 2026.2 export
//! declares (`nccl_payload_schemas.sql`): ranks 0 and 1 as nsys's record (a 32-byte header
//! naming the schema), ranks 2 and 3 as the bare payload. The truth gives, per kernel, the
//! size NCCL recorded, and per instance nccl-tests' size, algbw and busbw.

use rusqlite::{Transaction, params};
use serde_json::{Value, json};

use crate::extras::{Fixture, dev, profile, ranks};
use crate::model::{KName, Kernel, Nccl, Nvtx, NvtxKind, global_tid};
use crate::names::{self, Compute};
use crate::plan::Phase;
use crate::rng::Rng;
use crate::sim::{StepLoop, US, member};
use crate::truth_skew::GroupSpec;

pub const PATH: &str = "fixtures/payloads.sqlite";
const HOST: &str = "dgx-p01";
const PID0: u32 = 7101;
const N: usize = 4;
const COMM: u64 = 0x9e37_79b9_7f4a_7c15;
/// NCCL's payload schema rows as a real 2026.2 export declares them (the library's tests
/// that add payloads of their own read the same file).
pub(crate) const SCHEMA_SQL: &str = include_str!("nccl_payload_schemas.sql");

/// One NCCL API call: its name, the size NCCL records for it (per rank) and its schema
/// (2^24 + NCCL's NVTX_SID).
#[derive(Clone, Copy)]
struct Call {
    name: &'static str,
    recorded: u64,
    schema: u64,
}

/// One collective of the plan: the kernel's op and dtype, the calls that issue it, whether
/// they are grouped (ncclGroupStart … ncclGroupEnd, the launch inside ncclGroupEnd), the
/// size each rank's kernel has (`None`: a group whose calls cannot be split among its
/// kernels), and the transfer time in µs.
struct Coll {
    op: &'static str,
    dtype: Option<&'static str>,
    calls: Vec<Call>,
    grouped: bool,
    recorded: Option<u64>,
    transfer_us: (f64, f64),
}

const MIB: u64 = 1 << 20;

/// The static schema NCCL registers for its API call `name`: 2^24 + its
/// NVTX_SID_* (nvtx.h), as the export declares it.
pub(crate) fn static_schema(name: &str) -> u32 {
    let sid = match name {
        "ncclAllGather" => 4,
        "ncclAllReduce" => 5,
        "ncclBroadcast" => 6,
        "ncclReduceScatter" => 7,
        "ncclSend" => 9,
        "ncclRecv" => 10,
        "ncclCommInitRankConfig" => 11,
        other => panic!("no payload schema for {other}"),
    };
    (1 << 24) + sid
}

fn call(name: &'static str, recorded: u64) -> Call {
    Call {
        name,
        recorded,
        schema: static_schema(name).into(),
    }
}

fn plan() -> Vec<Coll> {
    let one = |op, dtype, c: Call, t| Coll {
        op,
        dtype,
        recorded: Some(c.recorded),
        calls: vec![c],
        grouped: false,
        transfer_us: t,
    };
    let group = |op, dtype, calls: Vec<Call>, recorded, t| Coll {
        op,
        dtype,
        calls,
        grouped: true,
        recorded,
        transfer_us: t,
    };
    vec![
        one(
            "AllReduce",
            Some("bf16"),
            call("ncclAllReduce", 64 * MIB),
            (900.0, 1100.0),
        ),
        one(
            "AllGather",
            None,
            call("ncclAllGather", 8 * MIB),
            (500.0, 700.0),
        ),
        one(
            "ReduceScatter",
            Some("bf16"),
            call("ncclReduceScatter", 8 * MIB),
            (500.0, 700.0),
        ),
        one(
            "Broadcast",
            None,
            call("ncclBroadcast", 16 * MIB),
            (300.0, 400.0),
        ),
        // A ring exchange as torch's batch_isend_irecv issues it (the real 2026.2 export's
        // shape): one SendRecv kernel; its size is one direction's bytes.
        group(
            "SendRecv",
            None,
            vec![call("ncclSend", 4 * MIB), call("ncclRecv", 4 * MIB)],
            Some(4 * MIB),
            (150.0, 250.0),
        ),
        // Two AllReduce calls coalesced into one kernel: it moves both.
        group(
            "AllReduce",
            Some("bf16"),
            vec![
                call("ncclAllReduce", 2 * MIB),
                call("ncclAllReduce", 6 * MIB),
            ],
            Some(8 * MIB),
            (200.0, 300.0),
        ),
        // Two ops in one group and one kernel: which bytes it moved cannot be told.
        group(
            "AllGather",
            None,
            vec![call("ncclAllGather", MIB), call("ncclReduceScatter", MIB)],
            None,
            (100.0, 200.0),
        ),
    ]
}

/// nccl-tests' size and busbw factor (doc/PERFORMANCE.md) for an op over `n` ranks.
fn nccl_tests(op: &str, recorded: u64, n: usize) -> (u64, f64) {
    let n_f = n as f64;
    match op {
        "AllReduce" => (recorded, 2.0 * (n_f - 1.0) / n_f),
        "AllGather" | "ReduceScatter" => (recorded * n as u64, (n_f - 1.0) / n_f),
        _ => (recorded, 1.0),
    }
}

/// The payload NCCL records for call `c`: communicator id, size, then the call's third
/// field (reduction op Sum = 0, root 0, peer rank), as the schema's offsets lay them out.
fn payload(c: &Call, peer: u32) -> Vec<u8> {
    let mut v = COMM.to_le_bytes().to_vec();
    v.extend(c.recorded.to_le_bytes());
    match c.name {
        "ncclAllGather" => {}
        "ncclSend" | "ncclRecv" => {
            v.extend(peer.to_le_bytes());
            v.extend([0u8; 4]);
        }
        _ => {
            v.extend(0u32.to_le_bytes());
            v.extend([0u8; 4]);
        }
    }
    v
}

/// nsys's record of a payload: domain id, schema id, payload size, total size, payload.
fn record(c: &Call, body: &[u8]) -> Vec<u8> {
    nsys_record(c.schema as u32, body)
}

/// nsys's record of a payload of NCCL's domain (id 1) by schema `schema`: a 32-byte header
/// (domain id, schema id, payload size, total size), then the payload.
pub(crate) fn nsys_record(schema: u32, body: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend(1u32.to_le_bytes());
    v.extend(0u32.to_le_bytes());
    v.extend(schema.to_le_bytes());
    v.extend(0u32.to_le_bytes());
    v.extend((body.len() as u64).to_le_bytes());
    v.extend((32 + body.len() as u64).to_le_bytes());
    v.extend(body);
    v
}

/// The kernel an op's collective runs.
fn kernel(c: &Coll) -> (KName, Nccl) {
    match c.op {
        "SendRecv" => names::nccl_sendrecv(),
        op => names::nccl(op, c.dtype, "RING", "LL"),
    }
}

pub struct Payloads {
    pub fixture: Fixture,
    /// (start, globalTid, binaryData) of each NCCL API range with a payload.
    pub blobs: Vec<(i64, i64, Vec<u8>)>,
}

pub fn build(rng: &mut Rng) -> Payloads {
    let mut sim = StepLoop::new(ranks(PID0, N as u32), vec![7; N]);
    let colls = plan();
    let kinds: Vec<_> = colls.iter().map(kernel).collect();
    let t0 = 7_000_000_000;
    let mut g = t0 + 15_000 * US;
    sim.init_calls(g - 1_000_000, rng);
    let mut end = 0;
    // (collective index) per instance, in sequence order.
    let mut sequence = Vec::new();
    for s in 0..2 {
        sim.step_start(g, rng, Some(Phase { step: s, sub: None }));
        let ph = Some(Phase {
            step: s,
            sub: Some(0),
        });
        for (ci, kind) in kinds.iter().enumerate() {
            for r in 0..N {
                let d = rng.us(600.0, 1000.0);
                sim.compute(r, 0, d, Compute::Nvjet, false, rng, ph);
            }
            let base = sim.ready.iter().max().unwrap() + 30 * US;
            // Rank 2 arrives late at every AllGather: algbw (from the latest start) and the
            // naive figure over each kernel (with the wait) differ there.
            let m: Vec<_> = (0..N)
                .map(|r| {
                    let mut m = member(r, 20);
                    if r == 2 && colls[ci].op == "AllGather" {
                        m.late = 400 * US;
                    }
                    m
                })
                .collect();
            let se = sim.collective(&m, base, 40.0, colls[ci].transfer_us, kind, rng, ph);
            for (r, x) in se.iter().enumerate() {
                sim.ready[r] = sim.ready[r].max(x.1);
            }
            sequence.push(ci);
        }
        let after = sim.ready.clone();
        end = sim.step_end(rng, Some(Phase { step: s, sub: None }), &after);
        g = end + rng.us(1500.0, 2500.0);
    }
    let mut p = profile(
        PATH,
        HOST,
        sim,
        &vec![vec![20]; N],
        "train_step",
        (t0 + 12_000 * US, end),
        rng,
    );
    // The NCCL API ranges of each NCCL kernel's launch, on the calling thread: the call
    // around the launch, or ncclGroupStart, the calls, and ncclGroupEnd around the launch.
    let mut nccl: Vec<&Kernel> = p.kernels.iter().filter(|k| k.stream == 20).collect();
    nccl.sort_by_key(|k| (k.device, k.start));
    let mut ranges = Vec::new();
    let mut blobs = Vec::new();
    let mut kernels = Vec::new();
    let range = |call: &crate::model::Call, start: i64, end: i64, text: &str| Nvtx {
        pid: call.pid,
        tid: call.tid,
        kind: NvtxKind::PushPop,
        start,
        end: Some(end),
        text: text.to_string(),
        registered: true,
        domain: 1,
        range_id: None,
    };
    for (i, k) in nccl.iter().enumerate() {
        let r = k.device as usize;
        let c = &colls[sequence[i % sequence.len()]];
        let launch = p
            .calls
            .iter()
            .find(|c| c.pid == k.pid && c.corr == k.corr)
            .expect("every NCCL kernel of the plan is launched");
        let tid = global_tid(launch.pid, launch.tid);
        // Ranks 0 and 1 as nsys's record, 2 and 3 bare.
        let blob = |c: &Call, peer: u32| {
            let body = payload(c, peer);
            if r < 2 { record(c, &body) } else { body }
        };
        if c.grouped {
            let at = launch.start - 40 * US;
            ranges.push(range(launch, at, at + US, "ncclGroupStart"));
            for (j, call) in c.calls.iter().enumerate() {
                let s = at + 2 * US + j as i64 * 5 * US;
                ranges.push(range(launch, s, s + 4 * US, call.name));
                let peer = match call.name {
                    "ncclSend" => (r + 1) % N,
                    _ => (r + N - 1) % N,
                };
                blobs.push((s, tid, blob(call, peer as u32)));
            }
            ranges.push(range(
                launch,
                launch.start - 3 * US,
                launch.end + 2 * US,
                "ncclGroupEnd",
            ));
        } else {
            let (call, start) = (&c.calls[0], launch.start - 3 * US);
            ranges.push(range(launch, start, launch.end + 2 * US, call.name));
            blobs.push((start, tid, blob(call, 0)));
        }
        kernels.push(json!({"device": r, "start": k.start, "recorded_bytes": c.recorded}));
    }
    p.nvtx.extend(ranges);
    let instances = truth_instances(&nccl, &colls, &sequence);
    let group = GroupSpec {
        key: "s20".into(),
        members: (0..N as u32).map(|d| (dev(HOST, d), 20)).collect(),
    };
    Payloads {
        fixture: Fixture {
            profile: p,
            groups: vec![group],
            unaligned: vec![],
            scenario: json!({
                "description": "4 GPUs, one process each, one communicator on stream 20: per step (2) an AllReduce of 64 MiB, an AllGather of 8 MiB per rank (rank 2 arrives 400 us late), a ReduceScatter of 8 MiB per rank and a Broadcast of 16 MiB, each launched inside its NCCL call; then three grouped calls launched inside ncclGroupEnd: a ring exchange (ncclSend + ncclRecv of 4 MiB: one SendRecv kernel of 4 MiB), two coalesced AllReduce calls (2 + 6 MiB: one kernel of 8 MiB), and an AllGather with a ReduceScatter of 1 MiB each in one group with one AllGather kernel (rank 2 late; no size: the calls cannot be split). Each call's binaryData holds NCCL's payload (communicator id, size, op, root or peer) by the schema rows of a real 2026.2 export; ranks 0-1 as nsys's 32-byte-header record, ranks 2-3 bare. Sizes: 'recorded' is what NCCL records (per rank), 'bytes' nccl-tests' size (N x recorded for AllGather and ReduceScatter); algbw = bytes / (latest end - latest start) in GB/s (bytes per ns); busbw = algbw x factor; null where the size is unknown.",
                "host": HOST,
                "communicator": format!("{COMM:#x}"),
                "bandwidth": {"kernels": kernels, "instances": instances},
            }),
        },
        blobs,
    }
}

/// Per instance (the k-th NCCL kernel of every rank), nccl-tests' figures.
fn truth_instances(nccl: &[&Kernel], colls: &[Coll], sequence: &[usize]) -> Value {
    let per_rank = nccl.len() / N;
    let list: Vec<Value> = (0..per_rank)
        .map(|k| {
            let ks: Vec<&Kernel> = (0..N).map(|r| nccl[r * per_rank + k]).collect();
            let c = &colls[sequence[k]];
            let latest = ks.iter().map(|k| k.start).max().unwrap();
            let end = ks.iter().map(|k| k.end).max().unwrap();
            let Some(recorded) = c.recorded else {
                return json!({
                    "instance": k + 1,
                    "op": c.op,
                    "recorded_bytes": null,
                    "bytes": null,
                    "factor": null,
                    "transfer_ns": end - latest,
                    "algbw_gbps": null,
                    "busbw_gbps": null,
                    "naive_gbps": null,
                });
            };
            let (bytes, factor) = nccl_tests(c.op, recorded, N);
            let algbw = bytes as f64 / (end - latest) as f64;
            let naive: Vec<f64> = ks
                .iter()
                .map(|k| bytes as f64 / (k.end - k.start) as f64)
                .collect();
            json!({
                "instance": k + 1,
                "op": c.op,
                "recorded_bytes": recorded,
                "bytes": bytes,
                "factor": factor,
                "transfer_ns": end - latest,
                "algbw_gbps": algbw,
                "busbw_gbps": algbw * factor,
                "naive_gbps": naive,
            })
        })
        .collect();
    Value::Array(list)
}

/// The schema tables and each range's payload, after the event tables.
pub fn extra(blobs: &[(i64, i64, Vec<u8>)], tx: &Transaction) -> rusqlite::Result<()> {
    tx.execute_batch(SCHEMA_SQL)?;
    let mut st = tx.prepare(
        "UPDATE NVTX_EVENTS SET binaryData = ?3 WHERE start = ?1 AND globalTid = ?2 AND domainId = 1",
    )?;
    for (start, tid, blob) in blobs {
        let n = st.execute(params![start, tid, blob])?;
        assert_eq!(n, 1, "one NCCL API range at {start}");
    }
    Ok(())
}
