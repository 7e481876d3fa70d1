//! Turning raw rows (the export's own ids) into model rows: processes,
//! threads, lanes and interned names, column by column.

use super::State;
use super::counts::Counted;
use crate::profile::intern::{Interner, Sym};
use crate::profile::model::*;
use crate::profile::names::{is_launch_api, memcpy_name, nsys_api_name, strip_api_version};
use crate::profile::raw::{
    NO_COPY_KIND, NO_NAME, RawCudaEvents, RawGpu, RawNvtx, RawOsrt, RawRuntime, RawSamples,
    RawSched, RawSyncs,
};
use rustc_hash::FxHashMap;
use std::collections::HashMap;

/// A row's raw (pid, CUDA device, context, stream).
type RawStream = (u32, u32, u32, u32);
/// Its process, known device and known lane.
type StreamIds = (ProcId, DevId, LaneId);

/// See [`State::streams`].
struct Streams {
    /// (process, context) → the GPU its lanes, or else the export's
    /// context tables, place it on.
    context_device: FxHashMap<(ProcId, u32), DevId>,
    /// The previous row's key and ids (rows of one stream come in runs).
    last: Option<(RawStream, StreamIds)>,
}

impl State<'_> {
    /// A name from a raw name column (StringIds id or reader-local text);
    /// `local` remembers each reader-local text once interned.
    fn raw_name(&mut self, v: i64, texts: &Interner, local: &mut Vec<Sym>) -> Option<Sym> {
        if v == NO_NAME {
            None
        } else if v < 0 {
            let k = (-(v + 1)) as usize;
            if local.len() < texts.len() {
                local.resize(texts.len(), Sym::MAX);
            }
            let slot = local.get_mut(k)?;
            if *slot == Sym::MAX {
                *slot = self.p.strings.intern(texts.get(k as Sym));
            }
            Some(*slot)
        } else {
            self.ids.get(v)
        }
    }

    pub(super) fn add_gpu(&mut self, kind: GpuKind, mut g: RawGpu) {
        let memset = self.p.strings.intern("Memset");
        let unnamed = self.p.strings.intern("<unnamed kernel>");
        // The process of a row without globalPid: the one owning its context.
        let ctx_owner: FxHashMap<u32, u32> = self
            .p
            .contexts
            .iter()
            .map(|c| (c.context, self.p.processes[c.process as usize].pid))
            .collect();
        let n = g.start.len();
        // Per-row work first, column by column: simple loops, no pushes.
        let mut last: Option<((u32, u32, u32, u32), LaneId)> = None;
        let mut lanes = Vec::with_capacity(n);
        for i in 0..n {
            let pid = if g.pid[i] != NONE {
                g.pid[i]
            } else {
                ctx_owner.get(&g.context[i]).copied().unwrap_or(0)
            };
            let key = (pid, g.context[i], g.stream[i], g.device[i]);
            lanes.push(match last {
                Some((k, l)) if k == key => l,
                _ => {
                    let l = match self.row_lanes.get(&key) {
                        Some(&l) => l,
                        None => {
                            let process = self.process(pid);
                            let device = self.device(self.gpu_of(pid, g.device[i]));
                            let l = self.lane(process, g.context[i], g.stream[i], device);
                            self.row_lanes.insert(key, l);
                            l
                        }
                    };
                    last = Some((key, l));
                    l
                }
            });
        }
        let (names, long_names, bytes): (Vec<Sym>, Vec<Sym>, Vec<u64>) = match kind {
            GpuKind::Kernel => {
                let mut local = Vec::new();
                let mut names = Vec::with_capacity(n);
                let mut long_names = Vec::with_capacity(n);
                for i in 0..n {
                    let short = self.raw_name(g.short_name[i], &g.texts, &mut local);
                    let long = self.raw_name(g.demangled_name[i], &g.texts, &mut local);
                    let short = short.or(long).unwrap_or(unnamed);
                    names.push(short);
                    long_names.push(long.unwrap_or(short));
                }
                (names, long_names, vec![0; n])
            }
            GpuKind::Memcpy => {
                let names: Vec<Sym> = g
                    .copy_kind
                    .iter()
                    .map(|&k| {
                        let kind = (k != NO_COPY_KIND).then_some(k);
                        self.p.strings.intern(memcpy_name(kind))
                    })
                    .collect();
                (names.clone(), names, std::mem::take(&mut g.bytes))
            }
            GpuKind::Memset => (
                vec![memset; n],
                vec![memset; n],
                std::mem::take(&mut g.bytes),
            ),
        };
        let shape = |i: usize| g.shape.get(i).copied().unwrap_or_default();
        let copies = |i: usize| g.copies.get(i).copied().unwrap_or(1);
        // Runs of rows often share a detail: the last one skips the lookup.
        let mut last: Option<(Detail, u32)> = None;
        let details: Vec<u32> = (0..n)
            .map(|i| {
                let d = Detail {
                    kind,
                    long_name: long_names[i],
                    bytes: bytes[i],
                    graph_node: g.graph[i],
                    shape: shape(i),
                    copies: copies(i),
                };
                match last {
                    Some((l, id)) if l == d => id,
                    _ => {
                        let id = self.details.id(&mut self.p.gpu.details, d);
                        last = Some((d, id));
                        id
                    }
                }
            })
            .collect();
        let out = &mut self.p.gpu;
        let base = out.start.len() as u32;
        for &i in &g.unfinished {
            out.unfinished.push(base + i);
        }
        out.start.append(&mut std::mem::take(&mut g.start).into());
        out.end.append(&mut std::mem::take(&mut g.end).into());
        out.lane.append(&mut lanes.into());
        out.name.append(&mut names.into());
        out.correlation
            .append(&mut std::mem::take(&mut g.correlation).into());
        out.launch.append(&mut vec![NONE; n].into());
        out.detail.append(&mut details.into());
    }

    pub(super) fn add_runtime(&mut self, mut t: RawRuntime) {
        // StringIds id → (display name, launches work), resolved once per id;
        // the last one is remembered, since calls repeat in runs.
        let mut names: FxHashMap<i64, (Sym, bool)> = FxHashMap::default();
        let mut last_name: Option<(i64, (Sym, bool))> = None;
        let mut last_tid: Option<(i64, ThreadId)> = None;
        let n = t.start.len();
        let mut threads = Vec::with_capacity(n);
        let mut syms = Vec::with_capacity(n);
        let mut launches = Vec::with_capacity(n);
        for i in 0..n {
            let name_id = t.name[i];
            let (name, launch) = match last_name {
                Some((id, v)) if id == name_id => v,
                _ => {
                    let v = *names.entry(name_id).or_insert_with(|| {
                        let raw = self
                            .ids
                            .get(name_id)
                            .map(|n| self.p.strings.get(n).to_string())
                            .unwrap_or_default();
                        let shown = nsys_api_name(&raw);
                        (
                            self.p.strings.intern(shown),
                            is_launch_api(strip_api_version(shown)),
                        )
                    });
                    last_name = Some((name_id, v));
                    v
                }
            };
            syms.push(name);
            launches.push(launch);
            threads.push(match last_tid {
                Some((g, th)) if g == t.global_tid[i] => th,
                _ => {
                    let th = self.thread(t.global_tid[i]);
                    last_tid = Some((t.global_tid[i], th));
                    th
                }
            });
        }
        let class: Vec<ApiClass> = t
            .driver
            .iter()
            .map(|&d| {
                if d {
                    ApiClass::Driver
                } else {
                    ApiClass::Runtime
                }
            })
            .collect();
        let rt = &mut self.p.runtime;
        rt.start.append(&mut std::mem::take(&mut t.start).into());
        rt.end.append(&mut std::mem::take(&mut t.end).into());
        rt.thread.append(&mut threads.into());
        rt.name.append(&mut syms.into());
        rt.correlation
            .append(&mut std::mem::take(&mut t.correlation).into());
        rt.class.append(&mut class.into());
        rt.is_launch.append(&mut launches.into());
    }

    /// The thread of each of `global_tids`, looked up once per run of one.
    fn threads_of(&mut self, global_tids: &[i64]) -> Vec<ThreadId> {
        let mut last: Option<(i64, ThreadId)> = None;
        global_tids
            .iter()
            .map(|&g| match last {
                Some((lg, t)) if lg == g => t,
                _ => {
                    let t = self.thread(g);
                    last = Some((g, t));
                    t
                }
            })
            .collect()
    }

    /// A StringIds id's Sym, remembered per id (names repeat).
    pub(super) fn id_sym(&self, names: &mut FxHashMap<i64, Sym>, id: i64) -> Sym {
        *names
            .entry(id)
            .or_insert_with(|| self.ids.get(id).unwrap_or(0))
    }

    pub(super) fn add_osrt(&mut self, mut t: RawOsrt) {
        let threads = self.threads_of(&t.global_tid);
        let mut names = FxHashMap::default();
        let syms: Vec<Sym> = t
            .name
            .iter()
            .map(|&id| self.id_sym(&mut names, id))
            .collect();
        let out = &mut self.p.osrt;
        let base = out.start.len() as u32;
        for &i in &t.unfinished {
            self.osrt_open.push(base + i);
        }
        out.start.append(&mut std::mem::take(&mut t.start).into());
        out.end.append(&mut std::mem::take(&mut t.end).into());
        out.thread.append(&mut threads.into());
        out.name.append(&mut syms.into());
    }

    pub(super) fn add_sched(&mut self, t: RawSched) {
        let threads = self.threads_of(&t.global_tid);
        let out = &mut self.p.sched;
        out.start.append(&mut t.start.into());
        out.thread.append(&mut threads.into());
        out.cpu.append(&mut t.cpu.into());
        out.sched_in.append(&mut t.sched_in.into());
    }

    /// The model's device of CUDA ordinal `cuda_id` of process `pid`, as
    /// GPU rows map it, or [`NONE`] when no table named that GPU: rows
    /// that only refer to GPU work never add a device.
    fn known_device(&self, pid: u32, cuda_id: u32) -> DevId {
        self.devices
            .get(&self.gpu_of(pid, cuda_id))
            .copied()
            .unwrap_or(NONE)
    }

    /// The lane of (process, context, stream) if GPU rows made one, else
    /// [`NONE`]: rows that only refer to a stream never add a lane.
    fn known_lane(&self, process: ProcId, context: u32, stream: u32) -> LaneId {
        self.lanes
            .get(&(process, context, stream))
            .copied()
            .unwrap_or(NONE)
    }

    /// What finds the streams of rows that refer to one (sync and event
    /// records), once the GPU rows are in.
    fn streams(&self) -> Streams {
        let mut context_device = FxHashMap::default();
        for l in &self.p.lanes {
            context_device
                .entry((l.process, l.context))
                .or_insert(l.device);
        }
        for c in self.p.contexts.iter().filter(|c| c.context != NONE) {
            context_device
                .entry((c.process, c.context))
                .or_insert(c.device);
        }
        Streams {
            context_device,
            last: None,
        }
    }

    /// The process, device and lane of a row's raw (pid, CUDA device,
    /// context, stream). The device is its lane's, else its context's (as
    /// GPU rows or the export's context tables place it), else the one the
    /// row names if known: the row's own `deviceId` is trusted last, since
    /// nsys 2026.2 records device 0 on the syncs of a process whose kernels
    /// all ran on GPU 1.
    fn stream_of(&mut self, s: &mut Streams, key: RawStream) -> StreamIds {
        if let Some((k, v)) = s.last
            && k == key
        {
            return v;
        }
        let (pid, cuda_id, context, stream) = key;
        let process = self.process(pid);
        let lane = self.known_lane(process, context, stream);
        let device = match lane {
            NONE => match s.context_device.get(&(process, context)) {
                Some(&d) => d,
                None => self.known_device(pid, cuda_id),
            },
            l => self.p.lanes[l as usize].device,
        };
        let v = (process, device, lane);
        s.last = Some((key, v));
        v
    }

    /// The process, device and lane columns of rows naming (pid, CUDA
    /// device, context, stream) ([`Self::stream_of`] for each).
    fn stream_columns(
        &mut self,
        pid: &[u32],
        device: &[u32],
        context: &[u32],
        stream: &[u32],
    ) -> (Vec<ProcId>, Vec<DevId>, Vec<LaneId>) {
        let n = pid.len();
        let mut out = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let mut streams = self.streams();
        for i in 0..n {
            let (pr, dev, l) =
                self.stream_of(&mut streams, (pid[i], device[i], context[i], stream[i]));
            out.0.push(pr);
            out.1.push(dev);
            out.2.push(l);
        }
        out
    }

    pub(super) fn add_syncs(&mut self, t: RawSyncs) {
        let n = t.start.len();
        let (process, device, lane) = self.stream_columns(&t.pid, &t.device, &t.context, &t.stream);
        let out = &mut self.p.syncs;
        out.start.append(&mut t.start.into());
        out.end.append(&mut t.end.into());
        out.process.append(&mut process.into());
        out.device.append(&mut device.into());
        out.stream.append(&mut t.stream.into());
        out.lane.append(&mut lane.into());
        out.sync_type.append(&mut t.sync_type.into());
        out.event.append(&mut t.event.into());
        out.correlation.append(&mut t.correlation.into());
        out.call.append(&mut vec![NONE; n].into());
    }

    pub(super) fn add_cuda_events(&mut self, t: RawCudaEvents) {
        let n = t.pid.len();
        let (process, device, lane) = self.stream_columns(&t.pid, &t.device, &t.context, &t.stream);
        let out = &mut self.p.cuda_events;
        out.process.append(&mut process.into());
        out.device.append(&mut device.into());
        out.stream.append(&mut t.stream.into());
        out.lane.append(&mut lane.into());
        out.event.append(&mut t.event.into());
        out.correlation.append(&mut t.correlation.into());
        out.call.append(&mut vec![NONE; n].into());
        out.timestamp.append(&mut t.timestamp.into());
    }

    /// Adds the samples with their stacks ([`super::stacks`]).
    pub(super) fn add_samples(&mut self, s: RawSamples, stacks: super::stacks::Joined) {
        if s.start.is_empty() {
            return;
        }
        let threads = self.threads_of(&s.global_tid);
        let out = &mut self.p.samples;
        out.start.append(&mut s.start.into());
        out.thread.append(&mut threads.into());
        out.stack.append(&mut stacks.stack.into());
        out.stack_at = stacks.at.into();
        out.stack_frames = stacks.frames.into();
    }

    pub(super) fn add_nvtx(&mut self, n: RawNvtx) {
        let rows = n.start.len();
        let mut last: Option<(i64, ThreadId)> = None;
        let threads: Vec<ThreadId> = n
            .global_tid
            .iter()
            .map(|&g| match last {
                Some((lg, t)) if lg == g => t,
                _ => {
                    let t = self.thread(g);
                    last = Some((g, t));
                    t
                }
            })
            .collect();
        let mut local = Vec::new();
        let names: Vec<Option<Sym>> = (0..rows)
            .map(|i| self.raw_name(n.name[i], &n.texts, &mut local))
            .collect();
        // Domain names come from DomainCreate rows, scoped by process.
        let mut domain_names: HashMap<(ProcId, i64), Sym> = HashMap::new();
        for i in 0..rows {
            if n.event_type[i] == 75
                && let Some(name) = names[i]
            {
                domain_names.insert(
                    (self.p.threads[threads[i] as usize].process, n.domain[i]),
                    name,
                );
            }
        }
        let mut payload = n.payload.iter().peekable();
        let mut event_id = n.event_id.iter().peekable();
        // ncclGroupStart / ncclGroupEnd ranges, kept if the file has calls
        // with payloads (grouped calls are found through them); a file
        // with no payload at all is not looked at for them.
        let mut group_marks = Vec::new();
        let had_calls = self.p.nccl_api.start.len();
        let payloads = !n.payload.is_empty() || !self.payload_tables.is_empty();
        for i in 0..rows {
            let kind = match n.event_type[i] {
                59 => NvtxKind::PushPop,
                60 => NvtxKind::StartEnd,
                34 => NvtxKind::Mark,
                _ => continue,
            };
            let start = n.start[i];
            let end = if kind == NvtxKind::Mark || n.end[i] == i64::MIN {
                start
            } else {
                n.end[i].max(start)
            };
            let process = self.p.threads[threads[i] as usize].process;
            let domain = match n.domain[i] {
                0 => 0,
                d => match domain_names.get(&(process, d)) {
                    Some(&s) => s,
                    None => self
                        .p
                        .strings
                        .intern(&crate::profile::names::unnamed_domain(d)),
                },
            };
            // A dynamic-tables export holds the payload by event id, a
            // blob export in the row: the table's wins where both exist.
            let from_table = at_row(&mut event_id, i).and_then(|&id| self.payload_tables.of(id));
            let blob = at_row(&mut payload, i);
            if payloads
                && let Some(sym) = names[i]
                && kind == NvtxKind::PushPop
                && matches!(self.p.strings.get(sym), "ncclGroupStart" | "ncclGroupEnd")
            {
                group_marks.push((sym, threads[i], start, end));
            } else if kind != NvtxKind::Mark
                && let Some(sym) = names[i]
                && let name = self.p.strings.get(sym)
                && name.starts_with("nccl")
                && let Some(decoded) = from_table
                    .or_else(|| blob.map(|b| self.payload_schemas.decode(n.domain[i], name, b)))
            {
                let a = &mut self.p.nccl_api;
                a.payloads.present += 1;
                a.payloads.from_tables += u64::from(from_table.is_some());
                match decoded {
                    Ok(f) => {
                        a.payloads.decoded += 1;
                        a.name.push(sym);
                        a.thread.push(threads[i]);
                        a.start.push(start);
                        a.end.push(end);
                        a.comm.push(f.comm);
                        a.bytes.push(f.bytes);
                        a.peer.push(f.peer);
                        a.rank.push(f.rank);
                        a.nranks.push(f.nranks);
                    }
                    Err(why) => a.payloads.refused(why),
                }
            }
            let out = &mut self.p.nvtx;
            out.start.push(start);
            out.end.push(end);
            out.thread.push(threads[i]);
            out.name.push(names[i].unwrap_or(0));
            out.kind.push(kind);
            out.domain.push(domain);
            out.depth.push(0);
        }
        if self.p.nccl_api.start.len() > had_calls {
            let a = &mut self.p.nccl_api;
            for (sym, thread, start, end) in group_marks {
                a.name.push(sym);
                a.thread.push(thread);
                a.start.push(start);
                a.end.push(end);
                a.comm.push(None);
                a.bytes.push(None);
                a.peer.push(None);
                a.rank.push(None);
                a.nranks.push(None);
            }
            super::nccl_rows::drop_duplicates(a, had_calls);
        }
    }

    /// Gives the threads of rows counted, not loaded (see `counts.rs`), as
    /// a load of the rows would make them (in another order), and their
    /// counts per process.
    /// Adds the counted rows, the calls as judged by candidate window
    /// `judged_by` (see `suspect::Candidates`).
    pub(super) fn add_counts(&mut self, c: Counted, judged_by: usize) {
        let mut counts = std::mem::take(&mut self.p.cpu_counts);
        let runtime = c.runtime.into_iter().nth(judged_by).unwrap_or_default();
        for (g, t) in runtime {
            let process = self.process_of_thread(g);
            CpuCounts::add(&mut counts.runtime_calls, process, t.rows);
            if let Some(span) = t.span {
                counts.cover(span);
            }
        }
        for (g, t) in c.nvtx {
            let process = self.process_of_thread(g);
            CpuCounts::add(&mut counts.nvtx_ranges, process, t.rows);
            if let Some(span) = t.span {
                counts.cover(span);
            }
        }
        self.p.cpu_counts = counts;
    }

    fn process_of_thread(&mut self, global_tid: i64) -> ProcId {
        let thread = self.thread(global_tid);
        self.p.threads[thread as usize].process
    }
}

/// The item of row `i` in a list of (row, item) sorted by row, walked
/// once over rising rows: what lies before `i` is passed.
fn at_row<'a, T>(
    list: &mut std::iter::Peekable<std::slice::Iter<'a, (u32, T)>>,
    i: usize,
) -> Option<&'a T> {
    while list.peek().is_some_and(|c| (c.0 as usize) < i) {
        list.next();
    }
    list.peek().filter(|c| c.0 as usize == i).map(|c| &c.1)
}
