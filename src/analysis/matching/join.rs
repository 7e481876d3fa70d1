//! Joining what one clock showed with what the others showed: each clock
//! domain's communicators (found from their ends) and its streams no end
//! evidence placed are units. Units of different domains are one
//! communicator when their ends differ by one line at every instance
//! ([`super::across`]: partners, joined tightest first, one unit per
//! domain). A unit whose ends meet no other domain's unit's at all (no
//! UTC stamp, nothing near in time, or ends that never coincide, as a tree
//! all-reduce's across nodes) is joined as streams always were: by stream
//! id, else by the longest run of ops they agree on — but a communicator
//! found from its ends in one domain whose only matches elsewhere part
//! from it (siblings: the same offset most of the time, not always) stays
//! apart. Within one domain the ends have decided: two communicators found
//! there are never joined.

use super::across::{Link, Pairing, agreeing_parts, plausible};
use super::forest::root;
use super::unit::Unit;
use crate::analysis::nccl_streams::common_run;
use crate::profile::{DevId, LaneId};
use std::collections::{BTreeMap, HashMap};

/// Units joined across domains, each cluster holding two or more devices,
/// with whether its units were joined by their ends; the lanes of units
/// left alone. `links` are [`super::across::links`] and
/// [`super::partners::partial_links`] of the units, `agree` which of them
/// [`super::across::agreeing`] keeps. A unit with a partner in part (a
/// middle pipeline stage's exchanges with two hosts) is left out: its
/// kernels are in its exchanges ([`super::partners::exchanges`]), and
/// joining it by stream id would pair exchanges that never happened.
pub fn join(
    units: Vec<Unit>,
    order: &HashMap<DevId, usize>,
    links: &[Link],
    agree: &[bool],
    component: &Components,
) -> (Vec<(Vec<Unit>, bool)>, Vec<LaneId>) {
    // Ends that wander say "not one communicator" only between hosts
    // whose clocks partners tie to each other: on UTC alone a tree
    // all-reduce's ends wander as much (they never coincide across nodes).
    let tied = tied_hosts(links, agree);
    let mut judged = vec![false; units.len()];
    for (l, &ok) in links.iter().zip(agree) {
        if ok || tied(l.domains.0) == tied(l.domains.1) {
            (judged[l.a], judged[l.b]) = (true, true);
        }
    }
    let in_part = component.in_part(links, agree);
    let component = &component.root;
    let mut by_ends: BTreeMap<usize, Vec<Unit>> = BTreeMap::new();
    let mut rest: Vec<Unit> = Vec::new();
    let mut apart: Vec<Unit> = Vec::new();
    let sizes = {
        let mut n: HashMap<usize, usize> = HashMap::new();
        for &c in component {
            *n.entry(c).or_default() += 1;
        }
        n
    };
    for (i, u) in units.into_iter().enumerate() {
        if in_part[i] {
            // its kernels are in its component's exchanges
        } else if sizes[&component[i]] > 1 {
            by_ends.entry(component[i]).or_default().push(u);
        } else if u.by_ends && judged[i] {
            apart.push(u);
        } else {
            rest.push(u);
        }
    }
    let mut out: Vec<(Vec<Unit>, bool)> = by_ends.into_values().map(|c| (c, true)).collect();
    out.extend(apart.into_iter().map(|u| (vec![u], false)));
    let (clusters, alone) = by_streams(rest, order);
    out.extend(clusters.into_iter().map(|c| (c, false)));
    out.retain(|(c, _)| c.iter().map(|u| u.seqs.len()).sum::<usize>() >= 2);
    (out, alone)
}

/// Each host (domain) mapped to a representative of the hosts the
/// agreeing partner links connect it with.
fn tied_hosts(links: &[Link], agree: &[bool]) -> impl Fn(usize) -> usize {
    let mut parent: HashMap<usize, usize> = HashMap::new();
    fn find(parent: &HashMap<usize, usize>, mut x: usize) -> usize {
        while let Some(&p) = parent.get(&x) {
            if p == x {
                break;
            }
            x = p;
        }
        x
    }
    for (l, _) in links.iter().zip(agree).filter(|(_, ok)| **ok) {
        let (a, b) = (find(&parent, l.domains.0), find(&parent, l.domains.1));
        if a != b {
            parent.insert(a.max(b), a.min(b));
        }
    }
    move |d| find(&parent, d)
}

/// The units whole partners join: each unit's component (a unit of it)
/// and its instance numbering against the component's
/// ([`Components::root_index`]).
#[derive(Debug, Clone)]
pub struct Components {
    pub root: Vec<usize>,
    /// Unit `u`'s instance `i` is its component's instance `i - offset[u]`.
    offset: Vec<i64>,
}

impl Components {
    /// Joins units by agreeing whole partner links, tightest first.
    pub fn of(units: &[Unit], links: &[Link], agree: &[bool]) -> Components {
        let root = by_partners(units, links, agree);
        // Each unit's offset from its root along the joining links.
        let mut offset: Vec<Option<i64>> = (0..units.len())
            .map(|u| (root[u] == u).then_some(0))
            .collect();
        loop {
            let mut changed = false;
            for (l, _) in links.iter().zip(agree).filter(|(_, ok)| **ok) {
                let Pairing::Shift(shift) = l.pairing else {
                    continue;
                };
                if root[l.a] != root[l.b] {
                    continue;
                }
                match (offset[l.a], offset[l.b]) {
                    (Some(a), None) => offset[l.b] = Some(a + shift),
                    (None, Some(b)) => offset[l.a] = Some(b - shift),
                    _ => continue,
                }
                changed = true;
            }
            if !changed {
                break;
            }
        }
        Components {
            root,
            offset: offset.into_iter().map(|o| o.unwrap_or(0)).collect(),
        }
    }

    /// Unit `u`'s component and the component's instance that is `u`'s
    /// instance `i`.
    pub fn root_index(&self, u: usize, i: i64) -> (usize, i64) {
        (self.root[u], i - self.offset[u])
    }

    /// The units of component `r` with each one's instance that is the
    /// component's instance `i`.
    pub fn members_at(&self, r: usize, i: i64) -> impl Iterator<Item = (usize, i64)> + '_ {
        (0..self.root.len())
            .filter(move |&v| self.root[v] == r)
            .map(move |v| (v, i + self.offset[v]))
    }

    /// Units whose component has an agreeing partner in part: its
    /// kernels go to exchanges.
    pub fn in_part(&self, links: &[Link], agree: &[bool]) -> Vec<bool> {
        let mut roots = std::collections::HashSet::new();
        for (l, _) in agreeing_parts(links, agree) {
            roots.insert(self.root[l.a]);
            roots.insert(self.root[l.b]);
        }
        self.root.iter().map(|r| roots.contains(r)).collect()
    }
}

/// Each unit's component when partner links are joined tightest first,
/// never two units of one domain or one device in a component.
fn by_partners(units: &[Unit], links: &[Link], agree: &[bool]) -> Vec<usize> {
    let mut parent: Vec<usize> = (0..units.len()).collect();
    // (domains, devices) of each component, by its root.
    let mut domains: Vec<Vec<usize>> = units.iter().map(|u| vec![u.domain]).collect();
    let mut devices: Vec<Vec<DevId>> = units.iter().map(|u| u.devices().collect()).collect();
    let mut order: Vec<&Link> = links
        .iter()
        .zip(agree)
        .filter(|(l, ok)| **ok && matches!(l.pairing, Pairing::Shift(_)))
        .map(|(l, _)| l)
        .collect();
    // A drift no clock has joins last: the clock fit refuses it.
    order.sort_by(|x, y| {
        (!plausible(x), x.tail_ns)
            .partial_cmp(&(!plausible(y), y.tail_ns))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then((x.a, x.b).cmp(&(y.a, y.b)))
    });
    for l in order {
        let (ra, rb) = (root(&mut parent, l.a), root(&mut parent, l.b));
        if ra == rb
            || domains[ra].iter().any(|d| domains[rb].contains(d))
            || devices[ra].iter().any(|d| devices[rb].contains(d))
        {
            continue;
        }
        let (keep, gone) = (ra.min(rb), ra.max(rb));
        parent[gone] = keep;
        let moved = std::mem::take(&mut domains[gone]);
        domains[keep].extend(moved);
        let moved = std::mem::take(&mut devices[gone]);
        devices[keep].extend(moved);
    }
    (0..units.len()).map(|i| root(&mut parent, i)).collect()
}

/// Units joined as streams always were: by stream id, else by the longest
/// run of ops they agree on.
fn by_streams(units: Vec<Unit>, order: &HashMap<DevId, usize>) -> (Vec<Vec<Unit>>, Vec<LaneId>) {
    let mut by_stream: BTreeMap<Option<u32>, Vec<Unit>> = BTreeMap::new();
    for u in units {
        by_stream.entry(u.stream()).or_default().push(u);
    }
    let mut clusters: Vec<Vec<Unit>> = Vec::new();
    let mut leftover: Vec<Unit> = Vec::new();
    for (stream, members) in by_stream {
        if stream.is_none() || !joinable(&members) {
            leftover.extend(members);
            continue;
        }
        clusters.push(members);
    }
    // Longest first, then device order: a long sequence is the better reference.
    leftover.sort_by_key(|u| {
        let r = u.reference();
        (std::cmp::Reverse(r.ops.len()), order[&r.device], r.stream)
    });
    for u in leftover {
        let best = clusters
            .iter()
            .enumerate()
            .filter(|(_, c)| fits(c, &u))
            .map(|(i, c)| {
                let r = c[0].reference();
                (common_run(&r.ops, &u.reference().ops), i, r.ops.len())
            })
            .filter(|&(run, _, len)| run >= 1 && 2 * run >= len.min(u.reference().ops.len()))
            .max_by_key(|&(run, i, _)| (run, std::cmp::Reverse(i)));
        match best {
            Some((_, i, _)) => clusters[i].push(u),
            None => clusters.push(vec![u]),
        }
    }
    let mut alone = Vec::new();
    clusters.retain(|c| {
        let devices: usize = c.iter().map(|u| u.seqs.len()).sum();
        if devices < 2 {
            alone.extend(c.iter().flat_map(|u| u.seqs.iter().map(|s| s.lane)));
        }
        devices >= 2
    });
    (clusters, alone)
}

/// Whether units sharing a stream id can all be one communicator: their
/// devices distinct, and no domain with two communicators found from
/// ends among them (which of another domain's would join which is
/// unknown), nor a stream of a domain whose communicator the ends found.
fn joinable(units: &[Unit]) -> bool {
    let mut devs: Vec<DevId> = units.iter().flat_map(Unit::devices).collect();
    devs.sort_unstable();
    let distinct = devs.windows(2).all(|w| w[0] != w[1]);
    let mut ends_per_domain: BTreeMap<usize, usize> = BTreeMap::new();
    for u in units.iter().filter(|u| u.by_ends) {
        *ends_per_domain.entry(u.domain).or_default() += 1;
    }
    let apart = units
        .iter()
        .any(|u| !u.by_ends && ends_per_domain.contains_key(&u.domain));
    distinct && devs.len() >= 2 && ends_per_domain.values().all(|&n| n <= 1) && !apart
}

/// Whether unit `u` may join cluster `c`: no device in common, and never
/// beside a communicator its own domain's ends found.
fn fits(c: &[Unit], u: &Unit) -> bool {
    let disjoint = c
        .iter()
        .all(|m| m.devices().all(|d| u.devices().all(|e| e != d)));
    let same_domain_ends = c
        .iter()
        .any(|m| m.domain == u.domain && (m.by_ends || u.by_ends));
    disjoint && !same_domain_ends
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::nccl_name::CollOp::{self, *};

    use crate::analysis::nccl_streams::test_seq as seq;

    fn single(device: DevId, stream: u32, ops: &[CollOp]) -> Unit {
        Unit::single(seq(device, stream, ops), device as usize)
    }

    #[test]
    fn streams_pair_by_id_then_by_prefix() {
        let order: HashMap<DevId, usize> = (0..4).map(|d| (d, d as usize)).collect();
        let units = vec![
            single(0, 7, &[SendRecv, SendRecv, SendRecv]),
            single(1, 15, &[SendRecv, SendRecv, SendRecv]),
            single(0, 20, &[AllReduce, AllReduce]),
            single(1, 20, &[AllReduce, AllReduce]),
            single(2, 30, &[Broadcast]),
        ];
        let c = Components::of(&units, &[], &[]);
        let (clusters, alone) = join(units, &order, &[], &[], &c);
        assert_eq!(clusters.len(), 2);
        let streams: Vec<Vec<(DevId, u32)>> = clusters
            .iter()
            .map(|(c, _)| {
                c.iter()
                    .flat_map(|u| u.seqs.iter().map(|s| (s.device, s.stream)))
                    .collect()
            })
            .collect();
        assert!(streams.contains(&vec![(0, 20), (1, 20)]));
        assert!(streams.contains(&vec![(0, 7), (1, 15)]));
        assert_eq!(alone, vec![2]);
    }

    #[test]
    fn communicators_the_ends_found_in_one_domain_are_never_joined() {
        let order: HashMap<DevId, usize> = (0..4).map(|d| (d, d as usize)).collect();
        let ends = |a: DevId, b: DevId| Unit {
            seqs: vec![seq(a, 20, &[AllReduce]), seq(b, 20, &[AllReduce])],
            domain: 0,
            by_ends: true,
            lockstep_ambiguous: false,
        };
        let units = vec![ends(0, 1), ends(2, 3)];
        let c = Components::of(&units, &[], &[]);
        let (clusters, _) = join(units, &order, &[], &[], &c);
        assert_eq!(clusters.len(), 2);
    }
}
