//! Compute stragglers: per step, each rank's compute time against its
//! peers' for the same kernels. For every kernel name run as many times by
//! three devices or more in a step (the same work: a pipeline's last stage
//! runs more of some GEMMs than the others, and is not slower for it), a
//! device's total of it is set against the median of those devices' totals; summed over names, a device's compute time and
//! its peers' for the same work give its slowdown in that step. A rank
//! slower by 5 % or more in three steps of four (after warm-up), and in
//! two at least (one slow step is a spike, not a slower GPU), is a
//! compute straggler: named with how much slower, the extra time per step
//! and the kernel that gained most.

use super::clock::Alignment;
use super::intervals::first_at;
use super::kernel_class::{GpuWork, KernelClasses};
use crate::profile::{DevId, Profile, Sym};
use std::collections::HashMap;

/// A rank this much slower than its peers (ratio) is slow in a step.
pub const SLOWER: f64 = 1.05;
/// Fewest slow steps that name a straggler.
const MIN_SLOW_STEPS: usize = 2;

/// One device in one step: its compute time and its peers' median for the
/// same kernels (ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct StepCompute {
    pub device: DevId,
    pub compute_ns: i64,
    pub peers_ns: i64,
}

impl StepCompute {
    pub fn ratio(&self) -> Option<f64> {
        (self.peers_ns > 0).then(|| self.compute_ns as f64 / self.peers_ns as f64)
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ComputeStraggler {
    pub device: DevId,
    /// Steps (numbers) in which it was slow, of those counted.
    pub slow_steps: Vec<usize>,
    pub counted: usize,
    /// Median ratio and extra time per step over its slow steps.
    pub ratio: f64,
    pub extra_ns_per_step: i64,
    /// The kernel whose time grew most over its peers', summed over those steps.
    pub kernel: Option<Sym>,
}

/// One step's devices against their peers, and each (device, kernel)'s
/// excess over its peers' median.
pub type StepFigures = (Vec<StepCompute>, HashMap<(DevId, Sym), i64>);

/// Per step (in order, numbered from 1), each device's compute against
/// its peers'; per device and step, each kernel name's excess over its
/// peers' median (for the kernel that gained most).
pub fn per_step(
    p: &Profile,
    classes: &KernelClasses,
    clock: &Alignment,
    spans: &[(i64, i64)],
) -> Vec<StepFigures> {
    spans
        .iter()
        .map(|&span| {
            let mut totals: HashMap<(DevId, Sym), (i64, u32)> = HashMap::new();
            for lane in &p.lanes {
                // a stream's rows are sorted by start: the step's found by search
                let rows = lane.rows.clone();
                let from = first_at(rows.clone(), |r| clock.gpu_span(p, r).0 >= span.0);
                for row in from..rows.end {
                    let (s, e) = clock.gpu_span(p, row);
                    if s >= span.1 {
                        break;
                    }
                    if classes.work(p, row) != GpuWork::Compute {
                        continue;
                    }
                    let t = totals.entry((lane.device, p.gpu.name(row))).or_default();
                    t.0 += e - s;
                    t.1 += 1;
                }
            }
            let mut by_name: HashMap<(Sym, u32), Vec<i64>> = HashMap::new();
            for (&(_, name), &(t, n)) in &totals {
                by_name.entry((name, n)).or_default().push(t);
            }
            let medians: HashMap<(Sym, u32), i64> = by_name
                .into_iter()
                .filter(|(_, v)| v.len() >= 3)
                .map(|(n, mut v)| {
                    v.sort_unstable();
                    (n, v[v.len() / 2])
                })
                .collect();
            let mut per_device: HashMap<DevId, (i64, i64)> = HashMap::new();
            let mut excess: HashMap<(DevId, Sym), i64> = HashMap::new();
            for (&(d, name), &(t, n)) in &totals {
                if let Some(&m) = medians.get(&(name, n)) {
                    let e = per_device.entry(d).or_default();
                    e.0 += t;
                    e.1 += m;
                    excess.insert((d, name), t - m);
                }
            }
            let mut out: Vec<StepCompute> = per_device
                .into_iter()
                .map(|(device, (compute_ns, peers_ns))| StepCompute {
                    device,
                    compute_ns,
                    peers_ns,
                })
                .collect();
            out.sort_by_key(|c| c.device);
            (out, excess)
        })
        .collect()
}

/// The compute stragglers among the steps after the first `warmup`.
pub fn stragglers(steps: &[StepFigures], warmup: usize) -> Vec<ComputeStraggler> {
    let counted: Vec<(usize, &StepFigures)> = steps
        .iter()
        .enumerate()
        .skip(warmup)
        .map(|(i, s)| (i + 1, s))
        .collect();
    if counted.is_empty() {
        return Vec::new();
    }
    let mut slow: HashMap<DevId, Vec<(usize, f64, i64)>> = HashMap::new();
    for (step, (devices, _)) in &counted {
        for c in devices {
            if let Some(r) = c.ratio()
                && r >= SLOWER
            {
                slow.entry(c.device)
                    .or_default()
                    .push((*step, r, c.compute_ns - c.peers_ns));
            }
        }
    }
    let mut out: Vec<ComputeStraggler> = slow
        .into_iter()
        .filter(|(_, v)| v.len() >= MIN_SLOW_STEPS && 4 * v.len() >= 3 * counted.len())
        .map(|(device, v)| {
            let mut ratios: Vec<f64> = v.iter().map(|x| x.1).collect();
            ratios.sort_by(f64::total_cmp);
            let slow_steps: Vec<usize> = v.iter().map(|x| x.0).collect();
            let mut gained: HashMap<Sym, i64> = HashMap::new();
            for (step, (_, excess)) in &counted {
                if slow_steps.contains(step) {
                    for (&(d, name), &e) in excess {
                        if d == device {
                            *gained.entry(name).or_default() += e;
                        }
                    }
                }
            }
            let kernel = gained
                .into_iter()
                .filter(|&(_, e)| e > 0)
                .max_by_key(|&(n, e)| (e, std::cmp::Reverse(n)))
                .map(|(n, _)| n);
            ComputeStraggler {
                device,
                extra_ns_per_step: v.iter().map(|x| x.2).sum::<i64>() / v.len() as i64,
                ratio: ratios[ratios.len() / 2],
                slow_steps,
                counted: counted.len(),
                kernel,
            }
        })
        .collect();
    out.sort_by_key(|s| s.device);
    out
}
