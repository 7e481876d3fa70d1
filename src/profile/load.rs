//! Reading one export file into a single-file [`FileProfile`] (rows unsorted;
//! [`super::finalize`] sorts and links them).

mod convert;
mod counts;
pub mod memory;
mod nccl_rows;
mod payload_tables;
pub mod ranges;
mod source;
mod stacks;
mod suspect;
mod wal;

pub use super::progress::{LoadStage, ProgressFn};
pub use ranges::ReadPlan;
pub use source::{Need, Source};
pub use wal::{note_wal, wal_title, wal_warning};

use super::ids::decode;
use super::model::*;
use super::open::{FileStamp, LoadError, Schema};
use super::raw::{self, RawNvtx, RawSamples};
use super::rows::{StringIds, int, text};
use crate::profile::export_params::ExportParams;
use rusqlite::Connection;
use rustc_hash::FxHashMap;
use source::open_source;
use std::collections::HashMap;
use std::path::Path;

const PROGRESS_EVERY: usize = 1 << 16;

/// The open export.
struct Db<'a> {
    conn: Connection,
    schema: Schema,
    path: &'a Path,
    /// Its size when the load began: a bound on the rows it can hold.
    file_bytes: u64,
}

/// What has been read so far, and the per-file id maps.
struct State<'p> {
    file_index: usize,
    ids: StringIds,
    p: FileProfile,
    // Looked up whenever a row's process, thread or lane differs from the
    // previous row's: SipHash here was 7 % of a first open's instructions.
    procs: FxHashMap<u32, ProcId>,
    threads: FxHashMap<(ProcId, u32), ThreadId>,
    devices: FxHashMap<u32, DevId>,
    /// (pid, CUDA ordinal the process saw) -> nsys GPU id, from
    /// TARGET_INFO_CUDA_DEVICE: under CUDA_VISIBLE_DEVICES every task calls
    /// its GPU "device 0", and only this map tells them apart.
    cuda_gpu: FxHashMap<(u32, u32), u32>,
    lanes: FxHashMap<(ProcId, u32, u32), LaneId>,
    /// A GPU row's lane by its raw (pid, context, stream, CUDA device):
    /// one lookup where process, GPU, device and lane take four (rows of
    /// devices interleave, so the previous row's lane rarely matches).
    row_lanes: FxHashMap<(u32, u32, u32, u32), LaneId>,
    details: DetailIds,
    progress: &'p mut ProgressFn<'p>,
    /// Counting found rows that only a full read gives what they say.
    rows_needed: bool,
    /// Rows of `p.osrt` still open when the capture stopped (unsorted
    /// order): they end at the capture's end once it is known.
    osrt_open: crate::profile::column::Col<u32>,
    /// The NVTX payload layouts the export declares (read before NVTX).
    payload_schemas: crate::profile::payload::Schemas,
    /// The payloads a dynamic-tables export holds, by event (read before
    /// NVTX).
    payload_tables: crate::profile::payload::PayloadTables,
}

/// More schema entries than any export declares (NCCL registers about 20
/// schemas of up to 7 entries, once per process): a file listing more is
/// read no further.
const SCHEMA_ENTRIES_MAX: usize = 1 << 16;

/// Loads one export, its large tables read as `plan` says. `file_index`
/// only labels progress reports.
pub fn load_file_planned(
    source: &Source,
    file_index: usize,
    progress: &mut ProgressFn<'_>,
    plan: &ReadPlan,
) -> Result<FileProfile, LoadError> {
    load_file_within(
        source,
        file_index,
        progress,
        &memory::current_limits(),
        plan,
    )
}

/// [`load_file_planned`] under the given memory limits. A file that changed while
/// it was read (rewritten, truncated, replaced) is refused: what was read
/// may mix two versions, or be cut short.
fn load_file_within(
    source: &Source,
    file_index: usize,
    progress: &mut ProgressFn<'_>,
    limits: &[memory::Limit],
    plan: &ReadPlan,
) -> Result<FileProfile, LoadError> {
    let path = source.path();
    let (before, file_bytes) = match source {
        Source::File(p) => {
            let before = FileStamp::of(p).ok();
            let len = before.as_ref().map_or(0, |s| s.len);
            (before, len)
        }
        Source::Embedded { bytes, .. } => (None, bytes.len() as u64),
    };
    let loaded = read_file(source, file_index, progress, limits, plan, file_bytes);
    if let Some(before) = before {
        let change = match FileStamp::of(path) {
            Ok(now) => before.difference(&now),
            Err(e) => Some(format!("now unreadable: {e}")),
        };
        if let Some(change) = change {
            return Err(LoadError::new(
                path,
                format!("changed while it was read ({change})"),
            ));
        }
    }
    loaded
}

fn read_file(
    source: &Source,
    file_index: usize,
    progress: &mut ProgressFn<'_>,
    limits: &[memory::Limit],
    plan: &ReadPlan,
    file_bytes: u64,
) -> Result<FileProfile, LoadError> {
    progress(file_index, LoadStage::Opening, 0);
    let path = source.path();
    let conn = open_source(source)?;
    let schema = Schema::read(&conn, path)?;
    if !schema.is_nsys_export() {
        return Err(LoadError::new(
            path,
            "an SQLite database, but not an Nsight Systems export (no StringIds, metadata or CUPTI tables)",
        ));
    }
    let db = Db {
        conn,
        schema,
        path,
        file_bytes,
    };
    let mut st = State {
        file_index,
        ids: StringIds::new(Vec::new()),
        p: FileProfile::default(),
        procs: FxHashMap::default(),
        threads: FxHashMap::default(),
        devices: FxHashMap::default(),
        cuda_gpu: FxHashMap::default(),
        lanes: FxHashMap::default(),
        row_lanes: FxHashMap::default(),
        details: DetailIds::default(),
        progress,
        rows_needed: false,
        osrt_open: Default::default(),
        payload_schemas: Default::default(),
        payload_tables: Default::default(),
    };
    st.run(&db, source, limits, plan)?;
    if st.rows_needed {
        let whole = ReadPlan {
            need: Need::All,
            ..*plan
        };
        return read_file(source, file_index, st.progress, limits, &whole, file_bytes);
    }
    Ok(st.p)
}

impl Db<'_> {
    /// Runs `sql`, calling `f` per row; a missing table means "not traced".
    fn each_row(
        &self,
        st: &mut State,
        table: &str,
        wanted: &[(&str, bool)],
        tail: &str,
        stage: Option<LoadStage>,
        mut f: impl FnMut(&mut State, &rusqlite::Row) -> rusqlite::Result<()>,
    ) -> Result<(), LoadError> {
        if !self.schema.has_table(table) {
            return Ok(());
        }
        let sql = self
            .schema
            .select(table, wanted, tail)
            .map_err(|m| LoadError::new(self.path, m))?;
        let result = (|| -> rusqlite::Result<()> {
            let mut stmt = self.conn.prepare(&sql)?;
            let mut rows = stmt.query([])?;
            let mut n = 0usize;
            while let Some(row) = rows.next()? {
                f(st, row)?;
                n += 1;
                if let Some(stage) = stage
                    && (n == 1 || n.is_multiple_of(PROGRESS_EVERY))
                {
                    (st.progress)(st.file_index, stage, n);
                }
            }
            if let Some(stage) = stage {
                (st.progress)(st.file_index, stage, n);
            }
            Ok(())
        })();
        result.map_err(|e| LoadError::from_sqlite(self.path, &e))
    }
}

impl State<'_> {
    fn run(
        &mut self,
        db: &Db,
        source: &Source,
        limits: &[memory::Limit],
        plan: &ReadPlan,
    ) -> Result<(), LoadError> {
        let (nsys_version, schema_version, export) = self.read_versions(db)?;
        let session = self.read_session_clock(db)?;
        let boot_ns = super::identity::boot_instant(session.utc_epoch_ns, session.system_clock_ns);
        let host = self.read_hostname(db)?;
        let (rank, world_size) = self.read_capture_rank(db)?;
        // Device labels need a name per host: the file's stem stands in for
        // a missing one there, never in what `summary` says the host is.
        self.p.hosts.push(
            host.clone()
                .unwrap_or_else(|| super::identity::stem_host(db.path)),
        );
        self.p.files.push(FileInfo {
            path: db.path.to_path_buf(),
            nsys_version,
            schema_version,
            export,
            host,
            tables: db.schema.table_names(),
            utc_start_ns: session.utc_epoch_ns,
            system_clock_ns: session.system_clock_ns,
            timebase: Timebase::SessionRelative,
            timebase_alternative: None,
            boot_ns,
            rank,
            world_size,
            capture_start_ns: None,
            capture_end_ns: None,
            host_index: 0,
            suspect_rows: Default::default(),
            wal: None,
        });
        (self.progress)(self.file_index, LoadStage::Strings, 0);
        self.read_string_ids(db)?;
        (self.progress)(self.file_index, LoadStage::Targets, 0);
        self.read_processes(db)?;
        self.read_threads(db)?;
        self.read_gpus(db)?;
        self.read_contexts(db)?;
        self.read_payload_schemas(db)?;
        self.read_payload_tables(db)?;
        // NCCL's payloads give message sizes: a file that declares their
        // schemas is checked for payload data even when only the GPU side
        // was asked for, and read whole when it has some.
        let checked = ReadPlan {
            need: Need::Counts,
            ..*plan
        };
        let plan = match plan.need {
            Need::Gpu if self.payload_schemas.count() > 0 => &checked,
            _ => plan,
        };
        let candidates = suspect::Candidates::new(session.window, session.system_clock_ns);
        let counted = self.read_large_tables(db, source, limits, plan, &candidates)?;
        // Before anything reads the rows' times: bounds, timebase, sorting.
        // Which clock the window is on, by the times that can be right.
        let window = session.window_on(self.p.event_bounds_of(suspect::possible));
        let (mut suspects, judged_by) =
            suspect::leave_out(&mut self.p, &mut self.osrt_open, window, &candidates);
        suspects.add(&counted.suspect[judged_by]);
        self.p.files[0].suspect_rows = suspects;
        self.add_counts(counted, judged_by);
        self.read_nccl_operations(db)?;
        self.give_rank(rank);
        let span = self.p.span_of(|_| true);
        let events = self.p.event_bounds_around(span, |_| true);
        let (start, end) = capture_bounds(session.window_on(events), events);
        self.p.files[0].capture_start_ns = start;
        self.p.files[0].capture_end_ns = end;
        if let Some(end) = end {
            self.end_unfinished(end);
        }
        // Of the span's rows only the unfinished ones moved: to the end.
        let g = &self.p.gpu;
        let span = g.unfinished.iter().fold(span, |span, &i| {
            let (s, e) = (g.start[i as usize], g.end[i as usize]);
            Some(span.map_or((s, e), |(a, b)| (a.min(s), b.max(e))))
        });
        self.p.files[0].timebase = session.timebase(span);
        self.p.files[0].timebase_alternative = session.alternative(span);
        Ok(())
    }

    /// Ends the GPU activity and OS runtime calls still running when the
    /// capture stopped at its end (`end`), never before their start.
    fn end_unfinished(&mut self, end: i64) {
        let g = &mut self.p.gpu;
        for &i in g.unfinished.iter() {
            let i = i as usize;
            g.end[i] = end.max(g.start[i]);
        }
        let o = &mut self.p.osrt;
        for &i in self.osrt_open.iter() {
            let i = i as usize;
            o.end[i] = end.max(o.start[i]);
        }
    }

    /// A file's rank belongs to its GPU when its processes used one GPU
    /// (a per-rank capture). A file whose processes used several has no
    /// per-GPU rank: its environment is the launcher's (`srun nsys
    /// torchrun` records the node's task id), not the ranks'.
    fn give_rank(&mut self, rank: Option<u32>) {
        let Some(rank) = rank else { return };
        let mut used: Vec<DevId> = self.p.lanes.iter().map(|l| l.device).collect();
        used.sort_unstable();
        used.dedup();
        let only = match used[..] {
            [d] => Some(d),
            [] if self.p.devices.len() == 1 => Some(0),
            _ => None,
        };
        if let Some(d) = only {
            self.p.devices[d as usize].rank = Some(rank);
        }
    }

    /// Rank and world size from the environment nsys recorded for each
    /// launched process (`PROCESS_N:ENVIRONMENT_VARIABLE` rows of
    /// `META_DATA_CAPTURE`, values `NAME="value"`).
    fn read_capture_rank(&mut self, db: &Db) -> Result<(Option<u32>, Option<u32>), LoadError> {
        let mut envs: std::collections::BTreeMap<String, HashMap<String, String>> =
            Default::default();
        db.each_row(
            self,
            "META_DATA_CAPTURE",
            &[("name", true), ("value", true)],
            "WHERE name LIKE 'PROCESS\\_%:ENVIRONMENT\\_VARIABLE' ESCAPE '\\'",
            None,
            |_, r| {
                let (Some(name), Some(value)) = (text(r, 0)?, text(r, 1)?) else {
                    return Ok(());
                };
                let Some((process, _)) = name.split_once(':') else {
                    return Ok(());
                };
                if let Some((k, v)) = super::identity::parse_env_var(&value)
                    && super::identity::is_rank_var(k)
                {
                    envs.entry(process.to_string())
                        .or_default()
                        .insert(k.to_string(), v.to_string());
                }
                Ok(())
            },
        )?;
        let envs: Vec<HashMap<String, String>> = envs.into_values().collect();
        Ok(super::identity::rank_from_env(&envs))
    }

    /// The nsys and schema versions, and the export's options.
    fn read_versions(
        &mut self,
        db: &Db,
    ) -> Result<(Option<String>, Option<String>, ExportParams), LoadError> {
        let mut nsys = None;
        let mut schema = None;
        let mut export = ExportParams::default();
        for table in ["META_DATA_EXPORT", "EXPORT_META_DATA"] {
            db.each_row(
                self,
                table,
                &[("name", true), ("value", true)],
                "",
                None,
                |_, r| {
                    let name = text(r, 0)?.unwrap_or_default();
                    let value = text(r, 1)?;
                    match name.as_str() {
                        "EXPORT_PRODUCT_VERSION" if nsys.is_none() => nsys = value,
                        "EXPORT_SCHEMA_VERSION" if schema.is_none() => schema = value,
                        _ => export.take(&name, value.as_deref().unwrap_or_default()),
                    }
                    Ok(())
                },
            )?;
            if nsys.is_some() || schema.is_some() {
                break;
            }
        }
        Ok((nsys, schema, export))
    }

    /// The session's clock facts: `TARGET_INFO_SESSION_START_TIME` and
    /// the `ANALYSIS_DETAILS` window.
    fn read_session_clock(&mut self, db: &Db) -> Result<SessionClock, LoadError> {
        let mut c = SessionClock::default();
        db.each_row(
            self,
            "TARGET_INFO_SESSION_START_TIME",
            &[("utcEpochNs", true), ("systemClockNs", false)],
            "",
            None,
            |_, r| {
                c.utc_epoch_ns = c.utc_epoch_ns.or(int(r, 0)?);
                c.system_clock_ns = c.system_clock_ns.or(int(r, 1)?);
                Ok(())
            },
        )?;
        db.each_row(
            self,
            "ANALYSIS_DETAILS",
            &[("startTime", true), ("stopTime", true)],
            "",
            None,
            |_, r| {
                if let (Some(a), Some(b)) = (int(r, 0)?, int(r, 1)?) {
                    c.window.get_or_insert((a, b));
                }
                Ok(())
            },
        )?;
        Ok(c)
    }

    fn read_hostname(&mut self, db: &Db) -> Result<Option<String>, LoadError> {
        let mut host = None;
        db.each_row(
            self,
            "TARGET_INFO_SYSTEM_ENV",
            &[("name", true), ("value", true)],
            "",
            None,
            |_, r| {
                if host.is_none() && text(r, 0)?.as_deref() == Some("Hostname") {
                    host = text(r, 1)?.filter(|h| !h.is_empty());
                }
                Ok(())
            },
        )?;
        Ok(host)
    }

    fn read_string_ids(&mut self, db: &Db) -> Result<(), LoadError> {
        let mut pairs = Vec::new();
        let (file_index, progress) = (self.file_index, &mut self.progress);
        let strings = &mut self.p.strings;
        let mut read = 0;
        let mut report = |stage, rows| {
            read += rows;
            progress(file_index, stage, read);
        };
        raw::read_strings(&db.conn, &db.schema, db.path, &mut report, |id, v| {
            pairs.push((id, strings.intern(&String::from_utf8_lossy(v))));
        })?;
        self.ids = StringIds::new(pairs);
        Ok(())
    }

    fn process(&mut self, pid: u32) -> ProcId {
        if let Some(&p) = self.procs.get(&pid) {
            return p;
        }
        let id = self.p.processes.len() as ProcId;
        self.p.processes.push(Process {
            file: 0,
            pid,
            name: 0,
        });
        self.procs.insert(pid, id);
        id
    }

    fn thread(&mut self, global_tid: i64) -> ThreadId {
        let g = decode(global_tid);
        let process = self.process(g.pid);
        *self.threads.entry((process, g.tid)).or_insert_with(|| {
            self.p.threads.push(Thread {
                process,
                tid: g.tid,
                name: 0,
            });
            (self.p.threads.len() - 1) as ThreadId
        })
    }

    fn device(&mut self, id: u32) -> DevId {
        *self.devices.entry(id).or_insert_with(|| {
            self.p.devices.push(Device {
                host: 0,
                id,
                name: None,
                listed: false,
                uuid: None,
                rank: None,
            });
            (self.p.devices.len() - 1) as DevId
        })
    }

    fn read_processes(&mut self, db: &Db) -> Result<(), LoadError> {
        db.each_row(
            self,
            "PROCESSES",
            &[("globalPid", false), ("pid", false), ("name", false)],
            "",
            None,
            |s, r| {
                let pid = match (int(r, 1)?, int(r, 0)?) {
                    (Some(pid), _) => pid as u32,
                    (None, Some(g)) => decode(g).pid,
                    _ => return Ok(()),
                };
                let p = s.process(pid);
                if let Some(name) = text(r, 2)? {
                    s.p.processes[p as usize].name = s.p.strings.intern(&name);
                }
                Ok(())
            },
        )
    }

    fn read_threads(&mut self, db: &Db) -> Result<(), LoadError> {
        db.each_row(
            self,
            "ThreadNames",
            &[("nameId", true), ("globalTid", true)],
            "",
            None,
            |s, r| {
                let Some(g) = int(r, 1)? else { return Ok(()) };
                let t = s.thread(g);
                if let Some(name) = s.ids.get(int(r, 0)?.unwrap_or(-1)) {
                    s.p.threads[t as usize].name = name;
                }
                Ok(())
            },
        )
    }

    fn read_gpus(&mut self, db: &Db) -> Result<(), LoadError> {
        db.each_row(
            self,
            "TARGET_INFO_GPU",
            &[("id", true), ("name", false), ("uuid", false)],
            "",
            None,
            |s, r| {
                let Some(id) = int(r, 0)? else { return Ok(()) };
                let d = s.device(id as u32);
                let dev = &mut s.p.devices[d as usize];
                dev.listed = true;
                dev.name = text(r, 1)?.filter(|n| !n.is_empty()).or(dev.name.take());
                dev.uuid = text(r, 2)?.filter(|u| !u.is_empty()).or(dev.uuid.take());
                Ok(())
            },
        )
    }

    /// The GPU a process means by CUDA ordinal `cuda_id`: the mapped GPU id
    /// when the export records one, else the ordinal itself (exports before
    /// TARGET_INFO_CUDA_DEVICE, or a process that saw every GPU).
    fn gpu_of(&self, pid: u32, cuda_id: u32) -> u32 {
        self.cuda_gpu
            .get(&(pid, cuda_id))
            .copied()
            .unwrap_or(cuda_id)
    }

    fn add_context(&mut self, pid: u32, context: u32, gpu: u32) {
        let process = self.process(pid);
        let device = self.device(gpu);
        self.p.contexts.push(Context {
            process,
            context,
            device,
        });
    }

    fn read_contexts(&mut self, db: &Db) -> Result<(), LoadError> {
        // TARGET_INFO_CUDA_DEVICE says which GPUs a process opened and under
        // which CUDA ordinal; the context tables and activity rows give the
        // ordinal, so it is read first.
        let mut opened = Vec::new();
        db.each_row(
            self,
            "TARGET_INFO_CUDA_DEVICE",
            &[("pid", true), ("gpuId", false), ("cudaId", true)],
            "",
            None,
            |_, r| {
                if let (Some(pid), Some(cuda)) = (int(r, 0)?, int(r, 2)?) {
                    opened.push((pid as u32, cuda as u32, int(r, 1)?.map(|g| g as u32)));
                }
                Ok(())
            },
        )?;
        for &(pid, cuda, gpu) in &opened {
            if let Some(gpu) = gpu {
                self.cuda_gpu.insert((pid, cuda), gpu);
            }
        }
        for table in [
            "TARGET_INFO_CUDA_CONTEXT_INFO",
            "TARGET_INFO_CUDA_NULL_STREAM",
        ] {
            db.each_row(
                self,
                table,
                &[("processId", true), ("deviceId", true), ("contextId", true)],
                "",
                None,
                |s, r| {
                    if let (Some(pid), Some(dev), Some(ctx)) = (int(r, 0)?, int(r, 1)?, int(r, 2)?)
                    {
                        let gpu = s.gpu_of(pid as u32, dev as u32);
                        s.add_context(pid as u32, ctx as u32, gpu);
                    }
                    Ok(())
                },
            )?;
        }
        for (pid, cuda, _) in opened {
            let gpu = self.gpu_of(pid, cuda);
            self.add_context(pid, NONE, gpu);
        }
        Ok(())
    }

    fn lane(&mut self, process: ProcId, context: u32, stream: u32, device: DevId) -> LaneId {
        *self
            .lanes
            .entry((process, context, stream))
            .or_insert_with(|| {
                self.p.lanes.push(Lane {
                    device,
                    process,
                    context,
                    stream,
                    rows: 0..0,
                });
                (self.p.lanes.len() - 1) as LaneId
            })
    }

    /// Reads the large tables in rowid ranges on `plan.readers`
    /// connections at once, converting each range here, in order, while
    /// later ones are read. First refuses a file whose rows would not fit
    /// in memory.
    fn read_large_tables(
        &mut self,
        db: &Db,
        source: &Source,
        limits: &[memory::Limit],
        plan: &ReadPlan,
        candidates: &suspect::Candidates,
    ) -> Result<counts::Counted, LoadError> {
        let (schema, path) = (&db.schema, db.path);
        let hints = ranges::TABLES
            .iter()
            .map(|&table| match plan.reads(table) && !plan.counts(table) {
                // A table's hint sizes its reads; the frames are read in
                // full whatever it says (12 rows of a deep stack, 1 of a
                // shallow one) and are joined to the samples, not kept.
                true if !matches!(table, ranges::Table::Frames) => {
                    raw::row_hint(&db.conn, schema, path, table.name(), db.file_bytes)
                }
                _ => Ok(0),
            })
            .collect::<Result<Vec<usize>, LoadError>>()?;
        let rows = hints
            .iter()
            .map(|&n| n as u64)
            .fold(0u64, u64::saturating_add);
        memory::check(rows, limits).map_err(|m| LoadError::new(path, m))?;
        let jobs = ranges::jobs(&db.conn, schema, &hints, plan);
        let mut nvtx = RawNvtx::default();
        let (mut samples, mut stacks) = (RawSamples::default(), stacks::Stacks::default());
        let mut names = rustc_hash::FxHashMap::default();
        let mut counted = counts::Counted::default();
        ranges::read_all(source, schema, path, &jobs, plan, candidates, |d| match d {
            ranges::Delivery::Progress(stage, rows) => {
                (self.progress)(self.file_index, stage, rows)
            }
            ranges::Delivery::Chunk(ranges::Chunk::Gpu(kind, g)) => self.add_gpu(kind, *g),
            ranges::Delivery::Chunk(ranges::Chunk::Runtime(r)) => self.add_runtime(*r),
            // NVTX domain names may come after the ranges that use them:
            // converted once all is read.
            ranges::Delivery::Chunk(ranges::Chunk::Nvtx(n)) => nvtx.append(*n),
            ranges::Delivery::Chunk(ranges::Chunk::Osrt(o)) => self.add_osrt(*o),
            ranges::Delivery::Chunk(ranges::Chunk::Sched(s)) => self.add_sched(*s),
            // After every GPU chunk (table order): the lanes are known.
            ranges::Delivery::Chunk(ranges::Chunk::Syncs(s)) => self.add_syncs(*s),
            ranges::Delivery::Chunk(ranges::Chunk::CudaEvents(e)) => self.add_cuda_events(*e),
            // Joined once both are read.
            ranges::Delivery::Chunk(ranges::Chunk::Samples(s)) => samples.append(*s),
            ranges::Delivery::Chunk(ranges::Chunk::Frames(f)) => {
                stacks.add(*f, &mut |id| self.id_sym(&mut names, id))
            }
            ranges::Delivery::Chunk(ranges::Chunk::Counted(c)) => counted.append(*c),
        })?;
        self.add_nvtx(nvtx);
        let joined = stacks.join(&samples.id, &mut |id| self.id_sym(&mut names, id));
        self.add_samples(samples, joined);
        // NVTX payloads may name NCCL communicators, which the clock's
        // matching reads from loaded rows: such a file is read whole.
        // So may a dynamic-tables export's, whose NVTX rows were counted.
        self.rows_needed =
            counted.nvtx_payloads || (plan.need == Need::Counts && !self.payload_tables.is_empty());
        Ok(counted)
    }

    /// The payload schemas' entries (small tables: a few rows per schema,
    /// repeated per process). UNVERIFIED decoding (see `payload.rs`).
    fn read_payload_schemas(&mut self, db: &Db) -> Result<(), LoadError> {
        let mut sizes = Vec::new();
        let wanted = [
            ("domainId", true),
            ("schemaId", true),
            ("payloadSize", false),
        ];
        db.each_row(self, "NVTX_PAYLOAD_SCHEMAS", &wanted, "", None, |_, r| {
            if let (Some(d), Some(s)) = (int(r, 0)?, int(r, 1)?) {
                sizes.push((d, s as u64, int(r, 2)?));
            }
            Ok(())
        })?;
        let mut entries = Vec::new();
        let wanted = [
            ("domainId", true),
            ("schemaId", true),
            ("idx", true),
            ("type", true),
            ("name", false),
            ("offset", false),
        ];
        db.each_row(
            self,
            "NVTX_PAYLOAD_SCHEMA_ENTRIES",
            &wanted,
            "",
            None,
            |_, r| {
                if let (Some(d), Some(s), Some(idx), Some(kind)) =
                    (int(r, 0)?, int(r, 1)?, int(r, 2)?, int(r, 3)?)
                    && entries.len() < SCHEMA_ENTRIES_MAX
                {
                    let name = match r.get_ref(4)? {
                        rusqlite::types::ValueRef::Text(t) => {
                            String::from_utf8_lossy(t).into_owned()
                        }
                        _ => String::new(),
                    };
                    let offset = int(r, 5)?;
                    entries.push((
                        d,
                        s as u64,
                        crate::profile::payload::Entry {
                            idx,
                            kind,
                            name,
                            offset,
                        },
                    ));
                }
                Ok(())
            },
        )?;
        self.payload_schemas = crate::profile::payload::Schemas::new(&sizes, entries);
        self.p.nccl_api.schemas = self.payload_schemas.count();
        Ok(())
    }

    /// UNVERIFIED shape (see [`NcclOperations`]).
    fn read_nccl_operations(&mut self, db: &Db) -> Result<(), LoadError> {
        let wanted = [
            ("operationId", true),
            ("globalPid", true),
            ("correlationId", true),
        ];
        db.each_row(self, "NCCL_GPU_OPERATIONS", &wanted, "", None, |s, r| {
            if let (Some(op), Some(g), Some(c)) = (int(r, 0)?, int(r, 1)?, int(r, 2)?) {
                let process = s.process(decode(g).pid);
                let o = &mut s.p.nccl_ops;
                o.process.push(process);
                o.correlation.push(c as u32);
                o.operation.push(op as u64);
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_export_too_large_for_the_memory_limit_is_refused_with_both_figures() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/megatron_tp8.sqlite");
        let source = Source::File(path.clone());
        let limit = |limit| memory::Limit {
            source: "ulimit -v".to_string(),
            limit,
            used: 1 << 20,
            address_space: false,
        };
        let plan = ReadPlan::default();
        let Err(err) = load_file_within(&source, 0, &mut |_, _, _| {}, &[limit(2 << 20)], &plan)
        else {
            panic!("not refused");
        };
        assert_eq!(err.path, path.display().to_string());
        assert!(
            err.problem
                .starts_with("too large for this process's memory limit: its "),
            "{err}"
        );
        assert!(
            err.problem
                .contains("ulimit -v leaves 1.0 MiB (2.0 MiB limit, 1.0 MiB in use)"),
            "{err}"
        );
        let p = load_file_within(&source, 0, &mut |_, _, _| {}, &[limit(1 << 30)], &plan)
            .expect("fits");
        assert!(!p.gpu.is_empty());
    }

    #[test]
    fn events_at_the_boot_reading_are_on_the_boot_clock_without_a_window() {
        let boot = 3_600_000_000_000; // booted an hour before the session
        let clock = |system_clock_ns, window| SessionClock {
            utc_epoch_ns: Some(1_780_000_000_000_000_000),
            system_clock_ns,
            window,
        };
        let at = |lo: i64| Some((lo, lo + 5_000_000_000));
        assert_eq!(
            clock(Some(boot), None).timebase(at(boot + 2_000_000_000)),
            Timebase::BootClock
        );
        // from the session start: near 0, far below the boot reading
        assert_eq!(
            clock(Some(boot), None).timebase(at(2_000_000_000)),
            Timebase::SessionRelative
        );
        // a host booted 30 s before: not decisive
        assert_eq!(
            clock(Some(30_000_000_000), None).timebase(at(31_000_000_000)),
            Timebase::SessionRelative
        );
        assert_eq!(
            clock(None, None).timebase(at(boot)),
            Timebase::SessionRelative
        );
    }

    #[test]
    fn a_boot_reading_under_a_minute_is_ambiguous_unless_the_data_settles_it() {
        // booted 43 s before the session; events from 44 s for 52 s
        let boot = 43_000_000_000;
        let s = 1_000_000_000;
        let events = Some((44 * s, 96 * s));
        let clock = |system_clock_ns, window| SessionClock {
            utc_epoch_ns: Some(1_780_000_000_000_000_000),
            system_clock_ns: Some(system_clock_ns),
            window,
        };
        let read = |c: SessionClock| (c.timebase(events), c.alternative(events));
        let (boot_clock, session) = (Timebase::BootClock, Timebase::SessionRelative);
        // no window: read from the session start, or on the boot clock
        assert_eq!(read(clock(boot, None)), (session, Some(boot_clock)));
        // a window holding the events only as recorded: the boot clock
        let recorded = Some((boot, 97 * s));
        assert_eq!(read(clock(boot, recorded)), (boot_clock, None));
        // ... only shifted back by the boot reading: the session start
        let shifted = Some((boot + 40 * s, boot + 100 * s));
        assert_eq!(read(clock(boot, shifted)), (session, None));
        // holding them either way, or neither: not settled
        let both = Some((boot, boot + 100 * s));
        assert_eq!(read(clock(boot, both)), (boot_clock, Some(session)));
        let neither = Some((boot, 90 * s));
        assert_eq!(read(clock(boot, neither)), (session, Some(boot_clock)));
        // a reading of a minute or more decides; events far below it are
        // session-relative; a reading of 0 is the same either way
        let late = Some((62 * s, 110 * s));
        assert_eq!(clock(61 * s, None).timebase(late), boot_clock);
        assert_eq!(clock(61 * s, None).alternative(late), None);
        let early = clock(boot, None);
        assert_eq!(early.alternative(Some((2 * s, 12 * s))), None);
        assert_eq!(clock(0, None).alternative(Some((0, 12 * s))), None);
        // UTC timestamps are UTC
        let utc = Some((1_780_000_000_000_000_000, 1_780_000_001_000_000_000));
        assert_eq!(early.alternative(utc), None);
    }
}

/// What `TARGET_INFO_SESSION_START_TIME` and `ANALYSIS_DETAILS` say.
#[derive(Debug, Default, Clone, Copy)]
struct SessionClock {
    utc_epoch_ns: Option<i64>,
    system_clock_ns: Option<i64>,
    /// `ANALYSIS_DETAILS` [startTime, stopTime].
    window: Option<(i64, i64)>,
}

/// The capture's first and last instants: the `ANALYSIS_DETAILS` window
/// widened to the events' bounds. A window disjoint from the events is on
/// another clock (seen in real exports) and not used; a reversed one is
/// damaged and not used either.
fn capture_bounds(
    window: Option<(i64, i64)>,
    events: Option<(i64, i64)>,
) -> (Option<i64>, Option<i64>) {
    let window = window.filter(|&(a, b)| a <= b);
    match (window, events) {
        (Some((a, b)), Some((lo, hi))) if a <= hi && lo <= b => (Some(a.min(lo)), Some(b.max(hi))),
        (_, Some((lo, hi))) => (Some(lo), Some(hi)),
        (Some((a, b)), None) => (Some(a), Some(b)),
        (None, None) => (None, None),
    }
}

/// Timestamps at or above this are UTC ns since the epoch (2001-09-09).
const UTC_EPOCH_MIN_NS: i64 = 1_000_000_000_000_000_000;

impl SessionClock {
    /// The `ANALYSIS_DETAILS` window on the events' clock. A
    /// session-relative export can give it on the boot clock, starting at
    /// `systemClockNs` (the boot-clock reading at the session start, which
    /// is timestamp 0): when the window as recorded misses the events and
    /// shifted back by `systemClockNs` it overlaps them, it is shifted.
    /// Otherwise it stays as recorded (and [`capture_bounds`] drops it if
    /// it misses the events).
    fn window_on(&self, events: Option<(i64, i64)>) -> Option<(i64, i64)> {
        let (a, b) = self.window?;
        let overlaps = |(a, b): (i64, i64)| events.is_some_and(|(lo, hi)| a <= hi && lo <= b);
        match self.system_clock_ns {
            Some(boot)
                if !overlaps((a, b))
                    && overlaps((a.saturating_sub(boot), b.saturating_sub(boot))) =>
            {
                Some((a.saturating_sub(boot), b.saturating_sub(boot)))
            }
            _ => Some((a, b)),
        }
    }

    /// The timebase of a file whose events span `span`: only its data
    /// decides (a 2024.5 or 2026.1 export can record `systemClockNs` and
    /// still count from the session start).
    fn timebase(&self, span: Option<(i64, i64)>) -> Timebase {
        let Some((lo, hi)) = span else {
            return Timebase::SessionRelative;
        };
        if lo >= UTC_EPOCH_MIN_NS {
            return Timebase::UtcEpoch;
        }
        match (self.system_clock_ns, self.window) {
            (Some(_), Some((start, stop))) if start <= lo && hi <= stop => Timebase::BootClock,
            // Without a window, events starting at the boot-clock reading
            // of the session start (not near 0) are on the boot clock.
            (Some(boot), None) if boot >= BOOT_MIN_NS && on_boot_clock(lo, boot) => {
                Timebase::BootClock
            }
            _ => Timebase::SessionRelative,
        }
    }

    /// The other reading of a file whose data cannot decide its timebase:
    /// a boot reading under [`BOOT_MIN_NS`] that the events could start
    /// at (so they fit the boot clock as well as the session start), and
    /// no window that holds them on one reading only. [`Self::timebase`]
    /// is then the default; the clock, which sees the other files, chooses.
    fn alternative(&self, span: Option<(i64, i64)>) -> Option<Timebase> {
        let (lo, hi) = span?;
        // 0 reads the same either way
        let boot = self.system_clock_ns.filter(|&b| b > 0 && b < BOOT_MIN_NS)?;
        // a boot clock never reads below 0
        if !(0..UTC_EPOCH_MIN_NS).contains(&lo) || !on_boot_clock(lo, boot) {
            return None;
        }
        if let Some((a, b)) = self.window {
            let holds = |a: i64, b: i64| a <= lo && hi <= b;
            if holds(a, b) != holds(a.saturating_sub(boot), b.saturating_sub(boot)) {
                return None;
            }
        }
        Some(match self.timebase(span) {
            Timebase::BootClock => Timebase::SessionRelative,
            _ => Timebase::BootClock,
        })
    }
}

/// A `systemClockNs` below this could be a session-relative time as well
/// (a host booted a minute before the capture): not decisive.
const BOOT_MIN_NS: i64 = 60_000_000_000;

/// The first event no more than 10 s before the session start's boot-clock
/// reading `boot` and no more than a day after it: on the boot clock
/// (session-relative events start near 0, far below a boot reading).
fn on_boot_clock(first_event: i64, boot: i64) -> bool {
    const BEFORE: i64 = 10_000_000_000;
    const AFTER: i64 = 86_400_000_000_000;
    first_event >= boot.saturating_sub(BEFORE) && first_event <= boot.saturating_add(AFTER)
}
