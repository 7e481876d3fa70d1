//! Partners in part: a unit whose kernels are exchanged with units on
//! several other hosts. A middle pipeline stage's p2p stream alternates
//! between the stage before it and the stage after, so no one alignment
//! of its whole sequence meets either neighbour's ([`super::across`]
//! finds none), and joining such streams by stream id pairs exchanges
//! that never happened — false evidence for the clocks fitted from them.
//!
//! What the ends still show: each kernel of the unit ends with exactly
//! one kernel of one neighbour, at that host's clock offset (plus drift
//! and µs of jitter). So a partner in part is a set of kernel pairs, in
//! order, whose end differences fit one line tightly; each pair belongs
//! to the strongest partner claiming it; and nine in ten kernels of the
//! unit over the span its partners cover belong to one of them — a sibling whose ends
//! met by chance leaves the rest unexplained (partners never part).

use super::across::{Link, Pairing, Series, agreeing_parts, kinds, partners};
use super::forest::root;
use super::join::Components;
use super::unit::Unit;
use crate::analysis::clock::{Alignment, robust_line};
use crate::analysis::nccl_name::CollOp;
use crate::analysis::nccl_streams::Seq;
use crate::profile::Profile;
use std::collections::{BTreeMap, HashMap};

/// Kernels of a unit that propose offsets (evenly spread).
const PROBES: usize = 256;
/// The offsets proposed most, within this width (ns): drift over a
/// capture and the ends' jitter.
const CLUSTER_NS: i64 = 300_000;
/// Fewest probes that must propose one offset.
const MIN_VOTES: usize = 3;
/// Fewest kernel pairs a partner in part shares.
const MIN_PAIRS: usize = 5;
/// Pairs' end differences may spread this much (MAD, ns) and none stray
/// further than [`TAIL_NS`] from the line (as for whole partners).
const MAD_NS: f64 = 50_000.0;
const TAIL_NS: f64 = 250_000.0;
/// A pair is the partner's when within this many of its MADs of the
/// line, or within [`TIGHT_FLOOR_NS`].
const TIGHT_MADS: f64 = 4.0;
const TIGHT_FLOOR_NS: f64 = 10_000.0;
/// Share of a unit's kernels over its partners' span that its partners
/// must explain.
const MIN_COVER: f64 = 0.9;
/// Ends compared per fit (evenly spaced).
const FIT_SAMPLES: usize = 512;
/// Drift is fitted over at least this span (ns): over less, the drift
/// of two clocks moves their ends less than their jitter.
const DRIFT_SPAN_NS: f64 = 1e9;

/// Every partner in part between units of different domains that no
/// whole link (`whole`, of [`super::across::links`]) already ties: kernel
/// pairs whose ends fit one line, each pair the strongest partner's, and
/// each unit's kernels over its partners' span explained by them. `window` is
/// how far the clocks may put two hosts apart (ns).
pub fn partial_links(units: &[Unit], all: &[Series], whole: &[Link], window: i64) -> Vec<Link> {
    let tied: std::collections::HashSet<(usize, usize)> = whole
        .iter()
        .filter(|l| partners(l))
        .map(|l| (l.a, l.b))
        .collect();
    let kinds = kinds(all);
    let mut found = Vec::new();
    for a in 0..units.len() {
        for b in a + 1..units.len() {
            if units[a].domain == units[b].domain
                || tied.contains(&(a, b))
                || units[a]
                    .seqs
                    .iter()
                    .any(|x| units[b].seqs.iter().any(|y| y.device == x.device))
                || !kinds[a].iter().any(|o| kinds[b].contains(o))
            {
                continue;
            }
            if let Some(mut l) = in_part(&all[a], &all[b], window) {
                (l.a, l.b) = (a, b);
                l.domains = (units[a].domain, units[b].domain);
                found.push(l);
            }
        }
    }
    let found = without_shadows(found, units);
    siblings_share(augment(settle(found.clone(), all), all), &found, units, all)
}

/// A partner in part this many times looser (MAD) than another of the
/// same unit over three in four of the same kernels, each as wide as the
/// unit, is its shadow.
const SHADOW_MADS: f64 = 3.0;

/// The partners in part with their shadows dropped. A point-to-point
/// kernel exchanges with one device per device, so two units each as
/// wide as a unit cannot both hold the same kernels of it: each would
/// pair all its devices. Yet a replica in lockstep (the same stage of
/// another data-parallel pipeline, or a sibling TP group of the true
/// partner's host) meets most of them too: the true partner's ends
/// differ by the kernels' jitter, the replica's by that and how far the
/// replicas part. Of two such partners, the one far looser is the
/// replica. Counted by pairs first, the replica won whenever it met one
/// kernel more, and two host pairs' exchanges were paired crosswise.
/// (A wider unit's line reads one of its lockstep members against a
/// part of it, and is looser for that: units narrower than the one they
/// meet are not compared.)
fn without_shadows(found: Vec<Link>, units: &[Unit]) -> Vec<Link> {
    let width: Vec<usize> = units.iter().map(|u| u.distinct_devices().len()).collect();
    // Each link's kernels of its `a` and of its `b`, found once: every
    // pair of links is compared.
    let kernels: Vec<[std::collections::HashSet<u32>; 2]> = found
        .iter()
        .map(|l| match &l.pairing {
            Pairing::Part(pairs) => [
                pairs.iter().map(|p| p.0).collect(),
                pairs.iter().map(|p| p.1).collect(),
            ],
            _ => Default::default(),
        })
        .collect();
    let side = |x: usize, u: usize| &kernels[x][usize::from(found[x].a != u)];
    let shadow = |x: usize, y: usize| -> bool {
        let (lx, ly) = (&found[x], &found[y]);
        [lx.a, lx.b].into_iter().any(|u| {
            let other = |l: &Link| if l.a == u { l.b } else { l.a };
            if (ly.a != u && ly.b != u)
                || other(lx) == other(ly)
                || width[other(lx)].min(width[other(ly)]) < width[u]
                || ly.mad_ns * SHADOW_MADS >= lx.mad_ns
            {
                return false;
            }
            let (mine, theirs) = (side(x, u), side(y, u));
            4 * mine.intersection(theirs).count() >= 3 * mine.len()
        })
    };
    let dropped: Vec<bool> = (0..found.len())
        .map(|x| (0..found.len()).any(|y| shadow(x, y)))
        .collect();
    found
        .into_iter()
        .zip(dropped)
        .filter_map(|(l, d)| (!d).then_some(l))
        .collect()
}

/// The kernels two partners in part exchanged: each member's of both
/// units, one instance per pair.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub seqs: Vec<Seq>,
    /// More members than one exchange has (two, for point-to-point),
    /// or a side that never parted on its own clock: several exchanges
    /// in lockstep the ends cannot tell apart.
    pub lockstep_ambiguous: bool,
}

/// A member's kernel ends further than this from its unit's reference
/// kernel's (on one clock) is not that kernel's fellow (ns).
const FELLOW_NS: i64 = 1_000_000;

/// The exchanges of agreeing partners in part (`links` and `agree` as
/// [`super::join::join`] takes them), one per pair of components: units
/// whole partners joined (siblings in lockstep the ends cannot tell
/// apart) exchange as one, each member at its own instance numbering.
pub fn exchanges(
    p: &Profile,
    clock: &Alignment,
    units: &[Unit],
    links: &[Link],
    agree: &[bool],
    comps: &Components,
) -> Vec<Exchange> {
    let between = exchanged_instances(units, links, agree, comps);
    between
        .into_iter()
        .map(|instances| {
            let mut seqs = Vec::new();
            let mut ambiguous = false;
            for (r, at_r) in instances {
                let mut at: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
                for i in at_r {
                    for (u, k) in comps.members_at(r, i) {
                        if (0..units[u].reference().rows.len() as i64).contains(&k) {
                            at.entry(u).or_default().push(k as u32);
                        }
                    }
                }
                for (u, mut ks) in at {
                    ks.sort_unstable();
                    ks.dedup();
                    ambiguous |= units[u].lockstep_ambiguous;
                    seqs.extend(side(p, clock, &units[u], ks.into_iter()));
                }
            }
            let p2p = seqs
                .iter()
                .all(|s| s.ops.iter().all(|&o| o == CollOp::SendRecv));
            Exchange {
                lockstep_ambiguous: ambiguous || (p2p && seqs.len() > 2),
                seqs,
            }
        })
        .collect()
}

/// Per exchange, each component in it with its instances there: the
/// instances two components exchanged, and where components sharing a
/// host exchange with most of one component's instances (units of one
/// host sharing a unit's kernels, [`siblings_share`]; a host's groups
/// parted there and joined with other hosts' elsewhere) those exchanges
/// as one — which of the unit's devices exchanged with which, the ends
/// cannot tell, and two exchanges would each claim its kernels.
fn exchanged_instances(
    units: &[Unit],
    links: &[Link],
    agree: &[bool],
    comps: &Components,
) -> Vec<BTreeMap<usize, Vec<i64>>> {
    // (component, component) → component instance pairs, by the first's.
    let mut between: BTreeMap<(usize, usize), BTreeMap<i64, i64>> = BTreeMap::new();
    for (l, pairs) in agreeing_parts(links, agree) {
        for &(i, j) in pairs {
            let (ra, ia) = comps.root_index(l.a, i as i64);
            let (rb, ib) = comps.root_index(l.b, j as i64);
            let (key, x, y) = if ra < rb {
                ((ra, rb), ia, ib)
            } else {
                ((rb, ra), ib, ia)
            };
            between.entry(key).or_default().entry(x).or_insert(y);
        }
    }
    let keys: Vec<(usize, usize)> = between.keys().copied().collect();
    let instances_of = |k: usize, r: usize| -> std::collections::BTreeSet<i64> {
        let (key, pairs) = (keys[k], &between[&keys[k]]);
        if key.0 == r {
            pairs.keys().copied().collect()
        } else {
            pairs.values().copied().collect()
        }
    };
    // The clock domains (hosts) of each component's units.
    let mut domains: HashMap<usize, std::collections::BTreeSet<usize>> = HashMap::new();
    for (u, &r) in comps.root.iter().enumerate() {
        domains.entry(r).or_default().insert(units[u].domain);
    }
    let share_a_host = |a: usize, b: usize| {
        let (Some(x), Some(y)) = (domains.get(&a), domains.get(&b)) else {
            return false;
        };
        x.intersection(y).next().is_some()
    };
    let mut parent: Vec<usize> = (0..keys.len()).collect();
    for x in 0..keys.len() {
        for y in x + 1..keys.len() {
            let (kx, ky) = (keys[x], keys[y]);
            let Some(&r) = [kx.0, kx.1].iter().find(|r| **r == ky.0 || **r == ky.1) else {
                continue;
            };
            let other = |k: (usize, usize)| if k.0 == r { k.1 } else { k.0 };
            if !share_a_host(other(kx), other(ky)) {
                continue;
            }
            let (ix, iy) = (instances_of(x, r), instances_of(y, r));
            let both = ix.intersection(&iy).count();
            if 2 * both >= ix.len().min(iy.len()) {
                let (rx, ry) = (root(&mut parent, x), root(&mut parent, y));
                parent[rx.max(ry)] = rx.min(ry);
            }
        }
    }
    // A component's instance that two exchanges claim (two of its units
    // each paired it, one with the stage before, one with the stage
    // after, where a delay brought their ends near) is the exchange's
    // with the most pairs: the other's pair is one too many.
    let of: Vec<usize> = (0..keys.len()).map(|k| root(&mut parent, k)).collect();
    let mut strength: HashMap<usize, usize> = HashMap::new();
    for (k, key) in keys.iter().enumerate() {
        *strength.entry(of[k]).or_default() += between[key].len();
    }
    let mut owner: HashMap<(usize, i64), usize> = HashMap::new();
    for (k, key) in keys.iter().enumerate() {
        for (&x, &y) in &between[key] {
            for at in [(key.0, x), (key.1, y)] {
                let e = owner.entry(at).or_insert(of[k]);
                if (strength[&of[k]], std::cmp::Reverse(of[k]))
                    > (strength[&*e], std::cmp::Reverse(*e))
                {
                    *e = of[k];
                }
            }
        }
    }
    let mut merged: BTreeMap<usize, BTreeMap<usize, Vec<i64>>> = BTreeMap::new();
    for (k, key) in keys.iter().enumerate() {
        let into = merged.entry(of[k]).or_default();
        for (&x, &y) in &between[key] {
            if owner[&(key.0, x)] != of[k] || owner[&(key.1, y)] != of[k] {
                continue;
            }
            into.entry(key.0).or_default().push(x);
            into.entry(key.1).or_default().push(y);
        }
    }
    merged.retain(|_, set| !set.is_empty());
    merged
        .into_values()
        .map(|mut set| {
            for is in set.values_mut() {
                is.sort_unstable();
                is.dedup();
            }
            set
        })
        .collect()
}

/// The GPU rows of each kernel pair the agreeing partners in part met at
/// (each unit's reference sequence, which its series reads).
pub fn met_pairs(units: &[Unit], links: &[Link], agree: &[bool]) -> Vec<[u32; 2]> {
    agreeing_parts(links, agree)
        .flat_map(|(l, pairs)| {
            let (a, b) = (units[l.a].reference(), units[l.b].reference());
            pairs
                .iter()
                .map(move |&(i, j)| [a.rows[i as usize], b.rows[j as usize]])
        })
        .collect()
}

/// Each member of `u` with its kernels at the reference's indices `at`:
/// the reference's own, another member's by index when it has as many,
/// else the one ending nearest (within [`FELLOW_NS`]).
fn side(p: &Profile, clock: &Alignment, u: &Unit, at: impl Iterator<Item = u32>) -> Vec<Seq> {
    let r = u.reference();
    let at: Vec<usize> = at.map(|i| i as usize).collect();
    let want: Vec<u32> = at.iter().map(|&i| r.rows[i]).collect();
    u.seqs
        .iter()
        .map(|s| {
            let keep: std::collections::HashSet<u32> = if s.rows.len() == r.rows.len() {
                at.iter().map(|&i| s.rows[i]).collect()
            } else {
                let ends: Vec<i64> = s
                    .rows
                    .iter()
                    .map(|&x| clock.gpu_end(p, x as usize))
                    .collect();
                want.iter()
                    .filter_map(|&x| fellow(&ends, clock.gpu_end(p, x as usize)))
                    .map(|k| s.rows[k])
                    .collect()
            };
            let (rows, ops) = s
                .rows
                .iter()
                .zip(&s.ops)
                .filter(|(x, _)| keep.contains(x))
                .map(|(&x, &o)| (x, o))
                .unzip();
            Seq {
                device: s.device,
                lane: s.lane,
                stream: s.stream,
                rows,
                ops,
                keyless: s
                    .keyless
                    .iter()
                    .copied()
                    .filter(|x| keep.contains(x))
                    .collect(),
            }
        })
        .filter(|s| !s.rows.is_empty())
        .collect()
}

/// `b`'s kernel paired with each of `a`'s: the nearest of the same op to
/// `a`'s end plus `difference(t)`, within `tolerance`, in order, each once.
fn pair_near(
    a: &Series,
    b: &Series,
    difference: &dyn Fn(i64) -> f64,
    tolerance: f64,
) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut next = 0usize;
    for i in 0..a.ops.len() {
        let want = a.ends[i] as f64 + difference(a.ends[i]);
        let from = next.max(b.ends.partition_point(|&e| (e as f64) < want - tolerance));
        let mut best: Option<(f64, usize)> = None;
        for j in from..b.ends.len() {
            let d = b.ends[j] as f64 - want;
            if d > tolerance {
                break;
            }
            if b.ops[j] == a.ops[i] && best.is_none_or(|(bd, _)| d.abs() < bd) {
                best = Some((d.abs(), j));
            }
        }
        if let Some((_, j)) = best {
            out.push((i as u32, j as u32));
            next = j + 1;
        }
    }
    out
}

/// A line through the pairs' end differences against `a`'s end (from the
/// first pair's); with its MAD and largest residual over all the pairs.
fn fit(a: &Series, b: &Series, pairs: &[(u32, u32)]) -> Option<(f64, f64, f64, f64)> {
    let t0 = a.ends[pairs.first()?.0 as usize];
    let step = pairs.len().div_ceil(FIT_SAMPLES).max(1);
    let (xs, ys): (Vec<f64>, Vec<f64>) = pairs
        .iter()
        .step_by(step)
        .map(|&(i, j)| {
            let (x, y) = (a.ends[i as usize], b.ends[j as usize]);
            ((x - t0) as f64, (y - x) as f64)
        })
        .unzip();
    let span = xs.iter().copied().fold(0.0, f64::max);
    let f = robust_line(&xs, &ys, span >= DRIFT_SPAN_NS, 0.0)?;
    let residual = |&(i, j): &(u32, u32)| {
        let (x, y) = (a.ends[i as usize], b.ends[j as usize]);
        ((y - x) as f64 - f.offset - f.slope * (x - t0) as f64).abs()
    };
    let mut r: Vec<f64> = pairs.iter().map(residual).collect();
    let tail = r.iter().copied().fold(0.0, f64::max);
    r.sort_by(f64::total_cmp);
    Some((f.offset, f.slope, r[r.len() / 2], tail))
}

/// The pairs of `b`'s kernels with `a`'s whose ends fit one line, found
/// from the offsets most of `a`'s probes propose within `window`.
fn in_part(a: &Series, b: &Series, window: i64) -> Option<Link> {
    let mut diffs: Vec<(i64, u32)> = Vec::new();
    for i in probes(a.ops.len()) {
        let (lo, hi) = (
            a.ends[i].saturating_sub(window),
            a.ends[i].saturating_add(window),
        );
        let from = b.ends.partition_point(|&e| e < lo);
        for j in from..b.ends.len() {
            if b.ends[j] > hi {
                break;
            }
            if b.ops[j] == a.ops[i] {
                diffs.push((b.ends[j] - a.ends[i], i as u32));
            }
        }
    }
    diffs.sort_unstable();
    // Runs of differences by how many distinct probes propose them (the
    // one nearest the clocks' own difference first among equals). A
    // periodic schedule proposes a shifted offset about as often as the
    // true one: the densest few are each followed through, and the
    // strongest line wins.
    let mut runs: Vec<(usize, i64, usize, usize)> = Vec::new();
    let mut hi = 0;
    for lo in 0..diffs.len() {
        hi = hi.max(lo);
        while hi + 1 < diffs.len() && diffs[hi + 1].0 - diffs[lo].0 <= CLUSTER_NS {
            hi += 1;
        }
        let mut probes: Vec<u32> = diffs[lo..=hi].iter().map(|d| d.1).collect();
        probes.sort_unstable();
        probes.dedup();
        if probes.len() >= MIN_VOTES {
            let mid = (diffs[lo].0 / 2 + diffs[hi].0 / 2).abs();
            runs.push((probes.len(), mid, lo, hi));
        }
    }
    runs.sort_by_key(|&(votes, mid, _, _)| (std::cmp::Reverse(votes), mid));
    let mut tried: Vec<i64> = Vec::new();
    let mut best: Option<Link> = None;
    for (_, _, lo, hi) in runs {
        if tried.len() >= CANDIDATES {
            break;
        }
        let center = diffs[(lo + hi) / 2].0;
        if tried.iter().any(|&c| (c - center).abs() <= CLUSTER_NS) {
            continue;
        }
        tried.push(center);
        if let Some(l) = along(a, b, &diffs[lo..=hi])
            && best.as_ref().is_none_or(|b| strongest_first(&l, b).is_lt())
        {
            best = Some(l);
        }
    }
    best
}

/// Up to [`PROBES`] indices of `n` kernels, all of them when that many,
/// else spread by the golden ratio: a middle stage alternates between its
/// two neighbours, and probes at a spacing near any even number would
/// all be one neighbour's.
fn probes(n: usize) -> Vec<usize> {
    if n <= PROBES {
        return (0..n).collect();
    }
    let mut p: Vec<usize> = (0..PROBES)
        .map(|k| ((k as f64 * GOLDEN).fract() * n as f64) as usize)
        .collect();
    p.sort_unstable();
    p.dedup();
    p
}

/// The golden ratio's fractional part: successive multiples spread
/// evenly over [0, 1) and follow no period.
const GOLDEN: f64 = 0.618_033_988_749_895;

/// Runs of proposed offsets [`in_part`] follows through, densest first.
const CANDIDATES: usize = 4;
/// How far (ns) a partner's end differences stray from their line: the
/// ends' jitter both ways.
const LINE_NS: f64 = 40_000.0;
/// Drift between two hosts' clocks looked for (ns per ns, either way).
const MAX_SLOPE: f64 = 50e-6;
/// Most slopes tried for one run.
const MAX_SLOPES: usize = 1_000;

/// The pairs of `a` and `b` along a run of end differences (each with
/// its probe), when they fit one line.
///
/// In a pipeline's middle stage every other kernel is exchanged with the
/// other neighbour, and in the schedule's rhythm it ends tens of µs from
/// one of `b`'s: pairs taken wide around a rough line mix the two, and
/// as pairs go in order a wrong one pushes the true one out. So the line
/// is found first, as the one through the most of the run's differences
/// within [`LINE_NS`] (over slopes up to [`MAX_SLOPE`] when the probes
/// span enough for drift to show), and only pairs close to it are taken.
fn along(a: &Series, b: &Series, run: &[(i64, u32)]) -> Option<Link> {
    let t0 = run.iter().map(|&(_, i)| a.ends[i as usize]).min()?;
    let points: Vec<(f64, f64)> = run
        .iter()
        .map(|&(d, i)| ((a.ends[i as usize] - t0) as f64, d as f64))
        .collect();
    densest_lines(&points)
        .into_iter()
        .filter_map(|(offset, slope)| close_to(a, b, &|t| offset + slope * (t - t0) as f64))
        // the strongest; among equals the last, as ever
        .max_by(|x, y| strongest_first(y, x))
}

/// The pairs of `a` and `b` within [`LINE_NS`] of `line` (their end
/// difference at `a`'s end), refitted and taken again as close as their
/// own spread, when they fit one line.
fn close_to(a: &Series, b: &Series, line: &dyn Fn(i64) -> f64) -> Option<Link> {
    let pairs = pair_near(a, b, line, LINE_NS);
    if pairs.len() < MIN_PAIRS {
        return None;
    }
    let (offset, slope, mad, _) = fit(a, b, &pairs)?;
    let from = a.ends[pairs[0].0 as usize];
    let close = (TIGHT_MADS * mad).max(TIGHT_FLOOR_NS);
    let pairs = pair_near(a, b, &|t| offset + slope * (t - from) as f64, close);
    if pairs.len() < MIN_PAIRS || one_shift(&pairs) {
        return None;
    }
    let (offset, slope, mad, tail) = fit(a, b, &pairs)?;
    if mad > MAD_NS || tail > TAIL_NS {
        return None;
    }
    Some(Link {
        a: 0,
        b: 0,
        lag_ns: offset,
        tail_ns: tail,
        lag_slope_ppm: slope * 1e6,
        mad_ns: mad,
        shared: pairs.len(),
        span: (
            a.ends[pairs[0].0 as usize],
            a.ends[pairs[pairs.len() - 1].0 as usize],
        ),
        pairing: Pairing::Part(pairs),
        domains: (0, 0),
    })
}

/// The lines `y = offset + slope·x` (up to [`LINES`], no two within
/// [`LINE_NS`] of each other over the points' span) with the most
/// `points` within [`LINE_NS`] of them, most first: slopes from a grid
/// fine enough that a line moves less than [`LINE_NS`] over the span
/// (none below [`DRIFT_SPAN_NS`], as [`fit`]); offsets the middles of the
/// densest windows; among equals the smaller slope.
fn densest_lines(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let span = points.iter().map(|p| p.0).fold(0.0, f64::max);
    let steps = if span >= DRIFT_SPAN_NS {
        ((MAX_SLOPE * span / LINE_NS).ceil() as usize).min(MAX_SLOPES / 2)
    } else {
        0
    };
    let step = if steps > 0 {
        MAX_SLOPE / steps as f64
    } else {
        0.0
    };
    // (points, |slope|, offset, slope) of each window of each slope
    let mut windows: Vec<(usize, f64, f64, f64)> = Vec::new();
    let mut at: Vec<f64> = Vec::with_capacity(points.len());
    for k in 0..=2 * steps {
        let slope = (k as f64 - steps as f64) * step;
        at.clear();
        at.extend(points.iter().map(|&(x, y)| y - slope * x));
        at.sort_by(f64::total_cmp);
        let mut hi = 0;
        for lo in 0..at.len() {
            hi = hi.max(lo);
            while hi + 1 < at.len() && at[hi + 1] - at[lo] <= LINE_NS {
                hi += 1;
            }
            windows.push((hi - lo + 1, slope.abs(), (at[lo] + at[hi]) / 2.0, slope));
        }
    }
    windows.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.total_cmp(&y.1)));
    let mut lines: Vec<(f64, f64)> = Vec::new();
    for (_, _, offset, slope) in windows {
        if lines.len() >= LINES {
            break;
        }
        let near = |&(o, s): &(f64, f64)| {
            (o - offset).abs() <= LINE_NS && (o + s * span - offset - slope * span).abs() <= LINE_NS
        };
        if !lines.iter().any(near) {
            lines.push((offset, slope));
        }
    }
    lines
}

/// Lines [`along`] follows through per run: in a pipeline's rhythm, the
/// kernels exchanged with the other neighbour line up too.
const LINES: usize = 3;

/// Whether three in four pairs are the same instance of both sequences
/// shifted by one count: that is one alignment of the whole, which
/// [`super::across`] judged (siblings in lockstep meet at most instances
/// of it and part at the rest). An exchange with two hosts pairs every
/// other kernel, or some other changing pattern.
fn one_shift(pairs: &[(u32, u32)]) -> bool {
    let mut count: HashMap<i64, usize> = HashMap::new();
    for &(i, j) in pairs {
        *count.entry(j as i64 - i as i64).or_default() += 1;
    }
    count.values().any(|&n| 4 * n >= 3 * pairs.len())
}

/// A kernel of a unit: (unit, index).
type Node = (usize, u32);
/// One move of an augmenting path: link `.0` pairs kernel `.1` with `.2`.
type Step = (usize, Node, Node);

/// More kernels explained by the same partners. In a pipeline's rhythm a
/// middle stage's exchanges with the stage before and after end µs apart,
/// so a partner's line can reach the wrong one of two adjacent kernels and
/// leave a neighbour's pair without its kernel, along a whole pipeline.
/// A kernel no partner holds that a partner's line reaches is given that
/// pair when the kernels on the way can move to others their own
/// partner's line reaches as well (an augmenting path, at most
/// [`AUGMENT_DEPTH`] moves): of all such paths, the one whose pairs sit
/// nearest their lines; each partner's pairs stay in order.
fn augment(kept: Vec<Link>, all: &[Series]) -> Vec<Link> {
    let mut a = Augmenter::new(kept, all);
    let mut units: Vec<usize> = a.of_unit.keys().copied().collect();
    units.sort_unstable();
    for u in units {
        for i in 0..all[u].ends.len() as u32 {
            if a.held.contains_key(&(u, i)) {
                continue;
            }
            let mut paths = Vec::new();
            a.paths(
                (u, i),
                &mut Vec::new(),
                &mut [(u, i)].into(),
                AUGMENT_DEPTH,
                &mut paths,
            );
            let best = paths
                .into_iter()
                .map(|p| (a.cost(&p), p))
                .min_by(|x, y| x.0.total_cmp(&y.0));
            if let Some((_, path)) = best {
                a.apply(&path);
            }
        }
    }
    let mut kept = a.kept;
    for l in &mut kept {
        if let Pairing::Part(pairs) = &l.pairing {
            l.shared = pairs.len();
        }
    }
    kept
}

/// Moves along an augmenting path.
const AUGMENT_DEPTH: usize = 3;
/// Paths compared per free kernel.
const AUGMENT_PATHS: usize = 64;

struct Augmenter<'a> {
    kept: Vec<Link>,
    all: &'a [Series],
    /// Each unit's partners in part (indices into `kept`).
    of_unit: HashMap<usize, Vec<usize>>,
    /// Each held kernel's partner in part and partner kernel.
    held: HashMap<Node, (usize, Node)>,
}

impl<'a> Augmenter<'a> {
    fn new(kept: Vec<Link>, all: &'a [Series]) -> Self {
        let mut of_unit: HashMap<usize, Vec<usize>> = HashMap::new();
        let mut held = HashMap::new();
        for (k, l) in kept.iter().enumerate() {
            of_unit.entry(l.a).or_default().push(k);
            of_unit.entry(l.b).or_default().push(k);
            if let Pairing::Part(pairs) = &l.pairing {
                for &(i, j) in pairs {
                    held.insert((l.a, i), (k, (l.b, j)));
                    held.insert((l.b, j), (k, (l.a, i)));
                }
            }
        }
        Augmenter {
            kept,
            all,
            of_unit,
            held,
        }
    }

    /// How far kernels `x` and `y` sit from link `k`'s line (ns).
    fn off_line(&self, k: usize, x: Node, y: Node) -> f64 {
        let l = &self.kept[k];
        let (i, j) = if x.0 == l.a { (x.1, y.1) } else { (y.1, x.1) };
        let (ea, eb) = (
            self.all[l.a].ends[i as usize],
            self.all[l.b].ends[j as usize],
        );
        ((eb - ea) as f64 - l.difference_at(ea)).abs()
    }

    /// The kernels link `k`'s line reaches from `n`, of its op.
    fn reach(&self, k: usize, n: Node) -> Vec<Node> {
        let l = &self.kept[k];
        let to = if n.0 == l.a { l.b } else { l.a };
        let tol = (TIGHT_MADS * l.mad_ns).max(TIGHT_FLOOR_NS);
        let e = self.all[n.0].ends[n.1 as usize];
        let want = if n.0 == l.a {
            e as f64 + l.difference_at(e)
        } else {
            e as f64 - l.difference_at(e - l.lag_ns as i64)
        };
        let (ends, ops) = (&self.all[to].ends, &self.all[to].ops);
        let lo = ends.partition_point(|&t| (t as f64) < want - tol);
        (lo..ends.len())
            .take_while(|&x| (ends[x] as f64) <= want + tol)
            .filter(|&x| ops[x] == self.all[n.0].ops[n.1 as usize])
            .map(|x| (to, x as u32))
            .collect()
    }

    /// Every augmenting path from `n` (up to [`AUGMENT_PATHS`]): steps
    /// whose last `to` is free, each other `to` held, its holder's partner
    /// kernel the next step's `from`.
    fn paths(
        &self,
        n: Node,
        path: &mut Vec<Step>,
        seen: &mut std::collections::HashSet<Node>,
        depth: usize,
        out: &mut Vec<Vec<Step>>,
    ) {
        if depth == 0 || out.len() >= AUGMENT_PATHS {
            return;
        }
        for &k in self.of_unit.get(&n.0).map_or(&[][..], Vec::as_slice) {
            for y in self.reach(k, n) {
                if seen.contains(&y) {
                    continue;
                }
                path.push((k, n, y));
                match self.held.get(&y) {
                    None => out.push(path.clone()),
                    Some(&(_, freed)) if !seen.contains(&freed) => {
                        seen.extend([y, freed]);
                        self.paths(freed, path, seen, depth - 1, out);
                        seen.remove(&y);
                        seen.remove(&freed);
                    }
                    Some(_) => {}
                }
                path.pop();
            }
        }
    }

    /// How far a path's pairs sit from their lines, less the pairs it
    /// undoes.
    fn cost(&self, path: &[Step]) -> f64 {
        path.iter()
            .map(|&(k, x, y)| {
                let undone = self
                    .held
                    .get(&y)
                    .map_or(0.0, |&(old, other)| self.off_line(old, y, other));
                self.off_line(k, x, y) - undone
            })
            .sum()
    }

    /// Pairs each step's kernels, undoing the pairs they held, unless a
    /// partner's pairs would fall out of order.
    fn apply(&mut self, path: &[Step]) {
        let before: Vec<(usize, Pairing)> = path
            .iter()
            .flat_map(|&(k, _, y)| [Some(k), self.held.get(&y).map(|h| h.0)])
            .flatten()
            .map(|k| (k, self.kept[k].pairing.clone()))
            .collect();
        for &(k, x, y) in path {
            if let Some(&(old, other)) = self.held.get(&y) {
                unpair(&mut self.kept[old], y, other);
            }
            pair(&mut self.kept[k], x, y);
        }
        if !before.iter().all(|&(k, _)| in_order(&self.kept[k])) {
            for (k, p) in before.into_iter().rev() {
                self.kept[k].pairing = p;
            }
            return;
        }
        for &(k, x, y) in path {
            if let Some((_, other)) = self.held.remove(&y) {
                self.held.remove(&other);
            }
            self.held.insert(x, (k, y));
            self.held.insert(y, (k, x));
        }
    }
}

/// Adds to a partner in part the pair of kernels `x` and `y` (either order).
fn pair(l: &mut Link, x: Node, y: Node) {
    let (i, j) = if x.0 == l.a { (x.1, y.1) } else { (y.1, x.1) };
    if let Pairing::Part(pairs) = &mut l.pairing {
        pairs.push((i, j));
        pairs.sort_unstable();
    }
}

fn unpair(l: &mut Link, x: Node, y: Node) {
    let (i, j) = if x.0 == l.a { (x.1, y.1) } else { (y.1, x.1) };
    if let Pairing::Part(pairs) = &mut l.pairing {
        pairs.retain(|&p| p != (i, j));
    }
}

/// Whether a partner's pairs are in order on both sides.
fn in_order(l: &Link) -> bool {
    match &l.pairing {
        Pairing::Part(p) => p.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1),
        Pairing::Shift(_) => true,
    }
}

/// Units of one host that ran in lockstep and parted there once (a
/// stage's point-to-point streams, split by one delay) exchange with one
/// unit of another host that never parted, at once, each with its own
/// share of that unit's devices — which share, the ends cannot tell. The
/// strongest took the unit's kernels ([`settle`]); a sibling whose own
/// link to the unit lost them (on the same line: one clock) shares them.
/// Its kernels there are its sibling's counterparts on their common
/// clock, not those its own line found: in a stall the members of a
/// lockstep unit end tens of µs apart, as far as the next exchange.
fn siblings_share(
    mut kept: Vec<Link>,
    found: &[Link],
    units: &[Unit],
    all: &[Series],
) -> Vec<Link> {
    let width = |u: usize| units[u].distinct_devices();
    let mut taken: std::collections::HashSet<(usize, u32)> = Default::default();
    for l in &kept {
        if let Pairing::Part(pairs) = &l.pairing {
            for &(i, j) in pairs {
                taken.insert((l.a, i));
                taken.insert((l.b, j));
            }
        }
    }
    let mut lost: Vec<&Link> = found
        .iter()
        .filter(|l| !kept.iter().any(|k| (k.a, k.b) == (l.a, l.b)))
        .collect();
    lost.sort_by(|x, y| strongest_first(x, y).then((x.a, x.b).cmp(&(y.a, y.b))));
    for l in lost {
        for (v, u) in [(l.a, l.b), (l.b, l.a)] {
            // The kept link of `u` to a sibling of `v`, and `u`'s devices
            // its partners of `v`'s host already exchange with.
            let mut sibling: Option<(&Link, usize)> = None;
            let mut held = 0;
            for k in &kept {
                let s = if k.a == u {
                    k.b
                } else if k.b == u {
                    k.a
                } else {
                    continue;
                };
                if units[s].domain != units[v].domain {
                    continue;
                }
                let (ws, wv) = (width(s), width(v));
                if ws.iter().any(|d| wv.binary_search(d).is_ok()) {
                    held = usize::MAX;
                    break;
                }
                held += ws.len();
                let t = k.span.0 / 2 + k.span.1 / 2;
                let gap = (side_difference(k, u, t) - side_difference(l, u, t)).abs();
                if gap <= (TIGHT_MADS * k.mad_ns.max(l.mad_ns)).max(TIGHT_FLOOR_NS) {
                    sibling = sibling.or(Some((k, s)));
                }
            }
            let Some((k, s)) = sibling else { continue };
            if held.saturating_add(width(v).len()) > width(u).len() {
                continue;
            }
            let Pairing::Part(theirs) = &k.pairing else {
                continue;
            };
            let mut pairs: Vec<(u32, u32)> = Vec::new();
            let mut last: Option<u32> = None;
            for &(i, j) in theirs {
                let (ks, ku) = if k.a == s { (i, j) } else { (j, i) };
                let Some(kv) = counterpart(&all[s], ks, &all[v]) else {
                    continue;
                };
                if taken.contains(&(v, kv))
                    || all[v].ops[kv as usize] != all[u].ops[ku as usize]
                    || last.is_some_and(|x| x >= kv)
                {
                    continue;
                }
                last = Some(kv);
                pairs.push(if l.a == v { (kv, ku) } else { (ku, kv) });
            }
            if pairs.len() < MIN_PAIRS {
                continue;
            }
            kept.push(taking(l, pairs, &mut taken));
            break;
        }
    }
    kept.sort_by_key(|l| (l.a, l.b));
    kept
}

/// `u`'s clock minus its partner's at `t`, by link `l` (one of whose
/// units is `u`).
fn side_difference(l: &Link, u: usize, t: i64) -> f64 {
    let d = l.difference_at(t);
    if l.a == u { -d } else { d }
}

/// `to`'s kernel that is `from`'s kernel `k` on their common clock: the
/// same index when they are as long and end within [`FELLOW_NS`], else
/// the one ending nearest within it.
fn counterpart(from: &Series, k: u32, to: &Series) -> Option<u32> {
    let e = *from.ends.get(k as usize)?;
    if from.ends.len() == to.ends.len() && (to.ends[k as usize] - e).abs() <= FELLOW_NS {
        return Some(k);
    }
    fellow(&to.ends, e).map(|x| x as u32)
}

/// The kernel of `ends` (sorted) ending nearest `e`, within [`FELLOW_NS`].
fn fellow(ends: &[i64], e: i64) -> Option<usize> {
    let at = ends.partition_point(|&t| t < e);
    [at.checked_sub(1), Some(at)]
        .into_iter()
        .flatten()
        .filter(|&x| x < ends.len())
        .min_by_key(|&x| (ends[x] - e).abs())
        .filter(|&x| (ends[x] - e).abs() <= FELLOW_NS)
}

/// Each kernel pair to the strongest partner in part claiming it; a partner in part left with too few
/// pairs, or with fewer than half of those it found (a shadow of a
/// stronger one), is dropped; so is one between two units whose kernels
/// over their partners' span are both unexplained. Repeated until nothing
/// changes.
fn settle(mut found: Vec<Link>, all: &[Series]) -> Vec<Link> {
    loop {
        // Strongest first (the most pairs, then the tightest), each pair
        // taken whole when neither of its kernels is taken yet. A whole
        // partner's kernels stay free: units whole partners join are one
        // communicator (or siblings in lockstep), and exchange as one.
        let mut taken: std::collections::HashSet<(usize, u32)> = Default::default();
        let mut order: Vec<&Link> = found.iter().collect();
        order.sort_by(|x, y| strongest_first(x, y).then((x.a, x.b).cmp(&(y.a, y.b))));
        let mut kept: Vec<Link> = Vec::new();
        for l in order {
            let Pairing::Part(pairs) = &l.pairing else {
                continue;
            };
            let mine: Vec<(u32, u32)> = pairs
                .iter()
                .copied()
                .filter(|&(i, j)| !taken.contains(&(l.a, i)) && !taken.contains(&(l.b, j)))
                .collect();
            if mine.len() >= MIN_PAIRS && 2 * mine.len() >= pairs.len() {
                kept.push(taking(l, mine, &mut taken));
            }
        }
        kept.sort_by_key(|l| (l.a, l.b));
        // A partnership stands when one side's kernels are explained:
        // a sibling meeting by chance explains neither, and a missing
        // partner of one unit must not take down its others (they fell
        // one after another along a pipeline).
        let unexplained = unexplained_units(&kept, all);
        kept.retain(|l| !unexplained.contains(&l.a) || !unexplained.contains(&l.b));
        if kept.len() == found.len() && kept.iter().zip(&found).all(|(x, y)| x.pairing == y.pairing)
        {
            return kept;
        }
        found = kept;
    }
}

/// `l` holding just `pairs`, their kernels marked taken.
fn taking(
    l: &Link,
    pairs: Vec<(u32, u32)>,
    taken: &mut std::collections::HashSet<(usize, u32)>,
) -> Link {
    for &(i, j) in &pairs {
        taken.insert((l.a, i));
        taken.insert((l.b, j));
    }
    let mut l = l.clone();
    l.shared = pairs.len();
    l.pairing = Pairing::Part(pairs);
    l
}

/// The order of claims, strongest first: the most pairs, then the
/// tightest (smallest MAD). Between the offsets and lines of one unit
/// pair, and between the partners claiming one kernel, the same.
fn strongest_first(x: &Link, y: &Link) -> std::cmp::Ordering {
    y.shared.cmp(&x.shared).then(x.mad_ns.total_cmp(&y.mad_ns))
}

/// Units whose kernels over the span their partners in part cover are
/// not nine in ten theirs.
fn unexplained_units(kept: &[Link], all: &[Series]) -> std::collections::HashSet<usize> {
    // unit → (its held kernels, its span)
    let mut per_unit: HashMap<usize, (std::collections::HashSet<u32>, (i64, i64))> = HashMap::new();
    for l in kept {
        let Pairing::Part(pairs) = &l.pairing else {
            continue;
        };
        for (u, side) in [(l.a, 0), (l.b, 1)] {
            let e = per_unit
                .entry(u)
                .or_insert_with(|| (Default::default(), (i64::MAX, i64::MIN)));
            for p in pairs {
                let k = if side == 0 { p.0 } else { p.1 };
                e.0.insert(k);
                let t = all[u].ends[k as usize];
                e.1 = (e.1.0.min(t), e.1.1.max(t));
            }
        }
    }
    per_unit
        .into_iter()
        .filter(|(u, (mine, (from, to)))| {
            let s = &all[*u];
            let over: Vec<u32> = (0..s.ends.len() as u32)
                .filter(|&k| (*from..=*to).contains(&s.ends[k as usize]))
                .collect();
            let explained = over.iter().filter(|k| mine.contains(k)).count();
            (explained as f64) < MIN_COVER * over.len() as f64
        })
        .map(|(u, _)| u)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::nccl_name::CollOp::SendRecv;

    const MS: i64 = 1_000_000;

    /// One unit per series, each on its own device and host.
    fn single_units(all: &[Series]) -> Vec<Unit> {
        (0..all.len() as u32)
            .map(|d| {
                Unit::single(
                    crate::analysis::nccl_streams::test_seq(
                        d,
                        21,
                        &vec![SendRecv; all[d as usize].ops.len()],
                    ),
                    d as usize,
                )
            })
            .collect()
    }

    /// The partners in part found for a middle stage (unit 0) between the
    /// stage before (unit 1) and after (unit 2), each on its own host;
    /// two of them, each with its pairs.
    fn middle_stage_links(
        mid: Vec<i64>,
        before: Vec<i64>,
        after: Vec<i64>,
    ) -> Vec<(Link, Vec<(u32, u32)>)> {
        let all = vec![series(mid), series(before), series(after)];
        let links = partial_links(&single_units(&all), &all, &[], 50 * MS);
        assert_eq!(links.len(), 2, "{links:#?}");
        links
            .into_iter()
            .map(|l| match &l.pairing {
                Pairing::Part(pairs) => {
                    let pairs = pairs.clone();
                    (l, pairs)
                }
                _ => panic!("{l:?}"),
            })
            .collect()
    }

    fn series(ends: Vec<i64>) -> Series {
        Series {
            ops: vec![SendRecv; ends.len()],
            ends,
        }
    }

    /// A middle stage's exchanges alternate between the stage before
    /// (even kernels) and after (odd ones), each neighbour on its own
    /// clock: each is found as a partner of the even or odd kernels, the
    /// unit's kernels all explained.
    #[test]
    fn a_middle_stage_pairs_part_with_each_neighbour() {
        let mut mid = Vec::new();
        let (mut before, mut after) = (Vec::new(), Vec::new());
        let mut t = 0;
        for k in 0..40i64 {
            t += 2 * MS + (k * 7919 % 13) * 150_000;
            mid.push(t);
            let jitter = (k * 31 % 7) * 1_000;
            if k % 2 == 0 {
                before.push(t + 3 * MS + jitter);
            } else {
                after.push(t - 5 * MS - jitter);
            }
        }
        for (l, pairs) in middle_stage_links(mid, before, after) {
            assert_eq!(pairs.len(), 20);
            let want = if l.b == 1 { 3e6 } else { -5e6 };
            assert!((l.lag_ns - want).abs() < 10_000.0, "{l:?}");
            let parity = if l.b == 1 { 0 } else { 1 };
            assert!(pairs.iter().all(|&(i, _)| i % 2 == parity));
        }
    }

    /// The same over three steps 5 s apart (bursts of 30 exchanges), on
    /// clocks drifting ±8 ppm against the middle stage's: each partner is
    /// found whole, on its own line with its drift, though the probes'
    /// span is under 10 s.
    #[test]
    fn a_middle_stage_over_steps_pairs_each_neighbour_with_its_drift() {
        let (mut mid, mut before, mut after) = (Vec::new(), Vec::new(), Vec::new());
        for step in 0..3i64 {
            let mut t = step * 4_900 * MS;
            for k in 0..30i64 {
                t += 1_500_000 + (k * 7919 % 13) * 20_000;
                let drift = t * 8 / 1_000_000;
                let jitter = ((k + step * 30) * 31 % 9) * 1_000;
                mid.push(t);
                if k % 2 == 0 {
                    before.push(t + 3 * MS + drift + jitter);
                } else {
                    after.push(t - 5 * MS - drift + jitter);
                }
            }
        }
        for (l, pairs) in middle_stage_links(mid, before, after) {
            assert_eq!(pairs.len(), 45, "{l:?}");
            let (want, ppm, parity) = if l.b == 1 {
                (3e6, 8.0, 0)
            } else {
                (-5e6, -8.0, 1)
            };
            assert!(pairs.iter().all(|&(i, _)| i % 2 == parity), "{l:?}");
            assert!((l.lag_ns - want).abs() < 10_000.0, "{l:?}");
            assert!((l.lag_slope_ppm - ppm).abs() < 1.0, "{l:?}");
        }
    }

    /// A middle stage whose later neighbour was not found (its file
    /// missing here): half its kernels unexplained, but the stage before
    /// exchanges with it alone, every kernel on the line, so their
    /// partnership stands (it fell with the missing one before).
    #[test]
    fn a_partner_explaining_one_side_whole_stands_without_the_other() {
        let (mut mid, mut before) = (Vec::new(), Vec::new());
        let mut t = 0;
        for k in 0..40i64 {
            t += 2 * MS + (k * 7919 % 13) * 150_000;
            mid.push(t);
            if k % 2 == 0 {
                before.push(t + 3 * MS + (k * 31 % 7) * 1_000);
            }
        }
        let all = vec![series(mid), series(before)];
        let links = partial_links(&single_units(&all), &all, &[], 50 * MS);
        assert_eq!(links.len(), 1, "{links:#?}");
        assert_eq!(links[0].shared, 20, "{links:#?}");
    }

    #[test]
    fn probes_reach_both_parities_of_an_alternating_sequence() {
        for n in [75usize, 90, 511, 512, 513, 1024, 100_000] {
            let p = probes(n);
            assert!(p.len() <= PROBES && p.iter().all(|&i| i < n), "{n}");
            let odd = p.iter().filter(|&&i| i % 2 == 1).count();
            assert!(
                odd * 4 >= p.len() && odd * 4 <= 3 * p.len(),
                "{n}: {odd} of {}",
                p.len()
            );
        }
    }

    /// A sibling whose ends meet a unit's only now and then (they wander
    /// apart where one was held up) is no partner: the rest of its kernels
    /// are unexplained.
    #[test]
    fn a_sibling_meeting_by_chance_is_no_partner() {
        let mut x = Vec::new();
        let mut y = Vec::new();
        let mut t = 0;
        for k in 0..40i64 {
            t += 3 * MS;
            x.push(t);
            // two in three meet within µs, the rest are 0.4–1.2 ms apart
            let apart = if k % 3 == 0 {
                400_000 + (k % 5) * 200_000
            } else {
                k % 4 * 1_000
            };
            y.push(t + 2 * MS + apart);
        }
        let all = vec![series(x), series(y)];
        let units: Vec<Unit> = (0..2)
            .map(|d| {
                Unit::single(
                    crate::analysis::nccl_streams::test_seq(d, 17, &[SendRecv; 40]),
                    d as usize,
                )
            })
            .collect();
        assert!(partial_links(&units, &all, &[], 50 * MS).is_empty());
    }

    /// A unit's true partner (host 1, µs of jitter) misses two of its
    /// kernels; a replica in lockstep with it on host 2 (which exchanges
    /// with its other neighbour in between) ends near all 30, tens of µs
    /// apart. Counted by pairs first, the replica took every
    /// kernel and the partner fell; it is the partner's shadow (far
    /// looser over the same kernels) and goes first. Two partners as
    /// tight over the same kernels both stay (a unit of both siblings).
    #[test]
    fn a_far_looser_partner_over_the_same_kernels_is_a_shadow() {
        let mut mid = Vec::new();
        let (mut partner, mut replica) = (Vec::new(), Vec::new());
        let mut t = 0;
        for k in 0..30i64 {
            t += 2 * MS + (k * 7919 % 13) * 150_000;
            mid.push(t);
            if k != 11 && k != 23 {
                partner.push(t + 3 * MS + (k * 31 % 5) * 500);
            }
            replica.push(t + MS + (k * 37 % 13 - 6) * 6_000);
            if k % 3 == 0 {
                // its exchange with its other neighbour
                replica.push(t + 2 * MS);
            }
        }
        let all = vec![series(mid), series(partner), series(replica)];
        let links = partial_links(&single_units(&all), &all, &[], 50 * MS);
        assert_eq!(links.len(), 1, "{links:#?}");
        assert_eq!((links[0].a, links[0].b, links[0].shared), (0, 1, 28));
        assert!((links[0].lag_ns - 3e6).abs() < 5_000.0, "{:?}", links[0]);

        let twin = |b: usize| Link {
            b,
            ..links[0].clone()
        };
        let units = single_units(&all);
        assert_eq!(without_shadows(vec![twin(1), twin(2)], &units).len(), 2);
    }

    /// A unit of `devices` on host `domain`, its streams in lockstep.
    fn lockstep_unit(devices: std::ops::Range<u32>, domain: usize, kernels: usize) -> Unit {
        Unit {
            seqs: devices
                .map(|d| crate::analysis::nccl_streams::test_seq(d, 21, &vec![SendRecv; kernels]))
                .collect(),
            domain,
            by_ends: true,
            lockstep_ambiguous: true,
        }
    }

    fn link(a: usize, b: usize, domains: (usize, usize), pairing: Pairing) -> Link {
        Link {
            a,
            b,
            pairing,
            lag_ns: 0.0,
            tail_ns: 1_000.0,
            lag_slope_ppm: 0.0,
            mad_ns: 500.0,
            shared: 10,
            span: (0, 10 * MS),
            domains,
        }
    }

    /// Stage one: TP groups of hosts 0 and 1 (units 0, 1) in lockstep,
    /// joined whole. Stage two: host 2's groups parted (units 2, 3), and
    /// unit 2 never parted from host 3's (unit 4). Unit 0 exchanges with
    /// unit 2, unit 1 with unit 3, at the same instances: the stage-one
    /// component's kernels go to one exchange, not to two that each claim
    /// them, though the stage-two components are one on host 2 and one
    /// on hosts 2 and 3.
    #[test]
    fn exchanges_claiming_one_components_instances_with_one_host_are_one() {
        let units = vec![
            lockstep_unit(0..4, 0, 10),
            lockstep_unit(4..8, 1, 10),
            lockstep_unit(8..12, 2, 10),
            lockstep_unit(12..16, 2, 10),
            lockstep_unit(16..20, 3, 10),
        ];
        let pairs: Vec<(u32, u32)> = (0..10).map(|i| (i, i)).collect();
        let links = vec![
            link(0, 1, (0, 1), Pairing::Shift(0)),
            link(2, 4, (2, 3), Pairing::Shift(0)),
            link(0, 2, (0, 2), Pairing::Part(pairs.clone())),
            link(1, 3, (1, 2), Pairing::Part(pairs)),
        ];
        let agree = vec![true; links.len()];
        let comps = Components::of(&units, &links, &agree);
        assert_eq!(comps.root, vec![0, 0, 2, 3, 2]);
        let exchanged = exchanged_instances(&units, &links, &agree, &comps);
        assert_eq!(exchanged.len(), 1, "{exchanged:?}");
        assert_eq!(
            exchanged[0].keys().copied().collect::<Vec<_>>(),
            vec![0, 2, 3]
        );
    }

    /// A middle stage of two hosts' groups joined whole (units 1 and 2)
    /// exchanges its even kernels with the stage before (unit 0) and its
    /// odd ones with the stage after (unit 3). A delay brought one even
    /// kernel's end near the stage after's line, and unit 2 paired it
    /// there too: the exchange with more pairs keeps it, and the stray
    /// pair is nobody's.
    #[test]
    fn an_instance_two_exchanges_claim_is_the_stronger_ones() {
        let units = vec![
            lockstep_unit(0..4, 0, 11),
            lockstep_unit(4..8, 1, 22),
            lockstep_unit(8..12, 2, 22),
            lockstep_unit(12..16, 3, 10),
        ];
        let before: Vec<(u32, u32)> = (0..11).map(|i| (i, 2 * i)).collect();
        let mut after: Vec<(u32, u32)> = vec![(1, 0), (3, 1), (4, 2)];
        after.extend((3..10).map(|j| (2 * j - 1, j)));
        let links = vec![
            link(1, 2, (1, 2), Pairing::Shift(0)),
            link(0, 1, (0, 1), Pairing::Part(before)),
            link(2, 3, (2, 3), Pairing::Part(after)),
        ];
        let agree = vec![true; links.len()];
        let comps = Components::of(&units, &links, &agree);
        assert_eq!(comps.root, vec![0, 1, 1, 3]);
        let exchanged = exchanged_instances(&units, &links, &agree, &comps);
        assert_eq!(exchanged.len(), 2, "{exchanged:?}");
        let with_before = &exchanged[0];
        let with_after = &exchanged[1];
        assert!(with_before[&1].contains(&4), "{exchanged:?}");
        assert!(!with_after[&1].contains(&4), "{exchanged:?}");
        assert!(!with_after[&3].contains(&2), "{exchanged:?}");
        assert_eq!(with_after[&3].len(), 9);
    }

    fn pairs_of(links: &[Link], a: usize, b: usize) -> Vec<(u32, u32)> {
        links
            .iter()
            .find(|l| (l.a, l.b) == (a, b))
            .map(|l| match &l.pairing {
                Pairing::Part(p) => p.clone(),
                _ => panic!("{l:?}"),
            })
            .unwrap_or_default()
    }

    /// A middle stage whose point-to-point streams parted once on their
    /// host (units 0 and 1: devices 0–1 and 2) exchanges with the stage
    /// before (unit 2, even kernels) and after (unit 3, odd ones), whose
    /// streams never parted. Both parts exchange with both neighbours, at
    /// the same kernels of theirs — even where a stall held the stage
    /// after: its exchange with the stage beyond it (unit 4) ended 75 µs
    /// before the one with the middle stage, and the first part's
    /// reference device 55 µs early, nearer that other kernel's end than
    /// its own partner's.
    #[test]
    fn parts_of_a_stage_in_lockstep_share_their_neighbours_kernels() {
        const US: i64 = 1_000;
        let (before, after, beyond) = (3 * MS, -5 * MS, 7 * MS);
        let stall = 21;
        let (mut v1, mut v2, mut w) = (Vec::new(), Vec::new(), Vec::new());
        let (mut x, mut y): (Vec<(i64, bool)>, Vec<i64>) = (Vec::new(), Vec::new());
        let mut t = 0;
        for k in 0..40i64 {
            t += 2 * MS + (k * 7919 % 13) * 150_000;
            let jitter = (k * 31 % 7) * US;
            v2.push(t);
            v1.push(if k == stall { t - 55 * US } else { t + jitter });
            if k % 2 == 0 {
                w.push(t + before + jitter);
            } else {
                // The stage after exchanges once or twice with the stage
                // beyond between two of its exchanges with this one.
                x.push((t + after, true));
                let other = if k == stall { t - 75 * US } else { t + MS };
                for o in [Some(other), (k % 3 == 0).then_some(t + 1_500 * US)]
                    .into_iter()
                    .flatten()
                {
                    x.push((o + after, false));
                    y.push(o + beyond);
                }
            }
        }
        x.sort_unstable();
        let stall_end = v2[stall as usize] - 75 * US + after;
        let stall_other = x
            .iter()
            .position(|&(e, mine)| !mine && e == stall_end)
            .map(|i| i as u32);
        let xs = series(x.iter().map(|&(e, _)| e).collect());
        let all = vec![series(v1), series(v2), series(w), xs, series(y)];
        let units = vec![
            lockstep_unit(0..2, 0, 40),
            lockstep_unit(2..3, 0, 40),
            lockstep_unit(3..6, 1, 20),
            lockstep_unit(6..9, 2, all[3].ends.len()),
            lockstep_unit(9..12, 3, all[4].ends.len()),
        ];
        let links = partial_links(&units, &all, &[], 50 * MS);
        for (part, neighbour) in [(0, 2), (1, 2), (0, 3), (1, 3)] {
            assert_eq!(
                pairs_of(&links, part, neighbour).len(),
                20,
                "{part}-{neighbour}: {links:#?}"
            );
        }
        assert_eq!(pairs_of(&links, 0, 3), pairs_of(&links, 1, 3));
        let stall_other = stall_other.expect("the stage after's other kernel");
        assert!(
            pairs_of(&links, 3, 4)
                .iter()
                .any(|&(i, _)| i == stall_other),
            "{links:#?}"
        );
    }

    /// A middle stage's exchange with the stage before (unit 1) ends 3 µs
    /// before its next, with the stage after (unit 2): the stage after's
    /// line reaches the first, nearest, and as the stronger partner takes
    /// it. Its own kernel is free and on its line: it moves there, and the
    /// stage before gets its pair back.
    #[test]
    fn a_partner_moves_to_the_adjacent_kernel_its_neighbour_needs() {
        const US: i64 = 1_000;
        let (before, after) = (3 * MS, -5 * MS);
        let (mut mid, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
        let mut t = 0;
        for k in 0..40i64 {
            t += if k == 17 {
                3 * US
            } else {
                2 * MS + (k * 7919 % 13) * 150_000
            };
            mid.push(t);
            let jitter = (k * 31 % 5) * 200;
            if k % 2 == 1 {
                c.push(t + after + jitter);
            } else if k >= 4 {
                b.push(t + before + jitter);
            }
        }
        let all = vec![series(mid), series(b), series(c)];
        let links = partial_links(&single_units(&all), &all, &[], 50 * MS);
        let (with_b, with_c) = (pairs_of(&links, 0, 1), pairs_of(&links, 0, 2));
        assert!(with_b.iter().any(|&(i, _)| i == 16), "{links:#?}");
        assert!(with_c.iter().any(|&(i, _)| i == 17), "{links:#?}");
        assert!(with_b.iter().all(|&(i, _)| i % 2 == 0), "{with_b:?}");
        assert!(with_c.iter().all(|&(i, _)| i % 2 == 1), "{with_c:?}");
    }
}
