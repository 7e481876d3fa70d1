//! Where NCCL time goes: per device, per stream, per collective type.
//! Totals are summed kernel durations (kernel time, not wall time: kernels
//! on different streams overlap).

use super::clock::Alignment;
use super::kernel_class::KernelClasses;
use super::nccl_name::{CollOp, CommKernel, NamePart};
use super::window::Window;
use crate::profile::{DevId, LaneId, Profile};
use std::collections::BTreeMap;

/// Statistics of one (collective type, dtype, hints) on one stream.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OpStats {
    pub op: CollOp,
    #[serde(with = "super::nccl_name::static_name")]
    pub dtype: NamePart,
    #[serde(with = "super::nccl_name::static_name")]
    pub algo: NamePart,
    #[serde(with = "super::nccl_name::static_name")]
    pub proto: NamePart,
    pub count: usize,
    pub total_ns: i64,
    pub min_ns: i64,
    pub max_ns: i64,
}

impl OpStats {
    /// The key its kernels were told apart by.
    pub fn key(&self) -> OpKey {
        (self.op, self.dtype, self.algo, self.proto)
    }
}

/// The NCCL kernels of one stream (lane).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct StreamNccl {
    pub lane: LaneId,
    /// Sorted by total time, largest first.
    pub ops: Vec<OpStats>,
}

/// The NCCL kernels of one device.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct DeviceNccl {
    pub device: DevId,
    pub total_ns: i64,
    /// Sorted by stream id, then pid.
    pub streams: Vec<StreamNccl>,
}

/// What a stream's NCCL kernels are told apart by: op, dtype and hints.
pub type OpKey = (
    CollOp,
    Option<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
);

pub fn op_key(k: &CommKernel) -> OpKey {
    (k.op, k.dtype, k.algo, k.proto)
}

/// Calls `f(lane, row, kernel, duration)` for every NCCL kernel wholly
/// inside `w` (on the reference clock), lane by lane in row order.
pub fn each_kernel(
    p: &Profile,
    classes: &KernelClasses,
    clock: &Alignment,
    w: Window,
    mut f: impl FnMut(LaneId, usize, &CommKernel, i64),
) {
    for lane in 0..p.lanes.len() as LaneId {
        let file = p.lane_file(lane);
        let wf = clock.window_in_file(file, w);
        for (i, s, e) in clock.lane_rows(p, lane, w, file) {
            if let Some(k) = classes.comm(p, i)
                && wf.contains(s, e)
            {
                f(lane, i, k, e.saturating_sub(s));
            }
        }
    }
}

/// NCCL breakdown of the kernels wholly inside `w` (on the reference
/// clock), for devices with any.
pub fn nccl_breakdown(
    p: &Profile,
    classes: &KernelClasses,
    clock: &Alignment,
    w: Window,
) -> Vec<DeviceNccl> {
    let mut by_lane: BTreeMap<LaneId, BTreeMap<OpKey, OpStats>> = BTreeMap::new();
    each_kernel(p, classes, clock, w, |lane, _, k, d| {
        let st = by_lane
            .entry(lane)
            .or_default()
            .entry(op_key(k))
            .or_insert(OpStats {
                op: k.op,
                dtype: k.dtype,
                algo: k.algo,
                proto: k.proto,
                count: 0,
                total_ns: 0,
                min_ns: i64::MAX,
                max_ns: i64::MIN,
            });
        st.count += 1;
        st.total_ns = st.total_ns.saturating_add(d);
        st.min_ns = st.min_ns.min(d);
        st.max_ns = st.max_ns.max(d);
    });
    let mut by_dev: BTreeMap<DevId, Vec<StreamNccl>> = BTreeMap::new();
    for (lane_id, ops) in by_lane {
        let mut ops: Vec<OpStats> = ops.into_values().collect();
        ops.sort_by(|a, b| {
            b.total_ns
                .cmp(&a.total_ns)
                .then(a.op.cmp(&b.op))
                .then(a.dtype.cmp(&b.dtype))
        });
        by_dev
            .entry(p.lanes[lane_id as usize].device)
            .or_default()
            .push(StreamNccl { lane: lane_id, ops });
    }
    let order = super::completeness::device_order(p);
    let mut out: Vec<DeviceNccl> = by_dev
        .into_iter()
        .map(|(device, mut streams)| {
            streams.sort_by_key(|s| {
                let l = &p.lanes[s.lane as usize];
                (l.stream, p.processes[l.process as usize].pid, l.process)
            });
            let total_ns = streams
                .iter()
                .flat_map(|s| &s.ops)
                .map(|o| o.total_ns)
                .sum();
            DeviceNccl {
                device,
                total_ns,
                streams,
            }
        })
        .collect();
    out.sort_by_key(|d| order.iter().position(|&x| x == d.device));
    out
}
