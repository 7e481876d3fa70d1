//! Rungs 1 and 2 of collective matching: keys that name the same collective
//! on every rank. Both are UNVERIFIED: built against synthetic data shaped
//! like the documented tables, because no real export here carries them.

use super::kernel_class::KernelClasses;
use crate::profile::Profile;
use std::collections::{BTreeMap, HashMap};

/// How instances were matched: the rung of the ladder that named them
/// (rungs 1 and 2 here, the sequence in matching.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum MatchMethod {
    OperationId,
    Nvtx,
    Sequence,
}

impl MatchMethod {
    pub fn name(self) -> &'static str {
        match self {
            MatchMethod::OperationId => "operation-id",
            MatchMethod::Nvtx => "nvtx",
            MatchMethod::Sequence => "sequence",
        }
    }

    /// Rungs 1 and 2 were built against synthetic data only.
    pub fn verified(self) -> bool {
        self == MatchMethod::Sequence
    }
}

/// Per NCCL kernel row, the key of each rung that has one.
#[derive(Debug, Default)]
pub struct OpKeys {
    operation: HashMap<u32, u64>,
    /// (communicator id, per-communicator sequence number).
    nvtx: HashMap<u32, (u64, u64)>,
}

/// A rung is used for a group only when it covers this share of its kernels.
const COVERAGE: f64 = 0.9;

impl OpKeys {
    pub fn read(p: &Profile, classes: &KernelClasses) -> OpKeys {
        let mut keys = OpKeys::default();
        if p.nccl_ops.process.is_empty() && p.nccl_api.thread.is_empty() {
            return keys;
        }
        // (process, correlationId) → NCCL kernel row.
        let mut by_corr: HashMap<(u32, u32), u32> = HashMap::new();
        if !p.nccl_ops.process.is_empty() {
            for lane in &p.lanes {
                for i in lane.rows.clone() {
                    if classes.comm(p, i).is_some() {
                        by_corr.insert((lane.process, p.gpu.correlation(i)), i as u32);
                    }
                }
            }
        }
        let o = &p.nccl_ops;
        for j in 0..o.process.len() {
            if let Some(&row) = by_corr.get(&(o.process[j], o.correlation[j])) {
                keys.operation.insert(row, o.operation[j]);
            }
        }
        // Kernel → the NCCL API call that issued it; numbered per
        // (process, communicator) in time order.
        let mut per_comm: BTreeMap<(u32, u64), Vec<(i64, u32)>> = BTreeMap::new();
        for c in super::nccl_calls::issuing_calls(p, classes) {
            let Some(comm) = c.comm else {
                continue;
            };
            let process = p.threads[c.thread as usize].process;
            per_comm
                .entry((process, comm))
                .or_default()
                .push((c.at, c.row));
        }
        for ((_, comm), mut rows) in per_comm {
            rows.sort_unstable();
            for (seq, (_, row)) in rows.into_iter().enumerate() {
                keys.nvtx.insert(row, (comm, seq as u64));
            }
        }
        keys
    }

    /// The communicator most of these kernels belong to (rung 2 data).
    pub fn dominant_comm(&self, rows: &[u32]) -> Option<u64> {
        let mut counts: BTreeMap<u64, usize> = BTreeMap::new();
        for r in rows {
            if let Some(&(comm, _)) = self.nvtx.get(r) {
                *counts.entry(comm).or_default() += 1;
            }
        }
        let (&comm, &n) = counts
            .iter()
            .max_by_key(|(c, n)| (**n, std::cmp::Reverse(**c)))?;
        ((n as f64) >= COVERAGE * rows.len() as f64).then_some(comm)
    }

    /// Instances of a group by rung 1 or 2, when one covers its kernels:
    /// a slot per member for every key present on at least two members
    /// (captures that start or stop at different collectives lack some).
    pub fn instances(&self, members: &[&[u32]]) -> Option<(MatchMethod, Vec<Vec<Option<u32>>>)> {
        if let Some(inst) = by_key(members, |r| self.operation.get(&r).copied()) {
            return Some((MatchMethod::OperationId, inst));
        }
        by_key(members, |r| self.nvtx.get(&r).copied()).map(|inst| (MatchMethod::Nvtx, inst))
    }
}

fn by_key<K: Ord + Copy>(
    members: &[&[u32]],
    key: impl Fn(u32) -> Option<K>,
) -> Option<Vec<Vec<Option<u32>>>> {
    let total: usize = members.iter().map(|m| m.len()).sum();
    let mut per_key: BTreeMap<K, Vec<Option<u32>>> = BTreeMap::new();
    let mut covered = 0;
    for (d, rows) in members.iter().enumerate() {
        for &r in rows.iter() {
            if let Some(k) = key(r) {
                covered += 1;
                per_key
                    .entry(k)
                    .or_insert_with(|| vec![None; members.len()])[d] = Some(r);
            }
        }
    }
    if total == 0 || (covered as f64) < COVERAGE * total as f64 {
        return None;
    }
    let inst: Vec<Vec<Option<u32>>> = per_key
        .into_values()
        .filter(|rows| rows.iter().flatten().count() >= 2)
        .collect();
    (!inst.is_empty()).then_some(inst)
}
