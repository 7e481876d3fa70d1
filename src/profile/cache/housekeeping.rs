//! Keeping the cache directory within its cap: temporary files named so
//! that only rankline's own are ever removed (and only when their writer is
//! gone), and eviction of the least recently used entries, never of one
//! used in the last hour (another rankline may have it mapped). The
//! exports made of nsys reports, in [`EXPORTS`], count as entries too.

pub use crate::profile::scratch::TempFile;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

const TEMP_PREFIX: &str = ".rankline-";
/// The subdirectory of the cache directory that holds exports of nsys
/// reports (`<16 hex>.sqlite`; their temp directories are named as temp
/// files are).
pub const EXPORTS: &str = "exports";
/// A file of stored analyses' extension.
pub const ANALYSES_EXT: &str = "rlanalysis";
/// An export's extension.
const EXPORT_EXT: &str = "sqlite";
const TEMP_SUFFIX: &str = ".tmp";
/// A temp file whose writer cannot be checked (another host, or no /proc)
/// is abandoned after this long: caches on shared file systems are written
/// from many nodes, and a big entry can take minutes to write.
const FOREIGN_TEMP_AGE: Duration = Duration::from_secs(24 * 3600);
/// Entries used more recently than this are never evicted: on NFS/Lustre a
/// reader that has the file mapped can fault when it is deleted.
pub const IN_USE: Duration = Duration::from_secs(3600);

/// The temporary name an entry is written under before its rename: it
/// carries this host and pid so that a later run can tell whether the
/// writer is gone.
pub fn temp_name(entry_name: &str) -> String {
    format!(
        "{TEMP_PREFIX}{entry_name}.{}@{}{TEMP_SUFFIX}",
        std::process::id(),
        host()
    )
}

/// A fresh temp file for `entry_name` in `dir`, registered so that an
/// ending signal removes it. Created exclusively and never through a
/// symlink (`O_EXCL`, `O_NOFOLLOW`): in a shared cache directory another
/// user may have put anything at a name. What a dead run of this pid left
/// there is removed first, never truncated or written through.
pub fn create_temp(dir: &Path, entry_name: &str) -> std::io::Result<(TempFile, std::fs::File)> {
    use std::os::unix::fs::OpenOptionsExt;
    let temp = TempFile::registered(dir.join(temp_name(entry_name)));
    let _ = std::fs::remove_file(temp.path());
    let file = std::fs::File::options()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(temp.path())?;
    Ok((temp, file))
}

/// Opens the entry at `path` to read it: `Ok(None)` when there is none,
/// `Err(why)` when what is there is not a regular file (a symbolic link is
/// never followed: in a shared directory it could point anywhere).
pub fn open_entry(path: &Path) -> Result<Option<std::fs::File>, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let opened = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path);
    let file = match opened {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err("a symbolic link, not an entry rankline wrote".into());
        }
        Err(_) => return Ok(None),
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err("not a regular file".into());
    }
    Ok(Some(file))
}

/// (entry name, pid, host) of a rankline temp name; `None` for any other
/// file name.
fn parse_temp(name: &str) -> Option<(&str, u32, &str)> {
    let inner = name.strip_prefix(TEMP_PREFIX)?.strip_suffix(TEMP_SUFFIX)?;
    let (left, host) = inner.rsplit_once('@')?;
    let (entry, pid) = left.rsplit_once('.')?;
    if !is_entry_name(entry) || host.is_empty() {
        return None;
    }
    Some((entry, pid.parse().ok()?, host))
}

/// Temp names of earlier versions: `.<16 hex>.rlcache.<pid>.tmp`.
fn is_legacy_temp(name: &str) -> bool {
    let Some(inner) = name
        .strip_prefix('.')
        .and_then(|n| n.strip_suffix(TEMP_SUFFIX))
    else {
        return false;
    };
    inner.rsplit_once('.').is_some_and(|(entry, pid)| {
        is_entry_name(entry) && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())
    })
}

/// `<16 hex digits>.rlcache` (a model), `.rlanalysis` (stored analyses) or
/// `.sqlite` (an export): the only entry names rankline writes.
pub fn is_entry_name(name: &str) -> bool {
    [super::key::EXT, ANALYSES_EXT, EXPORT_EXT]
        .iter()
        .any(|ext| {
            name.strip_suffix(ext)
                .and_then(|n| n.strip_suffix('.'))
                .is_some_and(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        })
}

/// Whether this user owns the file: in a shared cache directory, another
/// user's entries and temps are never removed, however old (their writer
/// may run on a node that cannot be checked, and they are not ours to
/// take).
fn ours(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid(2) cannot fail.
    meta.uid() == unsafe { libc::geteuid() }
}

/// Removes a file, or a temp directory with what is in it.
fn remove(path: &Path) -> std::io::Result<()> {
    if std::fs::symlink_metadata(path)?.is_dir() {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    }
}

/// The bytes a file holds, or for a (temp) directory those of its files.
fn bytes_in(path: &Path, meta: &std::fs::Metadata) -> u64 {
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|l| {
            l.filter_map(Result::ok)
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// This machine's host name, as it goes into temp names (no libc: the
/// kernel's own file, else /etc/hostname).
fn host() -> &'static str {
    static HOST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        let raw = ["/proc/sys/kernel/hostname", "/etc/hostname"]
            .iter()
            .find_map(|f| {
                let s = std::fs::read_to_string(f).ok()?;
                let s = s.trim().to_string();
                (!s.is_empty()).then_some(s)
            })
            .unwrap_or_else(|| "unknown-host".into());
        raw.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    })
}

/// Whether process `pid` of this host is known to be gone: `None` when
/// that cannot be told (no /proc).
fn pid_gone(pid: u32) -> Option<bool> {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return None;
    }
    Some(!proc.join(pid.to_string()).exists())
}

/// Whether a file named `name`, last modified at `modified`, is a temp file
/// of a rankline write that will never finish.
fn abandoned(name: &str, modified: SystemTime, now: SystemTime) -> bool {
    let old = now
        .duration_since(modified)
        .is_ok_and(|age| age > FOREIGN_TEMP_AGE);
    match parse_temp(name) {
        Some((_, pid, h)) if h == host() && pid != std::process::id() => {
            pid_gone(pid) == Some(true) || old
        }
        Some(_) => old,
        None => is_legacy_temp(name) && old,
    }
}

/// One file of the cache directory that counts toward the cap (other
/// users' files count too: the cap is the directory's size).
struct Counted {
    last_used: SystemTime,
    len: u64,
    path: PathBuf,
    /// An entry of ours (evictable) rather than a temp file being written
    /// or another user's file.
    entry: bool,
}

/// Bytes that count toward the cap in `dir` (entries, exports, temp files
/// and other users' files): what `evict` compares with the cap.
pub fn counted_bytes(dir: &Path) -> u64 {
    let now = SystemTime::now();
    let mut files = Vec::new();
    counted(dir, now, &mut files);
    counted(&dir.join(EXPORTS), now, &mut files);
    files.iter().map(|f| f.len).sum()
}

/// Removes abandoned temp files of ours, then deletes our least recently
/// used entries until the directory (temp files, exports and other users'
/// files included) fits `cap` bytes. `keep`, entries used in the last hour
/// and other users' files are never deleted.
pub fn evict(dir: &Path, cap: u64, keep: &Path) {
    let now = SystemTime::now();
    let mut files = Vec::new();
    counted(dir, now, &mut files);
    counted(&dir.join(EXPORTS), now, &mut files);
    let mut total: u64 = files.iter().map(|f| f.len).sum();
    files.sort_by_key(|f| f.last_used);
    for f in files {
        if total <= cap {
            break;
        }
        let in_use = now
            .duration_since(f.last_used)
            .map_or(true, |age| age < IN_USE);
        if f.entry && !in_use && f.path != keep && std::fs::remove_file(&f.path).is_ok() {
            total -= f.len;
        }
    }
}

/// Adds the files of `dir` that count toward the cap to `files`, removing
/// abandoned temp files on the way.
fn counted(dir: &Path, now: SystemTime, files: &mut Vec<Counted>) {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return;
    };
    for e in listing.filter_map(Result::ok) {
        let name = e.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let entry = is_entry_name(name);
        let temp = parse_temp(name).is_some() || is_legacy_temp(name);
        if !entry && !temp {
            continue;
        }
        let Ok(meta) = e.metadata() else {
            continue;
        };
        let modified = meta.modified().unwrap_or(now);
        let ours = ours(&meta);
        if temp && ours && abandoned(name, modified, now) {
            let _ = remove(&e.path());
            continue;
        }
        // The entry's mtime is touched on every read; atime helps where
        // the touch was not allowed (an entry owned by another user).
        let accessed = meta.accessed().unwrap_or(modified);
        files.push(Counted {
            last_used: modified.max(accessed),
            len: bytes_in(&e.path(), &meta),
            path: e.path(),
            entry: entry && ours && meta.is_file(),
        });
    }
}

/// [`remove_abandoned`], once per directory per run: every cache open
/// tidies what dead runs of this host left (a killed `index`, an entry set
/// aside after a fault), not only a write.
pub fn remove_abandoned_once(dir: &Path) {
    static DONE: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let mut done = DONE.lock().unwrap_or_else(|e| e.into_inner());
    if !done.iter().any(|d| d == dir) {
        done.push(dir.to_path_buf());
        drop(done);
        remove_abandoned(dir);
    }
}

/// Removes the abandoned temp files in `dir` (before a write, to give
/// their space back).
pub fn remove_abandoned(dir: &Path) {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    for e in listing.filter_map(Result::ok) {
        let name = e.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let Ok(meta) = e.metadata() else {
            continue;
        };
        if let Ok(modified) = meta.modified()
            && ours(&meta)
            && abandoned(name, modified, now)
        {
            let _ = remove(&e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_round_trip_and_foreign_names_are_not_ours() {
        let entry = "0123456789abcdef.rlcache";
        let t = temp_name(entry);
        assert!(t.starts_with(".rankline-") && t.ends_with(".tmp"), "{t}");
        assert_eq!(parse_temp(&t), Some((entry, std::process::id(), host())));
        for foreign in [
            ".foo.tmp",
            ".rankline-foo.tmp",
            ".rankline-0123456789abcdef.rlcache.12.tmp",
            ".x.rlcache.12.tmp",
            "0123456789abcdef.rlcache.bak",
        ] {
            assert_eq!(parse_temp(foreign), None, "{foreign}");
            assert!(!is_legacy_temp(foreign), "{foreign}");
        }
        assert!(is_legacy_temp(".0123456789abcdef.rlcache.4242.tmp"));
    }

    #[test]
    fn a_temp_is_abandoned_at_once_only_when_its_writer_is_gone_on_this_host() {
        let now = SystemTime::now();
        let entry = "0123456789abcdef.rlcache";
        let dead = u32::MAX - 1; // above pid_max: never a live process
        let mine_dead = format!("{TEMP_PREFIX}{entry}.{dead}@{}{TEMP_SUFFIX}", host());
        let mine_alive = format!("{TEMP_PREFIX}{entry}.1@{}{TEMP_SUFFIX}", host());
        let other_host = format!("{TEMP_PREFIX}{entry}.{dead}@not-{}{TEMP_SUFFIX}", host());
        assert!(abandoned(&mine_dead, now, now));
        assert!(!abandoned(&mine_alive, now, now), "pid 1 is alive");
        assert!(
            !abandoned(&other_host, now, now),
            "cannot check another host"
        );
        let day_ago = now - FOREIGN_TEMP_AGE - Duration::from_secs(1);
        assert!(abandoned(&other_host, day_ago, now));
        assert!(abandoned(&mine_alive, day_ago, now));
        assert!(!abandoned(".foo.tmp", day_ago, now), "not rankline's");
        assert!(abandoned(".0123456789abcdef.rlcache.7.tmp", day_ago, now));
        assert!(!abandoned(".0123456789abcdef.rlcache.7.tmp", now, now));
    }

    /// A file of `len` bytes last used `ago` before now.
    fn file(dir: &Path, name: &str, len: usize, ago: Duration) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, vec![0u8; len]).unwrap();
        let t = SystemTime::now() - ago;
        let times = std::fs::FileTimes::new().set_accessed(t).set_modified(t);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_times(times)
            .unwrap();
        path
    }

    #[test]
    fn eviction_counts_temp_files_and_keeps_entries_used_in_the_last_hour() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-tmp/cache-evict");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let hours = |h: u64| Duration::from_secs(h * 3600);
        let oldest = file(&dir, "000000000000000a.rlcache", 100, hours(5));
        let old = file(&dir, "000000000000000b.rlcache", 100, hours(4));
        let recent = file(
            &dir,
            "000000000000000c.rlcache",
            100,
            Duration::from_secs(60),
        );
        let keep = file(&dir, "000000000000000d.rlcache", 100, hours(6));
        // A write in progress (pid 1 is alive): not removed, but counted.
        let writing = file(
            &dir,
            &format!(".rankline-000000000000000e.rlcache.1@{}.tmp", host()),
            100,
            hours(2),
        );
        let foreign = file(&dir, "notes.rlcache", 100, hours(9));
        // 500 bytes of rankline's own: a 350-byte cap takes both old
        // entries only because the temp counts.
        evict(&dir, 350, &keep);
        assert!(!oldest.exists() && !old.exists());
        // Above a cap that only it exceeds, the recent entry stays.
        evict(&dir, 50, &keep);
        assert!(
            recent.exists(),
            "used a minute ago: another rankline may have it mapped"
        );
        assert!(keep.exists() && writing.exists() && foreign.exists());
    }

    #[test]
    fn exports_count_toward_the_cap_and_abandoned_export_directories_go() {
        let dir =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-tmp/cache-evict-exports");
        let _ = std::fs::remove_dir_all(&dir);
        let exports = dir.join(EXPORTS);
        std::fs::create_dir_all(&exports).unwrap();
        let hours = |h: u64| Duration::from_secs(h * 3600);
        let entry = file(&dir, "000000000000000a.rlcache", 100, hours(3));
        let old_export = file(&exports, "000000000000000b.sqlite", 300, hours(5));
        let new_export = file(&exports, "000000000000000c.sqlite", 300, hours(2));
        // An export whose rankline died (pid above pid_max): removed with
        // what nsys left in it.
        let dead = exports.join(format!(
            ".rankline-000000000000000d.sqlite.{}@{}.tmp",
            u32::MAX - 1,
            host()
        ));
        std::fs::create_dir_all(&dead).unwrap();
        std::fs::write(dead.join("000000000000000d.sqlite"), vec![0u8; 50]).unwrap();
        // 700 bytes: a 450-byte cap takes the oldest export only.
        evict(&dir, 450, &entry);
        assert!(!dead.exists(), "abandoned export directory");
        assert!(
            !old_export.exists(),
            "the least recently used file is an export"
        );
        assert!(new_export.exists() && entry.exists());
    }

    /// Gives `path` to another user; false when this user may not (not
    /// root), and the test cannot be made here.
    fn give_away(path: &Path) -> bool {
        std::os::unix::fs::lchown(path, Some(54321), Some(54321)).is_ok()
    }

    #[test]
    fn another_users_entries_and_temps_are_never_removed() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-tmp/cache-others");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let hours = |h: u64| Duration::from_secs(h * 3600);
        let dead = u32::MAX - 1;
        let temp = |n: u32| format!(".rankline-000000000000000{n}.rlcache.{dead}@{}.tmp", host());
        let their_entry = file(&dir, "000000000000000a.rlcache", 100, hours(9));
        let their_temp = file(&dir, &temp(1), 100, hours(48));
        let my_entry = file(&dir, "000000000000000b.rlcache", 100, hours(8));
        let my_temp = file(&dir, &temp(2), 100, hours(1));
        let keep = file(&dir, "000000000000000c.rlcache", 100, hours(1));
        if !(give_away(&their_entry) && give_away(&their_temp)) {
            eprintln!("not root: cannot give files to another user; skipped");
            return;
        }
        remove_abandoned(&dir);
        assert!(their_temp.exists(), "another user's temp, however old");
        assert!(!my_temp.exists(), "my dead writer's temp");
        // 400 bytes: a cap of 0 takes what is mine to take.
        evict(&dir, 0, &keep);
        assert!(
            their_entry.exists(),
            "another user's entry is not mine to evict"
        );
        assert!(!my_entry.exists());
    }

    #[test]
    fn a_symbolic_link_at_an_entry_name_is_never_followed() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-tmp/cache-symlink");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let target = file(&dir, "victim", 100, Duration::ZERO);
        let link = dir.join("000000000000000a.rlcache");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert_eq!(
            open_entry(&link).err().as_deref(),
            Some("a symbolic link, not an entry rankline wrote")
        );
        // A temp name taken by a link (another user's trap) is replaced,
        // and the write never reaches its target.
        let name = "000000000000000b.rlcache";
        std::os::unix::fs::symlink(&target, dir.join(temp_name(name))).unwrap();
        let (tmp, mut f) = create_temp(&dir, name).unwrap();
        std::io::Write::write_all(&mut f, b"entry").unwrap();
        assert!(!tmp.path().is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), vec![0u8; 100]);
    }
}
