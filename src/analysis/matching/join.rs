//! Joining what one clock showed with what the others showed: each clock
//! domain's communicators (found from their ends) and its streams no end
//! evidence placed are units; units of different domains that are one
//! communicator are joined by their stream id, else by the longest run of
//! ops they agree on. Within one domain the ends have already decided:
//! two communicators found there are never joined.

use super::streams::{Seq, common_run};
use crate::profile::{DevId, LaneId};
use std::collections::{BTreeMap, HashMap};

/// What one clock domain shows of one communicator.
#[derive(Debug)]
pub struct Unit {
    pub seqs: Vec<Seq>,
    pub domain: usize,
    /// Found from ends (two or more devices whose kernels end together).
    pub by_ends: bool,
    pub lockstep_ambiguous: bool,
}

impl Unit {
    /// A stream no end evidence placed, on its own.
    pub fn single(s: Seq, domain: usize) -> Unit {
        Unit {
            seqs: vec![s],
            domain,
            by_ends: false,
            lockstep_ambiguous: false,
        }
    }

    fn devices(&self) -> impl Iterator<Item = DevId> + '_ {
        self.seqs.iter().map(|s| s.device)
    }

    /// The stream id all its sequences run on, when they agree.
    fn stream(&self) -> Option<u32> {
        let first = self.seqs.first()?.stream;
        self.seqs.iter().all(|s| s.stream == first).then_some(first)
    }

    /// Its longest sequence: what others are compared with.
    fn reference(&self) -> &Seq {
        self.seqs
            .iter()
            .max_by_key(|s| s.ops.len())
            .expect("a unit has a sequence")
    }
}

/// Units joined across domains, each cluster holding two or more devices;
/// the lanes of units left alone.
pub fn join(units: Vec<Unit>, order: &HashMap<DevId, usize>) -> (Vec<Vec<Unit>>, Vec<LaneId>) {
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

    fn seq(device: DevId, stream: u32, ops: &[CollOp]) -> Seq {
        Seq {
            device,
            lane: device,
            stream,
            rows: (0..ops.len() as u32).collect(),
            ops: ops.to_vec(),
            keyless: Vec::new(),
        }
    }

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
        let (clusters, alone) = join(units, &order);
        assert_eq!(clusters.len(), 2);
        let streams: Vec<Vec<(DevId, u32)>> = clusters
            .iter()
            .map(|c| {
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
        let (clusters, _) = join(vec![ends(0, 1), ends(2, 3)], &order);
        assert_eq!(clusters.len(), 2);
    }
}
