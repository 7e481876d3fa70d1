//! The exit-code rule and the process behaviour around it: 0 success, 1 an
//! input could not be read or analysed, 2 usage error; inputs given twice
//! are read once; a FIFO never hangs; the timeline refuses a non-terminal.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs rankline and fails the test, instead of hanging, if it has not
/// ended within 20 s.
fn rankline_within_deadline(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rankline"))
        .args(args)
        .env("XDG_CACHE_HOME", test_cache_home())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run rankline");
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("rankline {args:?} still running after 20 s: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn mkfifo(dir: &Path, name: &str) -> PathBuf {
    let f = dir.join(name);
    let ok = Command::new("mkfifo")
        .arg(&f)
        .status()
        .expect("run mkfifo")
        .success();
    assert!(ok, "mkfifo {}", f.display());
    f
}

#[test]
fn a_fifo_is_refused_at_once_wherever_a_file_is_read() {
    let d = temp_dir("exit_fifo");
    let fifo = mkfifo(&d, "capture.sqlite");
    let fifo = fifo.to_str().unwrap();
    let cache = d.join("cache");
    let cache = cache.to_str().unwrap();
    // An input: exit 1, one line naming it.
    for args in [
        &["report", "summary", "--no-cache", fifo][..],
        &["report", "summary", "--cache-dir", cache, fifo],
        &["index", "--cache-dir", cache, fifo],
        &["bench", fifo],
    ] {
        let o = rankline_within_deadline(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert_one_line_error(&o, fifo, "not a regular file");
    }
    // The keymap is configuration: a usage error, exit 2.
    let keymap = mkfifo(&d, "keymap.toml");
    let keymap = keymap.to_str().unwrap();
    let o = rankline_within_deadline(&["fixtures/megatron_tp8.sqlite", "--keymap", keymap]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_one_line_error(&o, keymap, "not a regular file");
}

#[test]
fn the_timeline_refuses_a_stdout_that_is_not_a_terminal() {
    let o = rankline_within_deadline(&["fixtures/megatron_tp8.sqlite"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "drew into the pipe");
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("rankline: ") && err.contains("rankline report"),
        "{err}"
    );
}

#[test]
fn bench_failures_are_input_failures_and_bad_phases_usage_errors() {
    let o = rankline_within_deadline(&["bench", "no/such/file.sqlite"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_one_line_error(&o, "no/such/file.sqlite", "No such file");
    let o = rankline_within_deadline(&["bench", "--phase", "bogus", "x.sqlite"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}

/// Kernels over all devices and the number of files, from `report summary`.
fn kernels_and_files(o: &Output) -> (u64, usize) {
    let v: Value = serde_json::from_str(&stdout(o)).expect("json");
    let kernels = v["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["kernels"].as_u64().unwrap())
        .sum();
    (kernels, v["files"].as_array().unwrap().len())
}

fn summary(files: &[&Path]) -> Output {
    let mut args = vec!["report", "summary", "--no-cache", "--format", "json"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    rankline_within_deadline(&args)
}

#[test]
fn an_input_given_twice_is_read_once_with_one_warning() {
    let d = temp_dir("exit_duplicates");
    let a = d.join("a.sqlite");
    std::fs::copy(root().join("fixtures/two_node_a.sqlite"), &a).unwrap();
    let link = d.join("link.sqlite");
    std::os::unix::fs::symlink(&a, &link).unwrap();
    let hard = d.join("hard.sqlite");
    std::fs::hard_link(&a, &hard).unwrap();
    let copy = d.join("copy.sqlite");
    std::fs::copy(&a, &copy).unwrap();

    let once = summary(&[&a]);
    assert_eq!(once.status.code(), Some(0), "{}", stderr(&once));
    let (kernels, files) = kernels_and_files(&once);
    assert!(kernels > 0 && files == 1);

    for (second, why) in [
        (&a, "same file"),
        (&link, "same file"),
        (&hard, "same file"),
        (&copy, "same content"),
    ] {
        let o = summary(&[&a, second]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(kernels_and_files(&o), (kernels, 1), "{why}: counted twice");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(
            err.trim_end(),
            format!(
                "rankline: {}: {why} as {}, read once",
                second.display(),
                a.display()
            )
        );
    }

    // Two different captures are both read.
    let b = root().join("fixtures/two_node_b.sqlite");
    let o = summary(&[&a, &b]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(kernels_and_files(&o).1, 2);
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));

    // `index` builds one entry, and says so for the dropped copy.
    let cache = d.join("cache");
    let o = rankline_within_deadline(&[
        "index",
        "--cache-dir",
        cache.to_str().unwrap(),
        a.to_str().unwrap(),
        copy.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 1, "{}", stdout(&o));
    assert!(stderr(&o).contains("same content as"), "{}", stderr(&o));
}

#[test]
fn a_bad_input_among_good_ones_is_named_the_rest_reported_exit_1() {
    let d = temp_dir("exit_partial");
    let bad = d.join("bad.sqlite");
    std::fs::write(&bad, b"not a database").unwrap();
    let a = root().join("fixtures/two_node_a.sqlite");
    let b = root().join("fixtures/two_node_b.sqlite");
    let o = summary(&[&a, &bad, &b]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_one_line_error(&o, bad.to_str().unwrap(), "not an SQLite database");
    assert_eq!(kernels_and_files(&o).1, 2);
}
