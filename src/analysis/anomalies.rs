//! Anomalous NCCL kernels, grouped into events: N anomalous rows on N ranks
//! are usually one event, so rows are counted and grouped by instance.

use super::matching::Matching;
use super::nccl_name::CollOp;
use super::skew::GroupSkew;
use crate::profile::{DevId, Profile};
use std::collections::HashMap;

/// One instance with anomalous rows.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct AnomalyEvent {
    pub group: usize,
    /// 0-based instance index.
    pub instance: usize,
    pub op: CollOp,
    /// Devices whose kernel is anomalous.
    pub devices: Vec<DevId>,
    pub max_duration_ns: i64,
    /// Mean duration of this collective type in the group.
    pub mean_ns: f64,
    /// The host whose node event held this instance up (one event with
    /// the other instances it held up).
    #[serde(default)]
    pub node_host: Option<u32>,
}

/// Rows whose duration exceeds `ratio` × the mean of their collective type
/// within their group, over the instances of `skews` (already windowed).
pub fn anomalies(
    p: &Profile,
    m: &Matching,
    skews: &[GroupSkew],
    ratio: f64,
) -> (usize, Vec<AnomalyEvent>) {
    let mut rows_total = 0;
    let mut events = Vec::new();
    for gs in skews {
        let g = &m.groups[gs.group];
        let mut sums: HashMap<CollOp, (i64, usize)> = HashMap::new();
        let dur = |r: u32| {
            p.gpu
                .end(r as usize)
                .saturating_sub(p.gpu.start(r as usize))
        };
        for inst in &gs.instances {
            let e = sums.entry(inst.op).or_default();
            e.0 = e.0.saturating_add(inst.total_ns);
            e.1 += inst.ranks;
        }
        for inst in &gs.instances {
            let (sum, count) = sums[&inst.op];
            let mean = sum as f64 / count as f64;
            let hot: Vec<(usize, u32)> = g
                .members(inst.index)
                .map(|(d, r, _)| (d, r as u32))
                .filter(|&(_, r)| dur(r) as f64 > ratio * mean)
                .collect();
            if hot.is_empty() {
                continue;
            }
            rows_total += hot.len();
            let node_host = gs
                .big_events
                .iter()
                .find(|b| b.instance.index == inst.index)
                .and_then(|b| b.late_host)
                .filter(|h| h.node_event)
                .map(|h| h.host);
            events.push(AnomalyEvent {
                node_host,
                group: gs.group,
                instance: inst.index,
                op: inst.op,
                devices: hot.iter().map(|&(d, _)| g.devices[d]).collect(),
                max_duration_ns: hot.iter().map(|&(_, r)| dur(r)).max().unwrap_or(0),
                mean_ns: mean,
            });
        }
    }
    (rows_total, events)
}
