//! The invariants a loaded profile has, checked on a cache entry before
//! use: an entry that passes its checksums but was written by a buggy
//! build, or forged, must be rebuilt, never crash a reader.

use super::super::model::*;
use std::ops::Range;

/// Ok when every id that indexes another table is in range, every row
/// range is ordered, tiles its table and holds only its own rows, and the
/// columns of one table have one length.
pub fn consistent(p: &FileProfile) -> Result<(), String> {
    let (g, r, n, o, c) = (&p.gpu, &p.runtime, &p.nvtx, &p.osrt, &p.samples);
    let (s, y, e) = (&p.sched, &p.syncs, &p.cuda_events);
    let same = |lens: &[usize]| lens.windows(2).all(|w| w[0] == w[1]);
    let lengths = same(&[
        g.start.len(),
        g.end.len(),
        g.lane.len(),
        g.name.len(),
        g.correlation.len(),
        g.launch.len(),
        g.detail.len(),
    ]) && g.details.consistent()
        && same(&[
            r.start.len(),
            r.end.len(),
            r.thread.len(),
            r.name.len(),
            r.correlation.len(),
            r.class.len(),
            r.is_launch.len(),
        ])
        && same(&[
            n.start.len(),
            n.end.len(),
            n.thread.len(),
            n.name.len(),
            n.kind.len(),
            n.domain.len(),
            n.depth.len(),
        ])
        && same(&[o.start.len(), o.end.len(), o.thread.len(), o.name.len()])
        && same(&[c.start.len(), c.thread.len(), c.stack.len()])
        && stacks_consistent(c)
        && same(&[s.start.len(), s.thread.len(), s.cpu.len(), s.sched_in.len()])
        && same(&[
            y.start.len(),
            y.end.len(),
            y.process.len(),
            y.device.len(),
            y.stream.len(),
            y.lane.len(),
            y.sync_type.len(),
            y.event.len(),
            y.correlation.len(),
            y.call.len(),
        ])
        && same(&[
            e.process.len(),
            e.device.len(),
            e.stream.len(),
            e.lane.len(),
            e.event.len(),
            e.correlation.len(),
            e.call.len(),
            e.timestamp.len(),
        ])
        && same(&[
            p.nccl_api.name.len(),
            p.nccl_api.thread.len(),
            p.nccl_api.start.len(),
            p.nccl_api.end.len(),
            p.nccl_api.comm.len(),
            p.nccl_api.bytes.len(),
            p.nccl_api.peer.len(),
            p.nccl_api.rank.len(),
            p.nccl_api.nranks.len(),
        ])
        && same(&[
            p.nccl_ops.process.len(),
            p.nccl_ops.correlation.len(),
            p.nccl_ops.operation.len(),
        ]);
    if !lengths {
        return Err("columns of one table differ in length (corrupted)".into());
    }
    let below = |n: usize| move |&i: &u32| (i as usize) < n;
    let strings = below(p.strings.len());
    // A link column's ids: in range, or none.
    let below_or_none = |n: usize| move |&i: &u32| i == NONE || (i as usize) < n;
    let ids = g.lane.iter().all(below(p.lanes.len()))
        && g.detail.iter().all(below(g.details.len()))
        && g.launch
            .iter()
            .all(|&c| c == NONE || (c as usize) < r.len())
        && r.thread
            .iter()
            .chain(n.thread.iter())
            .chain(o.thread.iter())
            .chain(c.thread.iter())
            .chain(s.thread.iter())
            .all(below(p.threads.len()))
        && g.unfinished.iter().all(below(g.len()))
        && g.unfinished.is_sorted_by(|a, b| a < b)
        && g.name
            .iter()
            .chain(g.details.long_name.iter())
            .chain(r.name.iter())
            .chain(n.name.iter())
            .chain(n.domain.iter())
            .chain(o.name.iter())
            .chain(c.stack_frames.iter())
            .chain(p.nccl_api.name.iter())
            .all(strings)
        && p.processes
            .iter()
            .all(|x| (x.file as usize) < p.files.len() && strings(&x.name))
        && p.threads
            .iter()
            .all(|t| (t.process as usize) < p.processes.len() && strings(&t.name))
        && p.devices.iter().all(|d| (d.host as usize) < p.hosts.len())
        && p.files
            .iter()
            .all(|f| (f.host_index as usize) < p.hosts.len())
        && p.contexts.iter().all(|c| {
            (c.process as usize) < p.processes.len() && (c.device as usize) < p.devices.len()
        })
        && p.lanes.iter().all(|l| {
            (l.device as usize) < p.devices.len() && (l.process as usize) < p.processes.len()
        })
        && p.nccl_api.thread.iter().all(below(p.threads.len()))
        && p.nccl_ops.process.iter().all(below(p.processes.len()))
        && y.process.iter().all(below(p.processes.len()))
        && y.device.iter().all(below_or_none(p.devices.len()))
        && y.lane.iter().all(below_or_none(p.lanes.len()))
        && y.call.iter().all(below_or_none(r.len()))
        && e.process.iter().all(below(p.processes.len()))
        && e.device.iter().all(below_or_none(p.devices.len()))
        && e.lane.iter().all(below_or_none(p.lanes.len()))
        && e.call.iter().all(below_or_none(r.len()));
    if !ids {
        return Err("an id out of range (corrupted)".into());
    }
    let lane_rows: Vec<Range<usize>> = p.lanes.iter().map(|l| l.rows.clone()).collect();
    let groups = grouped(&lane_rows, &g.lane, &g.start, g.len())
        && grouped(&p.runtime_by_thread, &r.thread, &r.start, r.len())
        && grouped(&p.nvtx_by_thread, &n.thread, &n.start, n.len())
        && grouped(&p.osrt_by_thread, &o.thread, &o.start, o.len())
        && grouped(&p.samples_by_thread, &c.thread, &c.start, c.len())
        && grouped(&p.sched_by_thread, &s.thread, &s.start, s.len())
        && grouped(&p.syncs_by_process, &y.process, &y.start, y.len())
        && tiled(&p.cuda_events_by_process, &e.process, e.len(), |rows| {
            // By (event, start of its call), those without a call first;
            // the calls are in range (checked above).
            let key = |i: usize| {
                let call = r.start.get(e.call[i] as usize);
                (e.event[i], call.is_some(), call.copied().unwrap_or(0))
            };
            rows.clone()
                .zip(rows.skip(1))
                .all(|(a, b)| key(a) <= key(b))
        })
        && p.runtime_by_thread.len() == p.threads.len()
        && p.nvtx_by_thread.len() == p.threads.len()
        && p.osrt_by_thread.len() == p.threads.len()
        && p.samples_by_thread.len() == p.threads.len()
        && p.sched_by_thread.len() == p.threads.len()
        && p.syncs_by_process.len() == p.processes.len()
        && p.cuda_events_by_process.len() == p.processes.len();
    if !groups {
        return Err("row ranges out of order or out of range (corrupted)".into());
    }
    let ordered = |s: &[i64], e: &[i64]| s.iter().zip(e).all(|(a, b)| a <= b);
    let p_api = &p.nccl_api;
    if !(ordered(&g.start, &g.end)
        && ordered(&r.start, &r.end)
        && ordered(&n.start, &n.end)
        && ordered(&o.start, &o.end)
        && ordered(&y.start, &y.end)
        && ordered(&p_api.start, &p_api.end))
    {
        return Err("an event ends before it starts (corrupted)".into());
    }
    Ok(())
}

/// Whether the non-empty `ranges` (one per group id) tile `0..len` in
/// order, every row of range `k` has group id `k`, and starts do not
/// decrease inside one. (An empty group's range is `0..0`.)
fn grouped(ranges: &[Range<usize>], group: &[u32], start: &[i64], len: usize) -> bool {
    tiled(ranges, group, len, |rows| {
        start.get(rows).is_some_and(<[i64]>::is_sorted)
    })
}

/// Whether the non-empty `ranges` tile `0..len` in order, every row of
/// range `k` has group id `k`, and `in_order` holds of each range.
fn tiled(
    ranges: &[Range<usize>],
    group: &[u32],
    len: usize,
    in_order: impl Fn(Range<usize>) -> bool,
) -> bool {
    let mut next = 0usize;
    for (k, rows) in ranges.iter().enumerate() {
        if rows.end < rows.start || rows.end > len {
            return false;
        }
        if rows.is_empty() {
            continue;
        }
        if rows.start != next {
            return false;
        }
        let Some(ids) = group.get(rows.clone()) else {
            return false;
        };
        if !ids.iter().all(|&id| id as usize == k) || !in_order(rows.clone()) {
            return false;
        }
        next = rows.end;
    }
    next == len
}

/// Every sample's stack is one of the stacks, and the stacks' offsets run
/// from 0 to the end of their frames in steps of at most [`MAX_FRAMES`]
/// (no stacks at all in a file without samples).
fn stacks_consistent(c: &CpuSamples) -> bool {
    if c.stack_at.is_empty() {
        return c.stack.is_empty() && c.stack_frames.is_empty();
    }
    c.stack.iter().all(|&s| (s as usize) + 1 < c.stack_at.len())
        && c.stack_at[0] == 0
        && c.stack_at
            .last()
            .is_some_and(|&a| a as usize == c.stack_frames.len())
        && c.stack_at
            .windows(2)
            .all(|w| w[0] <= w[1] && (w[1] - w[0]) as usize <= MAX_FRAMES)
}
