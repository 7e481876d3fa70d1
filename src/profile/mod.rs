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
pub use load::{ProgressFn, Source, Stage};
pub use model::*;
pub use open::LoadError;

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
}

/// Loads `sources`, reading and writing the columnar cache in `cache` when
/// given. A stale, truncated or corrupted cache entry is rebuilt.
pub fn load_with(
    sources: &[Source],
    cache: Option<&CacheDir>,
    progress: &mut ProgressFn<'_>,
) -> Loaded {
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
                cache::Lookup::Hit(p) => {
                    notes.push(format!("{}: opened from the cache", path.display()));
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
                progress(i, Stage::Linking, 0);
                finalize::finalize(&mut one);
                if let Some((c, path)) = cache {
                    progress(i, Stage::WritingCache, 0);
                    match cache::write(&c.dir, path, &one) {
                        Ok(entry) => cache::evict(&c.dir, c.cap_bytes, &entry),
                        Err(e) => notes.push(format!("{}: not cached: {e}", path.display())),
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
