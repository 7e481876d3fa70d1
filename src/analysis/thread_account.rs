//! What one CPU thread did over a window of the reference clock, split by
//! [`super::account::split`]: its CUDA calls (synchronising ones apart, by
//! name or by a synchronisation record that blocks the CPU), OS runtime
//! calls, the spans it was descheduled, the spans CPU samples show it
//! running (named by the frame most share) and the NVTX ranges open on it.
//! The CPU part of issue 21's account is this over [earliest peer's start,
//! launch-call end].

use super::account::{self, CpuKind, Split};
use super::clock::Alignment;
use super::cpu_state;
use super::cuda_sync;
use crate::profile::{NONE, Profile, Sym, ThreadId};
use std::ops::Range;

/// Runtime rows of `thread`'s process that a synchronisation record says
/// blocked the CPU, among those overlapping `window`.
fn blocking_calls(
    p: &Profile,
    clock: &Alignment,
    thread: ThreadId,
    window: (i64, i64),
) -> Vec<u32> {
    let process = p.threads[thread as usize].process;
    let Some(rows) = p.syncs_by_process.get(process as usize) else {
        return Vec::new();
    };
    let mut out: Vec<u32> = rows
        .clone()
        .filter(|&s| {
            let (a, b) = clock.sync_span(p, s);
            p.syncs.call(s) != NONE
                && a < window.1
                && b > window.0
                && cuda_sync::kind(p, s).blocks_cpu()
        })
        .map(|s| p.syncs.call(s))
        .collect();
    out.sort_unstable();
    out
}

/// Rows of a thread's calls that nest at most this deep: a call covering a
/// time starts at most this many rows before the first starting after it.
const NESTING: usize = 8;

/// `rows` (sorted by `start`) from a few before the first starting at or
/// after `t`: the calls that can overlap a window from `t`, without
/// scanning a long thread from its beginning.
fn near(rows: Range<usize>, start: impl Fn(usize) -> i64, t: i64) -> Range<usize> {
    let (mut lo, mut hi) = (rows.start, rows.end);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if start(mid) < t {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo.saturating_sub(NESTING).max(rows.start)..rows.end
}

/// What the thread recorded overlapping `window`: its rows are sorted by
/// start, so each scan stops at the first row starting after the window.
fn recorded(
    p: &Profile,
    clock: &Alignment,
    thread: ThreadId,
    window: (i64, i64),
) -> Vec<(CpuKind, Sym, (i64, i64))> {
    let t = thread as usize;
    let mut out = Vec::new();
    let overlaps = |s: (i64, i64)| s.1 > window.0 && s.0 < window.1;
    let blocking = blocking_calls(p, clock, thread, window);
    if let Some(rows) = p.runtime_by_thread.get(t) {
        for r in near(rows.clone(), |r| clock.runtime_span(p, r).0, window.0) {
            let s = clock.runtime_span(p, r);
            if s.0 >= window.1 {
                break;
            }
            if overlaps(s) {
                let name = p.runtime.name(r);
                let kind = if account::is_sync_call(p.strings.get(name))
                    || blocking.binary_search(&(r as u32)).is_ok()
                {
                    CpuKind::CudaSync
                } else {
                    CpuKind::CudaCall
                };
                out.push((kind, name, s));
            }
        }
    }
    if let Some(rows) = p.osrt_by_thread.get(t) {
        for r in near(rows.clone(), |r| clock.osrt_span(p, r).0, window.0) {
            let s = clock.osrt_span(p, r);
            if s.0 >= window.1 {
                break;
            }
            if overlaps(s) {
                out.push((CpuKind::Osrt, p.osrt.name(r), s));
            }
        }
    }
    for o in cpu_state::off_cpu(p, clock, thread, window) {
        out.push((CpuKind::OffCpu, 0, o.span));
    }
    if let Some(on) = cpu_state::on_cpu(p, clock, thread, window) {
        out.extend(on.spans.iter().map(|&s| (CpuKind::OnCpu, on.frame, s)));
    }
    if let Some(rows) = p.nvtx_by_thread.get(t) {
        for r in rows.clone() {
            if !p.nvtx.is_range(r) {
                continue;
            }
            let s = clock.nvtx_span(p, r);
            if s.0 >= window.1 {
                break;
            }
            // A range never closed ends where it starts: open to the end.
            let s = if s.1 == s.0 { (s.0, window.1) } else { s };
            if overlaps(s) {
                out.push((CpuKind::Nvtx, p.nvtx.name(r), s));
            }
        }
    }
    out
}

/// Thread `thread`'s time in `window` (reference clock), split.
pub fn thread_account(
    p: &Profile,
    clock: &Alignment,
    thread: ThreadId,
    window: (i64, i64),
) -> Split<Sym> {
    account::split(window, &recorded(p, clock, thread, window))
}

/// The recorded row a share of a thread's account came from, for jumping
/// to it: the row of its kind and name that covers `at` (the share's first
/// nanosecond).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A runtime row.
    Call(usize),
    Osrt(usize),
    /// The scheduling row that switched it out.
    Sched(usize),
    /// The sample nearest `at`.
    Sample(usize),
    Nvtx(usize),
}

pub fn source_of(
    p: &Profile,
    clock: &Alignment,
    thread: ThreadId,
    kind: CpuKind,
    label: Sym,
    at: i64,
) -> Option<Source> {
    let t = thread as usize;
    let covers = |s: (i64, i64)| s.0 <= at && at < s.1.max(s.0 + 1);
    match kind {
        CpuKind::CudaSync | CpuKind::CudaCall => p
            .runtime_by_thread
            .get(t)?
            .clone()
            .rev()
            .find(|&r| p.runtime.name(r) == label && covers(clock.runtime_span(p, r)))
            .map(Source::Call),
        CpuKind::Osrt => p
            .osrt_by_thread
            .get(t)?
            .clone()
            .rev()
            .find(|&r| p.osrt.name(r) == label && covers(clock.osrt_span(p, r)))
            .map(Source::Osrt),
        CpuKind::OffCpu => p
            .sched_by_thread
            .get(t)?
            .clone()
            .rev()
            .find(|&r| !p.sched.sched_in(r) && clock.sched_time(p, r) <= at)
            .map(Source::Sched),
        CpuKind::OnCpu => p
            .samples_by_thread
            .get(t)?
            .clone()
            .min_by_key(|&r| (clock.sample_time(p, r) - at).unsigned_abs())
            .map(Source::Sample),
        CpuKind::Nvtx => p
            .nvtx_by_thread
            .get(t)?
            .clone()
            .rev()
            .find(|&r| {
                let s = clock.nvtx_span(p, r);
                p.nvtx.is_range(r)
                    && p.nvtx.name(r) == label
                    && s.0 <= at
                    && (s.1 == s.0 || at < s.1)
            })
            .map(Source::Nvtx),
    }
}
