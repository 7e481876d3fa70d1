//! The columnar cache: a loaded single-file profile written once as raw
//! column arrays plus a small JSON directory, then memory-mapped on the next
//! open so a reopen costs a checksum pass instead of an SQLite scan.
//!
//! Entries live in the cache directory (never beside the input), named by a
//! hash of the input's canonical path, size, mtime and the format version;
//! the same key is stored inside and checked. A stale, truncated or
//! corrupted entry is reported and rebuilt, never trusted.

use super::column::{Col, Pod};
use super::intern::Interner;
use super::model::*;
use memmap2::Mmap;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use xxhash_rust::xxh3::{Xxh3, xxh3_64};

/// Bump when the layout or the model changes.
pub const FORMAT_VERSION: u32 = 1;
const MAGIC: &[u8; 8] = b"RLCACHE\0";
const HEADER: usize = 48;
const EXT: &str = "rlcache";

/// Where caches go and how large the directory may grow.
#[derive(Debug, Clone)]
pub struct CacheDir {
    pub dir: PathBuf,
    pub cap_bytes: u64,
}

/// The default cache cap: 20 GB.
pub const DEFAULT_CAP: u64 = 20_000_000_000;

impl CacheDir {
    /// `$XDG_CACHE_HOME/rankline`, else `~/.cache/rankline`.
    pub fn default_dir() -> Option<PathBuf> {
        let xdg = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        let base =
            xdg.or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
        Some(base.join("rankline"))
    }
}

/// What identifies the input a cache entry was built from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Key {
    path: String,
    size: u64,
    mtime_ns: u128,
    version: u32,
}

impl Key {
    fn of(input: &Path) -> Result<Key, String> {
        let path = std::fs::canonicalize(input).map_err(|e| e.to_string())?;
        let meta = std::fs::metadata(&path).map_err(|e| e.to_string())?;
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        Ok(Key {
            path: path.display().to_string(),
            size: meta.len(),
            mtime_ns,
            version: FORMAT_VERSION,
        })
    }

    fn file_name(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        format!("{:016x}.{EXT}", xxh3_64(&json))
    }
}

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
    nccl_api: NcclApiRanges,
    nccl_ops: NcclOperations,
    columns: Vec<ColumnAt>,
}

/// The large columns in file order, as (name, bytes).
fn columns(p: &Profile) -> Vec<(&'static str, &[u8])> {
    let (g, r, n) = (&p.gpu, &p.runtime, &p.nvtx);
    vec![
        ("gpu.start", g.start.as_bytes()),
        ("gpu.end", g.end.as_bytes()),
        ("gpu.lane", g.lane.as_bytes()),
        ("gpu.kind", g.kind.as_bytes()),
        ("gpu.name", g.name.as_bytes()),
        ("gpu.long_name", g.long_name.as_bytes()),
        ("gpu.correlation", g.correlation.as_bytes()),
        ("gpu.bytes", g.bytes.as_bytes()),
        ("gpu.graph_node", g.graph_node.as_bytes()),
        ("gpu.launch", g.launch.as_bytes()),
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
    ]
}

fn align(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// The entry for `input` in `dir`.
pub fn entry_path(dir: &Path, input: &Path) -> Result<PathBuf, String> {
    Ok(dir.join(Key::of(input)?.file_name()))
}

/// Writes the cache entry of a finalized single-file profile of `input`;
/// returns its path.
pub fn write(dir: &Path, input: &Path, p: &Profile) -> Result<PathBuf, String> {
    let key = Key::of(input)?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
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
    let mut header = Vec::with_capacity(HEADER);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    header.extend_from_slice(&0u32.to_le_bytes());
    header.extend_from_slice(&(meta.len() as u64).to_le_bytes());
    header.extend_from_slice(&(data_len as u64).to_le_bytes());
    header.extend_from_slice(&xxh3_64(&meta).to_le_bytes());
    header.extend_from_slice(&hasher.digest().to_le_bytes());
    let final_path = dir.join(key.file_name());
    let tmp = dir.join(format!(".{}.{}.tmp", key.file_name(), std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let mut f = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp)?);
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
        f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, &final_path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("cannot write {}: {e}", final_path.display()));
    }
    Ok(final_path)
}

/// What reading an entry found.
pub enum Lookup {
    Hit(Box<Profile>),
    Missing,
    /// Present but unusable: why (stale, truncated, corrupted…).
    Rejected(String),
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]))
}

/// Reads the entry for `input`, verifying key, size and checksums.
pub fn read(dir: &Path, input: &Path) -> Lookup {
    let Ok(key) = Key::of(input) else {
        return Lookup::Missing;
    };
    let path = dir.join(key.file_name());
    let Ok(file) = std::fs::File::open(&path) else {
        return Lookup::Missing;
    };
    // SAFETY: cache files are only ever replaced by rename, never written in
    // place; a concurrent deletion leaves the mapping valid.
    let map = match unsafe { Mmap::map(&file) } {
        Ok(m) => Arc::new(m),
        Err(e) => return Lookup::Rejected(format!("cannot map: {e}")),
    };
    match decode(&map, &key) {
        Ok(p) => {
            // Most recently used entries survive eviction.
            let _ = file.set_modified(std::time::SystemTime::now());
            Lookup::Hit(Box::new(p))
        }
        Err(why) => Lookup::Rejected(why),
    }
}

fn decode(map: &Arc<Mmap>, key: &Key) -> Result<Profile, String> {
    let b: &[u8] = map;
    if b.len() < HEADER || &b[..8] != MAGIC {
        return Err("not a rankline cache file".into());
    }
    let version = u32::from_le_bytes(b[8..12].try_into().unwrap_or([0; 4]));
    if version != FORMAT_VERSION {
        return Err(format!(
            "format version {version}, expected {FORMAT_VERSION}"
        ));
    }
    let meta_len = u64_at(b, 16) as usize;
    let data_len = u64_at(b, 24) as usize;
    let data_start = align(HEADER.saturating_add(meta_len), 64);
    if data_start.checked_add(data_len) != Some(b.len()) {
        return Err("truncated or extended".into());
    }
    let meta = &b[HEADER..HEADER + meta_len];
    if xxh3_64(meta) != u64_at(b, 32) {
        return Err("directory checksum mismatch (corrupted)".into());
    }
    if xxh3_64(&b[data_start..]) != u64_at(b, 40) {
        return Err("data checksum mismatch (corrupted)".into());
    }
    let d: Directory =
        serde_json::from_slice(meta).map_err(|e| format!("unreadable directory: {e}"))?;
    if d.key != *key {
        return Err("built from another version of the input (stale)".into());
    }
    let col = |name: &str| -> Result<&ColumnAt, String> {
        d.columns
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| format!("column {name} missing"))
    };
    fn get<T: Pod>(map: &Arc<Mmap>, data_start: usize, c: &ColumnAt) -> Result<Col<T>, String> {
        let size = std::mem::size_of::<T>();
        if !c.len.is_multiple_of(size) {
            return Err(format!("column {} has a partial value", c.name));
        }
        Col::from_map(map, data_start + c.offset, c.len / size)
            .ok_or_else(|| format!("column {} is invalid", c.name))
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
        kind: load!("gpu.kind"),
        name: load!("gpu.name"),
        long_name: load!("gpu.long_name"),
        correlation: load!("gpu.correlation"),
        bytes: load!("gpu.bytes"),
        graph_node: load!("gpu.graph_node"),
        launch: load!("gpu.launch"),
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
    let mut strings = Interner::default();
    for (i, s) in d.strings.iter().enumerate() {
        if strings.intern(s) as usize != i {
            return Err("string table out of order".into());
        }
    }
    let p = Profile {
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
        nccl_api: d.nccl_api,
        nccl_ops: d.nccl_ops,
        runtime_by_thread: d.runtime_by_thread,
        nvtx_by_thread: d.nvtx_by_thread,
    };
    consistent(&p)?;
    Ok(p)
}

/// Ids that index other tables must be in range: a cache that passes its
/// checksum but was written by a buggy build must still not crash us.
fn consistent(p: &Profile) -> Result<(), String> {
    let (g, r, n) = (&p.gpu, &p.runtime, &p.nvtx);
    let same = |lens: &[usize]| lens.windows(2).all(|w| w[0] == w[1]);
    let ok = same(&[
        g.start.len(),
        g.end.len(),
        g.lane.len(),
        g.kind.len(),
        g.name.len(),
        g.long_name.len(),
        g.correlation.len(),
        g.bytes.len(),
        g.graph_node.len(),
        g.launch.len(),
    ]) && same(&[
        r.start.len(),
        r.end.len(),
        r.thread.len(),
        r.name.len(),
        r.correlation.len(),
        r.class.len(),
        r.is_launch.len(),
    ]) && same(&[
        n.start.len(),
        n.end.len(),
        n.thread.len(),
        n.name.len(),
        n.kind.len(),
        n.domain.len(),
        n.depth.len(),
    ]) && g.lane.iter().all(|&l| (l as usize) < p.lanes.len())
        && g.launch
            .iter()
            .all(|&c| c == NONE || (c as usize) < r.len())
        && r.thread
            .iter()
            .chain(n.thread.iter())
            .all(|&t| (t as usize) < p.threads.len())
        && g.name
            .iter()
            .chain(g.long_name.iter())
            .chain(r.name.iter())
            .chain(n.name.iter())
            .chain(n.domain.iter())
            .all(|&s| (s as usize) < p.strings.len())
        && p.lanes.iter().all(|l| {
            l.rows.end <= g.len()
                && (l.device as usize) < p.devices.len()
                && (l.process as usize) < p.processes.len()
        })
        && p.runtime_by_thread.len() == p.threads.len()
        && p.nvtx_by_thread.len() == p.threads.len()
        && p.runtime_by_thread.iter().all(|x| x.end <= r.len())
        && p.nvtx_by_thread.iter().all(|x| x.end <= n.len())
        && p.threads
            .iter()
            .all(|t| (t.process as usize) < p.processes.len());
    if ok {
        Ok(())
    } else {
        Err("inconsistent ids (corrupted)".into())
    }
}

/// Temporary files of writes that never finished (the program was quit
/// meanwhile) are removed once clearly abandoned.
fn remove_abandoned(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for e in entries.filter_map(Result::ok) {
        let name = e.file_name();
        let name = name.to_string_lossy();
        let abandoned = name.starts_with('.')
            && name.ends_with(".tmp")
            && e.metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t < old);
        if abandoned {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Deletes the least recently used entries until the directory fits `cap`
/// bytes; `keep` is never deleted.
pub fn evict(dir: &Path, cap: u64, keep: &Path) {
    remove_abandoned(dir);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == EXT))
        .filter_map(|e| {
            let m = e.metadata().ok()?;
            Some((m.modified().ok()?, m.len(), e.path()))
        })
        .collect();
    let mut total: u64 = files.iter().map(|f| f.1).sum();
    files.sort();
    for (_, len, path) in files {
        if total <= cap {
            break;
        }
        if path != keep && std::fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
}
