//! Before/after pairs for `rankline diff` (issue 11): the Megatron capture
//! (`fixtures/megatron_tp8.sqlite`) is the before side of each; each after
//! side is the same job with one known change, written under
//! `fixtures/diff/` with `<name>.truth.json` beside it. The truth is
//! computed from the generator's own event lists, as for every fixture.
//!
//! - `no_big_skew`: the four late ranks arrive on time (their NCCL kernel
//!   starts with the last of the others, and every rank's kernel of the
//!   instance ends that much earlier), and the NCCL main stream has
//!   another id (21, was 20): its group pairs by op sequence, not by key.
//! - `slow_gemm`: every sm90_xmma GEMM on device 3 runs half as long
//!   again (up to 1 µs before the next work on its stream).
//! - `fewer_devices`: device 7 and its process are not in the capture.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::megatron;
use crate::model::{NvtxKind, Profile};
use crate::names::XMMA_GEMM;
use crate::rng::Rng;
use crate::stats::{ms, p50_p90_max};
use crate::truth_basic::{self, Dev, Input};
use crate::truth_skew::{self, BIG_SKEW_MS, GroupSpec};

/// The seed `fixtures()` builds the Megatron capture with.
const MEGATRON_SEED: u64 = 0x5EED_0001;
const BEFORE: &str = "fixtures/megatron_tp8.sqlite";
const HOST: &str = "dgx-a01";
const MAIN: u32 = 20;
const MAIN_AFTER: u32 = 21;
const STREAMS: [u32; 3] = [20, 24, 28];
const SLOW_DEVICE: u32 = 3;
const DROPPED_DEVICE: u32 = 7;

/// The Megatron capture, built again (the generator is deterministic).
fn megatron() -> Profile {
    megatron::build(&mut Rng::new(MEGATRON_SEED)).0
}

/// Megatron's groups: `key` → (stream, devices 1..=last).
fn groups(streams: &[(String, u32)], last: u32) -> Vec<GroupSpec> {
    streams
        .iter()
        .map(|(key, s)| GroupSpec {
            key: key.clone(),
            members: (1..=last)
                .map(|id| {
                    let dev = Dev {
                        host: HOST.into(),
                        id,
                        file: 0,
                    };
                    (dev, *s)
                })
                .collect(),
        })
        .collect()
}

fn megatron_groups(last: u32) -> Vec<GroupSpec> {
    let s: Vec<(String, u32)> = STREAMS.iter().map(|&s| (format!("s{s}"), s)).collect();
    groups(&s, last)
}

/// The late ranks arrive on time, and the main stream gets another id.
fn no_big_skew(p: &mut Profile) -> Value {
    // Instance k of the main stream is the k-th kernel of each device there.
    let mut per_dev: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    let mut order: Vec<usize> = (0..p.kernels.len())
        .filter(|&i| p.kernels[i].stream == MAIN)
        .collect();
    order.sort_by_key(|&i| (p.kernels[i].device, p.kernels[i].start));
    for i in order {
        per_dev.entry(p.kernels[i].device).or_default().push(i);
    }
    let rows: Vec<&Vec<usize>> = per_dev.values().collect();
    let instances = rows[0].len();
    let mut fixed = Vec::new();
    for k in 0..instances {
        let ks: Vec<usize> = rows.iter().map(|r| r[k]).collect();
        let late = *ks.iter().max_by_key(|&&i| p.kernels[i].start).unwrap();
        let others_last = ks
            .iter()
            .filter(|&&i| i != late)
            .map(|&i| p.kernels[i].start)
            .max()
            .unwrap();
        let skew = p.kernels[late].start - ks.iter().map(|&i| p.kernels[i].start).min().unwrap();
        if ms(skew) > BIG_SKEW_MS {
            // Nobody waits for the late rank: every rank's kernel of the
            // instance ends earlier by as much as the late one starts.
            let moved = p.kernels[late].start - others_last;
            fixed.push(json!({
                "instance": k + 1,
                "device": p.kernels[late].device,
                "moved_earlier_ms": ms(moved),
            }));
            p.kernels[late].start = others_last;
            for &i in &ks {
                p.kernels[i].end -= moved;
                assert!(p.kernels[i].end > p.kernels[i].start);
            }
        }
    }
    assert_eq!(fixed.len(), 4, "megatron has four big-skew events");
    for k in p.kernels.iter_mut().filter(|k| k.stream == MAIN) {
        k.stream = MAIN_AFTER;
    }
    for proc in &mut p.processes {
        if let Some(c) = &mut proc.context {
            for s in c.streams.iter_mut().filter(|s| s.0 == MAIN) {
                s.0 = MAIN_AFTER;
            }
        }
    }
    json!({
        "description": "the same job with its four late ranks on time (their main-stream NCCL kernel starts with the last of the other ranks, and every rank's kernel of the instance ends that much earlier) and the main NCCL stream numbered 21 instead of 20",
        "late_ranks_on_time": fixed,
        "main_stream": {"before": MAIN, "after": MAIN_AFTER},
    })
}

/// The next start of any work on the same device and stream after `end`.
fn next_start(p: &Profile, device: u32, stream: u32, after: i64) -> Option<i64> {
    let k = p.kernels.iter().map(|k| (k.device, k.stream, k.start));
    let c = p.memcpys.iter().map(|m| (m.device, m.stream, m.start));
    let s = p.memsets.iter().map(|m| (m.device, m.stream, m.start));
    k.chain(c)
        .chain(s)
        .filter(|&(d, st, t)| d == device && st == stream && t >= after)
        .map(|x| x.2)
        .min()
}

/// The GEMM on one device runs half as long again, never into the next
/// work on its stream.
fn slow_gemm(p: &mut Profile) -> Value {
    let mut added = 0i64;
    let mut slowed = 0usize;
    for i in 0..p.kernels.len() {
        let k = &p.kernels[i];
        if k.device != SLOW_DEVICE || k.name.short != XMMA_GEMM {
            continue;
        }
        let want = k.end + (k.end - k.start) / 2;
        let limit = next_start(p, k.device, k.stream, k.end).map_or(want, |n| n - 1_000);
        let end = want.min(limit).max(k.end);
        added += end - p.kernels[i].end;
        slowed += 1;
        p.kernels[i].end = end;
    }
    assert!(slowed > 0 && added > 0);
    json!({
        "description": "the same job with every sm90_xmma GEMM on device 3 running half as long again (up to 1 µs before the next work on its stream)",
        "kernel": XMMA_GEMM,
        "device": SLOW_DEVICE,
        "kernels_slowed": slowed,
        "added_ms": ms(added),
    })
}

/// Device 7 and its process are left out of the capture.
fn fewer_devices(p: &mut Profile) -> Value {
    let pid = p
        .processes
        .iter()
        .find(|x| {
            x.context
                .as_ref()
                .is_some_and(|c| c.device == DROPPED_DEVICE)
        })
        .map(|x| x.pid)
        .unwrap();
    p.kernels.retain(|k| k.device != DROPPED_DEVICE);
    p.memcpys.retain(|m| m.device != DROPPED_DEVICE);
    p.memsets.retain(|m| m.device != DROPPED_DEVICE);
    p.calls.retain(|c| c.pid != pid);
    p.nvtx.retain(|n| n.pid != pid);
    p.processes.retain(|x| x.pid != pid);
    p.gpus.retain(|g| g.id != DROPPED_DEVICE);
    json!({
        "description": "the same job without device 7 and its process (7 GPUs instead of 8)",
        "devices_only_before": [DROPPED_DEVICE],
    })
}

/// Steps: per process, its top-level step ranges in order; step k lasts
/// from the earliest start to the latest end of the k-th over processes.
fn steps(p: &Profile) -> Value {
    let mut per_pid: BTreeMap<u32, Vec<(i64, i64)>> = BTreeMap::new();
    for n in &p.nvtx {
        if n.kind == NvtxKind::PushPop && n.text == megatron::STEP_NAME {
            per_pid
                .entry(n.pid)
                .or_default()
                .push((n.start, n.end.unwrap()));
        }
    }
    let mut spans: Vec<(i64, i64)> = Vec::new();
    for v in per_pid.values_mut() {
        v.sort();
        for (k, &(s, e)) in v.iter().enumerate() {
            match spans.get_mut(k) {
                Some(x) => *x = (x.0.min(s), x.1.max(e)),
                None => spans.push((s, e)),
            }
        }
    }
    let d: Vec<f64> = spans.iter().map(|&(s, e)| ms(e - s)).collect();
    let s = p50_p90_max(&d);
    json!({"count": d.len(), "p50_ms": s["p50"], "p90_ms": s["p90"], "max_ms": s["max"]})
}

/// Sum of durations and count per kernel short name.
fn kernels(p: &Profile) -> BTreeMap<String, (i64, usize)> {
    let mut out: BTreeMap<String, (i64, usize)> = BTreeMap::new();
    for k in &p.kernels {
        let e = out.entry(k.name.short.clone()).or_default();
        e.0 += k.end - k.start;
        e.1 += 1;
    }
    out
}

/// Sum of durations and count per class: compute, nccl:OP, memcpy, memset.
fn classes(p: &Profile) -> BTreeMap<String, (i64, usize)> {
    let mut out: BTreeMap<String, (i64, usize)> = BTreeMap::new();
    let mut add = |class: String, d: i64| {
        let e = out.entry(class).or_default();
        e.0 += d;
        e.1 += 1;
    };
    for k in &p.kernels {
        let class = k
            .nccl
            .map_or("compute".to_string(), |n| format!("nccl:{}", n.op));
        add(class, k.end - k.start);
    }
    for m in &p.memcpys {
        add("memcpy".into(), m.end - m.start);
    }
    for m in &p.memsets {
        add("memset".into(), m.end - m.start);
    }
    out
}

/// `[{name, before_ms, after_ms, before_count, after_count}]` over both sides' names.
fn side_by_side(
    key: &str,
    b: &BTreeMap<String, (i64, usize)>,
    a: &BTreeMap<String, (i64, usize)>,
) -> Value {
    let mut names: Vec<&String> = b.keys().chain(a.keys()).collect();
    names.sort();
    names.dedup();
    let rows: Vec<Value> = names
        .into_iter()
        .map(|n| {
            let (bn, bc) = b.get(n).copied().unwrap_or_default();
            let (an, ac) = a.get(n).copied().unwrap_or_default();
            json!({key: n, "before_ms": ms(bn), "after_ms": ms(an), "before_count": bc, "after_count": ac})
        })
        .collect();
    Value::Array(rows)
}

/// One side's truth: steps, overlap, skew and launch verdicts.
fn side(p: &Profile, groups: &[GroupSpec]) -> Value {
    let inp = Input::new(vec![p]);
    let s = truth_skew::sections(&inp, groups);
    json!({
        "steps": steps(p),
        "overlap": truth_basic::overlap(&inp),
        "skew": s.skew,
        "launch": s.launch,
    })
}

/// Writes the after files and the truth of each pair.
pub fn fixtures(before: &Profile) {
    let again = megatron();
    assert_eq!(
        again.kernels.len(),
        before.kernels.len(),
        "megatron rebuilt differently"
    );
    std::fs::create_dir_all(crate::root().join("fixtures/diff")).expect("fixtures/diff");
    let main_pair = [(format!("s{MAIN}"), format!("s{MAIN_AFTER}"))];
    type Change = fn(&mut Profile) -> Value;
    let pairs: [(&str, Change); 3] = [
        ("no_big_skew", no_big_skew),
        ("slow_gemm", slow_gemm),
        ("fewer_devices", fewer_devices),
    ];
    for (name, change) in pairs {
        let mut after = megatron();
        after.path = format!("fixtures/diff/{name}.sqlite");
        let scenario = change(&mut after);
        let renamed = name == "no_big_skew";
        let last = if name == "fewer_devices" { 6 } else { 7 };
        let after_groups = if renamed {
            let s: Vec<(String, u32)> = [
                (format!("s{MAIN_AFTER}"), MAIN_AFTER),
                ("s24".into(), 24),
                ("s28".into(), 28),
            ]
            .into();
            groups(&s, last)
        } else {
            megatron_groups(last)
        };
        let pairs: Vec<Value> = STREAMS
            .iter()
            .map(|s| {
                let key = format!("s{s}");
                match main_pair.iter().find(|p| renamed && p.0 == key) {
                    Some((b, a)) => json!({"before": b, "after": a, "paired_by": "op-sequence"}),
                    None => json!({"before": key, "after": key, "paired_by": "key"}),
                }
            })
            .collect();
        crate::write_profile(&after);
        let truth = json!({
            "before_file": BEFORE,
            "after_file": after.path,
            "scenario": scenario,
            "before": side(before, &megatron_groups(7)),
            "after": side(&after, &after_groups),
            "kernels": side_by_side("name", &kernels(before), &kernels(&after)),
            "classes": side_by_side("class", &classes(before), &classes(&after)),
            "skew_pairs": pairs,
        });
        crate::save(&format!("diff/{name}.truth.json"), &truth);
    }
}
