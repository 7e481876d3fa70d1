//! Two hosts (`node-a`, `node-b`), two GPUs each (ids 0 and 1 on both), one process per GPU,
//! written as two files. Each container numbers its processes alike, so the pids (3301, 3302)
//! repeat across the two files, as do the correlation ids.

use serde_json::{Value, json};

use crate::assemble::*;
use crate::model::*;
use crate::names::{self, Compute};
use crate::plan::Phase;
use crate::rng::Rng;
use crate::sim::{StepLoop, US, member};

pub const PATH_A: &str = "fixtures/two_node_a.sqlite";
pub const PATH_B: &str = "fixtures/two_node_b.sqlite";
const HOSTS: [&str; 2] = ["node-a", "node-b"];
const PIDS: [u32; 2] = [3301, 3302];
const STEP_NAME: &str = "iteration";
const S_COMPUTE: u32 = 7;
const S_NCCL: u32 = 20;

pub fn build(rng: &mut Rng) -> (Profile, Profile, Value) {
    let ranks: Vec<Rank> = (0..4)
        .map(|i| Rank {
            pid: PIDS[i % 2],
            device: (i % 2) as u32,
            context_id: (i % 2) as u32 + 1,
        })
        .collect();
    let mut sim = StepLoop::new(ranks.clone(), vec![S_COMPUTE; 4]);
    let bcast = names::nccl("Broadcast", None, "RING", "LL");
    let ar = names::nccl("AllReduce", Some("bf16"), "TREE", "LL");
    let all = |_: ()| (0..4).map(|r| member(r, S_NCCL)).collect::<Vec<_>>();
    let mut g = 3_000_000_000 + 15_000 * US;
    sim.init_calls(g - 1_000_000, rng);
    let mut last = 0;
    for s in 0..3 {
        let fwd = Some(Phase {
            step: s,
            sub: Some(0),
        });
        let bwd = Some(Phase {
            step: s,
            sub: Some(1),
        });
        sim.step_start(g, rng, Some(Phase { step: s, sub: None }));
        if s == 0 {
            let base = sim.ready.iter().max().unwrap() + 50 * US;
            let se = sim.collective(&all(()), base, 1500.0, (300.0, 500.0), &bcast, rng, fwd);
            for (r, x) in se.iter().enumerate() {
                sim.ready[r] = sim.ready[r].max(x.1);
            }
        }
        for r in 0..4 {
            let d = rng.us(1800.0, 2400.0);
            sim.compute(r, 0, d, Compute::Xmma, false, rng, fwd);
        }
        let base = sim.ready.iter().max().unwrap() + 30 * US;
        let se = sim.collective(&all(()), base, 1500.0, (1200.0, 1500.0), &ar, rng, fwd);
        for (r, x) in se.iter().enumerate() {
            // independent elementwise work overlaps the AllReduce
            let d = rng.us(600.0, 1000.0);
            sim.compute(r, x.0 + 30 * US, d, Compute::Elementwise, false, rng, fwd);
            let d = rng.us(1200.0, 1600.0);
            sim.compute(r, x.1, d, Compute::Nvjet, false, rng, bwd);
        }
        let base = sim.ready.iter().max().unwrap() + 30 * US;
        let se = sim.collective(&all(()), base, 1500.0, (1200.0, 1500.0), &ar, rng, bwd);
        let mut after = vec![];
        for (r, x) in se.iter().enumerate() {
            let d = rng.us(400.0, 600.0);
            sim.compute(r, x.1, d, Compute::Adam, false, rng, bwd);
            after.push(x.1);
        }
        last = sim.step_end(rng, Some(Phase { step: s, sub: None }), &after);
        g = last + rng.us(1500.0, 2500.0);
    }
    let mut outs = vec![];
    for (plan, rk) in sim.plans.into_iter().zip(&ranks) {
        let mut plan = plan;
        plan.other_calls = watchdog_calls(
            rk.pid,
            rk.pid + 23,
            3_000_000_000 + 13_000 * US,
            last - 2_000 * US,
            rng,
        );
        outs.push(plan.finish(1, STEP_NAME, &["forward", "backward"], rng));
    }
    let mut profiles = vec![];
    let mut urng = Rng::new(0x0DD5_EED2);
    for (h, host) in HOSTS.iter().enumerate() {
        let mut p = Profile {
            path: [PATH_A, PATH_B][h].into(),
            host: host.to_string(),
            ..Default::default()
        };
        for d in 0..2 {
            p.gpus.push(h100(d, DGX_BUS[d as usize], uuid(&mut urng)));
        }
        for rk in &ranks[2 * h..2 * h + 2] {
            let ctx = Context {
                device: rk.device,
                context_id: rk.context_id,
                null_stream: S_COMPUTE,
                streams: vec![(S_COMPUTE, 3, 0), (S_NCCL, 2, 0)],
            };
            let th = threads(rk.pid, &[(0, "python3"), (23, "pt_nccl_watchdg")]);
            p.processes.push(process(rk.pid, "python3", th, Some(ctx)));
        }
        let rest = outs.split_off(2);
        merge(&mut p, std::mem::replace(&mut outs, rest));
        profiles.push(p);
    }
    let b = profiles.pop().unwrap();
    let a = profiles.pop().unwrap();
    let scenario = json!({
        "description": "two hosts, two GPUs each, one process per GPU; world of 4 ranks: 1 Broadcast then 6 AllReduce bf16 (TREE/LL) on stream 20 of every device, GEMMs on stream 7; 3 NVTX 'iteration' ranges per process",
        "files": [PATH_A, PATH_B],
        "hosts": HOSTS,
        "pids": {"node-a:0": PIDS[0], "node-a:1": PIDS[1], "node-b:0": PIDS[0], "node-b:1": PIDS[1]},
        "note": "the same pids and correlation ids appear in both files: processes are identified per file/host",
        "instances_per_stream": {"20": 7},
    });
    (a, b, scenario)
}

/// One group: stream 20 on all four devices (stream ids agree across ranks and hosts).
pub fn groups() -> Vec<crate::truth_skew::GroupSpec> {
    let members = (0..4)
        .map(|i| {
            let d = crate::truth_basic::Dev {
                host: HOSTS[i / 2].to_string(),
                id: (i % 2) as u32,
                file: i / 2,
            };
            (d, S_NCCL)
        })
        .collect();
    vec![crate::truth_skew::GroupSpec {
        key: format!("s{S_NCCL}"),
        members,
    }]
}
