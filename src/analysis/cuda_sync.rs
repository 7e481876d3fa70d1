//! CUDA synchronisation records read for what they mean: which kind of
//! sync each is (decided by its call's name first: real exports record
//! wrong `syncType`s — 2024.5 a stream synchronize as type 2 with eventId
//! 2³²−1, 2022.1 event synchronizes as type 2), and for a stream that
//! waited on an event, the event's record and the GPU work it followed.

use super::clock::Alignment;
use crate::profile::{LaneId, NONE, Profile};

/// `eventId` of a sync that names no event.
pub const NO_EVENT: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncKind {
    /// The CPU waited for an event (`cudaEventSynchronize`).
    EventSync,
    /// A stream waits, on the GPU, for an event (`cudaStreamWaitEvent`):
    /// the CPU call returns at once.
    StreamWaitEvent,
    /// The CPU waited for a stream (`cudaStreamSynchronize`).
    StreamSync,
    /// The CPU waited for the whole device (`cudaDeviceSynchronize`).
    ContextSync,
    Unknown,
}

impl SyncKind {
    /// Whether the calling thread waited in it.
    pub fn blocks_cpu(self) -> bool {
        !matches!(self, SyncKind::StreamWaitEvent | SyncKind::Unknown)
    }
}

/// The kind of a sync call by its name (any version suffix stripped).
pub fn kind_of_call(name: &str) -> Option<SyncKind> {
    Some(match crate::profile::names::strip_api_version(name) {
        "cudaStreamWaitEvent" | "cuStreamWaitEvent" => SyncKind::StreamWaitEvent,
        "cudaEventSynchronize" | "cuEventSynchronize" => SyncKind::EventSync,
        "cudaStreamSynchronize" | "cuStreamSynchronize" => SyncKind::StreamSync,
        "cudaDeviceSynchronize" | "cudaThreadSynchronize" | "cuCtxSynchronize" => {
            SyncKind::ContextSync
        }
        _ => return None,
    })
}

/// The kind of sync row `row`: its call's name when it has one, else its
/// recorded type (a "stream wait" naming no event is a stream sync).
pub fn kind(p: &Profile, row: usize) -> SyncKind {
    let call = p.syncs.call(row);
    if call != NONE
        && let Some(k) = kind_of_call(p.strings.get(p.runtime.name(call as usize)))
    {
        return k;
    }
    let event = p.syncs.event(row) != NO_EVENT;
    match p.syncs.sync_type(row) {
        1 if event => SyncKind::EventSync,
        2 if event => SyncKind::StreamWaitEvent,
        2 | 3 => SyncKind::StreamSync,
        4 => SyncKind::ContextSync,
        _ => SyncKind::Unknown,
    }
}

/// When the CPU issued sync row `row`: its call's start, else its own.
fn issued_at(p: &Profile, clock: &Alignment, row: usize) -> i64 {
    let call = p.syncs.call(row);
    if call != NONE {
        clock.runtime_span(p, call as usize).0
    } else {
        clock.sync_span(p, row).0
    }
}

/// When GPU row `row`'s launch call started (None without one).
pub fn launched_at(p: &Profile, clock: &Alignment, row: usize) -> Option<i64> {
    let c = p.gpu.launch(row);
    (c != NONE).then(|| clock.runtime_span(p, c as usize).0)
}

/// A stream's wait on an event, resolved to the work the event followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventWait {
    /// The sync row of the wait.
    pub sync: usize,
    pub event: u32,
    /// The event's record (a CUDA_EVENT row) and its stream's lane.
    pub record: usize,
    pub record_lane: LaneId,
    /// The last GPU work launched on that stream before the record:
    /// what the event completes after. None when the capture lacks it.
    pub followed: Option<usize>,
}

/// The event waits issued on GPU row `row`'s stream after the work before
/// it there was launched and before it was: what its stream waited on
/// ahead of it. Needs its launch call; each wait takes the latest record
/// of its event before the wait was issued, as CUDA does.
pub fn waits_before(p: &Profile, clock: &Alignment, row: usize) -> Vec<EventWait> {
    let lane = p.gpu.lane(row);
    let process = p.lanes[lane as usize].process;
    let Some(until) = launched_at(p, clock, row) else {
        return Vec::new();
    };
    let rows = &p.lanes[lane as usize].rows;
    let after = (row > rows.start)
        .then(|| launched_at(p, clock, row - 1))
        .flatten()
        .unwrap_or(i64::MIN);
    let Some(syncs) = p.syncs_by_process.get(process as usize) else {
        return Vec::new();
    };
    let start = clock.gpu_span(p, row).0;
    let mut out = Vec::new();
    for s in syncs.clone() {
        if p.syncs.lane(s) != lane || p.syncs.event(s) == NO_EVENT {
            continue;
        }
        let at = issued_at(p, clock, s);
        if at <= after || at > until || kind(p, s) != SyncKind::StreamWaitEvent {
            continue;
        }
        if let Some(w) = resolve(p, clock, s, at, start) {
            out.push(w);
        }
    }
    out
}

/// The record of sync `s`'s event latest before `at`, and the work it
/// followed (launched before the record, started before `limit`: the
/// waiting work's start).
fn resolve(p: &Profile, clock: &Alignment, s: usize, at: i64, limit: i64) -> Option<EventWait> {
    let process = p.syncs.process(s);
    let event = p.syncs.event(s);
    let records = p.cuda_events_by_process.get(process as usize)?.clone();
    let record = records
        .filter(|&e| p.cuda_events.event(e) == event)
        .filter_map(|e| {
            let c = p.cuda_events.call(e);
            (c != NONE).then(|| (e, clock.runtime_span(p, c as usize).0))
        })
        .filter(|&(_, t)| t < at)
        .max_by_key(|&(e, t)| (t, e))?;
    Some(wait_on(p, clock, s, record, limit))
}

/// Sync `s`'s wait on `record` (its row, the record call's start).
fn wait_on(
    p: &Profile,
    clock: &Alignment,
    s: usize,
    record: (usize, i64),
    limit: i64,
) -> EventWait {
    let record_lane = p.cuda_events.lane(record.0);
    let followed = (record_lane != NONE)
        .then(|| last_launched_before(p, clock, record_lane, record.1, limit))
        .flatten();
    EventWait {
        sync: s,
        event: p.syncs.event(s),
        record: record.0,
        record_lane,
        followed,
    }
}

/// Every event record with its call, by (process, event), in the order
/// of the record calls' starts: [`waits_of_lane`] resolves a wait by a
/// search here instead of a scan of the process's records.
pub struct RecordIndex(std::collections::HashMap<(u32, u32), Vec<(i64, usize)>>);

impl RecordIndex {
    pub fn new(p: &Profile, clock: &Alignment) -> RecordIndex {
        let mut by: std::collections::HashMap<(u32, u32), Vec<(i64, usize)>> = Default::default();
        for (process, rows) in p.cuda_events_by_process.iter().enumerate() {
            for e in rows.clone() {
                let c = p.cuda_events.call(e);
                if c != NONE {
                    by.entry((process as u32, p.cuda_events.event(e)))
                        .or_default()
                        .push((clock.runtime_span(p, c as usize).0, e));
                }
            }
        }
        for v in by.values_mut() {
            v.sort_unstable();
        }
        RecordIndex(by)
    }
}

/// A stream-wait-event with its event's record found: when it was issued
/// (reference clock), the sync row and the record (its row, the record
/// call's start). [`LaneWait::on`] finds the work the record followed.
#[derive(Debug, Clone, Copy)]
pub struct LaneWait {
    pub at: i64,
    sync: usize,
    record: (usize, i64),
}

impl LaneWait {
    /// The wait as [`waits_before`] gives it to the row `row` it held:
    /// the work the record followed is searched among those that started
    /// before `row` did.
    pub fn on(&self, p: &Profile, clock: &Alignment, row: usize) -> EventWait {
        wait_on(p, clock, self.sync, self.record, clock.gpu_span(p, row).0)
    }
}

/// The stream-wait-events on `lane` issued in `window`, each with its
/// event's latest record before it (as [`waits_before`] takes it), in the
/// order they were issued: each held the first row launched after it.
pub fn waits_of_lane(
    p: &Profile,
    clock: &Alignment,
    idx: &RecordIndex,
    lane: LaneId,
    window: (i64, i64),
) -> Vec<LaneWait> {
    let process = p.lanes[lane as usize].process;
    let mut out: Vec<LaneWait> = waits_on_lane(p, clock, lane, window)
        .into_iter()
        .filter_map(|(s, _)| {
            let at = issued_at(p, clock, s);
            let records = idx.0.get(&(process, p.syncs.event(s)))?;
            let before = records.partition_point(|&(t, _)| t < at);
            let &(t, e) = records.get(before.checked_sub(1)?)?;
            Some(LaneWait {
                at,
                sync: s,
                record: (e, t),
            })
        })
        .collect();
    out.sort_by_key(|w| w.at);
    out
}

/// How far back a lane is searched for the work launched before a record.
const SEARCH_ROWS: usize = 512;

/// The last row of `lane` whose launch call started before `t`, among the
/// rows whose GPU start is before `limit` (a stream runs its work in the
/// order it was launched, so the search walks back from there).
fn last_launched_before(
    p: &Profile,
    clock: &Alignment,
    lane: LaneId,
    t: i64,
    limit: i64,
) -> Option<usize> {
    let rows = p.lanes[lane as usize].rows.clone();
    let (mut lo, mut hi) = (rows.start, rows.end);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if clock.gpu_span(p, mid).0 < limit {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    (rows.start..lo)
        .rev()
        .take(SEARCH_ROWS)
        .find(|&r| launched_at(p, clock, r).is_some_and(|l| l < t))
}

/// At most this many waits are listed per call (a zoomed-out view of a
/// long capture holds more than can be told apart anyway).
pub const MAX_WAITS_LISTED: usize = 4096;

/// The stream-wait-event syncs on `lane` starting in `window` (reference
/// clock), as (sync row, start): where the timeline marks a stream that
/// waited on an event. A process's syncs are sorted by start: found by
/// binary search.
pub fn waits_on_lane(
    p: &Profile,
    clock: &Alignment,
    lane: LaneId,
    window: (i64, i64),
) -> Vec<(usize, i64)> {
    let process = p.lanes[lane as usize].process;
    let Some(rows) = p.syncs_by_process.get(process as usize).cloned() else {
        return Vec::new();
    };
    let (mut lo, mut hi) = (rows.start, rows.end);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if clock.sync_span(p, mid).0 < window.0 {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    (lo..rows.end)
        .map(|s| (s, clock.sync_span(p, s).0))
        .take_while(|&(_, t)| t < window.1)
        .filter(|&(s, _)| {
            p.syncs.lane(s) == lane
                && p.syncs.event(s) != NO_EVENT
                && kind(p, s) == SyncKind::StreamWaitEvent
        })
        .take(MAX_WAITS_LISTED)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_call_name_decides_the_kind() {
        assert_eq!(
            kind_of_call("cudaStreamWaitEvent"),
            Some(SyncKind::StreamWaitEvent)
        );
        assert_eq!(
            kind_of_call("cudaEventSynchronize"),
            Some(SyncKind::EventSync)
        );
        assert_eq!(kind_of_call("cudaLaunchKernel"), None);
        assert!(!SyncKind::StreamWaitEvent.blocks_cpu());
        assert!(SyncKind::StreamSync.blocks_cpu());
    }
}
