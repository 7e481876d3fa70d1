//! Launch correlation: every kernel linked to its launch call by
//! (process, correlationId), queue times, and for each late rank the verdict
//! — did the CPU issue the kernel late, or was it queued in time and started
//! late on the GPU, behind other work? A verdict compares the late rank's
//! launch call with a peer's kernel start, possibly of another file: both
//! on the reference clock, and undecided when the two files' clocks are not
//! aligned closely enough to tell.

use super::clock::Alignment;
use super::kernel_class::KernelClasses;
use super::matching::Matching;
use super::skew::{GroupSkew, InstanceSkew};
use super::stats::Spread;
use super::window::Window;
use crate::profile::{DevId, GpuKind, LaneId, NO_GRAPH, NONE, Profile, Sym};

/// Queue time (kernel start − launch call end) spread of one device, in ms.
/// Signed: a kernel can start before its launch call returns.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct DeviceQueue {
    pub device: DevId,
    pub nccl_ms: Option<Spread>,
    pub other_ms: Option<Spread>,
    /// Kernels that started before their launch call returned.
    pub started_before_return: usize,
    /// How long before, at most (0 when none did).
    pub most_before_return_ns: i64,
}

/// Why the late rank was late.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Verdict {
    /// Most of the lateness is on the CPU: the launch call ended after
    /// the first peer's kernel had started, by more than the kernel then
    /// waited on the GPU.
    CpuLate,
    /// Most of the lateness is on the GPU: launched in time, or less late
    /// than it then queued.
    GpuSide,
    /// The launch call and the peer's start are on two clocks whose
    /// alignment is less certain than the delay between them.
    NotResolvable,
    /// No launch call in the capture (trimmed or partial).
    Unknown,
}

impl Verdict {
    pub const ALL: [Verdict; 4] = [
        Verdict::CpuLate,
        Verdict::GpuSide,
        Verdict::NotResolvable,
        Verdict::Unknown,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Verdict::CpuLate => "cpu-late",
            Verdict::GpuSide => "gpu-side",
            Verdict::NotResolvable => "not-resolvable",
            Verdict::Unknown => "unknown",
        }
    }
}

/// The kernel a late kernel queued behind.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Preceding {
    pub row: usize,
    pub lane: LaneId,
    pub gap_ns: i64,
}

/// Launch facts of the late rank of one big event.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LateLaunch {
    pub group: usize,
    /// 0-based instance index.
    pub instance: usize,
    pub device: DevId,
    pub row: usize,
    pub api: Option<Sym>,
    /// Kernel start − launch call end; negative when the kernel started
    /// before the call returned (kept signed, never clamped).
    pub api_end_to_start_ns: Option<i64>,
    /// Launch call end − the earliest peer's start, on the reference
    /// clock: 0 when the call ended first; kept with its sign when the
    /// verdict is not resolvable.
    pub cpu_delay_ns: Option<i64>,
    pub verdict: Verdict,
    /// The comparison holds beyond the clock error between the two files
    /// (always on one clock).
    pub resolvable: bool,
    /// The clock error (ns) between the late rank's file and its first
    /// peer's: 0 on one clock.
    #[serde(default)]
    pub clock_error_ns: i64,
    pub from_graph: bool,
    pub preceding: Option<Preceding>,
}

/// The launch section.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct LaunchReport {
    pub kernels_with_launch: usize,
    pub kernels_without_launch: usize,
    /// Kernels launched from a CUDA graph (linked to the graph launch).
    pub graph_kernels: usize,
    pub devices: Vec<DeviceQueue>,
    pub late: Vec<LateLaunch>,
}

/// Up to this much, a kernel starting before its launch call returned is
/// the µs granularity of the two clocks; beyond it, the call ran on.
pub const CLOCK_GRANULARITY_NS: i64 = 10_000;

/// "2.0 µs before its launch call returned (clock granularity)", for
/// `ns` > 0; `whose` is "its" or "their". Shared by the report and the
/// timeline so both say the same.
pub fn before_return(ns: i64, whose: &str) -> String {
    format!(
        "{:.1} µs before {whose} launch call returned ({})",
        ns as f64 / 1e3,
        if ns <= CLOCK_GRANULARITY_NS {
            "clock granularity"
        } else {
            "beyond clock granularity: the call ran on after submitting the kernel"
        }
    )
}

/// How far back a preceding kernel may have ended.
pub const PRECEDING_WITHIN_NS: i64 = 1_000_000;

/// The launch section but its late launches: how long each kernel waited
/// after its launch call, per device. Each kernel is measured against a
/// call of its own process, so on its file's clock: over the whole
/// capture, no alignment of the clocks changes it (the pipeline runs it
/// beside the matching).
pub fn launch_queues(
    p: &Profile,
    classes: &KernelClasses,
    clock: &Alignment,
    w: Window,
) -> LaunchReport {
    let mut with = 0;
    let mut without = 0;
    let mut graph = 0;
    let mut queues: Vec<(Vec<f64>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); p.devices.len()];
    let mut early: Vec<(usize, i64)> = vec![(0, 0); p.devices.len()];
    for (lane_id, lane) in p.lanes.iter().enumerate() {
        let (lane_id, file) = (lane_id as LaneId, p.lane_file(lane_id as LaneId));
        let wf = clock.window_in_file(file, w);
        for (i, s, e) in clock.lane_rows(p, lane_id, w, file) {
            if p.gpu.kind(i) != GpuKind::Kernel || !wf.contains(s, e) {
                continue;
            }
            let call = p.gpu.launch(i);
            if call == NONE {
                without += 1;
                continue;
            }
            with += 1;
            if p.gpu.graph_node(i) != NO_GRAPH {
                graph += 1;
                continue;
            }
            // The kernel and its launch call share a process, so a file.
            let q_ns = s.saturating_sub(p.runtime.end(call as usize));
            if q_ns < 0 {
                let e = &mut early[lane.device as usize];
                e.0 += 1;
                e.1 = e.1.max(q_ns.saturating_neg());
            }
            let q = q_ns as f64 / 1e6;
            let qs = &mut queues[lane.device as usize];
            if classes.comm(p, i).is_some() {
                qs.0.push(q)
            } else {
                qs.1.push(q)
            }
        }
    }
    let devices = super::completeness::device_order(p)
        .into_iter()
        .filter_map(|d| {
            let (n, o) = std::mem::take(&mut queues[d as usize]);
            let (started_before_return, most_before_return_ns) = early[d as usize];
            (!n.is_empty() || !o.is_empty()).then(|| DeviceQueue {
                device: d,
                nccl_ms: Spread::of(n),
                other_ms: Spread::of(o),
                started_before_return,
                most_before_return_ns,
            })
        })
        .collect();
    LaunchReport {
        kernels_with_launch: with,
        kernels_without_launch: without,
        graph_kernels: graph,
        devices,
        late: Vec::new(),
    }
}

/// The launch facts of every big event's late rank.
pub fn late_launches(
    p: &Profile,
    clock: &Alignment,
    m: &Matching,
    skews: &[GroupSkew],
) -> Vec<LateLaunch> {
    let mut late = Vec::new();
    for gs in skews {
        // A rank that never started it has no launch to explain.
        for ev in gs.big_events.iter().filter(|e| !e.instance.open) {
            late.push(explain_late(p, clock, m, gs.group, &ev.instance));
        }
    }
    late
}

/// Launch facts of an instance's late rank: when its launch call ended
/// relative to the earliest other rank's start (both on the reference
/// clock), and what it queued behind.
pub fn explain_late(
    p: &Profile,
    clock: &Alignment,
    m: &Matching,
    group: usize,
    inst: &InstanceSkew,
) -> LateLaunch {
    let g = &m.groups[group];
    let (row, start, peer) = late_and_first_peer(g, inst);
    let earliest_other = peer.map_or(start, |m| m.2.0);
    let call = p.gpu.launch(row);
    let from_graph = p.gpu.graph_node(row) != NO_GRAPH;
    let (mut api, mut end_to_start, mut delay) = (None, None, None);
    let (mut verdict, mut resolvable) = (Verdict::Unknown, true);
    let error = peer.map_or(0, |m| clock.rows_error_ns(p, row, m.1));
    // A graph kernel's launch call is the cudaGraphLaunch that replayed it
    // (nsys gives every kernel of a replay that call's correlation id): it
    // was issued no earlier than that call's end, so it is judged like any
    // launch; what the graph's earlier nodes held it for is GPU time.
    if call != NONE {
        let end = clock.runtime_span(p, call as usize).1;
        let signed = end.saturating_sub(earliest_other);
        resolvable = signed.unsigned_abs() > error.unsigned_abs();
        verdict = if !resolvable {
            Verdict::NotResolvable
        } else if signed > 0 && signed > start.saturating_sub(end.max(earliest_other)) {
            // Late on the CPU when that is where most of the lateness is:
            // a call ending µs after the first peer started, its kernel
            // then queued for ms, was held on the GPU.
            Verdict::CpuLate
        } else {
            Verdict::GpuSide
        };
        api = Some(p.runtime.name(call as usize));
        end_to_start = Some(start.saturating_sub(end));
        delay = Some(if resolvable { signed.max(0) } else { signed });
    }
    LateLaunch {
        group,
        instance: inst.index,
        device: g.devices[inst.late],
        row,
        api,
        api_end_to_start_ns: end_to_start,
        cpu_delay_ns: delay,
        verdict,
        resolvable,
        clock_error_ns: error,
        from_graph,
        preceding: preceding_kernel(p, clock, row),
    }
}

/// A rank's kernel in an instance: (device index, GPU row, span on the
/// reference clock).
pub type Member = (usize, usize, (i64, i64));

/// An instance's late rank's kernel (GPU row, start) and the earliest
/// other rank of those that have it (ties: the lowest device), all on the
/// reference clock.
pub fn late_and_first_peer(
    g: &super::matching::Group,
    inst: &InstanceSkew,
) -> (usize, i64, Option<Member>) {
    let members: Vec<Member> = g.members(inst.index).collect();
    let (row, start) = members
        .iter()
        .find(|m| m.0 == inst.late)
        .map_or((0, inst.earliest_start), |m| (m.1, m.2.0));
    let peer = members
        .iter()
        .filter(|m| m.0 != inst.late)
        .min_by_key(|m| (m.2.0, m.0))
        .copied();
    (row, start, peer)
}

/// The last kernel on another stream of the same device that ended within
/// [`PRECEDING_WITHIN_NS`] before `row` started: the GPU work it queued
/// behind.
pub fn preceding_kernel(p: &Profile, clock: &Alignment, row: usize) -> Option<Preceding> {
    let my_lane = p.gpu.lane(row);
    let (device, file) = (p.lanes[my_lane as usize].device, p.lane_file(my_lane));
    let start = p.gpu.start(row);
    let at = clock.gpu_start(p, row);
    let before = Window {
        start: at.saturating_sub(PRECEDING_WITHIN_NS),
        end: at,
    };
    let mut best: Option<Preceding> = None;
    for (lane_id, lane) in p.lanes.iter().enumerate() {
        if lane.device != device || lane_id as LaneId == my_lane {
            continue;
        }
        // On the late kernel's file clock (one GPU may be seen by two files).
        for (i, _, end) in clock.lane_rows(p, lane_id as LaneId, before, file) {
            let gap = start.saturating_sub(end);
            if p.gpu.kind(i) != GpuKind::Kernel || end > start || gap > PRECEDING_WITHIN_NS {
                continue;
            }
            if best.as_ref().is_none_or(|b| gap < b.gap_ns) {
                best = Some(Preceding {
                    row: i,
                    lane: lane_id as LaneId,
                    gap_ns: gap,
                });
            }
        }
    }
    best
}
