//! What the scheduler and the sampler saw of one thread over a window: the
//! spans it was descheduled (SCHED_EVENTS: out until the next in), and the
//! spans CPU samples show it running, named by the frame most of those
//! samples share. Both feed the CPU account ([`super::thread_account`]).

use super::clock::Alignment;
use super::intervals::{self, Span};
use crate::profile::{Profile, Sym, ThreadId};

/// A span the thread was descheduled, and who ran on its CPU meanwhile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffCpu {
    /// Clipped to the window asked about.
    pub span: Span,
    /// The CPU it was scheduled out of.
    pub cpu: u16,
    /// Threads of the same file scheduled in on that CPU during the span
    /// (first few, in order), when the export recorded them.
    pub ran: Vec<ThreadId>,
}

/// How many threads that ran meanwhile an off-CPU span names.
const RAN_NAMED: usize = 4;

/// A thread's descheduled spans as its scheduling rows: (the switch out,
/// the next switch in; `None` when the capture holds none after it). A
/// first switch in with no switch out before it says nothing about the
/// time before (the capture may have started then). One reading for the
/// account and the timeline's off-CPU track.
pub fn descheduled_rows(p: &Profile, thread: ThreadId) -> Vec<(usize, Option<usize>)> {
    let mut out = Vec::new();
    let mut left: Option<usize> = None;
    for r in p
        .sched_by_thread
        .get(thread as usize)
        .cloned()
        .unwrap_or(0..0)
    {
        if p.sched.sched_in(r) {
            if let Some(out_row) = left.take() {
                out.push((out_row, Some(r)));
            }
        } else if left.is_none() {
            left = Some(r);
        }
    }
    if let Some(out_row) = left {
        out.push((out_row, None));
    }
    out
}

/// The thread's descheduled spans overlapping `window` (reference clock),
/// with who ran meanwhile; a switch out with no switch back in the
/// capture lasts to the window's end.
pub fn off_cpu(p: &Profile, clock: &Alignment, thread: ThreadId, window: Span) -> Vec<OffCpu> {
    let mut out = descheduled(p, clock, thread, window);
    if !out.is_empty() {
        let file = p.thread_file(thread);
        SchedIns::of(p, clock, |f| f == file).name_ran(p, thread, &mut out);
    }
    out
}

/// [`off_cpu`] without who ran meanwhile (`ran` empty): what a caller
/// naming many threads' spans fills from one [`SchedIns`].
pub fn descheduled(p: &Profile, clock: &Alignment, thread: ThreadId, window: Span) -> Vec<OffCpu> {
    let mut out = Vec::new();
    for (left, back) in descheduled_rows(p, thread) {
        let a = clock.sched_time(p, left);
        if a >= window.1 {
            break;
        }
        let b = back.map_or(window.1, |r| clock.sched_time(p, r));
        push_clipped(&mut out, (a, b), p.sched.cpu(left), window);
    }
    out
}

fn push_clipped(out: &mut Vec<OffCpu>, span: Span, cpu: u16, window: Span) {
    let s = (span.0.max(window.0), span.1.min(window.1));
    if s.1 > s.0 {
        out.push(OffCpu {
            span: s,
            cpu,
            ran: Vec::new(),
        });
    }
}

/// The switches in of each (file, CPU), by time (reference clock): who
/// ran on a CPU during a span is found by search, not by reading every
/// thread's rows for each span.
pub struct SchedIns(rustc_hash::FxHashMap<(usize, u16), Vec<(i64, ThreadId)>>);

impl SchedIns {
    /// Those of every file.
    pub fn new(p: &Profile, clock: &Alignment) -> SchedIns {
        SchedIns::of(p, clock, |_| true)
    }

    fn of(p: &Profile, clock: &Alignment, keep: impl Fn(usize) -> bool) -> SchedIns {
        let mut by: rustc_hash::FxHashMap<(usize, u16), Vec<(i64, ThreadId)>> = Default::default();
        for (t, rows) in p.sched_by_thread.iter().enumerate() {
            let t = t as ThreadId;
            let file = p.thread_file(t);
            if !keep(file) {
                continue;
            }
            for r in rows.clone().filter(|&r| p.sched.sched_in(r)) {
                by.entry((file, p.sched.cpu(r)))
                    .or_default()
                    .push((clock.sched_time(p, r), t));
            }
        }
        for v in by.values_mut() {
            v.sort_unstable();
        }
        SchedIns(by)
    }

    /// Fills each span's `ran`: threads of `thread`'s file other than it
    /// scheduled in on the span's CPU during it, the first few by id.
    pub fn name_ran(&self, p: &Profile, thread: ThreadId, spans: &mut [OffCpu]) {
        let file = p.thread_file(thread);
        for o in spans {
            let Some(ins) = self.0.get(&(file, o.cpu)) else {
                continue;
            };
            let lo = ins.partition_point(|&(at, _)| at < o.span.0);
            let hi = ins.partition_point(|&(at, _)| at < o.span.1);
            let mut ran: Vec<ThreadId> = ins[lo..hi.max(lo)]
                .iter()
                .map(|&(_, t)| t)
                .filter(|&t| t != thread)
                .collect();
            ran.sort_unstable();
            ran.dedup();
            ran.truncate(RAN_NAMED);
            o.ran = ran;
        }
    }
}

/// What the samples say of a thread over a window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnCpu {
    /// Each sample stands for half the sampling period either side of it;
    /// these are the union of those, clipped to the window.
    pub spans: Vec<Span>,
    /// The innermost user-mode frame more than half of the samples share
    /// (else the one most share); Sym 0 when they have no call stacks.
    pub frame: Sym,
    /// Samples whose span meets the window.
    pub samples: usize,
    /// The sampling period these samples show (the median gap between
    /// them); `None` when they show none (fewer than two instants, or gaps
    /// too long to be one). Their spans take the thread's period, which
    /// its other samples may be what show.
    pub period_ns: Option<i64>,
}

/// The sampling period assumed when a thread has too few samples to tell
/// (nsys samples at 1 kHz by default), and the longest gap taken for one:
/// a longer one is the thread idle, not sampled slowly.
const DEFAULT_PERIOD_NS: i64 = 1_000_000;
const MAX_PERIOD_NS: i64 = 10_000_000;

/// The thread's samples around `window`, if any meet it.
pub fn on_cpu(p: &Profile, clock: &Alignment, thread: ThreadId, window: Span) -> Option<OnCpu> {
    let rows = p.samples_by_thread.get(thread as usize)?.clone();
    let times: Vec<(usize, i64)> = rows.map(|r| (r, clock.sample_time(p, r))).collect();
    let period = period_of(&times);
    let h = period / 2;
    let (near, near_times): (Vec<usize>, Vec<i64>) = times
        .iter()
        .filter(|&&(_, t)| t + h > window.0 && t - h < window.1)
        .copied()
        .unzip();
    if near.is_empty() {
        return None;
    }
    let spans = intervals::clip(
        &intervals::union(
            near.iter()
                .map(|&r| {
                    let t = clock.sample_time(p, r);
                    (t - h, t + h)
                })
                .collect(),
        ),
        window,
    );
    let stacks: Vec<Vec<Sym>> = near.iter().map(|&r| frames(p, r)).collect();
    Some(OnCpu {
        spans,
        frame: majority_frame(&stacks).unwrap_or(0),
        samples: near.len(),
        period_ns: period_shown(&near_times),
    })
}

/// Sample `r`'s user-mode frames, innermost first.
pub fn frames(p: &Profile, r: usize) -> Vec<Sym> {
    p.samples.frames(r).collect()
}

fn period_of(times: &[(usize, i64)]) -> i64 {
    period_of_times(&times.iter().map(|t| t.1).collect::<Vec<_>>())
}

/// A thread's sampling period from its sample times (sorted): the one
/// they show, else [`DEFAULT_PERIOD_NS`].
pub fn period_of_times(times: &[i64]) -> i64 {
    period_shown(times).unwrap_or(DEFAULT_PERIOD_NS)
}

/// The sampling period sample times (sorted) show: the median gap, gaps
/// of 0 (one instant) and longer than [`MAX_PERIOD_NS`] (idle) left out;
/// `None` when no gap is left.
fn period_shown(times: &[i64]) -> Option<i64> {
    let mut gaps: Vec<i64> = times
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|&g| g > 0 && g <= MAX_PERIOD_NS)
        .collect();
    gaps.sort_unstable();
    gaps.get(gaps.len() / 2).copied()
}

/// The innermost frame (lowest mean depth) that more than half of the
/// stacks hold; when none does, the frame most hold. Stacks list frames
/// innermost first; a frame counts once per stack.
pub fn majority_frame(stacks: &[Vec<Sym>]) -> Option<Sym> {
    let mut seen: rustc_hash::FxHashMap<Sym, (usize, usize)> = Default::default();
    for s in stacks {
        for (d, &f) in s.iter().enumerate() {
            if s[..d].contains(&f) {
                continue;
            }
            let e = seen.entry(f).or_default();
            e.0 += 1;
            e.1 += d;
        }
    }
    let n = stacks.len();
    // (not a majority, mean depth, fewer holders, sym): the least wins
    seen.into_iter()
        .min_by(|&(fa, (ca, da)), &(fb, (cb, db))| {
            let key = |c: usize, d: usize| {
                (
                    2 * c <= n,
                    if 2 * c > n { d as f64 / c as f64 } else { 0.0 },
                )
            };
            let (ma, xa) = key(ca, da);
            let (mb, xb) = key(cb, db);
            ma.cmp(&mb)
                .then(xa.total_cmp(&xb))
                .then(cb.cmp(&ca))
                .then(fa.cmp(&fb))
        })
        .map(|(f, _)| f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_innermost_majority_frame_names_the_samples() {
        // leaves differ; frame 9 is in every stack one deep, 1 and 2 outer
        let stacks = vec![
            vec![5, 9, 1, 2],
            vec![6, 9, 1, 2],
            vec![7, 9, 1, 2],
            vec![9, 1, 2],
        ];
        assert_eq!(majority_frame(&stacks), Some(9));
        // a leaf most share wins over the frames above it
        let stacks = vec![vec![5, 9, 1], vec![5, 9, 1], vec![6, 9, 1]];
        assert_eq!(majority_frame(&stacks), Some(5));
        // no majority: the frame most hold
        let stacks = vec![vec![5, 8], vec![6, 8], vec![7, 9], vec![3, 4]];
        assert_eq!(majority_frame(&stacks), Some(8));
        assert_eq!(majority_frame(&[vec![], vec![]]), None);
    }

    #[test]
    fn a_thread_sampled_at_1_khz_has_a_1_ms_period() {
        let times: Vec<(usize, i64)> = (0..20).map(|i| (i, i as i64 * 1_000_000)).collect();
        assert_eq!(period_of(&times), 1_000_000);
        // a long idle gap is not a period
        let times = vec![(0, 0), (1, 50_000_000)];
        assert_eq!(period_of(&times), DEFAULT_PERIOD_NS);
        // samples at one instant show no period
        assert_eq!(period_shown(&[7; 20]), None);
        assert_eq!(period_shown(&[7]), None);
        assert_eq!(period_shown(&[]), None);
    }
}
