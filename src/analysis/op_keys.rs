//! Rungs 1 and 2 of collective matching: an operation id that names the
//! same collective on every rank, and the communicator NCCL's NVTX payload
//! names for each kernel. Both are UNVERIFIED: built against synthetic
//! data shaped like the documented tables, because no real export here
//! carries them.

use super::kernel_class::KernelClasses;
use crate::profile::{ProcId, Profile};
use std::collections::{BTreeMap, HashMap};

/// How instances were matched: an operation id (rung 1), communicators
/// from NCCL's payloads placed in sequence (rung 2), or the sequence alone.
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

/// Per NCCL kernel row, what rungs 1 and 2 know of it.
#[derive(Debug, Default)]
pub struct OpKeys {
    /// Rung 1: an id naming the collective on every rank.
    operation: HashMap<u32, u64>,
    /// Rung 2: the communicator of the NCCL call that issued the kernel,
    /// and for a point-to-point call its one peer (its rank there). It
    /// says which communicator, not which call of it: the calls are placed
    /// in order like any sequence, so a call a rank lacks (a lost range or
    /// payload) shifts nothing.
    comm: HashMap<u32, (u64, Option<u32>)>,
    /// (process, communicator) → (its rank, the communicator's size), from
    /// NCCL's communicator-init payloads.
    ranks: HashMap<(ProcId, u64), (u32, u32)>,
}

/// Rung 1 is used for a group only when it covers this share of its kernels.
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
        for c in super::nccl_calls::issuing_calls(p, classes) {
            if let Some(comm) = c.comm {
                keys.comm.insert(c.row, (comm, c.peer));
            }
        }
        keys.ranks = super::nccl_calls::ranks_in_communicators(p);
        keys
    }

    /// The communicator NCCL's payload names for kernel `row`.
    pub fn comm(&self, row: u32) -> Option<u64> {
        self.comm.get(&row).map(|c| c.0)
    }

    /// The one peer (its rank in the communicator) of point-to-point
    /// kernel `row`, when its calls name one.
    pub fn peer(&self, row: u32) -> Option<u32> {
        self.comm.get(&row).and_then(|c| c.1)
    }

    /// Process `process`'s rank in communicator `comm` and the
    /// communicator's size, from its init payload.
    pub fn rank_in(&self, process: ProcId, comm: u64) -> Option<(u32, u32)> {
        self.ranks.get(&(process, comm)).copied()
    }

    /// Whether any kernel's communicator is known.
    pub fn has_comms(&self) -> bool {
        !self.comm.is_empty()
    }

    /// Instances of a group by rung 1, when it covers its kernels: a slot
    /// per member for every key present on at least two members
    /// (captures that start or stop at different collectives lack some).
    pub fn instances(&self, members: &[&[u32]]) -> Option<(MatchMethod, Vec<Vec<Option<u32>>>)> {
        by_key(members, |r| self.operation.get(&r).copied())
            .map(|inst| (MatchMethod::OperationId, inst))
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
