//! Which sets of streams are communicators, from the sets that were seen
//! ending together.
//!
//! The kernels of one collective call end together on every member (the
//! last arrival releases all of them). Siblings — the same kind of
//! communicator in another replica, running in lockstep — often end just
//! as close, so one cluster of ends can hold several calls at once; but
//! siblings part whenever one of them is delayed and the other is not,
//! while the members of one call never part. So, per op, over the whole
//! capture:
//! - a set seen ending together that is the disjoint union of smaller
//!   sets also seen ending together (in any op: a communicator runs all
//!   its ops on one set of streams) is siblings coinciding, not a
//!   communicator — unless it is *coupled*: once, its members all waited
//!   for one late starter (the latest start alone, the others ending with
//!   it), which siblings cannot do;
//! - what is left are the communicators, except a set inside a larger one
//!   whose other members never end together on their own: that is the
//!   larger one with members missing (a desync, a kernel not captured).

use std::collections::HashMap;

/// A set of streams (track ids, sorted) seen ending together in clean
/// clusters of one op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub tracks: Vec<u32>,
    pub count: usize,
    /// At least one of those clusters shows its members waiting for one
    /// late starter.
    pub coupled: bool,
}

/// The communicators (track sets) the sets seen for one op show.
#[cfg(test)]
pub fn communicators(seen: &[Seen]) -> Vec<Vec<u32>> {
    communicators_given(seen, &[])
}

/// The sets of `sets` that never part in any of them: every set with one
/// of their streams holds all of them. Where streams carry one kind of
/// communicator only (a tensor-parallel group's own streams) those are
/// the sets each op can be read against; on streams several communicators
/// share, a pair seen in one op is parted by another's sets.
fn never_parted<'a>(sets: &[&'a [u32]]) -> Vec<&'a [u32]> {
    let index = Index::of(sets);
    sets.iter()
        .copied()
        .filter(|s| {
            let mut touching: Vec<usize> = s
                .iter()
                .flat_map(|t| index.by_track.get(t).into_iter().flatten().copied())
                .collect();
            touching.sort_unstable();
            touching.dedup();
            touching.iter().all(|&o| is_subset(s, sets[o]))
        })
        .collect()
}

/// The communicators the sets seen for one op show, where `elsewhere`
/// are the sets seen ending together in the other ops on these streams.
/// A communicator runs every op on one set of streams, so two groups that
/// parted in one op (a delay before a reduce-scatter) are two in every
/// op, though in another (the all-gathers) they never parted: a set the
/// other ops' sets that never part ([`never_parted`]) cover is left to
/// them. Not where another op's set reaches past it: its streams carry
/// other communicators too (one stream for TP, DP and PP), and which of
/// them the set is, its ends cannot tell.
pub fn communicators_given(seen: &[Seen], elsewhere: &[&[u32]]) -> Vec<Vec<u32>> {
    let own: Vec<&[u32]> = seen.iter().map(|s| s.tracks.as_slice()).collect();
    let index = Index::of(&own);
    // Own sets with the other ops' that never part, when there are any:
    // else the cover search would run twice over the same sets.
    let with_whole = (!elsewhere.is_empty())
        .then(|| {
            let mut all = own.clone();
            all.extend(elsewhere.iter().copied());
            let others: std::collections::HashSet<&[u32]> = elsewhere.iter().copied().collect();
            let whole: Vec<&[u32]> = never_parted(&all)
                .into_iter()
                .filter(|s| others.contains(s))
                .collect();
            (!whole.is_empty()).then(|| {
                let mut sets = own.clone();
                sets.extend(whole);
                Index::of(&sets)
            })
        })
        .flatten();
    let reached_past = |s: &[u32]| {
        elsewhere
            .iter()
            .any(|o| o.iter().any(|t| s.binary_search(t).is_ok()) && !is_subset(o, s))
    };
    let kept: Vec<&Seen> = seen
        .iter()
        .enumerate()
        .filter(|(i, s)| {
            let covered = index.covers(&s.tracks, Some(*i), true)
                || with_whole.as_ref().is_some_and(|w| {
                    w.covers(&s.tracks, Some(*i), true) && !reached_past(&s.tracks)
                });
            s.tracks.len() >= 2 && (s.coupled || !covered)
        })
        .map(|(_, s)| s)
        .collect();
    let kept = without_broken_unions(&kept, &own);
    let refined = split_overlaps(kept.iter().map(|s| s.to_vec()).collect(), &own);
    let mut kept: Vec<&[u32]> = refined.iter().map(Vec::as_slice).collect();
    kept.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let kept = without_chance_meetings(&kept, seen);
    // A set inside a kept larger one is that one with members missing,
    // unless the rest of the larger one is made of kept sets too (then the
    // larger one is a coupled union and both stand).
    let kept_index = Index::of(&kept);
    let mut out: Vec<Vec<u32>> = Vec::new();
    for (i, s) in kept.iter().enumerate() {
        let partial = kept[..i].iter().enumerate().any(|(j, big)| {
            big.len() > s.len() && is_subset(s, big) && {
                let rest: Vec<u32> = big.iter().copied().filter(|t| !s.contains(t)).collect();
                !kept_index.covers(&rest, Some(j), false)
            }
        });
        if !partial && !out.iter().any(|o| o.as_slice() == *s) {
            out.push(s.to_vec());
        }
    }
    out
}

/// `kept` (largest first) without the sets that are a communicator meeting
/// a stray kernel of another by chance: a set holding a kept set that was
/// seen more often than itself, where what it adds was seen ending with
/// partners outside it. Members of one call are missing only by accident
/// (a kernel not captured, a desync), not in most of its calls; and the
/// added streams were running calls of their own meanwhile. Among
/// hundreds of ranks in lockstep such meetings are common (a pipeline
/// pair of one node and one rank of another ending together once). A set
/// that once waited for one late starter stands.
fn without_chance_meetings<'a>(kept: &[&'a [u32]], seen: &[Seen]) -> Vec<&'a [u32]> {
    let of: HashMap<&[u32], &Seen> = seen.iter().map(|s| (s.tracks.as_slice(), s)).collect();
    let met = |big: &[u32]| {
        let Some(b) = of.get(big).filter(|b| !b.coupled) else {
            return false;
        };
        kept.iter().any(|small| {
            small.len() < big.len()
                && is_subset(small, big)
                && of.get(small).is_some_and(|s| s.count > b.count)
                && big
                    .iter()
                    .filter(|t| small.binary_search(t).is_err())
                    .all(|t| {
                        seen.iter().any(|o| {
                            o.tracks.binary_search(t).is_ok() && !is_subset(&o.tracks, big)
                        })
                    })
        })
    };
    kept.iter().copied().filter(|b| !met(b)).collect()
}

/// `kept` without the sets that are a lockstep union seen (of `seen`)
/// with members of one of its parts missing: one kernel of a group ended
/// apart from its fellows once (a node stall), and the rest ended with
/// a sibling group — seen once, that set is no communicator, though no
/// smaller sets cover it. It is: a kept set `p` shares streams with it,
/// neither holds the other, the rest of it is kept sets, and the two
/// together were seen. A set that once waited for one late starter
/// stands.
fn without_broken_unions<'a>(kept: &[&'a Seen], seen: &[&[u32]]) -> Vec<&'a [u32]> {
    let sets: Vec<&[u32]> = kept.iter().map(|s| s.tracks.as_slice()).collect();
    let index = Index::of(&sets);
    let seen: std::collections::HashSet<&[u32]> = seen.iter().copied().collect();
    let broken = |i: usize| {
        let s = sets[i];
        sets.iter().enumerate().any(|(j, p)| {
            j != i
                && p.iter().any(|t| s.binary_search(t).is_ok())
                && !is_subset(p, s)
                && !is_subset(s, p)
                && {
                    let rest: Vec<u32> = s
                        .iter()
                        .copied()
                        .filter(|t| p.binary_search(t).is_err())
                        .collect();
                    let mut union: Vec<u32> = s.iter().chain(p.iter()).copied().collect();
                    union.sort_unstable();
                    union.dedup();
                    seen.contains(union.as_slice()) && index.covers(&rest, Some(i), false)
                }
        })
    };
    (0..sets.len())
        .filter(|&i| kept[i].coupled || !broken(i))
        .map(|i| sets[i])
        .collect()
}

/// Two sets that share two or more streams, neither inside the other, may
/// be siblings that coincided with different partners at different times:
/// then what they share, and what each has alone, are the communicators —
/// when each of those parts never parts in what was seen (every set seen
/// with one of its streams holds all of it). A stream in both with other
/// partners in each (a pipeline's middle stage) fails that, and the two
/// stand.
fn split_overlaps(sets: Vec<Vec<u32>>, seen: &[&[u32]]) -> Vec<Vec<u32>> {
    // Whether a part never parts, once per part: thousands of seen sets
    // at hundreds of ranks.
    let mut whole_of: HashMap<Vec<u32>, bool> = HashMap::new();
    let mut whole = |part: &[u32]| -> bool {
        if let Some(&w) = whole_of.get(part) {
            return w;
        }
        let w = seen
            .iter()
            .filter(|s| part.iter().any(|t| s.binary_search(t).is_ok()))
            .all(|s| is_subset(part, s));
        whole_of.insert(part.to_vec(), w);
        w
    };
    // Each set by an id that stays with it: a pair refused once stays
    // refused while both stand, so only pairs with a new set are tried.
    let mut next = sets.len();
    let mut sets: Vec<(usize, Vec<u32>)> = sets.into_iter().enumerate().collect();
    let mut refused: std::collections::HashSet<(usize, usize)> = Default::default();
    loop {
        let mut found = None;
        'pairs: for i in 0..sets.len() {
            for j in i + 1..sets.len() {
                let ((ia, a), (ib, b)) = (&sets[i], &sets[j]);
                if refused.contains(&(*ia, *ib)) {
                    continue;
                }
                let both: Vec<u32> = a
                    .iter()
                    .copied()
                    .filter(|t| b.binary_search(t).is_ok())
                    .collect();
                if both.len() < 2 || both.len() == a.len() || both.len() == b.len() {
                    refused.insert((*ia, *ib));
                    continue;
                }
                let only_a: Vec<u32> = a
                    .iter()
                    .copied()
                    .filter(|t| b.binary_search(t).is_err())
                    .collect();
                let only_b: Vec<u32> = b
                    .iter()
                    .copied()
                    .filter(|t| a.binary_search(t).is_err())
                    .collect();
                let parts = [both, only_a, only_b];
                if parts.iter().all(|p| p.len() >= 2 && whole(p)) {
                    found = Some((i, j, parts));
                    break 'pairs;
                }
                refused.insert((*ia, *ib));
            }
        }
        let Some((i, j, parts)) = found else {
            return sets.into_iter().map(|(_, s)| s).collect();
        };
        sets.remove(j);
        sets.remove(i);
        for p in parts {
            if !sets.iter().any(|(_, s)| *s == p) {
                sets.push((next, p));
                next += 1;
            }
        }
        // In order of their tracks (refused pairs keep their ids).
        sets.sort_by(|x, y| x.1.cmp(&y.1));
    }
}

fn is_subset(small: &[u32], big: &[u32]) -> bool {
    small.iter().all(|t| big.binary_search(t).is_ok())
}

/// Sets by the tracks they hold, for exact covers.
struct Index<'a> {
    sets: Vec<&'a [u32]>,
    by_track: HashMap<u32, Vec<usize>>,
}

/// Steps an exact-cover search may take before it gives up (a set it
/// cannot show to be a union counts as not one).
const COVER_BUDGET: usize = 20_000;

impl<'a> Index<'a> {
    fn of(sets: &[&'a [u32]]) -> Index<'a> {
        let mut by_track: HashMap<u32, Vec<usize>> = HashMap::new();
        for (i, s) in sets.iter().enumerate() {
            for &t in s.iter() {
                by_track.entry(t).or_default().push(i);
            }
        }
        Index {
            sets: sets.to_vec(),
            by_track,
        }
    }

    /// Whether `target` is the disjoint union of sets of the index other
    /// than `except` (with `proper`, each strictly smaller than `target`).
    fn covers(&self, target: &[u32], except: Option<usize>, proper: bool) -> bool {
        if target.is_empty() {
            return true;
        }
        let mut left: Vec<u32> = target.to_vec();
        let mut budget = COVER_BUDGET;
        let limit = if proper { target.len() } else { usize::MAX };
        self.search(&mut left, limit, except, &mut budget)
    }

    /// Covers `left` with sets shorter than `limit`.
    fn search(
        &self,
        left: &mut Vec<u32>,
        limit: usize,
        except: Option<usize>,
        budget: &mut usize,
    ) -> bool {
        let Some(&first) = left.first() else {
            return true;
        };
        for &i in self.by_track.get(&first).map_or(&[][..], Vec::as_slice) {
            if *budget == 0 {
                return false;
            }
            *budget -= 1;
            let s = self.sets[i];
            if Some(i) == except || s.len() >= limit || !is_subset(s, left) {
                continue;
            }
            let before = left.clone();
            left.retain(|t| s.binary_search(t).is_err());
            if self.search(left, limit, except, budget) {
                return true;
            }
            *left = before;
        }
        false
    }
}

/// Sets seen, as the tests of the sets' readers write them.
#[cfg(test)]
pub(super) mod test_sets {
    use super::Seen;

    pub fn seen(tracks: &[u32], coupled: bool) -> Seen {
        Seen {
            tracks: tracks.to_vec(),
            count: 1,
            coupled,
        }
    }

    pub fn sorted(mut v: Vec<Vec<u32>>) -> Vec<Vec<u32>> {
        v.sort();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::test_sets::{seen, sorted};
    use super::*;

    #[test]
    fn siblings_that_part_once_are_two_communicators() {
        // Two pairs in lockstep, parted once by a delay.
        let s = [
            seen(&[0, 1, 2, 3], false),
            seen(&[0, 1], false),
            seen(&[2, 3], false),
        ];
        assert_eq!(sorted(communicators(&s)), vec![vec![0, 1], vec![2, 3]]);
    }

    #[test]
    fn siblings_that_part_in_another_op_are_two_communicators() {
        // Two TP groups of a node in lockstep: every all-gather of theirs
        // ended together, a delay before a reduce-scatter parted them.
        let all_gathers = [seen(&[0, 1, 2, 3], false)];
        let reduce_scatters: [&[u32]; 2] = [&[0, 1], &[2, 3]];
        assert!(communicators_given(&all_gathers, &reduce_scatters).is_empty());
        assert_eq!(communicators(&all_gathers), vec![vec![0, 1, 2, 3]]);
        // Once they all waited for one late rank, they are one.
        let coupled = [seen(&[0, 1, 2, 3], true)];
        assert_eq!(
            communicators_given(&coupled, &reduce_scatters),
            vec![vec![0, 1, 2, 3]]
        );
    }

    #[test]
    fn streams_other_communicators_share_are_not_read_across_ops() {
        // One stream per rank for TP {0,1}, {2,3}, DP {0,2}, {1,3} in
        // lockstep and PP {0,4}, {1,5}: the all-reduces' {0,1,2,3} may be
        // either pair of pairs.
        let all_reduces = [seen(&[0, 1, 2, 3], false)];
        let others: [&[u32]; 4] = [&[0, 1], &[2, 3], &[0, 1, 4, 5], &[2, 3, 6, 7]];
        assert_eq!(
            communicators_given(&all_reduces, &others),
            vec![vec![0, 1, 2, 3]]
        );
    }

    #[test]
    fn sets_parted_by_other_sets_on_their_streams_are_not_read_against() {
        // One stream per rank: TP {0,1}, {2,3}; embedding pair {0,2}.
        let sets: [&[u32]; 4] = [&[0, 1], &[2, 3], &[0, 2], &[4, 5]];
        assert_eq!(never_parted(&sets), vec![&[4, 5][..]]);
        let lockstep: [&[u32]; 3] = [&[0, 1], &[2, 3], &[0, 1, 2, 3]];
        assert_eq!(never_parted(&lockstep), vec![&[0, 1][..], &[2, 3][..]]);
    }

    #[test]
    fn a_lockstep_union_with_a_member_missing_is_no_communicator() {
        // Two groups of a node in lockstep; once, at a stall, stream 3's
        // kernel ended apart and the rest of its group with the other.
        let s = [
            seen(&[0, 1, 2, 3], false),
            seen(&[4, 5, 6, 7], false),
            seen(&[0, 1, 2, 3, 4, 5, 6, 7], false),
            seen(&[0, 1, 2, 4, 5, 6, 7], false),
        ];
        assert_eq!(
            sorted(communicators(&s)),
            vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]
        );
    }

    #[test]
    fn a_set_that_never_parts_is_one() {
        assert_eq!(
            communicators(&[seen(&[0, 1, 2, 3], false)]),
            vec![vec![0, 1, 2, 3]]
        );
    }

    #[test]
    fn a_coupled_union_stands_beside_its_parts() {
        // Grad-norm over {0,1,4,5} (once all waited for one late rank) and
        // the embedding pairs {0,4}, {1,5} on the same streams.
        let s = [
            seen(&[0, 1, 4, 5], true),
            seen(&[0, 4], false),
            seen(&[1, 5], false),
        ];
        assert_eq!(
            sorted(communicators(&s)),
            vec![vec![0, 1, 4, 5], vec![0, 4], vec![1, 5]]
        );
    }

    #[test]
    fn a_member_missing_is_the_whole_one() {
        // A desync: three ranks ran the op, the fourth another.
        let s = [seen(&[0, 1, 2, 3], false), seen(&[0, 1, 2], false)];
        assert_eq!(communicators(&s), vec![vec![0, 1, 2, 3]]);
    }

    #[test]
    fn a_pair_meeting_a_stray_kernel_once_is_still_the_pair() {
        // Pipeline pairs {0,1,2,3} ended together four times and once
        // with a kernel of 8, whose own exchanges {8,9,10,11} ran all along.
        let times = |tracks: &[u32], count| Seen {
            count,
            ..seen(tracks, false)
        };
        let s = [
            times(&[0, 1, 2, 3], 4),
            times(&[0, 1, 2, 3, 8], 1),
            times(&[8, 9, 10, 11], 5),
        ];
        assert_eq!(
            sorted(communicators(&s)),
            vec![vec![0, 1, 2, 3], vec![8, 9, 10, 11]]
        );
        // Seen whole more often than without 8, it is the whole with a
        // member missing (8 ran its other exchanges meanwhile).
        let s = [
            times(&[0, 1, 2, 3], 1),
            times(&[0, 1, 2, 3, 8], 4),
            times(&[8, 9, 10, 11], 5),
        ];
        assert!(communicators(&s).contains(&vec![0, 1, 2, 3, 8]));
    }

    #[test]
    fn siblings_seen_with_different_partners_are_told_apart() {
        // Exchanges {0,4}, {1,5}, {2,6}, {3,7}: {2,6} and {3,7} never
        // parted, and coincided once with {0,4}, once with {1,5}.
        let s = [
            seen(&[0, 2, 3, 4, 6, 7], false),
            seen(&[1, 2, 3, 5, 6, 7], false),
        ];
        assert_eq!(
            sorted(communicators(&s)),
            vec![vec![0, 4], vec![1, 5], vec![2, 3, 6, 7]]
        );
    }

    #[test]
    fn middle_stages_of_sibling_pipelines_are_not_split() {
        // Stage pairs 2-4 and 3-5 (never parted), 4-6 and 5-7 (never
        // parted), 0-2 and 1-3 (parted): 4 and 5 are middle stages.
        let s = [
            seen(&[0, 2], false),
            seen(&[1, 3], false),
            seen(&[0, 1, 2, 3], false),
            seen(&[2, 3, 4, 5], false),
            seen(&[4, 5, 6, 7], false),
        ];
        assert_eq!(
            sorted(communicators(&s)),
            vec![vec![0, 2], vec![1, 3], vec![2, 3, 4, 5], vec![4, 5, 6, 7]]
        );
    }

    #[test]
    fn pairs_of_a_pipeline_stand_alone() {
        // Stage pairs (0,2), (2,4) and the sibling pipeline's (1,3), (3,5).
        let s = [
            seen(&[0, 1, 2, 3], false),
            seen(&[0, 2], false),
            seen(&[1, 3], false),
            seen(&[2, 4], false),
            seen(&[3, 5], false),
            seen(&[2, 3, 4, 5], false),
        ];
        assert_eq!(
            sorted(communicators(&s)),
            vec![vec![0, 2], vec![1, 3], vec![2, 4], vec![3, 5]]
        );
    }
}
