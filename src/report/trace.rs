//! `rankline export`: Chrome Trace Event Format JSON (what the Perfetto UI
//! and `chrome://tracing` open) of a capture on rankline's aligned clock —
//! a multi-node job becomes one timeline. One process per device (a track
//! per stream) and per CPU process (tracks per thread for its CUDA calls,
//! with the spans it was descheduled and its CPU samples beside them —
//! what the why account reads —, NVTX ranges and OS runtime calls);
//! complete events with their fields as args; a flow from each launch call
//! to its kernel (the process-aware links); a matched collective's kernels
//! carry their group, instance, start skew and late rank; big events are
//! instant markers; each step's critical path, when given, is a process
//! of its own, its segments in order on one track.

mod cpu;

use crate::analysis::cpu_state::{OffCpu, SchedIns};
use crate::analysis::critical_path::{Segment, StepPath};
use crate::analysis::pipeline::Analysis;
use crate::analysis::tracks::Tracks;
use crate::analysis::window::Window;
use crate::profile::bookmarks::Bookmark;
use crate::profile::out_file;
use crate::profile::{GpuKind, NONE, NvtxKind, Profile};
use crate::text_safe::escape_controls;
use serde_json::{Value, json};
use std::io::Write;

/// What a trace holds: the events of `tracks` overlapping `window` (on
/// the reference clock), the bookmarks `marks` starting in it, refused
/// when more than `max_events`.
#[derive(Clone, Copy)]
pub struct Trace<'a> {
    pub profile: &'a Profile,
    pub analysis: &'a Analysis,
    pub window: Window,
    pub tracks: &'a Tracks,
    pub marks: &'a [Bookmark],
    /// Steps' critical paths to write as a track (none: no track).
    pub paths: &'a [StepPath],
    pub max_events: usize,
}

/// What was written, by kind.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Written {
    pub kernels: usize,
    pub copies: usize,
    pub api: usize,
    pub nvtx: usize,
    pub osrt: usize,
    /// Spans a thread was descheduled.
    pub off_cpu: usize,
    pub samples: usize,
    pub flows: usize,
    pub markers: usize,
    /// Segments of the steps' critical paths.
    pub path: usize,
}

impl Written {
    pub fn events(&self) -> usize {
        self.kernels
            + self.copies
            + self.api
            + self.nvtx
            + self.osrt
            + self.off_cpu
            + self.samples
            + self.path
    }
}

/// [`write`] to the file `path`, gzipped when its name ends in `.gz` (any
/// case), as [`out_file::write`] writes it: never over one of `inputs`,
/// a refusal or a failure leaving whatever was there before.
pub fn write_file(
    path: &std::path::Path,
    inputs: &[std::path::PathBuf],
    t: &Trace,
) -> Result<Written, out_file::Error> {
    let gz = path
        .extension()
        .is_some_and(|x| x.eq_ignore_ascii_case("gz"));
    out_file::write(path, inputs, |out| {
        if gz {
            let mut z = flate2::write::GzEncoder::new(out, flate2::Compression::fast());
            write(&mut z, t).and_then(|n| z.finish().map(|_| n).map_err(|e| e.to_string()))
        } else {
            write(out, t)
        }
    })
}

/// Process ids: devices first, then CPU processes (Perfetto wants numbers).
fn device_pid(d: usize) -> usize {
    1 + d
}
fn cpu_pid(p: &Profile, process: usize) -> usize {
    1 + p.devices.len() + process
}
/// The critical paths' process: after every CPU process.
fn path_pid(p: &Profile) -> usize {
    cpu_pid(p, p.processes.len())
}

/// The paths' segments overlapping the window, with their step numbers
/// (a segment of no time, or one running backwards, is not drawn).
fn path_segments<'a>(
    paths: &'a [StepPath],
    sel: &'a Select<'a>,
) -> impl Iterator<Item = (usize, &'a Segment)> + 'a {
    paths.iter().flat_map(move |sp| {
        sp.path
            .iter()
            .filter(move |s| s.end > s.start && sel.inside(s.start, s.end))
            .map(move |s| (sp.step, s))
    })
}

/// A CPU thread's tracks: its calls (with its off-CPU spans and samples),
/// NVTX push/pop, NVTX start/end, OS runtime calls.
fn cpu_tid(thread: usize, track: usize) -> usize {
    1 + thread * 4 + track
}

/// Microseconds, ns kept as decimals.
fn us(ns: i64) -> f64 {
    ns as f64 / 1e3
}

/// The events of `p` on `tracks` that overlap `w` (on the reference
/// clock), with the bookmarks `marks` starting in it, as one trace; `Err` (before writing anything) when they are
/// more than `max`.
pub fn write(out: &mut dyn Write, t: &Trace) -> Result<Written, String> {
    let Trace {
        profile: p,
        analysis: a,
        window: w,
        tracks,
        marks,
        paths,
        max_events: max,
    } = *t;
    let clock = &a.clock;
    let sel = Select { p, clock, w };
    // Counted first, by the same selection as written: a trace too large
    // is refused before a byte is written.
    let lanes: Vec<usize> = (0..p.lanes.len()).filter(|&l| tracks.lane(l)).collect();
    let threads: Vec<usize> = (0..p.threads.len()).filter(|&t| tracks.thread(t)).collect();
    let gpu_n: usize = lanes.iter().map(|&l| sel.gpu(l).count()).sum();
    let cpu_n: usize = threads
        .iter()
        .map(|&t| {
            sel.api(t).count()
                + sel.nvtx(t).count()
                + sel.osrt(t).count()
                + sel.off_cpu(t).len()
                + sel.samples(t).count()
        })
        .sum();
    let path_n = path_segments(paths, &sel).count();
    if gpu_n + cpu_n + path_n > max {
        return Err(format!(
            "{} events in the window, over --max-events {max}: narrow --window, or raise --max-events",
            gpu_n + cpu_n + path_n
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
    for d in (0..p.devices.len()).filter(|&d| tracks.device(p, d as _)) {
        emit(
            out,
            json!({"ph": "M", "name": "process_name", "pid": device_pid(d), "tid": 0,
                   "args": {"name": device_name(p, d as _)}}),
        )?;
        emit(
            out,
            json!({"ph": "M", "name": "process_sort_index", "pid": device_pid(d), "tid": 0,
                   "args": {"sort_index": d}}),
        )?;
    }
    for &l in &lanes {
        let lane = &p.lanes[l];
        emit(
            out,
            json!({"ph": "M", "name": "thread_name", "pid": device_pid(lane.device as usize),
                   "tid": 1 + l, "args": {"name": format!("stream {}", lane.stream)}}),
        )?;
    }
    for (i, pr) in p.processes.iter().enumerate() {
        if !tracks.process(p, i) {
            continue;
        }
        emit(
            out,
            json!({"ph": "M", "name": "process_name", "pid": cpu_pid(p, i), "tid": 0,
                   "args": {"name": format!("{} pid {} ({})", name(p.strings.get(pr.name)), pr.pid,
                                            p.files[pr.file as usize].name())}}),
        )?;
    }
    for &t in &threads {
        let th = &p.threads[t];
        for (k, what) in [
            "CUDA API, off-CPU, samples",
            "NVTX",
            "NVTX start/end",
            "OS runtime",
        ]
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
    let ins = SchedIns::new(p, clock);
    for &t in &threads {
        let pid = cpu_pid(p, p.threads[t].process as usize);
        for (r, s, e) in sel.api(t) {
            call_written[r] = true;
            n.api += 1;
            emit(
                out,
                json!({"ph": "X", "cat": "cuda_api", "name": name(p.strings.get(p.runtime.name(r))),
                       "pid": pid, "tid": cpu_tid(t, 0), "ts": us(s), "dur": us(e - s),
                       "args": {"launch": p.runtime.is_launch(r)}}),
            )?;
        }
        for (r, s, e) in sel.nvtx(t) {
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
        for (r, s, e) in sel.osrt(t) {
            n.osrt += 1;
            emit(
                out,
                json!({"ph": "X", "cat": "osrt", "name": name(p.strings.get(p.osrt.name(r))),
                       "pid": pid, "tid": cpu_tid(t, 3), "ts": us(s), "dur": us(e - s)}),
            )?;
        }
        // On the calls' track: a thread is off its CPU between calls or
        // inside one, never across a call's end, so the spans nest.
        let mut off = sel.off_cpu(t);
        ins.name_ran(p, t as _, &mut off);
        for o in &off {
            n.off_cpu += 1;
            emit(out, cpu::off_cpu_event(p, (pid, cpu_tid(t, 0)), o, us))?;
        }
        for (r, at) in sel.samples(t) {
            n.samples += 1;
            emit(out, cpu::sample_event(p, (pid, cpu_tid(t, 0)), r, at, us))?;
        }
    }
    let m = &a.matching;
    let skews = &a.skews;
    let mut flow = 0usize;
    for &l in &lanes {
        let lane = &p.lanes[l];
        let pid = device_pid(lane.device as usize);
        for (r, s, e) in sel.gpu(l) {
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
            // As NCCL's call recorded it (per rank); absent, never 0,
            // without payloads.
            if let Some(b) = a.sizes.of(r) {
                args["message_bytes"] = b.into();
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
                    late_fields(p, group.devices[i.late], &mut args);
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
    for gs in skews.iter().filter(|gs| tracks.group(gs.group)) {
        let key = &m.groups[gs.group].key;
        for b in &gs.big_events {
            let i = &b.instance;
            if !sel.inside(i.earliest_start, i.earliest_start) {
                continue;
            }
            n.markers += 1;
            emit(
                out,
                json!({"ph": "i", "s": "g", "cat": "big_event",
                       "name": format!("big skew {key}:{}", i.index + 1), "pid": 0, "tid": 0,
                       "ts": us(i.earliest_start),
                       "args": big_args(p, i.start_skew_ns, m.groups[gs.group].devices[i.late])}),
            )?;
        }
    }
    if !paths.is_empty() {
        let pid = path_pid(p);
        emit(
            out,
            json!({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                   "args": {"name": "critical path per step (rankline report steps)"}}),
        )?;
        emit(
            out,
            json!({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
                   "args": {"sort_index": -1}}),
        )?;
        for (step, seg) in path_segments(paths, &sel) {
            n.path += 1;
            let label = match seg.what {
                Some(w) => format!("{} {}", seg.kind.name(), name(p.strings.get(w))),
                None => seg.kind.name().to_string(),
            };
            emit(
                out,
                json!({"ph": "X", "cat": "critical_path", "name": label, "pid": pid, "tid": 1,
                       "ts": us(seg.start), "dur": us(seg.end - seg.start),
                       "args": {"step": step, "kind": seg.kind.name(),
                                "device": seg.device.map(|d| device_name(p, d)),
                                "uncertain": seg.uncertain}}),
            )?;
        }
    }
    // The user's bookmarks, at the start of their window.
    for b in marks {
        let [start, end] = b.window_ns;
        if !sel.inside(start, start) {
            continue;
        }
        n.markers += 1;
        emit(
            out,
            json!({"ph": "i", "s": "g", "cat": "bookmark", "name": format!("bookmark {}", name(&b.name)),
                   "pid": 0, "tid": 0, "ts": us(start),
                   "args": {"window_end_us": us(end), "group": b.group.as_deref().map(name),
                            "instance": b.instance, "created": name(&b.created)}}),
        )?;
    }
    out.write_all(b"\n]}\n").map_err(io)?;
    Ok(n)
}

/// Which events of each track the trace holds: those overlapping the
/// window (running in it, or starting in it — one that ends exactly at its
/// start is before it), as (row, start, end) on the reference clock. The
/// count and the writing read the same selection.
#[derive(Clone, Copy)]
struct Select<'a> {
    p: &'a Profile,
    clock: &'a crate::analysis::clock::Alignment,
    w: Window,
}

type Spans<'a> = Box<dyn Iterator<Item = (usize, i64, i64)> + 'a>;

impl<'a> Select<'a> {
    fn inside(&self, s: i64, e: i64) -> bool {
        s <= self.w.end && (e > self.w.start || s >= self.w.start)
    }

    fn keep(
        self,
        rows: impl Iterator<Item = usize> + 'a,
        span: impl Fn(usize) -> (i64, i64) + 'a,
    ) -> Spans<'a> {
        Box::new(
            rows.map(move |r| {
                let (s, e) = span(r);
                (r, s, e)
            })
            .filter(move |&(_, s, e)| self.inside(s, e)),
        )
    }

    /// A lane's GPU rows, found by search (the time is what the window
    /// holds, not the capture).
    fn gpu(self, l: usize) -> Spans<'a> {
        let (p, clock) = (self.p, self.clock);
        let file = p.lane_file(l as _);
        let rows = clock.lane_rows(p, l as _, self.w, file).map(|(r, _, _)| r);
        self.keep(rows, move |r| clock.gpu_span(p, r))
    }

    /// A thread's CUDA calls, found by search.
    fn api(self, t: usize) -> Spans<'a> {
        let (p, clock) = (self.p, self.clock);
        let rows = clock.thread_calls(p, t, self.w);
        self.keep(rows, move |r| clock.runtime_span(p, r))
    }

    /// A thread's NVTX ranges (not marks): every one read, since a range
    /// can start long before the window it spans.
    fn nvtx(self, t: usize) -> Spans<'a> {
        let (p, clock) = (self.p, self.clock);
        let rows = p.nvtx_by_thread[t]
            .clone()
            .filter(move |&r| p.nvtx.is_range(r));
        self.keep(rows, move |r| clock.nvtx_span(p, r))
    }

    fn osrt(self, t: usize) -> Spans<'a> {
        let (p, clock) = (self.p, self.clock);
        self.keep(p.osrt_by_thread[t].clone(), move |r| clock.osrt_span(p, r))
    }

    fn off_cpu(self, t: usize) -> Vec<OffCpu> {
        cpu::off_cpu(self.p, self.clock, self.w, t)
    }

    fn samples(self, t: usize) -> impl Iterator<Item = (usize, i64)> + 'a {
        cpu::samples(self.p, self.clock, self.w, t)
    }
}

/// A device's process name: its host and CUDA device, its rank when the
/// capture records it, and its model (`dgx-a01 GPU 2 · rank 2 · NVIDIA
/// H100`): never a bare number that means nothing in a viewer.
fn device_name(p: &Profile, d: crate::profile::DevId) -> String {
    let dev = &p.devices[d as usize];
    let host = p.host_label(dev.host);
    let mut name = if host.is_empty() {
        format!("GPU {}", dev.id)
    } else {
        format!("{host} GPU {}", dev.id)
    };
    if let Some(r) = dev.rank {
        name += &format!(" · rank {r}");
    }
    if let Some(model) = &dev.name {
        name += &format!(" · {model}");
    }
    escape_controls(&name).into_owned()
}

/// The late rank of a collective in a trace's args: `late_rank` the rank
/// (null when the capture does not record it), `late_device` the device.
fn late_fields(p: &Profile, d: crate::profile::DevId, args: &mut Value) {
    args["late_rank"] = p.devices[d as usize].rank.into();
    args["late_device"] = escape_controls(&p.device_label(d).to_string())
        .into_owned()
        .into();
}

fn big_args(p: &Profile, skew_ns: i64, late: crate::profile::DevId) -> Value {
    let mut args = json!({"start_skew_ms": skew_ns as f64 / 1e6});
    late_fields(p, late, &mut args);
    args
}
