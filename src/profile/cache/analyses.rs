//! Stored analyses: a sibling entry of the model entries in the cache
//! directory, holding the cross-rank analyses of one input set under one
//! set of analysis settings as opaque, checksummed sections (the analysis
//! and UI layers encode them; this layer only keeps them). Its name hashes
//! the model entries' names, the paths as given and the settings; the full
//! key (every input's identity and content fingerprint, the settings) is
//! stored inside and compared, so an entry of another version of an input,
//! of other settings or of another rankline is rejected and replaced.
//! Written once to a temp file renamed into place, like model entries.

use super::dir::CacheDir;
use super::housekeeping;
use super::key::Key;
use crate::profile::mapped::Mapping;
use std::io::Write;
use std::ops::Range;
use std::path::PathBuf;
use xxhash_rust::xxh3::xxh3_64;

const EXT: &str = housekeeping::ANALYSES_EXT;
const MAGIC: &[u8; 8] = b"RLANALYS";
/// Bump when this container's layout or a section's encoding changes (2:
/// the render index keeps block sums only, no per-event sums or
/// categories; 3: NVTX tracks without their events), so an older entry is
/// recomputed as out of date, not as damaged.
const VERSION: u32 = 3;
/// Magic, version, section count, key length, key checksum.
const HEADER: usize = 32;
/// More sections than any writer stores: a count above it is damage.
const MAX_SECTIONS: usize = 8;

/// Where the analyses of one input set under one set of settings go.
#[derive(Debug, Clone)]
pub struct AnalysesSlot {
    cache: CacheDir,
    /// Each input as given, with its identity before it was loaded.
    inputs: Vec<(PathBuf, Key)>,
    /// The full key, stored in the entry and compared on reading.
    key: String,
    name: String,
}

/// What reading stored analyses found.
pub enum Stored {
    Hit(Sections),
    Missing,
    /// Present but unusable: why (stale, truncated, corrupted…).
    Rejected(String),
}

/// The sections of an entry, in the order they were stored.
pub struct Sections {
    map: Mapping,
    ranges: Vec<Range<usize>>,
}

impl Sections {
    /// Section `i`; empty when the entry has fewer.
    pub fn get(&self, i: usize) -> &[u8] {
        self.ranges.get(i).map_or(&[], |r| &self.map[r.clone()])
    }
}

impl AnalysesSlot {
    /// The slot of `inputs` (as given, with their keys taken before they
    /// were loaded) under `settings`, the analysis settings as text.
    pub fn new(cache: &CacheDir, inputs: Vec<(PathBuf, Key)>, settings: &str) -> AnalysesSlot {
        let mut named = format!("{settings}\n");
        let mut key = named.clone();
        for (given, k) in &inputs {
            let given = given.display();
            named.push_str(&format!("{given}\n{}\n", k.file_name()));
            let full = serde_json::to_string(k).unwrap_or_default();
            key.push_str(&format!("{given}\n{full}\n"));
        }
        AnalysesSlot {
            cache: cache.clone(),
            inputs,
            name: format!("{:016x}.{EXT}", xxh3_64(named.as_bytes())),
            key,
        }
    }

    pub fn path(&self) -> PathBuf {
        self.cache.dir.join(&self.name)
    }

    /// Reads the entry, verifying key, lengths and checksums.
    pub fn lookup(&self) -> Stored {
        let path = self.path();
        housekeeping::remove_abandoned_once(&self.cache.dir);
        let file = match housekeeping::open_entry(&path) {
            Ok(Some(f)) => f,
            Ok(None) => return Stored::Missing,
            Err(why) => return Stored::Rejected(why),
        };
        // As model entries: not evicted within an hour of use, and one cut
        // short under us ends the run with a line, set aside.
        let aside = self.cache.dir.join(housekeeping::temp_name(&self.name));
        let map = match Mapping::open(&file, &path, &aside) {
            Ok(m) => m,
            Err(e) => return Stored::Rejected(format!("cannot map: {e}")),
        };
        match sections(&map, &self.key) {
            Ok(ranges) => {
                let _ = file.set_modified(std::time::SystemTime::now());
                Stored::Hit(Sections { map, ranges })
            }
            Err(why) => Stored::Rejected(why),
        }
    }

    /// Writes `sections` as the entry: its path, `Ok(None)` when an input
    /// changed since it was loaded (nothing written), or why not (one line).
    pub fn store(&self, sections: &[&[u8]]) -> Result<Option<PathBuf>, String> {
        if self
            .inputs
            .iter()
            .any(|(given, k)| Key::of(given).ok().as_ref() != Some(k))
        {
            return Ok(None);
        }
        let dir = &self.cache.dir;
        if dir.as_os_str().is_empty() {
            return Err("no cache directory".into());
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
        housekeeping::remove_abandoned(dir);
        let path = self.path();
        let result = housekeeping::create_temp(dir, &self.name).and_then(|(tmp, file)| {
            write(file, &self.key, sections)?;
            std::fs::rename(tmp.path(), &path)
        });
        if let Err(e) = result {
            return Err(format!("{}: cannot write: {e}", path.display()));
        }
        housekeeping::evict(dir, self.cache.cap_bytes, &path);
        Ok(Some(path))
    }
}

/// The entry's bytes into `file`, a fresh temp.
fn write(file: std::fs::File, key: &str, sections: &[&[u8]]) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::with_capacity(1 << 20, file);
    f.write_all(MAGIC)?;
    f.write_all(&VERSION.to_le_bytes())?;
    f.write_all(&(sections.len() as u32).to_le_bytes())?;
    f.write_all(&(key.len() as u64).to_le_bytes())?;
    f.write_all(&xxh3_64(key.as_bytes()).to_le_bytes())?;
    for s in sections {
        f.write_all(&(s.len() as u64).to_le_bytes())?;
        f.write_all(&xxh3_64(s).to_le_bytes())?;
    }
    f.write_all(key.as_bytes())?;
    for s in sections {
        f.write_all(s)?;
    }
    f.into_inner().map_err(|e| e.into_error())?.sync_all()
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// The sections' ranges in `b`, or why `b` is not an entry for `key`.
fn sections(b: &[u8], key: &str) -> Result<Vec<Range<usize>>, String> {
    let truncated = || "truncated or extended".to_string();
    if b.len() < HEADER || &b[..8] != MAGIC {
        return Err("not a rankline analyses file".into());
    }
    let version = u32::from_le_bytes([b[8], b[9], b[10], b[11]]);
    if version != VERSION {
        return Err(format!("format version {version}, expected {VERSION}"));
    }
    let count = u32::from_le_bytes([b[12], b[13], b[14], b[15]]) as usize;
    if count > MAX_SECTIONS {
        return Err(format!("{count} sections (corrupted)"));
    }
    let key_len = u64_at(b, 16).and_then(|n| usize::try_from(n).ok());
    let key_len = key_len.ok_or_else(truncated)?;
    let key_at = HEADER + 16 * count;
    let key_end = key_at.checked_add(key_len).ok_or_else(truncated)?;
    let stored_key = b.get(key_at..key_end).ok_or_else(truncated)?;
    if Some(xxh3_64(stored_key)) != u64_at(b, 24) {
        return Err("key checksum mismatch (corrupted)".into());
    }
    if stored_key != key.as_bytes() {
        return Err("stale (built for other inputs, settings or rankline version)".into());
    }
    let mut ranges = Vec::with_capacity(count);
    let mut at = key_end;
    for i in 0..count {
        let len = u64_at(b, HEADER + 16 * i).and_then(|n| usize::try_from(n).ok());
        let end = len.and_then(|n| at.checked_add(n)).ok_or_else(truncated)?;
        if end > b.len() {
            return Err(truncated());
        }
        ranges.push(at..end);
        at = end;
    }
    if at != b.len() {
        return Err(truncated());
    }
    for (i, r) in ranges.iter().enumerate() {
        if Some(xxh3_64(&b[r.clone()])) != u64_at(b, HEADER + 16 * i + 8) {
            return Err(format!("section {i} checksum mismatch (corrupted)"));
        }
    }
    Ok(ranges)
}
