//! Start/end skew of matched collectives: who arrived first, who last, by
//! how much, and how much time the other ranks spent waiting.
//!
//! The longest NCCL kernel of an instance is usually the rank that waited;
//! the late arriver has the short one. Excess (duration above the fastest
//! rank) estimates waiting summed over ranks: it is not step time to win
//! back.

use super::clock::Alignment;
use super::matching::{Group, Matching};
use super::nccl_name::CollOp;
use super::stats::Spread;
use super::steps::Steps;
use super::window::Window;
use crate::profile::Profile;

/// Figures of one matched instance, over the ranks that have it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InstanceSkew {
    /// 0-based index in the group; the instance number is `index + 1`.
    pub index: usize,
    pub op: CollOp,
    /// How many of the group's devices have a kernel in it (the others'
    /// captures do not cover it).
    pub ranks: usize,
    pub earliest_start: i64,
    pub start_skew_ns: i64,
    pub end_skew_ns: i64,
    /// Index into the group's devices: latest start (ties: lowest device).
    pub late: usize,
    /// Index into the group's devices: earliest start (ties: lowest device).
    pub early: usize,
    /// Shortest duration among the ranks.
    pub baseline_ns: i64,
    pub total_ns: i64,
    pub max_duration_ns: i64,
    /// The start skew exceeds the clock error between the ranks' files.
    pub resolvable: bool,
    /// Some rank's kernel was still running when its capture ended: its
    /// end is the capture's, so the end skew says nothing (and is left out
    /// of the group's end figures).
    #[serde(default)]
    pub unfinished: bool,
    /// A member was recording when the others started it and never
    /// started it (a hang): `late` is that member, and `start_skew_ns` a
    /// lower bound, from the earliest start to that member's capture end
    /// (the skew was still open there). Left out of the group's spreads.
    #[serde(default)]
    pub open: bool,
}

impl InstanceSkew {
    /// When its late rank started (the reference clock).
    pub fn late_start(&self) -> i64 {
        self.earliest_start.saturating_add(self.start_skew_ns)
    }

    /// Σ (duration − baseline) over its ranks.
    pub fn excess_ns(&self) -> i64 {
        self.total_ns
            .saturating_sub(self.baseline_ns.saturating_mul(self.ranks as i64))
    }
}

/// Computes one instance's figures over the devices that have it; `None`
/// with fewer than two.
pub fn instance_skew(p: &Profile, g: &Group, index: usize) -> Option<InstanceSkew> {
    let m: Vec<(usize, (i64, i64))> = g.members(index).map(|(d, _, s)| (d, s)).collect();
    let unfinished = g
        .members(index)
        .any(|(_, r, _)| super::behind::still_running(p, r));
    if m.len() < 2 {
        return None;
    }
    // Saturating throughout: timestamps at the ends of the i64 range must
    // not wrap.
    let dur = |s: (i64, i64)| s.1.saturating_sub(s.0);
    // Devices are in order, so the first extreme found is the lowest device.
    let late = m
        .iter()
        .fold(m[0], |b, &x| if x.1.0 > b.1.0 { x } else { b });
    let early = m
        .iter()
        .fold(m[0], |b, &x| if x.1.0 < b.1.0 { x } else { b });
    let max_end = m.iter().map(|x| x.1.1).max().unwrap_or(0);
    let min_end = m.iter().map(|x| x.1.1).min().unwrap_or(0);
    let start_skew = late.1.0.saturating_sub(early.1.0);
    Some(InstanceSkew {
        index,
        op: g.ops[index],
        ranks: m.len(),
        earliest_start: early.1.0,
        start_skew_ns: start_skew,
        end_skew_ns: max_end.saturating_sub(min_end),
        late: late.0,
        early: early.0,
        baseline_ns: m.iter().map(|x| dur(x.1)).min().unwrap_or(0),
        total_ns: m.iter().map(|x| dur(x.1)).fold(0, i64::saturating_add),
        max_duration_ns: m.iter().map(|x| dur(x.1)).max().unwrap_or(0),
        unfinished,
        resolvable: start_skew > g.clocks.map_or(0, |c| c.uncertainty_ns),
        open: false,
    })
}

/// Member `d` of `g` lacks instance `k` although its capture had begun
/// and was still recording at `earliest` (the others' first start): it
/// never started it. Its capture end (reference clock) when so.
pub fn never_started(
    p: &Profile,
    g: &Group,
    clock: &Alignment,
    k: usize,
    d: usize,
    earliest: i64,
) -> Option<i64> {
    if g.captured[d].first > k + 1 || g.row(k, d).is_some() {
        return None;
    }
    clock
        .capture_end(p, p.lane_file(g.lanes[d]))
        .filter(|&end| end >= earliest)
}

/// `inst` as still open at capture end when a member of `g` whose capture
/// had begun was still recording at its earliest start and never started
/// it: the lowest such member is the one the others wait for.
pub fn still_open(
    p: &Profile,
    g: &Group,
    clock: &Alignment,
    mut inst: InstanceSkew,
) -> InstanceSkew {
    let k = inst.index;
    let missing = (0..g.devices.len())
        .find_map(|d| never_started(p, g, clock, k, d, inst.earliest_start).map(|end| (d, end)));
    if let Some((d, end)) = missing {
        inst.open = true;
        inst.late = d;
        inst.start_skew_ns = end.saturating_sub(inst.earliest_start);
        inst.resolvable = true;
    }
    inst
}

/// A big start-skew event.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BigEvent {
    pub instance: InstanceSkew,
    /// The late rank's step (numbered from 1): the one containing the late
    /// kernel's launch call (or, with no launch call, the instance's
    /// earliest start).
    pub step: Option<usize>,
    /// Earliest start of the instance − start of that step.
    pub offset_in_step_ns: Option<i64>,
    /// Every rank of one host arrived after every rank of the others.
    pub late_host: Option<LateHost>,
}

/// A node-level event: one host's ranks (at least two) all arrived later
/// than every rank of the other hosts, by more than the clock residual.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LateHost {
    /// Index into [`Profile::hosts`].
    pub host: u32,
    pub ranks: usize,
    /// The communicators it made late at once (1: this instance's alone).
    #[serde(default = "one")]
    pub communicators: usize,
    /// Part of a node event ([`crate::analysis::events::NodeEvent`]):
    /// the figures are the event's.
    #[serde(default)]
    pub node_event: bool,
    /// Its earliest rank's start − the latest start of the other hosts.
    pub margin_ns: i64,
}

fn one() -> usize {
    1
}

impl LateHost {
    /// The event as a phrase, the host by its text label, saying what the
    /// figure is (not a rank's start skew): `late host node17 (8 ranks)
    /// +12.500 ms after every other host's last start`.
    pub fn phrase(&self, p: &Profile) -> String {
        if self.node_event {
            let groups = match self.communicators {
                1 => "one group of communicators in lockstep".to_string(),
                n => format!("{n} groups"),
            };
            return format!(
                "node event: host {} held up {} of its ranks in {groups} at once, +{:.3} ms after the other hosts' last start",
                p.host_label(self.host),
                self.ranks,
                self.margin_ns as f64 / 1e6
            );
        }
        format!(
            "late host {} ({} ranks) +{:.3} ms after every other host's last start",
            p.host_label(self.host),
            self.ranks,
            self.margin_ns as f64 / 1e6
        )
    }
}

/// A host as named in JSON keys and late-host events (`#N` when two
/// hosts share a name).
pub fn host_name(p: &Profile, h: u32) -> String {
    let name = &p.hosts[h as usize];
    if p.hosts.iter().filter(|x| *x == name).count() > 1 {
        format!("{name}#{h}")
    } else {
        name.clone()
    }
}

/// The late host of instance `inst` of group `gi`: its node event's when
/// its big instance is part of one (the figures every screen gives that
/// event), else the instance's own.
pub fn late_host_in(
    p: &Profile,
    skews: &[GroupSkew],
    gi: usize,
    g: &Group,
    inst: &InstanceSkew,
) -> Option<LateHost> {
    skews
        .iter()
        .filter(|s| s.group == gi)
        .flat_map(|s| &s.big_events)
        .find(|b| b.instance.index == inst.index)
        .and_then(|b| b.late_host)
        .or_else(|| late_host(p, g, inst))
}

/// The late host of instance `inst`, if one host's ranks were all late.
pub fn late_host(p: &Profile, g: &Group, inst: &InstanceSkew) -> Option<LateHost> {
    let host = |d: usize| p.devices[g.devices[d] as usize].host;
    let late = host(inst.late);
    let starts: Vec<(u32, i64)> = g
        .members(inst.index)
        .map(|(d, _, s)| (host(d), s.0))
        .collect();
    let ranks = starts.iter().filter(|x| x.0 == late).count();
    if ranks < 2 || ranks == starts.len() {
        return None;
    }
    let first_of_late = starts.iter().filter(|x| x.0 == late).map(|x| x.1).min()?;
    let last_of_others = starts.iter().filter(|x| x.0 != late).map(|x| x.1).max()?;
    let margin_ns = first_of_late.saturating_sub(last_of_others);
    let residual = g.clocks.map_or(0, |c| c.uncertainty_ns);
    (margin_ns > residual).then_some(LateHost {
        host: late,
        ranks,
        communicators: 1,
        node_event: false,
        margin_ns,
    })
}

/// Figures of one group over the instances inside the window.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct GroupSkew {
    pub group: usize,
    pub instances: Vec<InstanceSkew>,
    pub start_skew_ms: Option<Spread>,
    pub end_skew_ms: Option<Spread>,
    pub nccl_total_ns: i64,
    pub baseline_ns: i64,
    pub big_threshold_ns: i64,
    pub big_events: Vec<BigEvent>,
    pub big_excess_ns: i64,
    pub other_excess_ns: i64,
    /// Per device of the group (parallel to `Group::devices`).
    pub late_counts: Vec<usize>,
    pub early_counts: Vec<usize>,
    /// Per device: its start − the instance's earliest start (0 when it
    /// was first), averaged over the instances it has a kernel in that are
    /// not big events; `None` when there are none.
    pub mean_lateness_ms_excluding_big: Vec<Option<f64>>,
}

/// A group's late/early counts and mean lateness summed up per host.
#[derive(Debug, Clone, PartialEq)]
pub struct HostFigures {
    /// Index into [`Profile::hosts`].
    pub host: u32,
    pub late: usize,
    pub early: usize,
    /// Mean over the host's ranks of their mean lateness.
    pub mean_lateness_ms_excluding_big: Option<f64>,
}

impl GroupSkew {
    /// The per-device figures summed up per host, in order of first device.
    pub fn by_host(&self, p: &Profile, g: &Group) -> Vec<HostFigures> {
        let mut out: Vec<HostFigures> = Vec::new();
        let mut lateness: Vec<Vec<f64>> = Vec::new();
        for (d, &dev) in g.devices.iter().enumerate() {
            let host = p.devices[dev as usize].host;
            let i = match out.iter().position(|h| h.host == host) {
                Some(i) => i,
                None => {
                    out.push(HostFigures {
                        host,
                        late: 0,
                        early: 0,
                        mean_lateness_ms_excluding_big: None,
                    });
                    lateness.push(Vec::new());
                    out.len() - 1
                }
            };
            out[i].late += self.late_counts[d];
            out[i].early += self.early_counts[d];
            if let Some(m) = self.mean_lateness_ms_excluding_big[d] {
                lateness[i].push(m);
            }
        }
        for (h, l) in out.iter_mut().zip(lateness) {
            h.mean_lateness_ms_excluding_big =
                (!l.is_empty()).then(|| l.iter().sum::<f64>() / l.len() as f64);
        }
        out
    }

    pub fn excess_ns(&self) -> i64 {
        self.nccl_total_ns.saturating_sub(self.baseline_ns)
    }

    pub fn excess_pct(&self) -> Option<f64> {
        (self.nccl_total_ns > 0)
            .then(|| 100.0 * self.excess_ns() as f64 / self.nccl_total_ns as f64)
    }
}

/// Whether every kernel of the instance lies inside the window.
/// (on the reference clock).
pub fn instance_in_window(g: &Group, k: usize, w: Window) -> bool {
    g.members(k).all(|(_, _, (s, e))| w.contains(s, e))
}

/// Skew of every group, over instances wholly inside `w`.
pub fn skew(
    p: &Profile,
    m: &Matching,
    steps: &Steps,
    w: Window,
    big_threshold_ns: i64,
    clock: &Alignment,
) -> Vec<GroupSkew> {
    m.groups
        .iter()
        .enumerate()
        .map(|(gi, g)| group_skew(p, gi, g, steps, w, big_threshold_ns, clock))
        .collect()
}

fn group_skew(
    p: &Profile,
    gi: usize,
    g: &Group,
    steps: &Steps,
    w: Window,
    big_threshold_ns: i64,
    clock: &Alignment,
) -> GroupSkew {
    let n = g.devices.len();
    // Each instance on its own: a large group's on every core.
    let instances: Vec<InstanceSkew> = super::chunks::map_chunks(g.instances(), 8192, |ks| {
        ks.filter(|&k| instance_in_window(g, k, w))
            .filter_map(|k| instance_skew(p, g, k))
            .map(|i| still_open(p, g, clock, i))
            .collect()
    });
    let mut out = GroupSkew {
        group: gi,
        start_skew_ms: Spread::of(
            instances
                .iter()
                .filter(|i| !i.open)
                .map(|i| i.start_skew_ns as f64 / 1e6),
        ),
        end_skew_ms: Spread::of(
            instances
                .iter()
                .filter(|i| !i.unfinished)
                .map(|i| i.end_skew_ns as f64 / 1e6),
        ),
        nccl_total_ns: instances
            .iter()
            .map(|i| i.total_ns)
            .fold(0, i64::saturating_add),
        baseline_ns: instances
            .iter()
            .map(|i| i.baseline_ns.saturating_mul(i.ranks as i64))
            .fold(0, i64::saturating_add),
        big_threshold_ns,
        big_events: Vec::new(),
        big_excess_ns: 0,
        other_excess_ns: 0,
        late_counts: vec![0; n],
        early_counts: vec![0; n],
        mean_lateness_ms_excluding_big: vec![None; n],
        instances: Vec::new(),
    };
    let mut lateness_sum = vec![0i64; n];
    // Per device: the small instances it has a kernel in.
    let mut small = vec![0usize; n];
    for inst in &instances {
        out.late_counts[inst.late] += 1;
        out.early_counts[inst.early] += 1;
        if inst.start_skew_ns > big_threshold_ns {
            out.big_excess_ns = out.big_excess_ns.saturating_add(inst.excess_ns());
            let (step, offset) = step_of(p, g, inst, steps, clock);
            out.big_events.push(BigEvent {
                instance: inst.clone(),
                step,
                offset_in_step_ns: offset,
                late_host: late_host(p, g, inst),
            });
        } else {
            out.other_excess_ns = out.other_excess_ns.saturating_add(inst.excess_ns());
            for (d, _, span) in g.members(inst.index) {
                small[d] += 1;
                lateness_sum[d] =
                    lateness_sum[d].saturating_add(span.0.saturating_sub(inst.earliest_start));
            }
        }
    }
    for d in 0..n {
        if small[d] > 0 {
            out.mean_lateness_ms_excluding_big[d] =
                Some(lateness_sum[d] as f64 / small[d] as f64 / 1e6);
        }
    }
    out.instances = instances;
    out
}

/// The late rank's step containing the late kernel's launch call (or, with
/// no launch call, the instance's earliest start), all on the reference
/// clock.
fn step_of(
    p: &Profile,
    g: &Group,
    inst: &InstanceSkew,
    steps: &Steps,
    clock: &Alignment,
) -> (Option<usize>, Option<i64>) {
    let Some(row) = g.row(inst.index, inst.late) else {
        return (None, None);
    };
    match steps.of_kernel(p, clock, row, inst.earliest_start) {
        Some((step, step_start)) => (
            Some(step),
            Some(inst.earliest_start.saturating_sub(step_start)),
        ),
        None => (None, None),
    }
}
