//! The NCCL kernels of each stream, and how streams of different devices
//! cluster when no payload names their communicator: by stream id, else by
//! the longest run of agreeing ops.

use crate::analysis::kernel_class::KernelClasses;
use crate::analysis::nccl_name::CollOp;
use crate::profile::{DevId, LaneId, Profile};
use std::collections::{BTreeMap, HashMap};

/// The NCCL kernels of one stream (or of one communicator on a device),
/// in start order.
#[derive(Debug, Clone)]
pub struct Seq {
    pub device: DevId,
    pub lane: LaneId,
    pub stream: u32,
    pub rows: Vec<u32>,
    pub ops: Vec<CollOp>,
    /// Rows (sorted) placed in a communicator without a call naming it.
    pub keyless: Vec<u32>,
}

pub fn nccl_sequences(p: &Profile, classes: &KernelClasses) -> Vec<Seq> {
    let mut out = Vec::new();
    for (lane_id, lane) in p.lanes.iter().enumerate() {
        let mut rows = Vec::new();
        let mut ops = Vec::new();
        for i in lane.rows.clone() {
            if let Some(k) = classes.comm(p, i) {
                rows.push(i as u32);
                ops.push(k.op);
            }
        }
        if !rows.is_empty() {
            out.push(Seq {
                device: lane.device,
                lane: lane_id as LaneId,
                stream: lane.stream,
                rows,
                ops,
                keyless: Vec::new(),
            });
        }
    }
    out
}

/// Offsets tried when pairing streams whose ids differ: a capture that
/// starts this many collectives later still pairs.
const CLUSTER_SHIFT: i64 = 64;

/// The longest run of agreeing ops from the start of the overlap, over
/// the offsets of `b` against `a` within [`CLUSTER_SHIFT`].
pub fn common_run(a: &[CollOp], b: &[CollOp]) -> usize {
    (-CLUSTER_SHIFT..=CLUSTER_SHIFT)
        .map(|o| {
            let (x, y) = if o >= 0 {
                (a.get(o as usize..).unwrap_or(&[]), b)
            } else {
                (a, b.get((-o) as usize..).unwrap_or(&[]))
            };
            x.iter().zip(y).take_while(|(p, q)| p == q).count()
        })
        .max()
        .unwrap_or(0)
}

/// Groups streams: by stream id where each device has exactly one NCCL
/// stream with that id, then every other stream joins the cluster (lacking
/// its device) whose reference sequence shares the longest agreeing run
/// with it at some offset (a capture starting later) — at least half of
/// the shorter sequence.
pub fn cluster_streams(
    seqs: Vec<Seq>,
    order: &HashMap<DevId, usize>,
) -> (Vec<Vec<Seq>>, Vec<LaneId>) {
    let mut by_stream: BTreeMap<u32, Vec<Seq>> = BTreeMap::new();
    for s in seqs {
        by_stream.entry(s.stream).or_default().push(s);
    }
    let mut clusters: Vec<Vec<Seq>> = Vec::new();
    let mut leftover: Vec<Seq> = Vec::new();
    for (_, members) in by_stream {
        let mut devs: Vec<DevId> = members.iter().map(|s| s.device).collect();
        devs.sort_unstable();
        let distinct = devs.windows(2).all(|w| w[0] != w[1]);
        if distinct && members.len() >= 2 {
            clusters.push(members);
        } else {
            leftover.extend(members);
        }
    }
    // Longest first, then device order: a long sequence is the better reference.
    leftover.sort_by_key(|s| (std::cmp::Reverse(s.ops.len()), order[&s.device], s.stream));
    for s in leftover {
        let best = clusters
            .iter()
            .enumerate()
            .filter(|(_, c)| c.iter().all(|m| m.device != s.device))
            .map(|(i, c)| (common_run(&c[0].ops, &s.ops), i, c[0].ops.len()))
            .filter(|&(lcp, _, len)| lcp >= 1 && 2 * lcp >= len.min(s.ops.len()))
            .max_by_key(|&(lcp, i, _)| (lcp, std::cmp::Reverse(i)));
        match best {
            Some((_, i, _)) => clusters[i].push(s),
            None => clusters.push(vec![s]),
        }
    }
    let mut unpaired = Vec::new();
    clusters.retain(|c| {
        if c.len() < 2 {
            unpaired.extend(c.iter().map(|s| s.lane));
        }
        c.len() >= 2
    });
    (clusters, unpaired)
}
