//! Reading an nsys report (`.nsys-rep`, `.qdrep`) through an SQLite export
//! made with the user's own nsys, kept in the cache directory (never beside
//! the report) and reused until the report changes.
//!
//! The export is named by the report's cache key, content included, and
//! made in a temp directory that is renamed out of only once nsys has
//! succeeded: a half-written export is never taken for a whole one. On a
//! network file system nsys cannot lock its SQLite output, so it writes to
//! local temp space and the export is moved to the cache afterwards.

mod command;
mod network;

pub use super::scratch::{remove_scratch, remove_scratch_on_signals};
pub use command::{DEFAULT_TIMEOUT_S, echo_nsys_output, set_nsys_timeout};

use super::cache::{CacheDir, Key, evict, housekeeping};
use super::open::LoadError;
use super::scratch::TempDir;
use std::path::{Path, PathBuf};

/// An SQLite export of a report, ready to load.
pub struct Export {
    pub sqlite: PathBuf,
    /// nsys ran for it (else an earlier export was reused).
    pub ran_nsys: bool,
    /// The private directory it is in, removed when this is dropped
    /// (`--no-cache`).
    _private: Option<TempDir>,
}

/// The export of `report`: the one in `cache` when it is there and whole,
/// else a new one made with nsys (into `cache`, or a private temp
/// directory when there is no cache or it cannot be written). `starting`
/// is called when nsys is about to run.
pub fn export(
    report: &Path,
    cache: Option<&CacheDir>,
    starting: &mut dyn FnMut(),
) -> Result<Export, LoadError> {
    check_report(report)?;
    let mut run = |report: &Path, out: &Path| command::run(report, out, starting);
    match cache {
        Some(c) => export_into(report, c, network::is_network(&c.dir), &mut run),
        None => export_private(report, &export_name(report), &mut run),
    }
}

/// The exports' directory inside the cache directory.
pub fn exports_dir(cache: &Path) -> PathBuf {
    cache.join(housekeeping::EXPORTS)
}

/// `KEY.sqlite` without a cache: the key of the report as it is, or a
/// plain name when that cannot be taken (the export fails then anyway).
fn export_name(report: &Path) -> String {
    Key::of(report).map_or_else(|_| "export.sqlite".into(), |k| k.content_name("sqlite"))
}

/// Runs an export of a report to an output path.
type Exporter<'a> = dyn FnMut(&Path, &Path) -> Result<(), LoadError> + 'a;

/// An export named `name` into a new private directory in local temp space.
fn export_private(report: &Path, name: &str, run: &mut Exporter<'_>) -> Result<Export, LoadError> {
    let private = TempDir::local().map_err(|e| {
        LoadError::new(
            report,
            format!("cannot make a temp directory to export to ({e})"),
        )
    })?;
    let sqlite = private.path().join(name);
    run(report, &sqlite)?;
    Ok(Export {
        sqlite,
        ran_nsys: true,
        _private: Some(private),
    })
}

/// The export of `report` in `cache`, made with `run` (nsys) when it is
/// not there: in a temp directory inside the exports directory, or in
/// local temp space when the cache is `on_network`, then renamed into
/// place. When the exports directory cannot be written, the export is a
/// private one (the cache says why it is off when its entry is written).
fn export_into(
    report: &Path,
    cache: &CacheDir,
    on_network: bool,
    run: &mut Exporter<'_>,
) -> Result<Export, LoadError> {
    let key = Key::of(report).map_err(|e| LoadError::new(report, e))?;
    let dir = exports_dir(&cache.dir);
    let name = key.content_name("sqlite");
    let sqlite = dir.join(&name);
    if is_sqlite(&sqlite) {
        // Its last use, for eviction (nothing is keyed on its times); read
        // as any input is, with every check, whoever made it.
        if let Ok(Some(f)) = housekeeping::open_entry(&sqlite) {
            let _ = f.set_modified(std::time::SystemTime::now());
        }
        return Ok(Export {
            sqlite,
            ran_nsys: false,
            _private: None,
        });
    }
    // In the exports directory, under a name that says whose it is: a
    // later run removes it if this one dies.
    let staging = std::fs::create_dir_all(&dir).and_then(|()| {
        housekeeping::remove_abandoned(&dir);
        TempDir::named(&dir.join(housekeeping::temp_name(&name)))
    });
    let Ok(staging) = staging else {
        return export_private(report, &name, run);
    };
    let made = if on_network {
        let local = export_private(report, &name, run)?;
        let moved = staging.path().join(&name);
        if std::fs::copy(&local.sqlite, &moved).is_err() {
            // Not kept, but read all the same.
            return Ok(local);
        }
        moved
    } else {
        let out = staging.path().join(&name);
        run(report, &out)?;
        out
    };
    std::fs::rename(&made, &sqlite).map_err(|e| {
        LoadError::new(
            report,
            format!("cannot move the export into {} ({e})", dir.display()),
        )
    })?;
    drop(staging);
    evict(&cache.dir, cache.cap_bytes, &sqlite);
    Ok(Export {
        sqlite,
        ran_nsys: true,
        _private: None,
    })
}

/// The report is a regular file that can be read (said as the loader says
/// it of an export).
fn check_report(report: &Path) -> Result<(), LoadError> {
    super::open::stat_input(report, "an nsys report").map(|_| ())
}

/// Whether `path` is a regular file (not a symbolic link) that starts as
/// an SQLite database does.
fn is_sqlite(path: &Path) -> bool {
    use std::io::Read;
    let mut header = [0u8; 16];
    matches!(housekeeping::open_entry(path), Ok(Some(f)) if (&f).read_exact(&mut header).is_ok())
        && &header == b"SQLite format 3\0"
}

#[cfg(test)]
mod tests;
