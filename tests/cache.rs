//! The columnar cache: a reopen gives the same answers, and a stale,
//! truncated or corrupted entry is detected and rebuilt, never trusted.

mod common;
use common::*;
use std::path::{Path, PathBuf};

/// A private copy of the fixture and a private cache directory.
fn setup(test: &str) -> (PathBuf, PathBuf) {
    let d = temp_dir(test);
    let f = d.join("input").join("megatron.sqlite");
    std::fs::create_dir_all(f.parent().unwrap()).unwrap();
    std::fs::copy(root().join("fixtures/megatron_tp8.sqlite"), &f).unwrap();
    (f, d.join("cache"))
}

fn report(f: &Path, cache: &Path) -> String {
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
    stdout(&o)
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
    let (f, cache) = setup("cache_roundtrip");
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
    let (f, cache) = setup("cache_none");
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
    let (f, cache) = setup("cache_stale");
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
    let (f, cache) = setup(test);
    let good = report(&f, &cache);
    let entry = entries(&cache).pop().unwrap();
    damage(&entry);
    let before = std::fs::metadata(&entry).unwrap().len();
    let again = report(&f, &cache);
    assert_eq!(again, good, "a damaged entry must not change the answers");
    let after = std::fs::metadata(&entry).unwrap().len();
    // Rebuilt in place: whole again, and read back cleanly.
    assert!(after > 0 && (before != after || test.contains("corrupt")));
    assert_eq!(report(&f, &cache), good);
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

#[test]
fn cap_evicts_the_oldest_entries() {
    let d = temp_dir("cache_cap");
    let cache = d.join("cache");
    let mut files = Vec::new();
    for name in ["a", "b", "c"] {
        let f = d.join(format!("{name}.sqlite"));
        std::fs::copy(root().join("fixtures/two_node_a.sqlite"), &f).unwrap();
        files.push(f);
    }
    for f in &files {
        let o = rankline(&[
            "report",
            "summary",
            f.to_str().unwrap(),
            "--cache-dir",
            cache.to_str().unwrap(),
            "--cache-cap-gb",
            "0.00002",
        ]);
        assert!(o.status.success());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Each entry is about 12 kB: a 20 kB cap keeps only the newest one.
    let left = entries(&cache);
    assert_eq!(left.len(), 1, "{left:?}");
    let newest = rankline::profile::cache::entry_path(&cache, &files[2]).unwrap();
    assert_eq!(left[0], newest);
}

#[test]
fn index_builds_caches_without_the_ui() {
    let (f, cache) = setup("cache_index");
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
