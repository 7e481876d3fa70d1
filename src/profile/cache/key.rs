//! What identifies the input a cache entry was built from: path, size,
//! times and inode from the file system, plus a fingerprint of its content
//! (the SQLite header and a few pages; for an nsys report, its ends and a
//! few blocks) so that a different capture with the same size and mtime is
//! never served from another capture's entry.

use serde::{Deserialize, Serialize};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use xxhash_rust::xxh3::xxh3_64;

/// Bump when the layout or the model changes.
pub const FORMAT_VERSION: u32 = 26;
/// The extension of cache entries.
pub const EXT: &str = "rlcache";

/// The SQLite header's length; it holds the file change counter and the
/// page count, which SQLite bumps on every committed write.
const SQLITE_HEADER: usize = 100;
/// Pages hashed between the first and the last.
const SAMPLED_PAGES: u64 = 6;
/// An nsys report (not SQLite) is sampled at both ends and in between.
const REPORT_SAMPLING: Sampling = Sampling {
    ends: 64 << 10,
    between: 8,
    block: 4 << 10,
};

/// Which bytes a fingerprint hashes: `ends` bytes at the start and at the
/// end, and `between` blocks of `block` bytes spread evenly in between.
struct Sampling {
    ends: u64,
    between: u64,
    block: u64,
}

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
        // Sampled as what it is read as: by the name it was given.
        let fingerprint = if crate::profile::inputs::is_nsys_report(input) {
            sample(&mut file, meta.len(), &REPORT_SAMPLING)
        } else {
            fingerprint(&mut file, meta.len())
        }
        .map_err(|e| e.to_string())?;
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

    /// What names the input for state kept beyond the cache (bookmarks):
    /// its path, size and content sample — not its times, inode or the
    /// cache format, so a copy kept in place or a new rankline keeps it.
    pub fn lasting_id(&self) -> u64 {
        let named = (&self.path, self.size, &self.fingerprint);
        xxh3_64(&serde_json::to_vec(&named).unwrap_or_default())
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

    /// A name for something made from the input's content as it is now
    /// (its export): unlike [`Key::file_name`] it hashes the content
    /// sample too, so a changed input never finds what was made of the old.
    pub fn content_name(&self, ext: &str) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        format!("{:016x}.{ext}", xxh3_64(&json))
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

/// The fingerprint of an SQLite export: its header, and its first page,
/// sampled pages and last page (by its own page size).
fn fingerprint(file: &mut std::fs::File, size: u64) -> std::io::Result<Fingerprint> {
    let mut header = vec![0u8; SQLITE_HEADER.min(size as usize)];
    file.read_exact(&mut header)?;
    let page = page_size(&header);
    let sampling = Sampling {
        ends: page,
        between: SAMPLED_PAGES,
        block: page,
    };
    sample(file, size, &sampling)
}

/// The first bytes (hex) and the hashes of the blocks `how` names.
fn sample(file: &mut std::fs::File, size: u64, how: &Sampling) -> std::io::Result<Fingerprint> {
    let mut header = vec![0u8; SQLITE_HEADER.min(size as usize)];
    file.seek(SeekFrom::Start(0))?;
    file.read_exact(&mut header)?;
    // Blocks as (offset, length), in file order; an SQLite file's are its
    // pages: the first, the sampled ones and the last.
    let blocks = size.div_ceil(how.block);
    let mut at: Vec<(u64, u64)> = vec![(0, how.ends)];
    at.extend((1..=how.between).map(|i| (blocks * i / (how.between + 1) * how.block, how.block)));
    at.push((size.saturating_sub(how.ends), how.ends));
    at.dedup();
    let mut buf = vec![0u8; how.ends.max(how.block) as usize];
    let mut hashes = Vec::with_capacity(at.len());
    for (offset, len) in at {
        let len = len.min(size.saturating_sub(offset)) as usize;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The fingerprint of `bytes` as an nsys report.
    fn report_sample(dir: &Path, bytes: &[u8]) -> Fingerprint {
        let path = dir.join("r.nsys-rep");
        std::fs::write(&path, bytes).unwrap();
        Key::of(&path).unwrap().fingerprint
    }

    #[test]
    fn a_report_is_sampled_at_both_64_kib_ends_and_8_blocks_between() {
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("target/test-tmp/key-report-sampling");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let size = 1 << 20;
        let base: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
        let want = report_sample(&dir, &base);
        // The first and last 64 KiB and 8 blocks between: 10 hashes.
        assert_eq!(want.pages.len(), 10);
        let changed_at = |at: usize| {
            let mut b = base.clone();
            b[at] ^= 0xff;
            report_sample(&dir, &b) != want
        };
        let blocks = size / 4096;
        let first_sampled = blocks / 9 * 4096;
        assert!(changed_at(65_535), "the first 64 KiB");
        assert!(changed_at(size - 65_536), "the last 64 KiB");
        assert!(changed_at(first_sampled + 4095), "a sampled block");
        assert!(!changed_at(65_536), "between the samples");
        assert!(!changed_at(first_sampled + 4096), "after a sampled block");
    }
}
