//! Helpers shared by the scenarios: building rows, merging per-process plans into a Profile.

use crate::model::{Call, Context, KName, Kernel, Nccl, Process, Profile, Thread};
use crate::names::{self, Compute, Shape};
use crate::plan::{Launch, RankOut};
use crate::rng::Rng;

fn kernel(
    rk: &Rank,
    stream: u32,
    start: i64,
    end: i64,
    name: KName,
    nccl: Option<Nccl>,
    shape: Shape,
) -> Kernel {
    assert!(start < end);
    Kernel {
        pid: rk.pid,
        device: rk.device,
        context_id: rk.context_id,
        stream,
        start,
        end,
        name,
        nccl,
        corr: 0,
        grid: shape.grid,
        block: shape.block,
        registers: shape.registers,
        static_smem: shape.static_smem,
        dynamic_smem: shape.dynamic_smem,
        grid_id: 0,
        graph: None,
    }
}

/// A rank (one process on one device) as seen by the scenario code.
#[derive(Clone, Copy)]
pub struct Rank {
    pub pid: u32,
    pub device: u32,
    pub context_id: u32,
}

impl Rank {
    pub fn compute(&self, stream: u32, start: i64, end: i64, c: Compute) -> Kernel {
        kernel(
            self,
            stream,
            start,
            end,
            names::compute_name(c),
            None,
            names::compute_shape(c),
        )
    }

    pub fn nccl(
        &self,
        stream: u32,
        start: i64,
        end: i64,
        coll: &(KName, Nccl),
        channels: u32,
    ) -> Kernel {
        kernel(
            self,
            stream,
            start,
            end,
            coll.0.clone(),
            Some(coll.1),
            names::nccl_shape(channels),
        )
    }
}

pub fn launch_compute(rng: &mut Rng) -> Launch {
    Launch::new(
        "cudaLaunchKernel_v7000",
        0,
        rng.us(3.0, 9.0),
        rng.us(5.0, 300.0),
    )
}

/// NCCL kernels are launched through the driver (`cuLaunchKernelEx`, eventClass 1), after a
/// stream wait on the compute stream's event, and followed by an event record.
pub fn launch_nccl(rng: &mut Rng) -> Launch {
    let mut l = Launch::new("cuLaunchKernelEx", 1, rng.us(6.0, 14.0), rng.us(5.0, 300.0));
    l.pre
        .push(("cudaStreamWaitEvent_v3020", 0, rng.us(1.5, 3.0)));
    l.post.push(("cudaEventRecord_v3020", 0, rng.us(2.0, 4.0)));
    l
}

pub fn launch_memcpy(rng: &mut Rng) -> Launch {
    Launch::new(
        "cudaMemcpyAsync_v3020",
        0,
        rng.us(10.0, 20.0),
        rng.us(5.0, 60.0),
    )
}

pub fn launch_memset(rng: &mut Rng) -> Launch {
    Launch::new(
        "cudaMemsetAsync_v3020",
        0,
        rng.us(4.0, 8.0),
        rng.us(5.0, 60.0),
    )
}

/// Setup calls of a PyTorch process before its first step.
pub const INIT_CALLS: [&str; 10] = [
    "cudaGetDeviceProperties_v2_v12000",
    "cudaMalloc_v3020",
    "cudaStreamCreateWithPriority_v5050",
    "cudaStreamCreateWithPriority_v5050",
    "cudaStreamCreateWithPriority_v5050",
    "cudaMalloc_v3020",
    "cudaEventCreateWithFlags_v3020",
    "cudaEventCreateWithFlags_v3020",
    "cudaHostAlloc_v3020",
    "cudaMalloc_v3020",
];

/// Periodic `cudaEventQuery` calls of the NCCL watchdog thread.
pub fn watchdog_calls(pid: u32, tid: u32, from: i64, to: i64, rng: &mut Rng) -> Vec<Call> {
    let mut t = from + rng.us(0.0, 3000.0);
    let mut v = vec![];
    while t < to {
        let d = rng.us(1.0, 3.0);
        v.push(Call {
            pid,
            tid,
            start: t,
            end: t + d,
            api: "cudaEventQuery_v3020".into(),
            class: 0,
            corr: 0,
        });
        t += rng.us(9000.0, 11000.0);
    }
    v
}

pub fn threads(pid: u32, names: &[(u32, &str)]) -> Vec<Thread> {
    names
        .iter()
        .map(|&(off, n)| Thread {
            tid: pid + off,
            name: n.to_string(),
        })
        .collect()
}

pub fn process(pid: u32, name: &str, threads: Vec<Thread>, context: Option<Context>) -> Process {
    Process {
        pid,
        name: name.to_string(),
        threads,
        context,
    }
}

/// Merges plan outputs into the profile, sorted as an export would list them.
pub fn merge(p: &mut Profile, outs: Vec<RankOut>) {
    for o in outs {
        p.kernels.extend(o.kernels);
        p.memcpys.extend(o.memcpys);
        p.memsets.extend(o.memsets);
        p.calls.extend(o.calls);
        p.nvtx.extend(o.nvtx);
    }
    p.kernels
        .sort_by_key(|k| (k.start, k.device, k.stream, k.pid));
    let mut next_grid: std::collections::HashMap<u32, i64> = Default::default();
    for k in &mut p.kernels {
        let g = next_grid.entry(k.device).or_insert(1_000);
        k.grid_id = *g;
        *g += 1;
    }
    p.memcpys.sort_by_key(|m| (m.start, m.device, m.pid));
    p.memsets.sort_by_key(|m| (m.start, m.device, m.pid));
    p.calls.sort_by_key(|c| (c.start, c.pid, c.tid));
    p.nvtx.sort_by_key(|e| (e.start, e.pid, e.tid));
}
