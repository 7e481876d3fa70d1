//! The in-memory profile: columnar (struct-of-arrays) tables, strings
//! interned, GPU activity sorted by (lane, start) so that a lane is one
//! contiguous, time-sorted slice that can be binary-searched.

use super::column::{Col, Pod};
pub use super::gpu_details::{Detail, DetailIds, GpuDetails};
pub use super::gpu_kind::GpuKind;
use super::intern::{Interner, Sym};
pub use super::launch_shape::{LaunchShape, Shape};
use std::ops::Range;
use std::path::PathBuf;

/// Index into [`super::Profile::processes`] (in a [`FileProfile`], the
/// file's own).
pub type ProcId = u32;
/// Index into [`super::Profile::threads`].
pub type ThreadId = u32;
/// Index into [`super::Profile::devices`].
pub type DevId = u32;
/// Index into [`super::Profile::lanes`].
pub type LaneId = u32;

/// "No such row" in the `u32` link columns.
pub const NONE: u32 = u32::MAX;

/// `len` and `is_empty` of a columnar table (its `start` column, or the
/// one named for a table without one).
macro_rules! rows_by_start {
    ($t:ty) => {
        rows_by_start!($t, start);
    };
    ($t:ty, $col:ident) => {
        impl $t {
            pub fn len(&self) -> usize {
                self.$col.len()
            }
            pub fn is_empty(&self) -> bool {
                self.$col.is_empty()
            }
        }
    };
}

/// One loaded export file.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct FileInfo {
    pub path: PathBuf,
    pub nsys_version: Option<String>,
    pub schema_version: Option<String>,
    /// The options `nsys export` records it was run with.
    #[serde(default)]
    pub export: crate::profile::export_params::ExportParams,
    /// Host name from `TARGET_INFO_SYSTEM_ENV`, if it has one.
    pub host: Option<String>,
    /// Tables the export has (a missing one means "not traced").
    pub tables: Vec<String>,
    /// UTC (ns since the Unix epoch) of capture-clock time 0, from
    /// `TARGET_INFO_SESSION_START_TIME`, when the export has it.
    pub utc_start_ns: Option<i64>,
    /// The host's boot instant (UTC ns of its boot clock's zero,
    /// `utcEpochNs − systemClockNs`), when the export records
    /// `systemClockNs`: two files naming one host but booted at different
    /// instants are different hosts.
    #[serde(default)]
    pub boot_ns: Option<i64>,
    /// The MPI/Slurm/torch rank in the capture environment, when recorded
    /// (see `identity::rank_from_env`).
    #[serde(default)]
    pub rank: Option<u32>,
    /// The job's world size in the capture environment, when recorded.
    #[serde(default)]
    pub world_size: Option<u32>,
    /// The capture's first instant, in the file's own time: the earlier of
    /// `ANALYSIS_DETAILS.startTime` and the first event of the tables read
    /// (GPU activity, runtime calls, NVTX, OS runtime calls, CPU samples).
    /// The window counts only when it overlaps the events: some exports
    /// give it on another clock (nsys 2023.1, 2025.5 session-relative
    /// exports whose window lies seconds after every event).
    #[serde(default)]
    pub capture_start_ns: Option<i64>,
    /// The capture's last instant, in the file's own time: the later of
    /// `ANALYSIS_DETAILS.stopTime` (as for `capture_start_ns`) and the last
    /// event end of the tables read. Unfinished GPU activity and open OS
    /// runtime calls end here.
    #[serde(default)]
    pub capture_end_ns: Option<i64>,
    /// Index into [`super::Profile::hosts`] (0 in a [`FileProfile`]).
    #[serde(default)]
    pub host_index: u32,
    /// `TARGET_INFO_SESSION_START_TIME.systemClockNs`, when recorded.
    pub system_clock_ns: Option<i64>,
    /// What the file's timestamps count from (decided from its data; when
    /// its data cannot decide, the default reading).
    pub timebase: Timebase,
    /// The other reading, when the file's data cannot decide between a
    /// boot clock and the session start (`systemClockNs` under a minute,
    /// no window that settles it): the clock, which sees the other files,
    /// chooses.
    #[serde(default)]
    pub timebase_alternative: Option<Timebase>,
    /// Rows left out because their times cannot be right, per table.
    #[serde(default)]
    pub suspect_rows: SuspectRows,
    /// A non-empty write-ahead log found beside the file when it was
    /// opened: rows in it were not read. Looked for at every open, so
    /// never cached.
    #[serde(skip)]
    pub wal: Option<PathBuf>,
}

/// Rows of a file whose times cannot be right, by the first reason each
/// fails (NCCL's own profiler has shipped such timestamps): left out of
/// the model, so that no figure uses them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SuspectEvents {
    pub end_before_start: u64,
    pub bad_timestamp: u64,
    /// Longer than the capture's recorded window.
    pub longer_than_capture: u64,
    /// Wholly before or after the capture's recorded window.
    pub outside_capture: u64,
}

impl SuspectEvents {
    pub fn total(&self) -> u64 {
        self.end_before_start
            .saturating_add(self.bad_timestamp)
            .saturating_add(self.longer_than_capture)
            .saturating_add(self.outside_capture)
    }

    pub fn add(&mut self, o: &SuspectEvents) {
        self.end_before_start = self.end_before_start.saturating_add(o.end_before_start);
        self.bad_timestamp = self.bad_timestamp.saturating_add(o.bad_timestamp);
        self.longer_than_capture = self
            .longer_than_capture
            .saturating_add(o.longer_than_capture);
        self.outside_capture = self.outside_capture.saturating_add(o.outside_capture);
    }

    /// `2 end before start, 1 outside the capture window`: the nonzero
    /// counts, in words.
    pub fn describe(&self) -> String {
        [
            (self.end_before_start, "end before start"),
            (self.bad_timestamp, "zero or impossible timestamp"),
            (self.longer_than_capture, "longer than the capture"),
            (self.outside_capture, "outside the capture window"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect::<Vec<_>>()
        .join(", ")
    }
}

/// The tables whose rows are judged (see `load/suspect.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuspectTable {
    /// GPU activity (kernels, copies, sets) and CUDA runtime/driver calls.
    GpuOrCudaCalls,
    OsRuntime,
    Scheduling,
    CpuSamples,
    CudaSyncs,
    CudaEvents,
}

impl SuspectTable {
    pub const ALL: [SuspectTable; 6] = [
        SuspectTable::GpuOrCudaCalls,
        SuspectTable::OsRuntime,
        SuspectTable::Scheduling,
        SuspectTable::CpuSamples,
        SuspectTable::CudaSyncs,
        SuspectTable::CudaEvents,
    ];

    /// `n` rows of this table in words (`3 CPU samples`, `1 OS runtime
    /// call`), whether they read as several, and whether each has one time
    /// (an instant) or two.
    pub fn rows(self, n: u64) -> (String, bool, bool) {
        let (one, many, instant) = match self {
            // as said before the other tables were judged
            SuspectTable::GpuOrCudaCalls => {
                return (format!("{n} GPU event(s) or CUDA call(s)"), true, false);
            }
            SuspectTable::OsRuntime => ("OS runtime call", "OS runtime calls", false),
            SuspectTable::Scheduling => ("scheduling event", "scheduling events", true),
            SuspectTable::CpuSamples => ("CPU sample", "CPU samples", true),
            SuspectTable::CudaSyncs => ("CUDA sync record", "CUDA sync records", false),
            SuspectTable::CudaEvents => ("CUDA event record", "CUDA event records", true),
        };
        match n {
            1 => (format!("1 {one}"), false, instant),
            _ => (format!("{n} {many}"), true, instant),
        }
    }

    /// The word for `n` rows' times: `time` for one instant, else `times`.
    pub fn times(self, n: u64) -> &'static str {
        match self.rows(n) {
            (_, false, true) => "time",
            _ => "times",
        }
    }
}

/// A file's rows left out because their times cannot be right, per table
/// ([`SuspectTable`]), each by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SuspectRows {
    pub gpu_or_cuda_calls: SuspectEvents,
    pub os_runtime_calls: SuspectEvents,
    pub scheduling_events: SuspectEvents,
    pub cpu_samples: SuspectEvents,
    pub cuda_syncs: SuspectEvents,
    pub cuda_event_records: SuspectEvents,
}

impl SuspectRows {
    pub fn of(&self, t: SuspectTable) -> &SuspectEvents {
        match t {
            SuspectTable::GpuOrCudaCalls => &self.gpu_or_cuda_calls,
            SuspectTable::OsRuntime => &self.os_runtime_calls,
            SuspectTable::Scheduling => &self.scheduling_events,
            SuspectTable::CpuSamples => &self.cpu_samples,
            SuspectTable::CudaSyncs => &self.cuda_syncs,
            SuspectTable::CudaEvents => &self.cuda_event_records,
        }
    }

    pub fn of_mut(&mut self, t: SuspectTable) -> &mut SuspectEvents {
        match t {
            SuspectTable::GpuOrCudaCalls => &mut self.gpu_or_cuda_calls,
            SuspectTable::OsRuntime => &mut self.os_runtime_calls,
            SuspectTable::Scheduling => &mut self.scheduling_events,
            SuspectTable::CpuSamples => &mut self.cpu_samples,
            SuspectTable::CudaSyncs => &mut self.cuda_syncs,
            SuspectTable::CudaEvents => &mut self.cuda_event_records,
        }
    }

    /// Every table's, by reason.
    pub fn total(&self) -> SuspectEvents {
        let mut all = SuspectEvents::default();
        for t in SuspectTable::ALL {
            all.add(self.of(t));
        }
        all
    }

    pub fn add(&mut self, o: &SuspectRows) {
        for t in SuspectTable::ALL {
            self.of_mut(t).add(o.of(t));
        }
    }
}

/// What a file's timestamps count from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Timebase {
    /// Already UTC ns since the Unix epoch (timestamps ≥ 10¹⁸).
    UtcEpoch,
    /// The host's boot clock: `utc_start_ns` is the UTC of timestamp
    /// `system_clock_ns` (the session's events lie inside its
    /// `ANALYSIS_DETAILS` window, which starts there).
    BootClock,
    /// ns from the session start: `utc_start_ns` is the UTC of timestamp 0.
    #[default]
    SessionRelative,
}

impl Timebase {
    pub const ALL: [Timebase; 3] = [
        Timebase::UtcEpoch,
        Timebase::BootClock,
        Timebase::SessionRelative,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Timebase::UtcEpoch => "utc-epoch",
            Timebase::BootClock => "boot-clock",
            Timebase::SessionRelative => "session-relative",
        }
    }
}

/// A file's name for a line or a cell: its last path component (the
/// whole path when it has none).
pub fn file_label(path: &std::path::Path) -> String {
    let text = crate::text_safe::path_text;
    path.file_name()
        .map_or_else(|| text(path), |n| text(std::path::Path::new(n)))
}

impl FileInfo {
    /// The file's name for a line or a cell ([`file_label`]).
    pub fn name(&self) -> String {
        file_label(&self.path)
    }

    /// Whether the export has table `t` (one it lacks was not traced, or
    /// not exported).
    pub fn has_table(&self, t: &str) -> bool {
        self.tables.iter().any(|x| x == t)
    }

    /// What to add to this file's timestamps to get UTC ns since the
    /// epoch, when the file says.
    pub fn utc_shift_ns(&self) -> Option<i64> {
        self.utc_shift_ns_as(self.timebase)
    }

    /// [`Self::utc_shift_ns`] were its timestamps on timebase `tb`.
    pub fn utc_shift_ns_as(&self, tb: Timebase) -> Option<i64> {
        match tb {
            Timebase::UtcEpoch => Some(0),
            Timebase::BootClock => Some(self.utc_start_ns?.saturating_sub(self.system_clock_ns?)),
            Timebase::SessionRelative => self.utc_start_ns,
        }
    }

    /// The lines said about the rows left out of this file, one per table
    /// that had any (names escaped by the caller): `node1.sqlite: 1 OS
    /// runtime call left out, its times cannot be right (1 zero or
    /// impossible timestamp)`.
    pub fn suspect_warnings(&self) -> Vec<String> {
        SuspectTable::ALL
            .iter()
            .filter_map(|&t| {
                let s = self.suspect_rows.of(t);
                let n = s.total();
                (n > 0).then(|| {
                    let (rows, many, _) = t.rows(n);
                    format!(
                        "{}: {rows} left out, {} {} cannot be right ({})",
                        self.name(),
                        if many { "their" } else { "its" },
                        t.times(n),
                        s.describe()
                    )
                })
            })
            .collect()
    }

    /// What to add to this file's timestamps to get its host's boot
    /// clock, when the file records where it sits on it.
    pub fn to_boot_clock_ns(&self) -> Option<i64> {
        self.to_boot_clock_ns_as(self.timebase)
    }

    /// [`Self::to_boot_clock_ns`] were its timestamps on timebase `tb`.
    pub fn to_boot_clock_ns_as(&self, tb: Timebase) -> Option<i64> {
        match tb {
            Timebase::BootClock => Some(0),
            // timestamp 0 is the boot-clock reading `systemClockNs`
            Timebase::SessionRelative => self.system_clock_ns,
            Timebase::UtcEpoch => self.boot_ns.map(|b| b.saturating_neg()),
        }
    }
}

/// A process, scoped to its file (pids of different files never merge).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Process {
    pub file: u32,
    pub pid: u32,
    pub name: Sym,
}

/// A CPU thread.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Thread {
    pub process: ProcId,
    pub tid: u32,
    pub name: Sym,
}

/// A GPU of one host: the same GPU in two files when both give it the
/// same UUID, else a GPU of its file (per-rank files each see "device 0").
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Device {
    /// Index into [`super::Profile::hosts`].
    pub host: u32,
    pub id: u32,
    /// Name from `TARGET_INFO_GPU`, when listed there.
    pub name: Option<String>,
    /// Listed in `TARGET_INFO_GPU`.
    pub listed: bool,
    /// `TARGET_INFO_GPU.uuid`, when listed there.
    #[serde(default)]
    pub uuid: Option<String>,
    /// The rank of the process using it, from its file's capture
    /// environment; never guessed.
    #[serde(default)]
    pub rank: Option<u32>,
}

/// A CUDA context of a process on a device.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Context {
    pub process: ProcId,
    pub context: u32,
    pub device: DevId,
}

/// A CUDA stream: the unit of ordering on a GPU. Stream ids are unique only
/// within a process, so a lane is (process, context, stream id).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Lane {
    pub device: DevId,
    pub process: ProcId,
    pub context: u32,
    pub stream: u32,
    /// The lane's rows in [`GpuActivity`], sorted by start.
    pub rows: Range<usize>,
}

// SAFETY: repr(u8) enums; `valid` admits only their discriminants.
unsafe impl Pod for ApiClass {
    fn valid(bytes: &[u8]) -> bool {
        bytes.iter().all(|&b| b <= 1)
    }
}
unsafe impl Pod for NvtxKind {
    fn valid(bytes: &[u8]) -> bool {
        bytes.iter().all(|&b| b <= 2)
    }
}

/// Kernels, memcpys and memsets, sorted by (lane, start).
#[derive(Debug, Default, Clone)]
pub struct GpuActivity {
    pub start: Col<i64>,
    pub end: Col<i64>,
    pub lane: Col<LaneId>,
    /// Kernel short name; "Memcpy HtoD" etc. for copies; "Memset".
    pub name: Col<Sym>,
    pub correlation: Col<u32>,
    /// Index of the launching runtime/driver call, or [`NONE`].
    pub launch: Col<u32>,
    /// Index into `details`: kind, demangled name, bytes, graph node,
    /// launch configuration.
    pub detail: Col<u32>,
    pub details: GpuDetails,
    /// Rows whose `end` the export left NULL (still running when the
    /// capture stopped), ascending; they end at the file's
    /// `capture_end_ns`. Rare: a list, not a column.
    pub unfinished: Col<u32>,
}

/// `graph_node` value of activity not launched from a CUDA graph.
pub const NO_GRAPH: u64 = u64::MAX;

rows_by_start!(GpuActivity);

impl GpuActivity {
    /// Kernel, memcpy or memset.
    pub fn kind(&self, r: usize) -> GpuKind {
        self.details.kind[self.detail[r] as usize]
    }
    /// Kernel demangled name (same as `name` for copies and sets).
    pub fn long_name(&self, r: usize) -> Sym {
        self.details.long_name[self.detail[r] as usize]
    }
    /// Bytes copied or set (0 for kernels).
    pub fn bytes(&self, r: usize) -> u64 {
        self.details.bytes[self.detail[r] as usize]
    }

    /// The copies row `r` holds: more than 1 for a batch of copies in one
    /// record (`cudaMemcpyBatchAsync`, schema 3.28.1+), else 1.
    pub fn copies(&self, r: usize) -> u32 {
        self.details.copies[self.detail[r] as usize]
    }
    /// CUDA graph node id, or `NO_GRAPH`.
    pub fn graph_node(&self, r: usize) -> u64 {
        self.details.graph_node[self.detail[r] as usize]
    }
    /// Kernels' grid, block, registers and shared memory.
    pub fn shape(&self, r: usize) -> Shape {
        self.details.shape.row(self.detail[r] as usize)
    }
    /// Whether row `r` was still running when the capture stopped (its
    /// end is the capture's end, not one the export gives).
    pub fn is_unfinished(&self, r: usize) -> bool {
        self.unfinished.binary_search(&(r as u32)).is_ok()
    }
}

/// Runtime/driver API call class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum ApiClass {
    #[default]
    Runtime = 0,
    Driver = 1,
}

/// CUDA runtime and driver calls, sorted by (thread, start).
#[derive(Debug, Default, Clone)]
pub struct RuntimeCalls {
    pub start: Col<i64>,
    pub end: Col<i64>,
    pub thread: Col<ThreadId>,
    /// Name with the `_v<N>` version suffix stripped.
    pub name: Col<Sym>,
    pub correlation: Col<u32>,
    pub class: Col<ApiClass>,
    /// Launches GPU work (kernel, graph, cooperative and driver launches).
    pub is_launch: Col<bool>,
}

rows_by_start!(RuntimeCalls);

/// OS runtime library calls (`OSRT_API`: `read`, `pthread_mutex_lock`,
/// `ioctl`…), sorted by (thread, start).
#[derive(Debug, Default, Clone)]
pub struct OsrtCalls {
    pub start: Col<i64>,
    /// The file's `capture_end_ns` for a call still open when the capture
    /// stopped (never before the start).
    pub end: Col<i64>,
    pub thread: Col<ThreadId>,
    /// Function name (Sym 0 when the export names none).
    pub name: Col<Sym>,
}

rows_by_start!(OsrtCalls);

/// How many user-mode frames of a sample's call stack are kept: enough
/// for the frame most of a span's samples share (a loop a few calls above
/// the leaves), not the whole stack.
pub const MAX_FRAMES: usize = 8;

/// CPU samples (`COMPOSITE_EVENTS`, with the innermost user-mode frames of
/// each one's call stack from `SAMPLING_CALLCHAINS`), sorted by (thread,
/// start).
#[derive(Debug, Default, Clone)]
pub struct CpuSamples {
    /// When the sample was taken.
    pub start: Col<i64>,
    pub thread: Col<ThreadId>,
    /// The sample's stack: its innermost user-mode frames (at most
    /// [`MAX_FRAMES`]), interned as strings are (stack 0 is the empty one,
    /// a sample without a call stack): a loop's samples share a few.
    pub stack: Col<u32>,
    /// Where stack `s`'s frames start in `stack_frames` (one more entry
    /// than stacks: stack `s` ends where `s + 1` starts).
    pub stack_at: Col<u32>,
    /// Every stack's frames, innermost first.
    pub stack_frames: Col<Sym>,
}

impl CpuSamples {
    /// Sample `r`'s user-mode frames, innermost first.
    pub fn frames_of(&self, r: usize) -> &[Sym] {
        let s = self.stack[r] as usize;
        &self.stack_frames[self.stack_at[s] as usize..self.stack_at[s + 1] as usize]
    }
}

rows_by_start!(CpuSamples);

/// Threads scheduled in and out of a CPU (`SCHED_EVENTS`, nsys
/// `--cpuctxsw`), sorted by (thread, start); rows of one start keep the
/// export's order.
#[derive(Debug, Default, Clone)]
pub struct SchedEvents {
    /// When the thread was scheduled in or out.
    pub start: Col<i64>,
    pub thread: Col<ThreadId>,
    /// The CPU (`u16::MAX` for a larger id).
    pub cpu: Col<u16>,
    /// Scheduled in (`isSchedIn` non-zero), else out.
    pub sched_in: Col<bool>,
}

rows_by_start!(SchedEvents);

/// CUDA synchronization records (`CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`:
/// a stream, event, context or device sync call's wait), sorted by
/// (process, start); rows of one start keep the export's order.
#[derive(Debug, Default, Clone)]
pub struct CudaSyncs {
    pub start: Col<i64>,
    /// Never before the start (a record ending before it is left out).
    pub end: Col<i64>,
    pub process: Col<ProcId>,
    /// The GPU: its lane's, else its context's, else the one its
    /// `deviceId` names (mapped as GPU rows' are), else [`NONE`] (no
    /// device is made for a sync). The recorded `deviceId` comes last: nsys
    /// 2026.2 records 0 for a process whose work all ran on GPU 1.
    pub device: Col<DevId>,
    /// `streamId` as recorded (saturated).
    pub stream: Col<u32>,
    /// The lane of (process, context, stream) when GPU rows made one, else
    /// [`NONE`] (no lane is made for a sync).
    pub lane: Col<LaneId>,
    /// `syncType` as recorded (saturated), not interpreted here: nsys
    /// 2022.1 and 2024.5 exports record wrong ones; what a sync waited for
    /// is decided from its call's name.
    pub sync_type: Col<u8>,
    /// `eventId` as recorded (saturated); [`NO_EVENT`] when the sync waited
    /// for no event.
    pub event: Col<u32>,
    /// 0 when the export gives none.
    pub correlation: Col<u32>,
    /// The runtime/driver call (a row of `runtime`) of the same process and
    /// correlation id, linked as GPU rows are to their launches; [`NONE`]
    /// when absent.
    pub call: Col<u32>,
}

/// `eventId` of a sync record that waited for no event.
pub const NO_EVENT: u32 = u32::MAX;

rows_by_start!(CudaSyncs);

/// CUDA event records (`CUPTI_ACTIVITY_KIND_CUDA_EVENT`: a
/// `cudaEventRecord` on a stream), sorted by (process, event, start of the
/// record's call): rows without a call first, then in the export's order.
#[derive(Debug, Default, Clone)]
pub struct CudaEvents {
    pub process: Col<ProcId>,
    /// The GPU, found as a sync record's is (see [`CudaSyncs::device`]).
    pub device: Col<DevId>,
    /// `streamId` as recorded (saturated).
    pub stream: Col<u32>,
    /// The lane of (process, context, stream) when GPU rows made one, else
    /// [`NONE`].
    pub lane: Col<LaneId>,
    /// `eventId` as recorded (saturated).
    pub event: Col<u32>,
    /// 0 when the export gives none.
    pub correlation: Col<u32>,
    /// The `cudaEventRecord` call (a row of `runtime`) of the same process
    /// and correlation id; [`NONE`] when absent.
    pub call: Col<u32>,
    /// The device-side completion time; 0 when not collected (exports
    /// before 2026.2 have no such column).
    pub timestamp: Col<i64>,
}

rows_by_start!(CudaEvents, process);

/// NVTX event kinds rankline keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum NvtxKind {
    /// eventType 59: nvtxRangePush/Pop, nested per thread.
    #[default]
    PushPop = 0,
    /// eventType 60: nvtxRangeStart/End, may cross threads.
    StartEnd = 1,
    /// eventType 34: an instant.
    Mark = 2,
}

/// NVTX ranges and marks, sorted by (thread, start, longer first).
#[derive(Debug, Default, Clone)]
pub struct Nvtx {
    pub start: Col<i64>,
    /// Equals `start` for marks and for ranges never closed in the capture.
    pub end: Col<i64>,
    pub thread: Col<ThreadId>,
    pub name: Col<Sym>,
    pub kind: Col<NvtxKind>,
    /// Domain name (Sym 0 = default domain).
    pub domain: Col<Sym>,
    /// Push/pop nesting depth on its thread (0 = top level); 0 for others.
    pub depth: Col<u16>,
}

rows_by_start!(Nvtx);

impl Nvtx {
    pub fn is_range(&self, i: usize) -> bool {
        self.kind[i] != NvtxKind::Mark
    }
}

/// NCCL API calls from NCCL's NVTX domain whose payload, decoded with the
/// export's payload schemas, gives the communicator id or the message size
/// (see [`super::payload`]); and, in a file that has such calls, its
/// `ncclGroupStart` / `ncclGroupEnd` ranges (no payload): grouped calls
/// launch their kernels inside `ncclGroupEnd`, not inside themselves.
/// UNVERIFIED: no real export here has payload data.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct NcclApiRanges {
    /// The call's name (`ncclAllReduce`, `ncclSend`, `ncclGroupEnd`…).
    pub name: Vec<Sym>,
    pub thread: Vec<ThreadId>,
    pub start: Vec<i64>,
    pub end: Vec<i64>,
    pub comm: Vec<Option<u64>>,
    /// "Message size [bytes]" as NCCL records it: per rank (see
    /// `analysis::bandwidth` for what that is per op).
    pub bytes: Vec<Option<u64>>,
    /// ncclSend / ncclRecv's peer, as its rank in the communicator.
    #[serde(default)]
    pub peer: Vec<Option<u32>>,
    /// A communicator init's caller rank and communicator size.
    #[serde(default)]
    pub rank: Vec<Option<u32>>,
    #[serde(default)]
    pub nranks: Vec<Option<u32>>,
    /// Payload schemas the files declare (with or without payload data).
    pub schemas: usize,
    /// What became of the payloads of NCCL calls the files hold.
    #[serde(default)]
    pub payloads: PayloadTally,
}

/// The payloads of NCCL calls (ranges named `nccl…` with `binaryData`),
/// by what became of each: decoded, or why not. Nothing undecodable is
/// read another way, so these say why sizes or communicators are missing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PayloadTally {
    pub present: u64,
    pub decoded: u64,
    /// No schema the export declares is the call's.
    pub no_schema: u64,
    /// Its schema's entries overlap or lie outside the payload size.
    pub unusable_schema: u64,
    /// Shorter or longer than nsys's record header declares.
    pub truncated: u64,
    /// A message size above 2^48 bytes.
    pub impossible_size: u64,
    /// Too short for any field its schema places.
    pub no_fields: u64,
    /// A rank or communicator size no communicator can have.
    #[serde(default)]
    pub impossible_rank: u64,
    /// Not bytes that can be read (empty, over 256 bytes, text not hex).
    #[serde(default)]
    pub unreadable: u64,
    /// Rows identical to another (thread, times, name, payload): counted once.
    pub duplicates: u64,
    /// Of those present, payloads read from the export's dynamic payload
    /// tables (`--dynamic-tables`), not from `binaryData`.
    #[serde(default)]
    pub from_tables: u64,
}

impl PayloadTally {
    pub fn add(&mut self, o: &PayloadTally) {
        let sum = |a: &mut u64, b: u64| *a = a.saturating_add(b);
        sum(&mut self.present, o.present);
        sum(&mut self.decoded, o.decoded);
        sum(&mut self.from_tables, o.from_tables);
        sum(&mut self.no_schema, o.no_schema);
        sum(&mut self.unusable_schema, o.unusable_schema);
        sum(&mut self.truncated, o.truncated);
        sum(&mut self.impossible_size, o.impossible_size);
        sum(&mut self.no_fields, o.no_fields);
        sum(&mut self.impossible_rank, o.impossible_rank);
        sum(&mut self.unreadable, o.unreadable);
        sum(&mut self.duplicates, o.duplicates);
    }

    /// Counts one payload that gave nothing.
    pub fn refused(&mut self, why: super::payload::Undecodable) {
        use super::payload::Undecodable as U;
        let n = match why {
            U::NoSchema => &mut self.no_schema,
            U::UnusableSchema => &mut self.unusable_schema,
            U::Truncated => &mut self.truncated,
            U::ImpossibleSize => &mut self.impossible_size,
            U::NoFields => &mut self.no_fields,
            U::ImpossibleRank => &mut self.impossible_rank,
            U::Unreadable => &mut self.unreadable,
        };
        *n = n.saturating_add(1);
    }

    /// Payloads present that gave nothing.
    pub fn undecodable(&self) -> u64 {
        self.present.saturating_sub(self.decoded)
    }

    /// Why payloads gave nothing, in words: `3 cut short of the length
    /// their header declares, 1 with a size above 2^48 bytes`.
    pub fn reasons(&self) -> String {
        [
            (
                self.unusable_schema,
                "whose schema's entries overlap or lie outside its payload size",
            ),
            (
                self.truncated,
                "cut short of (or longer than) the length their record header declares",
            ),
            (self.impossible_size, "with a message size above 2^48 bytes"),
            (self.no_schema, "of a schema the export does not declare"),
            (
                self.no_fields,
                "too short for the fields their schema places",
            ),
            (
                self.impossible_rank,
                "with a rank or communicator size no communicator has",
            ),
            (
                self.unreadable,
                "not readable as bytes (empty, over 256 bytes, or text that is not hex)",
            ),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect::<Vec<_>>()
        .join(", ")
    }
}

/// Rows of `NCCL_GPU_OPERATIONS` (nsys ≥ 2025.6 with NCCL ≥ 2.28): an
/// operation id shared by every rank of one collective. UNVERIFIED: no real
/// export here has the table; the columns read are `operationId`,
/// `globalPid` and `correlationId`.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct NcclOperations {
    pub process: Vec<ProcId>,
    pub correlation: Vec<u32>,
    pub operation: Vec<u64>,
}

/// One export file, loaded: what the loader reads and the cache stores.
/// Its ids are its own; a capture of several files reads it in place
/// through [`super::Profile`], which numbers them across files.
#[derive(Debug, Default, Clone)]
pub struct FileProfile {
    /// This file (one entry).
    pub files: Vec<FileInfo>,
    /// Its host (one entry).
    pub hosts: Vec<String>,
    pub strings: Interner,
    pub processes: Vec<Process>,
    pub threads: Vec<Thread>,
    pub devices: Vec<Device>,
    /// Sorted, deduplicated.
    pub contexts: Vec<Context>,
    pub lanes: Vec<Lane>,
    pub gpu: GpuActivity,
    pub runtime: RuntimeCalls,
    pub nvtx: Nvtx,
    /// Empty when the export has no `OSRT_API` (or the read was partial).
    pub osrt: OsrtCalls,
    /// Empty when the export has no `COMPOSITE_EVENTS` (or the read was
    /// partial).
    pub samples: CpuSamples,
    /// Empty when the export has no `SCHED_EVENTS` (or the read was
    /// partial).
    pub sched: SchedEvents,
    /// Empty when the export has no `CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`
    /// (or the read was partial).
    pub syncs: CudaSyncs,
    /// Empty when the export has no `CUPTI_ACTIVITY_KIND_CUDA_EVENT` (or
    /// the read was partial).
    pub cuda_events: CudaEvents,
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
    /// Runtime calls and NVTX ranges counted but not loaded (a summary's
    /// read); empty when they are loaded.
    pub cpu_counts: CpuCounts,
    /// [`Self::span`], found once: every analysis asks for it, and it reads
    /// every row. Filled only once the model is read whole (the loader
    /// reads the span with [`Self::span_of`] while it still edits rows).
    pub span_found: std::sync::OnceLock<Option<(i64, i64)>>,
}

/// What `report summary` shows of the runtime calls and NVTX events of
/// files read with [`crate::profile::Need::Counts`]: counted, their rows
/// never loaded. Never cached (such a profile is not) and never seen
/// by the timeline. The threads and processes of the counted rows are in
/// the profile, but their ids may differ from a full load's.
#[derive(Debug, Default, Clone)]
pub struct CpuCounts {
    /// Runtime and driver calls per process (by `ProcId`; missing = 0).
    pub runtime_calls: Vec<usize>,
    /// NVTX ranges (push/pop and start/end) per process.
    pub nvtx_ranges: Vec<usize>,
    /// First start and last end of the counted events (runtime calls, NVTX
    /// ranges and marks), as loaded rows would give them.
    pub span: Option<(i64, i64)>,
}

impl CpuCounts {
    pub fn is_empty(&self) -> bool {
        self.runtime_calls.is_empty() && self.nvtx_ranges.is_empty() && self.span.is_none()
    }

    /// Adds `n` rows of process `p`'s to `per_process`.
    pub fn add(per_process: &mut Vec<usize>, p: ProcId, n: usize) {
        if n == 0 {
            return;
        }
        if per_process.len() <= p as usize {
            per_process.resize(p as usize + 1, 0);
        }
        per_process[p as usize] += n;
    }

    /// Widens the span to cover `(start, end)`.
    pub fn cover(&mut self, (start, end): (i64, i64)) {
        self.span = Some(
            self.span
                .map_or((start, end), |(a, b)| (a.min(start), b.max(end))),
        );
    }

    /// Appends the counts of a file whose processes are numbered from
    /// `proc_base` on (see `Profile::of_files`).
    pub fn append(&mut self, other: CpuCounts, proc_base: ProcId) {
        for (mine, theirs) in [
            (&mut self.runtime_calls, other.runtime_calls),
            (&mut self.nvtx_ranges, other.nvtx_ranges),
        ] {
            for (p, n) in theirs.into_iter().enumerate() {
                CpuCounts::add(mine, proc_base + p as ProcId, n);
            }
        }
        if let Some(span) = other.span {
            self.cover(span);
        }
    }
}

impl FileProfile {
    /// The process a thread belongs to.
    pub fn thread_process(&self, t: ThreadId) -> ProcId {
        self.threads[t as usize].process
    }

    /// The file's OS runtime calls on thread `t` (its own id), by start.
    pub fn osrt_of_thread(&self, t: ThreadId) -> Range<usize> {
        self.osrt_by_thread.get(t as usize).cloned().unwrap_or(0..0)
    }

    /// The file's CPU samples on thread `t` (its own id), by start.
    pub fn samples_of_thread(&self, t: ThreadId) -> Range<usize> {
        self.samples_by_thread
            .get(t as usize)
            .cloned()
            .unwrap_or(0..0)
    }

    /// The file's scheduling events of thread `t` (its own id), by start.
    pub fn sched_of_thread(&self, t: ThreadId) -> Range<usize> {
        self.sched_by_thread
            .get(t as usize)
            .cloned()
            .unwrap_or(0..0)
    }

    /// First start and last end of every loaded or counted event, OS
    /// runtime calls and CPU samples included (a sample ends where it
    /// starts), if any: what the capture's bounds cover. Scheduling
    /// events are not: in the real exports they run from before the first
    /// CUDA or OS runtime call to after the last, and counting them would
    /// move every such capture's bounds.
    pub fn event_bounds(&self) -> Option<(i64, i64)> {
        self.event_bounds_of(|_| true)
    }

    /// [`Self::event_bounds`] over the times `keep` takes (before the rows
    /// that cannot be right are left out: over the times that can be).
    pub fn event_bounds_of(
        &self,
        keep: impl Fn(i64) -> bool + Copy + Send + Sync,
    ) -> Option<(i64, i64)> {
        self.event_bounds_around(self.span_of(keep), keep)
    }

    /// [`Self::event_bounds_of`] given `span`, what [`Self::span_of`]
    /// gives with `keep` (a caller that needs both reads the rows once).
    pub fn event_bounds_around(
        &self,
        span: Option<(i64, i64)>,
        keep: impl Fn(i64) -> bool + Copy + Send + Sync,
    ) -> Option<(i64, i64)> {
        let cols: [(&[i64], &[i64]); 2] = [
            (&self.osrt.start, &self.osrt.end),
            (&self.samples.start, &self.samples.start),
        ];
        widen(span, &cols, keep)
    }

    /// Time span of all loaded or counted events (GPU activity, runtime
    /// calls, NVTX), if any.
    pub fn span(&self) -> Option<(i64, i64)> {
        *self.span_found.get_or_init(|| self.span_of(|_| true))
    }

    /// The span over the times `keep` takes, read from the rows each time.
    pub fn span_of(&self, keep: impl Fn(i64) -> bool + Copy + Send + Sync) -> Option<(i64, i64)> {
        let cols: [(&[i64], &[i64]); 3] = [
            (&self.gpu.start, &self.gpu.end),
            (&self.runtime.start, &self.runtime.end),
            (&self.nvtx.start, &self.nvtx.end),
        ];
        let span = widen(None, &cols, keep);
        match (span, self.cpu_counts.span) {
            (Some((a, b)), Some((lo, hi))) => Some((a.min(lo), b.max(hi))),
            (span, counted) => span.or(counted),
        }
    }
}

/// `bounds` widened to the first start and last end in `cols` that `keep`
/// takes.
fn widen(
    mut bounds: Option<(i64, i64)>,
    cols: &[(&[i64], &[i64])],
    keep: impl Fn(i64) -> bool + Copy + Send + Sync,
) -> Option<(i64, i64)> {
    let firsts = || -> Vec<Option<i64>> {
        cols.iter()
            .map(|(starts, _)| starts.iter().copied().filter(|&t| keep(t)).min())
            .collect()
    };
    let lasts = || -> Vec<Option<i64>> {
        cols.iter()
            .map(|(_, ends)| ends.iter().copied().filter(|&t| keep(t)).max())
            .collect()
    };
    // Millions of rows: the starts on another core meanwhile.
    let rows: usize = cols.iter().map(|(s, _)| s.len()).sum();
    let (firsts, lasts) = if rows < 1 << 20 {
        (firsts(), lasts())
    } else {
        super::parallel::beside(firsts, lasts)
    };
    for (lo, hi) in firsts.into_iter().zip(lasts) {
        if let (Some(lo), Some(hi)) = (lo, hi) {
            bounds = Some(bounds.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
        }
    }
    bounds
}

/// Host and device names of a capture.
#[derive(Debug, Clone, Default)]
pub struct Labels {
    /// Per host: its first label when that is unique among the hosts, else
    /// its whole name.
    pub hosts: Vec<String>,
    pub devices: Vec<DeviceLabel>,
}

impl Labels {
    /// Whether these labels can be those of `hosts` hosts and `devices`
    /// devices.
    pub fn fits(&self, hosts: usize, devices: usize) -> bool {
        self.hosts.len() == hosts && self.devices.len() == devices
    }
}

/// A device as shown to the user: the JSON value and the text label.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DeviceLabel {
    pub key: DeviceKey,
    /// `3`, `3 r4`, `node03:3`, `node03:3 r4` (the host shortened).
    pub text: String,
}

/// A device's JSON value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum DeviceKey {
    Id(u32),
    HostId(String),
}

impl DeviceLabel {
    /// How lanes, panels and status lines name the device: `D3` (`D3 r4`)
    /// while devices are plain ids, else the label itself (`node03:3 r4`):
    /// a `D` before a host name would read as part of it.
    pub fn tag(&self) -> String {
        match self.key {
            DeviceKey::Id(_) => format!("D{}", self.text),
            DeviceKey::HostId(_) => self.text.clone(),
        }
    }

    /// The JSON value as a string (for JSON object keys).
    pub fn key_string(&self) -> String {
        match &self.key {
            DeviceKey::Id(i) => i.to_string(),
            DeviceKey::HostId(s) => s.clone(),
        }
    }
}

impl std::fmt::Display for DeviceLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}
