//! GPU activity and CUDA API calls whose times cannot be right (end before
//! start, a zero or impossible timestamp, longer than the capture, wholly outside it):
//! counted per file and left out before the rows are sorted, so that no
//! figure, span or clock fit uses them.

use crate::profile::finalize::{permute, renumber};
use crate::profile::model::{FileProfile, SuspectEvents};
use crate::profile::raw::TIME_LIMIT_NS;

/// The share of events that may fall outside a recorded window for it to
/// be this data's capture window (a window on another clock, seen in real
/// exports, misses most of them; damaged timestamps are a few).
const WINDOW_MISS_SHARE: f64 = 0.01;

/// The windows a file's events may be on, before its events say which:
/// none, `ANALYSIS_DETAILS` as recorded, and shifted back by
/// `systemClockNs` (see `SessionClock::window_on`). Calls only counted
/// (`report summary`) are judged against each, and the one the loaded GPU
/// activity keeps to is taken.
#[derive(Debug, Clone, Copy, Default)]
pub struct Candidates(pub [Option<(i64, i64)>; 3]);

impl Candidates {
    pub fn new(recorded: Option<(i64, i64)>, system_clock_ns: Option<i64>) -> Self {
        let shifted = recorded
            .zip(system_clock_ns)
            .map(|((a, b), s)| (a.saturating_sub(s), b.saturating_sub(s)));
        Candidates([None, recorded, shifted])
    }

    /// Which candidate `w` is (0 when none is).
    fn index(&self, w: Option<(i64, i64)>) -> usize {
        (1..3).find(|&i| w.is_some() && self.0[i] == w).unwrap_or(0)
    }
}

/// Why a row's times cannot be right, when they cannot: 0 end before
/// start, 1 a zero or impossible timestamp, 2 longer than `window`, 3 wholly outside it.
pub fn judge(start: i64, end: i64, window: Option<(i64, i64)>) -> Option<usize> {
    let impossible = |t: i64| t == 0 || !(-TIME_LIMIT_NS..=TIME_LIMIT_NS).contains(&t);
    if impossible(start) || impossible(end) {
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
/// GPU rows and runtime calls whose times cannot be right, and returns how
/// many, by reason, and which of `candidates` judged them (for the calls
/// only counted). `window`: the capture's recorded window on the events'
/// clock, when the export has one.
pub fn leave_out(
    p: &mut FileProfile,
    window: Option<(i64, i64)>,
    candidates: &Candidates,
) -> (SuspectEvents, usize) {
    let window = trusted_window(p, window);
    let judged_by = candidates.index(window);
    let mut s = SuspectEvents::default();
    // Counted first, allocating nothing: almost every file has none.
    let (g, r) = (&p.gpu, &p.runtime);
    let times = g.start.iter().zip(g.end.iter());
    for (&a, &b) in times.chain(r.start.iter().zip(r.end.iter())) {
        if let Some(why) = judge(a, b, window) {
            count(&mut s, why);
        }
    }
    if s.total() == 0 {
        return (s, judged_by);
    }
    let kept = |starts: &[i64], ends: &[i64]| -> Vec<u32> {
        (0..starts.len() as u32)
            .filter(|&i| judge(starts[i as usize], ends[i as usize], window).is_none())
            .collect()
    };
    // The kept rows in their order: finalize's permutation, shorter.
    let g = &mut p.gpu;
    let rows = kept(&g.start, &g.end);
    permute(&mut g.start, &rows);
    permute(&mut g.end, &rows);
    permute(&mut g.lane, &rows);
    permute(&mut g.name, &rows);
    permute(&mut g.correlation, &rows);
    permute(&mut g.launch, &rows);
    permute(&mut g.detail, &rows);
    renumber(&mut g.unfinished, &rows);
    let calls = kept(&p.runtime.start, &p.runtime.end);
    let r = &mut p.runtime;
    permute(&mut r.start, &calls);
    permute(&mut r.end, &calls);
    permute(&mut r.thread, &calls);
    permute(&mut r.name, &calls);
    permute(&mut r.correlation, &calls);
    permute(&mut r.class, &calls);
    permute(&mut r.is_launch, &calls);
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
        // rows 1 (left out) and 3 ran on when the capture stopped
        g.unfinished = vec![1, 3].into();
        let r = &mut p.runtime;
        r.start = vec![0, 12].into();
        r.end = vec![3, 13].into();
        r.thread = vec![0, 1].into();
        r.name = vec![0, 0].into();
        r.correlation = vec![5, 6].into();
        r.class = vec![Default::default(); 2].into();
        r.is_launch = vec![true, true].into();
        let (s, _) = leave_out(&mut p, None, &Candidates::default());
        assert_eq!((s.end_before_start, s.bad_timestamp, s.total()), (1, 1, 2));
        assert_eq!(&p.gpu.start[..], &[10, 30, 40]);
        assert_eq!(&p.gpu.correlation[..], &[5, 7, 8]);
        assert_eq!(&p.gpu.unfinished[..], &[2]);
        assert_eq!(&p.runtime.start[..], &[12]);
        assert_eq!(&p.runtime.thread[..], &[1]);
    }
}
