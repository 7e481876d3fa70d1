//! A bookmarks file that is not one cannot hang, flood memory or lie:
//! only a regular file of at most 16 MiB is read, opened without blocking
//! (a FIFO there froze `report bookmarks`, `export` and the timeline; a
//! link to /dev/zero grew without end), and a bookmark whose window ends
//! before it starts is refused, neither listed nor exported.

mod common;

use common::nodes::mkfifo;
use common::{root, stderr, stdout, temp_dir};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Far above a normal run: only a hang gets near it.
const HANG_AFTER: Duration = Duration::from_secs(60);

/// A copy of a small fixture, and a state directory beside it.
fn setup(test: &str) -> (PathBuf, PathBuf) {
    let d = temp_dir(test);
    let f = d.join("in.sqlite");
    std::fs::copy(root().join("fixtures/two_node_a.sqlite"), &f).unwrap();
    (f, d.join("state"))
}

/// Runs rankline with `state` as the state directory, killed if it hangs.
fn run(state: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rankline"))
        .args(args)
        .env("XDG_STATE_HOME", state)
        .env("XDG_CACHE_HOME", common::test_cache_home())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > HANG_AFTER {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!("rankline {args:?} hung; stderr: {}", stderr(&o));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Where the capture of `input` keeps its bookmarks (not made yet).
fn bookmarks_file(input: &Path, state: &Path) -> PathBuf {
    let o = run(
        state,
        &[
            "report",
            "bookmarks",
            "--format",
            "json",
            input.to_str().unwrap(),
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let file = PathBuf::from(v["file"].as_str().unwrap());
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    file
}

/// `report bookmarks` says the file in one line; `export` leaves the
/// bookmarks out and says so; both end.
fn assert_refused(input: &Path, state: &Path, problem: &str) {
    let i = input.to_str().unwrap();
    let o = run(state, &["report", "bookmarks", "--no-cache", i]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains(problem), "{text}");
    let out = input.with_file_name("t.json");
    let o = run(
        state,
        &["export", "--no-cache", "--out", out.to_str().unwrap(), i],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("bookmarks left out of the trace: ") && err.contains(problem),
        "{err}"
    );
}

#[test]
fn a_fifo_as_the_bookmarks_file_is_refused_not_waited_on() {
    let (input, state) = setup("bookmarks_fifo");
    let file = bookmarks_file(&input, &state);
    mkfifo(&file);
    assert_refused(&input, &state, "not a regular file");
}

#[test]
fn a_link_to_dev_zero_is_refused_not_read() {
    let (input, state) = setup("bookmarks_dev_zero");
    let file = bookmarks_file(&input, &state);
    std::os::unix::fs::symlink("/dev/zero", &file).unwrap();
    assert_refused(&input, &state, "not a regular file");
}

#[test]
fn a_file_over_16_mib_is_refused_not_read() {
    let (input, state) = setup("bookmarks_huge");
    let file = bookmarks_file(&input, &state);
    // Sparse: 3 GB said, nothing on disk.
    std::fs::File::create(&file)
        .unwrap()
        .set_len(3_000_000_000)
        .unwrap();
    assert_refused(
        &input,
        &state,
        "is 3000000000 bytes, over the 16 MiB a bookmarks file can be",
    );
}

#[test]
fn a_bookmark_whose_window_is_reversed_or_overflows_is_neither_listed_nor_exported() {
    let (input, state) = setup("bookmarks_windows");
    let file = bookmarks_file(&input, &state);
    let mark = |name: &str, w: [i64; 2]| {
        serde_json::json!({"name": name, "group": null, "instance": null,
            "window_ns": w, "created": "2026-12-04T22:15:00Z"})
    };
    let stored = serde_json::json!({"inputs": [], "bookmarks": [
        mark("reversed", [5, 1]),
        mark("kept", [1_000, 2_000_000]),
        mark("absurd", [i64::MAX, i64::MIN]),
        mark("overflowing", [i64::MIN, i64::MAX]),
    ]});
    std::fs::write(&file, stored.to_string()).unwrap();
    let i = input.to_str().unwrap();
    let o = run(&state, &["report", "bookmarks", "--format", "json", i]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let names: Vec<&str> = v["bookmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["kept"]);
    assert!(
        v["left_out"]
            .as_str()
            .is_some_and(|s| s.contains("3 bookmarks left out")),
        "{v}"
    );
    let out = input.with_file_name("t.json");
    let o = run(
        &state,
        &["export", "--no-cache", "--out", out.to_str().unwrap(), i],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("3 bookmarks left out"),
        "{}",
        stderr(&o)
    );
    assert_eq!(common::bookmark_markers(&out), ["bookmark kept"]);
}
