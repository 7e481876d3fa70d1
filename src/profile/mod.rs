//! `profile`: nsys SQLite exports → the columnar in-memory model.
//!
//! This is the only module that runs SQL. Files are opened read-only and
//! immutable; nothing is ever written beside them.

pub mod cache;
pub mod column;
mod finalize;
pub mod ids;
pub mod intern;
mod load;
mod model;
pub mod names;
mod open;
mod raw;
mod rows;
pub mod spec;

pub use cache::CacheDir;
pub use intern::{Interner, Sym};
pub use load::{ProgressFn, Source, Stage, wal_title, wal_warning};
pub use model::*;
pub use open::{LoadError, open_readonly, readonly_uri};

use std::path::PathBuf;

/// Loads several exports into one profile. A file that fails is reported in
/// the error list; the others still load.
pub fn load(paths: &[PathBuf], progress: &mut ProgressFn<'_>) -> (Profile, Vec<LoadError>) {
    let sources: Vec<Source> = paths.iter().cloned().map(Source::File).collect();
    load_sources(&sources, progress)
}

/// Like [`load`], from files or embedded databases, without a cache.
pub fn load_sources(
    sources: &[Source],
    progress: &mut ProgressFn<'_>,
) -> (Profile, Vec<LoadError>) {
    let out = load_with(sources, None, progress);
    (out.profile, out.errors)
}

/// The result of [`load_with`].
pub struct Loaded {
    pub profile: Profile,
    /// Files that could not be loaded (the others were).
    pub errors: Vec<LoadError>,
    /// What the cache did, one line per file, for whoever wants to say it.
    pub notes: Vec<String>,
    /// A cache entry left for the caller to write (see [`load_deferring`]).
    pub unwritten: Option<UnwrittenCache>,
}

/// The cache entry of a single freshly loaded file, not yet written.
pub struct UnwrittenCache {
    pub cache: CacheDir,
    pub input: std::path::PathBuf,
}

impl UnwrittenCache {
    /// Writes the entry for `p` (the profile [`load_deferring`] returned);
    /// what happened, as a note.
    pub fn write(self, p: &Profile) -> String {
        match cache::write(&self.cache.dir, &self.input, p) {
            Ok(entry) => {
                cache::evict(&self.cache.dir, self.cache.cap_bytes, &entry);
                format!("{}: cached", self.input.display())
            }
            Err(e) => format!("{}: not cached: {e}", self.input.display()),
        }
    }
}

/// Loads `sources`, reading and writing the columnar cache in `cache` when
/// given. A stale, truncated or corrupted cache entry is rebuilt.
pub fn load_with(
    sources: &[Source],
    cache: Option<&CacheDir>,
    progress: &mut ProgressFn<'_>,
) -> Loaded {
    load_impl(sources, cache, false, progress)
}

/// Like [`load_with`], but a single file freshly read from SQLite is
/// returned before its cache entry is written: the caller shows it first
/// and writes the entry afterwards ([`Loaded::unwritten`]).
pub fn load_deferring(
    sources: &[Source],
    cache: Option<&CacheDir>,
    progress: &mut ProgressFn<'_>,
) -> Loaded {
    load_impl(sources, cache, true, progress)
}

fn load_impl(
    sources: &[Source],
    cache: Option<&CacheDir>,
    defer: bool,
    progress: &mut ProgressFn<'_>,
) -> Loaded {
    let mut unwritten = None;
    let mut loaded = Vec::new();
    let mut errors = Vec::new();
    let mut notes = Vec::new();
    for (i, source) in sources.iter().enumerate() {
        let cache = match (cache, source) {
            (Some(c), Source::File(path)) if !beside(&c.dir, path) => Some((c, path)),
            _ => None,
        };
        if let Some((c, path)) = cache {
            progress(i, Stage::Cache, 0);
            match cache::read(&c.dir, path) {
                cache::Lookup::Hit(mut p) => {
                    notes.push(format!("{}: opened from the cache", path.display()));
                    load::note_wal(&mut p);
                    loaded.push(*p);
                    continue;
                }
                cache::Lookup::Rejected(why) => notes.push(format!(
                    "{}: cache entry rejected ({why}); rebuilt",
                    path.display()
                )),
                cache::Lookup::Missing => {}
            }
        }
        match load::load_file(source, i, progress) {
            Ok(mut one) => {
                if let Source::File(_) = source {
                    load::note_wal(&mut one);
                }
                progress(i, Stage::Linking, 0);
                finalize::finalize(&mut one);
                if let Some((c, path)) = cache {
                    let entry = UnwrittenCache {
                        cache: c.clone(),
                        input: path.clone(),
                    };
                    if defer && sources.len() == 1 {
                        unwritten = Some(entry);
                    } else {
                        progress(i, Stage::WritingCache, 0);
                        let note = entry.write(&one);
                        if note.contains("not cached") {
                            notes.push(note);
                        }
                    }
                }
                loaded.push(one);
            }
            Err(e) => errors.push(e),
        }
    }
    Loaded {
        profile: combine(loaded),
        errors,
        notes,
        unwritten,
    }
}

/// Whether the cache directory is the input's own directory: the cache
/// never goes beside the input.
fn beside(dir: &std::path::Path, input: &std::path::Path) -> bool {
    let parent = input
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    match (std::fs::canonicalize(dir), std::fs::canonicalize(parent)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// One profile from finalized single-file profiles.
fn combine(mut files: Vec<Profile>) -> Profile {
    if files.len() == 1 {
        return files.pop().unwrap_or_default();
    }
    let mut profile = Profile::default();
    for one in files {
        finalize::merge(&mut profile, one);
    }
    profile.contexts.sort();
    profile.contexts.dedup();
    profile
}
