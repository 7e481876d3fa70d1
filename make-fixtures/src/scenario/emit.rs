//! The simulated job → one `model::Profile` per file (the whole job on one host, or one file
//! per node or per rank, hosts.rs), with the rows the writer does not model: NCCL payload blobs
//! and OS runtime waits. Everything here is on the engine's true time; each file's clock is
//! applied when it is written. Correlation ids are per process, in the order of its calls (so
//! they collide across processes, as in real exports); a graph's kernels carry their
//! cudaGraphLaunch's.

use super::graph::{NodeId, Times};
use super::hosts::FileDef;
use super::keyed;
use super::layout::Layout;
use super::payload;
use super::simulate::{CpuWhat, GpuWhat, Sim};
use super::spec::Spec;
use super::streams::{COMPUTE, Streams};
use crate::assemble::{Rank, merge, process, threads, watchdog_calls};
use crate::model::*;
use crate::names;
use crate::plan::RankOut;

/// The main thread's tid is its pid; the NCCL watchdog's is pid + this.
const WATCHDOG: u32 = 23;
pub const COND_WAIT: &str = "pthread_cond_wait";
/// The watchdog queries events only while work is outstanding: not across an idle gap
/// between steps longer than this.
const IDLE_NS: i64 = 1_000_000_000;

/// What one file holds beyond its profile.
pub struct FileOut {
    pub profile: Profile,
    /// (start, globalTid, binaryData) of each NCCL range with a payload.
    pub blobs: Vec<(i64, i64, Vec<u8>)>,
    /// (pid, tid, start, end) of each OS runtime wait.
    pub osrt: Vec<(u32, u32, i64, i64)>,
}

pub struct Emitted {
    /// One per file, in the order of the file definitions.
    pub files: Vec<FileOut>,
    /// The correlation id of each CPU interval of the simulation (0: not a CUDA call).
    pub corr: Vec<i64>,
}

pub fn pid(spec: &Spec, rank: usize) -> u32 {
    spec.pid_base + rank as u32
}

/// The rank's CUDA device: its index on its node.
pub fn device(spec: &Spec, rank: usize) -> u32 {
    (rank % spec.gpus_per_node()) as u32
}

fn rank_ids(spec: &Spec, r: usize) -> Rank {
    Rank {
        pid: pid(spec, r),
        device: device(spec, r),
        context_id: device(spec, r) + 1,
    }
}

#[allow(clippy::too_many_arguments)]
pub fn emit(
    spec: &Spec,
    layout: &Layout,
    streams: &Streams,
    sim: &Sim,
    t: &Times,
    comm_ids: &[u64],
    files: &[FileDef],
) -> Emitted {
    let world = layout.world();
    assert!(
        spec.gpus_per_node() <= DGX_BUS.len(),
        "at most {} GPUs per node",
        DGX_BUS.len()
    );
    // one GPU per rank, drawn in rank order
    let mut urng = keyed::rng(spec.seed, &[keyed::label("uuid")]);
    let uuids: Vec<String> = (0..world).map(|_| uuid(&mut urng)).collect();

    // calls, per process in time order, numbered from 1 with the watchdog's among them
    let mut corr = vec![0; sim.cpu.len()];
    let mut calls = vec![];
    for r in 0..world {
        let pid = pid(spec, r);
        let mut mine: Vec<(Call, Option<usize>)> = vec![];
        for (i, c) in sim.cpu.iter().enumerate().filter(|(_, c)| c.rank == r) {
            if let CpuWhat::Api { api, class, .. } = c.what {
                let call = Call {
                    pid,
                    tid: pid,
                    start: t.start[c.start],
                    end: t.end[c.end],
                    api: api.into(),
                    class,
                    corr: 0,
                };
                mine.push((call, Some(i)));
            }
        }
        let (lo, hi) = mine.iter().fold((i64::MAX, i64::MIN), |(lo, hi), c| {
            (lo.min(c.0.start), hi.max(c.0.end))
        });
        let mut wrng = keyed::rng(spec.seed, &[keyed::label("watchdog"), r as u64]);
        let mut dog = vec![];
        for (lo, hi) in busy(&mine, lo, hi) {
            dog.extend(watchdog_calls(pid, pid + WATCHDOG, lo, hi, &mut wrng));
        }
        mine.extend(dog.into_iter().map(|c| (c, None)));
        mine.sort_by_key(|c| (c.0.start, c.0.tid));
        for (n, (mut c, item)) in mine.into_iter().enumerate() {
            c.corr = n as i64 + 1;
            if let Some(i) = item {
                corr[i] = c.corr;
            }
            calls.push(c);
        }
    }

    let mut launched_by = vec![usize::MAX; sim.gpu.len()];
    for (i, c) in sim.cpu.iter().enumerate() {
        if let CpuWhat::Api { gpu, .. } = &c.what {
            for &g in gpu {
                launched_by[g] = i;
            }
        }
    }
    let mut out = RankOut {
        kernels: vec![],
        memcpys: vec![],
        memsets: vec![],
        calls,
        nvtx: vec![],
        launch_of: vec![],
        steps: vec![],
    };
    for (i, g) in sim.gpu.iter().enumerate() {
        let rk = rank_ids(spec, g.rank);
        let (start, end, corr) = (t.start[g.start], t.end[g.end], corr[launched_by[i]]);
        match g.what {
            GpuWhat::Kernel(kind) => {
                let mut k = rk.compute(g.stream, start, end, kind);
                k.corr = corr;
                k.graph = g.graph;
                out.kernels.push(k);
            }
            GpuWhat::Nccl { instance } => {
                let inst = &sim.instances[instance];
                let (name, channels) = match inst.op {
                    "SendRecv" => (names::nccl_sendrecv(), 32),
                    op => (names::nccl(op, inst.dtype, "RING", inst.proto), 16),
                };
                let mut k = rk.nccl(g.stream, start, end, &name, channels);
                k.corr = corr;
                out.kernels.push(k);
            }
            GpuWhat::Copy(kind, bytes) => out.memcpys.push(Memcpy {
                pid: rk.pid,
                device: rk.device,
                context_id: rk.context_id,
                stream: g.stream,
                start,
                end,
                bytes,
                copy_kind: kind,
                corr,
            }),
        }
    }

    let mut blobs = vec![];
    let mut osrt = vec![];
    for r in 0..world {
        for &(a, b) in &sim.steps[r] {
            let (s, e) = step_range(t, (a, b));
            out.nvtx.push(range(pid(spec, r), s, e, "train_step", 0));
        }
    }
    for c in &sim.cpu {
        let (pid, start, end) = (pid(spec, c.rank), t.start[c.start], t.end[c.end]);
        let tid = global_tid(pid, pid);
        match &c.what {
            CpuWhat::Stall => osrt.push((pid, pid, start, end)),
            CpuWhat::Nccl { name, comm, call } if spec.payloads => {
                out.nvtx.push(range(pid, start, end, name, 1));
                if let Some(call) = call {
                    blobs.push((start, tid, payload::call(comm_ids[*comm], call)));
                }
            }
            CpuWhat::CommInit { comm } if spec.payloads => {
                let name = "ncclCommInitRankConfig";
                out.nvtx.push(range(pid, start, end, name, 1));
                let members = &layout.comms[*comm].ranks;
                let me = members.iter().position(|&m| m == c.rank).unwrap();
                let blob =
                    payload::comm_init(comm_ids[*comm], members.len(), me, device(spec, c.rank));
                blobs.push((start, tid, blob));
            }
            _ => {}
        }
    }
    let files = files
        .iter()
        .map(|f| {
            let mut p = Profile {
                path: f.path.clone(),
                host: f.host.clone(),
                ..Default::default()
            };
            // every GPU of the host (a per-rank export lists them all), its ranks' processes
            for r in (0..world).filter(|&r| spec.node_of(r) == f.node) {
                let d = device(spec, r);
                p.gpus.push(h100(d, DGX_BUS[d as usize], uuids[r].clone()));
            }
            for &r in &f.ranks {
                p.processes.push(rank_process(spec, streams, r));
            }
            let pids: Vec<u32> = f.ranks.iter().map(|&r| pid(spec, r)).collect();
            merge(&mut p, vec![part(&out, &pids)]);
            let of_tid = |tid: i64| pids.contains(&((tid >> 24) as u32 & 0xff_ffff));
            FileOut {
                profile: p,
                blobs: blobs.iter().filter(|b| of_tid(b.1)).cloned().collect(),
                osrt: osrt
                    .iter()
                    .filter(|o| pids.contains(&o.0))
                    .copied()
                    .collect(),
            }
        })
        .collect();
    Emitted { files, corr }
}

/// Rank `r`'s process: its main thread and NCCL watchdog, its context and streams.
fn rank_process(spec: &Spec, streams: &Streams, r: usize) -> Process {
    let rk = rank_ids(spec, r);
    let mut st = vec![(COMPUTE, 3, 0)];
    st.extend(streams.created_by(r).into_iter().map(|s| (s, 2, 0)));
    let ctx = Context {
        device: rk.device,
        context_id: rk.context_id,
        null_stream: COMPUTE,
        streams: st,
    };
    let th = threads(rk.pid, &[(0, "python3"), (WATCHDOG, "pt_nccl_watchdg")]);
    process(rk.pid, "python3", th, Some(ctx))
}

/// The rows of processes `pids`, in their order.
fn part(out: &RankOut, pids: &[u32]) -> RankOut {
    let mine = |pid: &u32| pids.contains(pid);
    RankOut {
        kernels: out
            .kernels
            .iter()
            .filter(|k| mine(&k.pid))
            .cloned()
            .collect(),
        memcpys: out
            .memcpys
            .iter()
            .filter(|m| mine(&m.pid))
            .cloned()
            .collect(),
        memsets: out
            .memsets
            .iter()
            .filter(|m| mine(&m.pid))
            .cloned()
            .collect(),
        calls: out.calls.iter().filter(|c| mine(&c.pid)).cloned().collect(),
        nvtx: out.nvtx.iter().filter(|e| mine(&e.pid)).cloned().collect(),
        launch_of: vec![],
        steps: vec![],
    }
}

/// The spans [lo, hi] of a thread's calls with work outstanding: split where the main
/// thread made no call for longer than IDLE_NS.
fn busy(calls: &[(Call, Option<usize>)], lo: i64, hi: i64) -> Vec<(i64, i64)> {
    let mut v: Vec<(i64, i64)> = calls.iter().map(|c| (c.0.start, c.0.end)).collect();
    v.sort();
    let mut spans = vec![(lo, lo)];
    for (s, e) in v {
        let last = spans.last_mut().unwrap();
        if s - last.1 > IDLE_NS {
            spans.push((s, e));
        } else {
            last.1 = last.1.max(e);
        }
    }
    spans.last_mut().unwrap().1 = hi;
    spans
}

/// The step NVTX range around a step's CPU nodes `(first, last)`: opened 20 µs before the
/// first, closed 10 µs after the last.
pub fn step_range(t: &Times, (first, last): (NodeId, NodeId)) -> (i64, i64) {
    (t.start[first] - 20_000, t.end[last] + 10_000)
}

/// A push/pop range on a main thread: the step's (domain 0, inline text) or an NCCL API
/// call's (NCCL's domain 1, a registered string).
fn range(pid: u32, start: i64, end: i64, text: &str, domain: i64) -> Nvtx {
    Nvtx {
        pid,
        tid: pid,
        kind: NvtxKind::PushPop,
        start,
        end: Some(end),
        text: text.to_string(),
        registered: domain == 1,
        domain,
        range_id: None,
    }
}
