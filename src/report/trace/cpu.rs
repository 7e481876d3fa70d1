//! What a thread's CPU track holds beside its CUDA calls: the spans it was
//! descheduled and its CPU samples, as the why account reads them, as
//! trace events.

use crate::analysis::account::CpuKind;
use crate::analysis::clock::Alignment;
use crate::analysis::cpu_state::{self, OffCpu};
use crate::analysis::why_words;
use crate::analysis::window::Window;
use crate::profile::{Profile, ThreadId};
use crate::text_safe::escape_controls;
use serde_json::{Value, json};

/// Thread `t`'s descheduled spans clipped to `w` (who ran meanwhile not
/// yet named). One never switched back in lasts to its capture's end,
/// when that is after the thread's last switch (the capture's bounds come
/// from the other tables: nsys 2025.5 records switches after them); else
/// nothing is claimed of the time after.
pub(super) fn off_cpu(p: &Profile, clock: &Alignment, w: Window, t: usize) -> Vec<OffCpu> {
    let thread = t as ThreadId;
    let Some(rows) = p.sched_by_thread.get(t).filter(|r| !r.is_empty()) else {
        return Vec::new();
    };
    let last = clock.sched_time(p, rows.end - 1);
    let end = clock
        .capture_end(p, p.thread_file(thread))
        .map_or(last, |e| e.max(last));
    cpu_state::descheduled(p, clock, thread, (w.start, w.end.min(end)))
}

/// Thread `t`'s CPU samples in `w`: (row, time).
pub(super) fn samples<'a>(
    p: &'a Profile,
    clock: &'a Alignment,
    w: Window,
    t: usize,
) -> impl Iterator<Item = (usize, i64)> + 'a {
    p.samples_by_thread
        .get(t)
        .cloned()
        .unwrap_or(0..0)
        .map(move |r| (r, clock.sample_time(p, r)))
        .filter(move |&(_, at)| at >= w.start && at <= w.end)
}

/// The trace's time (µs) of `ns`, as the rest of the trace gives it.
type Us = fn(i64) -> f64;

/// A descheduled span, named as the why account names it.
pub(super) fn off_cpu_event(p: &Profile, (pid, tid): (usize, usize), o: &OffCpu, us: Us) -> Value {
    let ran: Vec<String> = o
        .ran
        .iter()
        .map(|&r| escape_controls(&why_words::thread_name(p, r)).into_owned())
        .collect();
    json!({"ph": "X", "cat": "off_cpu", "name": why_words::share_name(p, CpuKind::OffCpu, 0),
           "pid": pid, "tid": tid, "ts": us(o.span.0), "dur": us(o.span.1 - o.span.0),
           "args": {"cpu": o.cpu, "ran_meanwhile": ran}})
}

/// A sample: an instant on its thread, named by its innermost user-mode
/// frame, with the frames the loader keeps.
pub(super) fn sample_event(
    p: &Profile,
    (pid, tid): (usize, usize),
    r: usize,
    at: i64,
    us: Us,
) -> Value {
    let stack: Vec<String> = cpu_state::frames(p, r)
        .into_iter()
        .map(|f| escape_controls(p.strings.get(f)).into_owned())
        .collect();
    let leaf = stack
        .first()
        .cloned()
        .unwrap_or_else(|| "on-CPU (no call stack)".into());
    json!({"ph": "i", "s": "t", "cat": "cpu_sample", "name": leaf, "pid": pid, "tid": tid,
           "ts": us(at), "args": {"stack": stack}})
}
