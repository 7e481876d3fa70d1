//! The dependency graph of one step, as items before it becomes a
//! [`DepGraph`](super::super::dep_graph::DepGraph): the step's CPU calls
//! and GPU rows with what each waited for, and an order that puts every
//! item after what it waits for.

use super::super::clock::Alignment;
use super::super::cuda_sync;
use super::super::intervals::first_at;
use super::super::kernel_class::KernelClasses;
use crate::profile::{DevId, NONE, Profile, ThreadId};
use std::collections::{BinaryHeap, HashMap};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum What {
    Gpu(usize),
    Arrive(usize),
    /// The row, and whether its call's last arrival is uncertain.
    Finish(usize, bool),
    Meet,
    Call(usize),
    Enter(usize),
    Return(usize),
    Osrt(usize),
}

/// A matched NCCL row's call: its index, last arrival, and whether the
/// arrival that was last is uncertain (another host's within the clocks'
/// error of it).
#[derive(Debug, Clone, Copy)]
pub(super) struct Call {
    pub(super) index: u32,
    pub(super) last: i64,
    pub(super) uncertain: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Edge {
    Thread,
    Launch,
    Stream,
    Event,
    Meet,
    Sync,
}

pub(super) struct Item {
    pub(super) what: What,
    pub(super) device: Option<DevId>,
    /// A GPU node's stream.
    pub(super) lane: Option<u32>,
    pub(super) start: i64,
    pub(super) end: i64,
    pub(super) deps: Vec<(usize, Edge)>,
}

/// The device of each process: of its first stream.
pub(super) fn process_devices(p: &Profile) -> Vec<Option<DevId>> {
    let mut out = vec![None; p.processes.len()];
    for l in &p.lanes {
        if let Some(d) = out.get_mut(l.process as usize) {
            d.get_or_insert(l.device);
        }
    }
    out
}

/// The step's nodes: every CPU call and GPU row starting inside `span`.
pub(super) fn items(
    p: &Profile,
    classes: &KernelClasses,
    clock: &Alignment,
    call_of: &HashMap<usize, Call>,
    process_device: &[Option<DevId>],
    records: &cuda_sync::RecordIndex,
    span: (i64, i64),
) -> Vec<Item> {
    let mut items: Vec<Item> = Vec::new();
    // CPU: each thread's calls in order.
    let mut call_item: HashMap<usize, usize> = HashMap::new();
    let mut return_item: HashMap<usize, usize> = HashMap::new();
    // Threads that launched none of the step's GPU work (a watchdog
    // polling events) hold nothing up: left out, or their calls would
    // end the step.
    // Each stream's rows that start in the step (a stream's rows are
    // sorted by start).
    let step_rows: Vec<std::ops::Range<usize>> = p
        .lanes
        .iter()
        .map(|lane| {
            let rows = lane.rows.clone();
            let from = first_at(rows.clone(), |r| clock.gpu_span(p, r).0 >= span.0);
            from..first_at(from..rows.end, |r| clock.gpu_span(p, r).0 >= span.1)
        })
        .collect();
    let mut launching = vec![false; p.threads.len()];
    for rows in &step_rows {
        for row in rows.clone() {
            let call = p.gpu.launch(row);
            if call != NONE
                && let Some(l) = launching.get_mut(p.runtime.thread(call as usize) as usize)
            {
                *l = true;
            }
        }
    }
    for t in (0..p.threads.len() as ThreadId).filter(|&t| launching[t as usize]) {
        let device = process_device
            .get(p.thread_process(t) as usize)
            .copied()
            .flatten();
        // A thread's calls are sorted by start: the step's found by search.
        let rows = p.runtime_by_thread.get(t as usize).cloned().unwrap_or(0..0);
        let from = first_at(rows.clone(), |r| clock.runtime_span(p, r).0 >= span.0);
        let mut cpu: Vec<(i64, i64, What)> = (from..rows.end)
            .map(|r| {
                let (s, e) = clock.runtime_span(p, r);
                (s, e, What::Call(r))
            })
            .take_while(|x| x.0 < span.1)
            .collect();
        let osrt = p.osrt_by_thread.get(t as usize).cloned().unwrap_or(0..0);
        let from = first_at(osrt.clone(), |r| clock.osrt_span(p, r).0 >= span.0);
        cpu.extend(
            (from..osrt.end)
                .map(|r| {
                    let (s, e) = clock.osrt_span(p, r);
                    (s, e, What::Osrt(r))
                })
                .take_while(|x| x.0 < span.1),
        );
        if cpu.is_empty() {
            continue;
        }
        cpu.sort_by_key(|x| (x.0, std::cmp::Reverse(x.1)));
        let mut prev: Option<usize> = None;
        let mut reach = i64::MIN;
        for (s, e, what) in cpu {
            // a call inside another (an OS call under a CUDA call) is its part
            if e <= reach {
                continue;
            }
            reach = e;
            let dep = |prev: Option<usize>| prev.map(|p| (p, Edge::Thread)).into_iter().collect();
            match what {
                What::Call(r)
                    if super::super::account::is_sync_call(p.strings.get(p.runtime.name(r))) =>
                {
                    let enter = items.len();
                    items.push(Item {
                        what: What::Enter(r),
                        device,
                        lane: None,
                        start: s,
                        end: s,
                        deps: dep(prev),
                    });
                    items.push(Item {
                        what: What::Return(r),
                        device,
                        lane: None,
                        start: e,
                        end: e,
                        deps: vec![(enter, Edge::Thread)],
                    });
                    call_item.insert(r, enter);
                    return_item.insert(r, enter + 1);
                    prev = Some(enter + 1);
                }
                _ => {
                    if let What::Call(r) = what {
                        call_item.insert(r, items.len());
                    }
                    items.push(Item {
                        what,
                        device,
                        lane: None,
                        start: s,
                        end: e,
                        deps: dep(prev),
                    });
                    prev = Some(items.len() - 1);
                }
            }
        }
    }
    // GPU: each stream's rows in order; a matched NCCL row arrives, then
    // finishes after its call's members met.
    let mut end_item: HashMap<usize, usize> = HashMap::new();
    let mut meet: HashMap<u32, usize> = HashMap::new();
    let mut recorded_waits = false;
    for (lane_id, lane) in p.lanes.iter().enumerate() {
        // the lane's waits, each taken by the first row launched after it
        let waits = cuda_sync::waits_of_lane(p, clock, records, lane_id as u32, span);
        recorded_waits |= !waits.is_empty();
        let mut next_wait = 0;
        let mut prev: Option<usize> = None;
        for row in step_rows[lane_id].clone() {
            let (s, e) = clock.gpu_span(p, row);
            let mut deps: Vec<(usize, Edge)> = Vec::new();
            let call = p.gpu.launch(row);
            if call != NONE
                && let Some(&c) = call_item.get(&(call as usize))
            {
                deps.push((c, Edge::Launch));
            }
            if let Some(pr) = prev
                && let Some(&it) = end_item.get(&pr)
            {
                deps.push((it, Edge::Stream));
            }
            if call != NONE {
                let launched = clock.runtime_span(p, call as usize).0;
                while let Some(w) = waits.get(next_wait)
                    && w.at <= launched
                {
                    if let Some(f) = w.on(p, clock, row).followed
                        && let Some(&it) = end_item.get(&f)
                    {
                        deps.push((it, Edge::Event));
                    }
                    next_wait += 1;
                }
            }
            let (device, lane) = (Some(lane.device), Some(lane_id as u32));
            match call_of.get(&row) {
                Some(&Call {
                    index: c,
                    last,
                    uncertain,
                }) if classes.comm(p, row).is_some() => {
                    let a = items.len();
                    items.push(Item {
                        what: What::Arrive(row),
                        device,
                        lane,
                        start: s,
                        end: s,
                        deps,
                    });
                    let m = *meet.entry(c).or_insert_with(|| {
                        items.push(Item {
                            what: What::Meet,
                            device: None,
                            lane: None,
                            start: last,
                            end: last,
                            deps: Vec::new(),
                        });
                        items.len() - 1
                    });
                    items[m].deps.push((a, Edge::Meet));
                    items.push(Item {
                        what: What::Finish(row, uncertain),
                        device,
                        lane,
                        start: last.min(e),
                        end: e,
                        deps: vec![(m, Edge::Meet), (a, Edge::Meet)],
                    });
                    end_item.insert(row, items.len() - 1);
                }
                _ => {
                    end_item.insert(row, items.len());
                    items.push(Item {
                        what: What::Gpu(row),
                        device,
                        lane,
                        start: s,
                        end: e,
                        deps,
                    });
                }
            }
            prev = Some(row);
        }
    }
    infer_stream_waits(&mut items, recorded_waits);
    // A sync call returns after the last GPU work of its process that
    // ended while it ran.
    let mut lanes_of: HashMap<ThreadId, Vec<u32>> = HashMap::new();
    for (&call, &ret) in &return_item {
        let t = p.runtime.thread(call);
        let lanes = lanes_of
            .entry(t)
            .or_insert_with(|| super::super::why::process_lanes(p, t));
        if let Some(w) = super::super::why::waited_for_call(p, clock, lanes, call)
            && let Some(&it) = end_item.get(&w.row)
        {
            items[ret].deps.push((it, Edge::Sync));
        }
    }
    items
}

/// A GPU node starts this long after all it is known to wait for...
const HELD_NS: i64 = 5_000;
/// ...and within this of the end of work on another stream of its device:
/// it waited for that work (an event the capture did not record).
const INFER_NS: i64 = 10_000;

/// Where the capture recorded no stream-wait-event that explains a GPU
/// node's start, the work on another stream of its device that ended just
/// before it is taken as what it waited for (PyTorch's compute stream
/// waits on its NCCL stream's event so; nsys records those events only
/// with CUDA event tracing on).
pub(super) fn infer_stream_waits(items: &mut [Item], recorded: bool) {
    if recorded {
        return;
    }
    let mut ends: HashMap<DevId, Vec<(i64, usize, u32)>> = HashMap::new();
    for (i, it) in items.iter().enumerate() {
        if let (What::Gpu(_) | What::Finish(..), Some(d), Some(l)) = (it.what, it.device, it.lane) {
            ends.entry(d).or_default().push((it.end, i, l));
        }
    }
    for v in ends.values_mut() {
        v.sort_unstable();
    }
    for i in 0..items.len() {
        let it = &items[i];
        let (What::Gpu(_) | What::Arrive(_), Some(d), Some(l)) = (it.what, it.device, it.lane)
        else {
            continue;
        };
        let known = it
            .deps
            .iter()
            .map(|&(x, _)| items[x].end)
            .max()
            .unwrap_or(i64::MIN);
        if it.start.saturating_sub(known) <= HELD_NS {
            continue;
        }
        let Some(v) = ends.get(&d) else { continue };
        let at = v.partition_point(|e| e.0 <= it.start);
        let found = v[..at]
            .iter()
            .rev()
            .take_while(|e| it.start - e.0 <= INFER_NS)
            .find(|e| e.2 != l && e.0 > known)
            .map(|e| e.1);
        if let Some(f) = found {
            items[i].deps.push((f, Edge::Event));
        }
    }
}

/// Node order: dependencies first (Kahn's), by time among the ready; a
/// cycle (times that contradict each other) is broken by dropping the
/// edges left into its earliest node.
pub(super) fn order(items: &[Item]) -> Vec<usize> {
    let n = items.len();
    let mut waiting: Vec<usize> = items.iter().map(|i| i.deps.len()).collect();
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, it) in items.iter().enumerate() {
        for &(d, _) in &it.deps {
            users[d].push(i);
        }
    }
    let key = |i: usize| std::cmp::Reverse((items[i].start, items[i].end, i));
    let mut ready: BinaryHeap<std::cmp::Reverse<(i64, i64, usize)>> =
        (0..n).filter(|&i| waiting[i] == 0).map(key).collect();
    let mut done = vec![false; n];
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let i = match ready.pop() {
            Some(std::cmp::Reverse((_, _, i))) => i,
            None => match (0..n)
                .filter(|&i| !done[i])
                .min_by_key(|&i| (items[i].start, i))
            {
                Some(i) => i,
                None => break,
            },
        };
        if done[i] {
            continue;
        }
        done[i] = true;
        out.push(i);
        for &u in &users[i] {
            waiting[u] = waiting[u].saturating_sub(1);
            if waiting[u] == 0 && !done[u] {
                ready.push(key(u));
            }
        }
    }
    out
}
