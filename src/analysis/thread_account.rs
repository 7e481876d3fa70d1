//! What one CPU thread did over a window of the reference clock, split by
//! [`super::account::split`]: its CUDA calls (synchronising ones apart, by
//! name), OS runtime calls and the NVTX ranges open on it. The CPU part of
//! issue 21's account is this over [earliest peer's start, launch-call end];
//! off-CPU time and samples join when their readers do.

use super::account::{self, CpuKind, Split};
use super::clock::Alignment;
use crate::profile::{Profile, Sym, ThreadId};

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
    if let Some(rows) = p.runtime_by_thread.get(t) {
        for r in rows.clone() {
            let s = clock.runtime_span(p, r);
            if s.0 >= window.1 {
                break;
            }
            if overlaps(s) {
                let name = p.runtime.name(r);
                let kind = if account::is_sync_call(p.strings.get(name)) {
                    CpuKind::CudaSync
                } else {
                    CpuKind::CudaCall
                };
                out.push((kind, name, s));
            }
        }
    }
    if let Some(rows) = p.osrt_by_thread.get(t) {
        for r in rows.clone() {
            let s = clock.osrt_span(p, r);
            if s.0 >= window.1 {
                break;
            }
            if overlaps(s) {
                out.push((CpuKind::Osrt, p.osrt.name(r), s));
            }
        }
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
