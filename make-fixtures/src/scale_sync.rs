//! `scale --cpu`: CUPTI_ACTIVITY_KIND_SYNCHRONIZATION and CUPTI_ACTIVITY_KIND_CUDA_EVENT rows
//! of the main thread's calls, as PyTorch's ProcessGroupNCCL makes them:
//! - each `cudaEventRecord` (after an NCCL launch) records the process group's event on the
//!   compute stream: a CUDA_EVENT row (eventId of the group's event, a new eventSyncId, the
//!   completion time: when the compute stream got past the record);
//! - each `cudaStreamWaitEvent` (before an NCCL launch) makes the NCCL stream wait for that
//!   event: a SYNCHRONIZATION row (syncType 2) on the NCCL stream, with the eventId and the
//!   eventSyncId of the event's latest record (0 before the first);
//! - each step's `cudaStreamSynchronize` on the compute stream: syncType 3, eventId
//!   4294967295, eventSyncId 0.
//!
//! A row's correlationId is its call's; start and end lie inside the call, as in real exports.

use super::{A_RECORD, A_SYNC, A_WAIT, NONE, ScaleWriter};
use crate::model::global_pid;
use crate::rng::Rng;
use crate::scale_step::{COMPUTE, NCCL, NCCL_AR, S_COMPUTE, STREAM_IDS};

pub const SYNC_COLS: &str = "start, end, deviceId, contextId, greenContextId, streamId, correlationId, globalPid, deprecatedSyncType, syncType, eventId, eventSyncId";
pub const SYNC_ROW: &str = "(?, ?, ?, ?, NULL, ?, ?, ?, NULL, ?, ?, ?)";
pub const EVENT_COLS: &str = "timestamp, deviceId, contextId, greenContextId, streamId, correlationId, globalPid, eventId, eventSyncId";
pub const EVENT_ROW: &str = "(?, ?, ?, NULL, ?, ?, ?, ?, ?)";

/// The event each process group's launches record (by stream index; as in real exports,
/// a process's event ids are small counters).
const EVENT_ID: [i64; 3] = [0, 1762, 1790];
const NO_EVENT: i64 = 4_294_967_295;
const SYNC_WAIT: i64 = 2;
const SYNC_STREAM: i64 = 3;

struct SyncRow {
    start: i64,
    end: i64,
    dev: u32,
    stream: u32,
    corr: i64,
    sync_type: i64,
    event: i64,
    event_sync: i64,
}

struct EventRow {
    /// The record call's start (the rows' order).
    at: i64,
    timestamp: i64,
    dev: u32,
    corr: i64,
    event: i64,
    event_sync: i64,
}

pub struct SyncGen {
    rng: Rng,
    /// Per device: the next eventSyncId, and each NCCL stream's event's latest record's.
    next_sync: Vec<i64>,
    last_record: Vec<[i64; 3]>,
    /// Per device, this step: the stream of each main-thread call's kernel (u8::MAX: none),
    /// and the compute stream's work as (call, end), in call order.
    stream_of: Vec<Vec<u8>>,
    compute: Vec<Vec<(u32, i64)>>,
    syncs: Vec<SyncRow>,
    events: Vec<EventRow>,
}

impl SyncGen {
    pub fn new(devices: usize) -> Self {
        SyncGen {
            rng: Rng::new(0x5E_5CA1_E000),
            next_sync: vec![1; devices],
            last_record: vec![[0; 3]; devices],
            stream_of: vec![vec![]; devices],
            compute: vec![vec![]; devices],
            syncs: vec![],
            events: vec![],
        }
    }

    /// The rows of the step the simulation just made.
    pub fn step(&mut self, sim: &ScaleWriter) {
        self.syncs.clear();
        self.events.clear();
        for (d, dev) in sim.devs.iter().enumerate() {
            self.stream_of[d].clear();
            self.stream_of[d].resize(dev.main.len(), u8::MAX);
            self.compute[d].clear();
        }
        let b = &sim.batch;
        for k in &b.kernels {
            if k.call == NONE {
                continue;
            }
            let d = k.dev as usize;
            self.stream_of[d][k.call as usize] = k.stream;
            if k.stream == COMPUTE {
                self.compute[d].push((k.call, k.end));
            }
        }
        for m in &b.mem {
            if m.call != NONE {
                self.compute[m.dev as usize].push((m.call, m.end));
            }
        }
        let rng = &mut self.rng;
        for (d, dev) in sim.devs.iter().enumerate() {
            let compute = &mut self.compute[d];
            compute.sort_unstable();
            let (mut g, mut done) = (0, 0);
            for (i, &(start, end, api)) in dev.main.iter().enumerate() {
                let corr = dev.corr_of_main[i];
                match api {
                    A_WAIT => {
                        let st = self.stream_of[d][i + 1];
                        debug_assert!(st == NCCL || st == NCCL_AR);
                        let s = start + rng.range(200, 600);
                        self.syncs.push(SyncRow {
                            start: s,
                            end: (end - rng.range(150, 500)).max(s + 100),
                            dev: d as u32,
                            stream: STREAM_IDS[st as usize],
                            corr,
                            sync_type: SYNC_WAIT,
                            event: EVENT_ID[st as usize],
                            event_sync: self.last_record[d][st as usize],
                        });
                    }
                    A_RECORD => {
                        let st = self.stream_of[d][i - 1];
                        debug_assert!(st == NCCL || st == NCCL_AR);
                        while g < compute.len() && (compute[g].0 as usize) < i {
                            done = compute[g].1;
                            g += 1;
                        }
                        let sync_id = self.next_sync[d];
                        self.next_sync[d] += 1;
                        self.last_record[d][st as usize] = sync_id;
                        self.events.push(EventRow {
                            at: start,
                            timestamp: (done + rng.range(500, 1_500))
                                .max(end + rng.range(2_000, 5_000)),
                            dev: d as u32,
                            corr,
                            event: EVENT_ID[st as usize],
                            event_sync: sync_id,
                        });
                    }
                    A_SYNC => {
                        let s = start + rng.range(400, 800);
                        self.syncs.push(SyncRow {
                            start: s,
                            end: (end - rng.range(300, 1_000)).max(s + 100),
                            dev: d as u32,
                            stream: S_COMPUTE,
                            corr,
                            sync_type: SYNC_STREAM,
                            event: NO_EVENT,
                            event_sync: 0,
                        });
                    }
                    _ => {}
                }
            }
        }
        self.syncs.sort_by_key(|r| (r.start, r.dev));
        self.events.sort_by_key(|r| (r.at, r.dev));
    }

    /// The step's SYNCHRONIZATION rows, SYNC_ROW's values in turn.
    pub fn sync_rows(&self, v: &mut Vec<i64>) {
        for r in &self.syncs {
            v.extend([
                r.start,
                r.end,
                r.dev as i64,
                r.dev as i64 + 1,
                r.stream as i64,
                r.corr,
                global_pid(super::PID0 + r.dev),
                r.sync_type,
                r.event,
                r.event_sync,
            ]);
        }
    }

    /// The step's CUDA_EVENT rows, EVENT_ROW's values in turn.
    pub fn event_rows(&self, v: &mut Vec<i64>) {
        for r in &self.events {
            v.extend([
                r.timestamp,
                r.dev as i64,
                r.dev as i64 + 1,
                S_COMPUTE as i64,
                r.corr,
                global_pid(super::PID0 + r.dev),
                r.event,
                r.event_sync,
            ]);
        }
    }
}
