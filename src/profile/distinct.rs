//! Dropping inputs given twice (the same path, a symlink, a hard link or a
//! byte-identical copy), which would otherwise count every event twice.
//!
//! Applied to one list of inputs: a comparison applies it to each side
//! separately, so comparing a capture with itself stays possible.

use crate::text_safe::path_text;
use std::collections::HashMap;
use std::fs::Metadata;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Why an input was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sameness {
    /// The same file on disk (same device and inode): the same path
    /// twice, a symlink or a hard link.
    File,
    /// A different file with the same bytes (a copy).
    Content,
}

/// An input dropped because an earlier one is the same capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    pub dropped: PathBuf,
    /// The earlier input that was kept.
    pub kept: PathBuf,
    pub why: Sameness,
}

impl std::fmt::Display for Duplicate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let why = match self.why {
            Sameness::File => "same file",
            Sameness::Content => "same content",
        };
        write!(
            f,
            "{}: {why} as {}, read once",
            path_text(&self.dropped),
            path_text(&self.kept)
        )
    }
}

/// `inputs` without later duplicates, in order, and what was dropped.
/// Inputs that cannot be inspected (missing, unreadable, not a regular
/// file) are kept: the loader reports them.
pub fn distinct_inputs(inputs: &[PathBuf]) -> (Vec<PathBuf>, Vec<Duplicate>) {
    let mut kept: Vec<PathBuf> = Vec::new();
    let mut dropped = Vec::new();
    // Per kept regular file: its identity and size, and its content hash
    // once some later input of the same size asked for it.
    let mut seen: Vec<Seen> = Vec::new();
    let mut by_identity: HashMap<Identity, usize> = HashMap::new();
    for path in inputs {
        let Some(meta) = std::fs::metadata(path).ok().filter(Metadata::is_file) else {
            kept.push(path.clone());
            continue;
        };
        let id = identity(path, &meta);
        if let Some(&i) = by_identity.get(&id) {
            dropped.push(keep_one_that_opens(
                &mut seen[i],
                &mut kept,
                path,
                Sameness::File,
            ));
            continue;
        }
        let mut hash = None;
        let mut copy_of = None;
        for (i, s) in seen
            .iter_mut()
            .enumerate()
            .filter(|(_, s)| s.size == meta.len())
        {
            // Hash only when sizes match: most inputs are never read here.
            if hash.is_none() {
                hash = Some(content_hash(path));
            }
            if s.hash.is_none() {
                s.hash = Some(content_hash(&s.path));
            }
            if matches!((&hash, &s.hash), (Some(Some(a)), Some(Some(b))) if a == b) {
                copy_of = Some(i);
                break;
            }
        }
        if let Some(i) = copy_of {
            dropped.push(keep_one_that_opens(
                &mut seen[i],
                &mut kept,
                path,
                Sameness::Content,
            ));
            continue;
        }
        by_identity.insert(id, seen.len());
        seen.push(Seen {
            path: path.clone(),
            size: meta.len(),
            hash,
        });
        kept.push(path.clone());
    }
    (kept, dropped)
}

/// `path` is the same capture as the kept `earlier`: the duplicate to
/// drop. The earlier stays unless it does not open and `path` does (a
/// copy is no copy if it cannot be read); then `path` takes its place.
fn keep_one_that_opens(
    earlier: &mut Seen,
    kept: &mut [PathBuf],
    path: &Path,
    why: Sameness,
) -> Duplicate {
    let opens = |p: &Path| super::open::open_readonly(p).is_ok();
    if !opens(&earlier.path) && opens(path) {
        let old = std::mem::replace(&mut earlier.path, path.to_path_buf());
        if let Some(k) = kept.iter_mut().find(|k| **k == old) {
            *k = path.to_path_buf();
        }
        return Duplicate {
            dropped: old,
            kept: path.to_path_buf(),
            why,
        };
    }
    Duplicate {
        dropped: path.to_path_buf(),
        kept: earlier.path.clone(),
        why,
    }
}

struct Seen {
    path: PathBuf,
    size: u64,
    /// `Some(None)`: tried, could not be read.
    hash: Option<Option<u128>>,
}

#[cfg(unix)]
type Identity = (u64, u64);

#[cfg(unix)]
fn identity(_path: &Path, meta: &Metadata) -> Identity {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
type Identity = PathBuf;

#[cfg(not(unix))]
fn identity(path: &Path, _meta: &Metadata) -> Identity {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// xxh3-128 of the whole file; `None` when it cannot be read.
fn content_hash(path: &Path) -> Option<u128> {
    let mut f = std::fs::File::open(path).ok()?;
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match f.read(&mut buf) {
            Ok(0) => return Some(hasher.digest128()),
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("rankline-distinct-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn same_path_symlink_hard_link_and_copy_are_dropped() {
        let d = dir("four");
        let a = d.join("a.sqlite");
        std::fs::write(&a, b"capture A").unwrap();
        let link = d.join("link.sqlite");
        std::os::unix::fs::symlink(&a, &link).unwrap();
        let hard = d.join("hard.sqlite");
        std::fs::hard_link(&a, &hard).unwrap();
        let copy = d.join("copy.sqlite");
        std::fs::copy(&a, &copy).unwrap();
        // Same size, other bytes: kept.
        let other = d.join("other.sqlite");
        std::fs::write(&other, b"capture B").unwrap();
        let inputs = vec![
            a.clone(),
            a.clone(),
            link.clone(),
            hard.clone(),
            copy.clone(),
            other.clone(),
        ];
        let (kept, dropped) = distinct_inputs(&inputs);
        assert_eq!(kept, vec![a.clone(), other]);
        let whys: Vec<(PathBuf, Sameness)> =
            dropped.iter().map(|d| (d.dropped.clone(), d.why)).collect();
        assert_eq!(
            whys,
            vec![
                (a.clone(), Sameness::File),
                (link, Sameness::File),
                (hard, Sameness::File),
                (copy.clone(), Sameness::Content),
            ]
        );
        assert!(dropped.iter().all(|d| d.kept == a));
        assert_eq!(
            dropped[3].to_string(),
            format!(
                "{}: same content as {}, read once",
                copy.display(),
                a.display()
            )
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn missing_and_unusual_inputs_are_kept_for_the_loader_to_report() {
        let d = dir("missing");
        let gone = d.join("gone.sqlite");
        let inputs = vec![gone.clone(), gone.clone(), d.clone()];
        let (kept, dropped) = distinct_inputs(&inputs);
        assert_eq!(kept, inputs);
        assert!(dropped.is_empty());
        let _ = std::fs::remove_dir_all(&d);
    }
}
