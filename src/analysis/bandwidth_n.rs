//! N of a group's bandwidth figures — which communicator size they use and
//! why — and what is said when the capture holds fewer of the
//! communicator's ranks than that: one wording for `report`, its JSON and
//! the skew panel.

use super::completeness::{Completeness, rank_ranges};
use super::matching::{Group, RanksFrom};
use super::nccl_name::CollOp;
use crate::profile::{DevId, Profile};

/// Where N comes from, as every view says it.
pub fn source(from: RanksFrom) -> &'static str {
    match from {
        RanksFrom::NcclInit => "communicator size from NCCL's payload",
        RanksFrom::Members => "captured ranks: the communicator size is not recorded",
    }
}

/// Whether `op`'s figures depend on N: its busbw factor or its size.
/// A send/recv exchange is two ranks of a larger communicator by nature,
/// so fewer members than the communicator's size says nothing there.
pub fn uses_n(op: CollOp) -> bool {
    matches!(
        op,
        CollOp::AllReduce | CollOp::AllGather | CollOp::ReduceScatter | CollOp::AllToAll
    )
}

/// A group's N, where it comes from, and what the capture lacks of it.
#[derive(Debug, Clone, PartialEq)]
pub struct BusN {
    /// N of the busbw factor and of the N × sizes.
    pub n: usize,
    pub from: RanksFrom,
    /// The group's members matched in the capture.
    pub matched: usize,
    /// Why N may not be the communicator's ranks in the capture, in one
    /// sentence; `None` when nothing is short or no figure uses N.
    pub note: Option<String>,
}

impl BusN {
    /// Group `g`'s N; `c` says which devices and ranks the capture lacks
    /// (an empty one, not computed, says nothing is lacking).
    pub fn of(p: &Profile, g: &Group, c: &Completeness) -> BusN {
        let (n, from) = g.bandwidth_ranks();
        let matched = g.devices.len();
        let short = match from {
            RanksFrom::NcclInit => (matched < n).then(|| {
                format!("only {matched} of its ranks have kernels matched in the capture")
            }),
            RanksFrom::Members => lacking(p, c).map(|(what, k)| {
                format!(
                    "{what}: a communicator that includes {} is larger than {n}, and its busbw higher",
                    if k == 1 { "it" } else { "them" }
                )
            }),
        };
        let note = short
            .filter(|_| g.ops.iter().any(|&op| uses_n(op)))
            .map(|short| format!("N = {n}, {}; {short}", source(from)));
        BusN {
            n,
            from,
            matched,
            note,
        }
    }
}

/// What the capture lacks that a communicator of unknown size may
/// include (expected devices with no kernel, ranks of the world no file
/// holds), and how many: `None` when it lacks nothing.
fn lacking(p: &Profile, c: &Completeness) -> Option<(String, usize)> {
    let without: Vec<DevId> = c
        .expected
        .iter()
        .copied()
        .filter(|d| !c.with_kernels.contains(d))
        .collect();
    let plural = |k: usize, one: &'static str, many: &'static str| if k == 1 { one } else { many };
    let mut parts = Vec::new();
    if !without.is_empty() {
        let labels: Vec<String> = without
            .iter()
            .map(|&d| p.device_label(d).to_string())
            .collect();
        let k = without.len();
        parts.push(format!(
            "{} {} {} a CUDA context but no kernels in the capture",
            plural(k, "device", "devices"),
            labels.join(", "),
            plural(k, "has", "have"),
        ));
    }
    let ranks = match c.world_size {
        Some(world) if !c.ranks_missing.is_empty() => {
            let k = c.ranks_missing.len();
            parts.push(format!(
                "{} {} of a world of {world} {} no file",
                plural(k, "rank", "ranks"),
                rank_ranges(&c.ranks_missing),
                plural(k, "has", "have")
            ));
            k
        }
        _ => 0,
    };
    (!parts.is_empty()).then(|| (parts.join("; "), without.len() + ranks))
}
