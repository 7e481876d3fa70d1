//! Bytes and bandwidth per op before and after: NCCL-recorded bytes moved
//! and busbw over every group's instances of the op (nccl-tests' figures,
//! see `analysis::bandwidth`); `None` on a side without sizes.

use super::side::{Side, delta_pct};
use crate::analysis::bandwidth;
use crate::analysis::nccl_name::CollOp;
use crate::analysis::stats::Spread;
use std::collections::BTreeMap;

/// One op's figures on one side.
#[derive(Debug, Clone, PartialEq)]
pub struct OpBytes {
    pub instances: usize,
    /// Instances with a size.
    pub sized: usize,
    pub bytes: Option<u64>,
    pub busbw_gbps: Option<Spread>,
}

/// One op on both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct OpBytesPair {
    pub op: CollOp,
    pub before: Option<OpBytes>,
    pub after: Option<OpBytes>,
}

impl OpBytesPair {
    pub fn bytes_delta_pct(&self) -> Option<f64> {
        let b = self.before.as_ref()?.bytes?;
        let a = self.after.as_ref()?.bytes?;
        delta_pct(b as f64, a as f64)
    }

    pub fn busbw_p50_delta_pct(&self) -> Option<f64> {
        let b = self.before.as_ref()?.busbw_gbps?.p50;
        let a = self.after.as_ref()?.busbw_gbps?.p50;
        delta_pct(b, a)
    }
}

/// Bytes and busbw of both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct BytesDiff {
    /// Whether each side recorded any size.
    pub recorded: (bool, bool),
    /// What is said of each side's sizes (none, how many, unverified).
    pub said: (String, String),
    /// By op name; ops of either side.
    pub ops: Vec<OpBytesPair>,
}

fn side_ops(s: Side) -> BTreeMap<&'static str, (CollOp, OpBytes)> {
    let a = s.analysis;
    let figures = bandwidth::instances(&a.matching, &a.skews, &a.sizes);
    // Per op: its instances, and the bytes and busbw of those with a size.
    type Acc = (CollOp, usize, Vec<u64>, Vec<f64>);
    let mut acc: BTreeMap<&'static str, Acc> = BTreeMap::new();
    for gs in &a.skews {
        for i in &gs.instances {
            let e = acc
                .entry(i.op.name())
                .or_insert((i.op, 0, Vec::new(), Vec::new()));
            e.1 += 1;
            if let Some(f) = figures.get(&(gs.group, i.index)) {
                e.2.push(f.bytes);
                e.3.extend(f.busbw_gbps);
            }
        }
    }
    acc.into_iter()
        .map(|(name, (op, instances, bytes, busbw))| {
            let figures = OpBytes {
                instances,
                sized: bytes.len(),
                bytes: (!bytes.is_empty())
                    .then(|| bytes.iter().fold(0u64, |s, &b| s.saturating_add(b))),
                busbw_gbps: Spread::of(busbw),
            };
            (name, (op, figures))
        })
        .collect()
}

pub fn bytes_diff(before: Side, after: Side) -> BytesDiff {
    let (mut b, mut a) = (side_ops(before), side_ops(after));
    let names: std::collections::BTreeSet<&'static str> =
        b.keys().chain(a.keys()).copied().collect();
    let ops = names
        .into_iter()
        .map(|name| {
            let (b, a) = (b.remove(name), a.remove(name));
            OpBytesPair {
                op: b.as_ref().or(a.as_ref()).map_or(CollOp::Other, |x| x.0),
                before: b.map(|x| x.1),
                after: a.map(|x| x.1),
            }
        })
        .collect();
    BytesDiff {
        recorded: (
            before.analysis.sizes.recorded(),
            after.analysis.sizes.recorded(),
        ),
        said: (before.analysis.sizes.said(), after.analysis.sizes.said()),
        ops,
    }
}
