//! The events of a capture read through the files that hold them: row `r`
//! of the capture is row `r − base` of one file's own model (as loaded, or
//! viewed in place in its cache entry), and its ids are that file's, moved
//! into the capture's numbering as they are read. Nothing copies a file's
//! events; a file's share is one [`Part`].

use super::intern::Sym;
use super::launch_shape::Shape;
use super::model::*;
use std::ops::Range;
use std::sync::Arc;

/// One file's share of a capture: its model and how its numbering maps to
/// the capture's.
#[derive(Debug, Clone)]
pub(super) struct Part {
    pub(super) file: Arc<FileProfile>,
    /// The capture's number of the file's first GPU row, runtime call and
    /// NVTX event.
    pub(super) gpu_base: usize,
    pub(super) runtime_base: usize,
    pub(super) nvtx_base: usize,
    /// … its first OS runtime call and CPU sample.
    pub(super) osrt_base: usize,
    pub(super) samples_base: usize,
    /// … its first scheduling event, CUDA sync and event record.
    pub(super) sched_base: usize,
    pub(super) syncs_base: usize,
    pub(super) cuda_events_base: usize,
    pub(super) lane_base: LaneId,
    pub(super) thread_base: ThreadId,
    pub(super) proc_base: ProcId,
    /// The capture's device of each of the file's (GPUs of one UUID
    /// merge across files).
    pub(super) devices: Arc<[DevId]>,
    /// The file's string ids as the capture's; `None` when they are the
    /// same (the first file's strings are the capture's first strings).
    pub(super) syms: Option<Arc<[Sym]>>,
}

impl Part {
    #[inline]
    fn sym(&self, s: Sym) -> Sym {
        match &self.syms {
            None => s,
            Some(map) => map.get(s as usize).copied().unwrap_or(0),
        }
    }

    /// The capture's device of the file's device `d` ([`NONE`] stays).
    #[inline]
    fn device(&self, d: DevId) -> DevId {
        self.devices.get(d as usize).copied().unwrap_or(NONE)
    }

    /// The capture's lane of the file's lane `l` ([`NONE`] stays).
    #[inline]
    fn lane(&self, l: LaneId) -> LaneId {
        match l {
            NONE => NONE,
            l => l.saturating_add(self.lane_base),
        }
    }

    /// The capture's runtime row of the file's row `c` ([`NONE`] stays).
    #[inline]
    fn call(&self, c: u32) -> u32 {
        match c {
            NONE => NONE,
            c => c.saturating_add(self.runtime_base as u32),
        }
    }
}

/// The parts of a capture, in file order.
#[derive(Debug, Clone, Default)]
pub struct Parts {
    parts: Arc<[Part]>,
}

impl Parts {
    pub(super) fn new(parts: Vec<Part>) -> Parts {
        Parts {
            parts: parts.into(),
        }
    }

    /// The files' own models, in file order.
    pub fn files(&self) -> impl ExactSizeIterator<Item = &FileProfile> {
        self.parts.iter().map(|p| &*p.file)
    }

    /// The part holding row `r` of a table whose rows in each part begin
    /// at `base(part)`, and the row's number in that part's file.
    #[inline]
    fn find(&self, r: usize, base: impl Fn(&Part) -> usize) -> (&Part, usize) {
        let part = &self.parts[self.index(r, &base)];
        (part, r - base(part))
    }

    /// The index (the file) of the part holding row `r`.
    #[inline]
    fn index(&self, r: usize, base: impl Fn(&Part) -> usize) -> usize {
        match self.parts.len() {
            1 => 0,
            // Of parts with the same base (files without such rows), the
            // last is the one holding the row.
            _ => self
                .parts
                .partition_point(|p| base(p) <= r)
                .saturating_sub(1),
        }
    }
}

/// Reads a plain value column of a row: `$table.$col` of its file.
macro_rules! value {
    ($(#[$doc:meta])* $name:ident: $table:ident.$col:ident -> $t:ty) => {
        $(#[$doc])*
        #[inline]
        pub fn $name(&self, r: usize) -> $t {
            let (part, i) = self.at(r);
            part.file.$table.$col[i]
        }
    };
}

/// Rows of one table of every file: how many, which part holds a row, and
/// the start and end columns of runs that lie in one file (the start only,
/// for a table of instants; neither, for a table without times).
macro_rules! rows_of {
    ($rows:ident, $table:ident, $base:ident) => {
        rows_of!($rows, $table, $base, instants);
        ends_of!($rows, $table);
    };
    ($rows:ident, $table:ident, $base:ident, instants) => {
        rows_of!($rows, $table, $base, untimed);
        starts_of!($rows, $table);
    };
    ($rows:ident, $table:ident, $base:ident, untimed) => {
        impl $rows {
            pub(super) fn new(parts: Parts) -> $rows {
                let len = parts.files().map(|f| f.$table.len()).sum();
                let head = parts.parts.first().cloned();
                let head_len = head.as_ref().map_or(0, |p| p.file.$table.len());
                $rows {
                    parts,
                    len,
                    head,
                    head_len,
                }
            }

            pub fn len(&self) -> usize {
                self.len
            }

            pub fn is_empty(&self) -> bool {
                self.len == 0
            }

            #[inline]
            fn at(&self, r: usize) -> (&Part, usize) {
                // The first file's rows, the only ones of a single file,
                // without a search.
                if r < self.head_len
                    && let Some(head) = &self.head
                {
                    return (head, r);
                }
                self.parts.find(r, |p| p.$base)
            }
        }
    };
}

/// The start column of a table whose rows have one (see [`rows_of`]).
macro_rules! starts_of {
    ($rows:ident, $table:ident) => {
        impl $rows {
            value!(start: $table.start -> i64);

            /// The starts of `rows`, which lie in one file (a lane's or a
            /// thread's rows do); cut at that file's last row.
            #[inline]
            pub fn starts(&self, rows: Range<usize>) -> &[i64] {
                match self.local(rows) {
                    Some((part, local)) => &part.file.$table.start[local],
                    None => &[],
                }
            }

            fn local(&self, rows: Range<usize>) -> Option<(&Part, Range<usize>)> {
                if rows.is_empty() || rows.start >= self.len {
                    return None;
                }
                let (part, lo) = self.at(rows.start);
                let hi = (lo + rows.len()).min(part.file.$table.len());
                Some((part, lo..hi))
            }
        }
    };
}

/// The end column of a table whose rows have one (see [`rows_of`]).
macro_rules! ends_of {
    ($rows:ident, $table:ident) => {
        impl $rows {
            value!(end: $table.end -> i64);

            /// The ends of `rows`, which lie in one file.
            #[inline]
            pub fn ends(&self, rows: Range<usize>) -> &[i64] {
                match self.local(rows) {
                    Some((part, local)) => &part.file.$table.end[local],
                    None => &[],
                }
            }

            /// Each file's start and end columns, in file order.
            pub fn columns(&self) -> impl Iterator<Item = (&[i64], &[i64])> {
                self.parts
                    .parts
                    .iter()
                    .map(|p| (&p.file.$table.start[..], &p.file.$table.end[..]))
            }
        }
    };
}

/// Kernels, memcpys and memsets of every file: a lane's rows are one run
/// of one file's rows, sorted by start.
#[derive(Debug, Clone, Default)]
pub struct GpuRows {
    parts: Parts,
    len: usize,
    /// The first file's part and its rows.
    head: Option<Part>,
    head_len: usize,
}

rows_of!(GpuRows, gpu, gpu_base);

impl GpuRows {
    value!(correlation: gpu.correlation -> u32);

    /// The row's lane.
    #[inline]
    pub fn lane(&self, r: usize) -> LaneId {
        let (part, i) = self.at(r);
        part.file.gpu.lane[i] + part.lane_base
    }

    /// Kernel short name; "Memcpy HtoD" etc. for copies; "Memset".
    #[inline]
    pub fn name(&self, r: usize) -> Sym {
        let (part, i) = self.at(r);
        part.sym(part.file.gpu.name[i])
    }

    /// Kernel name in the form `names` asks for.
    #[inline]
    pub fn name_as(&self, r: usize, names: crate::profile::names::KernelNames) -> Sym {
        match names {
            crate::profile::names::KernelNames::Short => self.name(r),
            crate::profile::names::KernelNames::Demangled => self.long_name(r),
        }
    }

    /// The launching runtime/driver call (a row of [`RuntimeRows`]), or
    /// [`NONE`].
    #[inline]
    pub fn launch(&self, r: usize) -> u32 {
        let (part, i) = self.at(r);
        part.call(part.file.gpu.launch[i])
    }

    /// The file the row comes from (its index in the capture's files).
    #[inline]
    pub fn file(&self, r: usize) -> usize {
        if r < self.head_len {
            return 0;
        }
        self.parts.index(r, |p| p.gpu_base)
    }

    /// Kind and short name at once (one lookup of the row's file): what
    /// telling communication kernels apart reads of every row.
    #[inline]
    pub fn kind_and_name(&self, r: usize) -> (GpuKind, Sym) {
        let (part, i) = self.at(r);
        (part.file.gpu.kind(i), part.sym(part.file.gpu.name[i]))
    }

    /// Kernel, memcpy or memset.
    #[inline]
    pub fn kind(&self, r: usize) -> GpuKind {
        let (part, i) = self.at(r);
        part.file.gpu.kind(i)
    }

    /// Kernel demangled name (the name for copies and sets).
    #[inline]
    pub fn long_name(&self, r: usize) -> Sym {
        let (part, i) = self.at(r);
        part.sym(part.file.gpu.long_name(i))
    }

    /// Bytes copied or set (0 for kernels).
    #[inline]
    pub fn bytes(&self, r: usize) -> u64 {
        let (part, i) = self.at(r);
        part.file.gpu.bytes(i)
    }

    /// The copies row `r` holds (more than 1: a batch in one record).
    #[inline]
    pub fn copies(&self, r: usize) -> u32 {
        let (part, i) = self.at(r);
        part.file.gpu.copies(i)
    }

    /// CUDA graph node id, or [`NO_GRAPH`].
    #[inline]
    pub fn graph_node(&self, r: usize) -> u64 {
        let (part, i) = self.at(r);
        part.file.gpu.graph_node(i)
    }

    /// Kernels' grid, block, registers and shared memory.
    #[inline]
    pub fn shape(&self, r: usize) -> Shape {
        let (part, i) = self.at(r);
        part.file.gpu.shape(i)
    }

    /// Whether the row was still running when its file's capture stopped
    /// (it ends at that file's `capture_end_ns`).
    #[inline]
    pub fn is_unfinished(&self, r: usize) -> bool {
        let (part, i) = self.at(r);
        part.file.gpu.is_unfinished(i)
    }

    /// The rows still running when their file's capture stopped, ascending.
    pub fn unfinished(&self) -> impl Iterator<Item = usize> + '_ {
        self.parts.parts.iter().flat_map(|p| {
            p.file
                .gpu
                .unfinished
                .iter()
                .map(|&i| i as usize + p.gpu_base)
        })
    }
}

/// CUDA runtime and driver calls of every file: a thread's calls are one
/// run of one file's rows, sorted by start.
#[derive(Debug, Clone, Default)]
pub struct RuntimeRows {
    parts: Parts,
    len: usize,
    /// The first file's part and its rows.
    head: Option<Part>,
    head_len: usize,
}

rows_of!(RuntimeRows, runtime, runtime_base);

impl RuntimeRows {
    value!(correlation: runtime.correlation -> u32);
    value!(class: runtime.class -> ApiClass);
    value!(
        /// Launches GPU work (kernel, graph, cooperative and driver launches).
        is_launch: runtime.is_launch -> bool
    );

    #[inline]
    pub fn thread(&self, r: usize) -> ThreadId {
        let (part, i) = self.at(r);
        part.file.runtime.thread[i] + part.thread_base
    }

    /// Name with the `_v<N>` version suffix stripped.
    #[inline]
    pub fn name(&self, r: usize) -> Sym {
        let (part, i) = self.at(r);
        part.sym(part.file.runtime.name[i])
    }
}

/// NVTX ranges and marks of every file: a thread's events are one run of
/// one file's rows, sorted by (start, longer first).
#[derive(Debug, Clone, Default)]
pub struct NvtxRows {
    parts: Parts,
    len: usize,
    /// The first file's part and its rows.
    head: Option<Part>,
    head_len: usize,
}

rows_of!(NvtxRows, nvtx, nvtx_base);

impl NvtxRows {
    value!(kind: nvtx.kind -> NvtxKind);
    value!(
        /// Push/pop nesting depth on its thread (0 = top level).
        depth: nvtx.depth -> u16
    );

    #[inline]
    pub fn thread(&self, r: usize) -> ThreadId {
        let (part, i) = self.at(r);
        part.file.nvtx.thread[i] + part.thread_base
    }

    #[inline]
    pub fn name(&self, r: usize) -> Sym {
        let (part, i) = self.at(r);
        part.sym(part.file.nvtx.name[i])
    }

    /// Domain name (Sym 0 = default domain).
    #[inline]
    pub fn domain(&self, r: usize) -> Sym {
        let (part, i) = self.at(r);
        part.sym(part.file.nvtx.domain[i])
    }

    #[inline]
    pub fn is_range(&self, r: usize) -> bool {
        self.kind(r) != NvtxKind::Mark
    }
}

/// OS runtime calls of every file: a thread's calls are one run of one
/// file's rows, sorted by start.
#[derive(Debug, Clone, Default)]
pub struct OsrtRows {
    parts: Parts,
    len: usize,
    /// The first file's part and its rows.
    head: Option<Part>,
    head_len: usize,
}

rows_of!(OsrtRows, osrt, osrt_base);

impl OsrtRows {
    #[inline]
    pub fn thread(&self, r: usize) -> ThreadId {
        let (part, i) = self.at(r);
        part.file.osrt.thread[i] + part.thread_base
    }

    /// Function name.
    #[inline]
    pub fn name(&self, r: usize) -> Sym {
        let (part, i) = self.at(r);
        part.sym(part.file.osrt.name[i])
    }
}

/// CPU samples of every file: a thread's samples are one run of one file's
/// rows, sorted by time (`start`; a sample has no end).
#[derive(Debug, Clone, Default)]
pub struct SampleRows {
    parts: Parts,
    len: usize,
    /// The first file's part and its rows.
    head: Option<Part>,
    head_len: usize,
}

rows_of!(SampleRows, samples, samples_base, instants);

impl SampleRows {
    #[inline]
    pub fn thread(&self, r: usize) -> ThreadId {
        let (part, i) = self.at(r);
        part.file.samples.thread[i] + part.thread_base
    }

    /// Symbol of the sample's innermost user-mode frame (Sym 0 when it has
    /// no call stack).
    #[inline]
    pub fn leaf(&self, r: usize) -> Sym {
        self.frames(r).next().unwrap_or(0)
    }

    /// The sample's user-mode frames, innermost first (at most
    /// [`MAX_FRAMES`](crate::profile::MAX_FRAMES)).
    pub fn frames(&self, r: usize) -> impl ExactSizeIterator<Item = Sym> + '_ {
        let (part, i) = self.at(r);
        part.file
            .samples
            .frames_of(i)
            .iter()
            .map(move |&f| part.sym(f))
    }
}

/// Threads scheduled in and out of CPUs in every file: a thread's events
/// are one run of one file's rows, sorted by time (`start`; an event has
/// no end).
#[derive(Debug, Clone, Default)]
pub struct SchedRows {
    parts: Parts,
    len: usize,
    /// The first file's part and its rows.
    head: Option<Part>,
    head_len: usize,
}

rows_of!(SchedRows, sched, sched_base, instants);

impl SchedRows {
    value!(
        /// The CPU (`u16::MAX` for a larger id).
        cpu: sched.cpu -> u16
    );
    value!(
        /// Scheduled in, else out.
        sched_in: sched.sched_in -> bool
    );

    #[inline]
    pub fn thread(&self, r: usize) -> ThreadId {
        let (part, i) = self.at(r);
        part.file.sched.thread[i] + part.thread_base
    }
}

/// CUDA synchronization records of every file: a process's records are one
/// run of one file's rows, sorted by start.
#[derive(Debug, Clone, Default)]
pub struct SyncRows {
    parts: Parts,
    len: usize,
    /// The first file's part and its rows.
    head: Option<Part>,
    head_len: usize,
}

rows_of!(SyncRows, syncs, syncs_base);

impl SyncRows {
    value!(
        /// `streamId` as recorded.
        stream: syncs.stream -> u32
    );
    value!(
        /// `syncType` as recorded, not interpreted (see
        /// [`CudaSyncs::sync_type`]).
        sync_type: syncs.sync_type -> u8
    );
    value!(
        /// `eventId` as recorded ([`NO_EVENT`]: none).
        event: syncs.event -> u32
    );
    value!(correlation: syncs.correlation -> u32);

    #[inline]
    pub fn process(&self, r: usize) -> ProcId {
        let (part, i) = self.at(r);
        part.file.syncs.process[i] + part.proc_base
    }

    /// The GPU, or [`NONE`] when no table of its export names it.
    #[inline]
    pub fn device(&self, r: usize) -> DevId {
        let (part, i) = self.at(r);
        part.device(part.file.syncs.device[i])
    }

    /// The lane of its process, context and stream, or [`NONE`] when no
    /// GPU row ran there.
    #[inline]
    pub fn lane(&self, r: usize) -> LaneId {
        let (part, i) = self.at(r);
        part.lane(part.file.syncs.lane[i])
    }

    /// The sync call (a row of [`RuntimeRows`]), or [`NONE`].
    #[inline]
    pub fn call(&self, r: usize) -> u32 {
        let (part, i) = self.at(r);
        part.call(part.file.syncs.call[i])
    }
}

/// CUDA event records of every file: a process's records are one run of
/// one file's rows, sorted by (event, start of the record's call; records
/// without a call first). A record has no time of its own but its
/// `timestamp`, when collected.
#[derive(Debug, Clone, Default)]
pub struct CudaEventRows {
    parts: Parts,
    len: usize,
    /// The first file's part and its rows.
    head: Option<Part>,
    head_len: usize,
}

rows_of!(CudaEventRows, cuda_events, cuda_events_base, untimed);

impl CudaEventRows {
    value!(
        /// `streamId` as recorded.
        stream: cuda_events.stream -> u32
    );
    value!(
        /// `eventId` as recorded.
        event: cuda_events.event -> u32
    );
    value!(correlation: cuda_events.correlation -> u32);
    value!(
        /// The device-side completion time on its file's clock; 0 when not
        /// collected.
        timestamp: cuda_events.timestamp -> i64
    );

    #[inline]
    pub fn process(&self, r: usize) -> ProcId {
        let (part, i) = self.at(r);
        part.file.cuda_events.process[i] + part.proc_base
    }

    /// The GPU, or [`NONE`] when no table of its export names it.
    #[inline]
    pub fn device(&self, r: usize) -> DevId {
        let (part, i) = self.at(r);
        part.device(part.file.cuda_events.device[i])
    }

    /// The lane of its process, context and stream, or [`NONE`] when no
    /// GPU row ran there.
    #[inline]
    pub fn lane(&self, r: usize) -> LaneId {
        let (part, i) = self.at(r);
        part.lane(part.file.cuda_events.lane[i])
    }

    /// The `cudaEventRecord` call (a row of [`RuntimeRows`]), or [`NONE`].
    #[inline]
    pub fn call(&self, r: usize) -> u32 {
        let (part, i) = self.at(r);
        part.call(part.file.cuda_events.call[i])
    }
}
