//! Rows whose times cannot be right (end before start, a zero or
//! impossible timestamp, longer than the capture, wholly outside it), of
//! every table with times: GPU activity, CUDA and OS runtime calls,
//! scheduling events, CPU samples, CUDA sync and event records. Judged
//! here alone, counted per file and table, and left out before the rows
//! are sorted, so that no figure, span or clock fit uses them.

use crate::profile::column::Col;
use crate::profile::model::{FileProfile, SuspectEvents, SuspectRows};
use crate::profile::raw::TIME_LIMIT_NS;
use crate::profile::reorder::{Reorder, renumber};

/// The share of events that may fall outside a recorded window for it to
/// be this data's capture window (a window on another clock, seen in real
/// exports, misses most of them; damaged timestamps are a few).
const WINDOW_MISS_SHARE: f64 = 0.01;

/// The windows a file's events may be on, before its events say which:
/// none, `ANALYSIS_DETAILS` as recorded, and shifted back by
/// `systemClockNs` (see `SessionClock::window_on`). Rows only counted
/// (`report summary`) are judged against each, and the one the loaded GPU
/// activity keeps to is taken.
#[derive(Debug, Clone, Copy, Default)]
pub struct Candidates {
    pub windows: [Option<(i64, i64)>; 3],
    system_clock_ns: Option<i64>,
}

impl Candidates {
    pub fn new(recorded: Option<(i64, i64)>, system_clock_ns: Option<i64>) -> Self {
        let shifted = recorded
            .zip(system_clock_ns)
            .map(|((a, b), s)| (a.saturating_sub(s), b.saturating_sub(s)));
        Candidates {
            windows: [None, recorded, shifted],
            system_clock_ns,
        }
    }

    /// Which candidate `w` is (0 when none is).
    fn index(&self, w: Option<(i64, i64)>) -> usize {
        (1..3)
            .find(|&i| w.is_some() && self.windows[i] == w)
            .unwrap_or(0)
    }

    /// What rows are judged against under candidate `k`: the session, from
    /// its start to the window's end. `ANALYSIS_DETAILS.startTime` is when
    /// analysis began, not the session: CUDA initialisation and the first
    /// samples come before it, and are real. The session starts at the
    /// boot-clock reading `systemClockNs` on a window as recorded (the
    /// events are on the boot clock), at 0 on a shifted one (they count
    /// from the session start), and at 0 when the export does not say.
    pub fn judging(&self, k: usize) -> Option<(i64, i64)> {
        let (a, b) = self.windows.get(k).copied().flatten()?;
        let session_start = match (k, self.system_clock_ns) {
            (1, Some(s)) => s,
            _ => 0,
        };
        Some((session_start.min(a), b))
    }
}

/// Whether `t` can be a timestamp at all (0 is none recorded).
pub fn possible(t: i64) -> bool {
    t != 0 && (-TIME_LIMIT_NS..=TIME_LIMIT_NS).contains(&t)
}

/// Why a row's times cannot be right, when they cannot: 0 end before
/// start, 1 a zero or impossible timestamp, 2 longer than `window`, 3 wholly outside it.
pub fn judge(start: i64, end: i64, window: Option<(i64, i64)>) -> Option<usize> {
    if !possible(start) || !possible(end) {
        return Some(1);
    }
    if end < start {
        return Some(0);
    }
    let (a, b) = window?;
    if end.saturating_sub(start) > b.saturating_sub(a) {
        return Some(2);
    }
    (end < a || start > b).then_some(3)
}

pub fn count(s: &mut SuspectEvents, why: usize) {
    let c = match why {
        0 => &mut s.end_before_start,
        1 => &mut s.bad_timestamp,
        2 => &mut s.longer_than_capture,
        _ => &mut s.outside_capture,
    };
    *c = c.saturating_add(1);
}

/// One table's times as [`judge`] takes them: rows of two times (calls,
/// GPU activity) or of one (an instant: a sample, a scheduling event).
#[derive(Clone, Copy)]
pub struct Times<'a> {
    start: &'a [i64],
    /// `start` again for instants.
    end: &'a [i64],
    /// Rows (ascending) still running when the capture stopped: their end
    /// is not known yet, and is the capture's end, no earlier than the
    /// window's.
    open: &'a [u32],
    /// A time of 0 is one not recorded (a CUDA event record's completion
    /// when not collected): such a row has nothing to judge.
    zero_unrecorded: bool,
}

impl<'a> Times<'a> {
    pub fn spans(start: &'a [i64], end: &'a [i64]) -> Self {
        Times {
            start,
            end,
            open: &[],
            zero_unrecorded: false,
        }
    }

    pub fn instants(at: &'a [i64]) -> Self {
        Times::spans(at, at)
    }

    /// With rows `open` (ascending) still running at the capture's end.
    pub fn open(self, open: &'a [u32]) -> Self {
        Times { open, ..self }
    }

    /// With 0 meaning no time recorded.
    pub fn zero_unrecorded(self) -> Self {
        Times {
            zero_unrecorded: true,
            ..self
        }
    }

    /// Each row's verdict under `window` ([`judge`]), in row order.
    fn verdicts(self, window: Option<(i64, i64)>) -> impl Iterator<Item = Option<usize>> + 'a {
        let mut open = self.open.iter().peekable();
        (0..self.start.len()).map(move |i| {
            let (start, mut end) = (self.start[i], self.end[i]);
            if self.zero_unrecorded && start == 0 {
                return None;
            }
            if open.next_if(|&&o| o as usize == i).is_some() {
                end = window.map_or(start, |(_, b)| b.max(start));
            }
            judge(start, end, window)
        })
    }

    /// Counts the rows that cannot be right under `window` into `s`.
    pub fn count_into(self, window: Option<(i64, i64)>, s: &mut SuspectEvents) {
        for why in self.verdicts(window).flatten() {
            count(s, why);
        }
    }

    /// Counts as [`Self::count_into`]; when any row cannot be right, the
    /// rows that can, in order (the permutation that leaves the others out).
    fn kept(self, window: Option<(i64, i64)>, s: &mut SuspectEvents) -> Option<Vec<u32>> {
        let before = s.total();
        self.count_into(window, s);
        (s.total() > before).then(|| {
            self.verdicts(window)
                .enumerate()
                .filter(|(_, v)| v.is_none())
                .map(|(i, _)| i as u32)
                .collect()
        })
    }
}

/// `window`, when the GPU activity keeps to it: no more than
/// [`WINDOW_MISS_SHARE`] of its rows wholly outside (GPU rows only: they
/// are read under every plan, so a count and a load judge alike).
fn trusted_window(p: &FileProfile, window: Option<(i64, i64)>) -> Option<(i64, i64)> {
    let (a, b) = window.filter(|&(a, b)| a < b)?;
    let g = &p.gpu;
    let out = g
        .start
        .iter()
        .zip(g.end.iter())
        .filter(|&(&s, &e)| e < a || s > b)
        .count();
    let n = g.start.len();
    (n > 0 && (out as f64) <= WINDOW_MISS_SHARE * n as f64).then_some((a, b))
}

/// Leaves out of `p` (one file, before [`crate::profile::finalize`]) its
/// rows whose times cannot be right, and returns how many, per table and
/// reason, and which of `candidates` judged them (for the rows only
/// counted). `window`: the capture's recorded window on the events'
/// clock, when the export has one. `osrt_open`: the OS runtime calls
/// still open at the capture's end (ascending), renumbered as their table
/// is.
pub fn leave_out(
    p: &mut FileProfile,
    osrt_open: &mut Col<u32>,
    window: Option<(i64, i64)>,
    candidates: &Candidates,
) -> (SuspectRows, usize) {
    let judged_by = candidates.index(trusted_window(p, window));
    let window = candidates.judging(judged_by);
    let mut s = SuspectRows::default();
    // Each table counted first, allocating nothing: almost every file has
    // none to leave out. The GPU rows on one core, the rest on the other.
    let g = &mut p.gpu;
    let r = &mut p.runtime;
    let (gpu_judged, ()) = crate::profile::parallel::beside(
        move || {
            let mut counted = SuspectEvents::default();
            let times = Times::spans(&g.start, &g.end).open(&g.unfinished);
            if let Some(rows) = times.kept(window, &mut counted) {
                g.reorder(&rows);
            }
            counted
        },
        || {
            let times = Times::spans(&r.start, &r.end);
            if let Some(rows) = times.kept(window, &mut s.gpu_or_cuda_calls) {
                r.reorder(&rows);
            }
        },
    );
    s.gpu_or_cuda_calls.add(&gpu_judged);
    let o = &mut p.osrt;
    let osrt = Times::spans(&o.start, &o.end).open(osrt_open);
    if let Some(rows) = osrt.kept(window, &mut s.os_runtime_calls) {
        o.reorder(&rows);
        renumber(osrt_open, &rows);
    }
    let c = &mut p.sched;
    if let Some(rows) = Times::instants(&c.start).kept(window, &mut s.scheduling_events) {
        c.reorder(&rows);
    }
    let m = &mut p.samples;
    if let Some(rows) = Times::instants(&m.start).kept(window, &mut s.cpu_samples) {
        m.reorder(&rows);
    }
    let y = &mut p.syncs;
    if let Some(rows) = Times::spans(&y.start, &y.end).kept(window, &mut s.cuda_syncs) {
        y.reorder(&rows);
    }
    let e = &mut p.cuda_events;
    let events = Times::instants(&e.timestamp).zero_unrecorded();
    if let Some(rows) = events.kept(window, &mut s.cuda_event_records) {
        e.reorder(&rows);
    }
    (s, judged_by)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_row_counts_once_by_its_first_reason() {
        let w = Some((100, 1_000));
        assert_eq!(judge(200, 300, w), None);
        assert_eq!(judge(0, 300, w), Some(1));
        assert_eq!(judge(i64::MIN, 300, w), Some(1));
        assert_eq!(judge(200, i64::MAX, None), Some(1));
        assert_eq!(judge(300, 200, w), Some(0));
        assert_eq!(judge(150, 5_000, w), Some(2));
        assert_eq!(judge(2_000, 2_100, w), Some(3));
        assert_eq!(judge(10, 50, w), Some(3));
        // running at the capture's start or stop: inside
        assert_eq!(judge(50, 150, w), None);
        assert_eq!(judge(950, 1_050, w), None);
        // without a window only the timestamps themselves are judged
        assert_eq!(judge(2_000, 9_000, None), None);
    }

    #[test]
    fn open_rows_run_to_the_window_end_and_unrecorded_times_are_not_judged() {
        let w = Some((100, 1_000));
        let judged = |t: Times| t.verdicts(w).collect::<Vec<_>>();
        // open at 500: inside; open from before the window: longer than
        // it; open after it: outside
        let start = [500, 50, 2_000];
        assert_eq!(
            judged(Times::spans(&start, &start).open(&[0, 1, 2])),
            [None, Some(2), Some(3)]
        );
        // the same as instants
        assert_eq!(judged(Times::instants(&start)), [None, Some(3), Some(3)]);
        let at = [0, 500, i64::MAX];
        assert_eq!(
            judged(Times::instants(&at).zero_unrecorded()),
            [None, None, Some(1)]
        );
        assert_eq!(judged(Times::instants(&at)), [Some(1), None, Some(1)]);
    }

    #[test]
    fn rows_left_out_take_their_columns_and_unfinished_numbers_with_them() {
        let mut p = FileProfile::default();
        let g = &mut p.gpu;
        g.start = vec![10, 20, 30, 40].into();
        g.end = vec![15, 19, 35, 40].into();
        g.lane = vec![0, 1, 2, 3].into();
        g.name = vec![0, 1, 2, 3].into();
        g.correlation = vec![5, 6, 7, 8].into();
        g.launch = vec![0; 4].into();
        g.detail = vec![0; 4].into();
        // rows 2 and 3 ran on when the capture stopped; row 1, before
        // them, is left out
        g.unfinished = vec![2, 3].into();
        let r = &mut p.runtime;
        r.start = vec![0, 12].into();
        r.end = vec![3, 13].into();
        r.thread = vec![0, 1].into();
        r.name = vec![0, 0].into();
        r.correlation = vec![5, 6].into();
        r.class = vec![Default::default(); 2].into();
        r.is_launch = vec![true, true].into();
        let o = &mut p.osrt;
        // a call reversed, one open, one ending at i64::MAX, one kept
        o.start = vec![50, 60, 70, 80].into();
        o.end = vec![40, 60, i64::MAX, 90].into();
        o.thread = vec![0, 1, 2, 3].into();
        o.name = vec![0; 4].into();
        let mut open: Col<u32> = vec![1].into();
        let m = &mut p.samples;
        m.start = vec![0, 5].into();
        m.thread = vec![0, 1].into();
        m.stack = vec![2, 3].into();
        let (s, _) = leave_out(&mut p, &mut open, None, &Candidates::default());
        let g = &s.gpu_or_cuda_calls;
        assert_eq!((g.end_before_start, g.bad_timestamp, g.total()), (1, 1, 2));
        assert_eq!(&p.gpu.start[..], &[10, 30, 40]);
        assert_eq!(&p.gpu.correlation[..], &[5, 7, 8]);
        assert_eq!(&p.gpu.unfinished[..], &[1, 2]);
        assert_eq!(&p.runtime.start[..], &[12]);
        assert_eq!(&p.runtime.thread[..], &[1]);
        let o = &s.os_runtime_calls;
        assert_eq!((o.end_before_start, o.bad_timestamp), (1, 1));
        assert_eq!(&p.osrt.start[..], &[60, 80]);
        assert_eq!(&p.osrt.thread[..], &[1, 3]);
        assert_eq!(&open[..], &[0]);
        assert_eq!(s.cpu_samples.bad_timestamp, 1);
        assert_eq!(
            (&p.samples.start[..], &p.samples.stack[..]),
            (&[5][..], &[3][..])
        );
        assert_eq!(s.total().total(), 5);
    }
}
