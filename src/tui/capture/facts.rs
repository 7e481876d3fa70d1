//! What the views say about the selection, derived once when it changes
//! (never while drawing): its collective instance, the instance's skew as
//! the analyses measured it, the late rank's launch, a whole host that was
//! late, its bytes and bandwidth, and the one-line answer the status bar
//! shows.

use crate::analysis::bandwidth::{self, InstanceBandwidth};
use crate::analysis::bandwidth_n::BusN;
use crate::analysis::launch::{LateLaunch, explain_late};
use crate::analysis::matching::Group;
use crate::analysis::skew::{InstanceSkew, LateHost, instance_skew, late_host_in};
use crate::analysis::why::{Why, why_late};
use crate::profile::names::KernelNames;
use crate::tui::data::Loaded;
use crate::tui::selection::EventRef;
use crate::tui::timescale::{format_duration, short_duration};

/// The selection's facts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    /// (group, 0-based instance), when the selection is a matched
    /// collective.
    pub instance: Option<(usize, usize)>,
    /// The instance's skew, as the skew analysis has it.
    pub skew: Option<InstanceSkew>,
    /// Why the instance's late rank was late.
    pub late: Option<LateLaunch>,
    /// One host's ranks all arrived after the others'.
    pub late_host: Option<LateHost>,
    /// The late rank's delay, accounted part by part.
    pub account: Option<Why>,
    /// The instance's bytes and bandwidth, when NCCL recorded its size.
    pub bandwidth: Option<InstanceBandwidth>,
    /// N of its busbw and why, when it has figures.
    pub bus_n: Option<BusN>,
    /// The selection in one line: the answer with every panel closed.
    pub status: String,
    /// The same, short, the verdict before who was late, for a narrow
    /// status line: what gives way is never the verdict.
    pub status_short: String,
    /// A launch call selected: the first GPU work it launched, for the
    /// launch panel (found once here: a scan of every GPU row).
    pub launched: Option<usize>,
}

/// The first GPU work (by start) launch call `call` launched.
fn launched_by(l: &Loaded, call: usize) -> Option<usize> {
    let p = &l.profile;
    (0..p.gpu.len())
        .filter(|&i| p.gpu.launch(i) as usize == call)
        .min_by_key(|&i| p.gpu.start(i))
}

impl Facts {
    /// The facts of `selection` in `l`.
    pub fn of(l: &Loaded, selection: Option<EventRef>, names: KernelNames) -> Facts {
        let instance = match selection {
            Some(EventRef::Gpu(r)) => l.analysis.matching.instance_of(r),
            _ => None,
        };
        let Some((g, k)) = instance else {
            return Facts {
                status: event_status(l, selection, names),
                launched: match selection {
                    Some(EventRef::Api(call)) => launched_by(l, call),
                    _ => None,
                },
                ..Facts::default()
            };
        };
        let (p, a) = (&l.profile, &l.analysis);
        let group = &a.matching.groups[g];
        let Some(skew) = stored_skew(l, g, k).or_else(|| instance_skew(p, group, k)) else {
            // One rank's capture alone covers it: nothing to compare.
            return Facts {
                instance,
                status: format!(
                    "{} · instance {}/{} · {} · only one rank captured it",
                    group.key,
                    k + 1,
                    group.instances(),
                    group.ops[k]
                ),
                ..Facts::default()
            };
        };
        if skew.open {
            return open_facts(l, g, k, skew);
        }
        // A big event's late launch is explained by the launch analysis.
        let late = a
            .launch
            .late
            .iter()
            .find(|x| x.group == g && x.instance == k)
            .cloned()
            .unwrap_or_else(|| explain_late(p, &a.clock, &a.matching, g, &skew));
        let host = late_host_in(p, &a.skews, g, group, &skew);
        // A whole host late is the answer, not its latest rank.
        let late_rank = format!(
            "late {} +{}",
            p.device_label(group.devices[skew.late]).tag(),
            short_duration(skew.start_skew_ns)
        );
        let who = host.map_or_else(|| late_rank.clone(), |h| h.phrase(p));
        let status = format!(
            "{} · instance {}/{} · {} · {} · {}",
            group.key,
            k + 1,
            group.instances(),
            skew.op,
            who,
            late.verdict.name()
        );
        let who_short = match host {
            Some(h) => format!(
                "{} {} +{}",
                if h.node_event {
                    "node event"
                } else {
                    "late host"
                },
                p.host_label(h.host),
                short_duration(h.margin_ns)
            ),
            None => late_rank,
        };
        let status_short = format!(
            "{}:{} {} · {} · {who_short}",
            group.key,
            k + 1,
            skew.op,
            late.verdict.name()
        );
        let account = Some(why_late(p, &a.clock, &a.matching, g, &skew));
        let bandwidth = bandwidth::instance(group, k, skew.unfinished, &a.sizes);
        Facts {
            instance,
            bus_n: bus_n(l, group, bandwidth.as_ref()),
            bandwidth,
            skew: Some(skew),
            late: Some(late),
            late_host: host,
            account,
            status,
            status_short,
            launched: None,
        }
    }
}

/// The facts of an instance a rank never started (a hang): that rank is
/// the one the others wait for, by at least the time to its capture's end;
/// there is no launch to explain and no lateness from the ranks that did.
fn open_facts(l: &Loaded, g: usize, k: usize, skew: InstanceSkew) -> Facts {
    let (p, a) = (&l.profile, &l.analysis);
    let group = &a.matching.groups[g];
    let bandwidth = bandwidth::instance(group, k, skew.unfinished, &a.sizes);
    let who = format!(
        "{} never launched it · ≥{} open at capture end",
        p.device_label(group.devices[skew.late]).tag(),
        short_duration(skew.start_skew_ns)
    );
    Facts {
        instance: Some((g, k)),
        status: format!(
            "{} · instance {}/{} · {} · {who}",
            group.key,
            k + 1,
            group.instances(),
            skew.op
        ),
        status_short: format!("{}:{} {} · {who}", group.key, k + 1, skew.op),
        bus_n: bus_n(l, group, bandwidth.as_ref()),
        bandwidth,
        skew: Some(skew),
        ..Facts::default()
    }
}

/// The group's N, beside an instance's figures.
fn bus_n(l: &Loaded, group: &Group, figures: Option<&InstanceBandwidth>) -> Option<BusN> {
    figures.map(|_| BusN::of(&l.profile, group, &l.analysis.completeness))
}

/// The rank (index into the group's devices) that started instance `k`
/// of group `g` last; with one rank alone in it, that one.
pub fn late_rank(l: &Loaded, g: usize, k: usize) -> Option<usize> {
    let group = &l.analysis.matching.groups[g];
    match stored_skew(l, g, k).or_else(|| instance_skew(&l.profile, group, k)) {
        Some(s) => Some(s.late),
        None => group.members(k).next().map(|m| m.0),
    }
}

/// Instance `k` of group `g` as the skew analysis measured it.
fn stored_skew(l: &Loaded, g: usize, k: usize) -> Option<InstanceSkew> {
    let gs = l.analysis.skews.iter().find(|s| s.group == g)?;
    let at = gs.instances.binary_search_by_key(&k, |i| i.index).ok()?;
    Some(gs.instances[at].clone())
}

/// A single event's line: its name, where it ran and how long.
fn event_status(l: &Loaded, selection: Option<EventRef>, names: KernelNames) -> String {
    let p = &l.profile;
    match selection {
        Some(EventRef::Gpu(r)) => {
            let lane = &p.lanes[p.gpu.lane(r) as usize];
            format!(
                "{} · {} S{} · {}",
                p.strings.get(p.gpu.name_as(r, names)),
                p.device_label(lane.device).tag(),
                lane.stream,
                format_duration(p.gpu.end(r).saturating_sub(p.gpu.start(r)))
            )
        }
        Some(EventRef::Api(r)) => format!(
            "{} · T{} · {}",
            p.strings.get(p.runtime.name(r)),
            p.threads[p.runtime.thread(r) as usize].tid,
            format_duration(p.runtime.end(r).saturating_sub(p.runtime.start(r)))
        ),
        Some(EventRef::Nvtx(r)) => format!(
            "NVTX {} · T{} · {}",
            p.strings.get(p.nvtx.name(r)),
            p.threads[p.nvtx.thread(r) as usize].tid,
            format_duration(p.nvtx.end(r).saturating_sub(p.nvtx.start(r)))
        ),
        Some(EventRef::Osrt(r)) => format!(
            "OS {} · T{} · {}",
            p.strings.get(p.osrt.name(r)),
            p.threads[p.osrt.thread(r) as usize].tid,
            format_duration(p.osrt.end(r).saturating_sub(p.osrt.start(r)))
        ),
        Some(e @ (EventRef::Sched(_) | EventRef::Sample(_))) => {
            let (a, b) = crate::tui::capture::time::event_span(l, e);
            let (what, t) = match e {
                EventRef::Sched(r) => ("descheduled", p.sched.thread(r)),
                EventRef::Sample(r) => ("CPU sample", p.samples.thread(r)),
                _ => ("", 0),
            };
            format!(
                "{what} · T{} · {}",
                p.threads[t as usize].tid,
                format_duration(b.saturating_sub(a))
            )
        }
        None => String::new(),
    }
}
