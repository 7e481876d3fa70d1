//! Stream ids per rank and process group, by the scenario's policy, as nsys shows them: small
//! integers per CUDA context, the compute (default) stream 7 and the NCCL streams PyTorch
//! creates after it 13, 17, 21, … in the order the process creates them.

use super::layout::{Kind, Layout};
use super::spec::Policy;

/// The compute stream of every rank (PyTorch's current stream: the legacy default stream).
pub const COMPUTE: u32 = 7;

/// The id of the process's n-th created stream.
fn created(n: usize) -> u32 {
    13 + 4 * n as u32
}

/// Which kinds of group PyTorch ≥ 2.8 runs synchronously on the current stream.
fn synchronous(k: Kind) -> bool {
    matches!(k, Kind::Tp | Kind::Emb | Kind::GradNorm | Kind::World)
}

pub struct Streams {
    /// Per rank, per kind (`Kind as usize`): the stream its NCCL kernels run on.
    of: Vec<[Option<u32>; 7]>,
}

impl Streams {
    /// `first_use[r]`: the kinds rank `r` uses, in the order its program first uses them.
    pub fn new(policy: Policy, layout: &Layout, first_use: &[Vec<Kind>]) -> Streams {
        // kinds present anywhere in the job, in creation order
        let present: Vec<Kind> = Kind::ALL
            .into_iter()
            .filter(|k| layout.comms.iter().any(|c| c.kind == *k))
            .collect();
        let slot = |k: Kind, order: &[Kind]| {
            created(order.iter().position(|&x| x == k).expect("kind present"))
        };
        let without = |f: &dyn Fn(Kind) -> bool| -> Vec<Kind> {
            present.iter().copied().filter(|&k| !f(k)).collect()
        };
        let (shared, asynchronous) = (without(&|k| k == Kind::Dp), without(&synchronous));
        let of = first_use
            .iter()
            .map(|used| {
                let mut row = [None; 7];
                for &k in used {
                    row[k as usize] = Some(match policy {
                        Policy::Dedicated => slot(k, &present),
                        Policy::Shared if k == Kind::Dp => slot(Kind::Tp, &shared),
                        Policy::Shared => slot(k, &shared),
                        Policy::Lazy => slot(k, used),
                        Policy::SyncOnCompute if synchronous(k) => COMPUTE,
                        Policy::SyncOnCompute => slot(k, &asynchronous),
                    });
                }
                row
            })
            .collect();
        Streams { of }
    }

    pub fn of(&self, rank: usize, k: Kind) -> u32 {
        self.of[rank][k as usize].unwrap_or_else(|| panic!("rank {rank} has no {k:?} stream"))
    }

    /// The NCCL streams rank `r` created (not the compute stream), ascending.
    pub fn created_by(&self, r: usize) -> Vec<u32> {
        let mut v: Vec<u32> = self.of[r]
            .iter()
            .flatten()
            .copied()
            .filter(|&s| s != COMPUTE)
            .collect();
        v.sort();
        v.dedup();
        v
    }
}
