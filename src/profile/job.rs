//! A capture's profile: one view per file (each file's own model, as
//! loaded or viewed in place in its cache entry) and the tables that
//! number hosts, processes, threads, devices and lanes across files.
//! Those tables are small (one row per thread or stream); the events stay
//! in their files and are read through [`super::views`].

use super::identity;
use super::intern::{Interner, Sym};
use super::model::*;
use super::views::{
    CudaEventRows, GpuRows, NvtxRows, OsrtRows, Part, Parts, RuntimeRows, SampleRows, SchedRows,
    SyncRows,
};
use std::ops::Range;
use std::sync::Arc;

/// Everything loaded from one or more exports.
#[derive(Debug, Default, Clone)]
pub struct Profile {
    pub files: Vec<FileInfo>,
    pub hosts: Vec<String>,
    /// Every file's strings; a file's own ids are moved into these as its
    /// rows are read.
    pub strings: Interner,
    pub processes: Vec<Process>,
    pub threads: Vec<Thread>,
    pub devices: Vec<Device>,
    /// Sorted, deduplicated.
    pub contexts: Vec<Context>,
    pub lanes: Vec<Lane>,
    pub gpu: GpuRows,
    pub runtime: RuntimeRows,
    pub nvtx: NvtxRows,
    /// OS runtime calls (empty for files without `OSRT_API`).
    pub osrt: OsrtRows,
    /// CPU samples (empty for files without `COMPOSITE_EVENTS`).
    pub samples: SampleRows,
    /// Threads scheduled in and out (empty for files without
    /// `SCHED_EVENTS`).
    pub sched: SchedRows,
    /// CUDA synchronization records (empty for files without
    /// `CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`).
    pub syncs: SyncRows,
    /// CUDA event records (empty for files without
    /// `CUPTI_ACTIVITY_KIND_CUDA_EVENT`).
    pub cuda_events: CudaEventRows,
    pub nccl_api: NcclApiRanges,
    pub nccl_ops: NcclOperations,
    /// Rows of `runtime` per thread: `runtime_by_thread[t]` is a range.
    pub runtime_by_thread: Vec<Range<usize>>,
    /// Rows of `nvtx` per thread.
    pub nvtx_by_thread: Vec<Range<usize>>,
    /// Rows of `osrt` per thread.
    pub osrt_by_thread: Vec<Range<usize>>,
    /// Rows of `samples` per thread.
    pub samples_by_thread: Vec<Range<usize>>,
    /// Rows of `sched` per thread.
    pub sched_by_thread: Vec<Range<usize>>,
    /// Rows of `syncs` per process.
    pub syncs_by_process: Vec<Range<usize>>,
    /// Rows of `cuda_events` per process.
    pub cuda_events_by_process: Vec<Range<usize>>,
    /// Host and device names, derived once all files are in (identity.rs).
    pub labels: Labels,
    /// Runtime calls and NVTX ranges counted but not loaded (a summary's
    /// read); empty when they are loaded.
    pub cpu_counts: CpuCounts,
    parts: Parts,
}

impl Profile {
    /// The capture of finalized single-file models, in file order. A
    /// file joins an earlier file's host when both name the same host and
    /// come from the same boot of it (see [`host_of`]); its GPUs join
    /// earlier ones only by UUID, never by (host, device id): per-rank
    /// files each see their own GPU as "device 0". Each file's ids follow
    /// those of the files before it, so every table stays sorted by (lane
    /// or thread, start).
    pub fn of_files(files: Vec<FileProfile>) -> Profile {
        let mut p = Profile::default();
        let mut parts = Vec::with_capacity(files.len());
        let mut bases = Bases::default();
        for one in files {
            let part = p.add(one, bases);
            bases.gpu += part.file.gpu.len();
            bases.runtime += part.file.runtime.len();
            bases.nvtx += part.file.nvtx.len();
            bases.osrt += part.file.osrt.len();
            bases.samples += part.file.samples.len();
            bases.sched += part.file.sched.len();
            bases.syncs += part.file.syncs.len();
            bases.cuda_events += part.file.cuda_events.len();
            parts.push(part);
        }
        p.contexts.sort();
        p.contexts.dedup();
        p.parts = Parts::new(parts);
        p.gpu = GpuRows::new(p.parts.clone());
        p.runtime = RuntimeRows::new(p.parts.clone());
        p.nvtx = NvtxRows::new(p.parts.clone());
        p.osrt = OsrtRows::new(p.parts.clone());
        p.samples = SampleRows::new(p.parts.clone());
        p.sched = SchedRows::new(p.parts.clone());
        p.syncs = SyncRows::new(p.parts.clone());
        p.cuda_events = CudaEventRows::new(p.parts.clone());
        p.labels = Labels::of(&p.files, &p.hosts, &p.devices);
        p
    }

    /// Adds one file's tables, numbered after those already in; returns
    /// its part.
    fn add(&mut self, one: FileProfile, bases: Bases) -> Part {
        let Bases {
            gpu: gpu_base,
            runtime: runtime_base,
            nvtx: nvtx_base,
            osrt: osrt_base,
            samples: samples_base,
            sched: sched_base,
            syncs: syncs_base,
            cuda_events: cuda_events_base,
        } = bases;
        let file = self.files.len() as u32;
        // The first file's strings are interned first, in order: its ids
        // stay as they are.
        let syms: Vec<Sym> = (0..one.strings.len() as Sym)
            .map(|s| self.strings.intern(one.strings.get(s)))
            .collect();
        let identity = syms.iter().enumerate().all(|(i, &s)| i as Sym == s);
        let sym = |s: Sym| syms[s as usize];
        let host = host_of(self, &one);
        self.files
            .extend(one.files.iter().cloned().map(|f| FileInfo {
                host_index: host,
                ..f
            }));
        let proc_base = self.processes.len() as ProcId;
        self.cpu_counts.append(one.cpu_counts.clone(), proc_base);
        self.processes.extend(one.processes.iter().map(|p| Process {
            file,
            pid: p.pid,
            name: sym(p.name),
        }));
        let thread_base = self.threads.len() as ThreadId;
        self.threads.extend(one.threads.iter().map(|t| Thread {
            process: t.process + proc_base,
            tid: t.tid,
            name: sym(t.name),
        }));
        let earlier = self.devices.len();
        let devices: Vec<DevId> = one
            .devices
            .iter()
            .map(|d| self.device_of(host, d, earlier))
            .collect();
        self.contexts.extend(one.contexts.iter().map(|c| Context {
            process: c.process + proc_base,
            context: c.context,
            device: devices[c.device as usize],
        }));
        let lane_base = self.lanes.len() as LaneId;
        let shift = |r: &Range<usize>, by: usize| r.start + by..r.end + by;
        self.lanes.extend(one.lanes.iter().map(|l| Lane {
            device: devices[l.device as usize],
            process: l.process + proc_base,
            rows: shift(&l.rows, gpu_base),
            ..l.clone()
        }));
        self.runtime_by_thread
            .extend(one.runtime_by_thread.iter().map(|r| shift(r, runtime_base)));
        self.nvtx_by_thread
            .extend(one.nvtx_by_thread.iter().map(|r| shift(r, nvtx_base)));
        self.osrt_by_thread
            .extend(one.osrt_by_thread.iter().map(|r| shift(r, osrt_base)));
        self.samples_by_thread
            .extend(one.samples_by_thread.iter().map(|r| shift(r, samples_base)));
        self.sched_by_thread
            .extend(one.sched_by_thread.iter().map(|r| shift(r, sched_base)));
        self.syncs_by_process
            .extend(one.syncs_by_process.iter().map(|r| shift(r, syncs_base)));
        self.cuda_events_by_process.extend(
            one.cuda_events_by_process
                .iter()
                .map(|r| shift(r, cuda_events_base)),
        );
        let a = &one.nccl_api;
        let api = &mut self.nccl_api;
        api.name.extend(a.name.iter().map(|&s| sym(s)));
        api.thread.extend(a.thread.iter().map(|t| t + thread_base));
        api.start.extend_from_slice(&a.start);
        api.end.extend_from_slice(&a.end);
        api.comm.extend_from_slice(&a.comm);
        api.bytes.extend_from_slice(&a.bytes);
        api.peer.extend_from_slice(&a.peer);
        api.rank.extend_from_slice(&a.rank);
        api.nranks.extend_from_slice(&a.nranks);
        api.schemas += a.schemas;
        api.payloads.add(&a.payloads);
        let o = &one.nccl_ops;
        let ops = &mut self.nccl_ops;
        ops.process.extend(o.process.iter().map(|p| p + proc_base));
        ops.correlation.extend_from_slice(&o.correlation);
        ops.operation.extend_from_slice(&o.operation);
        Part {
            file: Arc::new(one),
            gpu_base,
            runtime_base,
            nvtx_base,
            osrt_base,
            samples_base,
            sched_base,
            syncs_base,
            cuda_events_base,
            lane_base,
            thread_base,
            proc_base,
            devices: devices.into(),
            syms: (!identity).then(|| syms.into()),
        }
    }

    /// The capture's id of device `d` of a file on `host`: the GPU of the
    /// same UUID among the first `earlier` (those of earlier files), else
    /// a new one. Two ranks are two GPUs even under one UUID: the UUID may
    /// come from a listing that does not follow CUDA_VISIBLE_DEVICES.
    fn device_of(&mut self, host: u32, d: &Device, earlier: usize) -> DevId {
        let found = d.uuid.as_ref().and_then(|u| {
            self.devices[..earlier].iter().position(|x| {
                x.host == host
                    && x.uuid.as_ref() == Some(u)
                    && (x.rank == d.rank || x.rank.is_none() || d.rank.is_none())
            })
        });
        match found {
            Some(i) => {
                let x = &mut self.devices[i];
                x.listed |= d.listed;
                if x.name.is_none() {
                    x.name = d.name.clone();
                }
                x.rank = x.rank.or(d.rank);
                i as DevId
            }
            None => {
                self.devices.push(Device { host, ..d.clone() });
                (self.devices.len() - 1) as DevId
            }
        }
    }

    /// The files' own models, in file order.
    pub fn file_models(&self) -> impl ExactSizeIterator<Item = &FileProfile> {
        self.parts.files()
    }

    /// The process a thread belongs to.
    pub fn thread_process(&self, t: ThreadId) -> ProcId {
        self.threads[t as usize].process
    }

    /// The file a process's events come from.
    pub fn process_file(&self, pr: ProcId) -> usize {
        self.processes[pr as usize].file as usize
    }

    /// The file a thread's events come from.
    pub fn thread_file(&self, t: ThreadId) -> usize {
        self.processes[self.thread_process(t) as usize].file as usize
    }

    /// The file a lane's events come from.
    pub fn lane_file(&self, lane: LaneId) -> usize {
        self.processes[self.lanes[lane as usize].process as usize].file as usize
    }

    /// Time span of all loaded or counted events (GPU and CPU) on each
    /// file's own clock, if any: across files of several clocks it means
    /// nothing (`analysis::clock` gives the aligned one).
    pub fn raw_span(&self) -> Option<(i64, i64)> {
        self.file_models()
            .filter_map(FileProfile::span)
            .reduce(|(a, b), (x, y)| (a.min(x), b.max(y)))
    }
}

/// The capture's numbers of one file's first row of each table.
#[derive(Debug, Clone, Copy, Default)]
struct Bases {
    gpu: usize,
    runtime: usize,
    nvtx: usize,
    osrt: usize,
    samples: usize,
    sched: usize,
    syncs: usize,
    cuda_events: usize,
}

/// How hosts and devices are named and found by name.
impl Profile {
    /// How a device is named: in JSON its integer id while all files come
    /// from one host and ids are unique, else `host:id` (`#N` when still
    /// not unique); in text with the host's short name and the rank.
    pub fn device_label(&self, d: DevId) -> DeviceLabel {
        match self.labels.devices.get(d as usize) {
            Some(l) if self.labels.fits(self.hosts.len(), self.devices.len()) => l.clone(),
            _ => Labels::of(&self.files, &self.hosts, &self.devices).devices[d as usize].clone(),
        }
    }

    /// The name of a host in text: its first label when that is unique.
    pub fn host_label(&self, h: u32) -> &str {
        match self.labels.hosts.get(h as usize) {
            Some(l) if self.labels.fits(self.hosts.len(), self.devices.len()) => l,
            _ => &self.hosts[h as usize],
        }
    }

    /// Finds devices by a label: `3` (on every host), `host:3` or
    /// `short:3` (`#N` included), the text label (`node03:0 r4`) or a rank
    /// (`r4`).
    pub fn find_devices(&self, label: &str) -> Vec<DevId> {
        let label = label.trim();
        let rank = label.strip_prefix('r').and_then(|r| r.parse::<u32>().ok());
        let bare = label.parse::<u32>().ok();
        (0..self.devices.len() as DevId)
            .filter(|&d| {
                let dev = &self.devices[d as usize];
                let l = self.device_label(d);
                let key = l.key_string();
                let short_key = format!("{}:{}", self.host_label(dev.host), dev.id);
                let full_key = format!("{}:{}", self.hosts[dev.host as usize], dev.id);
                bare == Some(dev.id)
                    || (rank.is_some() && dev.rank == rank)
                    || key == label
                    || l.text == label
                    || full_key == label
                    || short_key == label
            })
            .collect()
    }
}

/// The host index of `other`'s file in `into`, adding the host if new: an
/// earlier file's host when both files name the same host (a Hostname, not
/// a stand-in stem) and their boot instants agree, else a new host named
/// as the file says, `#2`, `#3` … when that name is taken.
fn host_of(into: &mut Profile, other: &FileProfile) -> u32 {
    let name = other.hosts.first().cloned().unwrap_or_default();
    let (named, boot) = other
        .files
        .first()
        .map_or((None, None), |f| (f.host.as_deref(), f.boot_ns));
    let earlier = into.files.iter().find(|f| {
        named.is_some() && f.host.as_deref() == named && identity::same_boot(f.boot_ns, boot)
    });
    if let Some(f) = earlier {
        return f.host_index;
    }
    into.hosts.push(identity::unique_name(&name, &into.hosts));
    (into.hosts.len() - 1) as u32
}
