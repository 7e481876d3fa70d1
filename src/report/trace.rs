//! `rankline export`: Chrome Trace Event Format JSON (what the Perfetto UI
//! and `chrome://tracing` open) of a capture on rankline's aligned clock —
//! a multi-node job becomes one timeline. One process per device (a track
//! per stream) and per CPU process (a track per thread for its CUDA calls,
//! NVTX ranges and OS runtime calls); complete events with their fields as
//! args; a flow from each launch call to its kernel (the process-aware
//! links); a matched collective's kernels carry their group, instance,
//! start skew and late rank; big events are instant markers.

use crate::analysis::pipeline::Analysis;
use crate::analysis::window::Window;
use crate::profile::{GpuKind, NONE, NvtxKind, Profile};
use crate::text_safe::escape_controls;
use serde_json::{Value, json};
use std::io::Write;

/// What was written, by kind.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Written {
    pub kernels: usize,
    pub copies: usize,
    pub api: usize,
    pub nvtx: usize,
    pub osrt: usize,
    pub flows: usize,
    pub markers: usize,
}

impl Written {
    pub fn events(&self) -> usize {
        self.kernels + self.copies + self.api + self.nvtx + self.osrt
    }
}

/// Process ids: devices first, then CPU processes (Perfetto wants numbers).
fn device_pid(d: usize) -> usize {
    1 + d
}
fn cpu_pid(p: &Profile, process: usize) -> usize {
    1 + p.devices.len() + process
}
/// A CPU thread's tracks: its calls, NVTX push/pop, NVTX start/end, OS
/// runtime calls.
fn cpu_tid(thread: usize, track: usize) -> usize {
    1 + thread * 4 + track
}

/// Microseconds, ns kept as decimals.
fn us(ns: i64) -> f64 {
    ns as f64 / 1e3
}

/// The events of `p` that overlap `w` (on the reference clock), as one
/// trace; `Err` (before writing anything) when they are more than `max`.
pub fn write(
    out: &mut dyn Write,
    p: &Profile,
    a: &Analysis,
    w: Window,
    max: usize,
) -> Result<Written, String> {
    let clock = &a.clock;
    // Overlapping the window: running in it, or starting in it (an
    // event that ends exactly at its start is before it).
    let inside = |s: i64, e: i64| s <= w.end && (e > w.start || s >= w.start);
    let gpu_ref = |r: usize| clock.gpu_span(p, r);
    // Counted first: a trace too large is refused before a byte is written.
    // A lane's rows that may reach into the window, found by search (the
    // time is what the window holds, not the capture).
    let lane_rows = |l: usize| {
        let file = p.lane_file(l as _);
        clock.lane_rows(p, l as _, w, file).map(|(r, _, _)| r)
    };
    let gpu_n = (0..p.lanes.len())
        .flat_map(lane_rows)
        .filter(|&r| {
            let (s, e) = gpu_ref(r);
            inside(s, e)
        })
        .count();
    let mut cpu_n = 0usize;
    for t in 0..p.threads.len() {
        for r in calls_in_window(p, clock, t, w) {
            let (s, e) = clock.runtime_span(p, r);
            cpu_n += inside(s, e) as usize;
        }
        for r in p.nvtx_by_thread[t].clone() {
            let (s, e) = clock.nvtx_span(p, r);
            cpu_n += (p.nvtx.is_range(r) && inside(s, e)) as usize;
        }
        for r in p.osrt_by_thread[t].clone() {
            let (s, e) = clock.osrt_span(p, r);
            cpu_n += inside(s, e) as usize;
        }
    }
    if gpu_n + cpu_n > max {
        return Err(format!(
            "{} events in the window, over --max-events {max}: narrow --window, or raise --max-events",
            gpu_n + cpu_n
        ));
    }
    let io = |e: std::io::Error| e.to_string();
    let mut first = true;
    let mut emit = |out: &mut dyn Write, v: Value| -> Result<(), String> {
        if !first {
            out.write_all(b",\n").map_err(io)?;
        }
        first = false;
        serde_json::to_writer(&mut *out, &v).map_err(|e| e.to_string())
    };
    let other = json!({
        "generator": "rankline",
        "clock": "rankline's reference clock: the first file's capture clock, every other file mapped onto it",
        "clock_alignment": clock.describe(),
    });
    out.write_all(b"{\"displayTimeUnit\":\"ns\",\"otherData\":")
        .map_err(io)?;
    serde_json::to_writer(&mut *out, &other).map_err(|e| e.to_string())?;
    out.write_all(b",\"traceEvents\":[\n").map_err(io)?;
    let name = |s: &str| escape_controls(s).into_owned();
    // Names of processes and tracks.
    for d in 0..p.devices.len() {
        emit(
            out,
            json!({"ph": "M", "name": "process_name", "pid": device_pid(d), "tid": 0,
                   "args": {"name": format!("{} GPU", p.device_label(d as _))}}),
        )?;
        emit(
            out,
            json!({"ph": "M", "name": "process_sort_index", "pid": device_pid(d), "tid": 0,
                   "args": {"sort_index": d}}),
        )?;
    }
    for (l, lane) in p.lanes.iter().enumerate() {
        emit(
            out,
            json!({"ph": "M", "name": "thread_name", "pid": device_pid(lane.device as usize),
                   "tid": 1 + l, "args": {"name": format!("stream {}", lane.stream)}}),
        )?;
    }
    for (i, pr) in p.processes.iter().enumerate() {
        emit(
            out,
            json!({"ph": "M", "name": "process_name", "pid": cpu_pid(p, i), "tid": 0,
                   "args": {"name": format!("{} pid {} ({})", name(p.strings.get(pr.name)), pr.pid,
                                            p.files[pr.file as usize].name())}}),
        )?;
    }
    for (t, th) in p.threads.iter().enumerate() {
        for (k, what) in ["CUDA API", "NVTX", "NVTX start/end", "OS runtime"]
            .iter()
            .enumerate()
        {
            emit(
                out,
                json!({"ph": "M", "name": "thread_name", "pid": cpu_pid(p, th.process as usize),
                       "tid": cpu_tid(t, k), "args": {"name": format!("T{} {what}", th.tid)}}),
            )?;
        }
    }
    let mut n = Written::default();
    // Launch calls written, so a flow starts only at a call in the trace.
    let mut call_written = vec![false; p.runtime.len()];
    for t in 0..p.threads.len() {
        let pid = cpu_pid(p, p.threads[t].process as usize);
        for r in calls_in_window(p, clock, t, w) {
            let (s, e) = clock.runtime_span(p, r);
            if !inside(s, e) {
                continue;
            }
            call_written[r] = true;
            n.api += 1;
            emit(
                out,
                json!({"ph": "X", "cat": "cuda_api", "name": name(p.strings.get(p.runtime.name(r))),
                       "pid": pid, "tid": cpu_tid(t, 0), "ts": us(s), "dur": us(e - s),
                       "args": {"launch": p.runtime.is_launch(r)}}),
            )?;
        }
        for r in p.nvtx_by_thread[t].clone() {
            let (s, e) = clock.nvtx_span(p, r);
            if !p.nvtx.is_range(r) || !inside(s, e) {
                continue;
            }
            let track = if p.nvtx.kind(r) == NvtxKind::PushPop {
                1
            } else {
                2
            };
            n.nvtx += 1;
            emit(
                out,
                json!({"ph": "X", "cat": "nvtx", "name": name(p.strings.get(p.nvtx.name(r))),
                       "pid": pid, "tid": cpu_tid(t, track), "ts": us(s), "dur": us(e - s),
                       "args": {"domain": name(p.strings.get(p.nvtx.domain(r)))}}),
            )?;
        }
        for r in p.osrt_by_thread[t].clone() {
            let (s, e) = clock.osrt_span(p, r);
            if !inside(s, e) {
                continue;
            }
            n.osrt += 1;
            emit(
                out,
                json!({"ph": "X", "cat": "osrt", "name": name(p.strings.get(p.osrt.name(r))),
                       "pid": pid, "tid": cpu_tid(t, 3), "ts": us(s), "dur": us(e - s)}),
            )?;
        }
    }
    let m = &a.matching;
    let skews = &a.skews;
    let mut flow = 0usize;
    for (l, lane) in p.lanes.iter().enumerate() {
        let pid = device_pid(lane.device as usize);
        for r in lane_rows(l) {
            let (s, e) = gpu_ref(r);
            if !inside(s, e) {
                continue;
            }
            let kind = p.gpu.kind(r);
            let (cat, label) = match kind {
                GpuKind::Kernel => ("kernel", p.gpu.long_name(r)),
                GpuKind::Memcpy => ("memcpy", p.gpu.name(r)),
                GpuKind::Memset => ("memset", p.gpu.name(r)),
            };
            let mut args =
                json!({"stream": lane.stream, "short_name": name(p.strings.get(p.gpu.name(r)))});
            if kind != GpuKind::Kernel {
                args["bytes"] = p.gpu.bytes(r).into();
                n.copies += 1;
            } else {
                n.kernels += 1;
            }
            if let Some((g, k)) = m.instance_of(r) {
                let group = &m.groups[g];
                args["group"] = group.key.clone().into();
                args["instance"] = (k + 1).into();
                if let Some(i) = skews
                    .iter()
                    .find(|gs| gs.group == g)
                    .and_then(|gs| gs.instances.iter().find(|i| i.index == k))
                {
                    args["start_skew_ms"] = (i.start_skew_ns as f64 / 1e6).into();
                    args["late_rank"] = p.device_label(group.devices[i.late]).to_string().into();
                }
            }
            emit(
                out,
                json!({"ph": "X", "cat": cat, "name": name(p.strings.get(label)), "pid": pid,
                       "tid": 1 + l, "ts": us(s), "dur": us(e - s), "args": args}),
            )?;
            let call = p.gpu.launch(r);
            if call != NONE && call_written[call as usize] {
                let c = call as usize;
                let t = p.runtime.thread(c) as usize;
                let (cs, _) = clock.runtime_span(p, c);
                flow += 1;
                n.flows += 1;
                emit(
                    out,
                    json!({"ph": "s", "cat": "launch", "name": "launch", "id": flow,
                           "pid": cpu_pid(p, p.threads[t].process as usize), "tid": cpu_tid(t, 0),
                           "ts": us(cs)}),
                )?;
                emit(
                    out,
                    json!({"ph": "f", "bp": "e", "cat": "launch", "name": "launch", "id": flow,
                           "pid": pid, "tid": 1 + l, "ts": us(s)}),
                )?;
            }
        }
    }
    for gs in skews {
        let key = &m.groups[gs.group].key;
        for b in &gs.big_events {
            let i = &b.instance;
            if !inside(i.earliest_start, i.earliest_start) {
                continue;
            }
            n.markers += 1;
            emit(
                out,
                json!({"ph": "i", "s": "g", "cat": "big_event",
                       "name": format!("big skew {key}:{}", i.index + 1), "pid": 0, "tid": 0,
                       "ts": us(i.earliest_start),
                       "args": {"start_skew_ms": i.start_skew_ns as f64 / 1e6,
                                "late_rank": p.device_label(m.groups[gs.group].devices[i.late]).to_string()}}),
            )?;
        }
    }
    out.write_all(b"\n]}\n").map_err(io)?;
    Ok(n)
}

/// A thread's CUDA calls that may reach into `w`: found by search on their
/// starts, looking back past the few calls still running at its start (a
/// runtime call holds a driver call or two, no more).
fn calls_in_window(
    p: &Profile,
    clock: &crate::analysis::clock::Alignment,
    t: usize,
    w: Window,
) -> std::ops::Range<usize> {
    let rows = p.runtime_by_thread[t].clone();
    if w.is_all() {
        return rows;
    }
    let wf = clock.window_in_file(p.thread_file(t as _), w);
    let starts = p.runtime.starts(rows.clone());
    let hi = rows.start + starts.partition_point(|&s| s <= wf.end);
    let mut lo = rows.start + starts.partition_point(|&s| s < wf.start);
    let mut misses = 0;
    let mut k = lo;
    while k > rows.start && misses < 8 {
        k -= 1;
        if p.runtime.end(k) > wf.start {
            lo = k;
            misses = 0;
        } else {
            misses += 1;
        }
    }
    lo..hi.max(lo)
}
