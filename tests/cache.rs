//! The columnar cache: a reopen gives the same answers, and a stale,
//! truncated or corrupted entry is detected and rebuilt, never trusted.

mod common;
use common::*;
use std::path::{Path, PathBuf};

/// A private copy of the fixture and a private cache directory.
fn report(f: &Path, cache: &Path) -> String {
    report_said(f, cache).0
}

/// `report all` as JSON through `cache`: (stdout, stderr).
fn report_said(f: &Path, cache: &Path) -> (String, String) {
    let o = rankline(&[
        "report",
        "all",
        f.to_str().unwrap(),
        "--format",
        "json",
        "--cache-dir",
        cache.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    (stdout(&o), stderr(&o))
}

fn entries(cache: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(cache)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "rlcache"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn reopen_from_cache_gives_identical_reports() {
    let (f, cache) = megatron_and_cache("cache_roundtrip");
    let no_cache = {
        let o = rankline(&[
            "report",
            "all",
            f.to_str().unwrap(),
            "--format",
            "json",
            "--no-cache",
        ]);
        stdout(&o)
    };
    let first = report(&f, &cache);
    assert_eq!(entries(&cache).len(), 1, "the first open writes one entry");
    let second = report(&f, &cache);
    assert_eq!(first, no_cache);
    assert_eq!(
        second, no_cache,
        "a reopen from the cache must give the same report"
    );
    // Nothing beside the input.
    assert_eq!(std::fs::read_dir(f.parent().unwrap()).unwrap().count(), 1);
}

#[test]
fn no_cache_writes_nothing() {
    let (f, cache) = megatron_and_cache("cache_none");
    let o = rankline(&[
        "report",
        "summary",
        f.to_str().unwrap(),
        "--no-cache",
        "--cache-dir",
        cache.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    assert!(entries(&cache).is_empty());
}

#[test]
fn stale_entry_is_rebuilt_after_the_input_changes() {
    let (f, cache) = megatron_and_cache("cache_stale");
    report(&f, &cache);
    let old = entries(&cache);
    // Same bytes, new mtime: a different key, so a new entry is built.
    let t = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(&f)
        .unwrap()
        .set_modified(t)
        .unwrap();
    let again = report(&f, &cache);
    let new = entries(&cache);
    assert_eq!(new.len(), 2, "{new:?}");
    assert!(new.iter().any(|e| !old.contains(e)));
    assert!(again.contains("\"summary\""));
}

fn damaged(test: &str, damage: impl Fn(&Path)) {
    let (f, cache) = megatron_and_cache(test);
    let good = report(&f, &cache);
    let entry = entries(&cache).pop().unwrap();
    damage(&entry);
    let before = std::fs::metadata(&entry).unwrap();
    // Another reader's view of the damaged entry (as if it had it mapped).
    let held = entry.with_extension("held");
    std::fs::hard_link(&entry, &held).unwrap();
    let held_bytes = std::fs::read(&held).unwrap();
    let (again, said) = report_said(&f, &cache);
    assert_eq!(again, good, "a damaged entry must not change the answers");
    // Said once, naming the input: the rebuild is not silent.
    let rejected: Vec<&str> = said
        .lines()
        .filter(|l| l.contains("cache entry rejected ("))
        .collect();
    assert_eq!(rejected.len(), 1, "{said}");
    assert!(
        rejected[0].contains(f.to_str().unwrap()) && rejected[0].ends_with("; rebuilt"),
        "{said}"
    );
    let after = std::fs::metadata(&entry).unwrap();
    // Rebuilt whole, and replaced by a rename: the old file is untouched.
    use std::os::unix::fs::MetadataExt;
    assert!(after.len() > 0 && before.ino() != after.ino());
    assert_eq!(std::fs::read(&held).unwrap(), held_bytes);
    let (third, said) = report_said(&f, &cache);
    assert_eq!(third, good);
    assert!(!said.contains("rejected"), "{said}");
}

#[test]
fn truncated_entry_is_rebuilt() {
    damaged("cache_truncated", |e| {
        let len = std::fs::metadata(e).unwrap().len();
        std::fs::File::options()
            .write(true)
            .open(e)
            .unwrap()
            .set_len(len / 2)
            .unwrap();
    });
}

#[test]
fn corrupted_entry_is_rebuilt() {
    damaged("cache_corrupt", |e| {
        let mut b = std::fs::read(e).unwrap();
        let at = b.len() - 100;
        b[at] ^= 0xFF;
        std::fs::write(e, b).unwrap();
    });
}

/// Sets an entry's last use (mtime and atime) `hours` into the past.
fn used_hours_ago(entry: &Path, hours: u64) {
    let t = std::time::SystemTime::now() - std::time::Duration::from_secs(hours * 3600);
    let times = std::fs::FileTimes::new().set_accessed(t).set_modified(t);
    std::fs::File::options()
        .write(true)
        .open(entry)
        .unwrap()
        .set_times(times)
        .unwrap();
}

/// Three copies of a small fixture, each a cache entry of about 12 kB.
fn three_inputs(test: &str) -> (Vec<PathBuf>, PathBuf) {
    let d = temp_dir(test);
    let files = ["a", "b", "c"]
        .iter()
        .map(|name| {
            let f = d.join(format!("{name}.sqlite"));
            std::fs::copy(root().join("fixtures/two_node_a.sqlite"), &f).unwrap();
            f
        })
        .collect();
    (files, d.join("cache"))
}

fn summary_with_cap(f: &Path, cache: &Path) {
    // `report all`: `report summary` alone reads only counts, and a
    // partial read is never cached.
    let o = rankline(&[
        "report",
        "all",
        f.to_str().unwrap(),
        "--cache-dir",
        cache.to_str().unwrap(),
        "--cache-cap-gb",
        "0.00002",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn cap_evicts_the_oldest_entries() {
    let (files, cache) = three_inputs("cache_cap");
    for (i, f) in files.iter().enumerate() {
        summary_with_cap(f, &cache);
        let entry = rankline::profile::cache::entry_path(&cache, f).unwrap();
        used_hours_ago(&entry, 3 - i as u64);
    }
    // A 20 kB cap keeps only the newest one (it was just written).
    let left = entries(&cache);
    assert_eq!(left.len(), 1, "{left:?}");
    let newest = rankline::profile::cache::entry_path(&cache, &files[2]).unwrap();
    assert_eq!(left[0], newest);
}

#[test]
fn an_entry_used_in_the_last_hour_is_not_evicted_above_the_cap() {
    let (files, cache) = three_inputs("cache_cap_in_use");
    let entry = |f: &Path| rankline::profile::cache::entry_path(&cache, f).unwrap();
    for f in &files[..2] {
        summary_with_cap(f, &cache);
        used_hours_ago(&entry(f), 3);
    }
    // b is read again: in use now (another rankline may have it mapped).
    summary_with_cap(&files[1], &cache);
    summary_with_cap(&files[2], &cache);
    let mut left = entries(&cache);
    left.sort();
    let mut expected = vec![entry(&files[1]), entry(&files[2])];
    expected.sort();
    assert_eq!(
        left, expected,
        "a (unused for 3 h) goes, b stays above the cap"
    );
}

#[test]
fn a_rewritten_input_with_its_mtime_restored_is_not_served_from_the_cache() {
    let d = temp_dir("cache_rewritten");
    let f = d.join("capture.sqlite");
    let (a, b) = (
        root().join("fixtures/two_node_a.sqlite"),
        root().join("fixtures/two_node_b.sqlite"),
    );
    assert_eq!(
        std::fs::metadata(&a).unwrap().len(),
        std::fs::metadata(&b).unwrap().len()
    );
    std::fs::copy(&a, &f).unwrap();
    let cache = d.join("cache");
    let first = report(&f, &cache);
    let mtime = std::fs::metadata(&f).unwrap().modified().unwrap();
    // Another capture of the same size, written in place; `touch -r`.
    {
        use std::io::Write;
        let mut w = std::fs::File::options().write(true).open(&f).unwrap();
        w.write_all(&std::fs::read(&b).unwrap()).unwrap();
        w.set_modified(mtime).unwrap();
    }
    assert_eq!(std::fs::metadata(&f).unwrap().modified().unwrap(), mtime);
    let truth = stdout(&rankline(&[
        "report",
        "all",
        f.to_str().unwrap(),
        "--format",
        "json",
        "--no-cache",
    ]));
    assert_ne!(truth, first, "the two captures report differently");
    assert_eq!(report(&f, &cache), truth, "the new capture's figures");
    assert_eq!(report(&f, &cache), truth, "and again, from its own entry");
}

#[test]
fn only_rankline_temp_files_are_removed_from_the_cache_dir() {
    let (f, cache) = megatron_and_cache("cache_foreign_tmp");
    std::fs::create_dir_all(&cache).unwrap();
    let foreign = cache.join(".foo.tmp");
    std::fs::write(&foreign, "someone else's").unwrap();
    used_hours_ago(&foreign, 48);
    // A killed index of this host (no such pid): removed at once.
    let killed = dead_temp_of_this_host(&cache);
    std::fs::write(&killed, vec![0u8; 1000]).unwrap();
    // Another node's write, an hour old: it may still be going on.
    let other_node = cache.join(".rankline-0123456789abcdef.rlcache.77@other-node.tmp");
    std::fs::write(&other_node, vec![0u8; 1000]).unwrap();
    used_hours_ago(&other_node, 2);
    report(&f, &cache);
    assert!(
        foreign.exists(),
        "a file rankline did not write is left alone"
    );
    assert!(
        !killed.exists(),
        "the temp of a dead writer on this host goes"
    );
    assert!(other_node.exists(), "another node's temp stays for 24 h");
    assert_eq!(entries(&cache).len(), 1);
}

/// The effective uid, from /proc (no libc).
fn euid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

/// Runs rankline with `env` set and `unset` removed.
fn rankline_env(args: &[&str], env: &[(&str, &str)], unset: &[&str]) -> std::process::Output {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_rankline"));
    c.args(args).current_dir(root());
    for (k, v) in env {
        c.env(k, v);
    }
    for k in unset {
        c.env_remove(k);
    }
    c.output().unwrap()
}

/// `index` fails with one line saying why, and `report` works without the
/// cache, saying once that caching is off and why.
fn cache_unusable(f: &Path, cache_args: &[&str], env_unset: &[&str], why: &str) {
    let file = f.to_str().unwrap();
    let mut args = vec!["index", file];
    args.extend_from_slice(cache_args);
    let o = rankline_env(
        &args,
        &[("XDG_CACHE_HOME", test_cache_home().to_str().unwrap())],
        env_unset,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!stdout(&o).contains("cached"), "{}", stdout(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("rankline: ") && err.contains(why), "{err}");
    // `report all` writes an entry (`report summary` reads only counts).
    let mut args = vec!["report", "all", file];
    args.extend_from_slice(cache_args);
    let o = rankline_env(
        &args,
        &[("XDG_CACHE_HOME", test_cache_home().to_str().unwrap())],
        env_unset,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("devices"), "{}", stdout(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(why) && err.contains("caching is off"), "{err}");
}

#[test]
fn index_fails_when_the_cache_dir_is_a_file() {
    let (f, cache) = megatron_and_cache("cache_dir_is_file");
    std::fs::write(&cache, "not a directory").unwrap();
    let c = cache.to_str().unwrap();
    cache_unusable(&f, &["--cache-dir", c], &[], "not a directory");
    // Below a file: the directory cannot be created.
    let below = cache.join("sub");
    cache_unusable(
        &f,
        &["--cache-dir", below.to_str().unwrap()],
        &[],
        "cannot create",
    );
    assert_eq!(std::fs::read_to_string(&cache).unwrap(), "not a directory");
}

#[test]
fn index_fails_without_a_home_for_the_cache() {
    let (f, _) = megatron_and_cache("cache_no_home");
    cache_unusable(&f, &[], &["HOME", "XDG_CACHE_HOME"], "no cache directory");
}

#[test]
fn index_fails_when_the_cache_dir_is_the_inputs_directory() {
    let (f, _) = megatron_and_cache("cache_beside_input");
    let dir = f.parent().unwrap().to_str().unwrap().to_string();
    cache_unusable(
        &f,
        &["--cache-dir", &dir],
        &[],
        "never writes beside its input",
    );
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        1,
        "nothing beside the input"
    );
}

#[test]
fn index_fails_when_the_cache_dir_is_not_writable() {
    if euid() == Some(0) {
        eprintln!("SKIPPED: running as root, permission bits do not stop writes");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let (f, cache) = megatron_and_cache("cache_unwritable");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o555)).unwrap();
    cache_unusable(
        &f,
        &["--cache-dir", cache.to_str().unwrap()],
        &[],
        "cannot write",
    );
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn the_timeline_is_told_once_that_caching_is_off() {
    use rankline::tui::data::{self, LoadMsg};
    let (f, cache) = megatron_and_cache("cache_off_timeline");
    std::fs::write(&cache, "not a directory").unwrap();
    // Found before loading (a file), and only when writing (below a file).
    for dir in [cache.clone(), cache.join("sub")] {
        let c = rankline::profile::CacheDir {
            dir,
            cap_bytes: 1 << 30,
        };
        let mut said = Vec::new();
        let settings = rankline::analysis::Settings::default();
        data::load(
            &[rankline::profile::Source::File(f.clone())],
            Some(&c),
            &settings,
            &mut |m| {
                if let LoadMsg::CacheOff(why) = m {
                    said.push(why);
                }
            },
        );
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("caching is off"), "{said:?}");
    }
}

#[test]
fn index_builds_caches_without_the_ui() {
    let (f, cache) = megatron_and_cache("cache_index");
    let o = rankline(&[
        "index",
        f.to_str().unwrap(),
        "missing.sqlite",
        "--cache-dir",
        cache.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("megatron.sqlite: cached"),
        "{}",
        stdout(&o)
    );
    assert!(stderr(&o).contains("missing.sqlite: no such file"));
    assert_eq!(entries(&cache).len(), 1);
    let o = rankline(&[
        "index",
        f.to_str().unwrap(),
        "--cache-dir",
        cache.to_str().unwrap(),
    ]);
    assert!(stdout(&o).contains("already cached"), "{}", stdout(&o));
}

/// A symbolic link at an entry's name (another user of a shared cache
/// directory may put one there) is replaced by the rebuilt entry, never
/// written through: the file it points at is untouched.
#[test]
fn a_symlink_at_an_entry_name_is_replaced_not_written_through() {
    let (f, cache) = megatron_and_cache("cache_symlink_entry");
    let good = report(&f, &cache);
    let victim = cache.with_file_name("victim.txt");
    std::fs::write(&victim, "mine").unwrap();
    let mut planted = Vec::new();
    for e in std::fs::read_dir(&cache).unwrap() {
        let path = e.unwrap().path();
        if path.is_file() {
            std::fs::remove_file(&path).unwrap();
            std::os::unix::fs::symlink(&victim, &path).unwrap();
            planted.push(path);
        }
    }
    assert!(
        planted.len() >= 2,
        "the model and its analyses: {planted:?}"
    );
    assert_eq!(report(&f, &cache), good);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine");
    for p in &planted {
        let meta = std::fs::symlink_metadata(p).unwrap();
        assert!(
            meta.is_file(),
            "{} rebuilt in place of the link",
            p.display()
        );
    }
}
