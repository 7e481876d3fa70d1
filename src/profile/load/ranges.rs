//! The large tables split into rowid ranges, read on several read-only
//! connections at once (all cores share every table, not one table per
//! thread); ranges come back in table and rowid order, so the caller
//! converts each while later ones are still being read, and the result is
//! the one a single scan of each table gives.

use super::counts::{self, Counted};
use super::source::{Need, Source, open_source};
use super::suspect::{Candidates, Times};
use crate::profile::model::{GpuKind, SuspectTable};
use crate::profile::open::{LoadError, Schema, quote_ident};
use crate::profile::progress::LoadStage;
use crate::profile::raw::{
    self, RawCudaEvents, RawFrames, RawGpu, RawNvtx, RawOsrt, RawRuntime, RawSamples, RawSched,
    RawSyncs, Rows, Selection,
};
use crate::profile::spec::{self, GpuColumn, TableSpec};
use rusqlite::Connection;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

/// How a file's large tables are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadPlan {
    /// Connections (and threads) reading at once.
    pub readers: usize,
    /// Rowids per range; 0 reads each table in one scan.
    pub rows_per_range: u64,
    /// What of the export is read.
    pub need: Need,
}

impl ReadPlan {
    /// Whether `table` is read at all under this plan.
    /// OS runtime calls, CPU samples, thread scheduling and CUDA sync and
    /// event records are loaded only in a full read (nothing but the model
    /// shows them); a summary's counts the rows it would leave out. The
    /// samples' frames only in a full read.
    pub fn reads(&self, table: Table) -> bool {
        match table {
            Table::Gpu(_) => true,
            Table::Runtime
            | Table::Nvtx
            | Table::Osrt
            | Table::Samples
            | Table::Sched
            | Table::Syncs
            | Table::CudaEvents => self.need != Need::Gpu,
            Table::Frames => self.need == Need::All,
        }
    }

    /// Whether `table`'s rows are counted, not loaded (see `counts.rs`).
    pub fn counts(&self, table: Table) -> bool {
        self.need == Need::Counts && !matches!(table, Table::Gpu(_) | Table::Frames)
    }
}

impl Default for ReadPlan {
    fn default() -> Self {
        ReadPlan {
            readers: crate::profile::parallel::cores(),
            rows_per_range: 1 << 16,
            need: Need::All,
        }
    }
}

/// A table's ranges never number more than this: a file with sparse rowids
/// gets wider ranges, not millions of queries.
const MAX_RANGES: u64 = 4096;

/// What a table's rows become.
#[derive(Debug, Clone, Copy)]
pub enum Table {
    Gpu(GpuKind),
    Runtime,
    Nvtx,
    Osrt,
    Samples,
    /// The samples' innermost frames (joined to the samples once both are read).
    Frames,
    Sched,
    /// CUDA synchronization and event records: after the GPU tables,
    /// whose lanes they find.
    Syncs,
    CudaEvents,
}

impl Table {
    /// The export's table of these rows.
    pub fn name(self) -> &'static str {
        match self {
            Table::Gpu(kind) => gpu_table(kind).table,
            Table::Runtime => spec::RUNTIME.table,
            Table::Nvtx => spec::NVTX.table,
            Table::Osrt => spec::OSRT.table,
            Table::Samples => spec::SAMPLES.table,
            Table::Frames => spec::FRAMES.table,
            Table::Sched => spec::SCHED.table,
            Table::Syncs => spec::SYNCS.table,
            Table::CudaEvents => spec::CUDA_EVENTS.table,
        }
    }
}

fn gpu_table(kind: GpuKind) -> &'static TableSpec<GpuColumn> {
    match kind {
        GpuKind::Kernel => &spec::KERNEL,
        GpuKind::Memcpy => &spec::MEMCPY,
        GpuKind::Memset => &spec::MEMSET,
    }
}

/// The large tables in the order they are converted.
pub const TABLES: [Table; 11] = [
    Table::Gpu(GpuKind::Kernel),
    Table::Gpu(GpuKind::Memcpy),
    Table::Gpu(GpuKind::Memset),
    Table::Runtime,
    Table::Nvtx,
    Table::Osrt,
    Table::Samples,
    Table::Frames,
    Table::Sched,
    Table::Syncs,
    Table::CudaEvents,
];

/// One range of one table ([`TABLES`] index).
#[derive(Debug, Clone, Copy)]
pub struct Job {
    pub table: usize,
    pub rows: Rows,
    /// Rows to reserve room for (bounded by the file's size).
    pub hint: usize,
}

/// The rows one job read.
pub enum Chunk {
    Gpu(GpuKind, Box<RawGpu>),
    Runtime(Box<RawRuntime>),
    Nvtx(Box<RawNvtx>),
    Osrt(Box<RawOsrt>),
    Samples(Box<RawSamples>),
    Frames(Box<RawFrames>),
    Sched(Box<RawSched>),
    Syncs(Box<RawSyncs>),
    CudaEvents(Box<RawCudaEvents>),
    /// Rows counted ([`Need::Counts`]).
    Counted(Box<Counted>),
}

/// The jobs for every large table, in [`TABLES`] order, each table at
/// least one (a missing or empty table reads nothing, as a scan would).
/// `hints[t]` is table `t`'s row hint (see [`raw::row_hint`]).
pub fn jobs(conn: &Connection, schema: &Schema, hints: &[usize], plan: &ReadPlan) -> Vec<Job> {
    let mut out = Vec::new();
    for (t, &table) in TABLES.iter().enumerate() {
        if !plan.reads(table) {
            continue;
        }
        let hint = hints.get(t).copied().unwrap_or(0);
        let whole = Job {
            table: t,
            rows: Rows::All,
            hint,
        };
        let bounds = (plan.rows_per_range > 0)
            .then(|| rowid_bounds(conn, schema, table.name()))
            .flatten();
        let Some((lo, hi)) = bounds else {
            out.push(whole);
            continue;
        };
        let span = (hi as i128 - lo as i128 + 1) as u64;
        let width = plan
            .rows_per_range
            .max(1)
            .max(span.div_ceil(MAX_RANGES))
            .min(span);
        let mut from = lo as i128;
        while from <= hi as i128 {
            let to = (from + width as i128 - 1).min(hi as i128);
            out.push(Job {
                table: t,
                rows: Rows::Between(from as i64, to as i64),
                hint: hint.min(width as usize),
            });
            from = to + 1;
        }
    }
    out
}

/// The table's smallest and largest rowid, when it has rows and `rowid`
/// names them (a column of that name, or a WITHOUT ROWID table, means the
/// table is read in one scan).
fn rowid_bounds(conn: &Connection, schema: &Schema, table: &str) -> Option<(i64, i64)> {
    if !schema.has_table(table) || schema.has_column(table, "rowid") {
        return None;
    }
    let table = quote_ident(table);
    let one = |f: &str| -> Option<i64> {
        conn.query_row(&format!("SELECT {f}(rowid) FROM {table}"), [], |r| {
            r.get::<_, Option<i64>>(0)
        })
        .ok()
        .flatten()
    };
    Some((one("min")?, one("max")?))
}

/// The table whose operation ids match collectives (see
/// `analysis/op_keys.rs`) by the kernels' correlation ids.
const NCCL_OPERATIONS: &str = "NCCL_GPU_OPERATIONS";

/// The rows of one job a load would leave out, per candidate window.
fn left_out(table: SuspectTable, times: Times, candidates: &Candidates) -> Chunk {
    Chunk::Counted(Box::new(counts::left_out(table, times, candidates)))
}

/// Reads one job on `conn`.
fn read(
    conn: &Connection,
    schema: &Schema,
    path: &Path,
    job: &Job,
    need: Need,
    candidates: &Candidates,
    report: &mut raw::Report<'_>,
) -> Result<Chunk, LoadError> {
    Ok(match TABLES[job.table] {
        Table::Runtime if need == Need::Counts => Chunk::Counted(Box::new(counts::runtime(
            conn, schema, path, job.rows, candidates, report,
        )?)),
        Table::Nvtx if need == Need::Counts => Chunk::Counted(Box::new(counts::nvtx(
            conn, schema, path, job.rows, report,
        )?)),
        // Read as a load reads them, to count what it would leave out.
        Table::Osrt if need == Need::Counts => {
            let o = raw::read_osrt(conn, schema, path, job.rows, 0, report)?;
            let times = Times::spans(&o.start, &o.end).open(&o.unfinished);
            left_out(SuspectTable::OsRuntime, times, candidates)
        }
        Table::Samples if need == Need::Counts => {
            let m = raw::read_samples(conn, schema, path, job.rows, 0, report)?;
            left_out(
                SuspectTable::CpuSamples,
                Times::instants(&m.start),
                candidates,
            )
        }
        Table::Sched if need == Need::Counts => {
            let c = raw::read_sched(conn, schema, path, job.rows, 0, report)?;
            left_out(
                SuspectTable::Scheduling,
                Times::instants(&c.start),
                candidates,
            )
        }
        Table::Syncs if need == Need::Counts => {
            let y = raw::read_syncs(conn, schema, path, job.rows, 0, report)?;
            left_out(
                SuspectTable::CudaSyncs,
                Times::spans(&y.start, &y.end),
                candidates,
            )
        }
        Table::CudaEvents if need == Need::Counts => {
            let e = raw::read_cuda_events(conn, schema, path, job.rows, 0, report)?;
            let times = Times::instants(&e.timestamp).zero_unrecorded();
            left_out(SuspectTable::CudaEvents, times, candidates)
        }
        Table::Gpu(kind) => {
            let table = gpu_table(kind);
            // Without runtime calls and NVTX, kernels need only times and
            // names; a summary's clock matching also matches collectives
            // by operation id, which needs their correlation ids.
            let columns = match (need, kind) {
                (Need::Gpu, GpuKind::Kernel) => spec::KERNEL_TIMES_AND_NAMES,
                (Need::Counts, GpuKind::Kernel) if !schema.has_table(NCCL_OPERATIONS) => {
                    spec::KERNEL_TIMES_AND_NAMES
                }
                _ => table.columns,
            };
            let read = Selection::only(table, columns);
            Chunk::Gpu(
                kind,
                Box::new(raw::read_gpu(
                    conn, schema, path, &read, kind, job.rows, job.hint, report,
                )?),
            )
        }
        Table::Runtime => Chunk::Runtime(Box::new(raw::read_runtime(
            conn, schema, path, job.rows, job.hint, report,
        )?)),
        Table::Nvtx => Chunk::Nvtx(Box::new(raw::read_nvtx(
            conn, schema, path, job.rows, report,
        )?)),
        Table::Osrt => Chunk::Osrt(Box::new(raw::read_osrt(
            conn, schema, path, job.rows, job.hint, report,
        )?)),
        Table::Samples => Chunk::Samples(Box::new(raw::read_samples(
            conn, schema, path, job.rows, job.hint, report,
        )?)),
        Table::Frames => Chunk::Frames(Box::new(raw::read_frames(
            conn, schema, path, job.rows, report,
        )?)),
        Table::Sched => Chunk::Sched(Box::new(raw::read_sched(
            conn, schema, path, job.rows, job.hint, report,
        )?)),
        Table::Syncs => Chunk::Syncs(Box::new(raw::read_syncs(
            conn, schema, path, job.rows, job.hint, report,
        )?)),
        Table::CudaEvents => Chunk::CudaEvents(Box::new(raw::read_cuda_events(
            conn, schema, path, job.rows, job.hint, report,
        )?)),
    })
}

/// What [`read_all`] hands its caller, on the caller's thread.
pub enum Delivery {
    /// Rows of the stage read so far, over all its ranges.
    Progress(LoadStage, usize),
    /// The next chunk in job order.
    Chunk(Chunk),
}

enum Message {
    Progress(LoadStage, usize),
    Done(usize, Result<Chunk, LoadError>),
}

/// Reads `jobs` on `plan.readers` connections of their own, handing
/// progress and the chunks, in job order, to `on` on this thread while the
/// readers go on. The first failing job's error (in job order) is returned;
/// jobs not yet begun are then skipped.
pub fn read_all(
    source: &Source,
    schema: &Schema,
    path: &Path,
    jobs: &[Job],
    plan: &ReadPlan,
    candidates: &Candidates,
    mut on: impl FnMut(Delivery),
) -> Result<(), LoadError> {
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<Message>();
    let readers = plan.readers.clamp(1, jobs.len().max(1));
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..readers)
            .map(|_| {
                let tx = tx.clone();
                let (next, stop) = (&next, &stop);
                scope.spawn(move || -> Option<LoadError> {
                    let conn = match open_source(source) {
                        Ok(c) => c,
                        Err(e) => return Some(e),
                    };
                    let mut report = |stage, rows| {
                        let _ = tx.send(Message::Progress(stage, rows));
                    };
                    while !stop.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = jobs.get(i) else { break };
                        let chunk =
                            read(&conn, schema, path, job, plan.need, candidates, &mut report);
                        if chunk.is_err() {
                            stop.store(true, Ordering::Relaxed);
                        }
                        let _ = tx.send(Message::Done(i, chunk));
                    }
                    None
                })
            })
            .collect();
        drop(tx);
        let mut totals: BTreeMap<LoadStage, usize> = BTreeMap::new();
        let mut waiting: BTreeMap<usize, Chunk> = BTreeMap::new();
        let mut delivered = 0usize;
        let mut failed: Option<(usize, LoadError)> = None;
        for m in rx {
            match m {
                Message::Progress(stage, rows) => {
                    let total = totals.entry(stage).or_default();
                    *total += rows;
                    on(Delivery::Progress(stage, *total));
                }
                Message::Done(i, Ok(chunk)) => {
                    waiting.insert(i, chunk);
                    while let Some(chunk) = waiting.remove(&delivered) {
                        if failed.is_none() {
                            on(Delivery::Chunk(chunk));
                        }
                        delivered += 1;
                    }
                }
                Message::Done(i, Err(e)) => {
                    if failed.as_ref().is_none_or(|(j, _)| i < *j) {
                        failed = Some((i, e));
                    }
                }
            }
        }
        let mut open_failed = None;
        for h in handles {
            match h.join() {
                Ok(None) => {}
                Ok(Some(e)) => open_failed = Some(e),
                Err(_) => {
                    open_failed = Some(LoadError::new(
                        path,
                        "internal error while reading (a reader thread failed)",
                    ))
                }
            }
        }
        if let Some((_, e)) = failed {
            return Err(e);
        }
        if delivered < jobs.len() {
            return Err(open_failed.unwrap_or_else(|| {
                LoadError::new(path, "internal error while reading (a range was not read)")
            }));
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests;
