//! How much communication hides under compute, per device, from interval
//! unions (never summed durations). Compute is every non-communication
//! kernel; memcpy and memset keep the device busy too, as copy time whenever
//! no kernel runs, so idle is time with nothing at all on the device.
//!
//! NCCL time not overlapped is an upper bound on what better overlap could
//! save, not a promise.

use super::clock::Alignment;
use super::intervals::{Span, intersection_len, total, union};
use super::kernel_class::{GpuWork, KernelClasses};
use super::window::Window;
use crate::profile::{DevId, LaneId, Profile};

/// Overlap figures of one device, in ns.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DeviceOverlap {
    pub device: DevId,
    /// First start to last end of any GPU activity — kernels, copies, sets —
    /// clipped to the window.
    pub span_ns: i64,
    pub compute_only_ns: i64,
    pub nccl_only_ns: i64,
    pub overlap_ns: i64,
    /// A memcpy or memset runs and no kernel does.
    pub copy_only_ns: i64,
    /// Nothing runs; the five parts sum to `span_ns`.
    pub idle_ns: i64,
    /// Union of NCCL time.
    pub nccl_ns: i64,
    pub compute_kernels: usize,
    pub nccl_kernels: usize,
    /// Memcpy and memset operations (a batched record counts its copies).
    pub copies: usize,
}

impl DeviceOverlap {
    /// Share of NCCL time that runs under compute, 0–100; `None` without NCCL.
    pub fn nccl_overlapped_pct(&self) -> Option<f64> {
        (self.nccl_ns > 0).then(|| 100.0 * self.overlap_ns as f64 / self.nccl_ns as f64)
    }
}

/// Overlap per device with GPU activity in `w` (on the reference clock);
/// everything is clipped at its edges. Every other device (in device
/// order) on a second thread: the devices share nothing, and `report
/// overlap` has nothing else to run. The unions' buffers freed there stay
/// with that thread's malloc arena (a few MiB at 1 M kernels).
pub fn overlap(
    p: &Profile,
    classes: &KernelClasses,
    clock: &Alignment,
    w: Window,
) -> Vec<DeviceOverlap> {
    let order = super::completeness::device_order(p);
    if order.len() < 2 {
        return devices_overlap(p, classes, clock, w, &order);
    }
    let half = |parity: usize| -> Vec<DevId> {
        order
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 2 == parity)
            .map(|(_, &d)| d)
            .collect()
    };
    let (even, odd) = (half(0), half(1));
    let (b, mut a) = crate::profile::parallel::beside(
        || devices_overlap(p, classes, clock, w, &odd),
        || devices_overlap(p, classes, clock, w, &even),
    );
    a.extend(b);
    let rank: std::collections::HashMap<DevId, usize> =
        order.iter().enumerate().map(|(i, &d)| (d, i)).collect();
    a.sort_by_key(|o| rank[&o.device]);
    a
}

/// [`overlap`] of the devices `devs` (in order).
fn devices_overlap(
    p: &Profile,
    classes: &KernelClasses,
    clock: &Alignment,
    w: Window,
    devs: &[DevId],
) -> Vec<DeviceOverlap> {
    let mut mine = vec![false; p.devices.len()];
    for &d in devs {
        mine[d as usize] = true;
    }
    // Room for every row of the device's lanes among its compute spans
    // (most of them): grown by doubling, they would be copied and their
    // memory touched twice over.
    let mut rows = vec![0usize; p.devices.len()];
    for lane in p.lanes.iter().filter(|l| mine[l.device as usize]) {
        rows[lane.device as usize] += lane.rows.len();
    }
    let mut compute: Vec<Vec<Span>> = rows.iter().map(|&n| Vec::with_capacity(n)).collect();
    let mut nccl: Vec<Vec<Span>> = vec![Vec::new(); p.devices.len()];
    let mut copy: Vec<Vec<Span>> = vec![Vec::new(); p.devices.len()];
    // Copy operations: a batched record holds several (`copyCount`).
    let mut copy_ops = vec![0usize; p.devices.len()];
    // A device's spans are on the clock of its first lane's file (a GPU
    // seen by two files is one union).
    let mut clock_of = vec![None::<usize>; p.devices.len()];
    for (lane_id, lane) in p.lanes.iter().enumerate() {
        let d = lane.device as usize;
        if !mine[d] {
            continue;
        }
        let lane_id = lane_id as LaneId;
        let onto = *clock_of[d].get_or_insert(p.lane_file(lane_id));
        let wf = clock.window_in_file(onto, w);
        for (i, s, e) in clock.lane_rows(p, lane_id, w, onto) {
            let Some(span) = wf.clip(s, e) else {
                continue;
            };
            match classes.work(p, i) {
                GpuWork::Copy => {
                    copy[d].push(span);
                    copy_ops[d] += p.gpu.copies(i) as usize;
                }
                GpuWork::Comm => nccl[d].push(span),
                GpuWork::Compute => compute[d].push(span),
            }
        }
    }
    devs.iter()
        .filter_map(|&dev| {
            let d = dev as usize;
            let [c, n, m] = [&mut compute[d], &mut nccl[d], &mut copy[d]].map(std::mem::take);
            let frame = clock_of[d].and_then(|onto| window_frame(p, clock, dev, onto, w));
            device_overlap(dev, c, n, (m, copy_ops[d]), frame)
        })
        .collect()
}

/// A window other than the whole capture, within the device's activity
/// over the whole capture (first start to last end, on `onto`'s clock):
/// what its span is there, idle at the window's edges included. A window
/// over the whole capture gives the whole capture's figures.
fn window_frame(
    p: &Profile,
    clock: &Alignment,
    dev: DevId,
    onto: usize,
    w: Window,
) -> Option<(i64, i64)> {
    if w.is_all() {
        return None;
    }
    let mut active: Option<(i64, i64)> = None;
    for (l, _) in p.lanes.iter().enumerate().filter(|(_, l)| l.device == dev) {
        let Some((a, b)) = clock.lane_span_on(p, l as LaneId, onto) else {
            continue;
        };
        active = Some(active.map_or((a, b), |(x, y)| (x.min(a), y.max(b))));
    }
    let (a, b) = active?;
    let wf = clock.window_in_file(onto, w);
    let frame = (wf.start.max(a), wf.end.min(b));
    (frame.1 > frame.0).then_some(frame)
}

/// One device's figures from its compute and NCCL kernels' spans and its
/// copies' (with how many copy operations they hold: a batched record
/// holds several); `frame`, a window's part of the capture, is its span
/// (else first start to last end of its activity): a device with nothing
/// in a window is all idle there.
fn device_overlap(
    dev: DevId,
    c: Vec<Span>,
    n: Vec<Span>,
    (m, copies): (Vec<Span>, usize),
    frame: Option<(i64, i64)>,
) -> Option<DeviceOverlap> {
    if c.is_empty() && n.is_empty() && m.is_empty() && frame.is_none() {
        return None;
    }
    let (compute_kernels, nccl_kernels) = (c.len(), n.len());
    let all = || c.iter().chain(&n).chain(&m);
    let (first, last) = frame.unwrap_or((
        all().map(|s| s.0).min().unwrap_or(0),
        all().map(|s| s.1).max().unwrap_or(0),
    ));
    let (cu, nu, mu) = (union(c), union(n), union(m));
    // Two sorted runs: merged in linear time.
    let kernels = union(cu.iter().chain(&nu).copied().collect());
    let (c_ns, n_ns) = (total(&cu), total(&nu));
    let both = intersection_len(&cu, &nu);
    // Saturating: timestamps at the ends of the i64 range must not wrap.
    let kernel_ns = c_ns.saturating_add(n_ns).saturating_sub(both);
    let copy_only_ns = total(&mu).saturating_sub(intersection_len(&mu, &kernels));
    let span_ns = last.saturating_sub(first);
    Some(DeviceOverlap {
        device: dev,
        span_ns,
        compute_only_ns: c_ns - both,
        nccl_only_ns: n_ns - both,
        overlap_ns: both,
        copy_only_ns,
        idle_ns: span_ns
            .saturating_sub(kernel_ns)
            .saturating_sub(copy_only_ns),
        nccl_ns: n_ns,
        compute_kernels,
        nccl_kernels,
        copies,
    })
}
