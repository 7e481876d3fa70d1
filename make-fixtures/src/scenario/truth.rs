//! `<name>.truth.json` from the engine's own model (never from rankline): ranks,
//! communicators, exchanges, every instance with its members' kernels exactly as written,
//! each planted delay with the instances it made late (by re-running the graph without it),
//! which sibling groups a single instance cannot tell apart, the CUDA graph launches, and
//! each step's account per rank (truth_steps.rs).
//!
//! Times are the engine's true time (a one-host job's file keeps it as is). A job of several
//! files adds (hosts.rs writes the clock fields):
//! - `reference`: the first file's path; `ranks[]` gain `node` and `file` (index in `files`);
//!   instance members gain `file_start`, `file_end` (their timestamps in their rank's file);
//! - `files[]`: `path`, `host`, `node`, `ranks`, `timebase` (`boot-clock` | `session-relative`),
//!   `session_true_ns`/`stop_true_ns` (capture start and stop, true), `anchor_file_ns` (the
//!   file's timestamp at its capture start: the boot reading, or 0), `system_clock_ns` and
//!   `utc_epoch_ns` (TARGET_INFO_SESSION_START_TIME as written), `utc_error_ns` (utcEpochNs −
//!   true UTC), `drift_ppm`, `scale` (1, or a faulty file's factor), `stop_file_ns`, and
//!   `offset_ns_to_true` / `offset_ns_to_reference`: with `a = anchor_file_ns` and
//!   `k = (1 + drift_ppm·10⁻⁶)/scale`, `t_true = t_file + offset_ns_to_true + (t_file − a)(k −
//!   1)` and `t_ref = t_file + offset_ns_to_reference + (t_file − a)(k − 1)` (< 1 ns);
//! - `hosts[]`: `host`, `node`, `files`, `ranks`, `timebase`, `boot_ns` (the boot-clock reading
//!   at the host's first capture start, true time `anchor_true_ns`), `drift_ppm`,
//!   `utc_error_ns`, `offset_ns_to_reference`: `t_ref = t_boot + offset + drift_ppm·10⁻⁶·(t_boot
//!   − boot_ns)` for the host's boot clock (a boot-clock file's own timestamps);
//! - `node_events[]`: each node-level stall: `host`, `node`, `ranks`, `step`, `ms`, `start_ns`
//!   (its earliest rank's stall start, true), `stalls` (`rank`, `start`, `end`, true) and
//!   `instances` (`group`, `index`, `late_rank`, `by_ns`): those whose start skew removing the
//!   whole event shrinks by MADE_LATE_NS or more;
//! - `faults[]`: `kind` (`scaled` | `boot43`), the file(s), host and what is wrong.

use serde_json::{Value, json};

use super::emit::{device, pid};
use super::graph::{Graph, Times};
use super::hosts::{Clocks, FileDef};
use super::layout::{Kind, Layout};
use super::program::Group;
use super::simulate::{CpuWhat, GpuWhat, ORIGIN, Sim};
use super::spec::{Graphs, Spec};
use super::streams::Streams;

/// Two groups whose corresponding instances all end within this of each other are
/// indistinguishable from one instance's ends.
pub const SIBLING_NS: i64 = 50_000;
/// A delay made an instance late when removing it shrinks the instance's start skew by this.
pub const MADE_LATE_NS: i64 = 1_000_000;

pub struct Input<'a> {
    pub name: &'a str,
    pub spec: &'a Spec,
    pub layout: &'a Layout,
    pub streams: &'a Streams,
    pub sim: &'a Sim,
    pub times: &'a Times,
    pub comm_ids: &'a [u64],
    /// Correlation id of each CPU interval (emit.rs).
    pub corr: &'a [i64],
    pub files: &'a [FileDef],
    /// Each file's clock, when the job has its own clocks (several files).
    pub clocks: Option<&'a Clocks>,
}

impl Input<'_> {
    /// The file holding rank `r`.
    fn file_of(&self, r: usize) -> usize {
        self.files
            .iter()
            .position(|f| f.ranks.contains(&r))
            .unwrap()
    }
}

pub fn truth(x: &Input) -> Value {
    let (spec, layout) = (x.spec, x.layout);
    let ranks: Vec<Value> = (0..layout.world())
        .map(|r| {
            let f = &x.files[x.file_of(r)];
            let mut v =
                json!({"rank": r, "host": f.host, "device": device(spec, r), "pid": pid(spec, r)});
            if x.clocks.is_some() {
                v["node"] = json!(f.node);
                v["file"] = json!(x.file_of(r));
            }
            v
        })
        .collect();
    let count = |g: Group| x.sim.instances.iter().filter(|i| i.group == g).count();
    let communicators: Vec<Value> = layout
        .comms
        .iter()
        .enumerate()
        .map(|(ci, c)| {
            let exchanges: Vec<usize> = (0..layout.exchanges.len())
                .filter(|&e| layout.exchanges[e].comm == ci)
                .collect();
            let n = count(Group::Comm(ci))
                + exchanges
                    .iter()
                    .map(|&e| count(Group::Exchange(e)))
                    .sum::<usize>();
            let mut v = json!({
                "name": c.name,
                "kind": c.kind.name(),
                "ranks": c.ranks,
                "streams": c.ranks.iter().map(|&r| x.streams.of(r, c.kind)).collect::<Vec<_>>(),
                "comm_id": spec.payloads.then(|| format!("{:#018x}", x.comm_ids[ci])),
                "instances": n,
            });
            if c.kind == Kind::Pp {
                let names: Vec<&str> = exchanges
                    .iter()
                    .map(|&e| layout.exchanges[e].name.as_str())
                    .collect();
                v["exchanges"] = json!(names);
            }
            v
        })
        .collect();
    let exchanges: Vec<Value> = layout
        .exchanges
        .iter()
        .enumerate()
        .map(|(e, ex)| {
            json!({
                "name": ex.name,
                "communicator": layout.comms[ex.comm].name,
                "ranks": ex.ranks,
                "streams": ex.ranks.iter().map(|&r| x.streams.of(r, Kind::Pp)).collect::<Vec<_>>(),
                "instances": count(Group::Exchange(e)),
            })
        })
        .collect();
    let mut t = json!({
        "name": x.name,
        "description": spec.description,
        "seed": spec.seed,
        "layout": {
            "order": spec.order.name(),
            "tp": layout.tp, "pp": layout.pp, "dp": layout.dp, "ep": layout.ep,
            "microbatches": spec.microbatches, "steps": spec.steps, "layers": spec.layers,
            "distributed_optimizer": spec.distributed_optimizer,
        },
        "stream_policy": spec.streams.name(),
        "payloads": spec.payloads,
        "end_jitter_ns": (spec.end_jitter_us * 1e3) as i64,
        "sibling_threshold_ns": SIBLING_NS,
        "ranks": ranks,
        "communicators": communicators,
        "exchanges": exchanges,
        "instances": instances(x),
        "delays": delays(x),
        "siblings": siblings(x),
        "graph_launches": graph_launches(x),
        "steps": super::truth_steps::steps(spec, x.sim, x.times),
        "what_if": super::truth_steps::what_ifs(spec, x.sim, x.times),
        "throttle": spec.throttle.as_ref().map(|t| json!({
            "rank": t.rank, "device": super::emit::device(spec, t.rank),
            "steps": t.steps, "factor": t.factor,
        })),
    });
    if let Some(c) = x.clocks {
        let (hosts, files, faults) = super::hosts::truth(spec, x.files, c);
        t["reference"] = json!(x.files[0].path);
        t["hosts"] = hosts;
        t["files"] = files;
        t["faults"] = faults;
        t["node_events"] = node_events(x);
        t["layout"]["files"] = json!(spec.files.name());
        t["layout"]["gpus_per_node"] = json!(spec.gpus_per_node());
        t["layout"]["nodes"] = json!(spec.nodes());
        t["step_gap_ms"] = json!(spec.step_gap_ms);
    }
    t
}

fn group_name(l: &Layout, g: Group) -> &str {
    match g {
        Group::Comm(c) => &l.comms[c].name,
        Group::Exchange(e) => &l.exchanges[e].name,
    }
}

/// (latest start − earliest start, the rank that started last) of instance `i` in `t`.
fn start_skew(sim: &Sim, t: &Times, i: usize) -> (i64, usize) {
    let m = &sim.instances[i].members;
    let starts = m.iter().map(|&(r, g)| (t.start[sim.gpu[g].start], r));
    let latest = starts
        .clone()
        .max_by_key(|&(s, r)| (s, std::cmp::Reverse(r)))
        .unwrap();
    let earliest = starts.map(|s| s.0).min().unwrap();
    (latest.0 - earliest, latest.1)
}

/// The latest end of instance `i`.
fn end_of(sim: &Sim, t: &Times, i: usize) -> i64 {
    let m = &sim.instances[i].members;
    m.iter().map(|&(_, g)| t.end[sim.gpu[g].end]).max().unwrap()
}

fn instances(x: &Input) -> Vec<Value> {
    let (sim, t) = (x.sim, x.times);
    (0..sim.instances.len())
        .map(|i| {
            let inst = &sim.instances[i];
            let members: Vec<Value> = inst
                .members
                .iter()
                .map(|&(r, g)| {
                    let g = &sim.gpu[g];
                    let (start, end) = (t.start[g.start], t.end[g.end]);
                    let mut v = json!({"rank": r, "device": device(x.spec, r), "stream": g.stream,
                           "start": start, "end": end});
                    if let Some(c) = x.clocks {
                        let f = x.file_of(r);
                        v["file_start"] = json!(c.files[f].file_time(start));
                        v["file_end"] = json!(c.files[f].file_time(end));
                    }
                    v
                })
                .collect();
            let ends = inst.members.iter().map(|&(_, g)| t.end[sim.gpu[g].end]);
            let end_skew = ends.clone().max().unwrap() - ends.min().unwrap();
            let (skew, late) = start_skew(sim, t, i);
            json!({
                "group": group_name(x.layout, inst.group),
                "index": inst.k + 1,
                "op": inst.op,
                "step": inst.step + 1,
                "members": members,
                "late_rank": late,
                "start_skew_ns": skew,
                "end_skew_ns": end_skew,
            })
        })
        .collect()
}

/// Each delay's own op (`late_op`: its start with and without the delay) and `made_late`:
/// every instance whose start skew the delay widened by at least MADE_LATE_NS, found by
/// re-running the graph without it, with the rank that started last there — the delayed
/// rank, or one it held up (a TP partner waiting in its kernel, the next pipeline stage).
fn delays(x: &Input) -> Vec<Value> {
    let graph: &Graph = &x.sim.graph;
    x.spec
        .delays
        .iter()
        .zip(&x.sim.planted)
        .map(|(d, p)| {
            let without = graph.eval(ORIGIN, &[(p.node, p.without)]);
            let target = &x.sim.gpu[p.target];
            let made = made_late(x, &without);
            let t = d.target();
            json!({
                "kind": d.name(),
                "rank": t.rank,
                "step": t.step,
                "before": {"group": t.group, "op": t.op, "nth": t.nth},
                // what the delay added to its node (a factor's too), in ms
                "ms": (graph.dur(p.node) - p.without) as f64 / 1e6,
                "late_op": {
                    "stream": target.stream,
                    "start": x.times.start[target.start],
                    "start_without": without.start[target.start],
                },
                "made_late": made,
            })
        })
        .collect()
}

/// Every instance whose start skew is at least MADE_LATE_NS wider than in `without` (the
/// run without a cause), with the rank that started last.
fn made_late(x: &Input, without: &Times) -> Vec<Value> {
    (0..x.sim.instances.len())
        .filter_map(|i| {
            let (skew, late) = start_skew(x.sim, x.times, i);
            let by = skew - start_skew(x.sim, without, i).0;
            let inst = &x.sim.instances[i];
            (by >= MADE_LATE_NS).then(|| {
                json!({"group": group_name(x.layout, inst.group), "index": inst.k + 1,
                       "late_rank": late, "by_ns": by})
            })
        })
        .collect()
}

/// Each node-level stall as one event: its ranks' stalls and the instances it made late,
/// found by re-running the graph without any of them.
fn node_events(x: &Input) -> Value {
    let list: Vec<Value> = x
        .spec
        .node_stalls
        .iter()
        .zip(&x.sim.node_stalls)
        .map(|(e, stalls)| {
            let off: Vec<(usize, i64)> = stalls.iter().map(|&(_, n)| (n, 0)).collect();
            let made = made_late(x, &x.sim.graph.eval(ORIGIN, &off));
            let each: Vec<Value> = stalls
                .iter()
                .map(|&(r, n)| json!({"rank": r, "start": x.times.start[n], "end": x.times.end[n]}))
                .collect();
            json!({
                "host": super::hosts::host_name(x.spec, e.node),
                "node": e.node,
                "ranks": stalls.iter().map(|s| s.0).collect::<Vec<_>>(),
                "step": e.step,
                "before": {"group": e.group, "op": e.op, "nth": e.nth},
                "ms": e.ms,
                "start_ns": stalls.iter().map(|&(_, n)| x.times.start[n]).min(),
                "stalls": each,
                "instances": made,
            })
        })
        .collect();
    Value::Array(list)
}

/// For each group, the others of its kind whose instances all end within SIBLING_NS of its
/// own, instance by instance.
fn siblings(x: &Input) -> Vec<Value> {
    let sim = x.sim;
    let groups: Vec<Group> = (0..x.layout.comms.len())
        .map(Group::Comm)
        .chain((0..x.layout.exchanges.len()).map(Group::Exchange))
        .collect();
    let kind = |g: Group| match g {
        Group::Comm(c) => x.layout.comms[c].kind.name(),
        Group::Exchange(_) => "exchange",
    };
    // (op, end) of each instance of a group, in order (once: a 256-rank job has hundreds)
    let mut seqs: std::collections::HashMap<Group, Vec<(&str, i64)>> = Default::default();
    for (i, inst) in sim.instances.iter().enumerate() {
        let end = end_of(sim, x.times, i);
        seqs.entry(inst.group).or_default().push((inst.op, end));
    }
    let none = vec![];
    let seq = |g: Group| seqs.get(&g).unwrap_or(&none);
    groups
        .iter()
        .filter(|&&g| !seq(g).is_empty())
        .map(|&g| {
            let mine = seq(g);
            let alike: Vec<&str> = groups
                .iter()
                .filter(|&&h| h != g && kind(h) == kind(g))
                .filter(|&&h| {
                    let theirs = seq(h);
                    theirs.len() == mine.len()
                        && mine.iter().zip(theirs).all(|(a, b)| {
                            a.0 == b.0 && (a.1 - b.1).abs() <= SIBLING_NS
                        })
                })
                .map(|&h| group_name(x.layout, h))
                .collect();
            json!({"group": group_name(x.layout, g), "kind": kind(g), "indistinguishable_from": alike})
        })
        .collect()
}

/// Each cudaGraphLaunch: the call, its kernels, and whether a planted delay made it late.
fn graph_launches(x: &Input) -> Value {
    if x.spec.cuda_graphs == Graphs::None {
        return Value::Null;
    }
    let (sim, t) = (x.sim, x.times);
    let list: Vec<Value> = sim
        .cpu
        .iter()
        .enumerate()
        .filter_map(|(i, c)| match &c.what {
            CpuWhat::Api { api, gpu, .. } if api.starts_with("cudaGraphLaunch") => {
                Some((i, c, gpu))
            }
            _ => None,
        })
        .map(|(i, c, gpu)| {
            let kernels: Vec<Value> = gpu
                .iter()
                .map(|&g| {
                    let k = &sim.gpu[g];
                    assert!(matches!(k.what, GpuWhat::Kernel(_)));
                    let (node, graph) = k.graph.expect("a graph kernel");
                    json!({"start": t.start[k.start], "end": t.end[k.end], "stream": k.stream,
                           "graph_node_id": node, "graph_id": graph})
                })
                .collect();
            let planted = sim.planted.iter().position(|p| gpu.contains(&p.target));
            let late_ns = planted.map(|d| {
                let p = &sim.planted[d];
                let without = sim.graph.eval(ORIGIN, &[(p.node, p.without)]);
                let first = sim.gpu[gpu[0]].start;
                t.start[first] - without.start[first]
            });
            json!({
                "rank": c.rank,
                "device": device(x.spec, c.rank),
                "step": c.step.map(|s| s + 1),
                "correlation_id": x.corr[i],
                "start": t.start[c.start],
                "end": t.end[c.end],
                "kernels": kernels,
                "planted_delay": planted,
                "late_ns": late_ns,
            })
        })
        .collect();
    Value::Array(list)
}
