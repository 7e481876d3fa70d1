//! Putting every table of a file's model in the order the rest of rankline
//! relies on (per lane / per thread, by start), then linking GPU activity
//! to its launch call by (process, correlationId).

use super::model::*;
use super::reorder::reorder_unless_in_order;
use rustc_hash::FxHashMap;
use std::cmp::Ordering;
use std::ops::Range;

/// Row order grouped by `group[i]` (stable), each group ordered by `cmp`:
/// linear when rows already arrive in time order, as exports store them.
fn grouped_order(group: &[u32], groups: usize, cmp: impl Fn(usize, usize) -> Ordering) -> Vec<u32> {
    let mut next = vec![0usize; groups + 1];
    for &g in group {
        next[g as usize + 1] += 1;
    }
    for k in 1..next.len() {
        next[k] += next[k - 1];
    }
    let bounds = next.clone();
    let mut perm = vec![0u32; group.len()];
    for (i, &g) in group.iter().enumerate() {
        perm[next[g as usize]] = i as u32;
        next[g as usize] += 1;
    }
    for w in bounds.windows(2) {
        let rows = &mut perm[w[0]..w[1]];
        let sorted = rows
            .windows(2)
            .all(|x| cmp(x[0] as usize, x[1] as usize) != Ordering::Greater);
        if !sorted {
            rows.sort_by(|&a, &b| cmp(a as usize, b as usize));
        }
    }
    perm
}

/// Contiguous ranges of a sorted key column, one per key value `0..n`.
fn group_ranges(keys: &[u32], n: usize) -> Vec<Range<usize>> {
    let mut ranges = vec![0..0; n];
    let mut i = 0;
    while i < keys.len() {
        let k = keys[i];
        let j = i + keys[i..].partition_point(|&x| x == k);
        ranges[k as usize] = i..j;
        i = j;
    }
    ranges
}

/// Sorts every table of a single-file profile and builds the derived links.
pub fn finalize(p: &mut FileProfile) {
    let nthreads = p.threads.len();
    let (gpu, lanes, runtime, nvtx) = (&mut p.gpu, &mut p.lanes, &mut p.runtime, &mut p.nvtx);
    let (osrt, samples, sched) = (&mut p.osrt, &mut p.samples, &mut p.sched);
    // GPU rows on one core, CPU rows on the other.
    let ((), (rt_ranges, nvtx_ranges, osrt_ranges, sample_ranges, sched_ranges)) =
        super::parallel::beside(
            || sort_gpu(gpu, lanes),
            || {
                (
                    sort_runtime(runtime, nthreads),
                    sort_nvtx(nvtx, nthreads),
                    sort_osrt(osrt, nthreads),
                    sort_samples(samples, nthreads),
                    sort_sched(sched, nthreads),
                )
            },
        );
    p.runtime_by_thread = rt_ranges;
    p.nvtx_by_thread = nvtx_ranges;
    p.osrt_by_thread = osrt_ranges;
    p.samples_by_thread = sample_ranges;
    p.sched_by_thread = sched_ranges;
    p.syncs_by_process = sort_syncs(&mut p.syncs, p.processes.len());
    // A process with activity on a device has a context there, whether or
    // not the export's context tables say so (the 2026 windows lack them).
    for l in &p.lanes {
        p.contexts.push(Context {
            process: l.process,
            context: l.context,
            device: l.device,
        });
    }
    p.contexts.sort();
    p.contexts.dedup();
    let calls = call_index(p);
    link_launches(p, &calls);
    let y = &mut p.syncs;
    link_calls(&calls, &y.process, &y.correlation, &mut y.call);
    // Sorted once linked: by their calls' starts.
    let e = &mut p.cuda_events;
    link_calls(&calls, &e.process, &e.correlation, &mut e.call);
    p.cuda_events_by_process = sort_cuda_events(e, &p.runtime.start, p.processes.len());
}

fn sort_gpu(g: &mut GpuActivity, lanes: &mut [Lane]) {
    let (start, end): (&[i64], &[i64]) = (&g.start, &g.end);
    let perm = grouped_order(&g.lane, lanes.len(), |a, b| {
        (start[a], end[a]).cmp(&(start[b], end[b]))
    });
    reorder_unless_in_order(g, &perm);
    for (lane, rows) in group_ranges(&g.lane, lanes.len()).into_iter().enumerate() {
        lanes[lane].rows = rows;
    }
}

fn sort_osrt(o: &mut OsrtCalls, nthreads: usize) -> Vec<Range<usize>> {
    let start: &[i64] = &o.start;
    let perm = grouped_order(&o.thread, nthreads, |a, b| start[a].cmp(&start[b]));
    reorder_unless_in_order(o, &perm);
    group_ranges(&o.thread, nthreads)
}

fn sort_samples(c: &mut CpuSamples, nthreads: usize) -> Vec<Range<usize>> {
    let start: &[i64] = &c.start;
    let perm = grouped_order(&c.thread, nthreads, |a, b| start[a].cmp(&start[b]));
    reorder_unless_in_order(c, &perm);
    group_ranges(&c.thread, nthreads)
}

/// By (thread, start); `grouped_order` is stable, so events of one
/// instant keep the export's order (an out and the next in may share one).
fn sort_sched(e: &mut SchedEvents, nthreads: usize) -> Vec<Range<usize>> {
    let start: &[i64] = &e.start;
    let perm = grouped_order(&e.thread, nthreads, |a, b| start[a].cmp(&start[b]));
    reorder_unless_in_order(e, &perm);
    group_ranges(&e.thread, nthreads)
}

/// By (process, start), stable.
fn sort_syncs(y: &mut CudaSyncs, nproc: usize) -> Vec<Range<usize>> {
    let start: &[i64] = &y.start;
    let perm = grouped_order(&y.process, nproc, |a, b| start[a].cmp(&start[b]));
    reorder_unless_in_order(y, &perm);
    group_ranges(&y.process, nproc)
}

/// By (process, event, start of the record's call), stable: records
/// without a call first. `call_start` is the runtime calls' starts (the
/// calls already linked).
fn sort_cuda_events(e: &mut CudaEvents, call_start: &[i64], nproc: usize) -> Vec<Range<usize>> {
    let (event, call): (&[u32], &[u32]) = (&e.event, &e.call);
    let key = |i: usize| {
        let start = call_start.get(call[i] as usize).copied();
        (event[i], start.is_some(), start.unwrap_or(0))
    };
    let perm = grouped_order(&e.process, nproc, |a, b| key(a).cmp(&key(b)));
    reorder_unless_in_order(e, &perm);
    group_ranges(&e.process, nproc)
}

fn sort_runtime(r: &mut RuntimeCalls, nthreads: usize) -> Vec<Range<usize>> {
    let start: &[i64] = &r.start;
    let perm = grouped_order(&r.thread, nthreads, |a, b| start[a].cmp(&start[b]));
    reorder_unless_in_order(r, &perm);
    group_ranges(&r.thread, nthreads)
}

fn sort_nvtx(n: &mut Nvtx, nthreads: usize) -> Vec<Range<usize>> {
    let (start, end): (&[i64], &[i64]) = (&n.start, &n.end);
    // Enclosing ranges first: same start, longer one before.
    let perm = grouped_order(&n.thread, nthreads, |a, b| {
        start[a].cmp(&start[b]).then(end[b].cmp(&end[a]))
    });
    reorder_unless_in_order(n, &perm);
    let ranges = group_ranges(&n.thread, nthreads);
    // Push/pop ranges nest per thread: depth = open enclosing ranges.
    let mut open: Vec<i64> = Vec::new();
    let (kind, start, end): (&[NvtxKind], &[i64], &[i64]) = (&n.kind, &n.start, &n.end);
    let mut depth = vec![0u16; start.len()];
    for rows in &ranges {
        open.clear();
        for i in rows.clone() {
            if kind[i] != NvtxKind::PushPop {
                continue;
            }
            while open.last().is_some_and(|&e| e <= start[i]) {
                open.pop();
            }
            depth[i] = open.len().min(u16::MAX as usize) as u16;
            open.push(end[i]);
        }
    }
    n.depth = depth.into();
    ranges
}

/// Where the calls of one process are, by correlation id.
enum CallIndex {
    /// Ids count up from 1 in each process: a table indexed by id.
    Dense(Vec<u32>),
    /// Sparse ids: a map.
    Sparse(FxHashMap<u32, u32>),
}

impl CallIndex {
    fn get(&self, corr: u32) -> u32 {
        match self {
            CallIndex::Dense(v) => v.get(corr as usize).copied().unwrap_or(NONE),
            CallIndex::Sparse(m) => m.get(&corr).copied().unwrap_or(NONE),
        }
    }
}

/// Each process's runtime/driver calls by correlation id.
fn call_index(p: &FileProfile) -> Vec<CallIndex> {
    let r = &p.runtime;
    let nproc = p.processes.len();
    let mut max = vec![0u32; nproc];
    let mut count = vec![0usize; nproc];
    for (t, rows) in p.runtime_by_thread.iter().enumerate() {
        let pr = p.threads[t].process as usize;
        for &c in &r.correlation[rows.clone()] {
            if c != 0 {
                max[pr] = max[pr].max(c);
                count[pr] += 1;
            }
        }
    }
    let mut index: Vec<CallIndex> = (0..nproc)
        .map(|pr| {
            if (max[pr] as usize) <= 4 * count[pr] + 1024 {
                CallIndex::Dense(vec![NONE; max[pr] as usize + 1])
            } else {
                CallIndex::Sparse(FxHashMap::default())
            }
        })
        .collect();
    for (t, rows) in p.runtime_by_thread.iter().enumerate() {
        let ix = &mut index[p.threads[t].process as usize];
        for i in rows.clone() {
            let c = r.correlation[i];
            if c == 0 {
                continue;
            }
            // The first call with an id wins, as in a join on it.
            match ix {
                CallIndex::Dense(v) => {
                    if v[c as usize] == NONE {
                        v[c as usize] = i as u32;
                    }
                }
                CallIndex::Sparse(m) => {
                    m.entry(c).or_insert(i as u32);
                }
            }
        }
    }
    index
}

/// GPU rows' launch calls, lane by lane.
fn link_launches(p: &mut FileProfile, index: &[CallIndex]) {
    let g = &mut p.gpu;
    for lane in &p.lanes {
        let ix = &index[lane.process as usize];
        for i in lane.rows.clone() {
            let c = g.correlation[i];
            if c != 0 {
                g.launch[i] = ix.get(c);
            }
        }
    }
}

/// `call[i]`: the call of `process[i]` with correlation id
/// `correlation[i]`, or [`NONE`] (id 0 is no id).
fn link_calls(index: &[CallIndex], process: &[ProcId], correlation: &[u32], call: &mut [u32]) {
    for ((&pr, &c), call) in process.iter().zip(correlation).zip(call) {
        *call = match index.get(pr as usize) {
            Some(ix) if c != 0 => ix.get(c),
            _ => NONE,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_ranges_cover_sorted_keys() {
        let r = group_ranges(&[0, 0, 2, 2, 2, 3], 5);
        assert_eq!(r, vec![0..2, 0..0, 2..5, 5..6, 0..0]);
    }
}
