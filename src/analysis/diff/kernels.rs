//! Kernel time before and after: per short name (summed over devices) and
//! per class (compute, each NCCL op, memcpy, memset). Sums of durations,
//! not interval unions: the time the kernels ran, wherever they ran.

use super::side::{Side, Which, delta_pct};
use crate::analysis::nccl_name::CollOp;
use crate::profile::GpuKind;
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

/// One side's kernel time per short name and copy and set time, from one
/// pass over its GPU rows.
struct Sums<'a> {
    side: Side<'a>,
    /// Per interned name: time and count of kernels with that short name.
    per_sym: Vec<(i64, usize)>,
    memcpy: (i64, usize),
    memset: (i64, usize),
}

fn add(e: &mut (i64, usize), ns: i64) {
    e.0 = e.0.saturating_add(ns);
    e.1 += 1;
}

impl<'a> Sums<'a> {
    fn of(side: Side<'a>) -> Self {
        let p = side.profile;
        let mut out = Sums {
            side,
            per_sym: vec![(0, 0); p.strings.len()],
            memcpy: (0, 0),
            memset: (0, 0),
        };
        let g = &p.gpu;
        for i in 0..g.len() {
            let ns = g.end(i).saturating_sub(g.start(i));
            match g.kind(i) {
                GpuKind::Kernel => add(&mut out.per_sym[g.name(i) as usize], ns),
                GpuKind::Memcpy => add(&mut out.memcpy, ns),
                GpuKind::Memset => add(&mut out.memset, ns),
            }
        }
        out
    }

    /// Time and count per kernel short name.
    fn by_name(&self) -> HashMap<&'a str, (i64, usize)> {
        let mut out: HashMap<&str, (i64, usize)> = HashMap::new();
        for (sym, &(ns, n)) in self.per_sym.iter().enumerate() {
            if n > 0 {
                // Two syms never share a string, but merging costs nothing.
                let e = out
                    .entry(self.side.profile.strings.get(sym as u32))
                    .or_default();
                e.0 = e.0.saturating_add(ns);
                e.1 += n;
            }
        }
        out
    }

    /// Time and count per class (a kernel's class follows from its name).
    fn by_class(&self) -> BTreeMap<KernelClass, (i64, usize)> {
        let classes = &self.side.analysis.classes;
        let mut out: BTreeMap<KernelClass, (i64, usize)> = BTreeMap::new();
        for (sym, &(ns, n)) in self.per_sym.iter().enumerate() {
            if n > 0 {
                let class = match classes.comm_by_name(sym as u32) {
                    Some(k) => KernelClass::Nccl(k.op),
                    None => KernelClass::Compute,
                };
                let e = out.entry(class).or_default();
                e.0 = e.0.saturating_add(ns);
                e.1 += n;
            }
        }
        for (class, sum) in [
            (KernelClass::Memcpy, self.memcpy),
            (KernelClass::Memset, self.memset),
        ] {
            if sum.1 > 0 {
                out.insert(class, sum);
            }
        }
        out
    }
}

/// Kernel names and classes of both sides, from one pass over each.
pub fn deltas(before: Side, after: Side) -> (Vec<KernelDelta>, Vec<ClassDelta>) {
    let (b, a) = (Sums::of(before), Sums::of(after));
    (kernel_deltas(&b, &a), class_deltas(&b, &a))
}

/// Every kernel name of either side, largest |Δ| first, then by name.
fn kernel_deltas(before: &Sums, after: &Sums) -> Vec<KernelDelta> {
    let b = before.by_name();
    let a = after.by_name();
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

/// Classes present on either side: compute, the NCCL ops, memcpy, memset.
fn class_deltas(before: &Sums, after: &Sums) -> Vec<ClassDelta> {
    let b = before.by_class();
    let a = after.by_class();
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
