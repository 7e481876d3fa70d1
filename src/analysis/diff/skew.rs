//! Skew per matched group before and after. Groups pair by key (stream
//! ids), failing that by an identical op sequence (the same collective
//! types in the same order, so the same count); each pair says which.

use super::side::{Side, delta_pct};
use crate::analysis::launch::Verdict;
use crate::analysis::matching::Group;
use crate::analysis::nccl_name::CollOp;
use crate::analysis::skew::GroupSkew;
use crate::analysis::stats::Spread;
use crate::profile::DeviceLabel;

/// How two groups were paired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairedBy {
    Key,
    OpSequence,
}

impl PairedBy {
    pub const ALL: [PairedBy; 2] = [PairedBy::Key, PairedBy::OpSequence];

    pub fn name(self) -> &'static str {
        match self {
            PairedBy::Key => "key",
            PairedBy::OpSequence => "op-sequence",
        }
    }
}

/// Launch verdicts of a group's big events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VerdictCounts {
    pub cpu_late: usize,
    pub gpu_side: usize,
    pub not_resolvable: usize,
    pub unknown: usize,
}

impl VerdictCounts {
    /// The count of one verdict.
    pub fn of(&self, v: Verdict) -> usize {
        match v {
            Verdict::CpuLate => self.cpu_late,
            Verdict::GpuSide => self.gpu_side,
            Verdict::NotResolvable => self.not_resolvable,
            Verdict::Unknown => self.unknown,
        }
    }

    fn add(&mut self, v: Verdict) {
        *match v {
            Verdict::CpuLate => &mut self.cpu_late,
            Verdict::GpuSide => &mut self.gpu_side,
            Verdict::NotResolvable => &mut self.not_resolvable,
            Verdict::Unknown => &mut self.unknown,
        } += 1;
    }
}

/// A big start-skew event, as the diff lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct BigEventBrief {
    /// 0-based; the instance number is `instance + 1`.
    pub instance: usize,
    pub op: CollOp,
    pub start_skew_ns: i64,
    pub late_device: DeviceLabel,
    /// The late rank's step, when steps are marked.
    pub step: Option<usize>,
}

/// One group's skew figures on one side.
#[derive(Debug, Clone, PartialEq)]
pub struct SkewSide {
    pub key: String,
    /// Index into that side's `Matching::groups` (and its skews).
    pub group: usize,
    pub instances: usize,
    pub excess_ns: i64,
    pub excess_pct: Option<f64>,
    pub start_skew_ms: Option<Spread>,
    pub end_skew_ms: Option<Spread>,
    pub big_events: Vec<BigEventBrief>,
    /// Per device of the group, in its device order.
    pub late_counts: Vec<(DeviceLabel, usize)>,
    pub verdicts: VerdictCounts,
    /// 0-based instance with the largest start skew (the first of equals).
    pub worst_instance: Option<usize>,
}

/// A group on both sides, or on one (unpaired: `paired_by` is `None`).
#[derive(Debug, Clone, PartialEq)]
pub struct SkewPair {
    /// The after side's key (the before side's when only before).
    pub key: String,
    pub paired_by: Option<PairedBy>,
    pub before: Option<SkewSide>,
    pub after: Option<SkewSide>,
}

impl SkewPair {
    /// Excess before and after, ns, when paired.
    pub fn excess_ns(&self) -> Option<(i64, i64)> {
        Some((
            self.before.as_ref()?.excess_ns,
            self.after.as_ref()?.excess_ns,
        ))
    }

    pub fn excess_delta_pct(&self) -> Option<f64> {
        let (b, a) = self.excess_ns()?;
        delta_pct(b as f64, a as f64)
    }
}

fn side_of(s: Side, gs: &GroupSkew) -> SkewSide {
    let p = s.profile;
    let g = &s.analysis.matching.groups[gs.group];
    let mut verdicts = VerdictCounts::default();
    // The launch stage explains every big event's late rank.
    for l in s
        .analysis
        .launch
        .late
        .iter()
        .filter(|l| l.group == gs.group)
    {
        verdicts.add(l.verdict);
    }
    let worst = gs.instances.iter().fold(
        None::<&crate::analysis::skew::InstanceSkew>,
        |best, i| match best {
            Some(b) if b.start_skew_ns >= i.start_skew_ns => Some(b),
            _ => Some(i),
        },
    );
    SkewSide {
        key: g.key.clone(),
        group: gs.group,
        instances: gs.instances.len(),
        excess_ns: gs.excess_ns(),
        excess_pct: gs.excess_pct(),
        start_skew_ms: gs.start_skew_ms,
        end_skew_ms: gs.end_skew_ms,
        big_events: gs
            .big_events
            .iter()
            .map(|e| BigEventBrief {
                instance: e.instance.index,
                op: e.instance.op,
                start_skew_ns: e.instance.start_skew_ns,
                late_device: p.device_label(g.devices[e.instance.late]),
                step: e.step,
            })
            .collect(),
        late_counts: g
            .devices
            .iter()
            .zip(&gs.late_counts)
            .map(|(&d, &n)| (p.device_label(d), n))
            .collect(),
        verdicts,
        worst_instance: worst.map(|i| i.index),
    }
}

fn group<'a>(s: Side<'a>, gs: &GroupSkew) -> &'a Group {
    &s.analysis.matching.groups[gs.group]
}

pub fn skew_pairs(before: Side, after: Side) -> Vec<SkewPair> {
    let bs = &before.analysis.skews;
    let as_ = &after.analysis.skews;
    // Index into `as_` paired with each of `bs`.
    let mut partner: Vec<Option<(usize, PairedBy)>> = vec![None; bs.len()];
    let mut taken = vec![false; as_.len()];
    for (bi, b) in bs.iter().enumerate() {
        let key = &group(before, b).key;
        if let Some(ai) =
            (0..as_.len()).find(|&ai| !taken[ai] && group(after, &as_[ai]).key == *key)
        {
            partner[bi] = Some((ai, PairedBy::Key));
            taken[ai] = true;
        }
    }
    for (bi, b) in bs.iter().enumerate() {
        if partner[bi].is_some() {
            continue;
        }
        let ops = &group(before, b).ops;
        if let Some(ai) =
            (0..as_.len()).find(|&ai| !taken[ai] && group(after, &as_[ai]).ops == *ops)
        {
            partner[bi] = Some((ai, PairedBy::OpSequence));
            taken[ai] = true;
        }
    }
    let mut paired = Vec::new();
    let mut unpaired = Vec::new();
    for (bi, b) in bs.iter().enumerate() {
        let before_side = side_of(before, b);
        match partner[bi] {
            Some((ai, by)) => {
                let after_side = side_of(after, &as_[ai]);
                paired.push(SkewPair {
                    key: after_side.key.clone(),
                    paired_by: Some(by),
                    before: Some(before_side),
                    after: Some(after_side),
                });
            }
            None => unpaired.push(SkewPair {
                key: before_side.key.clone(),
                paired_by: None,
                before: Some(before_side),
                after: None,
            }),
        }
    }
    for (_, a) in as_.iter().enumerate().filter(|(ai, _)| !taken[*ai]) {
        let after_side = side_of(after, a);
        unpaired.push(SkewPair {
            key: after_side.key.clone(),
            paired_by: None,
            before: None,
            after: Some(after_side),
        });
    }
    paired.extend(unpaired);
    paired
}
