//! The columnar cache: a loaded single-file profile written once as raw
//! column arrays plus a small JSON directory, then memory-mapped on the next
//! open so a reopen costs a checksum pass instead of an SQLite scan.
//!
//! Entries live in the cache directory (never beside the input), named by a
//! hash of the input's canonical path, size, times, inode and the format
//! version; that key plus a fingerprint of the input's content is stored
//! inside and checked. A stale, truncated, corrupted or inconsistent entry
//! is reported and rebuilt, never trusted. An entry is written once, to a
//! temp file renamed into place, and never modified after: another rankline
//! may have it mapped.

mod analyses;
mod consistent;
mod dir;
pub(crate) mod housekeeping;
mod key;
#[cfg(test)]
mod tests;

pub use analyses::{AnalysesSlot, Sections, Stored};
pub use dir::{CacheDir, DEFAULT_CAP};
pub use housekeeping::{counted_bytes, evict};
pub use key::{FORMAT_VERSION, Key};

use super::column::{Col, Pod};
use super::intern::Interner;
use super::launch_shape::CACHE_NAMES;
use super::mapped::Mapping;
use super::model::*;
use super::test_seams;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use xxhash_rust::xxh3::{Xxh3, xxh3_64};

const MAGIC: &[u8; 8] = b"RLCACHE\0";
const HEADER: usize = 48;

/// Where one column's bytes are.
#[derive(Debug, Serialize, Deserialize)]
struct ColumnAt {
    name: String,
    offset: usize,
    len: usize,
}

/// Everything but the large columns.
#[derive(Serialize, Deserialize)]
struct Directory {
    key: Key,
    files: Vec<FileInfo>,
    hosts: Vec<String>,
    strings: Vec<String>,
    processes: Vec<Process>,
    threads: Vec<Thread>,
    devices: Vec<Device>,
    contexts: Vec<Context>,
    lanes: Vec<Lane>,
    runtime_by_thread: Vec<Range<usize>>,
    nvtx_by_thread: Vec<Range<usize>>,
    osrt_by_thread: Vec<Range<usize>>,
    samples_by_thread: Vec<Range<usize>>,
    sched_by_thread: Vec<Range<usize>>,
    syncs_by_process: Vec<Range<usize>>,
    cuda_events_by_process: Vec<Range<usize>>,
    nccl_api: NcclApiRanges,
    nccl_ops: NcclOperations,
    columns: Vec<ColumnAt>,
}

/// The large columns in file order, as (name, bytes).
pub(crate) fn columns(p: &FileProfile) -> Vec<(&'static str, &[u8])> {
    let (g, r, n, o, c) = (&p.gpu, &p.runtime, &p.nvtx, &p.osrt, &p.samples);
    let (s, y, e) = (&p.sched, &p.syncs, &p.cuda_events);
    let shape = CACHE_NAMES
        .into_iter()
        .zip(g.details.shape.columns())
        .map(|(name, c)| (name, c.as_bytes()));
    let mut out = vec![
        ("gpu.start", g.start.as_bytes()),
        ("gpu.end", g.end.as_bytes()),
        ("gpu.lane", g.lane.as_bytes()),
        ("gpu.name", g.name.as_bytes()),
        ("gpu.correlation", g.correlation.as_bytes()),
        ("gpu.launch", g.launch.as_bytes()),
        ("gpu.detail", g.detail.as_bytes()),
        ("gpu.details.kind", g.details.kind.as_bytes()),
        ("gpu.details.long_name", g.details.long_name.as_bytes()),
        ("gpu.details.bytes", g.details.bytes.as_bytes()),
        ("gpu.details.graph_node", g.details.graph_node.as_bytes()),
        ("gpu.details.copies", g.details.copies.as_bytes()),
        ("gpu.unfinished", g.unfinished.as_bytes()),
        ("runtime.start", r.start.as_bytes()),
        ("runtime.end", r.end.as_bytes()),
        ("runtime.thread", r.thread.as_bytes()),
        ("runtime.name", r.name.as_bytes()),
        ("runtime.correlation", r.correlation.as_bytes()),
        ("runtime.class", r.class.as_bytes()),
        ("runtime.is_launch", r.is_launch.as_bytes()),
        ("nvtx.start", n.start.as_bytes()),
        ("nvtx.end", n.end.as_bytes()),
        ("nvtx.thread", n.thread.as_bytes()),
        ("nvtx.name", n.name.as_bytes()),
        ("nvtx.kind", n.kind.as_bytes()),
        ("nvtx.domain", n.domain.as_bytes()),
        ("nvtx.depth", n.depth.as_bytes()),
        ("osrt.start", o.start.as_bytes()),
        ("osrt.end", o.end.as_bytes()),
        ("osrt.thread", o.thread.as_bytes()),
        ("osrt.name", o.name.as_bytes()),
        ("samples.start", c.start.as_bytes()),
        ("samples.thread", c.thread.as_bytes()),
        ("samples.stack", c.stack.as_bytes()),
        ("samples.stack_at", c.stack_at.as_bytes()),
        ("samples.stack_frames", c.stack_frames.as_bytes()),
        ("sched.start", s.start.as_bytes()),
        ("sched.thread", s.thread.as_bytes()),
        ("sched.cpu", s.cpu.as_bytes()),
        ("sched.sched_in", s.sched_in.as_bytes()),
        ("syncs.start", y.start.as_bytes()),
        ("syncs.end", y.end.as_bytes()),
        ("syncs.process", y.process.as_bytes()),
        ("syncs.device", y.device.as_bytes()),
        ("syncs.stream", y.stream.as_bytes()),
        ("syncs.lane", y.lane.as_bytes()),
        ("syncs.sync_type", y.sync_type.as_bytes()),
        ("syncs.event", y.event.as_bytes()),
        ("syncs.correlation", y.correlation.as_bytes()),
        ("syncs.call", y.call.as_bytes()),
        ("cuda_events.process", e.process.as_bytes()),
        ("cuda_events.device", e.device.as_bytes()),
        ("cuda_events.stream", e.stream.as_bytes()),
        ("cuda_events.lane", e.lane.as_bytes()),
        ("cuda_events.event", e.event.as_bytes()),
        ("cuda_events.correlation", e.correlation.as_bytes()),
        ("cuda_events.call", e.call.as_bytes()),
        ("cuda_events.timestamp", e.timestamp.as_bytes()),
    ];
    out.extend(shape);
    out
}

fn align(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// `align` for lengths read from an entry: `None` on overflow.
fn align_checked(n: usize, to: usize) -> Option<usize> {
    n.div_ceil(to).checked_mul(to)
}

/// The entry for `input` in `dir`.
pub fn entry_path(dir: &Path, input: &Path) -> Result<PathBuf, String> {
    Ok(dir.join(Key::of(input)?.file_name()))
}

/// Writes the cache entry of a finalized single-file profile of `input`;
/// returns its path.
pub fn write(dir: &Path, input: &Path, p: &FileProfile) -> Result<PathBuf, String> {
    store(dir, &Key::of(input)?, p)
}

/// Writes the entry of a finalized single-file profile of the input `key`
/// was taken from (before loading it); returns its path.
pub fn store(dir: &Path, key: &Key, p: &FileProfile) -> Result<PathBuf, String> {
    store_limited(dir, key, p, None)
}

/// A writer that fails with "storage full" after `left` bytes: the seam
/// through which tests give the cache a full disk.
struct Limited<W: Write> {
    inner: W,
    left: Option<u64>,
}

impl<W: Write> Write for Limited<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let Some(left) = self.left else {
            return self.inner.write(buf);
        };
        if left == 0 && !buf.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::StorageFull,
                "no space left on device",
            ));
        }
        let n = self.inner.write(&buf[..buf.len().min(left as usize)])?;
        self.left = Some(left - n as u64);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// [`store`], failing after `room` bytes when given.
fn store_limited(
    dir: &Path,
    key: &Key,
    p: &FileProfile,
    room: Option<u64>,
) -> Result<PathBuf, String> {
    if dir.as_os_str().is_empty() {
        // Never the working directory by accident.
        return Err("no cache directory".into());
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    housekeeping::remove_abandoned(dir);
    let cols = columns(p);
    // Offsets are relative to the data section, each 8-byte aligned.
    let mut at = Vec::with_capacity(cols.len());
    let mut data_len = 0usize;
    for (name, bytes) in &cols {
        data_len = align(data_len, 8);
        at.push(ColumnAt {
            name: name.to_string(),
            offset: data_len,
            len: bytes.len(),
        });
        data_len += bytes.len();
    }
    let directory = Directory {
        key: key.clone(),
        files: p.files.clone(),
        hosts: p.hosts.clone(),
        strings: (0..p.strings.len() as u32)
            .map(|s| p.strings.get(s).to_string())
            .collect(),
        processes: p.processes.clone(),
        threads: p.threads.clone(),
        devices: p.devices.clone(),
        contexts: p.contexts.clone(),
        lanes: p.lanes.clone(),
        runtime_by_thread: p.runtime_by_thread.clone(),
        nvtx_by_thread: p.nvtx_by_thread.clone(),
        osrt_by_thread: p.osrt_by_thread.clone(),
        samples_by_thread: p.samples_by_thread.clone(),
        sched_by_thread: p.sched_by_thread.clone(),
        syncs_by_process: p.syncs_by_process.clone(),
        cuda_events_by_process: p.cuda_events_by_process.clone(),
        nccl_api: p.nccl_api.clone(),
        nccl_ops: p.nccl_ops.clone(),
        columns: at,
    };
    let meta = serde_json::to_vec(&directory).map_err(|e| e.to_string())?;
    let mut hasher = Xxh3::new();
    let mut pos = 0usize;
    let zeros = [0u8; 8];
    for (_, bytes) in &cols {
        let pad = align(pos, 8) - pos;
        hasher.update(&zeros[..pad]);
        hasher.update(bytes);
        pos += pad + bytes.len();
    }
    let header = header(meta.len(), data_len, xxh3_64(&meta), hasher.digest());
    let final_path = dir.join(key.file_name());
    let result = (|| -> std::io::Result<housekeeping::TempFile> {
        let (tmp, file) = housekeeping::create_temp(dir, &key.file_name())?;
        test_seams::hold_write();
        let mut f = std::io::BufWriter::with_capacity(
            1 << 20,
            Limited {
                inner: file,
                left: room,
            },
        );
        f.write_all(&header)?;
        f.write_all(&meta)?;
        let data_start = align(HEADER + meta.len(), 64);
        f.write_all(&vec![0u8; data_start - HEADER - meta.len()])?;
        let mut pos = 0usize;
        for (_, bytes) in &cols {
            let pad = align(pos, 8) - pos;
            f.write_all(&zeros[..pad])?;
            f.write_all(bytes)?;
            pos += pad + bytes.len();
        }
        f.into_inner()
            .map_err(|e| e.into_error())?
            .inner
            .sync_all()?;
        // Replaces any earlier entry as a whole: a reader that has the old
        // one mapped keeps its (unlinked) file.
        std::fs::rename(tmp.path(), &final_path)?;
        Ok(tmp)
    })();
    // The temp (gone once renamed) is removed whichever way it went.
    if let Err(e) = result {
        return Err(format!("{}: cannot write: {e}", final_path.display()));
    }
    Ok(final_path)
}

/// The fixed-size header: magic, version, lengths and checksums.
fn header(meta_len: usize, data_len: usize, meta_sum: u64, data_sum: u64) -> Vec<u8> {
    let mut header = Vec::with_capacity(HEADER);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    header.extend_from_slice(&0u32.to_le_bytes());
    header.extend_from_slice(&(meta_len as u64).to_le_bytes());
    header.extend_from_slice(&(data_len as u64).to_le_bytes());
    header.extend_from_slice(&meta_sum.to_le_bytes());
    header.extend_from_slice(&data_sum.to_le_bytes());
    header
}

/// What reading an entry found.
pub enum Lookup {
    Hit(Box<FileProfile>),
    Missing,
    /// Present but unusable: why (stale, truncated, corrupted…).
    Rejected(String),
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

/// Reads the entry for `input`, verifying key, size and checksums.
pub fn read(dir: &Path, input: &Path) -> Lookup {
    match Key::of(input) {
        Ok(key) => lookup(dir, &key),
        Err(_) => Lookup::Missing,
    }
}

/// Reads the entry for the input `key` was taken from.
pub fn lookup(dir: &Path, key: &Key) -> Lookup {
    if dir.as_os_str().is_empty() {
        return Lookup::Missing;
    }
    housekeeping::remove_abandoned_once(dir);
    let path = dir.join(key.file_name());
    let file = match housekeeping::open_entry(&path) {
        Ok(Some(f)) => f,
        Ok(None) => return Lookup::Missing,
        Err(why) => return Lookup::Rejected(why),
    };
    // Entries are not evicted within an hour of use, and a deletion leaves
    // the mapping valid on local file systems; one cut short under us ends
    // the run with a line (see `mapped`), set aside to be rebuilt.
    let aside = dir.join(housekeeping::temp_name(&key.file_name()));
    let map = match Mapping::open(&file, &path, &aside) {
        Ok(m) => Arc::new(m),
        Err(e) => return Lookup::Rejected(format!("cannot map: {e}")),
    };
    match decode(&map, key) {
        Ok(p) => {
            // The last use, for eviction: metadata only, the bytes stay
            // as they are (the file is open read-only).
            let _ = file.set_modified(std::time::SystemTime::now());
            test_seams::cut_after_open(&path);
            Lookup::Hit(Box::new(p))
        }
        Err(why) => Lookup::Rejected(why),
    }
}

/// The directory and data sections of an entry, by the header's lengths:
/// (directory, data start), or why they do not fit the file.
fn sections(b: &[u8]) -> Result<(&[u8], usize), String> {
    if b.len() < HEADER || &b[..8] != MAGIC {
        return Err("not a rankline cache file".into());
    }
    let version = u32::from_le_bytes([b[8], b[9], b[10], b[11]]);
    if version != FORMAT_VERSION {
        return Err(format!(
            "format version {version}, expected {FORMAT_VERSION}"
        ));
    }
    let truncated = || "truncated or extended".to_string();
    let meta_len = usize::try_from(u64_at(b, 16)).map_err(|_| truncated())?;
    let data_len = usize::try_from(u64_at(b, 24)).map_err(|_| truncated())?;
    let meta_end = HEADER.checked_add(meta_len).ok_or_else(truncated)?;
    let data_start = align_checked(meta_end, 64).ok_or_else(truncated)?;
    if data_start.checked_add(data_len) != Some(b.len()) {
        return Err(truncated());
    }
    Ok((&b[HEADER..meta_end], data_start))
}

/// The entry's profile, once its checksums, key and contents pass. The
/// data checksum runs on a thread of its own while the columns are checked
/// (a reopen's two costs, on two cores); its verdict comes first.
fn decode(map: &Arc<Mapping>, key: &Key) -> Result<FileProfile, String> {
    let b: &[u8] = map;
    let (meta, data_start) = sections(b)?;
    if xxh3_64(meta) != u64_at(b, 32) {
        return Err("directory checksum mismatch (corrupted)".into());
    }
    std::thread::scope(|s| {
        let data = s.spawn(|| xxh3_64(&b[data_start..]) == u64_at(b, 40));
        let checked = decode_checked(map, meta, data_start, key);
        match data.join() {
            Ok(true) => checked,
            _ => Err("data checksum mismatch (corrupted)".into()),
        }
    })
}

fn decode_checked(
    map: &Arc<Mapping>,
    meta: &[u8],
    data_start: usize,
    key: &Key,
) -> Result<FileProfile, String> {
    let d: Directory =
        serde_json::from_slice(meta).map_err(|e| format!("unreadable directory: {e}"))?;
    if let Some(why) = d.key.differs(key) {
        return Err(why.into());
    }
    let col = |name: &str| -> Result<&ColumnAt, String> {
        d.columns
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| format!("column {name} missing"))
    };
    fn get<T: Pod>(map: &Arc<Mapping>, data_start: usize, c: &ColumnAt) -> Result<Col<T>, String> {
        let size = std::mem::size_of::<T>();
        if !c.len.is_multiple_of(size) {
            return Err(format!("column {} has a partial value", c.name));
        }
        let at = data_start
            .checked_add(c.offset)
            .ok_or_else(|| format!("column {} is out of range", c.name))?;
        Col::from_map(map, at, c.len / size).ok_or_else(|| format!("column {} is invalid", c.name))
    }
    macro_rules! load {
        ($name:literal) => {
            get(map, data_start, col($name)?)?
        };
    }
    let gpu = GpuActivity {
        start: load!("gpu.start"),
        end: load!("gpu.end"),
        lane: load!("gpu.lane"),
        name: load!("gpu.name"),
        correlation: load!("gpu.correlation"),
        launch: load!("gpu.launch"),
        detail: load!("gpu.detail"),
        details: GpuDetails {
            kind: load!("gpu.details.kind"),
            long_name: load!("gpu.details.long_name"),
            bytes: load!("gpu.details.bytes"),
            graph_node: load!("gpu.details.graph_node"),
            copies: load!("gpu.details.copies"),
            shape: {
                let mut cols = Vec::with_capacity(CACHE_NAMES.len());
                for name in CACHE_NAMES {
                    cols.push(get(map, data_start, col(name)?)?);
                }
                LaunchShape::from_columns(cols.try_into().map_err(|_| "launch shape".to_string())?)
            },
        },
        unfinished: load!("gpu.unfinished"),
    };
    let runtime = RuntimeCalls {
        start: load!("runtime.start"),
        end: load!("runtime.end"),
        thread: load!("runtime.thread"),
        name: load!("runtime.name"),
        correlation: load!("runtime.correlation"),
        class: load!("runtime.class"),
        is_launch: load!("runtime.is_launch"),
    };
    let nvtx = Nvtx {
        start: load!("nvtx.start"),
        end: load!("nvtx.end"),
        thread: load!("nvtx.thread"),
        name: load!("nvtx.name"),
        kind: load!("nvtx.kind"),
        domain: load!("nvtx.domain"),
        depth: load!("nvtx.depth"),
    };
    let osrt = OsrtCalls {
        start: load!("osrt.start"),
        end: load!("osrt.end"),
        thread: load!("osrt.thread"),
        name: load!("osrt.name"),
    };
    let samples = CpuSamples {
        start: load!("samples.start"),
        thread: load!("samples.thread"),
        stack: load!("samples.stack"),
        stack_at: load!("samples.stack_at"),
        stack_frames: load!("samples.stack_frames"),
    };
    let sched = SchedEvents {
        start: load!("sched.start"),
        thread: load!("sched.thread"),
        cpu: load!("sched.cpu"),
        sched_in: load!("sched.sched_in"),
    };
    let syncs = CudaSyncs {
        start: load!("syncs.start"),
        end: load!("syncs.end"),
        process: load!("syncs.process"),
        device: load!("syncs.device"),
        stream: load!("syncs.stream"),
        lane: load!("syncs.lane"),
        sync_type: load!("syncs.sync_type"),
        event: load!("syncs.event"),
        correlation: load!("syncs.correlation"),
        call: load!("syncs.call"),
    };
    let cuda_events = CudaEvents {
        process: load!("cuda_events.process"),
        device: load!("cuda_events.device"),
        stream: load!("cuda_events.stream"),
        lane: load!("cuda_events.lane"),
        event: load!("cuda_events.event"),
        correlation: load!("cuda_events.correlation"),
        call: load!("cuda_events.call"),
        timestamp: load!("cuda_events.timestamp"),
    };
    let mut strings = Interner::default();
    for (i, s) in d.strings.iter().enumerate() {
        if strings.intern(s) as usize != i {
            return Err("string table out of order".into());
        }
    }
    let p = FileProfile {
        files: d.files,
        hosts: d.hosts,
        strings,
        processes: d.processes,
        threads: d.threads,
        devices: d.devices,
        contexts: d.contexts,
        lanes: d.lanes,
        gpu,
        runtime,
        nvtx,
        osrt,
        samples,
        sched,
        syncs,
        cuda_events,
        nccl_api: d.nccl_api,
        nccl_ops: d.nccl_ops,
        runtime_by_thread: d.runtime_by_thread,
        nvtx_by_thread: d.nvtx_by_thread,
        osrt_by_thread: d.osrt_by_thread,
        samples_by_thread: d.samples_by_thread,
        sched_by_thread: d.sched_by_thread,
        syncs_by_process: d.syncs_by_process,
        cuda_events_by_process: d.cuda_events_by_process,
        cpu_counts: Default::default(),
        span_found: Default::default(),
    };
    consistent::consistent(&p)?;
    Ok(p)
}
