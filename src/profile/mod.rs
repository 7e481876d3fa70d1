//! `profile`: nsys SQLite exports → the columnar in-memory model.
//!
//! This is the only module that runs SQL. Files are opened read-only and
//! immutable; nothing is ever written beside them.

pub mod cache;
pub mod column;
pub mod distinct;
mod finalize;
pub mod identity;
pub mod ids;
pub mod inputs;
pub mod intern;
pub mod launch_shape;
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
    /// Why caching is off for this run (one line naming the directory),
    /// when the cache was asked for but could not be used or written.
    pub cache_off: Option<String>,
    /// The entries opened or written, one per file that used the cache.
    pub cache_use: Vec<CacheUse>,
    /// A cache entry left for the caller to write (see [`load_deferring`]).
    pub unwritten: Option<UnwrittenCache>,
}

/// What the cache did for one input file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheUse {
    /// The file was opened from this entry.
    Opened(PathBuf),
    /// This entry was written for the file.
    Written(PathBuf),
}

/// The cache entry of a single freshly loaded file, not yet written.
pub struct UnwrittenCache {
    pub cache: CacheDir,
    pub input: std::path::PathBuf,
    /// The input's identity before it was loaded.
    key: cache::Key,
}

impl UnwrittenCache {
    /// Writes the entry for `p` (the profile [`load_deferring`] returned):
    /// the entry written, `Ok(None)` when the input changed while it was
    /// read (nothing written), or why caching is off (one line).
    pub fn write(self, p: &Profile) -> Result<Option<PathBuf>, String> {
        if cache::Key::of(&self.input).ok().as_ref() != Some(&self.key) {
            return Ok(None);
        }
        let entry = cache::store(&self.cache.dir, &self.key, p)
            .map_err(|e| format!("{e}; caching is off"))?;
        cache::evict(&self.cache.dir, self.cache.cap_bytes, &entry);
        Ok(Some(entry))
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
    let mut cache_use = Vec::new();
    let inputs: Vec<&std::path::Path> = sources
        .iter()
        .filter_map(|s| match s {
            Source::File(p) => Some(p.as_path()),
            Source::Embedded { .. } => None,
        })
        .collect();
    let mut cache_off = match cache {
        Some(c) if !inputs.is_empty() => c
            .unusable(&inputs)
            .map(|why| format!("{why}; caching is off")),
        _ => None,
    };
    let mut cache = cache.filter(|_| cache_off.is_none());
    for (i, source) in sources.iter().enumerate() {
        // The input's identity is taken before it is read: an entry never
        // claims a newer version of the input than the one it holds.
        let keyed = match (cache, source) {
            (Some(c), Source::File(path)) => cache::Key::of(path).ok().map(|k| (c, path, k)),
            _ => None,
        };
        if let Some((c, path, key)) = &keyed {
            progress(i, Stage::Cache, 0);
            match cache::lookup(&c.dir, key) {
                cache::Lookup::Hit(mut p) => {
                    notes.push(format!("{}: opened from the cache", path.display()));
                    cache_use.push(CacheUse::Opened(c.dir.join(key.file_name())));
                    // The entry holds the path it was first written under;
                    // this run names the file as it was given.
                    for f in &mut p.files {
                        f.path = path.to_path_buf();
                    }
                    if let ([f], [host]) = (&p.files[..], &mut p.hosts[..])
                        && f.host.is_none()
                    {
                        *host = identity::stem_host(path);
                    }
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
                if let Some((c, path, key)) = keyed {
                    let entry = UnwrittenCache {
                        cache: c.clone(),
                        input: path.clone(),
                        key,
                    };
                    if defer && sources.len() == 1 {
                        unwritten = Some(entry);
                    } else {
                        progress(i, Stage::WritingCache, 0);
                        match entry.write(&one) {
                            Ok(Some(written)) => cache_use.push(CacheUse::Written(written)),
                            Ok(None) => notes.push(format!(
                                "{}: changed while it was read; not cached",
                                path.display()
                            )),
                            Err(why) => {
                                // Said once; the other files load without it.
                                cache_off = Some(why);
                                cache = None;
                            }
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
        cache_off,
        cache_use,
        unwritten,
    }
}

/// One profile from finalized single-file profiles.
fn combine(mut files: Vec<Profile>) -> Profile {
    let mut profile = if files.len() == 1 {
        files.pop().unwrap_or_default()
    } else {
        let mut profile = Profile::default();
        for one in files {
            finalize::merge(&mut profile, one);
        }
        profile.contexts.sort();
        profile.contexts.dedup();
        profile
    };
    identity::label(&mut profile);
    profile
}
