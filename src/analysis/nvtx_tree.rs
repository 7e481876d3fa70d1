//! The NVTX tree of a thread: its push/pop ranges nested by containment,
//! each with the kernels launched inside it (by CUDA calls of that thread
//! that start and end within the range, through the process-aware launch
//! links) and its GPU time: the length of the union of those kernels'
//! execution intervals — the range projected onto the GPU, as nsys's
//! `nvtx_gpu_proj_sum` projects it. A range's kernels include its
//! children's (they are inside it too).

use super::clock::Alignment;
use super::intervals;
use crate::profile::{GpuKind, NONE, NvtxKind, Profile};

/// One range of the tree, in pre-order (a parent before its children).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// The NVTX row.
    pub row: usize,
    /// 0 for a range no other range of the thread holds.
    pub level: usize,
    /// On the reference clock.
    pub start: i64,
    pub end: i64,
    /// Kernels launched inside the range (GPU rows, in launch order).
    pub kernels: Vec<usize>,
    /// The union of those kernels' intervals, ns.
    pub gpu_ns: i64,
}

/// The kernels each call of the thread `t` launched: (call row, kernel
/// row), sorted by call.
fn launched_by_calls(p: &Profile, t: usize) -> Vec<(usize, usize)> {
    let calls = p.runtime_by_thread[t].clone();
    let mut out: Vec<(usize, usize)> = (0..p.gpu.len())
        .filter(|&r| p.gpu.kind(r) == GpuKind::Kernel)
        .filter_map(|r| {
            let c = p.gpu.launch(r);
            (c != NONE && calls.contains(&(c as usize))).then_some((c as usize, r))
        })
        .collect();
    out.sort_unstable();
    out
}

/// The tree of thread `t` (an index into `Profile::threads`), in
/// pre-order, down to `max_level` levels (all with `usize::MAX`).
pub fn tree(p: &Profile, clock: &Alignment, t: usize, max_level: usize) -> Vec<Node> {
    let launched = launched_by_calls(p, t);
    let calls = p.runtime_by_thread[t].clone();
    let call_starts = p.runtime.starts(calls.clone());
    // Push/pop ranges by start, the longer first at a tie (it holds the
    // other).
    let mut ranges: Vec<usize> = p.nvtx_by_thread[t]
        .clone()
        .filter(|&r| p.nvtx.kind(r) == NvtxKind::PushPop)
        .collect();
    ranges.sort_by_key(|&r| (p.nvtx.start(r), std::cmp::Reverse(p.nvtx.end(r)), r));
    let mut out = Vec::new();
    let mut open: Vec<i64> = Vec::new(); // the ends of the ranges holding this one
    for r in ranges {
        let (s, e) = (p.nvtx.start(r), p.nvtx.end(r));
        while open.last().is_some_and(|&end| s >= end || e > end) {
            open.pop();
        }
        let level = open.len();
        open.push(e);
        if level >= max_level {
            continue;
        }
        // The calls that start in the range (a contiguous run of the
        // thread's rows, sorted by start) and end in it.
        let lo = calls.start + call_starts.partition_point(|&c| c < s);
        let hi = calls.start + call_starts.partition_point(|&c| c <= e);
        let from = launched.partition_point(|&(c, _)| c < lo);
        let to = launched.partition_point(|&(c, _)| c < hi);
        let kernels: Vec<usize> = launched[from..to]
            .iter()
            .filter(|&&(c, _)| p.runtime.end(c) <= e)
            .map(|&(_, k)| k)
            .collect();
        let spans = kernels.iter().map(|&k| clock.gpu_span(p, k)).collect();
        let gpu_ns = intervals::total(&intervals::union(spans));
        let (start, end) = clock.nvtx_span(p, r);
        out.push(Node {
            row: r,
            level,
            start,
            end,
            kernels,
            gpu_ns,
        });
    }
    out
}

/// The threads with push/pop ranges, in thread order.
pub fn threads_with_ranges(p: &Profile) -> Vec<usize> {
    (0..p.threads.len())
        .filter(|&t| {
            p.nvtx_by_thread[t]
                .clone()
                .any(|r| p.nvtx.kind(r) == NvtxKind::PushPop)
        })
        .collect()
}
