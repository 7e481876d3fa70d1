//! The truth's `steps`: each step's span and each rank's account of it, from the engine's
//! own intervals (never from rankline), as issue 47 defines it. The span of step k runs
//! from the earliest start to the latest end of the ranks' step ranges (as written); each rank's time
//! in it is cut by interval unions into compute alone, overlapped (NCCL under compute),
//! NCCL alone while its instance's last member had not started (waiting) or after
//! (transfer), copy alone, and idle: host-bound when the activity that ends the idle
//! stretch was launched by a call that ended after the device went idle, else other (the
//! engine's event waits are between streams of one device, which cannot hold an idle
//! device: dependency is 0). All in ns, on the engine's true time.

use serde_json::{Value, json};

use super::emit::{device, step_range};
use super::graph::{NodeId, Times};
use super::simulate::{CpuWhat, GpuWhat, Sim};
use super::spec::Spec;

type Span = (i64, i64);

pub fn steps(spec: &Spec, sim: &Sim, times: &Times) -> Value {
    let ranks = sim.steps.len();
    let n_steps = sim.steps.iter().map(Vec::len).max().unwrap_or(0);
    // each activity's launch call end
    let mut launched = vec![None::<i64>; sim.gpu.len()];
    for c in &sim.cpu {
        if let CpuWhat::Api { gpu, .. } = &c.what {
            for &g in gpu {
                launched[g] = Some(times.end[c.end]);
            }
        }
    }
    let gpu_span = |g: usize| (times.start[sim.gpu[g].start], times.end[sim.gpu[g].end]);
    let mut waiting: Vec<Vec<Span>> = vec![vec![]; ranks];
    for inst in &sim.instances {
        let last = inst
            .members
            .iter()
            .map(|&(_, g)| gpu_span(g).0)
            .max()
            .unwrap();
        for &(r, g) in &inst.members {
            let (s, e) = gpu_span(g);
            if s < last {
                waiting[r].push((s, e.min(last)));
            }
        }
    }
    // per rank: its activities' spans by kind, and (start, launch end) by start
    let mut by_kind: Vec<[Vec<Span>; 3]> = vec![Default::default(); ranks];
    let mut starts: Vec<Vec<(i64, Option<i64>)>> = vec![vec![]; ranks];
    for (g, a) in sim.gpu.iter().enumerate() {
        let kind = match a.what {
            GpuWhat::Kernel(_) => 0,
            GpuWhat::Nccl { .. } => 1,
            GpuWhat::Copy(..) => 2,
        };
        by_kind[a.rank][kind].push(gpu_span(g));
        starts[a.rank].push((gpu_span(g).0, launched[g]));
    }
    let by_kind: Vec<[Vec<Span>; 3]> = by_kind.into_iter().map(|k| k.map(union)).collect();
    let waiting: Vec<Vec<Span>> = waiting.into_iter().map(union).collect();
    for s in &mut starts {
        s.sort_unstable();
    }
    let paths = critical_paths(sim, times);
    let out: Vec<Value> = (0..n_steps)
        .map(|k| {
            let spans: Vec<Span> = sim
                .steps
                .iter()
                .filter_map(|s| s.get(k).map(|&n| step_range(times, n)))
                .collect();
            let w = (
                spans.iter().map(|s| s.0).min().unwrap(),
                spans.iter().map(|s| s.1).max().unwrap(),
            );
            let per_rank: Vec<Value> = (0..ranks)
                .map(|r| {
                    let [c, n, m] = [0, 1, 2].map(|i| clip(&by_kind[r][i], w));
                    let wait = clip(&waiting[r], w);
                    let both = len(&inter(&c, &n));
                    let exposed = minus(&n, &c);
                    let waiting = len(&inter(&exposed, &wait));
                    let kernels = union([c.clone(), n.clone()].concat());
                    let copy = len(&minus(&m, &kernels));
                    let busy = union([kernels, m].concat());
                    let (mut host, mut idle) = (0, 0);
                    for (g0, g1) in minus(&[w], &busy) {
                        // the activities that start first at or after the stretch's end, all
                        // launched by calls that ended after it began
                        let st = &starts[r];
                        let at = st.partition_point(|x| x.0 < g1);
                        let late = st.get(at).is_some_and(|&(f, _)| {
                            st[at..]
                                .iter()
                                .take_while(|x| x.0 == f)
                                .all(|x| x.1.is_some_and(|e| e > g0))
                        });
                        if late {
                            host += g1 - g0;
                        } else {
                            idle += g1 - g0;
                        }
                    }
                    json!({
                        "rank": r,
                        "device": device(spec, r),
                        "compute_ns": len(&c) - both,
                        "overlapped_ns": both,
                        "waiting_ns": waiting,
                        "transfer_ns": len(&exposed) - waiting,
                        "copy_ns": copy,
                        "host_bound_ns": host,
                        "dependency_ns": 0,
                        "idle_ns": idle,
                    })
                })
                .collect();
            json!({"step": k + 1, "start_ns": w.0, "end_ns": w.1, "ranks": per_rank,
                "critical_path": paths[k]})
        })
        .collect();
    Value::Array(out)
}

/// The node that ends step `k` (0-based): the latest end of the ranks' last CPU nodes of it.
fn step_end(sim: &Sim, times: &Times, k: usize) -> Option<NodeId> {
    sim.steps
        .iter()
        .filter_map(|s| s.get(k).map(|n| n.1))
        .max_by_key(|&n| (times.end[n], n))
}

/// Each step's critical path from the graph's own `via`, back from the step's last end to
/// its first start, summed per kind (ns): compute, copy, transfer (a collective's
/// rendezvous and a member's end after it), cuda_call, os_wait (a planted stall), host
/// (the CPU's other nodes and the lags between CPU nodes), latency (every other lag).
fn critical_paths(sim: &Sim, times: &Times) -> Vec<Value> {
    let n = times.start.len();
    let mut kind: Vec<&str> = vec!["host"; n];
    let mut cpu = vec![false; n];
    for c in &sim.cpu {
        cpu[c.start] = true;
        cpu[c.end] = true;
        if c.start == c.end {
            kind[c.start] = match c.what {
                CpuWhat::Api { .. } => "cuda_call",
                CpuWhat::Stall => "os_wait",
                _ => "host",
            };
        }
    }
    for g in &sim.gpu {
        match g.what {
            GpuWhat::Kernel(_) => kind[g.start] = "compute",
            GpuWhat::Copy(..) => kind[g.start] = "copy",
            GpuWhat::Nccl { .. } => kind[g.end] = "transfer",
        }
    }
    for &r in &sim.rendezvous {
        kind[r] = "transfer";
    }
    let n_steps = sim.steps.iter().map(Vec::len).max().unwrap_or(0);
    (0..n_steps)
        .map(|k| {
            let start = sim
                .steps
                .iter()
                .filter_map(|s| s.get(k).map(|&n| step_range(times, n).0))
                .min()
                .unwrap_or(0);
            let mut parts: std::collections::BTreeMap<&str, i64> = Default::default();
            let mut at = step_end(sim, times, k);
            while let Some(node) = at {
                let (s, e) = (times.start[node], times.end[node]);
                *parts.entry(kind[node]).or_default() += e - s.max(start).min(e);
                if s <= start {
                    break;
                }
                at = times.via[node];
                if let Some(v) = at {
                    let lag = if cpu[v] && cpu[node] {
                        "host"
                    } else {
                        "latency"
                    };
                    *parts.entry(lag).or_default() += s - times.end[v].max(start).min(s);
                }
            }
            json!(parts)
        })
        .collect()
}

/// What removing each planted delay saves on its step: the step's end with it, less its
/// end when the graph runs without it (its node's duration without the delay); then each
/// node-level stall, every rank's part of it removed at once (`kind` `node_stall`).
pub fn what_ifs(spec: &Spec, sim: &Sim, times: &Times) -> Value {
    let saves = |k: usize, overrides: &[(NodeId, i64)]| {
        let without = sim.graph.eval(super::simulate::ORIGIN, overrides);
        let end = step_end(sim, times, k).unwrap();
        let end_without = step_end(sim, &without, k).unwrap();
        times.end[end] - without.end[end_without]
    };
    let stalls = spec
        .node_stalls
        .iter()
        .zip(&sim.node_stalls)
        .map(|(st, parts)| {
            let overrides: Vec<(NodeId, i64)> = parts.iter().map(|&(_, n)| (n, 0)).collect();
            json!({
                "kind": "node_stall",
                "node": st.node,
                "ranks": parts.iter().map(|p| p.0).collect::<Vec<_>>(),
                "step": st.step,
                "saves_ns": saves(st.step - 1, &overrides),
            })
        });
    let out: Vec<Value> = spec
        .delays
        .iter()
        .zip(&sim.planted)
        .map(|(d, p)| {
            json!({
                "kind": d.name(),
                "rank": d.target().rank,
                "device": device(spec, d.target().rank),
                "step": d.target().step,
                "saves_ns": saves(d.target().step - 1, &[(p.node, p.without)]),
            })
        })
        .chain(stalls)
        .collect();
    Value::Array(out)
}

fn union(mut v: Vec<Span>) -> Vec<Span> {
    v.retain(|s| s.1 > s.0);
    v.sort();
    let mut out: Vec<Span> = vec![];
    for s in v {
        match out.last_mut() {
            Some(l) if s.0 <= l.1 => l.1 = l.1.max(s.1),
            _ => out.push(s),
        }
    }
    out
}

fn clip(v: &[Span], w: Span) -> Vec<Span> {
    v.iter()
        .map(|&(a, b)| (a.max(w.0), b.min(w.1)))
        .filter(|s| s.1 > s.0)
        .collect()
}

fn len(v: &[Span]) -> i64 {
    v.iter().map(|s| s.1 - s.0).sum()
}

/// What two sorted disjoint unions share: each of `a`'s spans cut by the `b` spans it meets.
fn inter(a: &[Span], b: &[Span]) -> Vec<Span> {
    let mut out = vec![];
    for x in a {
        let from = b.partition_point(|y| y.1 <= x.0);
        for y in b[from..].iter().take_while(|y| y.0 < x.1) {
            out.push((x.0.max(y.0), x.1.min(y.1)));
        }
    }
    out
}

/// `a` without `b` (both sorted disjoint).
fn minus(a: &[Span], b: &[Span]) -> Vec<Span> {
    let mut out = vec![];
    for &(mut lo, hi) in a {
        let from = b.partition_point(|y| y.1 <= lo);
        for y in b[from..].iter().take_while(|y| y.0 < hi) {
            if y.0 > lo {
                out.push((lo, y.0));
            }
            lo = lo.max(y.1);
        }
        if lo < hi {
            out.push((lo, hi));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_helpers() {
        let a = union(vec![(5, 8), (0, 2), (1, 3)]);
        assert_eq!(a, vec![(0, 3), (5, 8)]);
        assert_eq!(minus(&a, &[(1, 6)]), vec![(0, 1), (6, 8)]);
        assert_eq!(inter(&a, &[(2, 6)]), vec![(2, 3), (5, 6)]);
        assert_eq!(clip(&a, (1, 6)), vec![(1, 3), (5, 6)]);
    }
}
