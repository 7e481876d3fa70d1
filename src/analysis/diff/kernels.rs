//! Kernel time before and after: per short name (summed over devices) and
//! per class (compute, each NCCL op, memcpy, memset). Sums of durations,
//! not interval unions: the time the kernels ran, wherever they ran.

use super::{Side, Which, delta_pct};
use crate::analysis::nccl_name::CollOp;
use crate::profile::{GpuKind, Profile};
use std::collections::{BTreeMap, HashMap};

/// One kernel short name's time on both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelDelta {
    pub name: String,
    pub before_ns: i64,
    pub after_ns: i64,
    pub before_count: usize,
    pub after_count: usize,
}

impl KernelDelta {
    pub fn delta_ns(&self) -> i64 {
        self.after_ns.saturating_sub(self.before_ns)
    }

    /// `None` when the before time is 0.
    pub fn delta_pct(&self) -> Option<f64> {
        delta_pct(self.before_ns as f64, self.after_ns as f64)
    }

    /// The side the name appears on, when it is on one only.
    pub fn only(&self) -> Option<Which> {
        match (self.before_count, self.after_count) {
            (0, n) if n > 0 => Some(Which::After),
            (n, 0) if n > 0 => Some(Which::Before),
            _ => None,
        }
    }
}

/// What a GPU activity row is, for the class totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KernelClass {
    Compute,
    Nccl(CollOp),
    Memcpy,
    Memset,
}

impl KernelClass {
    /// `compute`, `nccl:AllReduce`, `memcpy`, `memset`.
    pub fn name(self) -> String {
        match self {
            KernelClass::Compute => "compute".into(),
            KernelClass::Nccl(op) => format!("nccl:{}", op.name()),
            KernelClass::Memcpy => "memcpy".into(),
            KernelClass::Memset => "memset".into(),
        }
    }
}

/// One class's time on both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassDelta {
    pub class: KernelClass,
    pub before_ns: i64,
    pub after_ns: i64,
    pub before_count: usize,
    pub after_count: usize,
}

impl ClassDelta {
    pub fn delta_ns(&self) -> i64 {
        self.after_ns.saturating_sub(self.before_ns)
    }

    pub fn delta_pct(&self) -> Option<f64> {
        delta_pct(self.before_ns as f64, self.after_ns as f64)
    }
}

/// Time and count of every kernel short name of a profile.
fn by_name(p: &Profile) -> HashMap<&str, (i64, usize)> {
    // Summed per interned name first: one string lookup per name, not per row.
    let mut per_sym = vec![(0i64, 0usize); p.strings.len()];
    let g = &p.gpu;
    for i in 0..g.len() {
        if g.kind[i] == GpuKind::Kernel {
            let e = &mut per_sym[g.name[i] as usize];
            e.0 = e.0.saturating_add(g.end[i].saturating_sub(g.start[i]));
            e.1 += 1;
        }
    }
    let mut out: HashMap<&str, (i64, usize)> = HashMap::new();
    for (sym, &(ns, n)) in per_sym.iter().enumerate() {
        if n > 0 {
            // Two syms never share a string, but merging costs nothing.
            let e = out.entry(p.strings.get(sym as u32)).or_default();
            e.0 = e.0.saturating_add(ns);
            e.1 += n;
        }
    }
    out
}

/// Every kernel name of either side, largest |Δ| first, then by name.
pub fn kernel_deltas(before: Side, after: Side) -> Vec<KernelDelta> {
    let b = by_name(before.profile);
    let a = by_name(after.profile);
    let mut names: Vec<&str> = b.keys().chain(a.keys()).copied().collect();
    names.sort_unstable();
    names.dedup();
    let mut out: Vec<KernelDelta> = names
        .into_iter()
        .map(|name| {
            let (before_ns, before_count) = b.get(name).copied().unwrap_or_default();
            let (after_ns, after_count) = a.get(name).copied().unwrap_or_default();
            KernelDelta {
                name: name.to_string(),
                before_ns,
                after_ns,
                before_count,
                after_count,
            }
        })
        .collect();
    // Stable: equal changes stay in name order.
    out.sort_by_key(|k| std::cmp::Reverse(k.delta_ns().unsigned_abs()));
    out
}

/// Time and count per class of a side.
fn by_class(s: Side) -> BTreeMap<KernelClass, (i64, usize)> {
    let p = s.profile;
    let classes = &s.analysis.classes;
    let mut out: BTreeMap<KernelClass, (i64, usize)> = BTreeMap::new();
    let g = &p.gpu;
    for i in 0..g.len() {
        let class = match g.kind[i] {
            GpuKind::Memcpy => KernelClass::Memcpy,
            GpuKind::Memset => KernelClass::Memset,
            GpuKind::Kernel => match classes.comm(p, i) {
                Some(k) => KernelClass::Nccl(k.op),
                None => KernelClass::Compute,
            },
        };
        let e = out.entry(class).or_default();
        e.0 = e.0.saturating_add(g.end[i].saturating_sub(g.start[i]));
        e.1 += 1;
    }
    out
}

/// Classes present on either side: compute, the NCCL ops, memcpy, memset.
pub fn class_deltas(before: Side, after: Side) -> Vec<ClassDelta> {
    let b = by_class(before);
    let a = by_class(after);
    let mut classes: Vec<KernelClass> = b.keys().chain(a.keys()).copied().collect();
    classes.sort_unstable();
    classes.dedup();
    classes
        .into_iter()
        .map(|class| {
            let (before_ns, before_count) = b.get(&class).copied().unwrap_or_default();
            let (after_ns, after_count) = a.get(&class).copied().unwrap_or_default();
            ClassDelta {
                class,
                before_ns,
                after_ns,
                before_count,
                after_count,
            }
        })
        .collect()
}
