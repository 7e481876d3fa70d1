//! Where each training step's time goes on each rank: the device's time
//! over the job's step span (the step's NVTX ranges, earliest start to
//! latest end over every rank, on the aligned clocks) cut by interval
//! unions into parts that add up to the span exactly:
//!
//! - compute: a compute kernel runs and no NCCL kernel does;
//! - overlapped: both run;
//! - exposed communication, an NCCL kernel alone, is **waiting** while
//!   its collective's last member had not started yet (from the
//!   matching: the members that end together), **transfer** after;
//! - copy: only a memcpy or memset runs;
//! - idle, nothing runs, by what the work that ends the idle stretch
//!   (the device's next start) waited for: **host-bound** when its launch
//!   call ended after the device went idle (the CPU did not keep up),
//!   **dependency** when it was launched in time but its stream waited on
//!   an event recorded, or completed, only after the device went idle,
//!   else other idle.
//!
//! Figures are per device; sums over devices are not wall time.

use super::clock::Alignment;
use super::cuda_sync;
use super::intervals::{Span, clip, intersection_len, subtract, total, union};
use super::kernel_class::{GpuWork, KernelClasses};
use super::matching::Matching;
use crate::profile::{DevId, LaneId, NONE, Profile};
use std::collections::HashMap;

/// One rank's (device's) account of one step, in ns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct RankStep {
    pub device: DevId,
    pub compute_ns: i64,
    pub overlapped_ns: i64,
    pub waiting_ns: i64,
    pub transfer_ns: i64,
    pub copy_ns: i64,
    pub host_bound_ns: i64,
    pub dependency_ns: i64,
    pub idle_ns: i64,
}

impl RankStep {
    /// The parts, in the order they are named; they add up to the span.
    pub fn parts(&self) -> [i64; 8] {
        [
            self.compute_ns,
            self.overlapped_ns,
            self.waiting_ns,
            self.transfer_ns,
            self.copy_ns,
            self.host_bound_ns,
            self.dependency_ns,
            self.idle_ns,
        ]
    }
}

/// The names of [`RankStep::parts`], as the reports write them.
pub const PARTS: [&str; 8] = [
    "compute",
    "overlapped",
    "waiting",
    "transfer",
    "copy",
    "host_bound",
    "dependency",
    "idle",
];

/// One step of the job: its number (from 1, job-wide), its span on the
/// reference clock and each device's account.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StepAccount {
    pub step: usize,
    pub span: Span,
    pub ranks: Vec<RankStep>,
}

impl StepAccount {
    pub fn span_ns(&self) -> i64 {
        self.span.1 - self.span.0
    }
}

/// One device's GPU work over the capture (reference clock).
#[derive(Default)]
struct DeviceWork {
    compute: Vec<Span>,
    nccl: Vec<Span>,
    copy: Vec<Span>,
    /// Where its NCCL kernels waited for their collective's last member.
    waiting: Vec<Span>,
    /// Every row by start: (start, row).
    starts: Vec<(i64, usize)>,
}

/// Every step's account, for each device with GPU work (in device order).
pub fn account(
    p: &Profile,
    classes: &KernelClasses,
    clock: &Alignment,
    m: &Matching,
    spans: &[(i64, i64)],
) -> Vec<StepAccount> {
    if spans.is_empty() {
        return Vec::new();
    }
    let work = device_work(p, classes, clock, m);
    let order: Vec<DevId> = super::completeness::device_order(p)
        .into_iter()
        .filter(|&d| !work[d as usize].starts.is_empty())
        .collect();
    let records = cuda_sync::RecordIndex::new(p, clock);
    spans
        .iter()
        .enumerate()
        .map(|(i, &span)| {
            let mut waits = LaneWaits {
                records: &records,
                span,
                by_lane: HashMap::new(),
            };
            StepAccount {
                step: i + 1,
                span,
                ranks: order
                    .iter()
                    .map(|&d| rank_step(p, clock, d, &work[d as usize], span, &mut waits))
                    .collect(),
            }
        })
        .collect()
}

/// The stream-wait-events of a step, per lane, resolved once when a row
/// of the lane first ends an idle stretch.
struct LaneWaits<'a> {
    records: &'a cuda_sync::RecordIndex,
    span: Span,
    by_lane: HashMap<LaneId, Vec<cuda_sync::LaneWait>>,
}

fn device_work(
    p: &Profile,
    classes: &KernelClasses,
    clock: &Alignment,
    m: &Matching,
) -> Vec<DeviceWork> {
    let mut work: Vec<DeviceWork> = (0..p.devices.len()).map(|_| Default::default()).collect();
    for lane in &p.lanes {
        let w = &mut work[lane.device as usize];
        for row in lane.rows.clone() {
            let span = clock.gpu_span(p, row);
            w.starts.push((span.0, row));
            match classes.work(p, row) {
                GpuWork::Copy => w.copy.push(span),
                GpuWork::Comm => w.nccl.push(span),
                GpuWork::Compute => w.compute.push(span),
            }
        }
    }
    super::calls::for_each_call(p, clock, m, |call, _| {
        let last = super::calls::last_arrival(call);
        for &(row, (start, end)) in call.iter().filter(|(_, s)| s.0 < last) {
            let d = p.lanes[p.gpu.lane(row) as usize].device;
            work[d as usize].waiting.push((start, end.min(last)));
        }
    });
    for w in &mut work {
        w.compute = union(std::mem::take(&mut w.compute));
        w.nccl = union(std::mem::take(&mut w.nccl));
        w.copy = union(std::mem::take(&mut w.copy));
        w.waiting = union(std::mem::take(&mut w.waiting));
        w.starts.sort_unstable();
    }
    work
}

fn rank_step(
    p: &Profile,
    clock: &Alignment,
    device: DevId,
    w: &DeviceWork,
    span: Span,
    waits: &mut LaneWaits,
) -> RankStep {
    let (c, n, m, wait) = (
        clip(&w.compute, span),
        clip(&w.nccl, span),
        clip(&w.copy, span),
        clip(&w.waiting, span),
    );
    let overlapped = intersection_len(&c, &n);
    let exposed = subtract(&n, &c);
    let waiting = intersection_len(&exposed, &wait);
    let kernels = union(c.iter().chain(&n).copied().collect());
    let copy = total(&m) - intersection_len(&m, &kernels);
    let busy = union(kernels.iter().chain(&m).copied().collect());
    let mut out = RankStep {
        device,
        compute_ns: total(&c) - overlapped,
        overlapped_ns: overlapped,
        waiting_ns: waiting,
        transfer_ns: total(&exposed) - waiting,
        copy_ns: copy,
        ..RankStep::default()
    };
    for gap in subtract(&[span], &busy) {
        let ns = gap.1 - gap.0;
        match idle_cause(p, clock, w, waits, gap) {
            Idle::HostBound => out.host_bound_ns += ns,
            Idle::Dependency => out.dependency_ns += ns,
            Idle::Other => out.idle_ns += ns,
        }
    }
    out
}

enum Idle {
    HostBound,
    Dependency,
    Other,
}

/// What the work that ends idle stretch `gap` waited for: the rows that
/// start first at or after its end. One launched in time that was not
/// held by an event means the device idled for some other reason.
fn idle_cause(
    p: &Profile,
    clock: &Alignment,
    w: &DeviceWork,
    waits: &mut LaneWaits,
    gap: Span,
) -> Idle {
    let at = w.starts.partition_point(|s| s.0 < gap.1);
    let Some(&(first, _)) = w.starts.get(at) else {
        return Idle::Other;
    };
    let next = w.starts[at..].iter().take_while(|s| s.0 == first);
    let mut cause = Idle::HostBound;
    for &(_, row) in next {
        let call = p.gpu.launch(row);
        if call == NONE {
            return Idle::Other;
        }
        if clock.runtime_span(p, call as usize).1 > gap.0 {
            continue;
        }
        if !held_by_event(p, clock, waits, row, gap.0) {
            return Idle::Other;
        }
        cause = Idle::Dependency;
    }
    cause
}

/// Whether `row`'s stream waited, ahead of it, on an event recorded after
/// `t` or completing after it (the work it followed ended later).
fn held_by_event(
    p: &Profile,
    clock: &Alignment,
    waits: &mut LaneWaits,
    row: usize,
    t: i64,
) -> bool {
    let lane = p.gpu.lane(row);
    let launched = |r: usize| cuda_sync::launched_at(p, clock, r);
    let Some(until) = launched(row) else {
        return false;
    };
    let rows = &p.lanes[lane as usize].rows;
    let after = (row > rows.start)
        .then(|| launched(row - 1))
        .flatten()
        .unwrap_or(i64::MIN);
    let (records, span) = (waits.records, waits.span);
    let list = waits
        .by_lane
        .entry(lane)
        .or_insert_with(|| cuda_sync::waits_of_lane(p, clock, records, lane, span));
    let from = list.partition_point(|w| w.at <= after);
    list[from..]
        .iter()
        .take_while(|w| w.at <= until)
        .map(|w| w.on(p, clock, row))
        .any(|w| {
            let call = p.cuda_events.call(w.record);
            let recorded_late = call != NONE && clock.runtime_span(p, call as usize).1 > t;
            let completed_late = w.followed.is_some_and(|f| clock.gpu_span(p, f).1 > t);
            recorded_late || completed_late
        })
}
