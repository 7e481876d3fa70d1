//! Big instances as events: one rank's delay shows in every communicator
//! it holds up at that moment — its TP group, then the pipeline exchange
//! and the data-parallel bucket behind it — each a big instance of its own
//! group. N big instances on N groups at one time are one event: their
//! waits (each instance's earliest start to its late rank's start)
//! overlap. The event's origin is the late rank whose delay showed first
//! (the earliest late start); the others waited on it, directly or not.

use super::matching::Matching;
use super::skew::GroupSkew;
use crate::profile::DevId;

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
}

/// The events of the big instances of `skews`, by start.
pub fn events(m: &Matching, skews: &[GroupSkew]) -> Vec<Event> {
    // (wait start, late start, group, instance, late device, skew).
    let mut waits: Vec<(i64, i64, usize, usize, DevId, i64)> = skews
        .iter()
        .flat_map(|gs| {
            let g = &m.groups[gs.group];
            gs.big_events.iter().map(move |e| {
                let i = &e.instance;
                let late_start = i.earliest_start.saturating_add(i.start_skew_ns);
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
                });
                first_late.push(late_start);
            }
        }
    }
    out
}
