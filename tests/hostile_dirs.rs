//! One bad entry among good ones: a directory of a job's files where one is
//! damaged, missing, not a file, or named in bytes that are not UTF-8.
//! Each bad one gets its own line and exit 1; every other file still loads.

mod common;
use common::*;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Command;

fn copy(fixture: &str, to: &Path) {
    std::fs::copy(root().join(fixture), to).unwrap();
}

#[test]
fn a_negative_nvtx_text_id_names_no_string_and_loses_no_file() {
    let d = temp_dir("hostile_text_id");
    let dir = d.join("job");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("a.sqlite");
    copy("fixtures/two_node_a.sqlite", &bad);
    copy("fixtures/two_node_b.sqlite", &dir.join("b.sqlite"));
    // The recipe of the report: a valid database, one id out of range.
    let c = rusqlite::Connection::open(&bad).unwrap();
    c.execute(
        "UPDATE NVTX_EVENTS SET textId = -101 WHERE rowid = \
         (SELECT min(rowid) FROM NVTX_EVENTS WHERE textId IS NOT NULL)",
        [],
    )
    .unwrap();
    drop(c);
    for section in ["skew", "all", "clock", "launch", "anomalies", "stragglers"] {
        let o = rankline(&["report", section, "--no-cache", dir.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{section}: {}", stderr(&o));
    }
    let cache = d.join("cache");
    let o = rankline(&[
        "index",
        "--cache-dir",
        cache.to_str().unwrap(),
        bad.to_str().unwrap(),
        dir.join("b.sqlite").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // A line per file and the job's.
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 3, "{out}");
    assert!(
        out.lines().all(|l| l.contains("analyses stored in ")),
        "{out}"
    );
}

#[test]
fn broken_entries_in_a_directory_each_get_one_line_and_the_rest_loads() {
    let d = temp_dir("hostile_entries");
    let dir = d.join("job");
    std::fs::create_dir_all(&dir).unwrap();
    copy("fixtures/two_node_a.sqlite", &dir.join("node0.sqlite"));
    copy("fixtures/two_node_b.sqlite", &dir.join("node1.sqlite"));
    std::os::unix::fs::symlink(d.join("moved-away.sqlite"), dir.join("node2.sqlite")).unwrap();
    let fifo = std::ffi::CString::new(dir.join("node3.sqlite").as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let _socket = std::os::unix::net::UnixListener::bind(dir.join("node4.sqlite")).unwrap();
    std::fs::create_dir_all(dir.join("node5.sqlite")).unwrap();
    let (o, paths) = summary_paths(&dir);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let at = |n: &str| dir.join(n).display().to_string();
    assert_eq!(paths, vec![at("node0.sqlite"), at("node1.sqlite")]);
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    let want = [
        format!(
            "rankline: {}: a broken symlink (to {}, which does not exist)",
            at("node2.sqlite"),
            d.join("moved-away.sqlite").display()
        ),
        format!(
            "rankline: {}: not a regular file, not an nsys SQLite export",
            at("node3.sqlite")
        ),
        format!(
            "rankline: {}: not a regular file, not an nsys SQLite export",
            at("node4.sqlite")
        ),
        format!(
            "rankline: {}: is a directory, not an nsys SQLite export",
            at("node5.sqlite")
        ),
    ];
    assert_eq!(lines, want.iter().map(String::as_str).collect::<Vec<_>>());
    // Each says the same given alone.
    for (n, line) in ["node2", "node3", "node4", "node5"].iter().zip(&want) {
        let path = at(&format!("{n}.sqlite"));
        let o = rankline(&["report", "summary", "--no-cache", &path]);
        if *n == "node5" {
            // given directly, a directory is expanded
            assert_eq!(o.status.code(), Some(1));
            continue;
        }
        assert_eq!(o.status.code(), Some(1), "{n}");
        assert_eq!(stderr(&o).trim_end(), line);
    }
}

/// Runs rankline as a user other than root when the tests run as root
/// (root searches any directory), so that permissions apply.
fn rankline_unprivileged(args: &[&str]) -> std::process::Output {
    let bin = env!("CARGO_BIN_EXE_rankline");
    let mut cmd = if unsafe { libc::geteuid() } == 0 {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", bin]);
        c
    } else {
        Command::new(bin)
    };
    cmd.args(args).output().expect("run rankline")
}

#[test]
fn a_directory_listed_but_not_searched_says_permission_denied() {
    use std::os::unix::fs::PermissionsExt;
    let d = temp_dir("hostile_noexec");
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = d.join("job");
    std::fs::create_dir_all(&dir).unwrap();
    copy("fixtures/two_node_a.sqlite", &dir.join("node0.sqlite"));
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o744)).unwrap();
    let o = rankline_unprivileged(&["report", "summary", "--no-cache", dir.to_str().unwrap()]);
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).trim_end(),
        format!(
            "rankline: {}: permission denied",
            dir.join("node0.sqlite").display()
        )
    );
}

#[test]
fn of_two_copies_the_one_kept_opens_though_its_name_is_not_utf8() {
    let d = temp_dir("hostile_names");
    let dir = d.join("job");
    std::fs::create_dir_all(&dir).unwrap();
    // Sorted first, so once kept though it could not be opened.
    let odd = dir.join(OsStr::from_bytes(b"a\xff.sqlite"));
    copy("fixtures/two_node_a.sqlite", &odd);
    copy("fixtures/two_node_a.sqlite", &dir.join("b.sqlite"));
    let (o, paths) = summary_paths(&dir);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let shown = format!("{}/a\\xff.sqlite", dir.display());
    assert_eq!(paths, vec![shown.clone()]);
    assert_eq!(
        stderr(&o).trim_end(),
        format!(
            "rankline: {}/b.sqlite: same content as {shown}, read once",
            dir.display()
        )
    );
}
