//! A cache entry's temp file never outlives its writer on this host: a
//! signal during the write removes it, and any cache open (not only a
//! write) removes what a dead run left.

mod common;
use common::*;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::Command;

fn temps(cache: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(cache)
        .map(|d| {
            d.map(|e| e.unwrap().path())
                .filter(|p| p.to_string_lossy().ends_with(".tmp"))
                .collect()
        })
        .unwrap_or_default()
}

/// A private copy of the fixture and a cache directory beside it.
#[test]
fn sigterm_during_an_index_write_removes_its_temp_file() {
    let (f, cache) = megatron_and_cache("cache_temp_sigterm");
    let fifo = cache.with_file_name("held");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_rankline"))
        .args(["index", "--cache-dir"])
        .arg(&cache)
        .arg(&f)
        .env("RANKLINE_TEST_HOLD_CACHE_WRITE", &fifo)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Blocks until the write, its temp file created, holds.
    let mut line = String::new();
    std::io::BufReader::new(std::fs::File::open(&fifo).unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "writing\n");
    assert_eq!(temps(&cache).len(), 1, "the write is under way");
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    assert_eq!(child.wait().unwrap().code(), Some(143));
    assert_eq!(
        temps(&cache),
        Vec::<PathBuf>::new(),
        "removed on the signal"
    );
}

#[test]
fn a_cache_open_that_writes_nothing_removes_a_dead_runs_temp() {
    let (f, cache) = megatron_and_cache("cache_temp_open");
    let index = rankline(&[
        "index",
        "--cache-dir",
        cache.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    assert!(index.status.success(), "{}", stderr(&index));
    // A killed index of this host (a pid above pid_max).
    let dead = dead_temp_of_this_host(&cache);
    std::fs::write(&dead, vec![0u8; 1000]).unwrap();
    let args = [
        "report",
        "summary",
        "--cache-dir",
        cache.to_str().unwrap(),
        f.to_str().unwrap(),
    ];
    let o = rankline(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("cached"),
        "nothing was written: {}",
        stderr(&o)
    );
    assert!(!dead.exists(), "removed by an open");
}
