//! Which kernels are communication: NCCL kernels by name, plus any name
//! the user declares with `--comm-pattern` (custom all-reduce, NVSHMEM…).

use super::nccl_name::{CommKernel, classify};
use crate::profile::{GpuKind, Profile, Sym};
use regex::Regex;

/// What a GPU row does, as the overlap and step accounts split a device's
/// time: a compute kernel, a communication kernel, or a copy or set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuWork {
    Compute,
    Comm,
    Copy,
}

/// Communication classification of every kernel name in a profile.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct KernelClasses {
    /// Per kernel short-name Sym: 0 = compute, k = `comm[k - 1]`.
    by_name: Vec<u32>,
    comm: Vec<CommKernel>,
}

impl KernelClasses {
    /// Classifies every kernel name of `p` once.
    pub fn new(p: &Profile, comm_pattern: Option<&Regex>) -> Self {
        let mut by_name = vec![u32::MAX; p.strings.len()];
        let mut comm = Vec::new();
        let g = &p.gpu;
        for i in 0..g.len() {
            let (kind, name) = g.kind_and_name(i);
            if kind != GpuKind::Kernel || by_name[name as usize] != u32::MAX {
                continue;
            }
            let short = p.strings.get(name);
            let long = p.strings.get(g.long_name(i));
            let class = classify(short).or_else(|| classify(long)).or_else(|| {
                comm_pattern
                    .filter(|re| re.is_match(short) || re.is_match(long))
                    .map(|_| CommKernel::other())
            });
            by_name[name as usize] = match class {
                Some(k) => {
                    comm.push(k);
                    comm.len() as u32
                }
                None => 0,
            };
        }
        KernelClasses { by_name, comm }
    }

    /// The communication kind of GPU row `i`, `None` for compute kernels,
    /// copies and sets.
    pub fn comm(&self, p: &Profile, i: usize) -> Option<&CommKernel> {
        match p.gpu.kind_and_name(i) {
            (GpuKind::Kernel, name) => self.comm_by_name(name),
            _ => None,
        }
    }

    /// What GPU row `i` does: compute, communication, or a copy or set.
    pub fn work(&self, p: &Profile, i: usize) -> GpuWork {
        match p.gpu.kind(i) {
            GpuKind::Kernel if self.comm(p, i).is_some() => GpuWork::Comm,
            GpuKind::Kernel => GpuWork::Compute,
            _ => GpuWork::Copy,
        }
    }

    /// The communication kind of a kernel name.
    pub fn comm_by_name(&self, name: Sym) -> Option<&CommKernel> {
        match self.by_name.get(name as usize).copied() {
            Some(k) if k != 0 && k != u32::MAX => self.comm.get(k as usize - 1),
            _ => None,
        }
    }
}
