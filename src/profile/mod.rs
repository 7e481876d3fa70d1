//! `profile`: nsys SQLite exports → the columnar in-memory model.
//!
//! This is the only module that runs SQL. Files are opened read-only and
//! immutable; nothing is ever written beside them. An nsys report is read
//! through an SQLite export made with the user's nsys ([`nsys_export`]).

pub mod bookmarks;
pub mod cache;
pub mod column;
pub mod distinct;
pub mod export_params;
mod finalize;
pub mod gpu_details;
mod gpu_kind;
pub mod gpu_metrics;
pub mod identity;
pub mod ids;
pub mod inputs;
pub mod intern;
mod job;
pub mod launch_shape;
mod load;
pub mod mapped;
mod model;
pub mod names;
pub mod nic_metrics;
pub mod nsys_export;
mod open;
pub mod out_file;
pub mod parallel;
mod payload;
mod progress;
mod raw;
mod reorder;
mod rows;
pub mod scratch;
pub mod spec;
pub mod synthetic;
mod test_seams;
mod views;

pub use cache::CacheDir;
pub use intern::{Interner, Sym};
pub use job::Profile;
pub use load::memory::give_back_freed;
pub use load::{LoadStage, Need, ProgressFn, ReadPlan, Source, wal_title, wal_warning};
pub use model::*;
pub use open::{LoadError, open_readonly, readonly_uri};
pub use views::{
    CudaEventRows, GpuRows, NvtxRows, OsrtRows, RuntimeRows, SampleRows, SchedRows, SyncRows,
};

use std::path::PathBuf;

/// How a set of inputs is loaded: one value, so that a new way of loading
/// is a field with a default rather than another entry point.
#[derive(Debug, Clone)]
pub struct LoadPlan {
    /// Read each input from its entry here when valid, and write the entry
    /// of an input read fresh (and in full).
    pub cache: Option<CacheDir>,
    /// What of an input not in the cache is read. With [`Need::Gpu`] the
    /// runtime calls and NVTX ranges are not read, with [`Need::Counts`]
    /// they are counted ([`CpuCounts`]); such a partial profile is never
    /// cached and gives no slot for analyses. An input whose cache entry is
    /// valid is opened from it, everything.
    pub need: Need,
    /// A single input read fresh is handed back before its cache entry is
    /// written: the caller shows it first and writes the entry afterwards
    /// ([`Opened::unwritten`]).
    pub defer_cache_write: bool,
    /// Inputs loaded at once; each reads its tables on its share of the
    /// cores.
    pub files_at_once: usize,
    /// Connections reading each file's large tables at once, when not its
    /// share of the cores (the benchmark's one-reader open).
    pub readers: Option<usize>,
}

impl Default for LoadPlan {
    fn default() -> Self {
        LoadPlan {
            cache: None,
            need: Need::All,
            defer_cache_write: false,
            files_at_once: parallel::cores(),
            readers: None,
        }
    }
}

impl LoadPlan {
    /// Everything, through `cache` when given.
    pub fn cached(cache: Option<&CacheDir>) -> LoadPlan {
        LoadPlan {
            cache: cache.cloned(),
            ..LoadPlan::default()
        }
    }
}

/// Loads `sources` as `plan` says. A file that fails is reported in the
/// error list; the others still load. A stale, truncated or corrupted cache
/// entry is rebuilt.
pub fn load(sources: &[Source], plan: &LoadPlan, progress: &mut ProgressFn<'_>) -> Opened {
    let need = plan.need;
    let inputs: Vec<&std::path::Path> = sources
        .iter()
        .filter_map(|s| match s {
            Source::File(p) => Some(p.as_path()),
            Source::Embedded { .. } => None,
        })
        .collect();
    let cache_off = match &plan.cache {
        Some(c) if !inputs.is_empty() => c
            .unusable(&inputs)
            .map(|why| format!("{why}; caching is off")),
        _ => None,
    };
    let cache = plan.cache.as_ref().filter(|_| cache_off.is_none());
    let workers = plan.files_at_once.max(1);
    let at_once = sources.len().clamp(1, workers);
    let read = ReadPlan {
        readers: plan.readers.unwrap_or(parallel::cores() / at_once).max(1),
        need,
        ..ReadPlan::default()
    };
    let job = Job {
        cache,
        plan: read,
        defer: plan.defer_cache_write && sources.len() == 1,
        writes_off: std::sync::atomic::AtomicBool::new(false),
        need,
    };
    let outcomes = parallel::each_on(sources.len(), workers, progress, |i, report| {
        job.load_one(&sources[i], i, report)
    });
    let mut out = Opened {
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
    out.profile = Profile::of_files(loaded);
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

/// The sources of export files given by path.
pub fn files(paths: &[PathBuf]) -> Vec<Source> {
    paths.iter().cloned().map(Source::File).collect()
}

/// The result of [`load`]: the files opened, as one profile, and what
/// could not be or was said of them.
pub struct Opened {
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
    /// A cache entry left for the caller to write
    /// ([`LoadPlan::defer_cache_write`]).
    pub unwritten: Option<UnwrittenCache>,
    /// The nsys reports that nsys exported in this load (the others were
    /// read from an earlier export or the cache).
    pub exported: Vec<PathBuf>,
    /// The cache and every input with its identity before it was read,
    /// when the cache is on and every input is a file that loaded.
    keyed: Option<(CacheDir, Vec<(PathBuf, cache::Key)>)>,
}

impl Opened {
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
    /// Writes the entry for `p` (the profile the deferring load
    /// returned): the entry written, `Ok(None)` when the input changed
    /// while it was read (nothing written), or why caching is off (one
    /// line).
    pub fn write(self, p: &Profile) -> Result<Option<PathBuf>, String> {
        if cache::Key::of(&self.input).ok().as_ref() != Some(&self.key) {
            return Ok(None);
        }
        match p.file_models().next() {
            Some(file) => self.write_file(file),
            None => Ok(None),
        }
    }

    /// [`UnwrittenCache::write`] from the file's own model.
    fn write_file(self, file: &FileProfile) -> Result<Option<PathBuf>, String> {
        if cache::Key::of(&self.input).ok().as_ref() != Some(&self.key) {
            return Ok(None);
        }
        let entry = cache::store(&self.cache.dir, &self.key, file)
            .map_err(|e| format!("{e}; caching is off"))?;
        cache::evict(&self.cache.dir, self.cache.cap_bytes, &entry);
        Ok(Some(entry))
    }
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
    profile: Result<FileProfile, LoadError>,
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
            progress(i, LoadStage::Cache, 0);
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
                let mut starting = || progress(i, LoadStage::Exporting, 0);
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
        progress(i, LoadStage::Linking, 0);
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
                progress(i, LoadStage::WritingCache, 0);
                match entry.write_file(&one) {
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
fn name_as_given(p: &mut FileProfile, path: &std::path::Path) {
    for f in &mut p.files {
        f.path = path.to_path_buf();
    }
    if let ([f], [host]) = (&p.files[..], &mut p.hosts[..])
        && f.host.is_none()
    {
        *host = identity::stem_host(path);
    }
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
        let needing = |cache: Option<&CacheDir>, need| LoadPlan {
            need,
            ..LoadPlan::cached(cache)
        };
        let part = load(
            &sources,
            &needing(Some(&cache), Need::Gpu),
            &mut |_, _, _| {},
        );
        let full = load(&sources, &needing(None, Need::All), &mut |_, _, _| {});
        assert!(part.errors.is_empty());
        let (p, f) = (&part.profile, &full.profile);
        assert!(!f.runtime.is_empty() && !f.nvtx.is_empty());
        assert!(p.runtime.is_empty() && p.nvtx.is_empty());
        let rows = |p: &Profile| {
            (0..p.gpu.len())
                .map(|r| (p.gpu.start(r), p.gpu.lane(r)))
                .collect::<Vec<_>>()
        };
        assert_eq!(rows(p), rows(f));
        assert!(part.cache_use.is_empty() && part.analyses_slot("s").is_none());
        assert!(!cache.dir.exists() || std::fs::read_dir(&cache.dir).unwrap().count() == 0);
        // Cached (by a full load), a GPU-only load opens the whole entry.
        load(
            &sources,
            &needing(Some(&cache), Need::All),
            &mut |_, _, _| {},
        );
        let hit = load(
            &sources,
            &needing(Some(&cache), Need::Gpu),
            &mut |_, _, _| {},
        );
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
        let plan = |cache: Option<&CacheDir>, files_at_once| LoadPlan {
            files_at_once,
            ..LoadPlan::cached(cache)
        };
        let one_by_one = load(&sources, &plan(None, 1), &mut |_, _, _| {});
        let at_once = load(&sources, &plan(None, 4), &mut |_, _, _| {});
        let errors = |l: &Opened| l.errors.iter().map(|e| e.to_string()).collect::<Vec<_>>();
        assert_eq!(errors(&one_by_one).len(), 1);
        assert_eq!(errors(&one_by_one), errors(&at_once));
        let want = report_json(&one_by_one.profile);
        assert_eq!(report_json(&at_once.profile), want);

        // From the cache: written at once, then read at once.
        let cache = CacheDir {
            dir: dir.join("cache"),
            cap_bytes: cache::DEFAULT_CAP,
        };
        let written = load(&sources, &plan(Some(&cache), 4), &mut |_, _, _| {});
        assert_eq!(written.cache_use.len(), 4);
        assert_eq!(report_json(&written.profile), want);
        let hits = load(&sources, &plan(Some(&cache), 4), &mut |_, _, _| {});
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
