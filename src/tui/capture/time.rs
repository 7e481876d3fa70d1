//! The timeline's clock: the only UI code that reads the clock alignment.
//! The view is on the reference clock (the first file's); each lane's
//! events are on their own file's. Everything that finds an event at a
//! time, steps from one, or places a lane's events in the view asks here,
//! with the view and the cell width as values.

use crate::tui::data::Loaded;
use crate::tui::index::{CpuTrackKind, Track};
use crate::tui::lanes::LaneKind;
use crate::tui::selection::EventRef;
use crate::tui::timescale::View;

/// Events that may still run at a time although they started earlier: a
/// lane's ends are not sorted, but work on one stream (calls on one
/// thread, ranges at one depth) runs in order, so a few suffice.
const LOOK_BACK: usize = 8;

/// Turns a row of a track's source table into an event.
pub type MakeEvent = fn(usize) -> EventRef;

/// The events of a timeline row (a time-sorted track on its file's
/// clock), and how to name one; `None` for rows without events of their
/// own (hosts, devices).
pub fn track(l: &Loaded, kind: LaneKind) -> Option<(Track<'_>, MakeEvent)> {
    let p = &l.profile;
    match kind {
        LaneKind::Stream(lane) => Some((l.index.gpu_track(p, lane as usize), EventRef::Gpu)),
        LaneKind::Api(t) => Some((l.index.api_track(p, t as usize), EventRef::Api)),
        LaneKind::Nvtx(tr) => Some((l.index.nvtx_track(&l.profile, tr), EventRef::Nvtx)),
        LaneKind::Cpu(tr) => Some((
            l.index.cpu_track(tr),
            match l.index.cpu_tracks[tr].kind {
                CpuTrackKind::Osrt => EventRef::Osrt,
                CpuTrackKind::OffCpu => EventRef::Sched,
                CpuTrackKind::Samples => EventRef::Sample,
            },
        )),
        _ => None,
    }
}

/// The file a timeline row's events come from (a device row: its first
/// stream's; a host row: its first device's).
pub fn row_file(l: &Loaded, kind: LaneKind) -> usize {
    let p = &l.profile;
    let first_lane = |pick: &dyn Fn(&crate::profile::Lane) -> bool| {
        p.lanes
            .iter()
            .position(pick)
            .map_or(0, |i| p.lane_file(i as u32))
    };
    match kind {
        LaneKind::Stream(lane) => p.lane_file(lane),
        LaneKind::Api(t) => p.thread_file(t),
        LaneKind::Nvtx(tr) => p.thread_file(l.index.nvtx_tracks[tr].thread),
        LaneKind::Cpu(tr) => p.thread_file(l.index.cpu_tracks[tr].thread),
        LaneKind::Device(d) | LaneKind::Missing(d) => first_lane(&|x| x.device == d),
        LaneKind::Host(h) => first_lane(&|x| p.devices[x.device as usize].host == h),
    }
}

/// The file an event comes from.
pub fn event_file(l: &Loaded, e: EventRef) -> usize {
    let p = &l.profile;
    match e {
        EventRef::Gpu(r) => p.lane_file(p.gpu.lane(r)),
        EventRef::Api(r) => p.thread_file(p.runtime.thread(r)),
        EventRef::Nvtx(r) => p.thread_file(p.nvtx.thread(r)),
        EventRef::Osrt(r) => p.thread_file(p.osrt.thread(r)),
        EventRef::Sched(r) => p.thread_file(p.sched.thread(r)),
        EventRef::Sample(r) => p.thread_file(p.samples.thread(r)),
    }
}

/// Start and end of an event on the reference clock.
pub fn event_span(l: &Loaded, e: EventRef) -> (i64, i64) {
    let (p, clock) = (&l.profile, &l.analysis.clock);
    match e {
        EventRef::Gpu(r) => clock.gpu_span(p, r),
        EventRef::Api(r) => clock.runtime_span(p, r),
        EventRef::Nvtx(r) => clock.nvtx_span(p, r),
        EventRef::Osrt(r) => clock.osrt_span(p, r),
        // Drawn spans (a switch out to its switch in; half a period around
        // a sample) are the track's: read them there.
        EventRef::Sched(_) | EventRef::Sample(_) => {
            let f = event_file(l, e);
            let (a, b) = drawn(l, e);
            (clock.to_reference(f, a), clock.to_reference(f, b))
        }
    }
}

/// A descheduled span or a sample as its CPU track draws it (its file's
/// clock): from the switch out to the switch in, half a sampling period
/// either side of the sample. Its track's rows are sorted: found by
/// binary search.
fn drawn(l: &Loaded, e: EventRef) -> (i64, i64) {
    let p = &l.profile;
    let (row, at) = match e {
        EventRef::Sched(r) => (r, p.sched.start(r)),
        EventRef::Sample(r) => (r, p.samples.start(r)),
        _ => return (0, 0),
    };
    let kind = crate::tui::lanes::row_of_event(p, &l.index, e);
    track(l, kind)
        .and_then(|(t, _)| {
            let k = t.rows?.binary_search(&(row as u32)).ok()?;
            Some((t.start[k], t.end[k]))
        })
        .unwrap_or((at, at))
}

/// A reference-clock time as row `kind`'s file sees it.
fn on_row(l: &Loaded, kind: LaneKind, t: i64) -> i64 {
    l.analysis.clock.to_file(row_file(l, kind), t)
}

/// The view as row `kind`'s file sees it: the window starts there (drift
/// is constant over a screen, so the span stays).
pub fn row_view(l: &Loaded, kind: LaneKind, view: View) -> View {
    let t0 = view.t0 as i64;
    View {
        t0: view.t0 + on_row(l, kind, t0).saturating_sub(t0) as f64,
        span: view.span,
    }
}

/// Events of row `kind` the minimum-duration filter hides in the view's
/// window (placed on the row's clock): those starting in it.
pub fn hidden_on_row(l: &Loaded, kind: LaneKind, view: View, min_dur: i64) -> u64 {
    let Some((t, _)) = track(l, kind) else {
        return 0;
    };
    let Some(f) = l.filtered.get(kind, &t, min_dur) else {
        return 0;
    };
    let w = row_view(l, kind, view).window();
    f.hidden_between(&t, w.start, w.end)
}

/// How far `t` (on the track's clock) is from event `k` of the track: 0
/// inside it, else to its nearer edge.
fn distance(track: &Track<'_>, k: usize, t: i64) -> i64 {
    if track.start[k] > t {
        track.start[k].saturating_sub(t)
    } else {
        t.saturating_sub(track.end[k]).max(0)
    }
}

/// What is at a time on a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    pub event: EventRef,
    /// The event holds the time (else it is the nearest within a cell).
    pub under: bool,
}

/// The event of row `kind` at reference-clock time `t`: the one holding
/// it, else the nearest within `cell_ns` (one timeline cell). Events
/// shorter than `min_dur` are not drawn, so not there.
pub fn event_at(l: &Loaded, kind: LaneKind, t: i64, cell_ns: i64, min_dur: i64) -> Option<Hit> {
    let (track, make) = track(l, kind)?;
    let t = on_row(l, kind, t);
    let i = track.start.partition_point(|&s| s <= t);
    (i.saturating_sub(LOOK_BACK)..(i + 1).min(track.len()))
        .filter(|&k| track.lasts(k, min_dur))
        .map(|k| (distance(&track, k, t), k))
        .filter(|&(d, _)| d <= cell_ns.max(0))
        .min()
        .map(|(d, k)| Hit {
            event: make(track.row(k)),
            under: d == 0,
        })
}

/// The event of row `kind` nearest to reference-clock time `t` (by its
/// nearer edge), however far, of those lasting `min_dur` or longer.
pub fn nearest(l: &Loaded, kind: LaneKind, t: i64, min_dur: i64) -> Option<EventRef> {
    let (track, make) = track(l, kind)?;
    let t = on_row(l, kind, t);
    let i = track.start.partition_point(|&s| s <= t);
    let mut near: Vec<usize> = (i.saturating_sub(LOOK_BACK)..(i + 1).min(track.len()))
        .filter(|&k| track.lasts(k, min_dur))
        .collect();
    if min_dur > 0 {
        // Hidden events may stand between: the first drawn either side.
        near.extend(
            (0..i.saturating_sub(LOOK_BACK))
                .rev()
                .find(|&k| track.lasts(k, min_dur)),
        );
        near.extend((i + 1..track.len()).find(|&k| track.lasts(k, min_dur)));
    }
    near.into_iter()
        .min_by_key(|&k| (distance(&track, k, t), k))
        .map(|k| make(track.row(k)))
}

/// Where a step starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum From {
    /// An event of the row: its neighbour is the next step.
    Event(EventRef),
    /// A reference-clock time.
    Time(i64),
}

/// The first event of row `kind` starting after `from` (`forward`), or
/// the last starting before it, of those lasting `min_dur` or longer.
pub fn step(
    l: &Loaded,
    kind: LaneKind,
    from: From,
    forward: bool,
    min_dur: i64,
) -> Option<EventRef> {
    let (track, make) = track(l, kind)?;
    let t = match from {
        // The event's own timestamp: no trip through the clocks, which
        // could land a nanosecond before it and find it again.
        From::Event(e) => raw_start(l, e),
        From::Time(t) => on_row(l, kind, t),
    };
    let i = if forward {
        let i = track.start.partition_point(|&s| s <= t);
        (i..track.len()).find(|&k| track.lasts(k, min_dur))
    } else {
        let i = track.start.partition_point(|&s| s < t);
        (0..i).rev().find(|&k| track.lasts(k, min_dur))
    };
    i.map(|i| make(track.row(i)))
}

/// An event's start on its own file's clock.
fn raw_start(l: &Loaded, e: EventRef) -> i64 {
    let p = &l.profile;
    match e {
        EventRef::Gpu(r) => p.gpu.start(r),
        EventRef::Api(r) => p.runtime.start(r),
        EventRef::Nvtx(r) => p.nvtx.start(r),
        EventRef::Osrt(r) => p.osrt.start(r),
        EventRef::Sched(_) | EventRef::Sample(_) => drawn(l, e).0,
    }
}
