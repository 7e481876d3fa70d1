//! `profile`: nsys SQLite exports → the columnar in-memory model.
//!
//! This is the only module that runs SQL. Files are opened read-only and
//! immutable; nothing is ever written beside them. An nsys report is read
//! through an SQLite export made with the user's nsys ([`nsys_export`]).

pub mod cache;
pub mod column;
pub mod distinct;
mod finalize;
pub mod gpu_details;
mod gpu_kind;
pub mod identity;
pub mod ids;
pub mod inputs;
pub mod intern;
pub mod launch_shape;
mod load;
mod model;
pub mod names;
pub mod nsys_export;
mod open;
pub mod parallel;
mod progress;
mod raw;
mod rows;
pub mod spec;
pub mod synthetic;

pub use cache::CacheDir;
pub use intern::{Interner, Sym};
pub use load::memory::give_back_freed;
pub use load::{Need, ProgressFn, ReadPlan, Source, Stage, wal_title, wal_warning};
pub use model::*;
pub use open::{LoadError, open_readonly, readonly_uri};

use std::path::PathBuf;

/// Loads several exports into one profile. A file that fails is reported in
/// the error list; the others still load.
pub fn load(paths: &[PathBuf], progress: &mut ProgressFn<'_>) -> (Profile, Vec<LoadError>) {
    let sources: Vec<Source> = paths.iter().cloned().map(Source::File).collect();
    load_sources(&sources, progress)
}

/// One file loaded from SQLite (no cache) with its large tables read as
/// `plan` says: how the benchmark shows reading scale with readers.
pub fn load_one_planned(path: &std::path::Path, plan: &ReadPlan) -> Result<Profile, LoadError> {
    let source = Source::File(path.to_path_buf());
    let mut p = load::load_file_planned(&source, 0, &mut |_, _, _| {}, plan)?;
    finalize::finalize(&mut p);
    load::memory::give_back_freed();
    Ok(p)
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
    /// What is worth saying once about the cache, one line each: an entry
    /// rejected and rebuilt, a file that changed while read and was not
    /// cached. `report`, `index` and the timeline say them.
    pub notes: Vec<String>,
    /// Why caching is off for this run (one line naming the directory),
    /// when the cache was asked for but could not be used or written.
    pub cache_off: Option<String>,
    /// The entries opened or written, one per file that used the cache.
    pub cache_use: Vec<CacheUse>,
    /// A cache entry left for the caller to write (see [`load_deferring`]).
    pub unwritten: Option<UnwrittenCache>,
    /// The nsys reports that nsys exported in this load (the others were
    /// read from an earlier export or the cache).
    pub exported: Vec<PathBuf>,
    /// The cache and every input with its identity before it was read,
    /// when the cache is on and every input is a file that loaded.
    keyed: Option<(CacheDir, Vec<(PathBuf, cache::Key)>)>,
}

impl Loaded {
    /// Where the analyses of this input set under `settings` (the analysis
    /// settings as text) are stored; `None` when the cache is off or an
    /// input did not load.
    pub fn analyses_slot(&self, settings: &str) -> Option<cache::AnalysesSlot> {
        let (dir, inputs) = self.keyed.as_ref()?;
        Some(cache::AnalysesSlot::new(dir, inputs.clone(), settings))
    }
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
    load_impl(sources, cache, false, parallel::cores(), progress)
}

/// Like [`load_with`] when `need` is [`Need::All`]. With [`Need::Gpu`],
/// an input whose cache entry is valid is opened from it (everything), and
/// any other is read without its runtime calls and NVTX ranges (with
/// [`Need::Counts`], with them counted: [`CpuCounts`]); such a partial
/// profile is never cached, and gives no slot for analyses.
pub fn load_needed(
    sources: &[Source],
    cache: Option<&CacheDir>,
    need: Need,
    progress: &mut ProgressFn<'_>,
) -> Loaded {
    load_impl_needing(sources, cache, false, parallel::cores(), need, progress)
}

/// Like [`load_with`], but a single file freshly read from SQLite is
/// returned before its cache entry is written: the caller shows it first
/// and writes the entry afterwards ([`Loaded::unwritten`]).
pub fn load_deferring(
    sources: &[Source],
    cache: Option<&CacheDir>,
    progress: &mut ProgressFn<'_>,
) -> Loaded {
    load_impl(sources, cache, true, parallel::cores(), progress)
}

/// Loads `sources` on at most `workers` threads (files at once).
fn load_impl(
    sources: &[Source],
    cache: Option<&CacheDir>,
    defer: bool,
    workers: usize,
    progress: &mut ProgressFn<'_>,
) -> Loaded {
    load_impl_needing(sources, cache, defer, workers, Need::All, progress)
}

/// [`load_impl`], reading what `need` says of inputs not in the cache.
fn load_impl_needing(
    sources: &[Source],
    cache: Option<&CacheDir>,
    defer: bool,
    workers: usize,
    need: Need,
    progress: &mut ProgressFn<'_>,
) -> Loaded {
    let inputs: Vec<&std::path::Path> = sources
        .iter()
        .filter_map(|s| match s {
            Source::File(p) => Some(p.as_path()),
            Source::Embedded { .. } => None,
        })
        .collect();
    let cache_off = match cache {
        Some(c) if !inputs.is_empty() => c
            .unusable(&inputs)
            .map(|why| format!("{why}; caching is off")),
        _ => None,
    };
    let cache = cache.filter(|_| cache_off.is_none());
    // Files loading at once share the cores: each reads its tables on
    // its share of them.
    let at_once = sources.len().clamp(1, workers.max(1));
    let plan = ReadPlan {
        readers: (parallel::cores() / at_once).max(1),
        need,
        ..ReadPlan::default()
    };
    let job = Job {
        cache,
        plan,
        defer: defer && sources.len() == 1,
        writes_off: std::sync::atomic::AtomicBool::new(false),
        need,
    };
    let outcomes = parallel::each_on(sources.len(), workers, progress, |i, report| {
        job.load_one(&sources[i], i, report)
    });
    let mut out = Loaded {
        profile: Profile::default(),
        errors: Vec::new(),
        notes: Vec::new(),
        cache_off,
        cache_use: Vec::new(),
        unwritten: None,
        exported: Vec::new(),
        keyed: None,
    };
    let mut loaded = Vec::new();
    let mut keys = Vec::new();
    // In file order, whatever order the files finished in.
    for o in outcomes {
        out.notes.extend(o.notes);
        out.cache_use.extend(o.cache_use);
        if out.cache_off.is_none() {
            out.cache_off = o.cache_off;
        }
        if o.unwritten.is_some() {
            out.unwritten = o.unwritten;
        }
        out.exported.extend(o.exported);
        keys.push(o.key);
        match o.profile {
            Ok(p) => loaded.push(p),
            Err(e) => out.errors.push(e),
        }
    }
    out.profile = combine(loaded);
    // Caching found off (a write failed): said once, not tried again.
    if let Some(c) = cache
        && out.errors.is_empty()
        && out.cache_off.is_none()
        && let Some(keys) = keys.into_iter().collect::<Option<Vec<_>>>()
    {
        out.keyed = Some((c.clone(), keys));
    }
    load::memory::give_back_freed();
    out
}

/// What every file's load shares.
struct Job<'a> {
    cache: Option<&'a CacheDir>,
    /// How each file's large tables are read.
    plan: ReadPlan,
    /// Leave the (single) file's cache entry for the caller to write.
    defer: bool,
    /// A cache write failed: the files after it load without writing.
    writes_off: std::sync::atomic::AtomicBool,
    /// What is read of a file not in the cache.
    need: Need,
}

/// One file's load.
struct Outcome {
    profile: Result<Profile, LoadError>,
    notes: Vec<String>,
    cache_use: Option<CacheUse>,
    cache_off: Option<String>,
    unwritten: Option<UnwrittenCache>,
    exported: Option<PathBuf>,
    /// The input as given and its identity before it was read (cache on).
    key: Option<(PathBuf, cache::Key)>,
}

impl Job<'_> {
    fn load_one(&self, source: &Source, i: usize, progress: &mut ProgressFn<'_>) -> Outcome {
        use std::sync::atomic::Ordering::Relaxed;
        let mut out = Outcome {
            profile: Err(LoadError::new(source.path(), "not loaded")),
            notes: Vec::new(),
            cache_use: None,
            cache_off: None,
            unwritten: None,
            exported: None,
            key: None,
        };
        // The input's identity is taken before it is read: an entry never
        // claims a newer version of the input than the one it holds.
        let keyed = match (self.cache, source) {
            (Some(c), Source::File(path)) => cache::Key::of(path).ok().map(|k| (c, path, k)),
            _ => None,
        };
        out.key = keyed.as_ref().map(|(_, p, k)| (p.to_path_buf(), k.clone()));
        if let Some((c, path, key)) = &keyed {
            progress(i, Stage::Cache, 0);
            match cache::lookup(&c.dir, key) {
                cache::Lookup::Hit(mut p) => {
                    out.cache_use = Some(CacheUse::Opened(c.dir.join(key.file_name())));
                    // The entry holds the path it was first written under;
                    // this run names the file as it was given.
                    name_as_given(&mut p, path);
                    load::note_wal(&mut p);
                    out.profile = Ok(*p);
                    return out;
                }
                cache::Lookup::Rejected(why) => out.notes.push(format!(
                    "{}: cache entry rejected ({why}); rebuilt",
                    path.display()
                )),
                cache::Lookup::Missing => {}
            }
        }
        // A report is read through its export, made now unless an
        // earlier one is kept; a private one is removed once read.
        let report = match source {
            Source::File(p) if inputs::is_nsys_report(p) => Some(p),
            _ => None,
        };
        let export = match report {
            Some(r) => {
                let mut starting = || progress(i, Stage::Exporting, 0);
                match nsys_export::export(r, self.cache, &mut starting) {
                    Ok(e) => Some(e),
                    Err(e) => {
                        out.profile = Err(e);
                        return out;
                    }
                }
            }
            None => None,
        };
        let exported_source;
        let read_from = match &export {
            Some(e) => {
                exported_source = Source::File(e.sqlite.clone());
                &exported_source
            }
            None => source,
        };
        if self.need != Need::All {
            // A partial profile: neither cached nor a key for analyses.
            out.key = None;
        }
        let mut one = match load::load_file_planned(read_from, i, progress, &self.plan) {
            Ok(one) => one,
            Err(e) => {
                out.profile = Err(match (report, &export) {
                    (Some(r), Some(x)) => LoadError::new(
                        r,
                        format!("its export {}: {}", x.sqlite.display(), e.problem),
                    ),
                    _ => e,
                });
                return out;
            }
        };
        if let Source::File(_) = source {
            load::note_wal(&mut one);
        }
        if let (Some(r), Some(x)) = (report, export) {
            name_as_given(&mut one, r);
            if x.ran_nsys {
                out.exported = Some(r.clone());
            }
        }
        progress(i, Stage::Linking, 0);
        finalize::finalize(&mut one);
        if let Some((c, path, key)) = keyed.filter(|_| self.need == Need::All) {
            let entry = UnwrittenCache {
                cache: c.clone(),
                input: path.clone(),
                key,
            };
            if self.defer {
                out.unwritten = Some(entry);
            } else if !self.writes_off.load(Relaxed) {
                progress(i, Stage::WritingCache, 0);
                match entry.write(&one) {
                    Ok(Some(written)) => out.cache_use = Some(CacheUse::Written(written)),
                    Ok(None) => out.notes.push(format!(
                        "{}: changed while it was read; not cached",
                        path.display()
                    )),
                    Err(why) => {
                        // Said once; the other files load without it.
                        self.writes_off.store(true, Relaxed);
                        out.cache_off = Some(why);
                    }
                }
            }
        }
        out.profile = Ok(one);
        out
    }
}

/// Names a single-file profile read from a cache entry or an export by
/// the file as it was given, and its host, when the file names none, by
/// that file's stem.
fn name_as_given(p: &mut Profile, path: &std::path::Path) {
    for f in &mut p.files {
        f.path = path.to_path_buf();
    }
    if let ([f], [host]) = (&p.files[..], &mut p.hosts[..])
        && f.host.is_none()
    {
        *host = identity::stem_host(path);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn report_json(p: &Profile) -> String {
        let options = identity::tests_support::json_options();
        crate::report::render(p, &crate::report::Section::ALL, &options)
    }

    #[test]
    fn a_gpu_only_load_reads_no_cpu_rows_and_writes_no_cache() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = root.join("target/test-tmp/gpu-only-load");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let copy = dir.join("megatron.sqlite");
        std::fs::copy(root.join("fixtures/megatron_tp8.sqlite"), &copy).unwrap();
        let sources = [Source::File(copy)];
        let cache = CacheDir {
            dir: dir.join("cache"),
            cap_bytes: cache::DEFAULT_CAP,
        };
        let part = load_needed(&sources, Some(&cache), Need::Gpu, &mut |_, _, _| {});
        let full = load_needed(&sources, None, Need::All, &mut |_, _, _| {});
        assert!(part.errors.is_empty());
        let (p, f) = (&part.profile, &full.profile);
        assert!(!f.runtime.is_empty() && !f.nvtx.is_empty());
        assert!(p.runtime.is_empty() && p.nvtx.is_empty());
        assert_eq!(
            (p.gpu.start.to_vec(), p.gpu.lane.to_vec()),
            (f.gpu.start.to_vec(), f.gpu.lane.to_vec())
        );
        assert!(part.cache_use.is_empty() && part.analyses_slot("s").is_none());
        assert!(!cache.dir.exists() || std::fs::read_dir(&cache.dir).unwrap().count() == 0);
        // Cached (by a full load), a GPU-only load opens the whole entry.
        load_with(&sources, Some(&cache), &mut |_, _, _| {});
        let hit = load_needed(&sources, Some(&cache), Need::Gpu, &mut |_, _, _| {});
        assert!(matches!(hit.cache_use[..], [CacheUse::Opened(_)]));
        assert_eq!(hit.profile.runtime.len(), f.runtime.len());
        assert!(hit.analyses_slot("s").is_some());
    }

    #[test]
    fn files_loaded_at_once_give_the_profile_loaded_one_by_one() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = root.join("target/test-tmp/parallel-load");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut sources = Vec::new();
        for (i, f) in [
            "two_node_a",
            "two_node_b",
            "megatron_tp8",
            "stream_ids_differ",
        ]
        .iter()
        .enumerate()
        {
            // Copies, so that the cache keys are this test's own.
            let copy = dir.join(format!("{i}_{f}.sqlite"));
            std::fs::copy(root.join("fixtures").join(format!("{f}.sqlite")), &copy).unwrap();
            sources.push(Source::File(copy));
        }
        sources.push(Source::File(dir.join("missing.sqlite")));
        let one_by_one = load_impl(&sources, None, false, 1, &mut |_, _, _| {});
        let at_once = load_impl(&sources, None, false, 4, &mut |_, _, _| {});
        let errors = |l: &Loaded| l.errors.iter().map(|e| e.to_string()).collect::<Vec<_>>();
        assert_eq!(errors(&one_by_one).len(), 1);
        assert_eq!(errors(&one_by_one), errors(&at_once));
        let want = report_json(&one_by_one.profile);
        assert_eq!(report_json(&at_once.profile), want);

        // From the cache: written at once, then read at once.
        let cache = CacheDir {
            dir: dir.join("cache"),
            cap_bytes: cache::DEFAULT_CAP,
        };
        let written = load_impl(&sources, Some(&cache), false, 4, &mut |_, _, _| {});
        assert_eq!(written.cache_use.len(), 4);
        assert_eq!(report_json(&written.profile), want);
        let hits = load_impl(&sources, Some(&cache), false, 4, &mut |_, _, _| {});
        assert!(
            hits.cache_use
                .iter()
                .all(|u| matches!(u, CacheUse::Opened(_))),
            "{:?}",
            hits.cache_use
        );
        assert_eq!(report_json(&hits.profile), want);
    }
}
