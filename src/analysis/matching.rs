//! Matching the same collective across ranks (a rank here is a device).
//!
//! Rungs, tried in order per group of streams:
//! 1. an operation id shared by all ranks (`NCCL_GPU_OPERATIONS`, nsys ≥
//!    2025.6 with NCCL ≥ 2.28) — UNVERIFIED: no real export here has it;
//! 2. NCCL NVTX ranges carrying a communicator id, numbered per
//!    communicator — UNVERIFIED: no real export here has the payload;
//! 3. sequence matching: the k-th NCCL kernel of each device's stream is one
//!    instance. Streams are grouped by stream id when the ids agree across
//!    ranks, otherwise paired by the longest common prefix of their
//!    collective-type sequences.
//!
//! Nothing is assumed: a group is checked for the same count and type at
//! every position (only the consistent prefix is matched), and aligned ends
//! confirm the pairing. A stream id shared by two communicators shows as
//! ends that are aligned within device subsets but not across them; those
//! subsets become groups of their own.

use super::clock::{Alignment, ClockMethod};
use super::completeness::device_order;
use super::kernel_class::KernelClasses;
use super::nccl_name::CollOp;
pub use super::op_keys::MatchMethod;
use super::op_keys::OpKeys;
use super::stats::Spread;
use crate::profile::{DevId, LaneId, Profile};
use std::collections::{BTreeMap, HashMap};

/// The first position where a device's sequence departs from the others.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Mismatch {
    /// 1-based.
    pub position: usize,
    pub device: DevId,
    /// The type most devices have there (`None`: most have no kernel).
    pub expected: Option<CollOp>,
    /// What this device has there (`None`: no kernel).
    pub found: Option<CollOp>,
}

/// Ends further apart than this (p90) mean the pairing is not confirmed.
pub const END_ALIGNED_NS: i64 = 1_000_000;

/// Start and end of a kernel on the reference clock.
type Span = (i64, i64);

/// A set of streams, one per device, whose collectives were matched.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Group {
    pub key: String,
    pub method: MatchMethod,
    /// In device order.
    pub devices: Vec<DevId>,
    /// The stream of each device (parallel to `devices`).
    pub lanes: Vec<LaneId>,
    pub sequence_consistent: bool,
    pub mismatch: Option<Mismatch>,
    pub end_aligned: bool,
    /// Instance-major GPU rows: instance k, device d at `k * devices.len() + d`.
    /// Instances are in order of earliest start; instance k is number k + 1.
    rows: Vec<u32>,
    /// Start and end of each row of `rows` on the reference clock (the
    /// alignment the group was matched with).
    aligned: Vec<(i64, i64)>,
    pub ops: Vec<CollOp>,
    /// Why this group exists apart (e.g. split off by end alignment).
    pub note: Option<String>,
    /// How its devices' clocks were aligned, when they are on several.
    pub clocks: Option<GroupClocks>,
}

/// The clocks of a group whose devices are on several clock domains.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GroupClocks {
    pub domains: usize,
    /// The weakest method among its files (none < utc < collective ends).
    pub method: ClockMethod,
    /// Clock error (ns, the largest residual p90 of its files): a skew
    /// below it is not resolvable.
    pub uncertainty_ns: i64,
}

impl Group {
    /// Whether this group's ids and rows can be those of `p` (a stored
    /// group is checked before use): every device, stream and GPU row
    /// exists, and each instance has one row and time per device.
    pub fn fits(&self, p: &Profile) -> bool {
        let n = self.devices.len();
        n == self.lanes.len()
            && n.checked_mul(self.ops.len()) == Some(self.rows.len())
            && self.aligned.len() == self.rows.len()
            && self.devices.iter().all(|&d| (d as usize) < p.devices.len())
            && self.lanes.iter().all(|&l| (l as usize) < p.lanes.len())
            && self.rows.iter().all(|&r| (r as usize) < p.gpu.len())
    }

    pub fn instances(&self) -> usize {
        self.ops.len()
    }

    /// The GPU rows of instance `k` (0-based), one per device.
    pub fn instance_rows(&self, k: usize) -> &[u32] {
        let n = self.devices.len();
        &self.rows[k * n..(k + 1) * n]
    }

    /// (start, end) of instance `k`'s kernels on the reference clock, one
    /// per device.
    pub fn instance_times(&self, k: usize) -> &[(i64, i64)] {
        let n = self.devices.len();
        &self.aligned[k * n..(k + 1) * n]
    }
}

/// All groups of a profile.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Matching {
    pub groups: Vec<Group>,
    /// Streams with NCCL kernels that pair with no other device.
    pub unpaired: Vec<LaneId>,
    /// (GPU row, group, 0-based instance), sorted by row; rebuilt, not
    /// stored ([`Matching::index_rows`]). A sorted list, not a hash map:
    /// built in a fraction of the time (1.4 M rows at 10 M kernels, on
    /// every reopen) and smaller; looked up only when the user moves.
    #[serde(skip)]
    by_row: Vec<(u32, u32, u32)>,
}

impl Matching {
    /// The matched instance a GPU row belongs to, if any.
    pub fn instance_of(&self, row: usize) -> Option<(usize, usize)> {
        let row = u32::try_from(row).ok()?;
        let at = self.by_row.binary_search_by_key(&row, |e| e.0).ok()?;
        let (_, g, k) = self.by_row[at];
        Some((g as usize, k as usize))
    }

    /// Builds the row → instance index from the groups (after matching,
    /// or after reading a stored matching). A row listed twice belongs to
    /// its last listing.
    pub fn index_rows(&mut self) {
        let mut by_row = Vec::new();
        for (g, group) in self.groups.iter().enumerate() {
            for k in 0..group.instances() {
                for &r in group.instance_rows(k) {
                    by_row.push((r, g as u32, k as u32));
                }
            }
        }
        // Stable: of equal rows, the last listed ends last, and is kept.
        by_row.sort_by_key(|e| e.0);
        let mut kept: Vec<(u32, u32, u32)> = Vec::with_capacity(by_row.len());
        for e in by_row {
            match kept.last_mut() {
                Some(last) if last.0 == e.0 => *last = e,
                _ => kept.push(e),
            }
        }
        self.by_row = kept;
    }

    /// The group with this key.
    pub fn group(&self, key: &str) -> Option<usize> {
        self.groups.iter().position(|g| g.key == key)
    }
}

/// The NCCL kernels of one stream, in start order.
#[derive(Debug, Clone)]
struct Seq {
    device: DevId,
    lane: LaneId,
    stream: u32,
    rows: Vec<u32>,
    ops: Vec<CollOp>,
}

/// Matches every NCCL collective of the profile across devices.
/// Times across files are compared on `clock`.
pub fn match_collectives(p: &Profile, classes: &KernelClasses, clock: &Alignment) -> Matching {
    let order: HashMap<DevId, usize> = device_order(p)
        .into_iter()
        .enumerate()
        .map(|(i, d)| (d, i))
        .collect();
    let seqs = nccl_sequences(p, classes);
    let (clusters, unpaired) = cluster_streams(seqs, &order);
    let keys = OpKeys::read(p, classes);
    let mut groups = Vec::new();
    let mut unpaired = unpaired;
    for mut members in clusters {
        members.sort_by_key(|s| order[&s.device]);
        let base = group_key(&members);
        let mut parts = split_by_communicator(members, &keys);
        parts.sort_by_key(|part| part.first().map(|s| order[&s.device]));
        let split = parts.len() > 1;
        for (i, part) in parts.into_iter().enumerate() {
            if part.len() < 2 {
                unpaired.extend(part.iter().map(|s| s.lane));
                continue;
            }
            let key = if split {
                format!("{base}/{}", i + 1)
            } else {
                base.clone()
            };
            let mut built = build_groups(p, part, &keys, key, clock);
            if split {
                for g in &mut built {
                    g.note =
                        Some("split by NCCL communicator id (NVTX payload, unverified)".into());
                }
            }
            groups.extend(built);
        }
    }
    groups.sort_by(|a, b| {
        let first = |g: &Group| g.devices.first().map(|d| order[d]);
        (first(a), &a.key).cmp(&(first(b), &b.key))
    });
    unique_keys(&mut groups);
    let mut m = Matching {
        groups,
        unpaired,
        by_row: Default::default(),
    };
    m.index_rows();
    m
}

/// Streams sharing an id but belonging to different communicators (known
/// from NCCL's NVTX payload) are different groups.
fn split_by_communicator(members: Vec<Seq>, keys: &OpKeys) -> Vec<Vec<Seq>> {
    let comms: Vec<Option<u64>> = members
        .iter()
        .map(|s| keys.dominant_comm(&s.rows))
        .collect();
    if comms.iter().any(|c| c.is_none()) || comms.windows(2).all(|w| w[0] == w[1]) {
        return vec![members];
    }
    let mut parts: BTreeMap<u64, Vec<Seq>> = BTreeMap::new();
    for (s, c) in members.into_iter().zip(comms) {
        parts.entry(c.unwrap_or(0)).or_default().push(s);
    }
    parts.into_values().collect()
}

fn nccl_sequences(p: &Profile, classes: &KernelClasses) -> Vec<Seq> {
    let mut out = Vec::new();
    for (lane_id, lane) in p.lanes.iter().enumerate() {
        let mut rows = Vec::new();
        let mut ops = Vec::new();
        for i in lane.rows.clone() {
            if let Some(k) = classes.comm(p, i) {
                rows.push(i as u32);
                ops.push(k.op);
            }
        }
        if !rows.is_empty() {
            out.push(Seq {
                device: lane.device,
                lane: lane_id as LaneId,
                stream: lane.stream,
                rows,
                ops,
            });
        }
    }
    out
}

fn common_prefix(a: &[CollOp], b: &[CollOp]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Groups streams: by stream id where each device has exactly one NCCL
/// stream with that id, then every other stream joins the cluster (lacking
/// its device) whose reference sequence shares the longest common prefix
/// with it — at least half of the shorter sequence.
fn cluster_streams(seqs: Vec<Seq>, order: &HashMap<DevId, usize>) -> (Vec<Vec<Seq>>, Vec<LaneId>) {
    let mut by_stream: BTreeMap<u32, Vec<Seq>> = BTreeMap::new();
    for s in seqs {
        by_stream.entry(s.stream).or_default().push(s);
    }
    let mut clusters: Vec<Vec<Seq>> = Vec::new();
    let mut leftover: Vec<Seq> = Vec::new();
    for (_, members) in by_stream {
        let mut devs: Vec<DevId> = members.iter().map(|s| s.device).collect();
        devs.sort_unstable();
        let distinct = devs.windows(2).all(|w| w[0] != w[1]);
        if distinct && members.len() >= 2 {
            clusters.push(members);
        } else {
            leftover.extend(members);
        }
    }
    // Longest first, then device order: a long sequence is the better reference.
    leftover.sort_by_key(|s| (std::cmp::Reverse(s.ops.len()), order[&s.device], s.stream));
    for s in leftover {
        let best = clusters
            .iter()
            .enumerate()
            .filter(|(_, c)| c.iter().all(|m| m.device != s.device))
            .map(|(i, c)| (common_prefix(&c[0].ops, &s.ops), i, c[0].ops.len()))
            .filter(|&(lcp, _, len)| lcp >= 1 && 2 * lcp >= len.min(s.ops.len()))
            .max_by_key(|&(lcp, i, _)| (lcp, std::cmp::Reverse(i)));
        match best {
            Some((_, i, _)) => clusters[i].push(s),
            None => clusters.push(vec![s]),
        }
    }
    let mut unpaired = Vec::new();
    clusters.retain(|c| {
        if c.len() < 2 {
            unpaired.extend(c.iter().map(|s| s.lane));
        }
        c.len() >= 2
    });
    (clusters, unpaired)
}

/// A short, host-free key: `s29`, or `s7+s15` when the ranks' stream ids
/// differ (each id once, in device order).
fn group_key(members: &[Seq]) -> String {
    let mut streams: Vec<u32> = Vec::new();
    for s in members {
        if !streams.contains(&s.stream) {
            streams.push(s.stream);
        }
    }
    streams
        .iter()
        .map(|s| format!("s{s}"))
        .collect::<Vec<_>>()
        .join("+")
}

/// Keys that would still repeat get `/1`, `/2` … in group order.
fn unique_keys(groups: &mut [Group]) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for g in groups.iter() {
        *seen.entry(g.key.clone()).or_default() += 1;
    }
    let mut next: HashMap<String, usize> = HashMap::new();
    for g in groups.iter_mut() {
        if seen[&g.key] > 1 {
            let n = next.entry(g.key.clone()).or_default();
            *n += 1;
            g.key = format!("{}/{n}", g.key);
        }
    }
}

/// The first departure from the majority sequence.
fn first_mismatch(members: &[Seq]) -> Option<Mismatch> {
    let n = members.len();
    let longest = members.iter().map(|s| s.ops.len()).max().unwrap_or(0);
    for pos in 0..longest {
        let mut votes: Vec<(CollOp, usize)> = Vec::new();
        let mut having = 0;
        for s in members {
            if let Some(&op) = s.ops.get(pos) {
                having += 1;
                match votes.iter_mut().find(|(o, _)| *o == op) {
                    Some(v) => v.1 += 1,
                    None => votes.push((op, 1)),
                }
            }
        }
        // Ties go to the type seen first (lowest device).
        let majority = votes
            .iter()
            .fold(None::<(CollOp, usize)>, |best, &(op, c)| match best {
                Some((_, bc)) if bc >= c => best,
                _ => Some((op, c)),
            });
        let expected = if 2 * having > n {
            majority.map(|m| m.0)
        } else {
            None
        };
        if let Some(s) = members.iter().find(|s| s.ops.get(pos).copied() != expected) {
            return Some(Mismatch {
                position: pos + 1,
                device: s.device,
                expected,
                found: s.ops.get(pos).copied(),
            });
        }
    }
    None
}

/// Builds the group(s) of one cluster: one, or several when ends show the
/// cluster is really several communicators.
fn build_groups(
    p: &Profile,
    members: Vec<Seq>,
    keys: &OpKeys,
    key: String,
    clock: &Alignment,
) -> Vec<Group> {
    let group = build_group(p, key, &members, keys, clock);
    // Across refined clocks, ends align within a tighter threshold than
    // `end_aligned`'s 1 ms, so such a group is still examined.
    if (group.end_aligned && group.clocks.is_none()) || members.len() < 4 {
        return vec![group];
    }
    let subsets = end_aligned_subsets(p, &group, &members, clock);
    if subsets.len() < 2 || subsets.iter().any(|s| s.len() < 2) {
        return vec![group];
    }
    // Subsets come in order of their first device.
    subsets
        .into_iter()
        .enumerate()
        .map(|(i, subset)| {
            let sub: Vec<Seq> = subset.iter().map(|&d| members[d].clone()).collect();
            let key = format!("{}/{}", group.key, i + 1);
            let mut g = build_group(p, key, &sub, keys, clock);
            g.note = Some(format!(
                "split off {}: ends align within these devices but not across the whole stream id (likely a separate communicator)",
                group.key
            ));
            g
        })
        .collect()
}

fn build_group(
    p: &Profile,
    key: String,
    members: &[Seq],
    keys: &OpKeys,
    clock: &Alignment,
) -> Group {
    let mismatch = first_mismatch(members);
    let prefix = match &mismatch {
        Some(m) => m.position - 1,
        None => members[0].ops.len(),
    };
    let all_rows: Vec<&[u32]> = members.iter().map(|s| s.rows.as_slice()).collect();
    let (method, instances) = match keys.instances(&all_rows) {
        Some((method, inst)) => (method, inst),
        None => (
            MatchMethod::Sequence,
            (0..prefix)
                .map(|k| members.iter().map(|s| s.rows[k]).collect::<Vec<u32>>())
                .collect(),
        ),
    };
    // Each row's span on the reference clock, found once.
    let mut instances: Vec<(Vec<u32>, Vec<Span>)> = instances
        .into_iter()
        .map(|rows| {
            let spans = rows
                .iter()
                .map(|&r| clock.gpu_span(p, r as usize))
                .collect();
            (rows, spans)
        })
        .collect();
    let earliest = |spans: &[(i64, i64)]| spans.iter().map(|s| s.0).min().unwrap_or(0);
    instances.sort_by_key(|(_, spans)| earliest(spans));
    // The type of an instance is that of its first member's kernel.
    let op_of_row: HashMap<u32, CollOp> = members[0]
        .rows
        .iter()
        .copied()
        .zip(members[0].ops.iter().copied())
        .collect();
    let ops: Vec<CollOp> = instances
        .iter()
        .map(|(rows, _)| op_of_row.get(&rows[0]).copied().unwrap_or(CollOp::Other))
        .collect();
    let end_skews = instances.iter().map(|(_, spans)| {
        let ends = spans.iter().map(|s| s.1);
        ends.clone()
            .max()
            .unwrap_or(0)
            .saturating_sub(ends.min().unwrap_or(0)) as f64
    });
    let end_aligned = Spread::of(end_skews).is_some_and(|s| s.p90 < END_ALIGNED_NS as f64);
    let (rows, aligned): (Vec<Vec<u32>>, Vec<Vec<Span>>) = instances.into_iter().unzip();
    let rows: Vec<u32> = rows.into_iter().flatten().collect();
    let aligned = aligned.into_iter().flatten().collect();
    Group {
        key,
        method,
        devices: members.iter().map(|s| s.device).collect(),
        lanes: members.iter().map(|s| s.lane).collect(),
        sequence_consistent: mismatch.is_none(),
        mismatch,
        end_aligned,
        clocks: group_clocks(p, clock, rows.get(..members.len()).unwrap_or(&[])),
        rows,
        aligned,
        ops,
        note: None,
    }
}

/// Devices (as indices into the group) that end together: joined when their
/// ends are within [`END_ALIGNED_NS`] in at least 90 % of the instances
/// (across clock domains refined from ends: within max(3 × the files'
/// residual p90, 0.2 ms)). Devices on clocks the ends could not refine are
/// never split apart by ends.
fn end_aligned_subsets(
    p: &Profile,
    g: &Group,
    members: &[Seq],
    clock: &Alignment,
) -> Vec<Vec<usize>> {
    let n = g.devices.len();
    let k = g.instances();
    if k == 0 {
        return vec![(0..n).collect()];
    }
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(parent: &mut [usize], x: usize) -> usize {
        let mut r = x;
        while parent[r] != r {
            r = parent[r];
        }
        parent[x] = r;
        r
    }
    for a in 0..n {
        for b in a + 1..n {
            let (fa, fb) = (p.lane_file(members[a].lane), p.lane_file(members[b].lane));
            let threshold = if clock.domain(fa) == clock.domain(fb) {
                END_ALIGNED_NS
            } else {
                cross_domain_threshold_ns(clock, fa, fb)
            };
            let together = (0..k)
                .filter(|&i| {
                    let t = g.instance_times(i);
                    t[a].1.abs_diff(t[b].1) < threshold.unsigned_abs()
                })
                .count();
            if !clock.ends_trusted(fa, fb) || 10 * together >= 9 * k {
                let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
                parent[ra.max(rb)] = ra.min(rb);
            }
        }
    }
    let mut sets: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for d in 0..n {
        let r = find(&mut parent, d);
        sets.entry(r).or_default().push(d);
    }
    sets.into_values().collect()
}

fn group_clocks(p: &Profile, clock: &Alignment, rows: &[u32]) -> Option<GroupClocks> {
    if !clock.spans_domains(p, rows) {
        return None;
    }
    let files: Vec<usize> = rows
        .iter()
        .map(|&r| clock.row_file(p, r as usize))
        .collect();
    let mut domains: Vec<usize> = files.iter().map(|&f| clock.domain(f)).collect();
    domains.sort_unstable();
    domains.dedup();
    let rank = |m: ClockMethod| match m {
        ClockMethod::None => 0,
        ClockMethod::Utc => 1,
        _ => 2,
    };
    let method = files
        .iter()
        .map(|&f| clock.file_method(f))
        .map(|m| match m {
            ClockMethod::Reference | ClockMethod::SameHost => ClockMethod::CollectiveEnds,
            m => m,
        })
        .min_by_key(|&m| rank(m))
        .unwrap_or(ClockMethod::None);
    Some(GroupClocks {
        domains: domains.len(),
        method,
        uncertainty_ns: clock.uncertainty_ns(p, rows),
    })
}

/// Ends of ranks on two refined clocks agree within this: max(3 × the
/// larger residual p90, 0.2 ms).
fn cross_domain_threshold_ns(clock: &Alignment, a: usize, b: usize) -> i64 {
    let p90 = |f: usize| clock.residual_ms(f).map_or(0.0, |s| s.p90);
    ((3.0 * p90(a).max(p90(b)) * 1e6) as i64).max(200_000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use CollOp::*;

    fn seq(device: DevId, stream: u32, ops: &[CollOp]) -> Seq {
        Seq {
            device,
            lane: device,
            stream,
            rows: (0..ops.len() as u32).collect(),
            ops: ops.to_vec(),
        }
    }

    #[test]
    fn mismatch_reports_extra_collective() {
        let a = seq(0, 20, &[AllGather, ReduceScatter, AllGather]);
        let b = seq(1, 20, &[AllGather, AllReduce, ReduceScatter, AllGather]);
        let c = seq(2, 20, &[AllGather, ReduceScatter, AllGather]);
        let m = first_mismatch(&[a, b, c]).unwrap();
        assert_eq!(
            m,
            Mismatch {
                position: 2,
                device: 1,
                expected: Some(ReduceScatter),
                found: Some(AllReduce)
            }
        );
    }

    #[test]
    fn mismatch_reports_missing_tail() {
        let a = seq(0, 20, &[AllGather, AllGather]);
        let b = seq(1, 20, &[AllGather]);
        let c = seq(2, 20, &[AllGather, AllGather]);
        let m = first_mismatch(&[a, b, c]).unwrap();
        assert_eq!(
            m,
            Mismatch {
                position: 2,
                device: 1,
                expected: Some(AllGather),
                found: None
            }
        );
        let same = [seq(0, 1, &[AllGather]), seq(1, 1, &[AllGather])];
        assert_eq!(first_mismatch(&same), None);
    }

    #[test]
    fn keys_are_short_and_host_free() {
        let same = [seq(0, 29, &[AllReduce]), seq(1, 29, &[AllReduce])];
        assert_eq!(group_key(&same), "s29");
        let differ = [
            seq(0, 7, &[SendRecv]),
            seq(1, 15, &[SendRecv]),
            seq(2, 7, &[SendRecv]),
        ];
        assert_eq!(group_key(&differ), "s7+s15");
    }

    #[test]
    fn streams_pair_by_id_then_by_prefix() {
        let order: HashMap<DevId, usize> = (0..4).map(|d| (d, d as usize)).collect();
        let seqs = vec![
            seq(0, 7, &[SendRecv, SendRecv, SendRecv]),
            seq(1, 15, &[SendRecv, SendRecv, SendRecv]),
            seq(0, 20, &[AllReduce, AllReduce]),
            seq(1, 20, &[AllReduce, AllReduce]),
            seq(2, 30, &[Broadcast]),
        ];
        let (clusters, unpaired) = cluster_streams(seqs, &order);
        assert_eq!(clusters.len(), 2);
        let streams: Vec<Vec<(DevId, u32)>> = clusters
            .iter()
            .map(|c| c.iter().map(|s| (s.device, s.stream)).collect())
            .collect();
        assert!(streams.contains(&vec![(0, 20), (1, 20)]));
        assert!(streams.contains(&vec![(0, 7), (1, 15)]));
        assert_eq!(unpaired, vec![2]);
    }
}
