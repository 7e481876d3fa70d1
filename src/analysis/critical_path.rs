//! The critical path of each step through every rank, and what removing
//! each cause on it would save.
//!
//! A step's work becomes a dependency graph ([`DepGraph`]): each thread's
//! CUDA and OS runtime calls in order (the time between two is the CPU's
//! own work: host), a synchronising call's return after the GPU work it
//! waited for, each GPU row after its launch call, the row before it on
//! its stream and the work a stream-wait-event's event followed, and each
//! collective call as a barrier: its members arrive, meet when the last
//! one has, and each ends its transfer after that. Every node's binding
//! edge (the dependency that ended last) carries the lag observed, so the
//! graph replays the trace exactly. The critical path runs back from the
//! step's last end along binding edges; its segments add up to the step
//! time. A what-if replays the graph with one cause removed — an OS wait
//! or a host gap of 1 ms or more taken out, a compute kernel slower than
//! its peers' median for the same kernel in the same step brought to that
//! median — so slack is respected: another path may take over.

use super::calls;
use super::clock::Alignment;
use super::cuda_sync;
use super::dep_graph::{Change, DepGraph, NodeId};
use super::kernel_class::{GpuWork, KernelClasses};
use super::matching::Matching;
use crate::profile::{DevId, Profile, Sym};
use std::collections::HashMap;

mod step_graph;
use step_graph::{Call, Edge, Item, What, items, order, process_devices};

/// What a segment of the path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SegKind {
    /// A compute kernel ran.
    Compute,
    /// A collective's transfer: from its last member's arrival to this
    /// member's end.
    Transfer,
    /// An NCCL kernel matched to no call.
    Nccl,
    Copy,
    /// The CPU in a CUDA call.
    CudaCall,
    /// The CPU in an OS runtime call (a wait, a read).
    OsWait,
    /// The CPU between calls: the program's own work.
    Host,
    /// From a launch call to its work's start on the GPU.
    Launch,
    /// Between two rows of a stream, or an event's work and its waiter.
    GpuGap,
    /// From the GPU work a sync waited for to the call's return.
    Sync,
    /// Before the path's first node and after its last within the span.
    Other,
}

impl SegKind {
    pub fn name(self) -> &'static str {
        match self {
            SegKind::Compute => "compute",
            SegKind::Transfer => "transfer",
            SegKind::Nccl => "nccl",
            SegKind::Copy => "copy",
            SegKind::CudaCall => "cuda_call",
            SegKind::OsWait => "os_wait",
            SegKind::Host => "host",
            SegKind::Launch => "launch",
            SegKind::GpuGap => "gpu_gap",
            SegKind::Sync => "sync",
            SegKind::Other => "other",
        }
    }
}

/// One segment of a critical path (reference clock): on which device
/// (the GPU's, or the device of the process whose thread it is), what.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Segment {
    pub device: Option<DevId>,
    pub kind: SegKind,
    /// A kernel's, call's or OS function's name.
    pub what: Option<Sym>,
    pub start: i64,
    pub end: i64,
    /// A transfer whose call's last arrival is within the clocks' error of
    /// another host's: the path may run through either.
    pub uncertain: bool,
    /// The trace row it is, where it is one (a gap between rows is none).
    #[serde(skip)]
    pub event: Option<PathEvent>,
}

/// A row of the trace a path segment is: a GPU row, a CUDA runtime call or
/// an OS runtime call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathEvent {
    Gpu(usize),
    Api(usize),
    Osrt(usize),
}

/// What removing one cause would save on a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct WhatIf {
    pub device: Option<DevId>,
    pub kind: SegKind,
    pub what: Option<Sym>,
    /// How many ranks' causes are removed together: 1, or every rank of
    /// the device's host whose OS wait of the same name overlaps it (a
    /// host-wide pause is one event: removing one rank's part of it saves
    /// nothing while the others still wait).
    pub ranks: usize,
    pub saves_ns: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StepPath {
    pub step: usize,
    pub span: (i64, i64),
    /// In time order; they add up to the span.
    pub path: Vec<Segment>,
    /// Largest saving first.
    pub what_if: Vec<WhatIf>,
}

/// A host gap shorter than this is the program's ordinary work between
/// calls, not a stall to remove.
const HOST_GAP_MIN_NS: i64 = 1_000_000;
/// A kernel is slow when it runs this much (and 5 %) over its peers' median.
const SLOW_MIN_NS: i64 = 50_000;
/// What-ifs replayed per step (the longest candidates).
const MAX_WHAT_IFS: usize = 16;
/// A what-if saving less than this is not listed.
const MIN_SAVES_NS: i64 = 10_000;

/// Every step's critical path and what-ifs.
pub fn critical_paths(
    p: &Profile,
    classes: &KernelClasses,
    clock: &Alignment,
    m: &Matching,
    spans: &[(i64, i64)],
) -> Vec<StepPath> {
    if spans.is_empty() {
        return Vec::new();
    }
    // Each matched NCCL row's call: (index, last arrival).
    let mut call_of: HashMap<usize, Call> = HashMap::new();
    let mut n_calls = 0u32;
    let host = |row: usize| p.devices[p.lanes[p.gpu.lane(row) as usize].device as usize].host;
    calls::for_each_call(p, clock, m, |call, error| {
        let last = calls::last_arrival(call);
        // the last arrival's host, and whether one on another host arrived
        // within the clocks' error of it
        let (last_row, _) = *call.iter().max_by_key(|(r, s)| (s.0, *r)).expect("members");
        let uncertain = error > 0
            && call
                .iter()
                .any(|&(r, s)| host(r) != host(last_row) && last - s.0 <= error);
        for &(row, _) in call {
            call_of.insert(
                row,
                Call {
                    index: n_calls,
                    last,
                    uncertain,
                },
            );
        }
        n_calls += 1;
    });
    let process_device = process_devices(p);
    let records = cuda_sync::RecordIndex::new(p, clock);
    spans
        .iter()
        .enumerate()
        .map(|(i, &span)| {
            let items = items(p, classes, clock, &call_of, &process_device, &records, span);
            step_path(p, classes, i + 1, span, &items)
        })
        .collect()
}

fn step_path(
    p: &Profile,
    classes: &KernelClasses,
    step: usize,
    span: (i64, i64),
    items: &[Item],
) -> StepPath {
    let mut path = StepPath {
        step,
        span,
        path: Vec::new(),
        what_if: Vec::new(),
    };
    if items.is_empty() {
        path.path.push(Segment {
            device: None,
            kind: SegKind::Other,
            what: None,
            start: span.0,
            end: span.1,
            uncertain: false,
            event: None,
        });
        return path;
    }
    let order = order(items);
    let mut id = vec![NodeId::MAX; items.len()];
    let mut g = DepGraph::default();
    for &i in &order {
        let it = &items[i];
        let deps: Vec<(usize, Edge)> = it
            .deps
            .iter()
            .copied()
            .filter(|&(d, _)| id[d] != NodeId::MAX)
            .collect();
        let binding = deps.iter().map(|&(d, _)| items[d].end).max();
        let edges: Vec<(NodeId, i64)> = deps
            .iter()
            .map(|&(d, _)| {
                let gap = it.start - items[d].end;
                let lag = if Some(items[d].end) == binding {
                    gap
                } else {
                    gap.min(0)
                };
                (id[d], lag)
            })
            .collect();
        id[i] = g.node(it.end - it.start, it.start, &edges);
    }
    let item_of: Vec<usize> = {
        let mut v = vec![0; order.len()];
        for &i in &order {
            v[id[i] as usize] = i;
        }
        v
    };
    let base = g.replay(&[]);
    // The step ends with the last node that ends inside its span (work
    // launched late in a step may run on after it: not this step's end).
    let ends_inside: Vec<usize> = (0..g.len()).filter(|&n| base.end[n] <= span.1).collect();
    let ending: Vec<usize> = if ends_inside.is_empty() {
        (0..g.len()).collect()
    } else {
        ends_inside
    };
    let last = ending
        .iter()
        .copied()
        .max_by_key(|&n| (base.end[n], n))
        .unwrap_or(0);
    let graph_end = base.end[last];
    // the walk back
    let mut segs: Vec<(Segment, Source)> = Vec::new();
    segs.push((
        Segment {
            device: None,
            kind: SegKind::Other,
            what: None,
            start: graph_end.min(span.1),
            end: span.1,
            uncertain: false,
            event: None,
        },
        Source::None,
    ));
    let mut n = last as NodeId;
    loop {
        let it = &items[item_of[n as usize]];
        let (s, e) = (base.start[n as usize], base.end[n as usize]);
        if e != s {
            segs.push((
                Segment {
                    device: it.device,
                    kind: node_kind(p, classes, it.what),
                    what: node_name(p, it.what),
                    start: s,
                    end: e,
                    uncertain: matches!(it.what, What::Finish(_, true)),
                    event: node_event(it.what),
                },
                Source::Node(n),
            ));
        }
        match base.via[n as usize] {
            Some(d) => {
                let de = base.end[d as usize];
                if de != s {
                    let edge = it
                        .deps
                        .iter()
                        .find(|&&(x, _)| id[x] == d)
                        .map_or(Edge::Thread, |x| x.1);
                    let kind = match edge {
                        Edge::Thread => SegKind::Host,
                        Edge::Launch => SegKind::Launch,
                        Edge::Stream | Edge::Event | Edge::Meet => SegKind::GpuGap,
                        Edge::Sync => SegKind::Sync,
                    };
                    segs.push((
                        Segment {
                            device: it.device,
                            kind,
                            what: None,
                            start: de,
                            end: s,
                            uncertain: false,
                            event: None,
                        },
                        Source::Edge(n, d),
                    ));
                }
                n = d;
            }
            None => {
                segs.push((
                    Segment {
                        device: None,
                        kind: SegKind::Other,
                        what: None,
                        start: span.0,
                        end: s.max(span.0),
                        uncertain: false,
                        event: None,
                    },
                    Source::None,
                ));
                break;
            }
        }
    }
    segs.reverse();
    // what-ifs: the longest candidates on the path
    let medians = peer_medians(p, classes, items);
    let mut candidates: Vec<(i64, WhatIf, Vec<Change>)> = Vec::new();
    for (seg, source) in &segs {
        let len = seg.end - seg.start;
        let cause = |kind| WhatIf {
            device: seg.device,
            kind,
            what: seg.what,
            saves_ns: 0,
            ranks: 1,
        };
        match (seg.kind, *source) {
            (SegKind::Host, Source::Edge(node, on)) if len >= HOST_GAP_MIN_NS => {
                candidates.push((len, cause(SegKind::Host), vec![Change::Lag(node, on, 0)]));
            }
            (SegKind::OsWait, Source::Node(node)) => {
                candidates.push((len, cause(SegKind::OsWait), vec![Change::Duration(node, 0)]));
                let together = host_wide(p, items, &id, item_of[node as usize]);
                if together.len() > 1 {
                    let mut w = cause(SegKind::OsWait);
                    w.ranks = together.len();
                    let changes = together.iter().map(|&n| Change::Duration(n, 0)).collect();
                    candidates.push((len, w, changes));
                }
            }
            (SegKind::Compute, Source::Node(node)) => {
                if let What::Gpu(row) = items[item_of[node as usize]].what
                    && let Some(&med) = medians.get(&row)
                    && len - med >= SLOW_MIN_NS.max(med / 20)
                {
                    candidates.push((
                        len - med,
                        cause(SegKind::Compute),
                        vec![Change::Duration(node, med)],
                    ));
                }
            }
            _ => {}
        }
    }
    candidates.sort_by_key(|c| std::cmp::Reverse(c.0));
    candidates.truncate(MAX_WHAT_IFS);
    for (_, mut w, changes) in candidates {
        let r = g.replay(&changes);
        let end = ending.iter().map(|&n| r.end[n]).max().unwrap_or(graph_end);
        w.saves_ns = graph_end - end;
        if w.saves_ns >= MIN_SAVES_NS {
            path.what_if.push(w);
        }
    }
    path.what_if.sort_by_key(|w| std::cmp::Reverse(w.saves_ns));
    path.path = merge(within_span(
        segs.into_iter().map(|(s, _)| s).collect(),
        span,
    ));
    path
}

/// The nodes of OS waits of the same name as item `at`'s on its host's
/// devices that overlap it, one per device (its own among them).
fn host_wide(p: &Profile, items: &[Item], id: &[NodeId], at: usize) -> Vec<NodeId> {
    let me = &items[at];
    let (What::Osrt(row), Some(d)) = (me.what, me.device) else {
        return Vec::new();
    };
    let host = |d: DevId| p.devices[d as usize].host;
    let name = p.osrt.name(row);
    let mut seen: Vec<DevId> = Vec::new();
    let mut out = Vec::new();
    for (i, it) in items.iter().enumerate() {
        if let (What::Osrt(r), Some(e)) = (it.what, it.device)
            && host(e) == host(d)
            && p.osrt.name(r) == name
            && it.start < me.end
            && me.start < it.end
            && id[i] != NodeId::MAX
            && (i == at || (e != d && !seen.contains(&e)))
        {
            seen.push(e);
            out.push(id[i]);
        }
    }
    out
}

/// Where a path segment comes from: a node's own span, or the lag of
/// the edge from the second node into the first.
#[derive(Clone, Copy)]
enum Source {
    None,
    Node(NodeId),
    Edge(NodeId, NodeId),
}

/// The path's segments inside the step's span (work that started in it
/// may end after it), so that they add up to the span: a segment that
/// runs backwards (a kernel that started before its launch call returned)
/// is kept only inside the span, and what the cut leaves over is `other`
/// at the end.
fn within_span(segs: Vec<Segment>, span: (i64, i64)) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::with_capacity(segs.len());
    for mut s in segs {
        if s.start <= s.end {
            (s.start, s.end) = (s.start.max(span.0), s.end.min(span.1));
            if s.end <= s.start {
                continue;
            }
        } else if s.start > span.1 || s.end < span.0 {
            continue;
        }
        out.push(s);
    }
    let total: i64 = out.iter().map(|s| s.end - s.start).sum();
    let left = (span.1 - span.0) - total;
    if left != 0 {
        out.push(Segment {
            device: None,
            kind: SegKind::Other,
            what: None,
            start: span.1 - left,
            end: span.1,
            uncertain: false,
            event: None,
        });
    }
    out
}

/// Neighbouring segments of one device, kind and name as one.
fn merge(segs: Vec<Segment>) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    for s in segs {
        match out.last_mut() {
            Some(l)
                if l.device == s.device
                    && l.kind == s.kind
                    && l.what == s.what
                    && l.end == s.start =>
            {
                l.end = s.end;
                l.uncertain |= s.uncertain;
            }
            _ => out.push(s),
        }
    }
    out
}

fn node_kind(p: &Profile, classes: &KernelClasses, w: What) -> SegKind {
    match w {
        What::Gpu(row) => match classes.work(p, row) {
            GpuWork::Copy => SegKind::Copy,
            GpuWork::Comm => SegKind::Nccl,
            GpuWork::Compute => SegKind::Compute,
        },
        What::Arrive(_) | What::Meet => SegKind::Other,
        What::Finish(..) => SegKind::Transfer,
        What::Call(_) | What::Enter(_) | What::Return(_) => SegKind::CudaCall,
        What::Osrt(_) => SegKind::OsWait,
    }
}

fn node_event(w: What) -> Option<PathEvent> {
    match w {
        What::Gpu(row) | What::Finish(row, _) | What::Arrive(row) => Some(PathEvent::Gpu(row)),
        What::Call(r) | What::Enter(r) | What::Return(r) => Some(PathEvent::Api(r)),
        What::Osrt(r) => Some(PathEvent::Osrt(r)),
        What::Meet => None,
    }
}

fn node_name(p: &Profile, w: What) -> Option<Sym> {
    match w {
        What::Gpu(row) | What::Finish(row, _) | What::Arrive(row) => Some(p.gpu.name(row)),
        What::Call(r) | What::Enter(r) | What::Return(r) => Some(p.runtime.name(r)),
        What::Osrt(r) => Some(p.osrt.name(r)),
        What::Meet => None,
    }
}

/// Each compute kernel's peers' median duration: the same kernel (name
/// and its occurrence on its device) in the step on every device.
fn peer_medians(p: &Profile, classes: &KernelClasses, items: &[Item]) -> HashMap<usize, i64> {
    let mut by_device: HashMap<DevId, Vec<&Item>> = HashMap::new();
    for it in items {
        if let What::Gpu(row) = it.what
            && classes.work(p, row) == GpuWork::Compute
            && let Some(d) = it.device
        {
            by_device.entry(d).or_default().push(it);
        }
    }
    let mut peers: HashMap<(Sym, usize), Vec<i64>> = HashMap::new();
    let mut key_of: Vec<(usize, (Sym, usize))> = Vec::new();
    for list in by_device.values_mut() {
        list.sort_by_key(|it| it.start);
        let mut seen: HashMap<Sym, usize> = HashMap::new();
        for it in list.iter() {
            let What::Gpu(row) = it.what else { continue };
            let name = p.gpu.name(row);
            let j = seen.entry(name).or_default();
            peers.entry((name, *j)).or_default().push(it.end - it.start);
            key_of.push((row, (name, *j)));
            *j += 1;
        }
    }
    let medians: HashMap<(Sym, usize), i64> = peers
        .into_iter()
        .filter(|(_, v)| v.len() >= 3)
        .map(|(k, mut v)| {
            v.sort_unstable();
            (k, v[v.len() / 2])
        })
        .collect();
    key_of
        .into_iter()
        .filter_map(|(row, k)| medians.get(&k).map(|&m| (row, m)))
        .collect()
}
