//! Ground truth of the failure scenarios (staggered, hang, crash, desync; job.rs), from the
//! generator's own event lists in true time (no rankline code, no SQL).
//!
//! Fields of `<scenario>.truth.json` (instants `*_ns` are timestamps of the reference clock;
//! durations and skews are true ns, which that clock keeps):
//! - `clock`: what the reference clock is (the first file's own timestamps; it has no drift);
//!   `reference`: that file's path.
//! - `sequence_length`: collectives in the job's sequence (the most any rank launched);
//!   `sequence`: their ops, in order.
//! - `captured[]`, one per rank: `file` (path), `device` (as rankline labels it: the host's
//!   first name, the physical GPU id, ` r<rank>` when the file records the rank: `stg00:1 r1`),
//!   `host`, `gpu_id`, `cuda_device` (deviceId in the file's kernels), `pid`, `rank`, `first` /
//!   `last` (1-based instance numbers along the whole sequence of the rank's first and last NCCL
//!   kernel in its file).
//! - `instances[]`, one per instance of the sequence: `instance` (1-based), `op` (what most
//!   ranks run), `ops` (`{op: [ranks]}` over present ranks), `present` (ranks whose kernel of the
//!   instance is in their file), `missing` (the other ranks: outside their capture, or never
//!   launched), `unfinished` (present ranks whose kernel has not ended at capture end: its
//!   `end` equals the file's capture end, or is NULL), `start_ns` (`{rank: start}` of the
//!   present ranks), `skew_ns` (max − min true start over the present ranks; 0 when ≤ 1).
//! - `desync`: null, or `{instance, instances, ops}`: the first instance whose present ranks
//!   run different ops, every such instance, and `{op: [ranks]}` at the first.
//! - `behind` (hang only, else null): `last_complete` (last instance every rank finished),
//!   `diverges_at` (first instance some rank never launched), `waiting` (ranks that launched
//!   it), `behind` (ranks that did not), `waiting_since_ns` (the earliest start among the
//!   waiting ranks' kernels of `diverges_at`), `last_seen` (`{rank: {cuda_call, cuda_call_start_ns,
//!   nvtx, nvtx_start_ns, osrt, osrt_start_ns, frame, frames, at_ns}}` for each behind rank: the
//!   open runtime call it is inside at capture end (its `end` = capture end), the open NVTX
//!   push/pop range (innermost), the OSRT call, the leaf frame of its last CPU sample and that
//!   sample's frames leaf first; `at_ns` = the start of that runtime call).
//! - `files[]`: per_rank's clock fields (truth_clock.rs: `path`, `host`, `timebase`,
//!   `first_event_ns`, `last_event_ns`, `true_offset_ns`, `true_drift_ppm`, UTC fields …), plus
//!   `capture_start_ns` / `capture_end_ns` (ANALYSIS_DETAILS startTime / stopTime on the
//!   reference clock), `file_capture_start_ns` / `file_capture_end_ns` (the same instants on the
//!   file's own event clock), `analysis_details` (`{startTime, stopTime}` as written: the boot
//!   clock's reading for session-relative files, as per_rank's) and `ranks`.
//! - `early_stop[]`: `{rank, instances_before_end}` for ranks whose capture stopped cleanly
//!   before the others' (between collectives): the latest `last` of any rank minus its `last`.
//! - `crashed`: ranks whose process died mid-step (their file ends there).
//! - `scenario`: what was generated.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::clock::Timebase;
use crate::job::Slot;
use crate::truth_clock::{File, clock_fields};

/// What a failure scenario hands the oracle.
pub struct Faults<'a> {
    /// The files, events still in true time (before their clocks are applied).
    pub files: &'a [File],
    /// For each rank: (file index, pid, CUDA device).
    pub rank_at: Vec<(usize, u32, u32)>,
    /// Job kernels, [instance][rank], true time.
    pub kernels: &'a [Vec<Slot>],
    pub seq: &'a [&'static str],
    pub early_stop: Vec<usize>,
    pub crashed: Vec<usize>,
    pub behind: Option<Value>,
}

impl Faults<'_> {
    /// The reference file's timestamp of true time `t`.
    pub fn on_ref(&self, t: i64) -> i64 {
        let r = &self.files[0].clock;
        assert_eq!(r.drift_ppm, 0.0, "the reference clock defines true time");
        t - (r.session_true - r.session_file)
    }

    fn window(&self, rank: usize) -> (i64, i64) {
        let c = &self.files[self.rank_at[rank].0].clock;
        (c.session_true, c.stop_true)
    }

    /// The rank's kernel of `inst` if its file holds it.
    pub fn present(&self, inst: usize, rank: usize) -> Slot {
        let (lo, hi) = self.window(rank);
        self.kernels[inst][rank].filter(|k| k.1 >= lo && k.1 < hi)
    }

    pub fn unfinished(&self, inst: usize, rank: usize) -> bool {
        self.present(inst, rank)
            .is_some_and(|k| k.2 >= self.window(rank).1)
    }
}

fn ops_of(f: &Faults, inst: usize) -> BTreeMap<&'static str, Vec<usize>> {
    let mut ops: BTreeMap<&'static str, Vec<usize>> = BTreeMap::new();
    for r in 0..f.rank_at.len() {
        if let Some(k) = f.present(inst, r) {
            ops.entry(k.0).or_default().push(r);
        }
    }
    ops
}

fn instance_json(f: &Faults, inst: usize) -> Value {
    let n = f.rank_at.len();
    let present: Vec<usize> = (0..n).filter(|&r| f.present(inst, r).is_some()).collect();
    let missing: Vec<usize> = (0..n).filter(|r| !present.contains(r)).collect();
    let unfinished: Vec<usize> = (0..n).filter(|&r| f.unfinished(inst, r)).collect();
    let starts: Vec<i64> = present
        .iter()
        .map(|&r| f.present(inst, r).unwrap().1)
        .collect();
    let start_ns: Map<String, Value> = present
        .iter()
        .zip(&starts)
        .map(|(r, &s)| (r.to_string(), json!(f.on_ref(s))))
        .collect();
    let skew = match (starts.iter().max(), starts.iter().min()) {
        (Some(a), Some(b)) => a - b,
        _ => 0,
    };
    let ops = ops_of(f, inst);
    let op = ops
        .iter()
        .max_by_key(|(_, v)| v.len())
        .map_or(f.seq[inst], |(o, _)| *o);
    json!({
        "instance": inst + 1,
        "op": op,
        "ops": ops,
        "present": present,
        "missing": missing,
        "unfinished": unfinished,
        "start_ns": start_ns,
        "skew_ns": skew,
    })
}

/// A device as rankline labels it: the host's first name, the GPU id, and ` r<rank>` when the
/// file records the rank (`stg00:1 r1`, `hang01:2`).
fn label(f: &File, gpu: u32, rank: usize) -> String {
    let short = f.profile.host.split('.').next().unwrap();
    if f.ranks.is_empty() {
        format!("{short}:{gpu}")
    } else {
        format!("{short}:{gpu} r{rank}")
    }
}

/// The truth of a failure scenario (fields above).
pub fn truth(f: &Faults, scenario: Value) -> Value {
    let n = f.rank_at.len();
    let insts: Vec<usize> = (0..f.seq.len()).collect();
    let mut captured = vec![];
    let mut lasts = vec![];
    for r in 0..n {
        let (fi, pid, dev) = f.rank_at[r];
        let file = &f.files[fi];
        let p = &file.profile;
        let gpu = p
            .gpus
            .iter()
            .find(|g| g.cuda_id == Some(dev))
            .expect("the rank's GPU");
        let mine: Vec<usize> = insts
            .iter()
            .copied()
            .filter(|&i| f.present(i, r).is_some())
            .collect();
        // the file holds exactly these NCCL kernels of the rank
        let in_file = p
            .kernels
            .iter()
            .filter(|k| k.nccl.is_some() && k.pid == pid)
            .count();
        assert_eq!(in_file, mine.len(), "rank {r}: kernels in file vs truth");
        let (first, last) = (mine.first().map(|i| i + 1), mine.last().map(|i| i + 1));
        lasts.push(last.unwrap_or(0));
        captured.push(json!({
            "file": p.path,
            "device": label(file, gpu.id, r),
            "host": p.host,
            "gpu_id": gpu.id,
            "cuda_device": dev,
            "pid": pid,
            "rank": r,
            "first": first,
            "last": last,
        }));
    }
    let mixed: Vec<usize> = insts
        .iter()
        .copied()
        .filter(|&i| ops_of(f, i).len() > 1)
        .collect();
    let desync = mixed.first().map(|&i| {
        json!({
            "instance": i + 1,
            "instances": mixed.iter().map(|i| i + 1).collect::<Vec<_>>(),
            "ops": ops_of(f, i),
        })
    });
    let end = *lasts.iter().max().unwrap();
    let files: Vec<Value> = f
        .files
        .iter()
        .map(|file| {
            let c = &file.clock;
            let mut m = clock_fields(&f.files[0].clock, &file.profile, c);
            m.insert("capture_start_ns".into(), json!(f.on_ref(c.session_true)));
            m.insert("capture_end_ns".into(), json!(f.on_ref(c.stop_true)));
            m.insert(
                "file_capture_start_ns".into(),
                json!(c.file_time(c.session_true)),
            );
            m.insert(
                "file_capture_end_ns".into(),
                json!(c.file_time(c.stop_true)),
            );
            // ANALYSIS_DETAILS as written (clock.rs: on the boot clock for both timebases)
            let stop_file = c.file_time(c.stop_true);
            let (start, stop) = match c.timebase {
                Timebase::Boot => (c.session_file, stop_file),
                Timebase::Session => (c.boot_at_session, c.boot_at_session + stop_file),
            };
            m.insert(
                "analysis_details".into(),
                json!({"startTime": start, "stopTime": stop}),
            );
            let ranks: Vec<usize> = (0..n)
                .filter(|&r| std::ptr::eq(&f.files[f.rank_at[r].0], file))
                .collect();
            m.insert("ranks".into(), json!(ranks));
            Value::Object(m)
        })
        .collect();
    json!({
        "clock": format!("timestamps of the reference file {}'s own clock ({}; it has no drift, so it keeps true time); a file's timestamp t maps onto it as t + true_offset_ns + true_drift_ppm·1e-6·(t − first_event_ns)", f.files[0].profile.path, f.files[0].clock.timebase.name()),
        "reference": f.files[0].profile.path,
        "sequence_length": f.seq.len(),
        "sequence": f.seq,
        "captured": captured,
        "instances": insts.iter().map(|&i| instance_json(f, i)).collect::<Vec<_>>(),
        "desync": desync,
        "behind": f.behind.clone(),
        "files": files,
        "early_stop": f.early_stop.iter().map(|&r| json!({"rank": r, "instances_before_end": end - lasts[r]})).collect::<Vec<_>>(),
        "crashed": f.crashed,
        "scenario": scenario,
    })
}
