//! Matching the same collective across ranks (a rank here is a device).
//!
//! Rungs, tried in order per group of streams:
//! 1. an operation id shared by all ranks (`NCCL_GPU_OPERATIONS`, nsys ≥
//!    2025.6 with NCCL ≥ 2.28) — UNVERIFIED: no real export here has it;
//! 2. NCCL NVTX ranges carrying a communicator id: each communicator's
//!    kernels are a group, placed in sequence as in rung 3 ([`by_comm`]) —
//!    UNVERIFIED: no real export here has the payload;
//! 3. sequence matching: the k-th NCCL kernel of each device's stream is one
//!    instance. Streams are grouped by stream id when the ids agree across
//!    ranks, otherwise paired by the longest common prefix of their
//!    collective-type sequences.
//!
//! Nothing is assumed: ranks whose captures start or stop at different
//! collectives are placed along the group's sequence ([`placement`] has
//! the rule for a confirmed placement), an instance some ranks lack is
//! paired over the ranks that have it, the first difference no placement
//! explains is a desync (only the instances before it are paired), and
//! aligned ends confirm the pairing. A stream id shared by two
//! communicators shows as ends that are aligned within device subsets but
//! not across them; those subsets become groups of their own.

mod across;
mod atoms;
mod by_comm;
mod by_ends;
mod forest;
mod join;
mod one_clock;
mod partners;
mod placement;
mod unit;

use super::clock::{Alignment, ClockMethod};
use super::completeness::device_order;
use super::kernel_class::KernelClasses;
use super::nccl_name::CollOp;
pub use super::nccl_streams::{Seq, nccl_sequences};
pub use super::op_keys::MatchMethod;
use super::op_keys::OpKeys;
use super::stats::Spread;
use crate::profile::{DevId, LaneId, Profile};
use forest::root;
pub use partners::Exchange;
pub use placement::Basis;
use placement::{Span, Track};
use std::collections::{BTreeMap, HashMap};
use unit::Unit;

/// The first instance no placement explains: the ranks ran different
/// operations there (or some ran none). Only the instances before it are
/// paired.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Desync {
    /// 1-based, along the group's sequence.
    pub instance: usize,
    /// Each operation run there and the group's devices (indices) that ran
    /// it, the most common first (devices whose capture does not reach it
    /// are in none).
    pub ops: Vec<(CollOp, Vec<usize>)>,
}

/// Where one device's capture starts and ends in its group's sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Captured {
    /// 1-based instance numbers; `last < first` when none of its kernels
    /// is paired.
    pub first: usize,
    pub last: usize,
    /// How its place was found (whether it is confirmed).
    pub basis: Basis,
}

/// A device's slot in an instance it has no kernel in.
const ABSENT: u32 = u32::MAX;

/// Ends further apart than this (p90) mean the pairing is not confirmed.
pub const END_ALIGNED_NS: i64 = 1_000_000;

/// A set of streams, one per device, whose collectives were matched.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Group {
    pub key: String,
    pub method: MatchMethod,
    /// In device order.
    pub devices: Vec<DevId>,
    /// The stream of each device (parallel to `devices`).
    pub lanes: Vec<LaneId>,
    /// Where each device's capture starts and ends in the sequence
    /// (parallel to `devices`).
    pub captured: Vec<Captured>,
    pub desync: Option<Desync>,
    pub end_aligned: bool,
    /// Instance-major GPU rows: instance k, device d at `k * devices.len() + d`
    /// ([`ABSENT`] where the device has no kernel). Instances are in
    /// sequence order; instance k is number k + 1 for every device.
    rows: Vec<u32>,
    /// Start and end of each row of `rows` on the reference clock (the
    /// alignment the group was matched with).
    aligned: Vec<(i64, i64)>,
    pub ops: Vec<CollOp>,
    /// Why this group exists apart (e.g. split off by end alignment).
    pub note: Option<String>,
    /// Devices (indices into `devices`) with kernels that no NCCL call
    /// named while the others' did (rung 2): placed by their order on the
    /// stream and checked against ends.
    #[serde(default)]
    pub without_calls: Vec<WithoutCalls>,
    /// How its members were found to be one communicator.
    pub found_by: FoundBy,
    /// Four or more members that never parted and never all waited for
    /// one late member: the data cannot tell one communicator from
    /// several in lockstep.
    #[serde(default)]
    pub lockstep_ambiguous: bool,
    /// NCCL's size of the communicator (of the one an exchange is part
    /// of), from its init payload, when captured.
    #[serde(default)]
    pub comm_size: Option<u32>,
    /// How its devices' clocks were aligned, when they are on several.
    pub clocks: Option<GroupClocks>,
}

/// Where N of a group's bandwidth figures comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RanksFrom {
    /// NCCL's communicator-init payload ("No. of ranks").
    NcclInit,
    /// The members matched in the capture (fewer when ranks lack a file).
    Members,
}

impl RanksFrom {
    /// Said as [`super::bandwidth_n::source`] words it.
    pub const ALL: [RanksFrom; 2] = [RanksFrom::NcclInit, RanksFrom::Members];
}

/// How a group's members were found to be one communicator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FoundBy {
    /// NCCL's NVTX payloads name the communicator.
    Payload,
    /// Their kernels always end together, on one clock.
    Ends,
    /// Their stream ids or op sequences agree (across clocks, or where
    /// the ends show nothing).
    Sequence,
}

impl FoundBy {
    pub const ALL: [FoundBy; 3] = [FoundBy::Payload, FoundBy::Ends, FoundBy::Sequence];

    pub fn name(self) -> &'static str {
        match self {
            FoundBy::Payload => "payload",
            FoundBy::Ends => "ends",
            FoundBy::Sequence => "sequence",
        }
    }
}

/// One device's kernels in a rung-2 group that no NCCL call named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WithoutCalls {
    /// Index into the group's `devices`.
    pub device: usize,
    /// Kernels placed by their order on the stream.
    pub placed: usize,
    /// Kernels left out of every instance: their end did not fit the
    /// instance their order put them in.
    pub left_out: usize,
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
    /// The clock error (ns) between its devices' clocks: a time difference
    /// between them below it is not resolvable; 0 on one clock.
    pub fn clock_error_ns(&self) -> i64 {
        self.clocks.as_ref().map_or(0, |c| c.uncertainty_ns)
    }

    /// Whether this group's ids and rows can be those of `p` (a stored
    /// group is checked before use): every device, stream and GPU row
    /// exists, and each instance has one slot and time per device.
    pub fn fits(&self, p: &Profile) -> bool {
        let n = self.devices.len();
        n == self.lanes.len()
            && n == self.captured.len()
            && n.checked_mul(self.ops.len()) == Some(self.rows.len())
            && self.aligned.len() == self.rows.len()
            && self.devices.iter().all(|&d| (d as usize) < p.devices.len())
            && self.lanes.iter().all(|&l| (l as usize) < p.lanes.len())
            && self
                .rows
                .iter()
                .all(|&r| r == ABSENT || (r as usize) < p.gpu.len())
    }

    pub fn instances(&self) -> usize {
        self.ops.len()
    }

    /// Whether the sequences agree everywhere they overlap.
    pub fn sequence_consistent(&self) -> bool {
        self.desync.is_none()
    }

    /// Device `d`'s (index into `devices`) GPU row in instance `k` (0-based).
    pub fn row(&self, k: usize, d: usize) -> Option<usize> {
        let n = self.devices.len();
        let r = *self.rows.get(k * n + d)?;
        (r != ABSENT).then_some(r as usize)
    }

    /// Device `d`'s kernel in instance `k` on the reference clock.
    pub fn span(&self, k: usize, d: usize) -> Option<(i64, i64)> {
        self.row(k, d)
            .map(|_| self.aligned[k * self.devices.len() + d])
    }

    /// The devices (indices) with a kernel in instance `k`, with its row
    /// and span on the reference clock, in device order.
    pub fn members(&self, k: usize) -> impl Iterator<Item = (usize, usize, (i64, i64))> + '_ {
        let n = self.devices.len();
        let (rows, spans) = (
            &self.rows[k * n..(k + 1) * n],
            &self.aligned[k * n..(k + 1) * n],
        );
        rows.iter()
            .zip(spans)
            .enumerate()
            .filter(|(_, (r, _))| **r != ABSENT)
            .map(|(d, (&r, &s))| (d, r as usize, s))
    }

    /// N of the bandwidth figures: NCCL's size of the communicator when
    /// its init payload was captured, else the members found; and which.
    pub fn bandwidth_ranks(&self) -> (usize, RanksFrom) {
        match self.comm_size {
            Some(n) if self.found_by == FoundBy::Payload => (n as usize, RanksFrom::NcclInit),
            _ => (self.devices.len(), RanksFrom::Members),
        }
    }

    /// How many devices have a kernel in instance `k`.
    pub fn present(&self, k: usize) -> usize {
        self.members(k).count()
    }

    /// Whether every device has a kernel in instance `k`.
    pub fn complete(&self, k: usize) -> bool {
        self.present(k) == self.devices.len()
    }

    /// The devices (indices) with no kernel in instance `k`.
    pub fn missing(&self, k: usize) -> Vec<usize> {
        (0..self.devices.len())
            .filter(|&d| self.row(k, d).is_none())
            .collect()
    }
}

/// All groups of a profile.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Matching {
    pub groups: Vec<Group>,
    /// Streams with NCCL kernels that pair with no other device.
    pub unpaired: Vec<LaneId>,
    /// Per stream, its NCCL kernels that are in no instance (of an
    /// unpaired stream, past a desync, left out as their ends did not
    /// fit, on a stream of several communicators nothing placed): every
    /// kernel is either in an instance or counted here.
    #[serde(default)]
    pub unmatched: Vec<(LaneId, u32)>,
    /// (GPU row, group, 0-based instance), sorted by row; rebuilt, not
    /// stored ([`Matching::index_rows`]). A sorted list, not a hash map:
    /// built in a fraction of the time (1.4 M rows at 10 M kernels, on
    /// every reopen) and smaller; looked up only when the user moves.
    #[serde(skip)]
    by_row: Vec<(u32, u32, u32)>,
    /// The streams of each communicator its ends showed within one clock
    /// domain, before any was joined across domains: what a matching on
    /// clocks aligned since takes as whole ([`Matching::one_clock_units`]).
    /// Not stored: a matching read back is never matched again.
    #[serde(skip)]
    found_by_ends: Vec<Vec<LaneId>>,
    /// The exchanges partners in part showed across clocks (a middle
    /// pipeline stage's with each neighbour): what a matching on clocks
    /// aligned since takes as given. Not stored, as `found_by_ends`.
    #[serde(skip)]
    exchanges: Vec<Exchange>,
    /// The kernel pairs (GPU rows) partners in part met at: one exchange
    /// of two hosts each, ends within µs, whatever siblings the groups
    /// of exchanges hold beside them. Not stored, as `found_by_ends`.
    #[serde(skip)]
    partner_pairs: Vec<[u32; 2]>,
}

/// What a matching found on each host's own clock, for a matching on the
/// clocks aligned since ([`Matching::evidence`]).
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    /// The streams of each communicator its ends showed on one clock.
    pub units: Vec<Vec<LaneId>>,
    /// Kernels of two hosts that partners in part exchanged.
    pub exchanges: Vec<Exchange>,
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
                for (_, r, _) in group.members(k) {
                    by_row.push((r as u32, g as u32, k as u32));
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

    /// What it found on each clock before any was joined across clocks:
    /// the streams of each communicator (what a matching on clocks aligned
    /// since may take as whole) and the exchanges of partners in part
    /// (taken as given).
    pub fn evidence(&self) -> Evidence {
        Evidence {
            units: self.found_by_ends.clone(),
            exchanges: self.exchanges.clone(),
        }
    }

    /// Each instance's GPU rows, then each kernel pair partners in part
    /// met at: what the clock fits read.
    pub fn rows_per_instance(&self) -> super::clock::MatchedRows {
        super::clock::MatchedRows(
            self.groups
                .iter()
                .flat_map(|g| {
                    (0..g.instances())
                        .map(move |k| g.members(k).map(|(_, r, _)| r as u32).collect())
                })
                .chain(self.partner_pairs.iter().map(|p| p.to_vec()))
                .collect(),
        )
    }

    /// The group with this key.
    pub fn group(&self, key: &str) -> Option<usize> {
        self.groups.iter().position(|g| g.key == key)
    }
}

/// Matches every NCCL collective of the profile across devices.
/// Times across files are compared on `clock`. `given` is what a matching
/// found on each clock before these clocks were aligned (see
/// [`Matching::evidence`]), nothing on a first pass.
pub fn match_collectives(
    p: &Profile,
    classes: &KernelClasses,
    clock: &Alignment,
    given: &Evidence,
) -> Matching {
    let order: HashMap<DevId, usize> = device_order(p)
        .into_iter()
        .enumerate()
        .map(|(i, d)| (d, i))
        .collect();
    let keys = OpKeys::read(p, classes);
    let named = by_comm::split(p, nccl_sequences(p, classes), &keys);
    let rest = without_exchanged(named.rest, &given.exchanges);
    let ends = by_ends::split(p, clock, rest, &given.units);
    let mut unpaired: Vec<LaneId> = named
        .unplaced
        .iter()
        .chain(&ends.unplaced)
        .map(|&(lane, _)| lane)
        .collect();
    let domain = |s: &Seq| clock.ends_domain(p.lane_file(s.lane));
    let found_by_ends: Vec<Vec<LaneId>> = ends
        .found
        .iter()
        .map(|f| f.seqs.iter().map(|s| s.lane).collect::<Vec<LaneId>>())
        .filter(|lanes| lanes.len() >= 2)
        .collect();
    let mut units: Vec<Unit> = ends
        .found
        .into_iter()
        .map(|f| Unit {
            domain: f.seqs.first().map_or(0, domain),
            seqs: f.seqs,
            by_ends: true,
            lockstep_ambiguous: f.lockstep_ambiguous,
        })
        .collect();
    units.extend(ends.rest.into_iter().map(|s| {
        let d = domain(&s);
        Unit::single(s, d)
    }));
    let series = across::series(p, clock, &units);
    let mut links = across::links(&units, &series);
    let window = across::UTC_ERROR_NS as i64;
    links.extend(partners::partial_links(&units, &series, &links, window));
    let agree = across::agreeing(&links);
    let comps = join::Components::of(&units, &links, &agree);
    let mut exchanges = given.exchanges.clone();
    exchanges.extend(partners::exchanges(
        p, clock, &units, &links, &agree, &comps,
    ));
    let partner_pairs = partners::met_pairs(&units, &links, &agree);
    let (joined, alone) = join::join(units, &order, &links, &agree, &comps);
    unpaired.extend(alone);
    // (members, how found, lockstep ambiguous, NCCL's communicator size).
    let mut clusters: Vec<(Vec<Seq>, FoundBy, bool, Option<u32>)> = Vec::new();
    for (comm, size) in named.comms.into_iter().zip(named.sizes) {
        if comm.len() < 2 {
            unpaired.extend(comm.iter().map(|s| s.lane));
        } else {
            clusters.push((comm, FoundBy::Payload, false, size));
        }
    }
    for x in exchanges.iter().filter(|x| x.seqs.len() >= 2) {
        clusters.push((x.seqs.clone(), FoundBy::Ends, x.lockstep_ambiguous, None));
    }
    for (c, by_partners) in joined {
        let found = match c.as_slice() {
            _ if by_partners => FoundBy::Ends,
            [one] if one.by_ends => FoundBy::Ends,
            _ => FoundBy::Sequence,
        };
        let ambiguous = c.iter().any(|u| u.lockstep_ambiguous);
        let members = c.into_iter().flat_map(|u| u.seqs).collect();
        clusters.push((members, found, ambiguous, None));
    }
    // Communicators per stream-id key, to say when one stream carries several.
    let mut per_key: HashMap<String, usize> = HashMap::new();
    for (c, found, _, _) in &clusters {
        if *found != FoundBy::Sequence {
            *per_key.entry(group_key(c)).or_default() += 1;
        }
    }
    let mut groups = Vec::new();
    for (cluster, found, ambiguous, size) in clusters {
        for (mut members, refused) in split_by_clock(p, clock, cluster) {
            if members.len() < 2 {
                unpaired.extend(members.iter().map(|s| s.lane));
                continue;
            }
            members.sort_by_key(|s| order[&s.device]);
            let key = group_key(&members);
            let shared = per_key.get(&key).copied().unwrap_or(0);
            let mut built = build_groups(p, members, &keys, key.clone(), clock, found);
            for g in &mut built {
                g.lockstep_ambiguous = ambiguous;
                g.comm_size = size;
                if shared > 1 {
                    g.note = Some(match found {
                        FoundBy::Payload => format!(
                            "one of {shared} communicators on {key}, told apart by NCCL's NVTX payloads (unverified)"
                        ),
                        _ => format!(
                            "one of {shared} communicators on {key}, told apart by their ends (its members' kernels always end together, the others' part from them)"
                        ),
                    });
                }
                if let Some(why) = &refused {
                    g.note = Some(why.clone());
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
    unpaired.sort_unstable();
    unpaired.dedup();
    let mut m = Matching {
        groups,
        unpaired,
        unmatched: Vec::new(),
        by_row: Default::default(),
        found_by_ends,
        exchanges,
        partner_pairs,
    };
    m.index_rows();
    m.unmatched = p
        .lanes
        .iter()
        .enumerate()
        .filter_map(|(l, lane)| {
            let n = lane
                .rows
                .clone()
                .filter(|&r| classes.comm(p, r).is_some() && m.instance_of(r).is_none())
                .count();
            (n > 0).then_some((l as LaneId, n as u32))
        })
        .collect();
    m
}

/// The sequences with the kernels of `exchanges` taken out (those that
/// keep any).
fn without_exchanged(seqs: Vec<Seq>, exchanges: &[Exchange]) -> Vec<Seq> {
    let taken: std::collections::HashSet<u32> = exchanges
        .iter()
        .flat_map(|x| x.seqs.iter().flat_map(|s| s.rows.iter().copied()))
        .collect();
    if taken.is_empty() {
        return seqs;
    }
    seqs.into_iter()
        .filter_map(|mut s| {
            let (rows, ops): (Vec<u32>, Vec<CollOp>) = s
                .rows
                .iter()
                .zip(&s.ops)
                .filter(|(r, _)| !taken.contains(r))
                .map(|(&r, &o)| (r, o))
                .unzip();
            s.keyless.retain(|r| !taken.contains(r));
            (s.rows, s.ops) = (rows, ops);
            (!s.rows.is_empty()).then_some(s)
        })
        .collect()
}

/// A file whose clock data cannot be right ([`Alignment::isolated`]) is
/// left out of cross-file figures: its streams form groups of their own
/// (one per clock domain), with the reason as their note.
fn split_by_clock(
    p: &Profile,
    clock: &Alignment,
    members: Vec<Seq>,
) -> Vec<(Vec<Seq>, Option<String>)> {
    let file = |s: &Seq| p.processes[p.lanes[s.lane as usize].process as usize].file as usize;
    if !members.iter().any(|s| clock.isolated(file(s))) {
        return vec![(members, None)];
    }
    let mut parts: BTreeMap<Option<usize>, Vec<Seq>> = BTreeMap::new();
    for s in members {
        let f = file(&s);
        let key = clock.isolated(f).then(|| clock.domain(f));
        parts.entry(key).or_default().push(s);
    }
    parts
        .into_iter()
        .map(|(key, part)| {
            let note = key.map(|_| {
                "its own group: this file's clock data cannot be right (report clock says why)"
                    .to_string()
            });
            (part, note)
        })
        .collect()
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

/// Builds the group(s) of one cluster: one, or several when ends show the
/// cluster is really several communicators.
fn build_groups(
    p: &Profile,
    members: Vec<Seq>,
    keys: &OpKeys,
    key: String,
    clock: &Alignment,
    found: FoundBy,
) -> Vec<Group> {
    let group = build_group(p, key, &members, keys, clock, found);
    // Across refined clocks, ends align within a tighter threshold than
    // `end_aligned`'s 1 ms, so such a group is still examined. A
    // communicator NCCL's payloads name, or its ends found, is one.
    if found != FoundBy::Sequence
        || (group.end_aligned && group.clocks.is_none())
        || members.len() < 4
    {
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
            let mut g = build_group(p, key, &sub, keys, clock, FoundBy::Sequence);
            g.note = Some(format!(
                "split off {}: these devices' ends meet in 90 % or more of the instances and the others' do not (a call's members end together), so they are a communicator of their own",
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
    found: FoundBy,
) -> Group {
    // Each kernel's span on the reference clock, found once.
    let spans: Vec<Vec<Span>> = members
        .iter()
        .map(|s| {
            s.rows
                .iter()
                .map(|&r| clock.gpu_span(p, r as usize))
                .collect()
        })
        .collect();
    let all_rows: Vec<&[u32]> = members.iter().map(|s| s.rows.as_slice()).collect();
    let (method, mut slots, mut captured, desync) = match keys.instances(&all_rows) {
        Some((method, inst)) => {
            let (slots, captured, desync) = keyed(inst, &spans, members);
            (method, slots, captured, desync)
        }
        None => {
            let (slots, captured, desync) = by_sequence(p, members, &spans, clock);
            let method = if found == FoundBy::Payload {
                MatchMethod::Nvtx
            } else {
                MatchMethod::Sequence
            };
            (method, slots, captured, desync)
        }
    };
    let n = members.len();
    let without_calls = check_keyless(p, members, &mut slots, clock);
    // The type of an instance is that of its first member's kernel.
    let op_of_row: HashMap<u32, CollOp> = members
        .iter()
        .flat_map(|s| s.rows.iter().copied().zip(s.ops.iter().copied()))
        .collect();
    let ops: Vec<CollOp> = slots
        .chunks(n.max(1))
        .map(|rows| {
            rows.iter()
                .find(|&&r| r != ABSENT)
                .and_then(|r| op_of_row.get(r).copied())
                .unwrap_or(CollOp::Other)
        })
        .collect();
    let aligned: Vec<Span> = slots
        .iter()
        .map(|&r| {
            if r == ABSENT {
                (0, 0)
            } else {
                clock.gpu_span(p, r as usize)
            }
        })
        .collect();
    let end_skews = (0..ops.len()).filter_map(|k| {
        let ends: Vec<i64> = (0..n)
            .filter(|&d| slots[k * n + d] != ABSENT)
            .map(|d| aligned[k * n + d].1)
            .collect();
        (ends.len() >= 2).then(|| {
            let (lo, hi) = (ends.iter().min().unwrap(), ends.iter().max().unwrap());
            hi.saturating_sub(*lo) as f64
        })
    });
    let end_aligned = Spread::of(end_skews).is_some_and(|s| s.p90 < END_ALIGNED_NS as f64);
    // A communicator its ends found is paired by them: a member whose
    // every instance ends with the others' is placed, however few
    // instances it has or however regular the schedule.
    if found == FoundBy::Ends {
        for (d, c) in captured.iter_mut().enumerate() {
            let meets = (0..ops.len()).all(|k| {
                let Some(mine) = (slots[k * n + d] != ABSENT).then(|| aligned[k * n + d].1) else {
                    return true;
                };
                (0..n)
                    .filter(|&e| e != d && slots[k * n + e] != ABSENT)
                    .all(|e| aligned[k * n + e].1.abs_diff(mine) < END_ALIGNED_NS as u64)
            });
            if meets && matches!(c.basis, Basis::Short | Basis::Guess) {
                c.basis = Basis::Ends;
            }
        }
    }
    // One row per device, the first complete instance if there is one: the
    // rows whose files say how the group's clocks were aligned.
    let clock_rows: Vec<u32> = members
        .iter()
        .enumerate()
        .filter_map(|(d, s)| {
            (0..ops.len())
                .map(|k| slots[k * n + d])
                .find(|&r| r != ABSENT)
                .or_else(|| s.rows.first().copied())
        })
        .collect();
    Group {
        key,
        method,
        devices: members.iter().map(|s| s.device).collect(),
        lanes: members.iter().map(|s| s.lane).collect(),
        captured,
        desync,
        end_aligned,
        clocks: group_clocks(p, clock, &clock_rows),
        rows: slots,
        aligned,
        ops,
        note: None,
        without_calls,
        found_by: found,
        lockstep_ambiguous: false,
        comm_size: None,
    }
}

/// Takes out of `slots` every kernel placed without a call whose end does
/// not fit its instance's kernels with calls (on the reference clock,
/// within 4× their usual end spread plus the clock error), and says per
/// device how many were placed and taken out.
fn check_keyless(
    p: &Profile,
    members: &[Seq],
    slots: &mut [u32],
    clock: &Alignment,
) -> Vec<WithoutCalls> {
    if members.iter().all(|s| s.keyless.is_empty()) {
        return Vec::new();
    }
    let n = members.len();
    let keyless = |d: usize, r: u32| members[d].keyless.binary_search(&r).is_ok();
    let end = |r: u32| clock.gpu_span(p, r as usize).1;
    // Ends of the kernels with calls, per instance.
    let keyed_ends: Vec<Vec<i64>> = slots
        .chunks(n)
        .map(|rows| {
            rows.iter()
                .enumerate()
                .filter(|&(d, &r)| r != ABSENT && !keyless(d, r))
                .map(|(_, &r)| end(r))
                .collect()
        })
        .collect();
    let mut spreads: Vec<f64> = keyed_ends
        .iter()
        .filter(|e| e.len() >= 2)
        .map(|e| (e.iter().max().unwrap() - e.iter().min().unwrap()) as f64)
        .collect();
    let usual =
        super::stats::Spread::of(spreads.drain(..)).map_or(END_ALIGNED_NS as f64, |s| s.p50);
    let rows: Vec<u32> = members
        .iter()
        .filter_map(|s| s.rows.first().copied())
        .collect();
    let tolerance = (4.0 * usual).max(20_000.0) as i64 + clock.uncertainty_ns(p, &rows);
    let mut out: Vec<WithoutCalls> = Vec::new();
    for (d, s) in members.iter().enumerate() {
        if s.keyless.is_empty() {
            continue;
        }
        let mut w = WithoutCalls {
            device: d,
            placed: 0,
            left_out: 0,
        };
        for (k, ends) in keyed_ends.iter().enumerate() {
            let r = slots[k * n + d];
            if r == ABSENT || !keyless(d, r) {
                continue;
            }
            if by_comm::ends_fit(end(r), &mut ends.clone(), tolerance) {
                w.placed += 1;
            } else {
                slots[k * n + d] = ABSENT;
                w.left_out += 1;
            }
        }
        // Kernels past a desync are in no instance: left out too.
        w.left_out += s.keyless.len() - w.placed - w.left_out;
        out.push(w);
    }
    out
}

/// Instances named by a key (rungs 1 and 2), in order of earliest start:
/// the slots, and each device's first and last instance.
fn keyed(
    inst: Vec<Vec<Option<u32>>>,
    spans: &[Vec<Span>],
    members: &[Seq],
) -> (Vec<u32>, Vec<Captured>, Option<Desync>) {
    let start_of: HashMap<u32, i64> = members
        .iter()
        .zip(spans)
        .flat_map(|(s, sp)| s.rows.iter().copied().zip(sp.iter().map(|x| x.0)))
        .collect();
    let earliest = |rows: &[Option<u32>]| {
        rows.iter()
            .flatten()
            .filter_map(|r| start_of.get(r))
            .min()
            .copied()
            .unwrap_or(0)
    };
    let mut inst = inst;
    inst.sort_by_key(|rows| earliest(rows));
    // A key naming kernels of different ops cannot be one collective: the
    // first such instance is a desync, and only those before it are paired.
    let op_of: HashMap<u32, CollOp> = members
        .iter()
        .flat_map(|s| s.rows.iter().copied().zip(s.ops.iter().copied()))
        .collect();
    let mut desync = None;
    for (k, rows) in inst.iter().enumerate() {
        let mut ops: Vec<(CollOp, Vec<usize>)> = Vec::new();
        for (d, r) in rows.iter().enumerate() {
            let Some(&op) = r.and_then(|r| op_of.get(&r)) else {
                continue;
            };
            match ops.iter_mut().find(|(o, _)| *o == op) {
                Some((_, devs)) => devs.push(d),
                None => ops.push((op, vec![d])),
            }
        }
        if ops.len() > 1 {
            ops.sort_by_key(|(_, devs)| std::cmp::Reverse(devs.len()));
            desync = Some(Desync {
                instance: k + 1,
                ops,
            });
            inst.truncate(k);
            break;
        }
    }
    let n = members.len();
    let mut captured = vec![
        Captured {
            first: 1,
            last: 0,
            basis: Basis::Key,
        };
        n
    ];
    for (k, rows) in inst.iter().enumerate() {
        for (d, r) in rows.iter().enumerate() {
            if r.is_some() {
                let c = &mut captured[d];
                if c.last < c.first {
                    c.first = k + 1;
                }
                c.last = k + 1;
            }
        }
    }
    let slots = inst
        .into_iter()
        .flat_map(|rows| rows.into_iter().map(|r| r.unwrap_or(ABSENT)))
        .collect();
    (slots, captured, desync)
}

/// Instances by sequence: each device placed along the group's sequence.
fn by_sequence(
    p: &Profile,
    members: &[Seq],
    spans: &[Vec<Span>],
    clock: &Alignment,
) -> (Vec<u32>, Vec<Captured>, Option<Desync>) {
    let tracks: Vec<Track> = members
        .iter()
        .zip(spans)
        .map(|(s, sp)| Track {
            ops: &s.ops,
            spans: sp,
            domain: s
                .rows
                .first()
                .map_or(0, |&r| clock.ends_domain(clock.row_file(p, r as usize))),
        })
        .collect();
    let placed = placement::place(&tracks);
    let n = members.len();
    let mut slots = vec![ABSENT; placed.length * n];
    let mut captured = Vec::with_capacity(n);
    for (d, s) in members.iter().enumerate() {
        let off = placed.offsets[d];
        let until = (off + s.rows.len()).min(placed.length);
        for pos in off..until {
            slots[pos * n + d] = s.rows[pos - off];
        }
        captured.push(Captured {
            first: off + 1,
            last: until,
            basis: placed.basis[d],
        });
    }
    let desync = placed.desync.map(|pos| {
        let mut ops: Vec<(CollOp, Vec<usize>)> = Vec::new();
        for (d, s) in members.iter().enumerate() {
            let op = pos
                .checked_sub(placed.offsets[d])
                .and_then(|i| s.ops.get(i).copied());
            // A device whose capture does not reach the desync lacks it; it
            // does not disagree.
            let Some(op) = op else {
                continue;
            };
            match ops.iter_mut().find(|(o, _)| *o == op) {
                Some((_, devs)) => devs.push(d),
                None => ops.push((op, vec![d])),
            }
        }
        // The most common first; ties in order of their first device.
        ops.sort_by_key(|(_, devs)| std::cmp::Reverse(devs.len()));
        Desync {
            instance: pos + 1,
            ops,
        }
    });
    (slots, captured, desync)
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
                    match (g.span(i, a), g.span(i, b)) {
                        (Some(x), Some(y)) => x.1.abs_diff(y.1) < threshold.unsigned_abs(),
                        // Not both there: no evidence against.
                        _ => true,
                    }
                })
                .count();
            if !clock.ends_trusted(fa, fb) || 10 * together >= 9 * k {
                let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
                parent[ra.max(rb)] = ra.min(rb);
            }
        }
    }
    let mut sets: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for d in 0..n {
        let r = root(&mut parent, d);
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

    use crate::analysis::nccl_streams::test_seq as seq;

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
}
