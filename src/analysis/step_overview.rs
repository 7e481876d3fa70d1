//! Everything the steps report and the steps view show, computed once:
//! each step's account per rank, its critical path and what-ifs, each
//! rank's compute against its peers', the compute stragglers and the
//! causes ranked over the steps after warm-up. The report and the view
//! read the same value, so their figures cannot differ.

use super::clock::Alignment;
use super::compute_stragglers::{self, ComputeStraggler, StepCompute};
use super::critical_path::{self, SegKind, StepPath, WhatIf};
use super::kernel_class::KernelClasses;
use super::matching::Matching;
use super::step_account::{self, StepAccount};
use super::step_spans::{StepSpans, StepsFrom, step_spans};
use super::steps::Steps;
use crate::profile::{DevId, Profile, Sym};
use std::collections::BTreeMap;

/// Warm-up steps unless told otherwise: the first (CUDA and NCCL
/// initialisation, allocator growth, first-call compilation).
pub const WARMUP_STEPS: usize = 1;

/// The steps of a capture, as far as warm-up `warmup` (the first steps,
/// by position) is left out of the sums.
#[derive(Debug, Clone, Default)]
pub struct StepOverview {
    pub warmup: usize,
    /// Per step, in order.
    pub accounts: Vec<StepAccount>,
    pub paths: Vec<StepPath>,
    /// Per step, each device's compute against its peers' median.
    pub compute: Vec<Vec<StepCompute>>,
    pub stragglers: Vec<ComputeStraggler>,
    /// The what-ifs of the steps after warm-up summed per cause, largest
    /// first, with how many steps each was found in.
    pub causes: Vec<(WhatIf, usize)>,
    /// The step ranges, or the collectives' period the steps came from.
    pub from: StepsFrom,
    /// Per step, each device's time on the critical path (by device).
    pub on_path: Vec<Vec<(DevId, i64)>>,
}

/// The steps' figures of a capture (empty without step ranges).
pub fn overview(
    p: &Profile,
    classes: &KernelClasses,
    clock: &Alignment,
    m: &Matching,
    steps: &Steps,
    warmup: usize,
) -> StepOverview {
    let StepSpans { spans, from } = step_spans(p, clock, m, steps);
    let accounts = step_account::account(p, classes, clock, m, &spans);
    if accounts.is_empty() {
        return StepOverview {
            warmup,
            ..StepOverview::default()
        };
    }
    let paths = critical_path::critical_paths(p, classes, clock, m, &spans);
    let per_step = compute_stragglers::per_step(p, classes, clock, &spans);
    let stragglers = compute_stragglers::stragglers(&per_step, warmup);
    let causes = causes(&paths, warmup);
    let on_path = paths.iter().map(on_path).collect();
    StepOverview {
        warmup,
        accounts,
        paths,
        compute: per_step.into_iter().map(|(c, _)| c).collect(),
        stragglers,
        causes,
        from,
        on_path,
    }
}

/// Each device's time on a path, by device.
fn on_path(path: &StepPath) -> Vec<(DevId, i64)> {
    let mut by: BTreeMap<DevId, i64> = BTreeMap::new();
    for s in &path.path {
        if let Some(d) = s.device {
            *by.entry(d).or_default() += s.end - s.start;
        }
    }
    by.into_iter().collect()
}

impl StepOverview {
    /// Step `step` (numbered from 1) is warm-up.
    pub fn is_warmup(&self, step: usize) -> bool {
        step <= self.warmup
    }
}

/// A cause as what-ifs of several steps share it: device, kind, name, ranks.
type CauseKey = (Option<DevId>, SegKind, Option<Sym>, usize);

/// The what-ifs of the steps after warm-up, summed per cause, largest first.
fn causes(paths: &[StepPath], warmup: usize) -> Vec<(WhatIf, usize)> {
    // Per cause: the saving summed, the steps it was found in, and the
    // last of them (a step can hold the same kernel many times: one step).
    let mut sum: BTreeMap<CauseKey, (i64, usize, usize)> = BTreeMap::new();
    for p in paths.iter().filter(|p| p.step > warmup) {
        for w in &p.what_if {
            let e = sum.entry((w.device, w.kind, w.what, w.ranks)).or_default();
            e.0 += w.saves_ns;
            if e.2 != p.step {
                e.1 += 1;
                e.2 = p.step;
            }
        }
    }
    let mut out: Vec<(WhatIf, usize)> = sum
        .into_iter()
        .map(|((device, kind, what, ranks), (saves_ns, steps, _))| {
            let w = WhatIf {
                device,
                kind,
                what,
                ranks,
                saves_ns,
            };
            (w, steps)
        })
        .collect();
    out.sort_by_key(|(w, _)| std::cmp::Reverse(w.saves_ns));
    out
}

/// Where a cause is: its rank (`D3`), or its host and how many ranks
/// when it is on every rank of one at once (`gpu-a23 ×8 ranks`).
pub fn cause_place(p: &Profile, w: &WhatIf) -> Option<String> {
    let d = w.device?;
    Some(match w.ranks {
        0 | 1 => p.device_label(d).tag(),
        n => format!("{} ×{n} ranks", p.host_label(p.devices[d as usize].host)),
    })
}

/// One kind's share of a path: its time, and each device's part of it
/// (largest first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindShare {
    pub kind: SegKind,
    pub ns: i64,
    pub devices: Vec<(Option<DevId>, i64)>,
}

/// A path's time by kind, largest first, with the small kinds (launch and
/// queue latencies, sync returns, gaps) as `other`, last.
pub fn composition(path: &StepPath) -> Vec<KindShare> {
    let mut by_kind: BTreeMap<SegKind, (i64, BTreeMap<Option<DevId>, i64>)> = BTreeMap::new();
    for s in &path.path {
        let kind = match s.kind {
            SegKind::Compute
            | SegKind::Transfer
            | SegKind::OsWait
            | SegKind::Host
            | SegKind::CudaCall
            | SegKind::Copy => s.kind,
            SegKind::Nccl => SegKind::Transfer,
            _ => SegKind::Other,
        };
        let e = by_kind.entry(kind).or_default();
        e.0 += s.end - s.start;
        *e.1.entry(s.device).or_default() += s.end - s.start;
    }
    let mut out: Vec<KindShare> = by_kind
        .into_iter()
        .map(|(kind, (ns, devs))| {
            let mut devices: Vec<(Option<DevId>, i64)> = devs.into_iter().collect();
            devices.sort_by_key(|&(d, ns)| (std::cmp::Reverse(ns), d));
            KindShare { kind, ns, devices }
        })
        .collect();
    out.sort_by_key(|k| (k.kind == SegKind::Other, std::cmp::Reverse(k.ns)));
    out
}
