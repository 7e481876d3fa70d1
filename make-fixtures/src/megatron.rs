//! Scenario 1: an 8-GPU tensor-parallel Megatron step loop on one DGX H100 host, where the
//! capture lost device 0's GPU activity and four collectives have one rank 30-50 ms late.

use serde_json::{Value, json};

use crate::assemble::*;
use crate::model::*;
use crate::names::{self, Compute};
use crate::plan::{Op, Phase, RankPlan};
use crate::rng::Rng;

pub const PATH: &str = "fixtures/megatron_tp8.sqlite";
const HOST: &str = "dgx-a01";
const NRANKS: u32 = 8;
const PID0: u32 = 4101;
const STEPS: usize = 5;
const SLOTS: usize = 45;
const LATE_SLOT: usize = 10;
const S_COMPUTE: u32 = 7;
const S_MAIN: u32 = 20;
const S_SIDE: u32 = 24;
const S_AR: u32 = 28;
const BASE: i64 = 5_000_000_000;
const US: i64 = 1_000;
pub const STEP_NAME: &str = "train_step";
const SUBS: [&str; 3] = ["forward", "backward", "optimizer"];

/// (step, late device, lateness after the instance base in µs, cpu-late?)
const LATES: [(usize, u32, f64, bool); 4] = [
    (1, 2, 32_400.0, true),
    (2, 3, 41_250.0, false),
    (3, 4, 47_100.0, true),
    (4, 5, 36_800.0, false),
];

/// Main-stream collective at 1-based position `slot` of a step: 18 AllGather in forward,
/// then 9 × (AllGather, ReduceScatter, ReduceScatter) in backward.
fn is_allgather(slot: usize) -> bool {
    slot <= 18 || (slot - 19).is_multiple_of(3)
}

struct LateOut {
    step: usize,
    device: u32,
    cpu_late: bool,
    op: [usize; NRANKS as usize],
    base: i64,
}

pub fn build(rng: &mut Rng) -> (Profile, Value) {
    let ranks: Vec<Rank> = (0..NRANKS)
        .map(|d| Rank {
            pid: PID0 + d,
            device: d,
            context_id: d + 1,
        })
        .collect();
    // device 0: the capture lost its GPU activity (its calls and NVTX ranges remain)
    let mut plans: Vec<RankPlan> = ranks
        .iter()
        .map(|r| RankPlan::new(r.pid, r.pid, r.device != 0))
        .collect();
    let ag = names::nccl("AllGather", None, "RING", "LL");
    let rs = names::nccl("ReduceScatter", Some("bf16"), "RING", "LL");
    let ar = names::nccl("AllReduce", Some("f32"), "RING", "LL");
    let n = NRANKS as usize;

    let mut g = BASE + 20_000 * US;
    for p in plans.iter_mut() {
        for api in INIT_CALLS {
            let (d, gap) = (rng.us(2.0, 40.0), rng.us(200.0, 2000.0));
            p.free(g - 1_000_000, api, 0, d, gap, None);
        }
    }
    let mut late_out: Vec<LateOut> = vec![];
    let mut n_main = 0;
    let mut n_side = 0;
    let mut n_ar = 0;
    let mut global_end = 0;
    for s in 0..STEPS {
        let ph = |sub: Option<usize>| Some(Phase { step: s, sub });
        let mut c = vec![0i64; n]; // compute stream free from
        let mut e = vec![0i64; n]; // previous main collective ended at
        for (r, rk) in ranks.iter().enumerate() {
            let t0 = g + rng.us(0.0, 50.0);
            let t1 = t0 + rng.us(150.0, 200.0);
            let m = Memcpy {
                pid: rk.pid,
                device: rk.device,
                context_id: rk.context_id,
                stream: S_COMPUTE,
                start: t0,
                end: t1,
                bytes: 4 << 20,
                copy_kind: 1,
                corr: 0,
            };
            let l = launch_memcpy(rng);
            plans[r].op(Op::Memcpy(m), Some(l), ph(None));
            let t2 = t1 + rng.us(3.0, 8.0);
            let t3 = t2 + rng.us(20.0, 40.0);
            let ms = Memset {
                pid: rk.pid,
                device: rk.device,
                context_id: rk.context_id,
                stream: S_COMPUTE,
                start: t2,
                end: t3,
                bytes: 32 << 20,
                corr: 0,
            };
            let l = launch_memset(rng);
            plans[r].op(Op::Memset(ms), Some(l), ph(None));
            c[r] = t3;
            e[r] = t3;
        }
        for slot in 1..=SLOTS {
            let sub = if slot <= 18 { 0 } else { 1 };
            let coll = if is_allgather(slot) { &ag } else { &rs };
            let t = if is_allgather(slot) {
                rng.us(350.0, 650.0)
            } else {
                rng.us(500.0, 900.0)
            };
            let j: Vec<i64> = (0..n).map(|_| rng.us(0.0, 2000.0)).collect();
            let delta: Vec<i64> = (0..n).map(|_| rng.us(15.0, 120.0)).collect();
            let dprod: Vec<i64> = (0..n).map(|_| rng.us(600.0, 1600.0)).collect();
            let b = (0..n)
                .map(|r| c[r].max(e[r]) + 5 * US + delta[r] + dprod[r] - j[r])
                .max()
                .unwrap()
                + rng.us(0.0, 200.0);
            let late = LATES.iter().find(|l| l.0 == s && slot == LATE_SLOT);
            let mut starts: Vec<i64> = (0..n).map(|r| b + j[r]).collect();
            if let Some(&(_, dev, lat_us, _)) = late {
                starts[dev as usize] = b + (lat_us * 1e3) as i64;
            }
            let gemm = match (sub, slot % 2) {
                (0, 0) | (1, 1) => Compute::Xmma,
                _ => Compute::Nvjet,
            };
            let end_common = starts.iter().max().unwrap() + t;
            let mut ops = [0usize; NRANKS as usize];
            for (r, rk) in ranks.iter().enumerate() {
                let late_here = late.filter(|l| l.1 == rk.device);
                let normal_end = b + j[r] - delta[r];
                let (p0, p1) = match late_here {
                    // cpu-late: the GPU idles until the CPU finally launches the collective
                    Some(&(_, _, _, true)) => (normal_end - dprod[r], normal_end),
                    // gpu-side: the producer GEMM runs long, up to just before the collective
                    Some(&(_, _, _, false)) => {
                        (normal_end - dprod[r], starts[r] - rng.us(150.0, 600.0))
                    }
                    None => (starts[r] - delta[r] - dprod[r], starts[r] - delta[r]),
                };
                assert!(p0 >= c[r].max(e[r]) + 5 * US);
                let l = launch_compute(rng);
                plans[r].op(
                    Op::Kernel(rk.compute(S_COMPUTE, p0, p1, gemm)),
                    Some(l),
                    ph(Some(sub)),
                );
                let end = end_common + rng.us(0.0, 45.0);
                let mut l = launch_nccl(rng);
                match late_here {
                    Some(&(_, _, _, true)) => l.q = rng.us(10.0, 15.0),
                    Some(&(_, _, _, false)) => l.fixed_end = Some(b - 100 * US),
                    None => {}
                }
                ops[r] = plans[r].op(
                    Op::Kernel(rk.nccl(S_MAIN, starts[r], end, coll, 24)),
                    Some(l),
                    ph(Some(sub)),
                );
                e[r] = end;
                c[r] = p1;
                if slot % 3 != 0 {
                    let a0 = starts[r] + rng.us(10.0, 80.0);
                    let a1 = a0 + rng.us(200.0, 2200.0);
                    let kind = match (sub, slot % 3) {
                        (0, 1) => Compute::FlashFwd,
                        (1, 1) => Compute::FlashBwd,
                        _ => Compute::Elementwise,
                    };
                    let l = launch_compute(rng);
                    plans[r].op(
                        Op::Kernel(rk.compute(S_COMPUTE, a0, a1, kind)),
                        Some(l),
                        ph(Some(sub)),
                    );
                    c[r] = a1;
                }
            }
            n_main += 1;
            if let Some(&(step, device, _, cpu_late)) = late {
                late_out.push(LateOut {
                    step,
                    device,
                    cpu_late,
                    op: ops,
                    base: b,
                });
            }
            // the side stream carries one extra AllGather in steps 1 and 3
            if (s == 1 || s == 3) && slot == 30 {
                let b2 = b + 300 * US;
                let st: Vec<i64> = (0..n).map(|_| b2 + rng.us(0.0, 2000.0)).collect();
                let t2 = rng.us(400.0, 600.0);
                let end2 = st.iter().max().unwrap() + t2;
                for (r, rk) in ranks.iter().enumerate() {
                    let k = rk.nccl(S_SIDE, st[r], end2 + rng.us(0.0, 45.0), &ag, 16);
                    let l = launch_nccl(rng);
                    plans[r].op(Op::Kernel(k), Some(l), ph(Some(1)));
                }
                n_side += 1;
            }
        }
        // optimizer: two fp32 AllReduce (grad norm, loss) on the third stream, Adam on compute
        let mut ready: Vec<i64> = (0..n).map(|r| c[r].max(e[r])).collect();
        let mut b1 = ready.iter().max().unwrap() + rng.us(50.0, 150.0);
        for (round, (adam_lo, adam_hi)) in
            [(1500.0, 2500.0), (400.0, 700.0)].into_iter().enumerate()
        {
            let st: Vec<i64> = (0..n).map(|_| b1 + rng.us(0.0, 2000.0)).collect();
            let t = rng.us(900.0, 1100.0);
            let end_ar = st.iter().max().unwrap() + t;
            let mut ends = vec![0; n];
            for (r, rk) in ranks.iter().enumerate() {
                ends[r] = end_ar + rng.us(0.0, 45.0);
                let l = launch_nccl(rng);
                plans[r].op(
                    Op::Kernel(rk.nccl(S_AR, st[r], ends[r], &ar, 16)),
                    Some(l),
                    ph(Some(2)),
                );
                // round 0: Adam overlaps the first AllReduce; round 1: it waits for the second
                let a0 = if round == 0 {
                    ready[r]
                } else {
                    ready[r].max(ends[r])
                } + rng.us(20.0, 60.0);
                let a1 = a0 + rng.us(adam_lo, adam_hi);
                let l = launch_compute(rng);
                plans[r].op(
                    Op::Kernel(rk.compute(S_COMPUTE, a0, a1, Compute::Adam)),
                    Some(l),
                    ph(Some(2)),
                );
                ready[r] = a1;
            }
            n_ar += 1;
            b1 = ends.iter().max().unwrap() + rng.us(100.0, 300.0);
        }
        let mut step_end = 0;
        for (r, rk) in ranks.iter().enumerate() {
            let t0 = ready[r] + rng.us(5.0, 15.0);
            let t1 = t0 + rng.us(2.0, 4.0);
            let m = Memcpy {
                pid: rk.pid,
                device: rk.device,
                context_id: rk.context_id,
                stream: S_COMPUTE,
                start: t0,
                end: t1,
                bytes: 4,
                copy_kind: 2,
                corr: 0,
            };
            let l = launch_memcpy(rng);
            plans[r].op(Op::Memcpy(m), Some(l), ph(Some(2)));
            let sync_end = t1 + rng.us(8.0, 15.0);
            plans[r].sync(t0 + 1, "cudaStreamSynchronize_v3020", sync_end, ph(None));
            step_end = step_end.max(sync_end);
        }
        global_end = step_end;
        g = step_end + rng.us(2500.0, 3500.0);
    }

    for (p, rk) in plans.iter_mut().zip(&ranks) {
        p.other_calls = watchdog_calls(
            rk.pid,
            rk.pid + 23,
            BASE + 17_000 * US,
            global_end - 2_000 * US,
            rng,
        );
    }
    let mut outs: Vec<_> = plans
        .into_iter()
        .map(|p| p.finish(1, STEP_NAME, &SUBS, rng))
        .collect();

    // one domain create, one mark, one start/end range
    let c1 = &outs[1].calls;
    let t_dom = (c1[1].start + c1[2].start) / 2;
    outs[1].nvtx.push(Nvtx {
        pid: PID0 + 1,
        tid: PID0 + 1,
        kind: NvtxKind::DomainCreate,
        start: t_dom,
        end: None,
        text: "NCCL".into(),
        registered: false,
        domain: 1,
        range_id: None,
    });
    let stall = &late_out[0];
    let (call_start, _) =
        outs[stall.device as usize].launch_of[stall.op[stall.device as usize]].unwrap();
    outs[stall.device as usize].nvtx.push(Nvtx {
        pid: PID0 + stall.device,
        tid: PID0 + stall.device,
        kind: NvtxKind::Mark,
        start: call_start - 3_000 * US,
        end: None,
        text: "grad_scaler_update".into(),
        registered: false,
        domain: 0,
        range_id: None,
    });
    let s2 = outs[0].steps[2].0;
    outs[0].nvtx.push(Nvtx {
        pid: PID0,
        tid: PID0 + 40,
        kind: NvtxKind::StartEnd,
        start: s2 + 5_000 * US,
        end: Some(s2 + 25_000 * US),
        text: "prefetch_batch".into(),
        registered: false,
        domain: 0,
        range_id: Some(1),
    });

    // the designed late events, checked against the generated rows
    let mut late_json = vec![];
    for lo in &late_out {
        let d = lo.device as usize;
        let (_, call_end) = outs[d].launch_of[lo.op[d]].unwrap();
        late_json.push(json!({
            "step": lo.step,
            "position_in_step": LATE_SLOT,
            "s20_instance": lo.step * SLOTS + LATE_SLOT,
            "op": "AllGather",
            "late_device": lo.device,
            "designed_lateness_ms": LATES.iter().find(|l| l.0 == lo.step).unwrap().2 / 1e3,
            "instance_base_ns": lo.base,
            "launch_call_end_ns": call_end,
            "verdict": if lo.cpu_late { "cpu-late" } else { "gpu-side" },
            "why": if lo.cpu_late {
                "the rank's cuLaunchKernelEx call ends after the other ranks' kernels of the instance started (CPU stall; GPU idle before)"
            } else {
                "the launch call ended before the base time, but a long sm90_xmma GEMM on stream 7 ran until just before the NCCL kernel"
            },
        }));
    }

    let mut p = Profile {
        path: PATH.into(),
        host: HOST.into(),
        ..Default::default()
    };
    let mut urng = Rng::new(0x0DD5_EED0);
    for d in 0..NRANKS {
        p.gpus.push(h100(d, DGX_BUS[d as usize], uuid(&mut urng)));
    }
    p.processes.push(process(
        PID0 - 1,
        "torchrun",
        threads(PID0 - 1, &[(0, "torchrun")]),
        None,
    ));
    for rk in &ranks {
        let th = threads(
            rk.pid,
            &[
                (0, "python3"),
                (14, "pt_autograd_0"),
                (23, "pt_nccl_watchdg"),
                (31, "cuda-EvtHandlr"),
                (40, "pt_data_worker"),
            ],
        );
        let ctx = Context {
            device: rk.device,
            context_id: rk.context_id,
            null_stream: S_COMPUTE,
            streams: vec![
                (S_COMPUTE, 3, 0),
                (13, 1, 0),
                (S_MAIN, 2, 0),
                (S_SIDE, 2, 0),
                (S_AR, 2, 0),
            ],
        };
        p.processes.push(process(rk.pid, "python3", th, Some(ctx)));
    }
    merge(&mut p, outs);

    let scenario = json!({
        "description": "8-GPU tensor-parallel Megatron capture on one host: 8 processes (one per GPU), 5 training steps marked by top-level NVTX push/pop ranges 'train_step' on each main thread (nested 'forward', 'backward', 'optimizer' as registered strings). Device 0 has a CUDA context, runtime calls and NVTX ranges but no GPU activity (lost by the capture). Collectives: all ranks end together, the last arriver has the short kernel.",
        "host": HOST,
        "pids": ranks.iter().map(|r| json!({"device": r.device, "pid": r.pid})).collect::<Vec<_>>(),
        "other_processes": [{"pid": PID0 - 1, "name": "torchrun", "cuda_context": false}],
        "streams": {"compute": S_COMPUTE, "nccl_main": S_MAIN, "nccl_side": S_SIDE, "nccl_allreduce": S_AR},
        "steps": STEPS,
        "step_marker": STEP_NAME,
        "device_without_activity": 0,
        "instances_per_stream": {S_MAIN.to_string(): n_main, S_SIDE.to_string(): n_side, S_AR.to_string(): n_ar},
        "per_step": {
            "s20": "45 collectives: positions 1-18 AllGather (forward), then 9 x (AllGather, ReduceScatter bf16, ReduceScatter bf16) (backward) = 27 AllGather + 18 ReduceScatter",
            "s24": "one AllGather in steps 1 and 3 only (step indices 0-based)",
            "s28": "two AllReduce f32 per step (optimizer)",
        },
        "late_events": late_json,
        "correlation_ids": "restart at 1 in every process (collide across processes)",
    });
    (p, scenario)
}

/// Groups by stream id (the ids agree across ranks): devices 1-7 (device 0 recorded nothing).
pub fn groups() -> Vec<crate::truth_skew::GroupSpec> {
    [S_MAIN, S_SIDE, S_AR]
        .iter()
        .map(|&s| crate::truth_skew::GroupSpec {
            key: format!("s{s}"),
            members: (1..NRANKS)
                .map(|d| {
                    let dev = crate::truth_basic::Dev {
                        host: HOST.into(),
                        id: d,
                        file: 0,
                    };
                    (dev, s)
                })
                .collect(),
        })
        .collect()
}

/// The oracle's results must show the designed scenario.
pub fn check(t: &Value) {
    let groups = t["skew"]["groups"].as_array().unwrap();
    let count = |i: usize| groups[i]["instances"].as_u64().unwrap();
    assert_eq!((count(0), count(1), count(2)), (225, 2, 10));
    for g in groups {
        assert_eq!(g["sequence_consistent"], true);
        assert!(g["end_skew_ms"]["p90"].as_f64().unwrap() < 0.1);
    }
    let big = groups[0]["big_events"].as_array().unwrap();
    assert_eq!(big.len(), LATES.len());
    assert!(groups[1]["big_events"].as_array().unwrap().is_empty());
    assert!(groups[2]["big_events"].as_array().unwrap().is_empty());
    let late = t["launch"]["late_instances"].as_array().unwrap();
    for ((e, l), spec) in big.iter().zip(late).zip(LATES) {
        assert_eq!(e["instance"], json!(spec.0 * SLOTS + LATE_SLOT));
        assert_eq!(e["late_device"], json!(spec.1));
        assert_eq!(e["step"], json!(spec.0 + 1));
        let skew = e["start_skew_ms"].as_f64().unwrap();
        assert!((30.0..=50.0).contains(&skew), "lateness {skew}");
        assert_eq!(l["verdict"], if spec.3 { "cpu-late" } else { "gpu-side" });
        assert_eq!(l["preceding_kernel"].is_null(), spec.3);
        if !spec.3 {
            assert_eq!(l["preceding_kernel"]["name"], names::XMMA_GEMM);
            assert_eq!(l["preceding_kernel"]["stream"], S_COMPUTE);
        }
    }
    assert_eq!(t["launch"]["kernels_without_launch"], 0);
    assert_eq!(t["anomalies"]["rows"], 24);
    assert_eq!(t["anomalies"]["events"].as_array().unwrap().len(), 4);
}
