//! Which NCCL API call (a range of NCCL's NVTX domain with a payload)
//! issued each NCCL kernel: the innermost one on the kernel's launching
//! thread that encloses its launch call. Rung 2 of matching reads the
//! call's communicator, the bandwidth figures its message size.

use super::kernel_class::KernelClasses;
use crate::profile::{NONE, Profile};
use std::collections::HashMap;

/// `(launch call start, NCCL kernel row, NCCL API range)` for every NCCL
/// kernel whose launch call lies inside an NCCL API range of its thread.
pub fn enclosing_calls(p: &Profile, classes: &KernelClasses) -> Vec<(i64, u32, usize)> {
    let a = &p.nccl_api;
    if a.thread.is_empty() {
        return Vec::new();
    }
    let mut by_thread: HashMap<u32, Thread> = HashMap::new();
    for j in 0..a.thread.len() {
        by_thread.entry(a.thread[j]).or_default().ranges.push(j);
    }
    for t in by_thread.values_mut() {
        t.ranges
            .sort_by_key(|&j| (a.start[j], std::cmp::Reverse(a.end[j])));
        let mut reach = i64::MIN;
        t.reach = t
            .ranges
            .iter()
            .map(|&j| {
                reach = reach.max(a.end[j]);
                reach
            })
            .collect();
    }
    let mut out = Vec::new();
    for lane in &p.lanes {
        for i in lane.rows.clone() {
            let call = p.gpu.launch(i);
            if call == NONE || classes.comm(p, i).is_none() {
                continue;
            }
            let (t, at) = (
                p.runtime.thread(call as usize),
                p.runtime.start(call as usize),
            );
            if let Some(j) = by_thread.get(&t).and_then(|t| t.innermost(a, at)) {
                out.push((at, i as u32, j));
            }
        }
    }
    out
}

/// One thread's NCCL API ranges by start, with the latest end reached by
/// any range up to each (so a search back stops where none can reach).
#[derive(Default)]
struct Thread {
    ranges: Vec<usize>,
    reach: Vec<i64>,
}

impl Thread {
    /// The shortest range holding `at`: of ranges that nest, the one that
    /// starts last. Walks back only over ranges some of which reach `at`.
    fn innermost(&self, a: &crate::profile::NcclApiRanges, at: i64) -> Option<usize> {
        let upto = self.ranges.partition_point(|&j| a.start[j] <= at);
        let mut best: Option<usize> = None;
        for k in (0..upto).rev() {
            if self.reach[k] < at {
                break;
            }
            let j = self.ranges[k];
            let len = |j: usize| a.end[j].saturating_sub(a.start[j]);
            if a.end[j] >= at && best.is_none_or(|b| len(j) < len(b)) {
                best = Some(j);
            }
        }
        best
    }
}
