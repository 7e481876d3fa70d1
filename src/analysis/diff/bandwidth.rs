//! Bytes and bandwidth per op before and after: NCCL-recorded bytes moved
//! and busbw over every group's instances of the op (nccl-tests' figures,
//! see `analysis::bandwidth`); `None` on a side without sizes.

use super::side::{Side, delta_pct};
use crate::analysis::bandwidth::{self, Totals};
use crate::analysis::nccl_name::CollOp;
use std::collections::BTreeMap;

/// One op on both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct OpBytesPair {
    pub op: CollOp,
    /// Over the op's instances in every group.
    pub before: Option<Totals>,
    pub after: Option<Totals>,
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

fn side_ops(s: Side) -> BTreeMap<&'static str, (CollOp, Totals)> {
    let a = s.analysis;
    let figures = bandwidth::instances(&a.matching, &a.skews, &a.sizes);
    let every = a.skews.iter().flat_map(|gs| {
        gs.instances
            .iter()
            .map(|i| (i.op, figures.get(&(gs.group, i.index))))
    });
    bandwidth::tally_by_op(every)
        .into_iter()
        .map(|(name, (op, tally))| (name, (op, tally.totals())))
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
