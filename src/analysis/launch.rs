//! Launch correlation: every kernel linked to its launch call by
//! (process, correlationId), queue times, and for each late rank the verdict
//! — did the CPU issue the kernel late, or was it queued in time and started
//! late on the GPU, behind other work?

use super::Window;
use super::kernel_class::KernelClasses;
use super::matching::Matching;
use super::skew::{GroupSkew, InstanceSkew};
use super::stats::Spread;
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
    /// The launch call ended after a peer's kernel had already started.
    CpuLate,
    /// Issued in time; the kernel started late on the GPU.
    GpuSide,
    /// No launch call (partial capture) or launched from a CUDA graph.
    Unknown,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::CpuLate => "cpu-late",
            Verdict::GpuSide => "gpu-side",
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
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
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
    pub cpu_delay_ns: Option<i64>,
    pub verdict: Verdict,
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

pub fn launch_report(
    p: &Profile,
    classes: &KernelClasses,
    m: &Matching,
    skews: &[GroupSkew],
    w: Window,
) -> LaunchReport {
    let mut with = 0;
    let mut without = 0;
    let mut graph = 0;
    let mut queues: Vec<(Vec<f64>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); p.devices.len()];
    let mut early: Vec<(usize, i64)> = vec![(0, 0); p.devices.len()];
    for lane in &p.lanes {
        for i in lane.rows.clone() {
            if p.gpu.kind(i) != GpuKind::Kernel || !w.contains(p.gpu.start(i), p.gpu.end(i)) {
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
            let q_ns = p.gpu.start(i).saturating_sub(p.runtime.end(call as usize));
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
    let mut late = Vec::new();
    for gs in skews {
        for ev in &gs.big_events {
            late.push(explain_late(p, m, gs.group, &ev.instance));
        }
    }
    LaunchReport {
        kernels_with_launch: with,
        kernels_without_launch: without,
        graph_kernels: graph,
        devices,
        late,
    }
}

/// Launch facts of an instance's late rank: when its launch call ended
/// relative to the earliest other rank's start, and what it queued behind.
pub fn explain_late(p: &Profile, m: &Matching, group: usize, inst: &InstanceSkew) -> LateLaunch {
    let g = &m.groups[group];
    let rows = g.instance_rows(inst.index);
    let row = rows[inst.late] as usize;
    let start = p.gpu.start(row);
    let earliest_other = (0..rows.len())
        .filter(|&d| d != inst.late)
        .map(|d| p.gpu.start(rows[d] as usize))
        .min()
        .unwrap_or(start);
    let call = p.gpu.launch(row);
    let from_graph = p.gpu.graph_node(row) != NO_GRAPH;
    let (api, end_to_start, delay, verdict) = if call == NONE {
        (None, None, None, Verdict::Unknown)
    } else {
        let end = p.runtime.end(call as usize);
        let delay = end.saturating_sub(earliest_other).max(0);
        let verdict = if from_graph {
            Verdict::Unknown
        } else if end > earliest_other {
            Verdict::CpuLate
        } else {
            Verdict::GpuSide
        };
        (
            Some(p.runtime.name(call as usize)),
            Some(start.saturating_sub(end)),
            Some(delay),
            verdict,
        )
    };
    LateLaunch {
        group,
        instance: inst.index,
        device: g.devices[inst.late],
        row,
        api,
        api_end_to_start_ns: end_to_start,
        cpu_delay_ns: delay,
        verdict,
        from_graph,
        preceding: preceding_kernel(p, row),
    }
}

/// The last kernel on another stream of the same device that ended within
/// [`PRECEDING_WITHIN_NS`] before `row` started: the GPU work it queued behind.
pub fn preceding_kernel(p: &Profile, row: usize) -> Option<Preceding> {
    let my_lane = p.gpu.lane(row);
    let device = p.lanes[my_lane as usize].device;
    let start = p.gpu.start(row);
    let mut best: Option<Preceding> = None;
    for (lane_id, lane) in p.lanes.iter().enumerate() {
        if lane.device != device || lane_id as LaneId == my_lane {
            continue;
        }
        let rows = p.gpu.starts(lane.rows.clone());
        let upto = lane.rows.start + rows.partition_point(|&s| s <= start);
        // Kernels on one stream run in order: only the last few can qualify.
        for i in (lane.rows.start..upto).rev().take(8) {
            let end = p.gpu.end(i);
            if p.gpu.kind(i) != GpuKind::Kernel
                || end > start
                || start.saturating_sub(end) > PRECEDING_WITHIN_NS
            {
                continue;
            }
            let gap = start.saturating_sub(end);
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
