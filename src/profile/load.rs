//! Reading one export file into a single-file [`Profile`] (rows unsorted;
//! [`super::finalize`] sorts and links them).

use super::ids::decode;
use super::intern::Sym;
use super::model::*;
use super::names::{is_launch_api, memcpy_name, strip_api_version};
use super::open::{LoadError, Schema, open_embedded, open_readonly};
use super::rows::{StringIds, int, text};
use rusqlite::Connection;
use std::collections::HashMap;
use std::path::Path;

/// A loading stage, reported to a progress callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Opening,
    Strings,
    Targets,
    Kernels,
    Memcpy,
    Memset,
    Runtime,
    Nvtx,
    Linking,
}

impl Stage {
    pub fn label(self) -> &'static str {
        match self {
            Stage::Opening => "opening",
            Stage::Strings => "reading strings",
            Stage::Targets => "reading processes and GPUs",
            Stage::Kernels => "reading kernels",
            Stage::Memcpy => "reading memcpy",
            Stage::Memset => "reading memset",
            Stage::Runtime => "reading runtime calls",
            Stage::Nvtx => "reading NVTX",
            Stage::Linking => "sorting and linking",
        }
    }
}

/// Progress report: file index, stage, rows read so far in that stage.
pub type ProgressFn<'a> = dyn FnMut(usize, Stage, usize) + 'a;

const PROGRESS_EVERY: usize = 1 << 16;

/// The open export.
struct Db<'a> {
    conn: Connection,
    schema: Schema,
    path: &'a Path,
}

/// What has been read so far, and the per-file id maps.
struct State<'p> {
    file_index: usize,
    ids: StringIds,
    p: Profile,
    procs: HashMap<u32, ProcId>,
    threads: HashMap<(ProcId, u32), ThreadId>,
    devices: HashMap<u32, DevId>,
    lanes: HashMap<(ProcId, u32, u32), LaneId>,
    progress: &'p mut ProgressFn<'p>,
}

/// Where an export comes from.
#[derive(Debug, Clone)]
pub enum Source {
    File(std::path::PathBuf),
    /// A database compiled into the binary (the demo profile).
    Embedded {
        name: &'static str,
        bytes: &'static [u8],
    },
}

impl Source {
    pub fn path(&self) -> &Path {
        match self {
            Source::File(p) => p,
            Source::Embedded { name, .. } => Path::new(name),
        }
    }
}

/// Loads one export. `file_index` only labels progress reports.
pub fn load_file(
    source: &Source,
    file_index: usize,
    progress: &mut ProgressFn<'_>,
) -> Result<Profile, LoadError> {
    progress(file_index, Stage::Opening, 0);
    let path = source.path();
    let conn = match source {
        Source::File(p) => open_readonly(p)?,
        Source::Embedded { bytes, .. } => open_embedded(path, bytes)?,
    };
    let schema = Schema::read(&conn, path)?;
    if !schema.is_nsys_export() {
        return Err(LoadError::new(
            path,
            "an SQLite database, but not an Nsight Systems export (no StringIds, metadata or CUPTI tables)",
        ));
    }
    let db = Db { conn, schema, path };
    let mut st = State {
        file_index,
        ids: StringIds::new(HashMap::new()),
        p: Profile::default(),
        procs: HashMap::new(),
        threads: HashMap::new(),
        devices: HashMap::new(),
        lanes: HashMap::new(),
        progress,
    };
    st.run(&db)?;
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
        stage: Option<Stage>,
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
                    && n.is_multiple_of(PROGRESS_EVERY)
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
    fn run(&mut self, db: &Db) -> Result<(), LoadError> {
        let (nsys_version, schema_version) = self.read_versions(db)?;
        let host = self
            .read_hostname(db)?
            .unwrap_or_else(|| db.path.display().to_string());
        self.p.hosts.push(host.clone());
        self.p.files.push(FileInfo {
            path: db.path.to_path_buf(),
            nsys_version,
            schema_version,
            host,
            tables: db.schema.table_names(),
        });
        (self.progress)(self.file_index, Stage::Strings, 0);
        self.read_string_ids(db)?;
        (self.progress)(self.file_index, Stage::Targets, 0);
        self.read_processes(db)?;
        self.read_threads(db)?;
        self.read_gpus(db)?;
        self.read_contexts(db)?;
        self.read_gpu_activity(db, GpuKind::Kernel)?;
        self.read_gpu_activity(db, GpuKind::Memcpy)?;
        self.read_gpu_activity(db, GpuKind::Memset)?;
        self.read_runtime(db)?;
        self.read_nvtx(db)?;
        self.read_nccl_operations(db)?;
        Ok(())
    }

    fn read_versions(&mut self, db: &Db) -> Result<(Option<String>, Option<String>), LoadError> {
        let mut nsys = None;
        let mut schema = None;
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
                        _ => {}
                    }
                    Ok(())
                },
            )?;
            if nsys.is_some() || schema.is_some() {
                break;
            }
        }
        Ok((nsys, schema))
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
        let mut map = HashMap::new();
        db.each_row(
            self,
            "StringIds",
            &[("id", true), ("value", true)],
            "",
            Some(Stage::Strings),
            |s, r| {
                if let (Some(id), Some(v)) = (int(r, 0)?, text(r, 1)?) {
                    map.insert(id, s.p.strings.intern(&v));
                }
                Ok(())
            },
        )?;
        self.ids = StringIds::new(map);
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
            &[("id", true), ("name", false)],
            "",
            None,
            |s, r| {
                let Some(id) = int(r, 0)? else { return Ok(()) };
                let d = s.device(id as u32);
                let dev = &mut s.p.devices[d as usize];
                dev.listed = true;
                dev.name = text(r, 1)?.filter(|n| !n.is_empty()).or(dev.name.take());
                Ok(())
            },
        )
    }

    fn add_context(&mut self, pid: u32, context: u32, device: u32) {
        let process = self.process(pid);
        let device = self.device(device);
        self.p.contexts.push(Context {
            process,
            context,
            device,
        });
    }

    fn read_contexts(&mut self, db: &Db) -> Result<(), LoadError> {
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
                        s.add_context(pid as u32, ctx as u32, dev as u32);
                    }
                    Ok(())
                },
            )?;
        }
        // TARGET_INFO_CUDA_DEVICE says which devices a process opened, without
        // a context id. gpuId is nsys's device id, the one activity rows use.
        db.each_row(
            self,
            "TARGET_INFO_CUDA_DEVICE",
            &[("pid", true), ("gpuId", false), ("cudaId", true)],
            "",
            None,
            |s, r| {
                if let (Some(pid), Some(dev)) = (int(r, 0)?, int(r, 1)?.or(int(r, 2)?)) {
                    s.add_context(pid as u32, NONE, dev as u32);
                }
                Ok(())
            },
        )
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

    fn read_gpu_activity(&mut self, db: &Db, kind: GpuKind) -> Result<(), LoadError> {
        let (table, stage, name_cols): (&str, Stage, [(&str, bool); 2]) = match kind {
            GpuKind::Kernel => (
                "CUPTI_ACTIVITY_KIND_KERNEL",
                Stage::Kernels,
                [("shortName", true), ("demangledName", false)],
            ),
            GpuKind::Memcpy => (
                "CUPTI_ACTIVITY_KIND_MEMCPY",
                Stage::Memcpy,
                [("copyKind", false), ("bytes", false)],
            ),
            GpuKind::Memset => (
                "CUPTI_ACTIVITY_KIND_MEMSET",
                Stage::Memset,
                [("bytes", false), ("value", false)],
            ),
        };
        let wanted = [
            ("start", true),
            ("end", true),
            ("deviceId", true),
            ("contextId", false),
            ("streamId", true),
            ("correlationId", false),
            ("globalPid", false),
            ("graphNodeId", false),
            name_cols[0],
            name_cols[1],
        ];
        let memset_name = self.p.strings.intern("Memset");
        // The process of a row without globalPid: the one owning its context.
        let ctx_owner: HashMap<u32, u32> = self
            .p
            .contexts
            .iter()
            .map(|c| (c.context, self.p.processes[c.process as usize].pid))
            .collect();
        db.each_row(self, table, &wanted, "", Some(stage), |s, r| {
            let (Some(start), Some(end), Some(dev), Some(stream)) =
                (int(r, 0)?, int(r, 1)?, int(r, 2)?, int(r, 4)?)
            else {
                return Ok(());
            };
            let context = int(r, 3)?.map_or(NONE, |c| c as u32);
            let pid = match int(r, 6)? {
                Some(g) => decode(g).pid,
                None => ctx_owner.get(&context).copied().unwrap_or(0),
            };
            let process = s.process(pid);
            let device = s.device(dev as u32);
            let lane = s.lane(process, context, stream as u32, device);
            let (name, long_name, bytes) = match kind {
                GpuKind::Kernel => {
                    let short = s.ids.name(r, 8, &mut s.p.strings)?;
                    let long = s.ids.name(r, 9, &mut s.p.strings)?;
                    let short = short
                        .or(long)
                        .unwrap_or_else(|| s.p.strings.intern("<unnamed kernel>"));
                    (short, long.unwrap_or(short), 0)
                }
                GpuKind::Memcpy => {
                    let n = s.p.strings.intern(memcpy_name(int(r, 8)?));
                    (n, n, int(r, 9)?.unwrap_or(0).max(0) as u64)
                }
                GpuKind::Memset => (
                    memset_name,
                    memset_name,
                    int(r, 8)?.unwrap_or(0).max(0) as u64,
                ),
            };
            let g = &mut s.p.gpu;
            g.start.push(start);
            g.end.push(end.max(start));
            g.lane.push(lane);
            g.kind.push(kind);
            g.name.push(name);
            g.long_name.push(long_name);
            g.correlation.push(int(r, 5)?.map_or(0, |c| c as u32));
            g.bytes.push(bytes);
            g.graph_node.push(int(r, 7)?.map_or(NO_GRAPH, |n| n as u64));
            g.launch.push(NONE);
            Ok(())
        })
    }

    fn read_runtime(&mut self, db: &Db) -> Result<(), LoadError> {
        let wanted = [
            ("start", true),
            ("end", true),
            ("eventClass", false),
            ("globalTid", true),
            ("correlationId", false),
            ("nameId", true),
        ];
        // Raw StringIds id → (display name, launches work).
        let mut names: HashMap<i64, (Sym, bool)> = HashMap::new();
        db.each_row(
            self,
            "CUPTI_ACTIVITY_KIND_RUNTIME",
            &wanted,
            "",
            Some(Stage::Runtime),
            |s, r| {
                let (Some(start), Some(end), Some(g)) = (int(r, 0)?, int(r, 1)?, int(r, 3)?) else {
                    return Ok(());
                };
                let name_id = int(r, 5)?.unwrap_or(-1);
                let (name, launch) = *names.entry(name_id).or_insert_with(|| {
                    let raw = s
                        .ids
                        .get(name_id)
                        .map(|n| s.p.strings.get(n).to_string())
                        .unwrap_or_default();
                    let shown = strip_api_version(&raw);
                    (s.p.strings.intern(shown), is_launch_api(shown))
                });
                let thread = s.thread(g);
                let rt = &mut s.p.runtime;
                rt.start.push(start);
                rt.end.push(end.max(start));
                rt.thread.push(thread);
                rt.name.push(name);
                rt.correlation.push(int(r, 4)?.map_or(0, |c| c as u32));
                rt.class.push(if int(r, 2)? == Some(1) {
                    ApiClass::Driver
                } else {
                    ApiClass::Runtime
                });
                rt.is_launch.push(launch);
                Ok(())
            },
        )
    }

    fn read_nvtx(&mut self, db: &Db) -> Result<(), LoadError> {
        let wanted = [
            ("start", true),
            ("end", false),
            ("eventType", true),
            ("text", false),
            ("globalTid", false),
            ("textId", false),
            ("domainId", false),
            ("binaryData", false),
        ];
        let mut raw_domain: Vec<(ProcId, i64)> = Vec::new();
        let mut domain_names: HashMap<(ProcId, i64), Sym> = HashMap::new();
        db.each_row(
            self,
            "NVTX_EVENTS",
            &wanted,
            "WHERE eventType IN (34, 59, 60, 75)",
            Some(Stage::Nvtx),
            |s, r| {
                let (Some(start), Some(event_type)) = (int(r, 0)?, int(r, 2)?) else {
                    return Ok(());
                };
                let Some(g) = int(r, 4)? else { return Ok(()) };
                let thread = s.thread(g);
                let process = s.p.threads[thread as usize].process;
                let name = match text(r, 3)? {
                    Some(t) => Some(s.p.strings.intern(&t)),
                    None => s.ids.name(r, 5, &mut s.p.strings)?,
                };
                let domain = int(r, 6)?.unwrap_or(0);
                let kind = match event_type {
                    59 => NvtxKind::PushPop,
                    60 => NvtxKind::StartEnd,
                    34 => NvtxKind::Mark,
                    _ => {
                        if let Some(n) = name {
                            domain_names.insert((process, domain), n);
                        }
                        return Ok(());
                    }
                };
                let end = match kind {
                    NvtxKind::Mark => start,
                    _ => int(r, 1)?.unwrap_or(start).max(start),
                };
                if kind != NvtxKind::Mark
                    && let Some(comm) = comm_id(r.get_ref(7)?)
                    && name.is_some_and(|n| s.p.strings.get(n).starts_with("nccl"))
                {
                    let a = &mut s.p.nccl_api;
                    a.thread.push(thread);
                    a.start.push(start);
                    a.end.push(end);
                    a.comm.push(comm);
                }
                let n = &mut s.p.nvtx;
                n.start.push(start);
                n.end.push(end);
                n.thread.push(thread);
                n.name.push(name.unwrap_or(0));
                n.kind.push(kind);
                n.domain.push(0);
                n.depth.push(0);
                raw_domain.push((process, domain));
                Ok(())
            },
        )?;
        for (i, key) in raw_domain.into_iter().enumerate() {
            if key.1 != 0 {
                self.p.nvtx.domain[i] = match domain_names.get(&key) {
                    Some(&n) => n,
                    None => self.p.strings.intern(&format!("domain {}", key.1)),
                };
            }
        }
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

/// The communicator id at offset 0 of an NCCL NVTX payload, stored as a
/// blob or as hex text. UNVERIFIED (see [`NcclApiRanges`]).
fn comm_id(v: rusqlite::types::ValueRef) -> Option<u64> {
    use rusqlite::types::ValueRef;
    let bytes: Vec<u8> = match v {
        ValueRef::Blob(b) => b.to_vec(),
        ValueRef::Text(t) => {
            let t = std::str::from_utf8(t).ok()?.trim();
            let t = t.strip_prefix("0x").unwrap_or(t);
            (0..t.len().checked_sub(1)?)
                .step_by(2)
                .map(|i| u8::from_str_radix(t.get(i..i + 2)?, 16).ok())
                .collect::<Option<Vec<u8>>>()?
        }
        _ => return None,
    };
    let first: [u8; 8] = bytes.get(..8)?.try_into().ok()?;
    Some(u64::from_le_bytes(first))
}
