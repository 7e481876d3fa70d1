//! Communicators found on one clock, as evidence once several clocks are
//! one.
//!
//! Before the hosts' clocks are aligned, each host's streams are
//! clustered on its own clock; the communicators found there (a node's
//! tensor-parallel group, its node-local all-reduce) are whole. Once the
//! clocks are aligned, every host's ends are clustered together, and the
//! same communicators of many hosts running in lockstep end together in
//! ever-changing combinations, too many for each combination to be shown
//! a union of sets seen on their own. What the first pass found settles
//! it: two of its communicators that each ended once without any kernel
//! of the other have parted, and members of one call never part — so a
//! set holding both is siblings coinciding, even when it looks coupled.
//! Those that never parted (one host's share of a job-wide all-reduce
//! and another's) stay one set.

use super::atoms::Seen;
use crate::analysis::clock::Alignment;
use std::collections::{BTreeSet, HashMap};

/// Ends of one call closer than this are never taken as two calls,
/// whatever the clocks' residuals (ns).
const APART_FLOOR_NS: i64 = 100_000;

/// How far apart two units' ends in one cluster can be and still be one
/// call on the clocks of `files` (ns): four times their worst residual
/// (p90), at least [`APART_FLOOR_NS`].
pub fn too_far_ns(clock: &Alignment, files: &[usize]) -> i64 {
    let worst_ms = files
        .iter()
        .filter_map(|&f| clock.residual_ms(f))
        .map(|s| s.p90)
        .fold(0.0, f64::max);
    ((4.0 * worst_ms * 1e6) as i64).max(APART_FLOOR_NS)
}

/// The units (indices) each track is in.
pub fn units_of_track(units: &[Vec<u32>], tracks: usize) -> Vec<Vec<usize>> {
    let mut of = vec![Vec::new(); tracks];
    for (u, set) in units.iter().enumerate() {
        for &t in set {
            if let Some(v) = of.get_mut(t as usize) {
                v.push(u);
            }
        }
    }
    of
}

/// Adds to `apart` the pairs of units wholly in `cluster` (its kernels'
/// tracks and ends) whose mean ends are more than `too_far` apart.
pub fn far_in(
    cluster: &[(u32, i64)],
    units: &[Vec<u32>],
    of_track: &[Vec<usize>],
    too_far: i64,
    apart: &mut BTreeSet<(usize, usize)>,
) {
    let mut sums: HashMap<usize, (i128, usize)> = HashMap::new();
    for &(t, end) in cluster {
        for &u in of_track.get(t as usize).map_or(&[][..], Vec::as_slice) {
            let e = sums.entry(u).or_default();
            *e = (e.0 + end as i128, e.1 + 1);
        }
    }
    let mut means: Vec<(usize, i128)> = sums
        .into_iter()
        .filter(|&(u, (_, n))| n == units[u].len())
        .map(|(u, (sum, n))| (u, sum / n as i128))
        .collect();
    means.sort_unstable();
    for (i, &(a, ea)) in means.iter().enumerate() {
        for &(b, eb) in &means[i + 1..] {
            if (ea - eb).abs() > too_far as i128 {
                apart.insert((a, b));
            }
        }
    }
}

/// Adds to `seen` (the sets one op's clusters showed) the communicators
/// the first pass found, `units` (track sets, sorted), each joined with
/// those it never parted from; a seen set holding two units that parted
/// is no longer coupled.
/// `apart` are pairs of units (indices into `units`, the smaller first)
/// seen in one cluster with ends further apart than one call's can be, or
/// told apart on their own host's clock.
pub fn add_units(seen: &mut Vec<Seen>, units: &[Vec<u32>], apart: &BTreeSet<(usize, usize)>) {
    // Units some seen set holds whole: the others show nothing here.
    let holds = |set: &[u32], u: &[u32]| u.iter().all(|t| set.binary_search(t).is_ok());
    let (given, units): (Vec<usize>, Vec<&[u32]>) = units
        .iter()
        .enumerate()
        .filter(|(_, u)| u.len() >= 2 && seen.iter().any(|s| holds(&s.tracks, u)))
        .map(|(i, u)| (i, u.as_slice()))
        .unzip();
    if units.len() < 2 {
        return;
    }
    let mut of_track: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, u) in units.iter().enumerate() {
        for &t in u.iter() {
            of_track.entry(t).or_default().push(i);
        }
    }
    // Per unit, the seen sets that hold it whole and those that touch it.
    let words = seen.len().div_ceil(64);
    let mut whole = vec![vec![0u64; words]; units.len()];
    let mut touched = vec![vec![0u64; words]; units.len()];
    let mut together: BTreeSet<(usize, usize)> = BTreeSet::new();
    let mut inside: Vec<Vec<usize>> = Vec::with_capacity(seen.len());
    for (k, s) in seen.iter().enumerate() {
        let mut count: HashMap<usize, usize> = HashMap::new();
        for t in &s.tracks {
            for &u in of_track.get(t).map_or(&[][..], Vec::as_slice) {
                *count.entry(u).or_default() += 1;
            }
        }
        let mut here: Vec<usize> = Vec::new();
        for (&u, &n) in &count {
            touched[u][k / 64] |= 1 << (k % 64);
            if n == units[u].len() {
                whole[u][k / 64] |= 1 << (k % 64);
                here.push(u);
            }
        }
        here.sort_unstable();
        for (i, &a) in here.iter().enumerate() {
            for &b in &here[i + 1..] {
                together.insert((a, b));
            }
        }
        inside.push(here);
    }
    // `a` ended once whole with nothing of `b`.
    let without = |a: usize, b: usize| whole[a].iter().zip(&touched[b]).any(|(w, t)| w & !t != 0);
    let far = |a: usize, b: usize| {
        let (x, y) = (given[a].min(given[b]), given[a].max(given[b]));
        apart.contains(&(x, y))
    };
    let parted = |a: usize, b: usize| (without(a, b) && without(b, a)) || far(a, b);
    let with = |a: usize, b: usize| together.contains(&(a.min(b), a.max(b)));
    // Two units that parted, both never parted from `z` with as many
    // streams as the two: a host's groups that parted there, exchanging
    // with a host whose groups never did — which of `z`'s streams
    // exchanged with which, the ends cannot tell; they are one group.
    let share = |z: usize, x: usize, y: usize| {
        z != x
            && z != y
            && with(z, x)
            && with(z, y)
            && !parted(z, x)
            && !parted(z, y)
            && units[z].len() >= units[x].len() + units[y].len()
    };
    let mut root: Vec<usize> = (0..units.len()).collect();
    // Joined only when no two of the joined parted: never parted with a
    // third is not being one communicator with each other.
    let mut members: Vec<Vec<usize>> = (0..units.len()).map(|u| vec![u]).collect();
    for &(a, b) in &together {
        let (ra, rb) = (
            super::forest::root(&mut root, a),
            super::forest::root(&mut root, b),
        );
        let all: Vec<usize> = members[ra].iter().chain(&members[rb]).copied().collect();
        if ra == rb
            || members[ra].iter().any(|&x| {
                members[rb]
                    .iter()
                    .any(|&y| parted(x, y) && !all.iter().any(|&z| share(z, x, y)))
            })
        {
            continue;
        }
        let (keep, gone) = (ra.min(rb), ra.max(rb));
        root[gone] = keep;
        let moved = std::mem::take(&mut members[gone]);
        members[keep].extend(moved);
    }
    // A set holding two units that parted is siblings coinciding, never
    // one communicator, however rarely it was seen and whatever else was
    // (a chance cluster of many hosts' groups is no union of sets seen).
    let siblings: Vec<bool> = inside
        .iter()
        .map(|here| {
            here.iter().enumerate().any(|(i, &a)| {
                here[i + 1..]
                    .iter()
                    .any(|&b| parted(a, b) && !here.iter().any(|&z| share(z, a, b)))
            })
        })
        .collect();
    *seen = std::mem::take(seen)
        .into_iter()
        .zip(siblings)
        .filter_map(|(s, siblings)| (!siblings).then_some(s))
        .collect();
    let mut joined: HashMap<usize, BTreeSet<u32>> = HashMap::new();
    for (i, u) in units.iter().enumerate() {
        let r = super::forest::root(&mut root, i);
        joined.entry(r).or_default().extend(u.iter().copied());
    }
    let mut sets: Vec<Vec<u32>> = joined
        .into_values()
        .map(|s| s.into_iter().collect())
        .collect();
    sets.sort();
    for tracks in sets {
        if !seen.iter().any(|s| s.tracks == tracks) {
            seen.push(Seen {
                tracks,
                count: 0,
                coupled: false,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::matching::atoms::communicators;
    use crate::analysis::matching::atoms::test_sets::{seen, sorted};

    /// The communicators of `s` once three hosts' shares {0,1}, {2,3},
    /// {4,5} of the first pass are added, nothing seen too far apart.
    fn with_three_shares(mut s: Vec<Seen>) -> Vec<Vec<u32>> {
        add_units(
            &mut s,
            &[vec![0, 1], vec![2, 3], vec![4, 5]],
            &BTreeSet::new(),
        );
        communicators(&s)
    }

    /// Three hosts' node-local groups in lockstep: every cluster holds two
    /// or three of them, none is ever seen alone, and one combination
    /// looks coupled (one host's group waited for a late rank and ended
    /// with another's).
    #[test]
    fn node_groups_in_lockstep_are_told_apart_by_the_first_pass() {
        let (a, b, c) = (vec![0, 1], vec![2, 3], vec![4, 5]);
        let mut s = vec![
            seen(&[0, 1, 2, 3], true),
            seen(&[2, 3, 4, 5], false),
            seen(&[0, 1, 4, 5], false),
        ];
        let without = sorted(communicators(&s));
        assert_ne!(
            without,
            vec![a.clone(), b.clone(), c.clone()],
            "the sets alone cannot tell"
        );
        add_units(&mut s, &[a.clone(), b.clone(), c.clone()], &BTreeSet::new());
        assert_eq!(sorted(communicators(&s)), vec![a, b, c]);
    }

    /// One job-wide all-reduce, each host's share a unit of the first
    /// pass: they always end together, so they stay one.
    #[test]
    fn shares_that_never_part_stay_one_communicator() {
        let s = vec![seen(&[0, 1, 2, 3, 4, 5], false)];
        assert_eq!(with_three_shares(s), vec![vec![0, 1, 2, 3, 4, 5]]);
    }

    /// A rank's kernel missing from one call does not part the hosts'
    /// shares: the share with the missing rank was touched.
    #[test]
    fn a_member_missing_does_not_part_the_shares() {
        let s = vec![
            seen(&[0, 1, 2, 3, 4, 5], false),
            seen(&[0, 1, 2, 4, 5], false),
        ];
        assert_eq!(with_three_shares(s), vec![vec![0, 1, 2, 3, 4, 5]]);
    }

    /// Two hosts' groups that parted (each ended once with none of the
    /// other's kernels, beside another call's) and coincided once, with a
    /// stray kernel no other set holds: that chance cluster is no union of
    /// sets seen, yet it holds two groups that parted, so it is siblings
    /// coinciding, not a communicator of many hosts.
    #[test]
    fn a_chance_cluster_of_groups_that_parted_is_no_communicator() {
        let mut s = vec![
            seen(&[0, 1, 8], false),
            seen(&[2, 3, 9], false),
            seen(&[0, 1, 2, 3, 5], false),
        ];
        add_units(&mut s, &[vec![0, 1], vec![2, 3]], &BTreeSet::new());
        let comms = communicators(&s);
        assert!(
            !comms.iter().any(|c| c.contains(&0) && c.contains(&2)),
            "{comms:?}"
        );
    }

    /// Two hosts' groups that always ended within the clustering's
    /// tolerance, but once further apart than one call's ends can be on
    /// these clocks: two communicators.
    #[test]
    fn groups_whose_ends_were_once_too_far_apart_are_two() {
        let mut s = vec![seen(&[0, 1, 2, 3], false)];
        let apart = BTreeSet::from([(0, 1)]);
        add_units(&mut s, &[vec![0, 1], vec![2, 3]], &apart);
        assert_eq!(sorted(communicators(&s)), vec![vec![0, 1], vec![2, 3]]);
    }

    /// Two groups of one host, told apart on its clock, each ended with a
    /// third host's group and never without it: the third may be one
    /// communicator with either, never the bridge that joins them.
    #[test]
    fn groups_one_host_told_apart_are_not_joined_through_a_third() {
        let mut s = vec![seen(&[0, 1, 4, 5], false), seen(&[2, 3, 4, 5], false)];
        let apart = BTreeSet::from([(0, 1)]);
        add_units(&mut s, &[vec![0, 1], vec![2, 3], vec![4, 5]], &apart);
        let comms = communicators(&s);
        assert!(
            !comms.iter().any(|c| c.contains(&0) && c.contains(&2)),
            "{comms:?}"
        );
    }

    /// A host's two groups of point-to-point streams told apart on its
    /// clock (units 0 and 1) always ended with the other stage's host,
    /// whose four streams never parted (unit 2): each of its streams
    /// exchanges with one of theirs, which with which the ends cannot
    /// tell, so the six are one group — not one part joined and the
    /// other left on its own.
    #[test]
    fn parts_of_one_host_share_a_partner_with_as_many_streams() {
        let mut s = vec![seen(&[0, 1, 2, 3, 4, 5, 6, 7], false)];
        let apart = BTreeSet::from([(0, 1)]);
        add_units(&mut s, &[vec![0, 1], vec![2, 3], vec![4, 5, 6, 7]], &apart);
        assert_eq!(communicators(&s), vec![vec![0, 1, 2, 3, 4, 5, 6, 7]]);
    }
}
