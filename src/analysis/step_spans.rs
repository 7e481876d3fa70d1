//! The job's steps on the reference clock, for the step account and the
//! critical path: the step marker's NVTX ranges (`Steps::spans`), or,
//! where no range matches the marker, the period of the job's recurring
//! collectives — a group that runs a fixed number of instances a step
//! (the data-parallel gradient reduction, the optimizer's all-reduce), the
//! instances of every other group between two of its periods the same.
//! Steps part, period after period, after the instance followed by the
//! longest time every GPU stood idle at once, at that idle stretch.

use super::clock::Alignment;
use super::intervals::{first_at, union};
use super::matching::Matching;
use super::steps::Steps;
use crate::profile::Profile;

/// Phases of the period (those whose collectives pause longest) whose
/// GPU idle time is measured.
const PHASES_TRIED: usize = 32;

/// Where the steps came from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum StepsFrom {
    /// No step ranges, and no period found.
    #[default]
    None,
    Markers,
    /// `per_step` instances of `group` make a period; steps part where
    /// every GPU stood idle longest between two periods.
    Collectives {
        group: String,
        per_step: usize,
    },
}

/// What a capture without steps is told (the report and the view).
pub const NO_STEPS: &str = "no step ranges: no top-level NVTX range matches the step marker (--step-marker REGEX), and no period of the collectives was found";

impl StepsFrom {
    /// In words, for the reports and the view.
    pub fn said(&self) -> Option<String> {
        match self {
            StepsFrom::Collectives { group, per_step } => Some(format!(
                "no NVTX range matches the step marker (--step-marker): steps found from the period of the collectives ({per_step} instance{} of group {group} a step, every other group's the same each period), parted where every GPU stood idle longest between two periods; an estimate, where markers give the steps exactly",
                if *per_step == 1 { "" } else { "s" }
            )),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct StepSpans {
    pub spans: Vec<(i64, i64)>,
    pub from: StepsFrom,
}

pub fn step_spans(p: &Profile, clock: &Alignment, m: &Matching, steps: &Steps) -> StepSpans {
    let spans = steps.spans(p, clock);
    if !spans.is_empty() {
        return StepSpans {
            spans,
            from: StepsFrom::Markers,
        };
    }
    from_collectives(p, clock, m).unwrap_or_default()
}

/// The start of the first GPU work starting after `t`, on any lane.
fn first_work_after(p: &Profile, clock: &Alignment, t: i64) -> Option<i64> {
    p.lanes
        .iter()
        .filter_map(|l| {
            let at = first_at(l.rows.clone(), |r| clock.gpu_span(p, r).0 > t);
            (at < l.rows.end).then(|| clock.gpu_span(p, at).0)
        })
        .min()
}

/// Every device's GPU work overlapping `a`..`b`, as one union.
fn work_between(p: &Profile, clock: &Alignment, a: i64, b: i64) -> Vec<(i64, i64)> {
    let mut spans = Vec::new();
    for l in &p.lanes {
        // Rows are sorted by start; one that started before `a` may run
        // into it, so look back a few.
        let at = first_at(l.rows.clone(), |r| clock.gpu_span(p, r).0 >= a);
        for r in at.saturating_sub(4).max(l.rows.start)..l.rows.end {
            let s = clock.gpu_span(p, r);
            if s.0 >= b {
                break;
            }
            if s.1 > a {
                spans.push((s.0.max(a), s.1.min(b)));
            }
        }
    }
    union(spans)
}

/// Where one step ends and the next starts, between the end `b` of the
/// first's last instance and the start `n` of the next's first: at the
/// longest stretch of that time no GPU ran anything (none: at `b`).
fn parting(p: &Profile, clock: &Alignment, b: i64, n: i64) -> (i64, i64) {
    let busy = work_between(p, clock, b, n);
    let mut edges = vec![b];
    for s in &busy {
        edges.push(s.0);
        edges.push(s.1);
    }
    edges.push(n);
    edges
        .chunks(2)
        .map(|w| (w[0], *w.get(1).unwrap_or(&w[0])))
        .filter(|(x, y)| y > x)
        .max_by_key(|(x, y)| y - x)
        .unwrap_or((b, b))
}

/// The last step's end: its GPU work after `b` while no gap of 1 ms or
/// more stops it.
fn tail_end(p: &Profile, clock: &Alignment, b: i64) -> i64 {
    const GAP_NS: i64 = 1_000_000;
    let mut end = b;
    loop {
        let busy = work_between(p, clock, end, end + GAP_NS);
        match busy.last() {
            Some(&(_, e)) if e > end => end = e,
            _ => return end,
        }
    }
}

/// Each instance's median member start and end, per group: a member on
/// a clock the ends could not align does not stretch it.
fn instance_spans(m: &Matching) -> Vec<Vec<(i64, i64)>> {
    let median = |mut v: Vec<i64>| {
        v.sort_unstable();
        v[v.len() / 2]
    };
    m.groups
        .iter()
        .map(|g| {
            (0..g.instances())
                .filter_map(|k| {
                    let (s, e): (Vec<i64>, Vec<i64>) = g.members(k).map(|(_, _, s)| s).unzip();
                    (!s.is_empty()).then(|| (median(s), median(e)))
                })
                .collect()
        })
        .collect()
}

/// The period with the most steps: a group and how many of its instances
/// make a step (a whole number of periods), such that every full period (after the first, which may
/// hold warm-up's extra collectives) holds the same number of each other
/// group's instances, and at least one. Two periods at least.
fn from_collectives(p: &Profile, clock: &Alignment, m: &Matching) -> Option<StepSpans> {
    let inst = instance_spans(m);
    let first = first_work_after(p, clock, i64::MIN)?;
    // Every instance's end and group, in time order.
    let mut ends: Vec<(i64, usize)> = inst
        .iter()
        .enumerate()
        .flat_map(|(g, v)| v.iter().map(move |s| (s.1, g)))
        .collect();
    ends.sort_unstable();
    let mut best: Option<(usize, usize, usize)> = None; // (steps, group, per_step)
    // One group per instance count: at a thousand ranks most groups are
    // replicas (the same stage of another pipeline) with the same answer.
    let mut tried = std::collections::HashSet::new();
    for (g, v) in inst.iter().enumerate() {
        let n = v.len();
        if !tried.insert(n) {
            continue;
        }
        // A whole number of periods.
        for c in (1..=n / 2).filter(|c| n % c == 0) {
            let steps = n / c;
            if best.is_some_and(|(s, ..)| s >= steps) {
                break;
            }
            let bounds: Vec<i64> = (0..steps).map(|k| v[k * c + c - 1].1).collect();
            if periodic(&ends, &bounds, g, inst.len()) {
                best = Some((steps, g, c));
                break;
            }
        }
    }
    let (_, g, c) = best?;
    let v = &inst[g];
    // The period in instances (of every group); the step boundary is the
    // phase of it after which the collectives pause longest, summed over
    // the periods: the optimizer, data loading and the next forward pass
    // come between the last collective of a step and the first of the
    // next, wherever the group found the period sits in it.
    let edge = |k: usize| v[k * c + c - 1].1;
    let period =
        ends.partition_point(|e| e.0 <= edge(1)) - ends.partition_point(|e| e.0 <= edge(0));
    let period = period.max(1);
    let mut starts: Vec<i64> = inst.iter().flatten().map(|s| s.0).collect();
    starts.sort_unstable();
    let next_start = |b: i64| starts.get(starts.partition_point(|&s| s <= b)).copied();
    // After instance `i`: how long until the next collective starts
    // (cheap), and how long every GPU stood idle at once meanwhile (a
    // pipeline's bubbles leave other devices busy, the pause between two
    // steps leaves none; a search of every lane, so asked only of the
    // phases whose collectives pause longest).
    let quiet = |i: usize| next_start(ends[i].0).map_or(0, |n| n - ends[i].0);
    let idle = |i: usize| {
        next_start(ends[i].0).map_or(0, |n| {
            let (a, b) = parting(p, clock, ends[i].0, n);
            b - a
        })
    };
    let sum = |j: usize, f: &dyn Fn(usize) -> i64| -> i64 {
        (j..ends.len()).step_by(period).map(f).sum()
    };
    let mut phases: Vec<(i64, usize)> = (0..period).map(|j| (sum(j, &quiet), j)).collect();
    phases.sort_unstable_by_key(|&(q, j)| (std::cmp::Reverse(q), j));
    let phase = phases
        .iter()
        .take(PHASES_TRIED)
        .map(|&(_, j)| j)
        .max_by_key(|&j| (sum(j, &idle), std::cmp::Reverse(j)))
        .unwrap_or(0);
    let mut spans = Vec::new();
    let mut start = first;
    let mut last = None;
    for i in (phase..ends.len()).step_by(period) {
        let b = ends[i].0;
        let (end, next) = match next_start(b) {
            Some(n) => parting(p, clock, b, n),
            None => (tail_end(p, clock, b), b),
        };
        spans.push((start, end.max(start)));
        start = next.max(end);
        last = Some(i);
    }
    // A last period short of a few instances (a collective the capture
    // cut, or one matched apart) is still a step.
    let after = ends.len() - last.map_or(0, |i| i + 1);
    if after > 0 && after * 4 >= period * 3 {
        let end = tail_end(p, clock, ends[ends.len() - 1].0);
        spans.push((start, end.max(start)));
    }
    if spans.len() < 2 {
        return None;
    }
    Some(StepSpans {
        spans,
        from: StepsFrom::Collectives {
            group: m.groups[g].key.clone(),
            per_step: c,
        },
    })
}

/// Whether every window between two consecutive bounds holds the same
/// count of each group's instances (ends), other groups among them: all
/// but one in twenty, at most, may fall the other side of a bound (a stall
/// can reorder a step's last collectives).
fn periodic(ends: &[(i64, usize)], bounds: &[i64], g: usize, groups: usize) -> bool {
    let window = |a: i64, b: i64| {
        let from = ends.partition_point(|e| e.0 <= a);
        let to = ends.partition_point(|e| e.0 <= b);
        let mut counts = vec![0u32; groups];
        for e in &ends[from..to] {
            counts[e.1] += 1;
        }
        counts
    };
    let windows: Vec<Vec<u32>> = bounds.windows(2).map(|w| window(w[0], w[1])).collect();
    let Some(w0) = windows.first() else {
        return false;
    };
    let total: u32 = w0.iter().sum();
    let off = |w: &Vec<u32>| -> u32 { w.iter().zip(w0).map(|(a, b)| a.abs_diff(*b)).sum() };
    windows.iter().all(|w| off(w) <= total / 20)
        && w0.iter().enumerate().any(|(h, &n)| h != g && n > 0)
}
