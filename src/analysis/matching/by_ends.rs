//! Communicators from their ends, within one clock: which streams' kernels
//! are one collective call (or one point-to-point exchange), whatever
//! their stream ids.
//!
//! Per op, the kernels of a clock domain are clustered by their ends (the
//! members of one call end together); the sets of streams that clusters
//! show over the whole capture decide the communicators ([`atoms`]); each
//! cluster is then split among them, and a stream's kernels no cluster
//! places follow the stream's communicator. What comes out per
//! communicator is each device's kernels of it in order, placed in
//! sequence like any group. Stream ids play no part: a communicator may
//! use different ids on different ranks, share one with others or with
//! compute. A domain of one device (a per-rank file on its own clock)
//! shows nothing here: its streams are matched across clocks as before.

use super::atoms::{self, Seen};
use super::one_clock;
use crate::analysis::clock::Alignment;
use crate::analysis::nccl_name::CollOp;
use crate::analysis::nccl_streams::{Gathered, Seq};
use crate::profile::{DevId, LaneId, Profile};
use std::collections::{BTreeMap, HashMap};

/// One communicator found from ends: each device's kernels of it.
#[derive(Debug)]
pub struct Found {
    pub seqs: Vec<Seq>,
    /// It has 4 or more members and no cluster of it ever shows them
    /// waiting for one late member: it may be several communicators in
    /// lockstep that never parted.
    pub lockstep_ambiguous: bool,
}

/// What the ends of a capture show.
#[derive(Debug, Default)]
pub struct Split {
    pub found: Vec<Found>,
    /// Streams whose kernels never end with another device's (their
    /// partners are on other clocks, or nowhere): matched as before.
    pub rest: Vec<Seq>,
    /// Kernels on streams of several communicators that nothing places.
    pub unplaced: Vec<(LaneId, u32)>,
}

/// One NCCL kernel as the clustering sees it (reference clock).
#[derive(Debug, Clone, Copy)]
struct K {
    start: i64,
    end: i64,
    track: u32,
    /// Index into its track's kernels.
    at: u32,
    unfinished: bool,
}

/// Splits the streams of each clock domain with two or more devices by
/// the communicators their ends show.
/// `units` are communicators found before on one clock each (stream
/// sets), evidence where several clocks are one domain now
/// ([`one_clock`]).
pub fn split(p: &Profile, clock: &Alignment, seqs: Vec<Seq>, units: &[Vec<LaneId>]) -> Split {
    let mut by_domain: BTreeMap<usize, Vec<Seq>> = BTreeMap::new();
    for s in seqs {
        by_domain
            .entry(clock.ends_domain(p.lane_file(s.lane)))
            .or_default()
            .push(s);
    }
    let mut out = Split::default();
    for (_, tracks) in by_domain {
        let mut devices: Vec<DevId> = tracks.iter().map(|s| s.device).collect();
        devices.sort_unstable();
        devices.dedup();
        if devices.len() < 2 {
            out.rest.extend(tracks);
            continue;
        }
        domain(p, clock, tracks, units, &mut out);
    }
    out
}

/// A cluster: its kernels (indices into its op's kernel list).
type Cluster = Vec<usize>;

/// One op's kernels of a domain (by end), their clusters, and the
/// communicators the clusters show.
struct OpClusters {
    kernels: Vec<K>,
    clusters: Vec<Cluster>,
    comms: Vec<Vec<u32>>,
}

fn domain(
    p: &Profile,
    clock: &Alignment,
    tracks: Vec<Seq>,
    units: &[Vec<LaneId>],
    out: &mut Split,
) {
    let units = unit_tracks(&tracks, units);
    let told_apart = one_host_pairs(p, &tracks, &units);
    let files: Vec<usize> = tracks.iter().map(|s| p.lane_file(s.lane)).collect();
    let too_far = one_clock::too_far_ns(clock, &files);
    let of_track = one_clock::units_of_track(&units, tracks.len());
    let window = nccl_window(p, clock, &tracks, common_window(p, clock, &files));
    let mut by_op: BTreeMap<CollOp, Vec<K>> = BTreeMap::new();
    for (t, s) in tracks.iter().enumerate() {
        for (i, (&row, &op)) in s.rows.iter().zip(&s.ops).enumerate() {
            let (start, end) = clock.gpu_span(p, row as usize);
            by_op.entry(op).or_default().push(K {
                start,
                end,
                track: t as u32,
                at: i as u32,
                unfinished: p.gpu.is_unfinished(row as usize),
            });
        }
    }
    // Each track's kernels end in order: a stable sort merges those runs.
    for ks in by_op.values_mut() {
        ks.sort_by_key(|k| (k.end, k.track));
    }
    let tolerance = end_tolerance(&by_op, &tracks);

    // Per op: its kernels, their clusters and the sets the clean ones show.
    let mut ops: Vec<(Vec<K>, Vec<Cluster>, Vec<Seen>)> = Vec::new();
    for ks in by_op.into_values() {
        let clusters = clusters(&ks, &tracks, tolerance);
        let mut seen: HashMap<Vec<u32>, (usize, bool)> = HashMap::new();
        for c in &clusters {
            if !clean(&ks, c, window) {
                continue;
            }
            let set = track_set(&ks, c);
            let e = seen.entry(set).or_default();
            e.0 += 1;
            e.1 |= coupled(&ks, c, tolerance);
        }
        let mut seen: Vec<Seen> = seen
            .into_iter()
            .map(|(tracks, (count, coupled))| Seen {
                tracks,
                count,
                coupled,
            })
            .collect();
        // The same capture gives the same communicators in the same order.
        seen.sort_by(|a, b| a.tracks.cmp(&b.tracks));
        ops.push((ks, clusters, seen));
    }
    let op_seen: Vec<Vec<Seen>> = ops.iter().map(|(_, _, seen)| seen.clone()).collect();
    let in_step = in_step(
        &ops.iter()
            .map(|(ks, _, _)| ks.as_slice())
            .collect::<Vec<_>>(),
    );
    let mut per_op: Vec<OpClusters> = Vec::new();
    for (o, (ks, clusters, mut seen)) in ops.into_iter().enumerate() {
        let elsewhere: Vec<&[u32]> = op_seen
            .iter()
            .enumerate()
            .filter(|&(other, _)| other != o && in_step[o][other])
            .flat_map(|(_, seen)| seen.iter().map(|s| s.tracks.as_slice()))
            .collect();
        let mut apart = told_apart.clone();
        let with_units = if units.is_empty() {
            &[][..]
        } else {
            &clusters[..]
        };
        for c in with_units.iter().filter(|c| clean(&ks, c, window)) {
            let ends: Vec<(u32, i64)> = c.iter().map(|&k| (ks[k].track, ks[k].end)).collect();
            one_clock::far_in(&ends, &units, &of_track, too_far, &mut apart);
        }
        // On aligned clocks the same stage of two pipelines in lockstep
        // ends within µs: a set that cuts a communicator found on its own
        // host's clock is such a meeting unless its members were seen
        // waiting for one late starter.
        seen.retain(|s| s.coupled || !cuts_a_unit(&s.tracks, &units, &of_track));
        one_clock::add_units(&mut seen, &units, &apart);
        let comms = atoms::communicators_given(&seen, &elsewhere);
        per_op.push(OpClusters {
            kernels: ks,
            clusters,
            comms,
        });
    }
    // The communicators of every op, one each by track set.
    let mut comms: Vec<Vec<u32>> = Vec::new();
    for o in &per_op {
        for set in &o.comms {
            if !comms.contains(set) {
                comms.push(set.clone());
            }
        }
    }
    // Each kernel's communicator (index into `comms`), per track.
    let mut label: Vec<Vec<Option<usize>>> =
        tracks.iter().map(|s| vec![None; s.rows.len()]).collect();
    // Whether any full cluster of a communicator shows coupling.
    let mut witnessed = vec![false; comms.len()];
    for o in &per_op {
        let ks = &o.kernels;
        for c in &o.clusters {
            for (comm, kernels) in assign(ks, c, &comms, &o.comms) {
                if kernels.len() == comms[comm].len() && coupled(ks, &kernels, tolerance) {
                    witnessed[comm] = true;
                }
                for k in kernels {
                    label[ks[k].track as usize][ks[k].at as usize] = Some(comm);
                }
            }
        }
    }
    // Kernels no cluster placed follow their stream.
    for l in label.iter_mut() {
        follow_stream(l);
    }
    gather(p, tracks, &comms, &label, &witnessed, out);
}

/// Which ops run in step (`[a][b]`): as many kernels of each on every
/// stream that has either — the calls of one communicator's fixed
/// pattern (a layer's all-gather and reduce-scatter), where a grad-norm
/// all-reduce sharing the compute stream with them has its own count.
/// Only ops in step are read against each other's sets.
fn in_step(ops: &[&[K]]) -> Vec<Vec<bool>> {
    let counts: Vec<BTreeMap<u32, usize>> = ops
        .iter()
        .map(|ks| {
            let mut n: BTreeMap<u32, usize> = BTreeMap::new();
            for k in ks.iter() {
                *n.entry(k.track).or_default() += 1;
            }
            n
        })
        .collect();
    (0..ops.len())
        .map(|a| (0..ops.len()).map(|b| counts[a] == counts[b]).collect())
        .collect()
}

/// Whether `set` (sorted tracks) holds part of one of `units`, not all.
/// On one host's clock a unit's streams ended together at every call the
/// ends could place and parted from the rest; only a call that couples
/// its members across hosts can say part of it belongs elsewhere.
/// `of_track`: each track's units.
fn cuts_a_unit(set: &[u32], units: &[Vec<u32>], of_track: &[Vec<usize>]) -> bool {
    let mut inside: HashMap<usize, usize> = HashMap::new();
    for &t in set {
        for &u in of_track.get(t as usize).map_or(&[][..], Vec::as_slice) {
            *inside.entry(u).or_default() += 1;
        }
    }
    inside.iter().any(|(&u, &n)| n < units[u].len())
}

/// Pairs of `units` (indices, the smaller first) found on one host's
/// clock: that clock told them apart (they would be one unit otherwise),
/// however closely they end on the aligned clocks of many hosts — where
/// two lockstep groups of one host, each never seen without the other
/// there, were joined with other hosts' into one "communicator" of 28
/// devices whose ends spread by 21 ms.
fn one_host_pairs(
    p: &Profile,
    tracks: &[Seq],
    units: &[Vec<u32>],
) -> std::collections::BTreeSet<(usize, usize)> {
    let host = |u: &Vec<u32>| {
        u.first()
            .and_then(|&t| p.devices.get(tracks[t as usize].device as usize))
            .map(|d| d.host)
    };
    let hosts: Vec<Option<u32>> = units.iter().map(host).collect();
    let mut pairs = std::collections::BTreeSet::new();
    for a in 0..units.len() {
        for b in a + 1..units.len() {
            if hosts[a].is_some() && hosts[a] == hosts[b] {
                pairs.insert((a, b));
            }
        }
    }
    pairs
}

/// `units` as sets of the domain's tracks: those whose every stream is
/// one of its tracks.
fn unit_tracks(tracks: &[Seq], units: &[Vec<LaneId>]) -> Vec<Vec<u32>> {
    let mut of_lane: HashMap<LaneId, Vec<u32>> = HashMap::new();
    for (t, s) in tracks.iter().enumerate() {
        of_lane.entry(s.lane).or_default().push(t as u32);
    }
    units
        .iter()
        .filter_map(|u| {
            let mut set: Vec<u32> = Vec::new();
            for lane in u {
                set.extend(of_lane.get(lane)?);
            }
            set.sort_unstable();
            set.dedup();
            Some(set)
        })
        .collect()
}

/// The window every file of the domain was capturing (reference clock):
/// a cluster outside it may lack a member only because that member's
/// capture had not started or had ended.
fn common_window(p: &Profile, clock: &Alignment, files: &[usize]) -> (i64, i64) {
    let mut w = (i64::MIN, i64::MAX);
    let mut seen: Vec<usize> = files.to_vec();
    seen.sort_unstable();
    seen.dedup();
    for f in seen {
        if let Some((a, b)) = clock.capture_window(p, f) {
            w = (w.0.max(a), w.1.min(b));
        }
    }
    w
}

/// `window` narrowed to where every device that runs NCCL over most of it
/// was being captured: a rank whose first collectives were not captured
/// (it started late) cannot show, by its absence there, that it is not
/// their member. A device's capture is read from its GPU activity of every
/// kind, not its NCCL alone: a rank whose first collective was launched
/// late (a CPU stall) ran compute before it, and its absence from the
/// calls its siblings ran meanwhile is what parts them. A device with a
/// few collectives only leaves the window alone.
fn nccl_window(p: &Profile, clock: &Alignment, tracks: &[Seq], window: (i64, i64)) -> (i64, i64) {
    let devices: std::collections::BTreeSet<DevId> = tracks
        .iter()
        .filter(|s| !s.rows.is_empty())
        .map(|s| s.device)
        .collect();
    let spans = gpu_activity(p, clock, &devices);
    let (lo, hi) = (
        spans
            .values()
            .map(|s| s.0)
            .min()
            .unwrap_or(window.0)
            .max(window.0),
        spans
            .values()
            .map(|s| s.1)
            .max()
            .unwrap_or(window.1)
            .min(window.1),
    );
    let long = |(a, b): (i64, i64)| 2 * (b.min(hi) - a.max(lo)) >= hi - lo;
    spans
        .into_values()
        .filter(|&s| long(s))
        .fold(window, |w, (a, b)| (w.0.max(a), w.1.min(b)))
}

/// The first start and last end of each of `devices`' GPU rows of every
/// kind (reference clock), in one pass over the lanes. A lane's rows are
/// sorted by start; its last end is taken from its last row, near enough
/// for a capture's bounds.
fn gpu_activity(
    p: &Profile,
    clock: &Alignment,
    devices: &std::collections::BTreeSet<DevId>,
) -> BTreeMap<DevId, (i64, i64)> {
    let mut spans: BTreeMap<DevId, (i64, i64)> = BTreeMap::new();
    for l in p.lanes.iter().filter(|l| devices.contains(&l.device)) {
        if l.rows.is_empty() {
            continue;
        }
        let (a, b) = (
            clock.gpu_span(p, l.rows.start).0,
            clock.gpu_end(p, l.rows.end - 1),
        );
        let e = spans.entry(l.device).or_insert((a, b));
        *e = (e.0.min(a), e.1.max(b));
    }
    spans
}

/// The largest gap between the ends of one call's kernels: eight times the
/// 90th percentile of the distance from a kernel's end to the nearest end
/// of the same op on another device (for most kernels that is a partner's,
/// a few µs to tens of µs apart on one node), within [20 µs, 500 µs]. Two
/// calls of one stream closer than that are still told apart: a cluster
/// holds one kernel per device. `by_op`'s kernels are sorted by end.
fn end_tolerance(by_op: &BTreeMap<CollOp, Vec<K>>, tracks: &[Seq]) -> i64 {
    const FLOOR: i64 = 20_000;
    const CEIL: i64 = 500_000;
    let mut nearest: Vec<i64> = Vec::new();
    for ks in by_op.values() {
        let ends: Vec<(i64, DevId)> = ks
            .iter()
            .map(|k| (k.end, tracks[k.track as usize].device))
            .collect();
        let before = nearest_other(ends.iter().copied());
        let after = nearest_other(ends.iter().rev().copied());
        for (i, &(e, _)) in ends.iter().enumerate() {
            let gaps = [
                before[i].map(|t| e - t),
                after[ends.len() - 1 - i].map(|t| t - e),
            ];
            if let Some(n) = gaps.into_iter().flatten().min()
                && n < 1_000_000
            {
                nearest.push(n);
            }
        }
    }
    if nearest.is_empty() {
        return 50_000;
    }
    let at = (nearest.len() * 9).div_ceil(10).clamp(1, nearest.len()) - 1;
    let (_, p90, _) = nearest.select_nth_unstable(at);
    (8 * *p90).clamp(FLOOR, CEIL)
}

/// For each (end, device) in turn, the end of the last one before it on
/// another device: the last one seen, or if that is on the same device,
/// the last one seen on a device other than the last one's (linear, where
/// a search back would be quadratic on a long run of one device).
fn nearest_other(ends: impl Iterator<Item = (i64, DevId)>) -> Vec<Option<i64>> {
    let mut last: Option<(i64, DevId)> = None;
    let mut other: Option<i64> = None;
    ends.map(|(e, d)| {
        let found = match last {
            Some((t, ld)) if ld != d => Some(t),
            _ => other,
        };
        if let Some((t, ld)) = last
            && ld != d
        {
            other = Some(t);
        }
        last = Some((e, d));
        found
    })
    .collect()
}

/// Kernels (sorted by end) clustered by their ends: a gap above
/// `tolerance` starts a new cluster; a cluster wider than a few
/// tolerances, or holding one stream twice, is cut at its widest gap.
fn clusters(ks: &[K], tracks: &[Seq], tolerance: i64) -> Vec<Cluster> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=ks.len() {
        if i == ks.len() || ks[i].end - ks[i - 1].end > tolerance {
            cut(ks, tracks, start..i, tolerance, &mut out);
            start = i;
        }
    }
    out
}

fn cut(
    ks: &[K],
    tracks: &[Seq],
    r: std::ops::Range<usize>,
    tolerance: i64,
    out: &mut Vec<Cluster>,
) {
    let wide = ks[r.end - 1].end - ks[r.start].end > 4 * tolerance;
    let mut devs: Vec<DevId> = ks[r.clone()]
        .iter()
        .map(|k| tracks[k.track as usize].device)
        .collect();
    devs.sort_unstable();
    let twice = devs.windows(2).any(|w| w[0] == w[1]);
    if r.len() >= 2 && (wide || twice) {
        // At the widest gap.
        let at = (r.start + 1..r.end)
            .max_by_key(|&i| (ks[i].end - ks[i - 1].end, std::cmp::Reverse(i)))
            .expect("two kernels");
        cut(ks, tracks, r.start..at, tolerance, out);
        cut(ks, tracks, at..r.end, tolerance, out);
        return;
    }
    out.push(r.collect());
}

/// A cluster whose set of streams means something: two or more devices,
/// every kernel finished, inside the window all were capturing.
fn clean(ks: &[K], c: &Cluster, window: (i64, i64)) -> bool {
    c.len() >= 2
        && c.iter().all(|&k| {
            let k = ks[k];
            !k.unfinished && k.start >= window.0 && k.end <= window.1
        })
}

fn track_set(ks: &[K], c: &[usize]) -> Vec<u32> {
    let mut set: Vec<u32> = c.iter().map(|&k| ks[k].track).collect();
    set.sort_unstable();
    set.dedup();
    set
}

/// Whether the kernels `c` (ending together) all waited for one late
/// starter: the latest start alone, the next one far earlier. Siblings
/// coinciding cannot show this: each has its own latest starter, and
/// their ends coincide only when those start together.
fn coupled(ks: &[K], c: &[usize], tolerance: i64) -> bool {
    if c.len() < 2 {
        return false;
    }
    let mut starts: Vec<i64> = c.iter().map(|&k| ks[k].start).collect();
    starts.sort_unstable();
    let n = starts.len();
    starts[n - 1] - starts[n - 2] > (4 * tolerance).max(100_000)
}

/// Splits cluster `c` among the communicators so that they cover as many
/// of its kernels as they can, each taking its members' kernels (one per
/// stream, two or more), the ones of its op preferred: lockstep siblings
/// and calls that happen to end together are told apart by the sets the
/// whole capture showed. Returns (communicator, its kernels).
fn assign(
    ks: &[K],
    c: &[usize],
    comms: &[Vec<u32>],
    op_comms: &[Vec<u32>],
) -> Vec<(usize, Vec<usize>)> {
    let tracks = track_set(ks, c);
    // (communicator, its kernels here, its streams here, of this op).
    let mut options: Vec<(usize, Vec<usize>, Vec<u32>, bool)> = Vec::new();
    for (i, set) in comms.iter().enumerate() {
        let mine: Vec<usize> = c
            .iter()
            .copied()
            .filter(|&k| set.binary_search(&ks[k].track).is_ok())
            .collect();
        let ts: Vec<u32> = mine.iter().map(|&k| ks[k].track).collect();
        let mut sorted = ts.clone();
        sorted.sort_unstable();
        sorted.dedup();
        if mine.len() >= 2 && sorted.len() == mine.len() {
            options.push((i, mine, sorted, op_comms.contains(set)));
        }
    }
    // Most kernels here, of its op, smallest first: the first path the
    // search takes is the greedy choice.
    options.sort_by_key(|(i, mine, _, own)| {
        (
            std::cmp::Reverse(*own),
            std::cmp::Reverse(mine.len()),
            comms[*i].len(),
            *i,
        )
    });
    let mut best: (usize, usize, Vec<usize>) = (0, 0, Vec::new());
    let mut chosen = Vec::new();
    let mut budget = ASSIGN_BUDGET;
    cover(
        &options,
        &tracks,
        0,
        &mut chosen,
        (0, 0),
        &mut best,
        &mut budget,
    );
    best.2
        .into_iter()
        .map(|o| (options[o].0, options[o].1.clone()))
        .collect()
}

/// Search steps one cluster's split may take; past it, the best found.
const ASSIGN_BUDGET: usize = 4_000;

/// The disjoint choice among `options` covering the most kernels (then the
/// most of the cluster's op): from stream `at` of `tracks` on, each stream
/// covered by an option holding it, or left.
fn cover(
    options: &[(usize, Vec<usize>, Vec<u32>, bool)],
    tracks: &[u32],
    at: usize,
    chosen: &mut Vec<usize>,
    score: (usize, usize),
    best: &mut (usize, usize, Vec<usize>),
    budget: &mut usize,
) {
    if (score.0, score.1) > (best.0, best.1) {
        *best = (score.0, score.1, chosen.clone());
    }
    let Some(&t) = tracks.get(at) else {
        return;
    };
    // Each stream left holds one kernel of the cluster at most: a branch
    // that cannot beat the best found is not searched (at hundreds of
    // ranks a cluster one communicator covers whole ends here at once).
    let left = tracks.len() - at;
    if (score.0 + left, score.1 + left) <= (best.0, best.1) {
        return;
    }
    if *budget == 0 {
        return;
    }
    *budget -= 1;
    let taken = |chosen: &[usize], t: u32| {
        chosen
            .iter()
            .any(|&o| options[o].2.binary_search(&t).is_ok())
    };
    if taken(chosen, t) {
        cover(options, tracks, at + 1, chosen, score, best, budget);
        return;
    }
    for (o, (_, mine, ts, own)) in options.iter().enumerate() {
        if ts.binary_search(&t).is_err() || ts.iter().any(|&u| taken(chosen, u)) {
            continue;
        }
        chosen.push(o);
        let next = (score.0 + mine.len(), score.1 + usize::from(*own));
        cover(options, tracks, at + 1, chosen, next, best, budget);
        chosen.pop();
    }
    // Or leave this stream's kernel to its stream's communicator.
    cover(options, tracks, at + 1, chosen, score, best, budget);
}

/// A stream's kernels that no cluster placed take its communicator: the
/// only one on the stream, else the one of both their nearest placed
/// neighbours.
fn follow_stream(label: &mut [Option<usize>]) {
    let mut on_stream: Vec<usize> = label.iter().flatten().copied().collect();
    on_stream.sort_unstable();
    on_stream.dedup();
    match on_stream.as_slice() {
        [] => {}
        [only] => label.iter_mut().for_each(|l| *l = Some(*only)),
        _ => {
            let before: Vec<Option<usize>> = label
                .iter()
                .scan(None, |last, l| {
                    *last = l.or(*last);
                    Some(*last)
                })
                .collect();
            let mut after = vec![None; label.len()];
            let mut next = None;
            for i in (0..label.len()).rev() {
                next = label[i].or(next);
                after[i] = next;
            }
            for i in 0..label.len() {
                if label[i].is_none() && before[i].is_some() && before[i] == after[i] {
                    label[i] = before[i];
                }
            }
        }
    }
}

/// The communicators' kernels per device, as sequences; streams with no
/// communicator go to `rest`, kernels left without one to `unplaced`.
fn gather(
    p: &Profile,
    tracks: Vec<Seq>,
    comms: &[Vec<u32>],
    label: &[Vec<Option<usize>>],
    witnessed: &[bool],
    out: &mut Split,
) {
    // (comm, device) → its kernels.
    let mut by: BTreeMap<(usize, DevId), Vec<Gathered>> = BTreeMap::new();
    for (t, s) in tracks.into_iter().enumerate() {
        if label[t].iter().all(Option::is_none) {
            out.rest.push(s);
            continue;
        }
        for (i, (&row, &op)) in s.rows.iter().zip(&s.ops).enumerate() {
            match label[t][i] {
                Some(c) => by
                    .entry((c, s.device))
                    .or_default()
                    .push((row, op, s.lane, s.stream, false)),
                None => out.unplaced.push((s.lane, row)),
            }
        }
    }
    let mut per_comm: BTreeMap<usize, Vec<Seq>> = BTreeMap::new();
    for ((c, device), kernels) in by {
        per_comm
            .entry(c)
            .or_default()
            .push(Seq::gathered(p, device, kernels));
    }
    for (c, seqs) in per_comm {
        if seqs.len() < 2 {
            out.rest.extend(seqs);
            continue;
        }
        out.found.push(Found {
            lockstep_ambiguous: comms[c].len() >= 4 && !witnessed[c],
            seqs,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_no_cluster_placed_follow_their_stream() {
        let mut one = [None, Some(3), None];
        follow_stream(&mut one);
        assert_eq!(one, [Some(3); 3]);
        let mut two = [Some(1), None, Some(1), Some(2), None, Some(1)];
        follow_stream(&mut two);
        assert_eq!(two, [Some(1), Some(1), Some(1), Some(2), None, Some(1)]);
    }

    #[test]
    fn ops_with_as_many_kernels_on_every_stream_run_in_step() {
        let k = |track: u32| K {
            start: 0,
            end: 0,
            track,
            at: 0,
            unfinished: false,
        };
        let all_gathers = [k(0), k(1), k(0), k(1)];
        let reduce_scatters = [k(1), k(0), k(0), k(1)];
        let grad_norm = [k(0), k(1)];
        let step = in_step(&[&all_gathers, &reduce_scatters, &grad_norm]);
        assert!(step[0][1] && step[1][0]);
        assert!(!step[0][2] && !step[2][1]);
    }

    /// Host 0's streams 0-1 and 2-3 were two units on its clock, host
    /// 1's stream 4 one more. A set of one unit and another host's is no
    /// cut; one holding stream 2 without 3 is.
    #[test]
    fn a_set_holding_part_of_a_unit_cuts_it() {
        let units = vec![vec![0, 1], vec![2, 3], vec![4]];
        let of_track = one_clock::units_of_track(&units, 5);
        assert!(!cuts_a_unit(&[0, 1, 4], &units, &of_track));
        assert!(!cuts_a_unit(&[0, 1, 2, 3], &units, &of_track));
        assert!(cuts_a_unit(&[0, 1, 2], &units, &of_track));
        assert!(cuts_a_unit(&[3, 4], &units, &of_track));
    }

    /// The linear pass finds what a search back finds, on runs of one
    /// device as long as the whole list.
    #[test]
    fn nearest_other_device_equals_a_search_back() {
        let cases: [&[(i64, u32)]; 4] = [
            &[],
            &[(1, 0), (2, 0), (3, 0)],
            &[
                (1, 0),
                (2, 1),
                (3, 1),
                (4, 1),
                (5, 0),
                (9, 2),
                (9, 2),
                (10, 0),
            ],
            &[(5, 3), (5, 3), (6, 1), (7, 3), (8, 1), (8, 1), (9, 2)],
        ];
        for ends in cases {
            let search: Vec<Option<i64>> = (0..ends.len())
                .map(|i| {
                    let d = ends[i].1;
                    ends[..i].iter().rev().find(|x| x.1 != d).map(|x| x.0)
                })
                .collect();
            assert_eq!(nearest_other(ends.iter().copied()), search, "{ends:?}");
        }
    }
}
