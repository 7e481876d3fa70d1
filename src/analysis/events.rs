//! Big instances as events: one rank's delay shows in every communicator
//! it holds up at that moment — its TP group, then the pipeline exchange
//! and the data-parallel bucket behind it — each a big instance of its own
//! group. N big instances on N groups at one time are one event: their
//! waits (each instance's earliest start to its late rank's start)
//! overlap. The event's origin is the late rank whose delay showed first
//! (the earliest late start); the others waited on it, directly or not.
//!
//! An event whose origin's host had two or more ranks late, showing in
//! several communicators, is a node event: the host held them all up at
//! once (a node-wide stall, a noisy neighbour), and late ranks on other
//! hosts waited on it (a pipeline passes the stall to its neighbours).
//! One late rank showing in its TP, PP and DP groups stays a rank event.

use super::matching::Matching;
use super::skew::{GroupSkew, LateHost};
use crate::profile::{DevId, Profile};

/// One event: big instances whose waits overlap in time.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The earliest start among its instances (reference clock).
    pub start_ns: i64,
    /// The latest late start among them.
    pub end_ns: i64,
    /// The late rank whose delay showed first.
    pub origin: DevId,
    /// The largest start skew among its instances.
    pub skew_ns: i64,
    /// (group, 0-based instance), by start.
    pub instances: Vec<(usize, usize)>,
    /// Every late rank among them, in first-seen order.
    pub late: Vec<DevId>,
    /// When its origin's host had two or more ranks late, over several
    /// communicators, and no rank held up the others inside it.
    pub node: Option<NodeEvent>,
}

/// One host holding up several communicators at once.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeEvent {
    /// Index into [`Profile::hosts`].
    pub host: u32,
    /// Its late ranks, by device.
    pub ranks: Vec<DevId>,
    /// The groups it made late (a group found in lockstep may hold
    /// several communicators).
    pub communicators: usize,
    /// The smallest, over its instances with members on other hosts, of
    /// the host's first start − the other hosts' last start.
    pub margin_ns: i64,
}

impl NodeEvent {
    /// The figure each of its big instances carries.
    pub fn late_host(&self) -> LateHost {
        LateHost {
            host: self.host,
            ranks: self.ranks.len(),
            communicators: self.communicators,
            margin_ns: self.margin_ns,
            node_event: true,
        }
    }
}

/// The events of the big instances of `skews`, by start.
pub fn events(p: &Profile, m: &Matching, skews: &[GroupSkew]) -> Vec<Event> {
    let mut out = waits_overlapping(m, skews);
    let held = Held {
        inside: inside_hosts(p, m, skews),
        waited: hosts_that_waited(p, m, skews),
    };
    for e in &mut out {
        e.node = node_event(p, m, e, &held);
    }
    one_per_stall(p, m, out, &held)
}

/// A node event of a host that follows that host's previous node event
/// before it could have caught up (within its own skew of the previous
/// one's end) is that stall again, in what came after it (the pipeline
/// exchanges, then the data-parallel reduction): one event.
fn one_per_stall(p: &Profile, m: &Matching, events: Vec<Event>, held: &Held) -> Vec<Event> {
    let mut out: Vec<Event> = Vec::with_capacity(events.len());
    for e in events {
        let Some(host) = e.node.as_ref().map(|n| n.host) else {
            out.push(e);
            continue;
        };
        let before = out.iter().rposition(|x| {
            x.node.as_ref().is_some_and(|n| n.host == host)
                && e.start_ns <= x.end_ns.saturating_add(e.skew_ns)
        });
        let Some(j) = before else {
            out.push(e);
            continue;
        };
        let x = &mut out[j];
        x.end_ns = x.end_ns.max(e.end_ns);
        x.skew_ns = x.skew_ns.max(e.skew_ns);
        x.instances.extend(e.instances);
        for d in e.late {
            if !x.late.contains(&d) {
                x.late.push(d);
            }
        }
        let node = node_event(p, m, x, held);
        x.node = node.or(x.node.take());
    }
    out
}

/// What held a host's ranks up other than the host itself.
struct Held {
    /// (host, late start, start skew): an instance inside the host that
    /// one of its ranks held up ([`inside_hosts`]).
    inside: Vec<(u32, i64, i64)>,
    /// (host, until): its ranks waited in a big instance for a rank of
    /// another host until then ([`hosts_that_waited`]).
    waited: Vec<(u32, i64)>,
}

/// (host, late start) for each host with ranks that waited in a big
/// instance whose late rank is on another host: a host that was itself
/// held up starts its next work late (a pipeline stage that got its
/// activations late sends its gradients late).
fn hosts_that_waited(p: &Profile, m: &Matching, skews: &[GroupSkew]) -> Vec<(u32, i64)> {
    let host_of = |d: DevId| p.devices[d as usize].host;
    let mut out = Vec::new();
    for gs in skews {
        let g = &m.groups[gs.group];
        for b in &gs.big_events {
            let i = &b.instance;
            let late_host = host_of(g.devices[i.late]);
            let until = i.late_start();
            for (d, _, _) in g.members(i.index) {
                let h = host_of(g.devices[d]);
                if h != late_host {
                    out.push((h, until));
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// (host, late start, start skew) of each instance whose members are all
/// on one host and one of them started late: it held up the others there.
fn inside_hosts(p: &Profile, m: &Matching, skews: &[GroupSkew]) -> Vec<(u32, i64, i64)> {
    let host_of = |d: DevId| p.devices[d as usize].host;
    skews
        .iter()
        .flat_map(|gs| {
            let g = &m.groups[gs.group];
            gs.instances.iter().filter_map(move |i| {
                if i.start_skew_ns <= 0 {
                    return None;
                }
                let mut hosts = g.members(i.index).map(|(d, _, _)| host_of(g.devices[d]));
                let first = hosts.next()?;
                hosts
                    .all(|h| h == first)
                    .then(|| (first, i.late_start(), i.start_skew_ns))
            })
        })
        .collect()
}

/// Marks every big instance of a node event with its host: the event's
/// figures, not the instance's own (a TP group inside the host, or a DP
/// group with one rank per host, cannot show a host on its own).
pub fn mark_node_events(p: &Profile, m: &Matching, skews: &mut [GroupSkew]) {
    for e in events(p, m, skews) {
        let Some(node) = &e.node else { continue };
        for &(g, k) in &e.instances {
            let big = skews
                .iter_mut()
                .filter(|s| s.group == g)
                .flat_map(|s| s.big_events.iter_mut())
                .find(|b| b.instance.index == k);
            if let Some(b) = big {
                b.late_host = Some(node.late_host());
            }
        }
    }
}

/// The node event `e` is, if two or more ranks of its origin's host were
/// late, over the instances whose late rank is on that host (late ranks
/// elsewhere waited on it: a pipeline passes a stage's stall on to the
/// stages beside it); that host started after every other host's ranks
/// in those instances (beyond the clocks' residual); no instance inside
/// the host was held up by one of its ranks with it or just before, nor
/// did its ranks wait for another host just before; and those instances
/// are of two or more groups — or of one group that may hold several
/// communicators in lockstep.
fn node_event(p: &Profile, m: &Matching, e: &Event, held: &Held) -> Option<NodeEvent> {
    let host_of = |d: DevId| p.devices[d as usize].host;
    let host = host_of(e.origin);
    let own: Vec<(usize, usize)> = e
        .instances
        .iter()
        .copied()
        .filter(|&(g, k)| {
            let g = &m.groups[g];
            g.members(k)
                .max_by_key(|x| x.2.0)
                .is_some_and(|(d, _, _)| host_of(g.devices[d]) == host)
        })
        .collect();
    // An instance inside the host that one of its ranks held up by half
    // the event's skew or more, in the event or just before it (as long
    // before as the event's ranks were held up): that rank held up the
    // others there (its TP group), not the host all its ranks.
    let held_inside = held.inside.iter().any(|&(h, t, skew)| {
        h == host
            && 2 * skew >= e.skew_ns
            && t >= e.start_ns.saturating_sub(e.skew_ns)
            && t <= e.end_ns
    });
    let mut groups: Vec<usize> = own.iter().map(|x| x.0).collect();
    groups.sort_unstable();
    groups.dedup();
    // Its ranks waited for another host just before they were late: the
    // lateness came to the host, it did not start there.
    let first_late = own
        .iter()
        .filter_map(|&(g, k)| {
            let g = &m.groups[g];
            g.members(k).map(|x| x.2.0).max()
        })
        .min()
        .unwrap_or(e.start_ns);
    let waited = held
        .waited
        .iter()
        .any(|&(h, t)| h == host && t >= e.start_ns.saturating_sub(e.skew_ns) && t < first_late);
    if held_inside
        || waited
        || groups.len() < 2 && !groups.iter().any(|&g| m.groups[g].lockstep_ambiguous)
    {
        return None;
    }
    let mut ranks: Vec<DevId> = e
        .late
        .iter()
        .copied()
        .filter(|&d| host_of(d) == host)
        .collect();
    let mut margin: Option<i64> = None;
    let mut residual = 0;
    for &(g, k) in &own {
        let g = &m.groups[g];
        residual = residual.max(g.clocks.map_or(0, |c| c.uncertainty_ns));
        let starts: Vec<(DevId, bool, i64)> = g
            .members(k)
            .map(|(d, _, s)| (g.devices[d], host_of(g.devices[d]) == host, s.0))
            .collect();
        let others = starts.iter().filter(|x| !x.1).map(|x| x.2).max();
        let mine = starts.iter().filter(|x| x.1).map(|x| x.2).min();
        if let (Some(a), Some(b)) = (mine, others) {
            let d = a.saturating_sub(b);
            margin = Some(margin.map_or(d, |m: i64| m.min(d)));
            // every rank of the host here started after the others
            ranks.extend(starts.iter().filter(|x| x.1).map(|x| x.0));
        }
    }
    ranks.sort_unstable();
    ranks.dedup();
    // Without another host in any instance nothing shows the host late
    // against the others; a host that did not start after them is not
    // the one that held them up (nor, under the clocks' residual, one
    // that can be told).
    let margin_ns = margin.filter(|&m| m > residual.max(0))?;
    (ranks.len() >= 2).then_some(NodeEvent {
        host,
        ranks,
        communicators: groups.len(),
        margin_ns,
    })
}

/// Big instances grouped by overlapping waits.
fn waits_overlapping(m: &Matching, skews: &[GroupSkew]) -> Vec<Event> {
    // (wait start, late start, group, instance, late device, skew).
    let mut waits: Vec<(i64, i64, usize, usize, DevId, i64)> = skews
        .iter()
        .flat_map(|gs| {
            let g = &m.groups[gs.group];
            gs.big_events.iter().map(move |e| {
                let i = &e.instance;
                let late_start = i.late_start();
                (
                    i.earliest_start,
                    late_start,
                    gs.group,
                    i.index,
                    g.devices[i.late],
                    i.start_skew_ns,
                )
            })
        })
        .collect();
    waits.sort_unstable();
    let mut out: Vec<Event> = Vec::new();
    // The late start of the event's first delay, to pick its origin.
    let mut first_late: Vec<i64> = Vec::new();
    for (start, late_start, group, instance, late, skew) in waits {
        match out.last_mut() {
            Some(e) if start <= e.end_ns => {
                e.end_ns = e.end_ns.max(late_start);
                e.skew_ns = e.skew_ns.max(skew);
                e.instances.push((group, instance));
                if !e.late.contains(&late) {
                    e.late.push(late);
                }
                let f = first_late.last_mut().expect("one per event");
                if late_start < *f {
                    *f = late_start;
                    e.origin = late;
                }
            }
            _ => {
                out.push(Event {
                    start_ns: start,
                    end_ns: late_start,
                    origin: late,
                    skew_ns: skew,
                    instances: vec![(group, instance)],
                    late: vec![late],
                    node: None,
                });
                first_late.push(late_start);
            }
        }
    }
    out
}
