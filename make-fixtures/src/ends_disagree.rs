//! A capture whose collective ends disagree (`fixtures/ends_disagree/node0..1.sqlite`): two
//! nodes × 2 GPUs running a tree AllReduce whose ranks leave up to 9 ms apart on most
//! instances (within 4 µs on the others), so refining the clocks from the ends must be refused
//! and the UTC alignment kept.

use serde_json::{Value, json};

use crate::assemble::*;
use crate::clock::{Capture, FileClock};
use crate::model::*;
use crate::names::{self, Compute};
use crate::plan::Phase;
use crate::rng::Rng;
use crate::sim::{Member, StepLoop, US, member};
use crate::truth_clock::{File, GroupDef, Member as GMember};

pub const DIR: &str = "fixtures/ends_disagree";
const NODES: usize = 2;
const GPUS: usize = 2;
const S_COMPUTE: u32 = 7;
const S_NCCL: u32 = 21;
const STEPS: usize = 24;
const MS: i64 = 1_000_000;
const PERIOD: i64 = 1_000 * MS;
const T_FIRST: i64 = 2_700_000 * MS;
/// Every instance whose 0-based number is a multiple of this has ends that agree.
const AGREE_EVERY: usize = 3;

pub fn host(n: usize) -> String {
    format!("tree{n}.cluster.example")
}

pub fn path(n: usize) -> String {
    format!("{DIR}/node{n}.sqlite")
}

pub fn build(rng: &mut Rng) -> (Vec<File>, Vec<GroupDef>, Value) {
    let n_ranks = NODES * GPUS;
    let ranks: Vec<Rank> = (0..n_ranks)
        .map(|r| Rank {
            pid: 7_100 + r as u32,
            device: (r % GPUS) as u32,
            context_id: (r % GPUS) as u32 + 1,
        })
        .collect();
    let mut sim = StepLoop::new(ranks.clone(), vec![S_COMPUTE; n_ranks]);
    let ar = names::nccl("AllReduce", Some("f32"), "TREE", "SIMPLE");
    sim.init_calls(T_FIRST - 100 * MS, rng);
    for s in 0..STEPS {
        let g = T_FIRST + s as i64 * PERIOD;
        let phase = Some(Phase { step: s, sub: None });
        sim.step_start(g, rng, phase);
        for r in 0..n_ranks {
            let d = rng.us(1500.0, 2500.0);
            sim.compute(r, 0, d, Compute::Xmma, false, rng, phase);
        }
        sim.end_spread_us = if s % AGREE_EVERY == 0 { 4.0 } else { 9000.0 };
        let ms: Vec<Member> = (0..n_ranks).map(|r| member(r, S_NCCL)).collect();
        let base = sim.ready.iter().max().unwrap() + 30 * US;
        let se = sim.collective(&ms, base, 1500.0, (1500.0, 2000.0), &ar, rng, phase);
        let mut after = vec![];
        for (r, x) in se.iter().enumerate() {
            sim.ready[r] = sim.ready[r].max(x.1);
            let d = rng.us(300.0, 500.0);
            after.push(sim.compute(r, 0, d, Compute::Adam, false, rng, phase).1);
        }
        sim.step_end(rng, phase, &after);
    }
    let mut outs: Vec<_> = sim
        .plans
        .into_iter()
        .map(|p| p.finish(1, "train_step", &[], rng))
        .collect();
    let mut urng = Rng::new(0x0DD5_EED6);
    let clocks = [
        (0, 400_000_i64, 0),
        (5 * 3_600_000 * MS + 271_828_183, -3_200_000, 120 * MS),
    ];
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
                streams: vec![(S_COMPUTE, 3, 0), (S_NCCL, 2, 0)],
            };
            let th = threads(rk.pid, &[(0, "python3")]);
            p.processes.push(process(rk.pid, "python3", th, Some(ctx)));
        }
        let rest = outs.split_off(GPUS);
        merge(&mut p, std::mem::replace(&mut outs, rest));
        let (off, utc_err, after) = clocks[n];
        let session = T_FIRST - 1_000 * MS + after;
        let mut clock = FileClock::boot(session, off, 0.0, utc_err);
        clock.stop_true = crate::clock::event_span(&p).1 + 500 * MS;
        files.push(File {
            profile: p,
            clock,
            ranks: vec![],
        });
    }
    let groups = vec![GroupDef {
        key: format!("s{S_NCCL}"),
        global: true,
        members: (0..n_ranks)
            .map(|r| GMember {
                file: r / GPUS,
                device: (r % GPUS) as u32,
                stream: S_NCCL,
            })
            .collect(),
    }];
    let scenario = json!({
        "description": "2 nodes x 2 GPUs, one file per node; 24 AllReduce f32 TREE/SIMPLE on stream 21, one per second; on instances 1, 4, 7, ... the ranks leave within 4 us, on all others up to 9 ms apart, so the ends cannot refine the clocks",
        "files": (0..NODES).map(path).collect::<Vec<_>>(),
        "hosts": (0..NODES).map(host).collect::<Vec<_>>(),
    });
    (files, groups, scenario)
}

pub fn capture(n: usize) -> Capture {
    Capture {
        command: "torchrun",
        arguments: vec![
            "--nnodes=2".into(),
            "--nproc_per_node=2".into(),
            format!("--node_rank={n}"),
            "allreduce_bench.py".into(),
        ],
        environment: vec![("CUDA_VISIBLE_DEVICES".into(), "0,1".into())],
        session_uuid: format!("a4e2b9d0-1c7f-4e35-b6a8-3f9d0e1c5b{n:02}"),
    }
}
