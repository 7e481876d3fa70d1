//! Writes a `Profile` as an nsys-schema SQLite file (real DDL, see ddl.rs).
//! The statements are public: the scale writer (scale.rs) streams rows through the same ones.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{Connection, Transaction, params};

use crate::ddl::TABLES;
use crate::model::{HOST_FIELD, Profile, global_pid, global_tid};

pub const NSYS_VERSION: &str = "2025.5.2.266";
pub const SCHEMA_VERSION: &str = "3.24.0";

pub const KERNEL_SQL: &str = "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, greenContextId, streamId, correlationId, globalPid, demangledName, shortName, mangledName, launchType, cacheConfig, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId, sharedMemoryExecuted, graphNodeId, sharedMemoryLimitConfig, qmdBulkReleaseDone, qmdPreexitDone, qmdLastCtaDone, graphId, clusterX, clusterY, clusterZ, clusterSchedulingPolicy, maxPotentialClusterSize, maxActiveClusters) VALUES (?1, ?2, ?3, ?4, 0, ?5, ?6, ?7, ?8, ?9, ?10, 1, 1, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, 0, ?20, ?21, ?22, NULL, ?23, NULL, NULL, NULL, NULL, ?24, 1, 1, ?25, ?26, ?27)";
pub const MEMCPY_SQL: &str = "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, greenContextId, streamId, correlationId, globalPid, bytes, copyKind, deprecatedSrcId, srcKind, dstKind, copyCount) VALUES (?1, ?2, ?3, ?4, 0, ?5, ?6, ?7, ?8, ?9, NULL, ?10, ?11, 1)";
pub const MEMSET_SQL: &str = "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, greenContextId, streamId, correlationId, globalPid, value, bytes, graphNodeId, memKind) VALUES (?1, ?2, ?3, ?4, 0, ?5, ?6, ?7, 0, ?8, NULL, 2)";
pub const RUNTIME_SQL: &str = "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue, callchainId) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, NULL)";
pub const NVTX_SQL: &str = "INSERT INTO NVTX_EVENTS (start, end, eventType, rangeId, text, globalTid, endGlobalTid, textId, domainId) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";

/// StringIds rows, numbered from 1 in order of first use.
#[derive(Default)]
pub struct Strings {
    ids: HashMap<String, i64>,
    pub rows: Vec<(i64, String)>,
}

impl Strings {
    pub fn id(&mut self, s: &str) -> i64 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.rows.len() as i64 + 1;
        self.ids.insert(s.to_string(), id);
        self.rows.push((id, s.to_string()));
        id
    }
}

/// KERNEL_SQL parameters that follow from the launch shape, in order:
/// ?20 localMemoryTotal, ?22 sharedMemoryExecuted, ?23 sharedMemoryLimitConfig, ?24 graphId,
/// ?25 clusterSchedulingPolicy, ?26 maxPotentialClusterSize, ?27 maxActiveClusters.
pub fn kernel_derived(nccl: bool, static_smem: u32, dynamic_smem: u32) -> [i64; 7] {
    let smem_exec = (static_smem + dynamic_smem).div_ceil(8192) * 8192;
    [
        if nccl { 787_218_432 } else { 0 },
        smem_exec as i64,
        if nccl || dynamic_smem > 49_152 { 1 } else { 0 },
        if nccl { 4 } else { 0 },
        if nccl { 1 } else { 0 },
        if nccl { 8 } else { 0 },
        if nccl { 30 } else { 0 },
    ]
}

/// (srcKind, dstKind) of a copy: HtoD from pinned host memory; DtoH into pageable memory.
pub fn copy_kinds(copy_kind: u32) -> (i64, i64) {
    if copy_kind == 1 { (1, 2) } else { (2, 0) }
}

/// A new export at `path` (any old file is deleted) with `pragmas` applied and every table
/// of ddl.rs created.
pub fn create(path: &Path, pragmas: &str) -> rusqlite::Result<Connection> {
    if path.exists() {
        std::fs::remove_file(path).expect("cannot delete old file");
    }
    let conn = Connection::open(path)?;
    conn.execute_batch(pragmas)?;
    for (_, ddl) in TABLES {
        conn.execute_batch(ddl)?;
    }
    Ok(conn)
}

/// META_DATA_EXPORT, TARGET_INFO_SYSTEM_ENV, PROCESSES, ThreadNames, TARGET_INFO_GPU and the
/// CUDA context, device and stream tables of `p` (its event lists are not read).
pub fn write_targets(tx: &Transaction, p: &Profile, st: &mut Strings) -> rusqlite::Result<()> {
    let mut meta = tx.prepare("INSERT INTO META_DATA_EXPORT (name, value) VALUES (?1, ?2)")?;
    for (k, v) in [
        ("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"),
        ("EXPORT_PRODUCT_VERSION", NSYS_VERSION),
        ("EXPORT_PRODUCT_DATE", "2025.5"),
        ("EXPORT_SCHEMA_VERSION", SCHEMA_VERSION),
        ("EXPORT_SCHEMA_VERSION_MAJOR", "3"),
        ("EXPORT_SCHEMA_VERSION_MINOR", "24"),
        ("EXPORT_SCHEMA_VERSION_MICRO", "0"),
        ("EXPORT_PLATFORM", "linux-server"),
        ("EXPORT_ARCH", "x64"),
    ] {
        meta.execute(params![k, v])?;
    }

    let mut env = tx.prepare(
        "INSERT INTO TARGET_INFO_SYSTEM_ENV (globalVid, devStateName, name, nameEnum, value) VALUES (?1, 'Local (CLI)', ?2, ?3, ?4)",
    )?;
    for (name, e, v) in [
        ("CpuCores", 1, "224"),
        ("CpuSpeedMhz", 2, "3800"),
        ("CpuArchitecture", 3, "x86_64"),
        ("CpuDescription", 13, "Intel(R) Xeon(R) Platinum 8480C"),
        ("HasDiscreteGpu", 203, "1"),
        ("NvDriverVersion", 205, "550.90.07"),
        ("Hostname", 619, p.host.as_str()),
    ] {
        env.execute(params![HOST_FIELD, name, e, v])?;
    }

    let mut proc =
        tx.prepare("INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?1, ?2, ?3)")?;
    let mut thr =
        tx.prepare("INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (?1, 20, ?2)")?;
    for pr in &p.processes {
        proc.execute(params![global_pid(pr.pid), pr.pid, pr.name])?;
        for t in &pr.threads {
            thr.execute(params![st.id(&t.name), global_tid(pr.pid, t.tid)])?;
        }
    }

    let mut gpu = tx.prepare(
        "INSERT INTO TARGET_INFO_GPU VALUES (?1, ?2, ?3, ?4, 1, 52428800, 85520809984, 3352320000000, 1980000000, 132, ?2, ?5, 0, 'GH100', ?6, NULL, NULL, 161, 0, 65536, 4, 65536, 49152, 232448, 233472, 65536, 32, 3, 64, 32, 1024, 1024, 1024, 64, 2147483647, 65535, 65535, 9, 0, 9, 0)",
    )?;
    for g in &p.gpus {
        gpu.execute(params![HOST_FIELD, g.id, g.name, g.bus, g.uuid, g.cuda_id])?;
    }

    let mut ctx = tx.prepare(
        "INSERT INTO TARGET_INFO_CUDA_CONTEXT_INFO VALUES (?1, ?2, 1, ?3, ?2, ?4, 0, 0)",
    )?;
    let mut dev =
        tx.prepare("INSERT INTO TARGET_INFO_CUDA_DEVICE (gpuId, cudaId, pid) VALUES (?1, ?2, ?3)")?;
    let mut stream =
        tx.prepare("INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (?1, ?2, 1, ?3, ?4, ?5, ?6)")?;
    for pr in &p.processes {
        let Some(c) = &pr.context else { continue };
        ctx.execute(params![c.null_stream, c.device, pr.pid, c.context_id])?;
        // the GPU the process sees as CUDA device `c.device` (the same id unless
        // CUDA_VISIBLE_DEVICES renumbered it)
        let gpu_id = p
            .gpus
            .iter()
            .find(|g| g.cuda_id == Some(c.device))
            .map_or(c.device, |g| g.id);
        dev.execute(params![gpu_id, c.device, pr.pid])?;
        for &(s, flag, prio) in &c.streams {
            stream.execute(params![s, c.device, pr.pid, c.context_id, prio, flag])?;
        }
    }
    Ok(())
}

pub fn write_strings(tx: &Transaction, st: &Strings) -> rusqlite::Result<()> {
    let mut sid = tx.prepare("INSERT INTO StringIds (id, value) VALUES (?1, ?2)")?;
    for (id, v) in &st.rows {
        sid.execute(params![id, v])?;
    }
    Ok(())
}

/// Returns (table, rows) counts for the summary printed by the generator.
pub fn write(p: &Profile, path: &Path) -> rusqlite::Result<Vec<(&'static str, usize)>> {
    write_with(p, path, &|_, _| Ok(()))
}

/// Rows written after the event tables, in the same transaction (tables of their own).
pub type Extra<'a> = &'a dyn Fn(&Transaction, &mut Strings) -> rusqlite::Result<()>;

/// `write`, plus what `extra` adds (the clock and capture tables of the multi-file scenarios).
pub fn write_with(
    p: &Profile,
    path: &Path,
    extra: Extra,
) -> rusqlite::Result<Vec<(&'static str, usize)>> {
    let mut conn = create(
        path,
        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA page_size=4096;",
    )?;
    let mut st = Strings::default();
    let tx = conn.transaction()?;
    {
        write_targets(&tx, p, &mut st)?;

        let mut kern = tx.prepare(KERNEL_SQL)?;
        for k in &p.kernels {
            let x = kernel_derived(k.nccl.is_some(), k.static_smem, k.dynamic_smem);
            kern.execute(params![
                k.start,
                k.end,
                k.device,
                k.context_id,
                k.stream,
                k.corr,
                global_pid(k.pid),
                st.id(&k.name.demangled),
                st.id(&k.name.short),
                k.name.mangled.as_deref().map(|m| st.id(m)),
                k.registers,
                k.grid[0],
                k.grid[1],
                k.grid[2],
                k.block[0],
                k.block[1],
                k.block[2],
                k.static_smem,
                k.dynamic_smem,
                x[0],
                k.grid_id,
                x[1],
                x[2],
                x[3],
                x[4],
                x[5],
                x[6],
            ])?;
            // KERNEL_SQL leaves both NULL (the scale writer streams through it unchanged).
            if let Some((node, graph)) = k.graph {
                tx.execute(
                    "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET graphNodeId = ?1, graphId = ?2 WHERE rowid = last_insert_rowid()",
                    params![node, graph],
                )?;
            }
        }

        let mut mc = tx.prepare(MEMCPY_SQL)?;
        for m in &p.memcpys {
            let (src, dst) = copy_kinds(m.copy_kind);
            mc.execute(params![
                m.start,
                m.end,
                m.device,
                m.context_id,
                m.stream,
                m.corr,
                global_pid(m.pid),
                m.bytes,
                m.copy_kind,
                src,
                dst
            ])?;
        }
        let mut ms = tx.prepare(MEMSET_SQL)?;
        for m in &p.memsets {
            ms.execute(params![
                m.start,
                m.end,
                m.device,
                m.context_id,
                m.stream,
                m.corr,
                global_pid(m.pid),
                m.bytes
            ])?;
        }

        let mut rt = tx.prepare(RUNTIME_SQL)?;
        for c in &p.calls {
            rt.execute(params![
                c.start,
                c.end,
                c.class,
                global_tid(c.pid, c.tid),
                c.corr,
                st.id(&c.api)
            ])?;
        }

        let mut nv = tx.prepare(NVTX_SQL)?;
        for e in &p.nvtx {
            let tid = global_tid(e.pid, e.tid);
            let (text, text_id) = if e.registered {
                (None, Some(st.id(&e.text)))
            } else {
                (Some(e.text.as_str()), None)
            };
            let end_tid = (e.kind == crate::model::NvtxKind::StartEnd).then_some(tid);
            nv.execute(params![
                e.start,
                e.end,
                e.kind.event_type(),
                e.range_id,
                text,
                tid,
                end_tid,
                text_id,
                e.domain
            ])?;
        }

        extra(&tx, &mut st)?;
        write_strings(&tx, &st)?;
    }
    tx.commit()?;
    conn.execute_batch("VACUUM;")?;
    drop(conn);

    let mut counts = vec![("StringIds", st.rows.len())];
    counts.extend([
        ("PROCESSES", p.processes.len()),
        (
            "ThreadNames",
            p.processes.iter().map(|x| x.threads.len()).sum(),
        ),
        ("TARGET_INFO_GPU", p.gpus.len()),
        (
            "TARGET_INFO_CUDA_CONTEXT_INFO",
            p.processes.iter().filter(|x| x.context.is_some()).count(),
        ),
        (
            "TARGET_INFO_CUDA_STREAM",
            p.processes
                .iter()
                .filter_map(|x| x.context.as_ref())
                .map(|c| c.streams.len())
                .sum(),
        ),
        ("CUPTI_ACTIVITY_KIND_KERNEL", p.kernels.len()),
        ("CUPTI_ACTIVITY_KIND_MEMCPY", p.memcpys.len()),
        ("CUPTI_ACTIVITY_KIND_MEMSET", p.memsets.len()),
        ("CUPTI_ACTIVITY_KIND_RUNTIME", p.calls.len()),
        ("NVTX_EVENTS", p.nvtx.len()),
    ]);
    Ok(counts)
}
