//! Planted causes of lateness (`fixtures/why.sqlite`, issue 21): one host, 8 ranks (one
//! process per GPU), 9 AllReduce instances on stream 20, 100 ms apart. At instance k (1..7,
//! 1-based k+1) rank k is late, each for a cause the account must name:
//!
//! 1. blocked in `cudaStreamSynchronize` on a 47 ms GEMM of its stream 7;
//! 2. waiting in an OS runtime `pthread_cond_wait` (OSRT_API);
//! 3. descheduled for 10 ms (SCHED_EVENTS), its data worker thread running on that CPU, then
//!    12 ms in an OS runtime `read`;
//! 4. busy on-CPU in `DataLoader.__next__` (CPU samples at 1 kHz with call stacks);
//! 5. launched in time, queued on its own stream 20 behind an elementwise kernel;
//! 6. launched in time, behind a stream-wait-event on an event recorded on stream 24 after a
//!    GEMM that was itself queued behind another GEMM there;
//! 7. late with nothing recorded on its thread.
//!
//! Instances 0 and 8 have no late rank. There is no NVTX, so nothing explains the time that
//! the planted cause does not. Times are written as is (one clock); the truth is the planted
//! intervals, clipped to each window as the issue defines it.

use rusqlite::{Transaction, params};
use serde_json::{Value, json};

use crate::assemble::{Rank, process, threads};
use crate::model::*;
use crate::names::{self, Compute};
use crate::writer::Strings;

pub const PATH: &str = "fixtures/why.sqlite";
const HOST: &str = "dgx-w01";
const RANKS: u32 = 8;
const INSTANCES: usize = 9;
const PID0: u32 = 6101;
/// The data worker thread's tid offset from its process's pid.
const WORKER: u32 = 5;
const S_COMPUTE: u32 = 7;
const S_NCCL: u32 = 20;
const S_SIDE: u32 = 24;
const T0: i64 = 5_000_000_000;
const GAP: i64 = 100_000_000;
const US: i64 = 1_000;
const MS: i64 = 1_000_000;
/// The NCCL launch call's duration, and how long after it returns the kernel starts.
const LAUNCH: i64 = 8 * US;
const START_AFTER: i64 = 6 * US;
/// The sampling period of the busy rank (1 kHz).
const PERIOD: i64 = MS;
const EVENT_ID: i64 = 77;
const SAMPLE_CPU: i64 = 12;

const SYNC: &str = "cudaStreamSynchronize_v3020";
const LAUNCH_API: &str = "cuLaunchKernelEx";
const COMPUTE_API: &str = "cudaLaunchKernel_v7000";
const RECORD: &str = "cudaEventRecord_v3020";
const WAIT_EVENT: &str = "cudaStreamWaitEvent_v3020";
const COND_WAIT: &str = "pthread_cond_wait";
const READ: &str = "read";
const FRAME: &str = "DataLoader.__next__";
const LIBC: &str = "/usr/lib/x86_64-linux-gnu/libc.so.6";
const PY: &str = "/usr/bin/python3.10";
/// Leaf frames of the busy rank's samples, taken in turn: none is shared by most samples.
const LEAVES: [&str; 3] = [
    "__memmove_avx_unaligned_erms",
    "PyObject_GetAttr",
    "_PyObject_MakeTpCall",
];
/// Frames above `FRAME`, innermost first.
const OUTER: [&str; 4] = [
    "_PyEval_EvalFrameDefault",
    "train_step",
    "Py_RunMain",
    "__libc_start_main",
];
/// A kernel-mode frame on top of every fourth sample.
const KERNEL_FRAME: &str = "copy_user_enhanced_fast_string";

/// The CPU-side rows the writer does not model.
#[derive(Default)]
struct Cpu {
    /// (pid, tid, start, end, function).
    osrt: Vec<(u32, u32, i64, i64, &'static str)>,
    /// (pid, tid, time, cpu, sched in).
    sched: Vec<(u32, u32, i64, i64, bool)>,
    /// (pid, tid, time, kernel-mode frame on top, leaf).
    samples: Vec<(u32, u32, i64, bool, &'static str)>,
    /// (pid, start, end, device, stream, correlation of the wait call).
    waits: Vec<(u32, i64, i64, u32, u32, i64)>,
    /// (pid, device, stream, correlation of the record call).
    records: Vec<(u32, u32, u32, i64)>,
}

struct Builder {
    p: Profile,
    cpu: Cpu,
    next_corr: Vec<i64>,
}

impl Builder {
    fn rank(r: u32) -> Rank {
        Rank {
            pid: PID0 + r,
            device: r,
            context_id: r + 1,
        }
    }

    fn call(&mut self, r: u32, api: &str, class: u32, start: i64, dur: i64) -> i64 {
        let corr = self.next_corr[r as usize];
        self.next_corr[r as usize] += 1;
        let pid = PID0 + r;
        self.p.calls.push(Call {
            pid,
            tid: pid,
            start,
            end: start + dur,
            api: api.into(),
            class,
            corr,
        });
        corr
    }

    /// A compute kernel launched at `call` (5 µs), running [start, end].
    fn compute(&mut self, r: u32, stream: u32, call: i64, (start, end): (i64, i64), c: Compute) {
        let corr = self.call(r, COMPUTE_API, 0, call, 5 * US);
        let mut k = Self::rank(r).compute(stream, start, end, c);
        k.corr = corr;
        self.p.kernels.push(k);
    }

    /// The NCCL kernel launched at `call`, starting at `start` (or when the call returns).
    fn nccl(&mut self, r: u32, call: i64, start: Option<i64>, end: i64) -> i64 {
        let corr = self.call(r, LAUNCH_API, 1, call, LAUNCH);
        let start = start.unwrap_or(call + LAUNCH + START_AFTER);
        let coll = names::nccl("AllReduce", Some("bf16"), "RING", "LL");
        let mut k = Self::rank(r).nccl(S_NCCL, start, end, &coll, 16);
        k.corr = corr;
        self.p.kernels.push(k);
        start
    }
}

fn span_ms((a, b): (i64, i64)) -> f64 {
    (b - a) as f64 / 1e6
}

fn part(kind: &str, name: &str, spans: &[(i64, i64)]) -> Value {
    let ns: i64 = spans.iter().map(|s| s.1 - s.0).sum();
    json!({"kind": kind, "name": name, "ms": ns as f64 / 1e6,
           "start_ns": spans[0].0, "end_ns": spans.last().unwrap().1})
}

fn link(kind: &str, stream: u32, name: &str, (a, b): (i64, i64)) -> Value {
    json!({"kind": kind, "stream": stream, "name": name, "start_ns": a, "end_ns": b, "ms": span_ms((a, b))})
}

pub fn build() -> (
    Profile,
    Value,
    impl Fn(&Transaction, &mut Strings) -> rusqlite::Result<()>,
) {
    let mut b = Builder {
        p: Profile {
            path: PATH.into(),
            host: HOST.into(),
            ..Default::default()
        },
        cpu: Cpu::default(),
        next_corr: vec![1; RANKS as usize],
    };
    let mut urng = crate::rng::Rng::new(0x5EED_0040);
    for r in 0..RANKS {
        let rk = Builder::rank(r);
        b.p.gpus.push(h100(r, DGX_BUS[r as usize], uuid(&mut urng)));
        let ctx = Context {
            device: r,
            context_id: rk.context_id,
            null_stream: S_COMPUTE,
            streams: vec![(S_COMPUTE, 3, 0), (S_NCCL, 2, 0), (S_SIDE, 2, 0)],
        };
        let th = threads(rk.pid, &[(0, "python3"), (WORKER, "pt_data_worker")]);
        b.p.processes
            .push(process(rk.pid, "python3", th, Some(ctx)));
    }
    let gemm = names::compute_name(Compute::Xmma).short;
    let elementwise = names::compute_name(Compute::Elementwise).short;
    let mut cases = Vec::new();
    for k in 0..INSTANCES {
        let t = T0 + k as i64 * GAP;
        let late = (1..=7).contains(&k).then_some(k as u32);
        // Every rank's GEMM on its compute stream before the collective; rank 1's at
        // instance 1 runs on until its sync returns.
        for r in 0..RANKS {
            let end = if late == Some(1) && r == 1 {
                t + 44 * MS
            } else {
                t - MS / 2
            };
            b.compute(
                r,
                S_COMPUTE,
                t - 3 * MS,
                (t - 29 * MS / 10, end),
                Compute::Xmma,
            );
        }
        // Normal launch: rank r's call at t + 3r µs.
        let normal = |r: u32| t + r as i64 * 3 * US;
        let earliest = normal(0) + LAUNCH + START_AFTER;
        let mut starts = vec![0i64; RANKS as usize];
        // The late rank's launch (or start) first: every end follows the last arrival.
        let lr = late.unwrap_or(u32::MAX);
        let late_call = match late {
            Some(1) => t + 44 * MS + 50 * US,
            Some(2) => t + 30 * MS + 20 * US,
            Some(3) => t + 22 * MS + 250 * US,
            Some(4) => t + 20 * MS + 30 * US,
            Some(7) => t + 25 * MS,
            _ => 0,
        };
        let late_start = match late {
            Some(5) => Some(t + 25 * MS + 3 * US),
            Some(6) => Some(t + 33 * MS + 4 * US),
            _ => None,
        };
        let last = match (late_call, late_start) {
            (c, None) if c > 0 => c + LAUNCH + START_AFTER,
            (_, Some(s)) => s,
            _ => normal(RANKS - 1) + LAUNCH + START_AFTER,
        };
        let end = last + 1_500 * US;
        for r in 0..RANKS {
            let pid = PID0 + r;
            if r != lr || late_call == 0 {
                // cause 6: the wait on stream 24's event, just before the launch
                if r == lr && late == Some(6) {
                    let c = b.call(r, WAIT_EVENT, 0, normal(r) - 50 * US, 4 * US);
                    b.cpu
                        .waits
                        .push((pid, normal(r) - 49 * US, normal(r) - 47 * US, r, S_NCCL, c));
                }
                starts[r as usize] = b.nccl(
                    r,
                    normal(r),
                    (r == lr).then_some(late_start).flatten(),
                    end + r as i64 * 2 * US,
                );
            } else {
                starts[r as usize] = b.nccl(r, late_call, None, end + r as i64 * 2 * US);
            }
        }
        let Some(r) = late else {
            continue;
        };
        let pid = PID0 + r;
        let start = starts[r as usize];
        let lateness = start - earliest;
        let call_end = if late_call > 0 {
            late_call + LAUNCH
        } else {
            normal(r) + LAUNCH
        };
        let cpu_ns = (call_end - earliest).max(0);
        let gpu_ns = start - call_end.max(earliest);
        let window = (earliest, earliest + cpu_ns);
        let launch_part = part(
            "cuda-call",
            "cuLaunchKernelEx",
            &[(call_end - LAUNCH, call_end)],
        );
        let mut parts = Vec::new();
        let mut chain = Vec::new();
        let mut detail = json!({});
        match r {
            1 => {
                let sync = (t - 28 * MS / 10, t + 44 * MS + 20 * US);
                b.call(r, SYNC, 0, sync.0, sync.1 - sync.0);
                parts.push(part(
                    "cuda-sync",
                    "cudaStreamSynchronize",
                    &[(window.0, sync.1)],
                ));
                detail = json!({"waited_for": {"stream": S_COMPUTE, "name": gemm,
                    "start_ns": t - 29 * MS / 10, "end_ns": t + 44 * MS}});
            }
            2 => {
                let w = (t - MS, t + 30 * MS);
                b.cpu.osrt.push((pid, pid, w.0, w.1, COND_WAIT));
                parts.push(part("osrt", COND_WAIT, &[(window.0, w.1)]));
            }
            3 => {
                let (out, back) = (t + 200 * US, t + 10 * MS + 200 * US);
                let s = &mut b.cpu.sched;
                s.push((pid, pid, t - 5 * MS, SAMPLE_CPU, true));
                s.push((pid, pid, out, SAMPLE_CPU, false));
                s.push((pid, pid + WORKER, out + 50 * US, SAMPLE_CPU, true));
                s.push((pid, pid + WORKER, back - 100 * US, SAMPLE_CPU, false));
                s.push((pid, pid, back, SAMPLE_CPU, true));
                let read = (back + 10 * US, t + 22 * MS + 200 * US);
                b.cpu.osrt.push((pid, pid, read.0, read.1, READ));
                parts.push(part("off-cpu", "descheduled", &[(out, back)]));
                parts.push(part("osrt", READ, &[read]));
                detail = json!({"cpu": SAMPLE_CPU, "ran_meanwhile": ["pt_data_worker"]});
            }
            4 => {
                let n = 20;
                for i in 0..n {
                    let at = t + PERIOD / 2 + i * PERIOD;
                    b.cpu
                        .samples
                        .push((pid, pid, at, i % 4 == 0, LEAVES[i as usize % 3]));
                }
                // each sample stands for the half period either side of it
                parts.push(part("on-cpu", FRAME, &[(window.0, t + n * PERIOD)]));
                detail = json!({"samples": n});
            }
            5 => {
                let ahead = (t - 11 * MS / 10, t + 25 * MS);
                b.compute(r, S_NCCL, t - 12 * MS / 10, ahead, Compute::Elementwise);
                chain.push(link("stream", S_NCCL, &elementwise, ahead));
            }
            6 => {
                let first = (t - 119 * MS / 10, t + 5 * MS);
                let second = (t + 5 * MS, t + 33 * MS);
                b.compute(r, S_SIDE, t - 12 * MS, first, Compute::Xmma);
                b.compute(r, S_SIDE, t - 118 * MS / 10, second, Compute::Xmma);
                let c = b.call(r, RECORD, 0, t - 117 * MS / 10, 3 * US);
                b.cpu.records.push((pid, r, S_SIDE, c));
                chain.push(link("event-wait", S_SIDE, &gemm, second));
                chain.push(link("stream", S_SIDE, &gemm, first));
            }
            _ => {}
        }
        // the launch call itself ends the window of a rank late on the CPU
        if cpu_ns > 0 {
            parts.push(launch_part);
        }
        let explained: f64 = parts.iter().map(|p| p["ms"].as_f64().unwrap()).sum();
        let cause = [
            "",
            "cuda-sync",
            "osrt",
            "off-cpu",
            "on-cpu",
            "stream",
            "event-wait",
            "nothing",
        ][r as usize];
        cases.push(json!({
            "instance": k + 1,
            "device": r,
            "cause": cause,
            "earliest_peer_start_ns": earliest,
            "lateness_ms": lateness as f64 / 1e6,
            "cpu_ms": cpu_ns as f64 / 1e6,
            "gpu_ms": gpu_ns as f64 / 1e6,
            "cpu_parts": parts,
            "unaccounted_ms": cpu_ns as f64 / 1e6 - explained,
            "gpu_chain": chain,
            "detail": detail,
        }));
    }
    crate::assemble::merge(&mut b.p, vec![]);
    let truth = json!({
        "scenario": {
            "description": "one host, 8 ranks (one process per GPU), 9 AllReduce instances on stream 20 100 ms apart; at instance k+1 (k = 1..7) rank k is late (each over the 20 ms big-event threshold) for a planted cause: cuda-sync on a GEMM, an OSRT pthread_cond_wait, 10 ms descheduled then an OSRT read, on-CPU in DataLoader.__next__ (1 kHz samples), queued on its own stream, behind a stream-wait-event on stream 24's GEMM, nothing recorded",
            "file": PATH,
            "note": "cpu parts are the planted intervals clipped to [earliest peer's start, launch-call end]; an on-CPU sample stands for half the sampling period either side of it; ms of a chain link is the work's whole duration",
        },
        "why": cases,
    });
    let cpu = b.cpu;
    let extra = move |tx: &Transaction, st: &mut Strings| write_cpu(tx, st, &cpu);
    (b.p, truth, extra)
}

fn write_cpu(tx: &Transaction, st: &mut Strings, cpu: &Cpu) -> rusqlite::Result<()> {
    for (_, ddl) in crate::ddl::OSRT_TABLES
        .iter()
        .chain(crate::ddl::SYNC_SCHED_TABLES)
    {
        tx.execute_batch(ddl)?;
    }
    for (id, name, label) in [
        (0, "UNKNOWN", "Unknown"),
        (1, "EVENT_SYNCHRONIZE", "Event sync"),
        (2, "STREAM_WAIT_EVENT", "Stream wait sync"),
        (3, "STREAM_SYNCHRONIZE", "Stream sync"),
        (4, "CONTEXT_SYNCHRONIZE", "Context sync"),
    ] {
        tx.execute(
            "INSERT INTO ENUM_CUPTI_SYNC_TYPE (id, name, label) VALUES (?1, ?2, ?3)",
            params![
                id,
                format!("CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_{name}"),
                label
            ],
        )?;
    }
    for &(pid, tid, s, e, name) in &cpu.osrt {
        tx.execute(
            "INSERT INTO OSRT_API (start, end, eventClass, globalTid, nameId, returnValue, nestingLevel, callchainId, argumentsId) VALUES (?1, ?2, 27, ?3, ?4, 0, 0, 0, 0)",
            params![s, e, global_tid(pid, tid), st.id(name)],
        )?;
    }
    for &(pid, tid, at, cpu_id, into) in &cpu.sched {
        tx.execute(
            "INSERT INTO SCHED_EVENTS (start, cpu, isSchedIn, globalTid, threadState, threadBlock) VALUES (?1, ?2, ?3, ?4, NULL, NULL)",
            params![at, cpu_id, into as i64, global_tid(pid, tid)],
        )?;
    }
    for (i, &(pid, tid, at, kernel, leaf)) in cpu.samples.iter().enumerate() {
        let id = i as i64 + 1;
        tx.execute(
            "INSERT INTO COMPOSITE_EVENTS (id, start, cpu, threadState, globalTid, cpuCycles) VALUES (?1, ?2, ?3, 1, ?4, 1)",
            params![id, at, SAMPLE_CPU, global_tid(pid, tid)],
        )?;
        let mut frames: Vec<(&str, &str, bool)> = Vec::new();
        if kernel {
            frames.push((KERNEL_FRAME, "[kernel.kallsyms]", true));
        }
        frames.push((leaf, LIBC, false));
        frames.push((FRAME, PY, false));
        frames.extend(OUTER.iter().map(|f| (*f, PY, false)));
        for (d, (sym, module, km)) in frames.iter().enumerate() {
            tx.execute(
                "INSERT INTO SAMPLING_CALLCHAINS (id, symbol, module, kernelMode, thumbCode, unresolved, specialEntry, originalIP, unwindMethod, stackDepth) VALUES (?1, ?2, ?3, ?4, 0, 0, NULL, ?5, 7, ?6)",
                params![id, st.id(sym), st.id(module), *km as i64, 0x7f00_0000_0000_i64 + id * 0x40 + d as i64, d as i64],
            )?;
        }
    }
    for &(pid, s, e, dev, stream, corr) in &cpu.waits {
        tx.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, greenContextId, streamId, correlationId, globalPid, deprecatedSyncType, syncType, eventId, eventSyncId) VALUES (?1, ?2, ?3, ?4, NULL, ?5, ?6, ?7, NULL, 2, ?8, 1)",
            params![s, e, dev, dev + 1, stream, corr, global_pid(pid), EVENT_ID],
        )?;
    }
    for &(pid, dev, stream, corr) in &cpu.records {
        tx.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_CUDA_EVENT (timestamp, deviceId, contextId, greenContextId, streamId, correlationId, globalPid, eventId, eventSyncId) VALUES (0, ?1, ?2, NULL, ?3, ?4, ?5, ?6, 1)",
            params![dev, dev + 1, stream, corr, global_pid(pid), EVENT_ID],
        )?;
    }
    Ok(())
}
