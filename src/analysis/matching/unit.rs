//! A unit: what one clock domain shows of one communicator (its devices'
//! sequences), before units of different domains are joined.

use crate::analysis::nccl_streams::Seq;
use crate::profile::DevId;

/// What one clock domain shows of one communicator.
#[derive(Debug)]
pub struct Unit {
    pub seqs: Vec<Seq>,
    pub domain: usize,
    /// Found from ends (two or more devices whose kernels end together).
    pub by_ends: bool,
    pub lockstep_ambiguous: bool,
}

impl Unit {
    /// A stream no end evidence placed, on its own.
    pub fn single(s: Seq, domain: usize) -> Unit {
        Unit {
            seqs: vec![s],
            domain,
            by_ends: false,
            lockstep_ambiguous: false,
        }
    }

    pub(super) fn devices(&self) -> impl Iterator<Item = DevId> + '_ {
        self.seqs.iter().map(|s| s.device)
    }

    /// Its devices, each once, sorted.
    pub(super) fn distinct_devices(&self) -> Vec<DevId> {
        let mut d: Vec<DevId> = self.devices().collect();
        d.sort_unstable();
        d.dedup();
        d
    }

    /// The stream id all its sequences run on, when they agree.
    pub(super) fn stream(&self) -> Option<u32> {
        let first = self.seqs.first()?.stream;
        self.seqs.iter().all(|s| s.stream == first).then_some(first)
    }

    /// Its longest sequence: what others are compared with.
    pub(super) fn reference(&self) -> &Seq {
        self.seqs
            .iter()
            .max_by_key(|s| s.ops.len())
            .expect("a unit has a sequence")
    }
}
