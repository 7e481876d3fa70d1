//! What identifies the input a cache entry was built from: path, size,
//! times and inode from the file system, plus a fingerprint of its content
//! (the SQLite header and a few pages) so that a different capture with the
//! same size and mtime is never served from another capture's entry.

use serde::{Deserialize, Serialize};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use xxhash_rust::xxh3::xxh3_64;

/// Bump when the layout or the model changes.
pub const FORMAT_VERSION: u32 = 5;
/// The extension of cache entries.
pub const EXT: &str = "rlcache";

/// The SQLite header's length; it holds the file change counter and the
/// page count, which SQLite bumps on every committed write.
const SQLITE_HEADER: usize = 100;
/// Pages hashed between the first and the last.
const SAMPLED_PAGES: u64 = 6;

/// The identity of one input file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Key {
    pub(super) path: String,
    size: u64,
    mtime_ns: i128,
    /// `touch -r` and copy tools restore mtime, never ctime.
    ctime_ns: i128,
    inode: u64,
    pub(super) version: u32,
    pub(super) fingerprint: Fingerprint,
}

/// A sample of the content, read with plain reads (never mapped: the input
/// may shrink under us).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Fingerprint {
    /// The first 100 bytes, hex.
    pub(super) header: String,
    /// xxh3 of the first page, sampled pages and the last page.
    pub(super) pages: Vec<u64>,
}

impl Key {
    /// The key of `input` as it is now (a few page reads).
    pub fn of(input: &Path) -> Result<Key, String> {
        let path = std::fs::canonicalize(input).map_err(|e| e.to_string())?;
        // Opening a FIFO or a device for reading can block forever.
        if !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            return Err("not a regular file".into());
        }
        let mut file = std::fs::File::open(&path).map_err(|e| e.to_string())?;
        let meta = file.metadata().map_err(|e| e.to_string())?;
        let fingerprint = fingerprint(&mut file, meta.len()).map_err(|e| e.to_string())?;
        Ok(Key {
            path: path.display().to_string(),
            size: meta.len(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
            inode: meta.ino(),
            version: FORMAT_VERSION,
            fingerprint,
        })
    }

    /// The entry's file name. It hashes everything but the content sample,
    /// so an input whose content changed under the same metadata finds its
    /// old entry, rejects it as stale and replaces it.
    pub fn file_name(&self) -> String {
        let named = (
            &self.path,
            self.size,
            self.mtime_ns,
            self.ctime_ns,
            self.inode,
            self.version,
        );
        let json = serde_json::to_vec(&named).unwrap_or_default();
        format!("{:016x}.{}", xxh3_64(&json), EXT)
    }

    /// Why an entry built for `self` does not fit `now`, if it does not.
    pub fn differs(&self, now: &Key) -> Option<&'static str> {
        if self == now {
            None
        } else if self.fingerprint != now.fingerprint {
            Some("the input's content changed (stale)")
        } else {
            Some("built from another version of the input (stale)")
        }
    }
}

fn fingerprint(file: &mut std::fs::File, size: u64) -> std::io::Result<Fingerprint> {
    let mut header = vec![0u8; SQLITE_HEADER.min(size as usize)];
    file.read_exact(&mut header)?;
    let page = page_size(&header);
    let pages = size.div_ceil(page);
    let mut at: Vec<u64> = vec![0];
    at.extend((1..=SAMPLED_PAGES).map(|i| pages * i / (SAMPLED_PAGES + 1)));
    at.push(pages.saturating_sub(1));
    at.dedup();
    let mut buf = vec![0u8; page as usize];
    let mut hashes = Vec::with_capacity(at.len());
    for p in at {
        let offset = p * page;
        let len = page.min(size.saturating_sub(offset)) as usize;
        file.seek(SeekFrom::Start(offset))?;
        file.read_exact(&mut buf[..len])?;
        hashes.push(xxh3_64(&buf[..len]));
    }
    Ok(Fingerprint {
        header: header.iter().map(|b| format!("{b:02x}")).collect(),
        pages: hashes,
    })
}

/// The page size from an SQLite header (bytes 16–17, 1 meaning 65536);
/// 4096 for anything else, so a non-SQLite input is still sampled.
fn page_size(header: &[u8]) -> u64 {
    let valid = |n: u64| (512..=65536).contains(&n) && n.is_power_of_two();
    match header.get(16..18) {
        Some(&[1, 0]) => 65536,
        Some(&[hi, lo]) if valid(u64::from(u16::from_be_bytes([hi, lo]))) => {
            u64::from(u16::from_be_bytes([hi, lo]))
        }
        _ => 4096,
    }
}
