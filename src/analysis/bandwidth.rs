//! Bytes and bandwidth of matched collectives, from the message sizes NCCL
//! records in its NVTX payloads (UNVERIFIED decoding: no real export here
//! carries payload data). Figures follow nccl-tests (`doc/PERFORMANCE.md`):
//!
//! - `bytes` is nccl-tests' size of the operation. NCCL records a per-rank
//!   size ("Just pass the size of one message"): the buffer of AllReduce,
//!   Broadcast and Reduce, the bytes of Send/Recv (one direction), the send
//!   buffer of AllGather and the receive buffer of ReduceScatter, one
//!   peer's share of AllToAll — for those three nccl-tests' size is the
//!   total, N × the recorded size.
//! - algbw = bytes ÷ the time the collective could move data: from the
//!   latest rank's start to the instance's end (the early ranks' wait is
//!   not transfer time). The naive figure, bytes ÷ each rank's kernel
//!   duration, includes the wait.
//! - busbw = algbw × the op's factor for N ranks: AllReduce 2(N−1)/N,
//!   AllGather, ReduceScatter and AllToAll (N−1)/N, Broadcast, Reduce and
//!   SendRecv 1 — what puts different rank counts on one scale. It is not
//!   one link's utilisation (NVLS, CollNet, hierarchical algorithms).
//!
//! Where no payload gives a size every figure is `None`, never 0, never
//! guessed from kernel names.

use super::clock::Alignment;
use super::kernel_class::KernelClasses;
use super::matching::{Group, Matching};
use super::nccl_breakdown::{self, OpKey};
use super::nccl_name::CollOp;
use super::skew::GroupSkew;
use super::stats::Spread;
use super::steps::Steps;
use super::window::Window;
use crate::profile::{DevId, LaneId, PayloadTally, Profile};
use std::collections::{BTreeMap, HashMap};

/// The caveat that goes beside every bandwidth figure.
pub const CAVEAT: &str =
    "busbw is not one link's utilisation; compare with nccl-tests on the same topology and size";
/// What is said where no size is known.
pub const NOT_RECORDED: &str = "message sizes not recorded (NCCL NVTX payloads absent)";
/// What is said where sizes come from payloads.
pub const UNVERIFIED: &str = "sizes decoded from NCCL's NVTX payloads by the export's schemas: the decoding is unverified against a real capture";
/// What is said where they come from the dynamic payload tables.
pub const FROM_TABLES: &str = "sizes read from NCCL's payloads in the export's dynamic payload tables (--dynamic-tables): the reading is unverified against a real capture";
/// How the two figures are timed.
pub const TIMING: &str = "algbw = bytes ÷ (the instance's end − its latest start): the early ranks' wait is not transfer time; naive = bytes ÷ each rank's kernel time, which includes its wait";

/// The message size NCCL recorded for each NCCL kernel that has one.
#[derive(Debug, Default, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sizes {
    /// (GPU row, bytes recorded), by row.
    by_row: Vec<(u32, u64)>,
    /// Payload schemas the inputs declare (with or without data).
    pub schemas: usize,
    /// NCCL kernels in the capture, counted when any size is recorded.
    pub nccl_kernels: usize,
    /// What became of the payloads the inputs hold.
    #[serde(default)]
    pub payloads: PayloadTally,
    /// NCCL calls the inputs hold as NVTX ranges, with or without payload.
    #[serde(default)]
    pub nccl_calls: usize,
    /// An input records it was exported with `--include-blobs=false`.
    #[serde(default)]
    pub blobs_left_out: bool,
}

/// How to get sizes that another export of the same report gives: NCCL's
/// ranges are there, their payloads were left out (nsys export leaves
/// `binaryData` out unless asked; 2026.4+ can write them as tables).
pub const RE_EXPORT: &str = "re-export with the payloads: nsys export --type sqlite --include-blobs=true REPORT.nsys-rep (2026.4+: or --dynamic-tables=all)";
/// How to get sizes when the capture holds no NCCL range at all.
pub const RE_CAPTURE: &str =
    "no NCCL call was traced: capture with nsys profile --trace=cuda,nvtx to record NCCL's ranges";

impl Sizes {
    pub fn read(p: &Profile, classes: &KernelClasses) -> Sizes {
        let schemas = p.nccl_api.schemas;
        let payloads = p.nccl_api.payloads;
        let nccl_calls = p.nccl_api.name.len();
        let blobs_left_out = p
            .files
            .iter()
            .any(|f| f.export.include_blobs == Some(false));
        if !p.nccl_api.bytes.iter().any(Option::is_some) {
            return Sizes {
                schemas,
                payloads,
                nccl_calls,
                blobs_left_out,
                ..Sizes::default()
            };
        }
        let mut by_row: Vec<(u32, u64)> = super::nccl_calls::issuing_calls(p, classes)
            .into_iter()
            .filter_map(|c| Some((c.row, c.bytes?)))
            .collect();
        by_row.sort_unstable();
        let nccl_kernels = (0..p.gpu.len())
            .filter(|&i| classes.comm(p, i).is_some())
            .count();
        Sizes {
            by_row,
            schemas,
            nccl_kernels,
            payloads,
            nccl_calls,
            blobs_left_out,
        }
    }

    /// How to get the sizes this capture lacks, when a re-export or
    /// another capture gives them (payloads present but undecodable are
    /// what they are: said by [`Sizes::said`]).
    pub fn how_to_get(&self) -> Option<&'static str> {
        if self.recorded() || self.payloads.present > 0 {
            None
        } else if self.nccl_calls > 0 {
            Some(RE_EXPORT)
        } else {
            Some(RE_CAPTURE)
        }
    }

    /// The recorded (per-rank) size of GPU row `row`'s call.
    pub fn of(&self, row: usize) -> Option<u64> {
        let row = u32::try_from(row).ok()?;
        let at = self.by_row.binary_search_by_key(&row, |e| e.0).ok()?;
        Some(self.by_row[at].1)
    }

    /// Whether any kernel has a size.
    pub fn recorded(&self) -> bool {
        !self.by_row.is_empty()
    }

    /// Whether every row named is one of `p`'s (a stored value is checked).
    pub fn fits(&self, p: &Profile) -> bool {
        self.by_row.iter().all(|&(r, _)| (r as usize) < p.gpu.len())
    }

    /// What is said of the sizes beside the figures, in one line: why
    /// there are none, or how many kernels have one and that the decoding
    /// is unverified.
    pub fn said(&self) -> String {
        let t = &self.payloads;
        if !self.recorded() {
            return if t.present > 0 && t.decoded == 0 {
                format!(
                    "message sizes not known: {} NCCL payloads present, none decodable with the declared schemas: {}",
                    t.present,
                    t.reasons()
                )
            } else if self.schemas > 0 && t.present == 0 {
                let why = if self.blobs_left_out {
                    " (exported with --include-blobs=false)"
                } else {
                    ""
                };
                format!(
                    "{NOT_RECORDED}: the export declares NCCL's payload schemas but holds no payload data{why}; {RE_EXPORT}"
                )
            } else {
                match self.how_to_get() {
                    Some(how) => format!("{NOT_RECORDED}; {how}"),
                    None => NOT_RECORDED.to_string(),
                }
            };
        }
        let n = self.by_row.len();
        let all = self.nccl_kernels.max(n);
        let source = match t.from_tables {
            0 => UNVERIFIED.to_string(),
            k if k == t.present => FROM_TABLES.to_string(),
            k => format!(
                "{UNVERIFIED} ({k} of {} payloads from the dynamic payload tables)",
                t.present
            ),
        };
        let mut line = if n == all {
            format!("{source}; every NCCL kernel ({n}) has a size")
        } else {
            format!(
                "{source}; {n} of {all} NCCL kernels have a size (the others were launched outside an NCCL call with a payload, or by a group of calls that cannot be split among its kernels)"
            )
        };
        if t.undecodable() > 0 {
            line += &format!(
                "; {} of {} payloads not decodable, left out: {}",
                t.undecodable(),
                t.present,
                t.reasons()
            );
        }
        if t.duplicates > 0 {
            line += &format!("; {} duplicated payload rows counted once", t.duplicates);
        }
        line
    }
}

/// nccl-tests' busbw factor for `op` over `n` ranks (`None`: an op it
/// defines none for).
pub fn bus_factor(op: CollOp, n: usize) -> Option<f64> {
    let n = n.max(1) as f64;
    match op {
        CollOp::AllReduce => Some(2.0 * (n - 1.0) / n),
        CollOp::AllGather | CollOp::ReduceScatter | CollOp::AllToAll => Some((n - 1.0) / n),
        CollOp::Broadcast | CollOp::Reduce | CollOp::SendRecv => Some(1.0),
        CollOp::Other => None,
    }
}

/// nccl-tests' size of an `op` over `n` ranks whose NCCL call recorded
/// `recorded` bytes (per rank).
pub fn test_size(op: CollOp, recorded: u64, n: usize) -> u64 {
    match op {
        CollOp::AllGather | CollOp::ReduceScatter | CollOp::AllToAll => {
            recorded.saturating_mul(n as u64)
        }
        _ => recorded,
    }
}

/// Which size an op's figures use, said beside them.
pub fn size_convention(op: CollOp) -> &'static str {
    match op {
        CollOp::AllGather => "the gathered total, N × each rank's send buffer",
        CollOp::ReduceScatter => "the reduced total, N × each rank's receive buffer",
        CollOp::AllToAll => "the total, N × one peer's share",
        CollOp::SendRecv => "one direction: what a rank sends or receives",
        _ => "each rank's buffer",
    }
}

/// One instance's size and bandwidth.
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceBandwidth {
    /// nccl-tests' size.
    pub bytes: u64,
    /// The size NCCL recorded (per rank), as most ranks recorded it.
    pub recorded: u64,
    /// Not every rank recorded the same size.
    pub sizes_differ: bool,
    /// The group's ranks: N of the factor.
    pub ranks: usize,
    /// From the latest start to the instance's end; `None` when a rank's
    /// kernel is not in the capture or was still running at its end (the
    /// latest start or the end is not known).
    pub transfer_ns: Option<i64>,
    pub algbw_gbps: Option<f64>,
    pub busbw_gbps: Option<f64>,
    /// Per member (index into the group's devices): bytes ÷ its kernel's
    /// duration, which includes its wait.
    pub naive_gbps: Vec<(usize, f64)>,
}

/// GB/s of `bytes` over `ns` (bytes per ns are GB/s).
fn gbps(bytes: u64, ns: i64) -> Option<f64> {
    (ns > 0).then(|| bytes as f64 / ns as f64)
}

/// Instance `k` of `g` (`unfinished`: a rank's kernel ran past its
/// capture); `None` when no member's call recorded a size.
pub fn instance(g: &Group, k: usize, unfinished: bool, sizes: &Sizes) -> Option<InstanceBandwidth> {
    let members: Vec<(usize, usize, (i64, i64))> = g.members(k).collect();
    let recorded: Vec<u64> = members.iter().filter_map(|m| sizes.of(m.1)).collect();
    let size = mode(&recorded)?;
    let op = g.ops[k];
    let (ranks, _) = g.bandwidth_ranks();
    let bytes = test_size(op, size, ranks);
    let timed = g.complete(k) && !unfinished;
    let transfer_ns = timed.then(|| {
        let latest = members.iter().map(|m| m.2.0).max().unwrap_or(0);
        let end = members.iter().map(|m| m.2.1).max().unwrap_or(0);
        end.saturating_sub(latest)
    });
    let algbw = transfer_ns.and_then(|ns| gbps(bytes, ns));
    Some(InstanceBandwidth {
        bytes,
        recorded: size,
        sizes_differ: recorded.iter().any(|&s| s != size),
        ranks,
        transfer_ns,
        algbw_gbps: algbw,
        busbw_gbps: algbw.zip(bus_factor(op, ranks)).map(|(a, f)| a * f),
        naive_gbps: if unfinished {
            Vec::new()
        } else {
            members
                .iter()
                .filter_map(|&(d, _, (s, e))| Some((d, gbps(bytes, e.saturating_sub(s))?)))
                .collect()
        },
    })
}

/// The value most of `v` hold (ties: the smallest); `None` when empty.
fn mode(v: &[u64]) -> Option<u64> {
    let mut counts: BTreeMap<u64, usize> = BTreeMap::new();
    for &x in v {
        *counts.entry(x).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|&(x, n)| (n, std::cmp::Reverse(x)))
        .map(|(x, _)| x)
}

/// The figures of every instance of the skew stage (those in its window)
/// that has a size, by (group, instance).
pub fn instances(
    m: &Matching,
    skews: &[GroupSkew],
    sizes: &Sizes,
) -> HashMap<(usize, usize), InstanceBandwidth> {
    if !sizes.recorded() {
        return HashMap::new();
    }
    let mut out = HashMap::new();
    for s in skews {
        let g = &m.groups[s.group];
        for i in &s.instances {
            if let Some(b) = instance(g, i.index, i.unfinished, sizes) {
                out.insert((s.group, i.index), b);
            }
        }
    }
    out
}

/// The figures of a set of instances (or kernels) with a size: their
/// bytes and the spread of each bandwidth.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    /// Instances (or kernels) counted.
    pub counted: usize,
    /// Those with figures.
    pub sized: usize,
    /// Σ nccl-tests' size over them; `None` when none has a size.
    pub bytes: Option<u64>,
    pub algbw_gbps: Option<Spread>,
    pub busbw_gbps: Option<Spread>,
    /// The naive figure (bytes ÷ each rank's duration), over every member.
    pub naive_gbps: Option<Spread>,
}

/// [`Totals`] as instances are added.
#[derive(Debug, Default)]
pub struct Tally {
    counted: usize,
    figures: Vec<(u64, Option<f64>, Option<f64>)>,
    naive: Vec<f64>,
}

impl Tally {
    /// One more instance, with its figures when it has a size.
    pub fn add(&mut self, f: Option<&InstanceBandwidth>) {
        self.counted += 1;
        if let Some(f) = f {
            self.figures.push((f.bytes, f.algbw_gbps, f.busbw_gbps));
            self.naive.extend(f.naive_gbps.iter().map(|x| x.1));
        }
    }

    pub fn totals(self) -> Totals {
        let sized = self.figures.len();
        Totals {
            counted: self.counted,
            sized,
            bytes: (sized > 0)
                .then(|| self.figures.iter().fold(0u64, |s, f| s.saturating_add(f.0))),
            algbw_gbps: Spread::of(self.figures.iter().filter_map(|f| f.1)),
            busbw_gbps: Spread::of(self.figures.iter().filter_map(|f| f.2)),
            naive_gbps: Spread::of(self.naive),
        }
    }
}

/// Instances (op and figures, when they have a size) tallied per op, by
/// op name.
pub fn tally_by_op<'a>(
    instances: impl IntoIterator<Item = (CollOp, Option<&'a InstanceBandwidth>)>,
) -> BTreeMap<&'static str, (CollOp, Tally)> {
    let mut by_op: BTreeMap<&'static str, (CollOp, Tally)> = BTreeMap::new();
    for (op, f) in instances {
        by_op
            .entry(op.name())
            .or_insert((op, Tally::default()))
            .1
            .add(f);
    }
    by_op
}

/// One group's figures for one op.
#[derive(Debug, Clone, PartialEq)]
pub struct OpBandwidth {
    pub group: usize,
    pub op: CollOp,
    /// N of its factor ([`super::bandwidth_n::BusN`] says where from).
    pub ranks: usize,
    pub factor: Option<f64>,
    /// Over the op's instances.
    pub totals: Totals,
}

/// Per group and op over the skew stage's instances, in group order then
/// op name.
pub fn per_op(
    m: &Matching,
    skews: &[GroupSkew],
    figures: &HashMap<(usize, usize), InstanceBandwidth>,
) -> Vec<OpBandwidth> {
    let mut out = Vec::new();
    for s in skews {
        let (ranks, _) = m.groups[s.group].bandwidth_ranks();
        let by_op = tally_by_op(
            s.instances
                .iter()
                .map(|i| (i.op, figures.get(&(s.group, i.index)))),
        );
        out.extend(by_op.into_values().map(|(op, tally)| OpBandwidth {
            group: s.group,
            op,
            ranks,
            factor: bus_factor(op, ranks),
            totals: tally.totals(),
        }));
    }
    out
}

/// Per (stream, op key), over the NCCL kernels wholly inside `w` with a
/// recorded size (as the breakdown tells them apart): `counted` kernels,
/// the figures of the matched instances they are in. Empty when no size
/// is recorded.
#[allow(clippy::too_many_arguments)]
pub fn lane_ops(
    p: &Profile,
    classes: &KernelClasses,
    clock: &Alignment,
    w: Window,
    m: &Matching,
    sizes: &Sizes,
    figures: &HashMap<(usize, usize), InstanceBandwidth>,
) -> HashMap<(LaneId, OpKey), Totals> {
    if !sizes.recorded() {
        return HashMap::new();
    }
    let mut acc: HashMap<(LaneId, OpKey), Tally> = HashMap::new();
    nccl_breakdown::each_kernel(p, classes, clock, w, |lane, row, k, _| {
        if sizes.of(row).is_some() {
            let f = m.instance_of(row).and_then(|gk| figures.get(&gk));
            acc.entry((lane, nccl_breakdown::op_key(k)))
                .or_default()
                .add(f);
        }
    });
    acc.into_iter().map(|(k, t)| (k, t.totals())).collect()
}

/// Bytes a rank sent in one step's collectives, estimated as factor ×
/// bytes per instance (a ring's volume; other algorithms move other
/// amounts).
#[derive(Debug, Clone, PartialEq)]
pub struct RankVolume {
    pub device: DevId,
    /// Step (numbered from 1) of the rank's process (the step holding the kernel's
    /// launch call), `None` outside every step.
    pub step: Option<usize>,
    pub bytes_sent: f64,
    pub instances: usize,
}

/// Per device and step over every sized instance; in device then step
/// order.
pub fn rank_volume(
    p: &Profile,
    m: &Matching,
    skews: &[GroupSkew],
    figures: &HashMap<(usize, usize), InstanceBandwidth>,
    steps: &Steps,
    clock: &Alignment,
) -> Vec<RankVolume> {
    let mut acc: BTreeMap<(DevId, Option<usize>), (f64, usize)> = BTreeMap::new();
    for s in skews {
        let g = &m.groups[s.group];
        for i in &s.instances {
            let Some(b) = figures.get(&(s.group, i.index)) else {
                continue;
            };
            let Some(factor) = bus_factor(i.op, b.ranks) else {
                continue;
            };
            for (d, row, (start, _)) in g.members(i.index) {
                let step = steps.of_kernel(p, clock, row, start).map(|x| x.0);
                let e = acc.entry((g.devices[d], step)).or_default();
                e.0 += factor * b.bytes as f64;
                e.1 += 1;
            }
        }
    }
    acc.into_iter()
        .map(|((device, step), (bytes_sent, instances))| RankVolume {
            device,
            step,
            bytes_sent,
            instances,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_and_sizes_follow_nccl_tests() {
        assert_eq!(bus_factor(CollOp::AllReduce, 8), Some(1.75));
        assert_eq!(bus_factor(CollOp::AllGather, 4), Some(0.75));
        assert_eq!(bus_factor(CollOp::ReduceScatter, 2), Some(0.5));
        assert_eq!(bus_factor(CollOp::AllToAll, 4), Some(0.75));
        assert_eq!(bus_factor(CollOp::Broadcast, 16), Some(1.0));
        assert_eq!(bus_factor(CollOp::Reduce, 16), Some(1.0));
        assert_eq!(bus_factor(CollOp::SendRecv, 2), Some(1.0));
        assert_eq!(bus_factor(CollOp::Other, 16), None);
        assert_eq!(test_size(CollOp::AllGather, 1024, 8), 8192);
        assert_eq!(test_size(CollOp::ReduceScatter, 1024, 8), 8192);
        assert_eq!(test_size(CollOp::AllToAll, 1024, 8), 8192);
        assert_eq!(test_size(CollOp::AllReduce, 1024, 8), 1024);
        assert_eq!(test_size(CollOp::SendRecv, 1024, 8), 1024);
        assert_eq!(mode(&[3, 5, 5, 3, 5]), Some(5));
        assert_eq!(mode(&[3, 5]), Some(3));
        assert_eq!(mode(&[]), None);
        assert_eq!(gbps(1_000_000_000, 1_000_000_000), Some(1.0));
        assert_eq!(gbps(10, 0), None);
    }

    #[test]
    fn what_is_said_of_the_sizes() {
        // No NCCL range at all: only another capture gives sizes.
        let none = Sizes::default();
        assert_eq!(none.said(), format!("{NOT_RECORDED}; {RE_CAPTURE}"));
        // Ranges without payloads: a re-export with the blobs gives them.
        let ranges = Sizes {
            nccl_calls: 40,
            ..Sizes::default()
        };
        assert_eq!(ranges.how_to_get(), Some(RE_EXPORT));
        assert!(ranges.said().ends_with(RE_EXPORT));
        assert!(
            RE_EXPORT.contains("--include-blobs=true")
                && RE_EXPORT.contains("--dynamic-tables=all")
        );
        let declared = Sizes {
            schemas: 8,
            nccl_calls: 40,
            ..Sizes::default()
        };
        assert!(declared.said().starts_with(NOT_RECORDED));
        assert!(declared.said().contains("no payload data"));
        assert!(declared.said().contains(RE_EXPORT));
        assert!(!declared.said().contains("--include-blobs=false"));
        // The export records it left them out: said.
        let left_out = Sizes {
            blobs_left_out: true,
            ..declared
        };
        assert!(
            left_out
                .said()
                .contains("no payload data (exported with --include-blobs=false)")
        );
        // Payloads present but undecodable: a re-export gives the same.
        let undecodable = Sizes {
            nccl_calls: 40,
            payloads: PayloadTally {
                present: 40,
                no_schema: 40,
                ..PayloadTally::default()
            },
            ..Sizes::default()
        };
        assert_eq!(undecodable.how_to_get(), None);
        assert!(!undecodable.said().contains("re-export"));
        let some = Sizes {
            by_row: vec![(1, 10), (4, 20)],
            schemas: 8,
            nccl_kernels: 3,
            payloads: PayloadTally::default(),
            nccl_calls: 3,
            blobs_left_out: false,
        };
        assert_eq!(some.how_to_get(), None);
        assert_eq!((some.of(4), some.of(2)), (Some(20), None));
        assert!(
            some.said().contains("2 of 3 NCCL kernels"),
            "{}",
            some.said()
        );
        assert!(some.said().contains("unverified"));
        assert!(some.said().starts_with(UNVERIFIED));
        // Where the payloads came from the dynamic payload tables, it says so.
        let tally = |from_tables| PayloadTally {
            present: 3,
            decoded: 3,
            from_tables,
            ..PayloadTally::default()
        };
        let tables = Sizes {
            payloads: tally(3),
            ..some.clone()
        };
        assert!(tables.said().starts_with(FROM_TABLES), "{}", tables.said());
        let mixed = Sizes {
            payloads: tally(1),
            ..some
        };
        assert!(
            mixed.said().starts_with(&format!(
                "{UNVERIFIED} (1 of 3 payloads from the dynamic payload tables)"
            )),
            "{}",
            mixed.said()
        );
    }
}
