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
use crate::profile::{NONE, Profile};

/// Figures of one matched instance.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InstanceSkew {
    /// 0-based index in the group; the instance number is `index + 1`.
    pub index: usize,
    pub op: CollOp,
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
}

impl InstanceSkew {
    /// Σ (duration − baseline) over ranks.
    pub fn excess_ns(&self, ranks: usize) -> i64 {
        self.total_ns
            .saturating_sub(self.baseline_ns.saturating_mul(ranks as i64))
    }
}

/// Computes one instance's figures.
pub fn instance_skew(_p: &Profile, g: &Group, index: usize) -> InstanceSkew {
    let times = g.instance_times(index);
    let start = |d: usize| times[d].0;
    let end = |d: usize| times[d].1;
    // Saturating throughout: timestamps at the ends of the i64 range must
    // not wrap.
    let dur = |d: usize| end(d).saturating_sub(start(d));
    let n = times.len();
    // Devices are in order, so the first extreme found is the lowest device.
    let late = (0..n).fold(0, |best, d| if start(d) > start(best) { d } else { best });
    let early = (0..n).fold(0, |best, d| if start(d) < start(best) { d } else { best });
    let max_end = (0..n).map(end).max().unwrap_or(0);
    let min_end = (0..n).map(end).min().unwrap_or(0);
    InstanceSkew {
        index,
        op: g.ops[index],
        earliest_start: start(early),
        start_skew_ns: start(late).saturating_sub(start(early)),
        end_skew_ns: max_end.saturating_sub(min_end),
        late,
        early,
        baseline_ns: (0..n).map(dur).min().unwrap_or(0),
        total_ns: (0..n).map(dur).fold(0, i64::saturating_add),
        max_duration_ns: (0..n).map(dur).max().unwrap_or(0),
        resolvable: start(late).saturating_sub(start(early))
            > g.clocks.map_or(0, |c| c.uncertainty_ns),
    }
}

/// A big start-skew event.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BigEvent {
    pub instance: InstanceSkew,
    /// The late rank's step: the one containing the late kernel's launch
    /// call (or, with no launch call, the instance's earliest start).
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
    /// Its earliest rank's start − the latest start of the other hosts.
    pub margin_ns: i64,
}

impl LateHost {
    /// The event as a phrase, the host by its text label: `late host
    /// node17 (8 ranks) +12.5 ms`.
    pub fn phrase(&self, p: &Profile) -> String {
        format!(
            "late host {} ({} ranks) +{:.3} ms",
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

/// The late host of instance `inst`, if one host's ranks were all late.
pub fn late_host(p: &Profile, g: &Group, inst: &InstanceSkew) -> Option<LateHost> {
    let times = g.instance_times(inst.index);
    let host = |d: usize| p.devices[g.devices[d] as usize].host;
    let late = host(inst.late);
    let ranks = (0..times.len()).filter(|&d| host(d) == late).count();
    if ranks < 2 || ranks == times.len() {
        return None;
    }
    let first_of_late = (0..times.len())
        .filter(|&d| host(d) == late)
        .map(|d| times[d].0)
        .min()?;
    let last_of_others = (0..times.len())
        .filter(|&d| host(d) != late)
        .map(|d| times[d].0)
        .max()?;
    let margin_ns = first_of_late.saturating_sub(last_of_others);
    let residual = g.clocks.map_or(0, |c| c.uncertainty_ns);
    (margin_ns > residual).then_some(LateHost {
        host: late,
        ranks,
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
    /// was first), averaged over every instance that is not a big event;
    /// `None` when every instance is one.
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
    g.instance_times(k).iter().all(|&(s, e)| w.contains(s, e))
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
    let instances: Vec<InstanceSkew> = (0..g.instances())
        .filter(|&k| instance_in_window(g, k, w))
        .map(|k| instance_skew(p, g, k))
        .collect();
    let mut out = GroupSkew {
        group: gi,
        start_skew_ms: Spread::of(instances.iter().map(|i| i.start_skew_ns as f64 / 1e6)),
        end_skew_ms: Spread::of(instances.iter().map(|i| i.end_skew_ns as f64 / 1e6)),
        nccl_total_ns: instances
            .iter()
            .map(|i| i.total_ns)
            .fold(0, i64::saturating_add),
        baseline_ns: instances
            .iter()
            .map(|i| i.baseline_ns.saturating_mul(n as i64))
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
    let mut small = 0usize;
    for inst in &instances {
        out.late_counts[inst.late] += 1;
        out.early_counts[inst.early] += 1;
        if inst.start_skew_ns > big_threshold_ns {
            out.big_excess_ns = out.big_excess_ns.saturating_add(inst.excess_ns(n));
            let (step, offset) = step_of(p, g, inst, steps, clock);
            out.big_events.push(BigEvent {
                instance: inst.clone(),
                step,
                offset_in_step_ns: offset,
                late_host: late_host(p, g, inst),
            });
        } else {
            out.other_excess_ns = out.other_excess_ns.saturating_add(inst.excess_ns(n));
            small += 1;
            let times = g.instance_times(inst.index);
            for (d, sum) in lateness_sum.iter_mut().enumerate() {
                *sum = sum.saturating_add(times[d].0.saturating_sub(inst.earliest_start));
            }
        }
    }
    if small > 0 {
        for (mean, sum) in out
            .mean_lateness_ms_excluding_big
            .iter_mut()
            .zip(&lateness_sum)
        {
            *mean = Some(*sum as f64 / small as f64 / 1e6);
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
    let row = g.instance_rows(inst.index)[inst.late] as usize;
    let process = p.lanes[p.gpu.lane(row) as usize].process;
    let at = match p.gpu.launch(row) {
        NONE => inst.earliest_start,
        call => clock.runtime_span(p, call as usize).0,
    };
    match steps.containing(p, clock, process, at) {
        Some((step, step_start)) => (
            Some(step),
            Some(inst.earliest_start.saturating_sub(step_start)),
        ),
        None => (None, None),
    }
}
