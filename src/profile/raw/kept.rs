//! Which runtime and NVTX rows the loader keeps, and what of them decides
//! it: one rule for the rows it loads (`raw.rs`) and the rows it only
//! counts (`load/counts.rs`), so that the counts are those of a load.

use super::select::NamedRow;
use crate::profile::spec::{ColumnSet, NvtxColumn as N, RuntimeColumn as R};

/// A runtime call the loader keeps (see [`kept_call`]).
pub(crate) struct KeptCall {
    pub start: i64,
    /// As recorded: one before the start is left out of a load
    /// (`load/suspect.rs`), and counted as ending at its start.
    pub end: i64,
    pub global_tid: i64,
}

/// The columns [`kept_call`] reads.
pub(crate) const CALL_COLUMNS: ColumnSet<R> = R::set(&[R::Start, R::End, R::GlobalTid]);

/// The call of a runtime row, kept when its start, end and globalTid read
/// as integers.
#[inline(always)]
pub(crate) fn kept_call(r: &NamedRow<R>) -> Option<KeptCall> {
    match (r.int(R::Start), r.int(R::End), r.int(R::GlobalTid)) {
        (Some(start), Some(end), Some(global_tid)) => Some(KeptCall {
            start,
            end,
            global_tid,
        }),
        _ => None,
    }
}

/// What every NVTX row the loader reads has (see [`read_event`]).
pub(crate) struct NvtxEvent {
    pub start: i64,
    pub event_type: i64,
    pub global_tid: i64,
}

/// The columns [`read_event`] reads.
pub(crate) const EVENT_COLUMNS: ColumnSet<N> = N::set(&[N::Start, N::EventType, N::GlobalTid]);

/// An NVTX row's event, read when its start, eventType and globalTid read
/// as integers.
#[inline(always)]
pub(crate) fn read_event(r: &NamedRow<N>) -> Option<NvtxEvent> {
    match (r.time(N::Start), r.int(N::EventType), r.int(N::GlobalTid)) {
        (Some(start), Some(event_type), Some(global_tid)) => Some(NvtxEvent {
            start,
            event_type,
            global_tid,
        }),
        _ => None,
    }
}
