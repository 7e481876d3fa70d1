//! Reading the large tables into raw columns, one rowid range of one table
//! at a time (see [`super::load::ranges`], which runs ranges on several
//! read-only connections at once). Raw rows keep the export's own ids;
//! [`super::load`] turns them into model ids, range by range, in order.
//! Each row is read by the columns `spec.rs` declares, never by position.

use super::ids::decode;
use super::intern::Interner;
use super::model::{GpuKind, NO_GRAPH, NONE, Shape};
use super::open::{LoadError, Schema, quote_ident};
use super::progress::LoadStage;
use super::spec::{
    self, CudaEventColumn as E, FrameColumn as F, GpuColumn as G, NvtxColumn as N, OsrtColumn as O,
    RuntimeColumn as R, SampleColumn as S, SchedColumn as Sc, StringColumn, SyncColumn as Sy,
};
pub(crate) use kept::{CALL_COLUMNS, EVENT_COLUMNS, NvtxEvent, kept_call, read_event};
use query::Row;
use rusqlite::Connection;
use rusqlite::types::ValueRef;
pub(crate) use select::{NamedRow, Selection};
use std::path::Path;

mod kept;
mod query;
mod select;

/// Where progress goes: (stage, rows read since the last report).
pub type Report<'a> = dyn FnMut(LoadStage, usize) + 'a;

/// Which rows of a table to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    All,
    /// Rowids `lo..=hi`.
    Between(i64, i64),
}

/// A name column's value: a StringIds id (≥ 0), a text interned in the
/// reader's own table (`-(sym + 1)`), or [`NO_NAME`].
pub const NO_NAME: i64 = i64::MIN;

pub use select::TIME_LIMIT_NS;

/// A StringIds id as read: a negative one names no string (and must not
/// be taken for a reader-local text).
fn string_id(v: Option<i64>) -> i64 {
    v.filter(|&id| id >= 0).unwrap_or(NO_NAME)
}

fn name_value(v: ValueRef, texts: &mut Interner) -> i64 {
    match v {
        ValueRef::Integer(id) => string_id(Some(id)),
        ValueRef::Text(t) => -(texts.intern(&String::from_utf8_lossy(t)) as i64) - 1,
        _ => NO_NAME,
    }
}

/// Kernel, memcpy or memset rows: the columns every kind has, then each
/// kind's own (empty for the other kinds).
#[derive(Default)]
pub struct RawGpu {
    pub start: Vec<i64>,
    pub end: Vec<i64>,
    pub device: Vec<u32>,
    pub context: Vec<u32>,
    pub stream: Vec<u32>,
    pub correlation: Vec<u32>,
    /// Plain pid, or [`NONE`] when the row has no globalPid.
    pub pid: Vec<u32>,
    pub graph: Vec<u64>,
    /// Kernels: a name column's value.
    pub short_name: Vec<i64>,
    /// Kernels: a name column's value.
    pub demangled_name: Vec<i64>,
    /// Kernels' launch configuration; empty (all 0) when not read.
    pub shape: Vec<Shape>,
    /// Memcpy: copyKind, or [`NO_COPY_KIND`].
    pub copy_kind: Vec<i64>,
    /// Memcpy and memset; 0 when NULL or negative.
    pub bytes: Vec<u64>,
    /// Memcpy: the copies the record holds (`copyCount`, schema 3.28.1+;
    /// 1 when absent, NULL or not above 1).
    pub copies: Vec<u32>,
    /// Rows (of these) whose `end` is NULL: still running when the capture
    /// stopped. Their `end` holds their start until the capture's end is
    /// known.
    pub unfinished: Vec<u32>,
    pub texts: Interner,
}

/// A copy's kind when NULL.
pub const NO_COPY_KIND: i64 = i64::MIN;

impl RawGpu {
    fn reserve(&mut self, n: usize, kind: GpuKind, shaped: bool) {
        reserve(&mut self.start, n);
        reserve(&mut self.end, n);
        reserve(&mut self.device, n);
        reserve(&mut self.context, n);
        reserve(&mut self.stream, n);
        reserve(&mut self.correlation, n);
        reserve(&mut self.pid, n);
        reserve(&mut self.graph, n);
        match kind {
            GpuKind::Kernel => {
                reserve(&mut self.short_name, n);
                reserve(&mut self.demangled_name, n);
                if shaped {
                    reserve(&mut self.shape, n);
                }
            }
            GpuKind::Memcpy => {
                reserve(&mut self.copy_kind, n);
                reserve(&mut self.bytes, n);
                reserve(&mut self.copies, n);
            }
            GpuKind::Memset => reserve(&mut self.bytes, n),
        }
    }
}

/// Reserves room for `n` more rows if the memory is there: a hint too
/// large only means the column grows as rows arrive.
fn reserve<T>(v: &mut Vec<T>, n: usize) {
    let _ = v.try_reserve_exact(n);
}

/// Runtime and driver API rows.
#[derive(Default)]
pub struct RawRuntime {
    pub start: Vec<i64>,
    pub end: Vec<i64>,
    pub driver: Vec<bool>,
    pub global_tid: Vec<i64>,
    pub correlation: Vec<u32>,
    pub name: Vec<i64>,
}

impl RawRuntime {
    fn reserve(&mut self, n: usize) {
        reserve(&mut self.start, n);
        reserve(&mut self.end, n);
        reserve(&mut self.driver, n);
        reserve(&mut self.global_tid, n);
        reserve(&mut self.correlation, n);
        reserve(&mut self.name, n);
    }
}

/// OS runtime API rows.
#[derive(Default)]
pub struct RawOsrt {
    pub start: Vec<i64>,
    /// The start for an open call (see `unfinished`).
    pub end: Vec<i64>,
    pub global_tid: Vec<i64>,
    pub name: Vec<i64>,
    /// Rows (of these) whose `end` is NULL: calls still open when the
    /// capture stopped.
    pub unfinished: Vec<u32>,
}

impl RawOsrt {
    fn reserve(&mut self, n: usize) {
        reserve(&mut self.start, n);
        reserve(&mut self.end, n);
        reserve(&mut self.global_tid, n);
        reserve(&mut self.name, n);
    }
}

/// Thread scheduling events (`SCHED_EVENTS`).
#[derive(Default)]
pub struct RawSched {
    pub start: Vec<i64>,
    pub global_tid: Vec<i64>,
    /// Saturated to `u16`.
    pub cpu: Vec<u16>,
    pub sched_in: Vec<bool>,
}

impl RawSched {
    fn reserve(&mut self, n: usize) {
        reserve(&mut self.start, n);
        reserve(&mut self.global_tid, n);
        reserve(&mut self.cpu, n);
        reserve(&mut self.sched_in, n);
    }
}

/// CUDA synchronization records.
#[derive(Default)]
pub struct RawSyncs {
    pub start: Vec<i64>,
    /// As recorded (one before the start is left out of the load).
    pub end: Vec<i64>,
    /// Plain pid.
    pub pid: Vec<u32>,
    /// The CUDA ordinal the process saw.
    pub device: Vec<u32>,
    pub context: Vec<u32>,
    pub stream: Vec<u32>,
    /// 0 when NULL.
    pub correlation: Vec<u32>,
    /// `syncType` as recorded, saturated.
    pub sync_type: Vec<u8>,
    /// `eventId` as recorded, saturated.
    pub event: Vec<u32>,
}

impl RawSyncs {
    fn reserve(&mut self, n: usize) {
        reserve(&mut self.start, n);
        reserve(&mut self.end, n);
        reserve(&mut self.pid, n);
        reserve(&mut self.device, n);
        reserve(&mut self.context, n);
        reserve(&mut self.stream, n);
        reserve(&mut self.correlation, n);
        reserve(&mut self.sync_type, n);
        reserve(&mut self.event, n);
    }
}

/// CUDA event records.
#[derive(Default)]
pub struct RawCudaEvents {
    /// Plain pid.
    pub pid: Vec<u32>,
    /// The CUDA ordinal the process saw.
    pub device: Vec<u32>,
    pub context: Vec<u32>,
    pub stream: Vec<u32>,
    /// 0 when NULL.
    pub correlation: Vec<u32>,
    /// `eventId` as recorded, saturated.
    pub event: Vec<u32>,
    /// 0 when not collected (NULL, or an export without the column).
    pub timestamp: Vec<i64>,
}

impl RawCudaEvents {
    fn reserve(&mut self, n: usize) {
        reserve(&mut self.pid, n);
        reserve(&mut self.device, n);
        reserve(&mut self.context, n);
        reserve(&mut self.stream, n);
        reserve(&mut self.correlation, n);
        reserve(&mut self.event, n);
        reserve(&mut self.timestamp, n);
    }
}

/// `v` as a `u32`, saturated (a damaged file's id stays an id no row has,
/// never wraps onto another).
pub(crate) fn sat_u32(v: i64) -> u32 {
    v.clamp(0, u32::MAX as i64) as u32
}

/// A correlation id as the GPU and runtime rows read theirs, so that
/// links by it are theirs; 0 (none) when NULL.
fn correlation(v: Option<i64>) -> u32 {
    v.map_or(0, |c| c as u32)
}

/// CPU sampling events (`COMPOSITE_EVENTS`).
#[derive(Default)]
pub struct RawSamples {
    pub id: Vec<i64>,
    pub start: Vec<i64>,
    pub global_tid: Vec<i64>,
}

impl RawSamples {
    fn reserve(&mut self, n: usize) {
        reserve(&mut self.id, n);
        reserve(&mut self.start, n);
        reserve(&mut self.global_tid, n);
    }

    pub fn append(&mut self, mut other: RawSamples) {
        self.id.append(&mut other.id);
        self.start.append(&mut other.start);
        self.global_tid.append(&mut other.global_tid);
    }
}

/// User-mode frames of the samples' call stacks: (sample id, depth,
/// StringIds id of the symbol), in the export's order.
#[derive(Default)]
pub struct RawFrames {
    pub id: Vec<i64>,
    /// `stackDepth`, below [`spec::FRAMES`]' limit.
    pub depth: Vec<u8>,
    pub symbol: Vec<i64>,
}

impl RawFrames {
    pub fn append(&mut self, mut other: RawFrames) {
        self.id.append(&mut other.id);
        self.depth.append(&mut other.depth);
        self.symbol.append(&mut other.symbol);
    }
}

/// NVTX rows of the kinds rankline keeps.
#[derive(Default)]
pub struct RawNvtx {
    pub start: Vec<i64>,
    /// `i64::MIN` when NULL.
    pub end: Vec<i64>,
    pub event_type: Vec<u8>,
    pub global_tid: Vec<i64>,
    pub name: Vec<i64>,
    pub domain: Vec<i64>,
    /// (row, payload bytes) of rows with a binary payload.
    pub payload: Vec<(u32, Vec<u8>)>,
    /// (row, eventId) of ranges, in an export whose payloads are in
    /// dynamic tables (by event id), and only then.
    pub event_id: Vec<(u32, i64)>,
    pub texts: Interner,
}

impl RawNvtx {
    /// Appends the rows `other` read after these, as if one scan had read
    /// both: its texts join this reader's table, its payload rows shift.
    pub fn append(&mut self, mut other: RawNvtx) {
        let base = self.start.len() as u32;
        let texts: Vec<i64> = (0..other.texts.len() as super::intern::Sym)
            .map(|k| -(self.texts.intern(other.texts.get(k)) as i64) - 1)
            .collect();
        for v in &mut other.name {
            if *v < 0 && *v != NO_NAME {
                *v = texts[(-(*v + 1)) as usize];
            }
        }
        self.start.append(&mut other.start);
        self.end.append(&mut other.end);
        self.event_type.append(&mut other.event_type);
        self.global_tid.append(&mut other.global_tid);
        self.name.append(&mut other.name);
        self.domain.append(&mut other.domain);
        self.payload.extend(
            other
                .payload
                .into_iter()
                .map(|(row, bytes)| (row + base, bytes)),
        );
        self.event_id
            .extend(other.event_id.into_iter().map(|(row, id)| (row + base, id)));
    }
}

const PROGRESS_EVERY: usize = 1 << 16;

/// Fewer bytes than any row takes in an SQLite file (at least 6: a 2-byte
/// cell pointer, the payload-size and rowid varints, a record header of its
/// size and one serial type): a file of N bytes holds under N / this rows.
const MIN_ROW_BYTES: u64 = 5;

/// About how many rows `table` has, for reserving columns and
/// estimating memory: its largest rowid (a cheap lookup; rowids of exports
/// run from 1), trusted only as far as the file's size allows. A larger
/// one is checked: a damaged file is refused, a valid one with sparse
/// rowids is counted.
pub fn row_hint(
    conn: &Connection,
    schema: &Schema,
    path: &Path,
    table: &str,
    file_bytes: u64,
) -> Result<usize, LoadError> {
    if !schema.has_table(table) {
        return Ok(0);
    }
    let err = |e: rusqlite::Error| LoadError::from_sqlite(path, &e);
    let quoted = quote_ident(table);
    // No rowid (a WITHOUT ROWID table) means no hint; a read error
    // here is met again, and reported, by the scan.
    let max_rowid: i64 = conn
        .query_row(&format!("SELECT max(rowid) FROM {quoted}"), [], |r| {
            r.get::<_, Option<i64>>(0)
        })
        .ok()
        .flatten()
        .unwrap_or(0);
    let max_rowid = max_rowid.max(0) as u64;
    if max_rowid <= file_bytes / MIN_ROW_BYTES {
        return Ok(max_rowid as usize);
    }
    let verdict: String = conn
        .query_row("PRAGMA quick_check(1)", [], |r| r.get(0))
        .map_err(err)?;
    if verdict != "ok" {
        return Err(LoadError::new(
            path,
            format!(
                "corrupted SQLite database (table {table} claims row {max_rowid} in a file of {file_bytes} bytes; quick_check: {})",
                verdict.replace('\n', " ")
            ),
        ));
    }
    let rows: i64 = conn
        .query_row(&format!("SELECT count(*) FROM {quoted}"), [], |r| r.get(0))
        .map_err(err)?;
    Ok(rows.max(0) as usize)
}

/// The SQL after the table name: the spec's filter, and a rowid range.
/// `NOT INDEXED` keeps a range in rowid order whatever indexes the file
/// has, so ranges read one after the other give the rows of one scan.
fn tail<C>(spec: &spec::TableSpec<C>, rows: Rows) -> String {
    match rows {
        Rows::All => spec.filter.to_string(),
        Rows::Between(lo, hi) if spec.filter.is_empty() => {
            format!("NOT INDEXED WHERE rowid BETWEEN {lo} AND {hi}")
        }
        Rows::Between(lo, hi) => {
            format!(
                "NOT INDEXED {} AND rowid BETWEEN {lo} AND {hi}",
                spec.filter
            )
        }
    }
}

/// Runs `read`'s SELECT over `rows`, calling `f` per row, reporting
/// progress; a missing table has no rows.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scan<C: spec::Columns>(
    conn: &Connection,
    schema: &Schema,
    path: &Path,
    read: &Selection<C>,
    rows: Rows,
    stage: LoadStage,
    report: &mut Report<'_>,
    mut f: impl FnMut(NamedRow<'_, '_, C>) -> rusqlite::Result<()>,
) -> Result<(), LoadError> {
    if !schema.has_table(read.spec.table) {
        return Ok(());
    }
    let (sql, at) = read
        .sql(schema, &tail(read.spec, rows), Some(query::SINK))
        .map_err(|m| LoadError::new(path, m))?;
    let (mut n, mut reported) = (0usize, 0usize);
    report(stage, 0);
    let mut each = |row: &Row| {
        f(NamedRow::new(row, &at))?;
        n += 1;
        // The first row too: a caller sees the read begin (tests change
        // the file at that point).
        if n == 1 || n.is_multiple_of(PROGRESS_EVERY) {
            report(stage, n - reported);
            reported = n;
        }
        Ok(())
    };
    query::each_through_sink(conn, &sql, &mut each)
        .map_err(|e| LoadError::from_sqlite(path, &e))?;
    report(stage, n - reported);
    Ok(())
}

/// Reads `rows` of one GPU activity table, `kind`'s.
#[allow(clippy::too_many_arguments)]
pub fn read_gpu(
    conn: &Connection,
    schema: &Schema,
    path: &Path,
    read: &Selection<G>,
    kind: GpuKind,
    rows: Rows,
    rows_hint: usize,
    report: &mut Report<'_>,
) -> Result<RawGpu, LoadError> {
    let stage = match kind {
        GpuKind::Kernel => LoadStage::Kernels,
        GpuKind::Memcpy => LoadStage::Memcpy,
        GpuKind::Memset => LoadStage::Memset,
    };
    // Unread, the launch shapes stay empty and read as 0.
    let shaped = kind == GpuKind::Kernel && read.values.intersects(spec::LAUNCH_SHAPE);
    let mut g = RawGpu::default();
    g.reserve(rows_hint, kind, shaped);
    scan(conn, schema, path, read, rows, stage, report, |r| {
        let (Some(start), Some(dev), Some(stream)) =
            (r.int(G::Start), r.int(G::DeviceId), r.int(G::StreamId))
        else {
            return Ok(());
        };
        let end = match r.value(G::End) {
            ValueRef::Null => {
                g.unfinished.push(g.start.len() as u32);
                start
            }
            // as recorded: one before the start is left out of the load
            // and counted (load/suspect.rs)
            _ => match r.int(G::End) {
                Some(end) => end,
                None => return Ok(()),
            },
        };
        g.start.push(start);
        g.end.push(end);
        g.device.push(dev as u32);
        g.context
            .push(r.int(G::ContextId).map_or(NONE, |c| c as u32));
        g.stream.push(stream as u32);
        g.correlation
            .push(r.int(G::CorrelationId).map_or(0, |c| c as u32));
        g.pid
            .push(r.int(G::GlobalPid).map_or(NONE, |gp| decode(gp).pid));
        g.graph
            .push(r.int(G::GraphNodeId).map_or(NO_GRAPH, |n| n as u64));
        match kind {
            GpuKind::Kernel => {
                g.short_name
                    .push(name_value(r.value(G::ShortName), &mut g.texts));
                g.demangled_name
                    .push(name_value(r.value(G::DemangledName), &mut g.texts));
                if shaped {
                    g.shape.push(launch_shape(&r));
                }
            }
            GpuKind::Memcpy => {
                g.copy_kind.push(r.int(G::CopyKind).unwrap_or(NO_COPY_KIND));
                g.bytes.push(bytes(&r));
                let copies = r.int(G::CopyCount).unwrap_or(1).clamp(1, u32::MAX as i64);
                g.copies.push(copies as u32);
            }
            GpuKind::Memset => g.bytes.push(bytes(&r)),
        }
        Ok(())
    })?;
    Ok(g)
}

/// A copy's or a set's bytes: 0 when NULL or negative.
fn bytes(r: &NamedRow<G>) -> u64 {
    r.int(G::Bytes).map_or(0, |b| b.max(0) as u64)
}

/// A kernel's launch configuration; a value out of range (a damaged file)
/// or NULL reads as 0.
fn launch_shape(r: &NamedRow<G>) -> Shape {
    let v = |c| r.int(c).and_then(|v| u32::try_from(v).ok()).unwrap_or(0);
    Shape {
        grid: [v(G::GridX), v(G::GridY), v(G::GridZ)],
        block: [v(G::BlockX), v(G::BlockY), v(G::BlockZ)],
        registers: v(G::RegistersPerThread),
        static_smem: v(G::StaticSharedMemory),
        dynamic_smem: v(G::DynamicSharedMemory),
    }
}

/// Reads `rows` of the runtime/driver API table.
pub fn read_runtime(
    conn: &Connection,
    schema: &Schema,
    path: &Path,
    rows: Rows,
    rows_hint: usize,
    report: &mut Report<'_>,
) -> Result<RawRuntime, LoadError> {
    let mut t = RawRuntime::default();
    t.reserve(rows_hint);
    let read = Selection::all(&spec::RUNTIME);
    scan(
        conn,
        schema,
        path,
        &read,
        rows,
        LoadStage::Runtime,
        report,
        |r| {
            let Some(call) = kept_call(&r) else {
                return Ok(());
            };
            t.start.push(call.start);
            t.end.push(call.end);
            t.driver.push(r.int(R::EventClass) == Some(1));
            t.global_tid.push(call.global_tid);
            t.correlation
                .push(r.int(R::CorrelationId).map_or(0, |c| c as u32));
            t.name.push(string_id(r.int(R::NameId)));
            Ok(())
        },
    )?;
    Ok(t)
}

/// Reads `rows` of the OS runtime API table. A call without a start or a
/// thread is skipped; one whose end is NULL is open (`unfinished`). Times
/// are kept as recorded: ones that cannot be right are left out of the
/// load, and counted (load/suspect.rs).
/// `OSRT_API.eventClass` of a traced OS runtime call.
const OSRT_CALL_CLASS: i64 = 27;

pub fn read_osrt(
    conn: &Connection,
    schema: &Schema,
    path: &Path,
    rows: Rows,
    rows_hint: usize,
    report: &mut Report<'_>,
) -> Result<RawOsrt, LoadError> {
    let mut t = RawOsrt::default();
    t.reserve(rows_hint);
    let read = Selection::all(&spec::OSRT);
    scan(
        conn,
        schema,
        path,
        &read,
        rows,
        LoadStage::Osrt,
        report,
        |r| {
            let (Some(start), Some(global_tid)) = (r.int(O::Start), r.int(O::GlobalTid)) else {
                return Ok(());
            };
            // the calls nsys lists (osrt_sum): class 27, not its markers
            if r.int(O::EventClass).is_some_and(|c| c != OSRT_CALL_CLASS) {
                return Ok(());
            }
            let end = match r.value(O::End) {
                ValueRef::Null => {
                    t.unfinished.push(t.start.len() as u32);
                    start
                }
                _ => match r.int(O::End) {
                    Some(end) => end,
                    None => return Ok(()),
                },
            };
            t.start.push(start);
            t.end.push(end);
            t.global_tid.push(global_tid);
            t.name.push(string_id(r.int(O::NameId)));
            Ok(())
        },
    )?;
    Ok(t)
}

/// Reads `rows` of the thread scheduling events; one without a time, a
/// CPU, a direction or a thread is skipped. A CPU past `u16` reads as
/// `u16::MAX` (a negative one as 0). Times as recorded (see [`read_osrt`]).
pub fn read_sched(
    conn: &Connection,
    schema: &Schema,
    path: &Path,
    rows: Rows,
    rows_hint: usize,
    report: &mut Report<'_>,
) -> Result<RawSched, LoadError> {
    let mut t = RawSched::default();
    t.reserve(rows_hint);
    let read = Selection::all(&spec::SCHED);
    scan(
        conn,
        schema,
        path,
        &read,
        rows,
        LoadStage::Sched,
        report,
        |r| {
            if let (Some(start), Some(cpu), Some(sched_in), Some(global_tid)) = (
                r.int(Sc::Start),
                r.int(Sc::Cpu),
                r.int(Sc::IsSchedIn),
                r.int(Sc::GlobalTid),
            ) {
                t.start.push(start);
                t.global_tid.push(global_tid);
                t.cpu.push(cpu.clamp(0, u16::MAX as i64) as u16);
                t.sched_in.push(sched_in != 0);
            }
            Ok(())
        },
    )?;
    Ok(t)
}

/// Reads `rows` of the CUDA synchronization records. One without a
/// process (`globalPid` NULL) or a value its table declares NOT NULL is
/// skipped; `syncType` is kept as recorded (real exports record wrong ones:
/// what a sync waited for is decided from its call's name), and so are
/// the times (see [`read_osrt`]).
pub fn read_syncs(
    conn: &Connection,
    schema: &Schema,
    path: &Path,
    rows: Rows,
    rows_hint: usize,
    report: &mut Report<'_>,
) -> Result<RawSyncs, LoadError> {
    let mut t = RawSyncs::default();
    t.reserve(rows_hint);
    let read = Selection::all(&spec::SYNCS);
    scan(
        conn,
        schema,
        path,
        &read,
        rows,
        LoadStage::Syncs,
        report,
        |r| {
            let (Some(start), Some(end), Some(global_pid)) =
                (r.int(Sy::Start), r.int(Sy::End), r.int(Sy::GlobalPid))
            else {
                return Ok(());
            };
            let (Some(device), Some(context), Some(stream), Some(sync_type), Some(event)) = (
                r.int(Sy::DeviceId),
                r.int(Sy::ContextId),
                r.int(Sy::StreamId),
                r.int(Sy::SyncType),
                r.int(Sy::EventId),
            ) else {
                return Ok(());
            };
            t.start.push(start);
            t.end.push(end);
            t.pid.push(decode(global_pid).pid);
            t.device.push(sat_u32(device));
            t.context.push(sat_u32(context));
            t.stream.push(sat_u32(stream));
            t.correlation.push(correlation(r.int(Sy::CorrelationId)));
            t.sync_type.push(sync_type.clamp(0, u8::MAX as i64) as u8);
            t.event.push(sat_u32(event));
            Ok(())
        },
    )?;
    Ok(t)
}

/// Reads `rows` of the CUDA event records. One without a process
/// (`globalPid` NULL) or a value its table declares NOT NULL is skipped.
/// A timestamp is kept as recorded (see [`read_osrt`]); NULL reads as 0,
/// not collected.
pub fn read_cuda_events(
    conn: &Connection,
    schema: &Schema,
    path: &Path,
    rows: Rows,
    rows_hint: usize,
    report: &mut Report<'_>,
) -> Result<RawCudaEvents, LoadError> {
    let mut t = RawCudaEvents::default();
    t.reserve(rows_hint);
    let read = Selection::all(&spec::CUDA_EVENTS);
    scan(
        conn,
        schema,
        path,
        &read,
        rows,
        LoadStage::CudaEvents,
        report,
        |r| {
            if let (Some(global_pid), Some(device), Some(context), Some(stream), Some(event)) = (
                r.int(E::GlobalPid),
                r.int(E::DeviceId),
                r.int(E::ContextId),
                r.int(E::StreamId),
                r.int(E::EventId),
            ) {
                t.pid.push(decode(global_pid).pid);
                t.device.push(sat_u32(device));
                t.context.push(sat_u32(context));
                t.stream.push(sat_u32(stream));
                t.correlation.push(correlation(r.int(E::CorrelationId)));
                t.event.push(sat_u32(event));
                t.timestamp.push(r.int(E::Timestamp).unwrap_or(0));
            }
            Ok(())
        },
    )?;
    Ok(t)
}

/// Reads `rows` of the CPU sampling events; one without a time or a
/// thread is skipped. Times as recorded (see [`read_osrt`]).
pub fn read_samples(
    conn: &Connection,
    schema: &Schema,
    path: &Path,
    rows: Rows,
    rows_hint: usize,
    report: &mut Report<'_>,
) -> Result<RawSamples, LoadError> {
    let mut t = RawSamples::default();
    t.reserve(rows_hint);
    let read = Selection::all(&spec::SAMPLES);
    scan(
        conn,
        schema,
        path,
        &read,
        rows,
        LoadStage::Samples,
        report,
        |r| {
            if let (Some(id), Some(start), Some(global_tid)) =
                (r.int(S::Id), r.int(S::Start), r.int(S::GlobalTid))
            {
                t.id.push(id);
                t.start.push(start);
                t.global_tid.push(global_tid);
            }
            Ok(())
        },
    )?;
    Ok(t)
}

/// Reads `rows` of the samples' innermost frames ([`spec::FRAMES`]),
/// keeping the user-mode ones: `kernelMode` 0 or NULL, and an address
/// outside the kernel half (a negative `originalIP` is a kernel address
/// nsys marked user mode).
pub fn read_frames(
    conn: &Connection,
    schema: &Schema,
    path: &Path,
    rows: Rows,
    report: &mut Report<'_>,
) -> Result<RawFrames, LoadError> {
    let mut t = RawFrames::default();
    let read = Selection::all(&spec::FRAMES);
    scan(
        conn,
        schema,
        path,
        &read,
        rows,
        LoadStage::Samples,
        report,
        |r| {
            if r.int(F::KernelMode).is_some_and(|k| k != 0)
                || r.int(F::OriginalIp).is_some_and(|ip| ip < 0)
            {
                return Ok(());
            }
            if let (Some(id), Some(depth), Some(symbol)) =
                (r.int(F::Id), r.int(F::StackDepth), r.int(F::Symbol))
            {
                // the filter bounds the depth; a negative one is not a frame
                if let Ok(depth) = u8::try_from(depth) {
                    t.id.push(id);
                    t.depth.push(depth);
                    t.symbol.push(symbol);
                }
            }
            Ok(())
        },
    )?;
    Ok(t)
}

/// Reads `rows` of the NVTX events (push/pop and start/end ranges, marks,
/// domains).
pub fn read_nvtx(
    conn: &Connection,
    schema: &Schema,
    path: &Path,
    rows: Rows,
    report: &mut Report<'_>,
) -> Result<RawNvtx, LoadError> {
    let mut n = RawNvtx::default();
    let read = Selection::all(&spec::NVTX);
    let linked = schema.has_table(spec::PAYLOAD_LINK);
    scan(
        conn,
        schema,
        path,
        &read,
        rows,
        LoadStage::Nvtx,
        report,
        |r| {
            let Some(NvtxEvent {
                start,
                event_type,
                global_tid,
            }) = read_event(&r)
            else {
                return Ok(());
            };
            let name = match r.value(N::Text) {
                ValueRef::Null => string_id(r.int(N::TextId)),
                text => name_value(text, &mut n.texts),
            };
            if let Some(bytes) = payload_bytes(r.value(N::BinaryData)) {
                n.payload.push((n.start.len() as u32, bytes));
            }
            if linked
                && matches!(event_type as u8, 59 | 60)
                && let Some(id) = r.int(N::EventId)
            {
                n.event_id.push((n.start.len() as u32, id));
            }
            n.start.push(start);
            n.end.push(r.time(N::End).unwrap_or(i64::MIN));
            n.event_type.push(event_type as u8);
            n.global_tid.push(global_tid);
            n.name.push(name);
            n.domain.push(r.int(N::DomainId).unwrap_or(0));
            Ok(())
        },
    )?;
    Ok(n)
}

/// Reads the string table, calling `f` with each row's id and text (rows
/// without both are skipped).
pub fn read_strings(
    conn: &Connection,
    schema: &Schema,
    path: &Path,
    report: &mut Report<'_>,
    mut f: impl FnMut(i64, &[u8]),
) -> Result<(), LoadError> {
    let read = Selection::all(&spec::STRINGS);
    scan(
        conn,
        schema,
        path,
        &read,
        Rows::All,
        LoadStage::Strings,
        report,
        |r| {
            if let (Some(id), ValueRef::Text(v)) =
                (r.int(StringColumn::Id), r.value(StringColumn::Value))
            {
                f(id, v);
            }
            Ok(())
        },
    )
}

/// No payload rankline decodes is larger (NCCL's are 8 to 56 bytes plus
/// nsys's 32-byte header): a longer one is not read.
const PAYLOAD_MAX: usize = 256;

/// A row's binary payload, stored as a blob or as hex text (the column is
/// declared TEXT), when it has one: empty when it cannot be read (longer
/// than [`PAYLOAD_MAX`], empty, or text that is not hex), so that it is
/// counted as a payload that gave nothing. Decoded with the export's
/// schemas by [`super::payload::Schemas`].
fn payload_bytes(v: ValueRef) -> Option<Vec<u8>> {
    let hex = |t: &[u8]| -> Option<Vec<u8>> {
        let t = std::str::from_utf8(t).ok()?.trim();
        let t = t.strip_prefix("0x").unwrap_or(t);
        if t.is_empty() || t.len() % 2 != 0 || t.len() > 2 * PAYLOAD_MAX {
            return None;
        }
        (0..t.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(t.get(i..i + 2)?, 16).ok())
            .collect()
    };
    match v {
        ValueRef::Blob(b) if b.len() <= PAYLOAD_MAX => Some(b.to_vec()),
        ValueRef::Blob(_) => Some(Vec::new()),
        ValueRef::Text(t) => Some(hex(t).unwrap_or_default()),
        _ => None,
    }
}
