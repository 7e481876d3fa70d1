//! The NCCL kernels of each stream, and the longest run of ops two
//! sequences agree on.

use crate::analysis::kernel_class::KernelClasses;
use crate::analysis::nccl_name::CollOp;
use crate::profile::{DevId, LaneId, Profile};

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

/// One kernel gathered into a communicator: (GPU row, op, lane, stream,
/// placed without a call naming it).
pub type Gathered = (u32, CollOp, LaneId, u32, bool);

impl Seq {
    /// A device's kernels of one communicator as its sequence, in start
    /// order, named by the stream most of them ran on.
    pub fn gathered(p: &Profile, device: DevId, mut kernels: Vec<Gathered>) -> Seq {
        kernels.sort_by_key(|k| (p.gpu.start(k.0 as usize), k.0));
        let mut count: std::collections::BTreeMap<(LaneId, u32), usize> = Default::default();
        for k in &kernels {
            *count.entry((k.2, k.3)).or_default() += 1;
        }
        let (&(lane, stream), _) = count
            .iter()
            .max_by_key(|(k, n)| (**n, std::cmp::Reverse(**k)))
            .expect("a device's kernels of a communicator");
        Seq {
            device,
            lane,
            stream,
            rows: kernels.iter().map(|k| k.0).collect(),
            ops: kernels.iter().map(|k| k.1).collect(),
            keyless: kernels.iter().filter(|k| k.4).map(|k| k.0).collect(),
        }
    }
}

/// A sequence of `ops` on `device` (its lane numbered as the device),
/// rows 0.., for tests.
#[cfg(test)]
pub fn test_seq(device: DevId, stream: u32, ops: &[CollOp]) -> Seq {
    Seq {
        device,
        lane: device,
        stream,
        rows: (0..ops.len() as u32).collect(),
        ops: ops.to_vec(),
        keyless: Vec::new(),
    }
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
