//! Small single-host fixtures for the cross-rank matching of issue 3:
//! a rank with an extra collective, stream ids that differ across ranks, and two
//! communicators sharing one stream id.

use serde_json::{Value, json};

use crate::assemble::*;
use crate::model::*;
use crate::names::{self, Compute};
use crate::plan::Phase;
use crate::rng::Rng;
use crate::sim::{Member, StepLoop, US, member};
use crate::truth_basic::Dev;
use crate::truth_skew::GroupSpec;

pub struct Fixture {
    pub profile: Profile,
    pub groups: Vec<GroupSpec>,
    /// Groups that must NOT be end-aligned (a split must be real).
    pub unaligned: Vec<GroupSpec>,
    pub scenario: Value,
}

pub(crate) fn dev(host: &str, id: u32) -> Dev {
    Dev {
        host: host.to_string(),
        id,
        file: 0,
    }
}

pub(crate) fn ranks(pid0: u32, n: u32) -> Vec<Rank> {
    (0..n)
        .map(|d| Rank {
            pid: pid0 + d,
            device: d,
            context_id: d + 1,
        })
        .collect()
}

/// Finishes the plans and lays out the profile: one process per rank, GPUs 0..n listed.
pub(crate) fn profile(
    path: &str,
    host: &str,
    sim: StepLoop,
    streams: &[Vec<u32>],
    step: &str,
    (t0, end): (i64, i64),
    rng: &mut Rng,
) -> Profile {
    let ranks = sim.ranks.clone();
    let mut outs = vec![];
    for (plan, rk) in sim.plans.into_iter().zip(&ranks) {
        let mut plan = plan;
        plan.other_calls = watchdog_calls(rk.pid, rk.pid + 23, t0, end - 2_000 * US, rng);
        outs.push(plan.finish(1, step, &["forward", "backward"], rng));
    }
    let mut p = Profile {
        path: path.into(),
        host: host.into(),
        ..Default::default()
    };
    let mut urng = Rng::new(path.len() as u64 * 7919);
    for rk in &ranks {
        p.gpus.push(h100(
            rk.device,
            DGX_BUS[rk.device as usize],
            uuid(&mut urng),
        ));
        let mut st = vec![(7, 3, 0)];
        st.extend(
            streams[rk.device as usize]
                .iter()
                .filter(|&&s| s != 7)
                .map(|&s| (s, 2, 0)),
        );
        let ctx = Context {
            device: rk.device,
            context_id: rk.context_id,
            null_stream: 7,
            streams: st,
        };
        let th = threads(rk.pid, &[(0, "python3"), (23, "pt_nccl_watchdg")]);
        p.processes.push(process(rk.pid, "python3", th, Some(ctx)));
    }
    merge(&mut p, outs);
    p
}

/// 4 GPUs, 2 steps of [AllGather, ReduceScatter] x 3 on stream 20; device 2 runs one extra
/// AllReduce after position 4, so position 5 is AllReduce on device 2 and AllGather elsewhere.
pub fn mismatch(rng: &mut Rng) -> Fixture {
    const PATH: &str = "fixtures/mismatch_extra_collective.sqlite";
    const HOST: &str = "dgx-b07";
    let mut sim = StepLoop::new(ranks(5201, 4), vec![7; 4]);
    let ag = names::nccl("AllGather", None, "RING", "LL");
    let rs = names::nccl("ReduceScatter", Some("bf16"), "RING", "LL");
    let ar = names::nccl("AllReduce", Some("f32"), "RING", "LL");
    let t0 = 4_000_000_000;
    let mut g = t0 + 15_000 * US;
    sim.init_calls(g - 1_000_000, rng);
    let mut end = 0;
    for s in 0..2 {
        sim.step_start(g, rng, Some(Phase { step: s, sub: None }));
        let mut after = vec![0; 4];
        for pos in 0..6 {
            let ph = Some(Phase {
                step: s,
                sub: Some(pos / 3),
            });
            for (r, &a) in after.iter().enumerate() {
                let d = rng.us(700.0, 1300.0);
                sim.compute(r, a, d, Compute::Xmma, false, rng, ph);
            }
            let base = sim.ready.iter().max().unwrap() + 30 * US;
            let coll = if pos % 2 == 0 { &ag } else { &rs };
            let all: Vec<Member> = (0..4).map(|r| member(r, 20)).collect();
            let se = sim.collective(&all, base, 1500.0, (400.0, 700.0), coll, rng, ph);
            for (r, x) in se.iter().enumerate() {
                after[r] = x.1;
                if pos % 2 == 0 {
                    let d = rng.us(300.0, 900.0);
                    sim.compute(r, x.0 + 20 * US, d, Compute::Elementwise, false, rng, ph);
                }
            }
            if s == 0 && pos == 3 {
                // the extra collective, on device 2 only
                let base = after[2] + 200 * US;
                let se = sim.collective(&[member(2, 20)], base, 50.0, (250.0, 400.0), &ar, rng, ph);
                after[2] = se[0].1;
            }
        }
        end = sim.step_end(rng, Some(Phase { step: s, sub: None }), &after);
        g = end + rng.us(1500.0, 2500.0);
    }
    let profile = profile(
        PATH,
        HOST,
        sim,
        &vec![vec![20]; 4],
        "train_step",
        (t0 + 12_000 * US, end),
        rng,
    );
    let members = (0..4).map(|d| (dev(HOST, d), 20)).collect();
    Fixture {
        profile,
        groups: vec![GroupSpec {
            key: "s20".into(),
            members,
        }],
        unaligned: vec![],
        scenario: json!({
            "description": "4 GPUs, one process each; stream 20 carries [AllGather, ReduceScatter bf16] x 3 per step for 2 steps (12 collectives); device 2 launched one extra AllReduce f32 after position 4 in step 0 (13 collectives). The desync is at instance 5: AllGather on devices 0, 1, 3, AllReduce on device 2; only the consistent prefix (4 instances) is matched.",
            "host": HOST,
            "pids": {"0": 5201, "1": 5202, "2": 5203, "3": 5204},
            "nccl_kernels_per_device": {"0": 12, "1": 12, "2": 13, "3": 12},
            "expected_desync": {"instance": 5, "ops": {"AllGather": [0, 1, 3], "AllReduce": [2]}},
        }),
    }
}

/// 2 GPUs whose NCCL streams have different ids: device 0 uses streams 13 (AllReduce) and 21
/// (AllGather/ReduceScatter), device 1 uses 17 and 25; device 1 computes on stream 13.
/// One AllReduce is 25 ms late on device 1 and has no launch call (verdict unknown).
pub fn stream_ids(rng: &mut Rng) -> Fixture {
    const PATH: &str = "fixtures/stream_ids_differ.sqlite";
    const HOST: &str = "gpu-c12";
    let compute = [7, 13];
    let ar_s = [13, 17];
    let ag_s = [21, 25];
    let mut sim = StepLoop::new(ranks(7301, 2), compute.to_vec());
    let ag = names::nccl("AllGather", None, "RING", "LL");
    let rs = names::nccl("ReduceScatter", Some("bf16"), "RING", "LL");
    let ar = names::nccl("AllReduce", Some("bf16"), "RING", "LL");
    let t0 = 7_000_000_000;
    let mut g = t0 + 15_000 * US;
    sim.init_calls(g - 1_000_000, rng);
    let mut end = 0;
    let mut late_ns = 0;
    for s in 0..2 {
        sim.step_start(g, rng, Some(Phase { step: s, sub: None }));
        let mut after = vec![0i64; 2];
        // (collective, streams, sub-phase)
        let plan: [(&_, [u32; 2], usize); 5] = [
            (&ar, ar_s, 0),
            (&ag, ag_s, 0),
            (&rs, ag_s, 1),
            (&ar, ar_s, 1),
            (&ar, ar_s, 1),
        ];
        for (pos, (coll, streams, sub)) in plan.into_iter().enumerate() {
            let ph = Some(Phase {
                step: s,
                sub: Some(sub),
            });
            for (r, &a) in after.iter().enumerate() {
                let d = rng.us(700.0, 1300.0);
                // the window starts mid-launch: the first kernel of each device has no launch call
                let orphan = s == 0 && pos == 0;
                sim.compute(r, a, d, Compute::Xmma, orphan, rng, ph);
            }
            let base = sim.ready.iter().max().unwrap() + 30 * US;
            let mut m: Vec<Member> = (0..2).map(|r| member(r, streams[r])).collect();
            if s == 1 && pos == 3 {
                m[1].late = 25_000 * US;
                m[1].orphan = true;
            }
            let se = sim.collective(&m, base, 1500.0, (1000.0, 1300.0), coll, rng, ph);
            if m[1].late > 0 {
                late_ns = se[1].0 - se[0].0;
            }
            for (r, x) in se.iter().enumerate() {
                after[r] = x.1;
                if pos == 1 {
                    let d = rng.us(300.0, 900.0);
                    sim.compute(r, x.0 + 20 * US, d, Compute::Elementwise, false, rng, ph);
                }
            }
        }
        end = sim.step_end(rng, Some(Phase { step: s, sub: None }), &after);
        g = end + rng.us(1500.0, 2500.0);
    }
    let streams = vec![vec![ar_s[0], ag_s[0]], vec![compute[1], ar_s[1], ag_s[1]]];
    let profile = profile(
        PATH,
        HOST,
        sim,
        &streams,
        "train_iter",
        (t0 + 12_000 * US, end),
        rng,
    );
    let group = |s: [u32; 2]| GroupSpec {
        key: format!("s{}+s{}", s[0], s[1]),
        members: vec![(dev(HOST, 0), s[0]), (dev(HOST, 1), s[1])],
    };
    Fixture {
        profile,
        groups: vec![group(ar_s), group(ag_s)],
        unaligned: vec![],
        scenario: json!({
            "description": "2 GPUs, one process each, NCCL stream ids differ across ranks. Device 0: compute stream 7, AllReduce bf16 on stream 13, AllGather/ReduceScatter on stream 21. Device 1: compute stream 13 (same id as device 0's AllReduce stream, unrelated), AllReduce on 17, AllGather/ReduceScatter on 25. Pairing by longest common prefix of collective-type sequences: 13<->17 (6 x AllReduce), 21<->25 (AllGather, ReduceScatter, AllGather, ReduceScatter). Step markers: NVTX 'train_iter'. The 5th AllReduce (step 1) is late on device 1 and that kernel has no launch call: verdict unknown, step taken from the instance's earliest start. The first compute kernel on each device also has no launch call (3 kernels without launch in all).",
            "host": HOST,
            "pids": {"0": 7301, "1": 7302},
            "late_event": {"group": "s13+s17", "instance": 5, "late_device": 1, "start_skew_ns": late_ns, "verdict": "unknown"},
        }),
    }
}

/// 4 GPUs; devices {0,1} and {2,3} are two communicators that both use stream id 20. Each runs
/// 8 AllReduce; ends agree within a communicator but not across (offsets of 2.5-6 ms).
pub fn two_comms(rng: &mut Rng) -> Fixture {
    const PATH: &str = "fixtures/shared_stream_two_comms.sqlite";
    const HOST: &str = "dgx-c03";
    let mut sim = StepLoop::new(ranks(6101, 4), vec![7; 4]);
    let ar = names::nccl("AllReduce", Some("bf16"), "RING", "LL");
    let t0 = 6_000_000_000;
    let mut g = t0 + 15_000 * US;
    sim.init_calls(g - 1_000_000, rng);
    let mut end = 0;
    for s in 0..2 {
        sim.step_start(g, rng, Some(Phase { step: s, sub: None }));
        let mut after = vec![0i64; 4];
        for pos in 0..4 {
            let ph = Some(Phase {
                step: s,
                sub: Some(pos / 2),
            });
            for (r, &a) in after.iter().enumerate() {
                let d = rng.us(700.0, 1300.0);
                sim.compute(r, a, d, Compute::Nvjet, false, rng, ph);
            }
            let base_a = sim.ready[0].max(sim.ready[1]) + 30 * US;
            let base_b = sim.ready[2].max(sim.ready[3]) + 30 * US + rng.us(2500.0, 6000.0);
            for (comm, base) in [([0, 1], base_a), ([2, 3], base_b)] {
                let m: Vec<Member> = comm.iter().map(|&r| member(r, 20)).collect();
                let se = sim.collective(&m, base, 1500.0, (900.0, 1200.0), &ar, rng, ph);
                for (&r, x) in comm.iter().zip(&se) {
                    after[r] = x.1;
                    if pos % 2 == 0 {
                        let d = rng.us(300.0, 900.0);
                        sim.compute(r, x.0 + 20 * US, d, Compute::Elementwise, false, rng, ph);
                    }
                }
            }
        }
        end = sim.step_end(rng, Some(Phase { step: s, sub: None }), &after);
        g = end + rng.us(1500.0, 2500.0);
    }
    let profile = profile(
        PATH,
        HOST,
        sim,
        &vec![vec![20]; 4],
        "train_step",
        (t0 + 12_000 * US, end),
        rng,
    );
    let group = |a: u32, b: u32| GroupSpec {
        key: format!("s20/{}", a / 2 + 1),
        members: vec![(dev(HOST, a), 20), (dev(HOST, b), 20)],
    };
    Fixture {
        profile,
        groups: vec![group(0, 1), group(2, 3)],
        unaligned: vec![GroupSpec {
            key: "s20".into(),
            members: (0..4).map(|d| (dev(HOST, d), 20)).collect(),
        }],
        scenario: json!({
            "description": "4 GPUs, one process each; two communicators {0,1} and {2,3} both run 8 AllReduce bf16 on stream id 20 (4 per step, 2 steps). Sequences agree (same count and types) but the 4-device group's ends are not aligned (communicator {2,3} runs 2.5-6 ms later each time); within each communicator ends are aligned. Expected: two groups, keyed 's20/1' and 's20/2' in order of their first device (the plain 's20' key would not be unique).",
            "host": HOST,
            "pids": {"0": 6101, "1": 6102, "2": 6103, "3": 6104},
            "communicators": [[0, 1], [2, 3]],
        }),
    }
}

/// The oracle's results must show what each fixture was designed for.
pub fn check(name: &str, t: &Value) {
    let groups = t["skew"]["groups"].as_array().unwrap();
    match name {
        "mismatch_extra_collective" => {
            assert_eq!(groups.len(), 1);
            assert_eq!(groups[0]["sequence_consistent"], false);
            assert_eq!(groups[0]["instances"], 4);
            assert_eq!(
                groups[0]["desync"],
                json!({"instance": 5, "ops": {"AllGather": [0, 1, 3], "AllReduce": [2]}})
            );
            assert_eq!(t["anomalies"]["rows"], 0);
        }
        "stream_ids_differ" => {
            assert_eq!(groups.len(), 2);
            assert_eq!(
                (
                    groups[0]["instances"].as_u64(),
                    groups[1]["instances"].as_u64()
                ),
                (Some(6), Some(4))
            );
            let big = groups[0]["big_events"].as_array().unwrap();
            assert_eq!(big.len(), 1);
            assert_eq!(
                (
                    big[0]["instance"].as_u64(),
                    big[0]["late_device"].as_u64(),
                    big[0]["step"].as_u64()
                ),
                (Some(5), Some(1), Some(2))
            );
            assert!(groups[1]["big_events"].as_array().unwrap().is_empty());
            assert_eq!(t["launch"]["kernels_without_launch"], 3);
            assert_eq!(t["launch"]["late_instances"][0]["verdict"], "unknown");
            assert_eq!(t["anomalies"]["rows"], 1);
        }
        "shared_stream_two_comms" => {
            assert_eq!(groups.len(), 2);
            for g in groups {
                assert_eq!(g["instances"], 8);
                assert!(g["big_events"].as_array().unwrap().is_empty());
            }
            assert_eq!(t["anomalies"]["rows"], 0);
        }
        _ => unreachable!(),
    }
}
