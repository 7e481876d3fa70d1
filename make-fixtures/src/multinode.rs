//! Multi-node scenario, one file per node (`fixtures/multinode/node0..3.sqlite`): 4 nodes × 4
//! GPUs, one process per GPU, boot clocks hours apart, UTC stamps off by ms, drift of a few ppm
//! on two nodes over a 60+ s capture (mostly idle between steps).
//!
//! Each step: a node-local AllReduce on stream 37 of every node (four communicators sharing one
//! stream id), then a global AllGather and a global AllReduce on stream 29 (all 16 ranks).
//! Ranks arrive spread by ms and leave within 4 µs. Events: single late ranks (global and
//! node-local) and a whole-node late event (every rank of node02 ≥ 20 ms after every other).

use serde_json::{Value, json};

use crate::assemble::*;
use crate::clock::{Capture, FileClock};
use crate::model::*;
use crate::names::{self, Compute};
use crate::plan::Phase;
use crate::rng::Rng;
use crate::sim::{Member, StepLoop, US, member};
use crate::truth_basic::{Dev, Input};
use crate::truth_clock::{File, GroupDef, Member as GMember};
use crate::truth_skew::GroupSpec;

pub const DIR: &str = "fixtures/multinode";
const NODES: usize = 4;
const GPUS: usize = 4;
const S_COMPUTE: u32 = 7;
const S_GLOBAL: u32 = 29;
const S_LOCAL: u32 = 37;
const STEPS: usize = 12;
const MS: i64 = 1_000_000;
/// Steps start every 5.5 s: 12 steps span 60.5+ s.
const PERIOD: i64 = 5_500 * MS;
/// True time of the first step: 1 h 30 min after the reference node booted.
const T_FIRST: i64 = 5_400_000 * MS;
const STEP_NAME: &str = "train_step";

/// (boot offset against node00, drift ppm, UTC stamp error, capture start after node00's).
const CLOCKS: [(i64, f64, i64, i64); NODES] = [
    (0, 0.0, 1_300_000, 0),
    (
        3 * 3_600_000 * MS + 12 * 60_000 * MS + 417_123_457,
        4.0,
        -4_100_000,
        310 * MS,
    ),
    (
        27 * 3_600_000 * MS + 3_000 * MS + 98_765_433,
        -2.5,
        6_800_000,
        740 * MS,
    ),
    (
        -(3_600_000 * MS) - 5 * 60_000 * MS - 333_333_331,
        0.0,
        -2_500_000,
        95 * MS,
    ),
];
/// Global instances (AllGather = 2·step, AllReduce = 2·step + 1, 0-based) with one late rank:
/// (instance, rank, extra lateness ms).
const LATE_GLOBAL: [(usize, usize, i64); 2] = [(9, 6, 25), (21, 13, 30)];
/// The global instance where every rank of node 2 is late, and by how much (ms).
const LATE_NODE: (usize, usize, i64) = (14, 2, 24);
/// Node-local instances with one late rank: (step, node, gpu, ms).
const LATE_LOCAL: [(usize, usize, usize, i64); 1] = [(7, 1, 3, 22)];

pub fn host(n: usize) -> String {
    format!("node{n:02}.cluster.example")
}

fn pid(n: usize, g: usize) -> u32 {
    [41_207, 39_880, 52_013, 40_561][n] + g as u32 * 7
}

pub fn path(n: usize) -> String {
    format!("{DIR}/node{n}.sqlite")
}

pub fn build(rng: &mut Rng) -> (Vec<File>, Vec<GroupDef>, Value) {
    let ranks: Vec<Rank> = (0..NODES * GPUS)
        .map(|r| Rank {
            pid: pid(r / GPUS, r % GPUS),
            device: (r % GPUS) as u32,
            context_id: (r % GPUS) as u32 + 1,
        })
        .collect();
    let n_ranks = ranks.len();
    let mut sim = StepLoop::new(ranks.clone(), vec![S_COMPUTE; n_ranks]);
    sim.end_spread_us = 4.0;
    let ag = names::nccl("AllGather", None, "RING", "SIMPLE");
    let ar = names::nccl("AllReduce", Some("bf16"), "RING", "LL128");
    let local_ar = names::nccl("AllReduce", Some("f32"), "RING", "LL");
    sim.init_calls(T_FIRST - 200 * MS, rng);
    let mut global_n = 0;
    for s in 0..STEPS {
        let g = T_FIRST + s as i64 * PERIOD;
        let fwd = Some(Phase {
            step: s,
            sub: Some(0),
        });
        let bwd = Some(Phase {
            step: s,
            sub: Some(1),
        });
        for r in 0..n_ranks {
            let d = rng.us(1500.0, 2500.0);
            sim.compute(r, g, d, Compute::Xmma, false, rng, fwd);
        }
        // node-local AllReduce, one communicator per node on the same stream id
        for n in 0..NODES {
            let mut ms: Vec<Member> = (0..GPUS).map(|g| member(n * GPUS + g, S_LOCAL)).collect();
            for &(ls, ln, lg, late) in &LATE_LOCAL {
                if (ls, ln) == (s, n) {
                    ms[lg].late = late * MS;
                }
            }
            let base = (n * GPUS..(n + 1) * GPUS)
                .map(|r| sim.ready[r])
                .max()
                .unwrap()
                + 30 * US;
            let se = sim.collective(&ms, base, 1200.0, (400.0, 700.0), &local_ar, rng, fwd);
            for (m, x) in ms.iter().zip(&se) {
                sim.ready[m.rank] = sim.ready[m.rank].max(x.1);
            }
        }
        for (op, phase) in [(&ag, fwd), (&ar, bwd)] {
            let mut ms: Vec<Member> = (0..n_ranks).map(|r| member(r, S_GLOBAL)).collect();
            for &(i, r, late) in &LATE_GLOBAL {
                if i == global_n {
                    ms[r].late = late * MS;
                }
            }
            if LATE_NODE.0 == global_n {
                for g in 0..GPUS {
                    ms[LATE_NODE.1 * GPUS + g].late = LATE_NODE.2 * MS;
                }
            }
            let base = sim.ready.iter().max().unwrap() + 30 * US;
            let se = sim.collective(&ms, base, 2500.0, (900.0, 1400.0), op, rng, phase);
            for (m, x) in ms.iter().zip(&se) {
                sim.ready[m.rank] = sim.ready[m.rank].max(x.1);
            }
            global_n += 1;
        }
        let mut after = vec![];
        for r in 0..n_ranks {
            let d = rng.us(300.0, 500.0);
            let (_, e) = sim.compute(r, 0, d, Compute::Adam, false, rng, bwd);
            after.push(e);
        }
        sim.step_end(rng, Some(Phase { step: s, sub: None }), &after);
    }
    let mut outs: Vec<_> = sim
        .plans
        .into_iter()
        .map(|p| p.finish(1, STEP_NAME, &["forward", "backward"], rng))
        .collect();

    let mut urng = Rng::new(0x0DD5_EED4);
    let mut files = vec![];
    for n in 0..NODES {
        let mut p = Profile {
            path: path(n),
            host: host(n),
            ..Default::default()
        };
        for g in 0..GPUS as u32 {
            p.gpus.push(h100(g, DGX_BUS[g as usize], uuid(&mut urng)));
        }
        for rk in &ranks[n * GPUS..(n + 1) * GPUS] {
            let ctx = Context {
                device: rk.device,
                context_id: rk.context_id,
                null_stream: S_COMPUTE,
                streams: vec![(S_COMPUTE, 3, 0), (S_LOCAL, 2, 0), (S_GLOBAL, 2, 0)],
            };
            let th = threads(rk.pid, &[(0, "python3"), (23, "pt_nccl_watchdg")]);
            p.processes.push(process(rk.pid, "python3", th, Some(ctx)));
        }
        let rest = outs.split_off(GPUS);
        merge(&mut p, std::mem::replace(&mut outs, rest));
        let (off, drift, utc_err, start_after) = CLOCKS[n];
        let session = T_FIRST - 2_000 * MS + start_after;
        let mut clock = FileClock::boot(session, off, drift, utc_err);
        let (first, last) = crate::clock::event_span(&p);
        assert!(first > session, "events before the capture started");
        clock.stop_true = last + 800 * MS + start_after;
        files.push(File {
            profile: p,
            clock,
            ranks: vec![],
        });
    }
    let mut groups = vec![GroupDef {
        key: format!("s{S_GLOBAL}"),
        global: true,
        members: (0..n_ranks)
            .map(|r| GMember {
                file: r / GPUS,
                device: (r % GPUS) as u32,
                stream: S_GLOBAL,
            })
            .collect(),
    }];
    for n in 0..NODES {
        groups.push(GroupDef {
            key: format!("s{S_LOCAL}/{}", n + 1),
            global: false,
            members: (0..GPUS)
                .map(|g| GMember {
                    file: n,
                    device: g as u32,
                    stream: S_LOCAL,
                })
                .collect(),
        });
    }
    let scenario = json!({
        "description": "4 nodes x 4 GPUs, one file per node, one process per GPU; per step a node-local AllReduce f32 on stream 37 (one communicator per node, same stream id on every node) then a global AllGather and AllReduce bf16 on stream 29 (all 16 ranks); ranks arrive up to 2.5 ms apart and leave within 4 us; 12 steps every 5.5 s",
        "files": (0..NODES).map(path).collect::<Vec<_>>(),
        "hosts": (0..NODES).map(host).collect::<Vec<_>>(),
        "late_global_instances": LATE_GLOBAL.iter().map(|l| json!({"instance": l.0 + 1, "rank": l.1, "late_ms": l.2})).collect::<Vec<_>>(),
        "late_node_instance": {"instance": LATE_NODE.0 + 1, "host": host(LATE_NODE.1), "late_ms": LATE_NODE.2},
        "late_local": LATE_LOCAL.iter().map(|l| json!({"group": format!("s{S_LOCAL}/{}", l.1 + 1), "instance": l.0 + 1, "device": l.2, "late_ms": l.3})).collect::<Vec<_>>(),
        "note": "instance numbers are 1-based in order of earliest start; global rank r is GPU r % 4 of node r / 4 (no rank is recorded in the capture environment: torchrun is the profiled command)",
    });
    (files, groups, scenario)
}

/// The capture metadata of node `n`: nsys launched torchrun, so no RANK in its environment.
pub fn capture(n: usize) -> Capture {
    Capture {
        command: "torchrun",
        arguments: vec![
            "--nnodes=4".into(),
            "--nproc_per_node=4".into(),
            format!("--node_rank={n}"),
            "--rdzv_endpoint=node00.cluster.example:29500".into(),
            "train.py".into(),
        ],
        environment: vec![
            ("CUDA_VISIBLE_DEVICES".into(), "0,1,2,3".into()),
            ("NCCL_VERSION".into(), "2.25.1-1".into()),
            ("HOME".into(), "/home/alice".into()),
        ],
        session_uuid: format!("6b1f3c2e-90aa-4d7e-8c11-5e0d2a7f4c{n:02}"),
    }
}

/// The groups as the issue-3 oracle takes them, device keys `host:id`.
fn specs(groups: &[GroupDef]) -> Vec<GroupSpec> {
    groups
        .iter()
        .map(|g| GroupSpec {
            key: g.key.clone(),
            members: g
                .members
                .iter()
                .map(|m| {
                    let d = Dev {
                        host: host(m.file),
                        id: m.device,
                        file: m.file,
                    };
                    (d, m.stream)
                })
                .collect(),
        })
        .collect()
}

/// The existing skew oracle over the true-time files (device keys `host:id`).
pub fn single_clock_skew(files: &[File], groups: &[GroupDef]) -> Value {
    let inp = Input::new(files.iter().map(|f| &f.profile).collect());
    crate::truth_skew::sections(&inp, &specs(groups)).skew
}

/// Thresholds of the launch truth: rankline's default `--big-skew-ms`, and 1 ms, which makes
/// big events of the ordinary few-ms arrival spread too.
const LAUNCH_BIG_SKEW_MS: [f64; 2] = [crate::truth_skew::BIG_SKEW_MS, 1.0];

/// The issue-3 launch oracle over the true-time files: for each threshold, the late rank of
/// every instance whose start skew exceeds it, its launch call against the earliest other
/// rank's start, all on the generator's one true clock (truth_clock.rs describes the fields).
pub fn single_clock_launch(files: &[File], groups: &[GroupDef]) -> Value {
    let inp = Input::new(files.iter().map(|f| &f.profile).collect());
    let specs = specs(groups);
    let at = |big_ms: f64| {
        let late: Vec<Value> = crate::truth_skew::late_launches_at(&inp, &specs, big_ms)
            .into_iter()
            .map(|l| {
                let mut v = l.json;
                v["signed_cpu_delay_ms"] = json!(l.signed_delay_ns.map(crate::stats::ms));
                v["late_by_ms"] = json!(crate::stats::ms(l.late_by_ns));
                v
            })
            .collect();
        json!({"big_skew_ms": big_ms, "late_instances": late})
    };
    json!(LAUNCH_BIG_SKEW_MS.map(at))
}
