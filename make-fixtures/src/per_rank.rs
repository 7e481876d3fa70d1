//! Per-rank scenario (`fixtures/per_rank/rank0..3.sqlite`): one file per rank, each with one
//! process and one visible "device 0", two ranks per host on two hosts, session-relative
//! timestamps (as real 2024.5 per-rank exports), the rank in the capture environment, and a
//! world of 5 ranks of which rank 4's file is missing.
//!
//! Capture environment (META_DATA_CAPTURE, layout of the real 2026.2 export): rows named
//! `PROCESS_0:ENVIRONMENT_VARIABLE` with values `NAME="value"`: RANK, WORLD_SIZE, LOCAL_RANK,
//! LOCAL_WORLD_SIZE, CUDA_VISIBLE_DEVICES, MASTER_ADDR, MASTER_PORT (no SLURM_* variables).
//! GPUs: TARGET_INFO_GPU lists both GPUs of the host (ids 0 and 1, distinct uuids); only the
//! rank's own GPU has `cuDevice` 0 (the other NULL: not visible), and TARGET_INFO_CUDA_DEVICE
//! maps CUDA device 0 to it (gpuId = the physical id), so two ranks of one host both write
//! deviceId 0 in their kernels but name different GPUs.

use serde_json::{Value, json};

use crate::assemble::*;
use crate::clock::{Capture, FileClock};
use crate::model::*;
use crate::names::{self, Compute};
use crate::plan::Phase;
use crate::rng::Rng;
use crate::sim::{Member, StepLoop, US, member};
use crate::truth_clock::{File, GroupDef, Member as GMember};

pub const DIR: &str = "fixtures/per_rank";
pub const WORLD_SIZE: u32 = 5;
const RANKS: usize = 4;
const HOSTS: [&str; 2] = ["gpu07.hpc.example", "gpu08.hpc.example"];
const S_COMPUTE: u32 = 7;
const S_NCCL: u32 = 16;
const STEPS: usize = 16;
const MS: i64 = 1_000_000;
const PERIOD: i64 = 4_000 * MS;
const T_FIRST: i64 = 9_000_000 * MS;
/// Session start of each rank after rank 0's (srun starts them staggered).
const SESSION_AFTER: [i64; RANKS] = [0, 412 * MS, 1_371 * MS, 1_518 * MS];
/// Drift per host (ppm) and UTC stamp error per file (ns).
const DRIFT: [f64; 2] = [0.0, 3.5];
const UTC_ERR: [i64; RANKS] = [900_000, 1_150_000, -5_300_000, -4_950_000];
/// Host uptime at rank 0's session start (systemClockNs of a session-relative file).
const UPTIME: [i64; 2] = [7_412_345 * MS, 1_206_789 * MS];
/// (instance 0-based, rank, ms): single late ranks.
const LATE: [(usize, usize, i64); 2] = [(11, 3, 26), (24, 0, 31)];

pub fn path(r: usize) -> String {
    format!("{DIR}/rank{r}.sqlite")
}

pub fn build(rng: &mut Rng) -> (Vec<File>, Vec<GroupDef>, Value) {
    let pids = [3_317_u32, 3_318, 2_905, 2_906];
    let ranks: Vec<Rank> = pids
        .iter()
        .map(|&pid| Rank {
            pid,
            device: 0,
            context_id: 1,
        })
        .collect();
    let mut sim = StepLoop::new(ranks.clone(), vec![S_COMPUTE; RANKS]);
    sim.end_spread_us = 4.0;
    let bcast = names::nccl("Broadcast", None, "RING", "LL");
    let ar = names::nccl("AllReduce", Some("bf16"), "RING", "LL");
    let t0 = T_FIRST + SESSION_AFTER[RANKS - 1];
    sim.init_calls(t0 - 100 * MS, rng);
    let mut n = 0;
    for s in 0..STEPS {
        let g = t0 + 500 * MS + s as i64 * PERIOD;
        let fwd = Some(Phase {
            step: s,
            sub: Some(0),
        });
        let bwd = Some(Phase {
            step: s,
            sub: Some(1),
        });
        sim.step_start(g, rng, Some(Phase { step: s, sub: None }));
        let colls: Vec<(&_, _)> = if s == 0 {
            vec![(&bcast, fwd), (&ar, fwd), (&ar, bwd)]
        } else {
            vec![(&ar, fwd), (&ar, bwd)]
        };
        let mut after = vec![];
        for (c, phase) in colls {
            for r in 0..RANKS {
                let d = rng.us(1200.0, 2200.0);
                let kind = if phase == fwd {
                    Compute::Xmma
                } else {
                    Compute::Nvjet
                };
                sim.compute(r, 0, d, kind, false, rng, phase);
            }
            let mut ms: Vec<Member> = (0..RANKS).map(|r| member(r, S_NCCL)).collect();
            for &(i, r, late) in &LATE {
                if i == n {
                    ms[r].late = late * MS;
                }
            }
            let base = sim.ready.iter().max().unwrap() + 30 * US;
            let se = sim.collective(&ms, base, 2000.0, (800.0, 1300.0), c, rng, phase);
            for (m, x) in ms.iter().zip(&se) {
                sim.ready[m.rank] = sim.ready[m.rank].max(x.1);
            }
            n += 1;
        }
        for r in 0..RANKS {
            let d = rng.us(300.0, 500.0);
            after.push(sim.compute(r, 0, d, Compute::Adam, false, rng, bwd).1);
        }
        sim.step_end(rng, Some(Phase { step: s, sub: None }), &after);
    }
    let outs: Vec<_> = sim
        .plans
        .into_iter()
        .map(|p| p.finish(1, "train_step", &["forward", "backward"], rng))
        .collect();

    let mut urng = Rng::new(0x0DD5_EED5);
    let uuids: Vec<String> = (0..RANKS).map(|_| uuid(&mut urng)).collect();
    let mut files = vec![];
    for (r, out) in outs.into_iter().enumerate() {
        let h = r / 2;
        let mut p = Profile {
            path: path(r),
            host: HOSTS[h].into(),
            ..Default::default()
        };
        for g in 0..2 {
            let mut gpu = h100(g as u32, DGX_BUS[g], uuids[h * 2 + g].clone());
            gpu.cuda_id = (g == r % 2).then_some(0);
            p.gpus.push(gpu);
        }
        let ctx = Context {
            device: 0,
            context_id: 1,
            null_stream: S_COMPUTE,
            streams: vec![(S_COMPUTE, 3, 0), (S_NCCL, 2, 0)],
        };
        let pid = ranks[r].pid;
        let th = threads(pid, &[(0, "python3"), (23, "pt_nccl_watchdg")]);
        p.processes.push(process(pid, "python3", th, Some(ctx)));
        merge(&mut p, vec![out]);
        let session = T_FIRST + SESSION_AFTER[r];
        let mut clock =
            FileClock::session(session, UPTIME[h] + SESSION_AFTER[r], DRIFT[h], UTC_ERR[r]);
        let (first, last) = crate::clock::event_span(&p);
        assert!(first > session, "events before the capture started");
        clock.stop_true = last + 600 * MS;
        files.push(File {
            profile: p,
            clock,
            ranks: vec![(pid, r as u32)],
        });
    }
    let groups = vec![GroupDef {
        key: format!("s{S_NCCL}"),
        global: true,
        members: (0..RANKS)
            .map(|r| GMember {
                file: r,
                device: 0,
                stream: S_NCCL,
            })
            .collect(),
    }];
    let scenario = json!({
        "description": "one file per rank (ranks 0-3 of a world of 5; rank 4's file is missing), two ranks per host on gpu07/gpu08, each process sees its GPU as CUDA device 0; session-relative timestamps; 1 Broadcast then 32 AllReduce bf16 on stream 16 of every rank, 16 steps every 4 s",
        "files": (0..RANKS).map(path).collect::<Vec<_>>(),
        "hosts": HOSTS,
        "late": LATE.iter().map(|l| json!({"instance": l.0 + 1, "rank": l.1, "late_ms": l.2})).collect::<Vec<_>>(),
    });
    (files, groups, scenario)
}

/// The capture metadata of rank `r`.
pub fn capture(r: usize) -> Capture {
    let env = [
        ("RANK", r.to_string()),
        ("WORLD_SIZE", WORLD_SIZE.to_string()),
        ("LOCAL_RANK", (r % 2).to_string()),
        ("LOCAL_WORLD_SIZE", "2".into()),
        ("CUDA_VISIBLE_DEVICES", (r % 2).to_string()),
        ("MASTER_ADDR", HOSTS[0].into()),
        ("MASTER_PORT", "29500".into()),
    ];
    Capture {
        command: "python3",
        arguments: vec!["train.py".into(), "--config".into(), "small.yaml".into()],
        environment: env.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        session_uuid: format!("0c9e5a71-3b2d-4f60-9e8a-77d1c4b2a0{r:02}"),
    }
}
