//! A job indexed as a scheduler does it: many `rankline index FILE` tasks
//! at once in one shared cache folder, then one `rankline index DIR` that
//! finds every file cached and stores the job's analyses; and a job whose
//! entries exceed the cap is told how much it needs.

mod common;

use common::*;
use std::path::{Path, PathBuf};

/// `n` distinct files (the multinode fixture's four, each copy renamed to
/// a host of its own) in `dir`.
fn job_of(dir: &Path, n: usize) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    let src = sqlite_files(&root().join("fixtures/multinode"));
    (0..n)
        .map(|i| {
            let f = dir.join(format!("node{i:03}.sqlite"));
            std::fs::copy(&src[i % src.len()], &f).unwrap();
            // A copy of a file is dropped as the same file: each its own host.
            split::set_host(&f, &format!("host{i:03}"));
            f
        })
        .collect()
}

#[test]
fn concurrent_index_tasks_share_one_cache_folder_and_the_job_index_finds_them() {
    let d = temp_dir("index_job_concurrent");
    let job = d.join("prof");
    let files = job_of(&job, 32);
    let cache = d.join("cache");
    let exe = env!("CARGO_BIN_EXE_rankline");
    let tasks: Vec<_> = files
        .iter()
        .map(|f| {
            let mut c = std::process::Command::new(exe);
            c.args(["index", "--cache-dir"])
                .arg(&cache)
                .arg(f)
                .env("XDG_CACHE_HOME", test_cache_home());
            std::thread::spawn(move || c.output().unwrap())
        })
        .collect();
    for (f, t) in files.iter().zip(tasks) {
        let o = t.join().unwrap();
        assert!(o.status.success(), "{}: {}", f.display(), stderr(&o));
        assert!(stdout(&o).contains(": cached in "), "{}", stdout(&o));
    }
    // No temp file left behind, one model entry per file.
    let names: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
    assert_eq!(names.iter().filter(|n| n.ends_with(".rlcache")).count(), 32);
    let o = rankline(&[
        "index",
        "--cache-dir",
        cache.to_str().unwrap(),
        job.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.matches(": already cached in ").count(), 32, "{out}");
    assert!(
        out.contains("job of 32 files: analyses stored in "),
        "{out}"
    );
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}

#[test]
fn an_index_over_the_cap_says_how_much_the_job_needs() {
    let d = temp_dir("index_job_over_cap");
    let job = d.join("prof");
    job_of(&job, 4);
    let cache = d.join("cache");
    let o = rankline(&[
        "index",
        "--cache-dir",
        cache.to_str().unwrap(),
        "--cache-cap-gb",
        "0.000001",
        job.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let line = err
        .lines()
        .find(|l| l.contains("over its cap of 0.000001 GB"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(line.contains("these files' entries take "), "{line}");
    assert!(
        line.ends_with("--cache-cap-gb 1 or more keeps this job"),
        "{line}"
    );
    // The job's own entries were kept while written (in use).
    let entries = std::fs::read_dir(&cache)
        .unwrap()
        .filter(|e| {
            let n = e.as_ref().unwrap().file_name();
            let n = n.to_string_lossy();
            n.ends_with(".rlcache") || n.ends_with(".rlanalysis")
        })
        .count();
    assert_eq!(entries, 4 + 4 + 1, "4 models, 4 files' analyses, the job's");
    // Under the cap: nothing said.
    let o = rankline(&[
        "index",
        "--cache-dir",
        cache.to_str().unwrap(),
        job.to_str().unwrap(),
    ]);
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}
