//! What rankline writes never destroys a file: `export --out` and CSV
//! `--out-dir` refuse an input (by any name, or a name an input directory
//! would read) with one line and exit 2, replace a symbolic link at the
//! name instead of writing through it, write a FIFO or character device in
//! place instead of renaming over it, and refuse a block device.

mod common;

use common::nodes::{mkfifo, mknod, reading_fifo};
use common::{rankline, root, stderr, temp_dir};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::Output;

/// A copy of a small fixture in a fresh directory: (directory, input).
fn input(test: &str) -> (PathBuf, PathBuf) {
    let d = temp_dir(test);
    let f = d.join("in.sqlite");
    std::fs::copy(root().join("fixtures/two_node_a.sqlite"), &f).unwrap();
    (d, f)
}

fn fixture_bytes() -> Vec<u8> {
    std::fs::read(root().join("fixtures/two_node_a.sqlite")).unwrap()
}

fn export(out: &Path, inputs: &[&Path]) -> Output {
    let mut args = vec!["export", "--no-cache", "--out", out.to_str().unwrap()];
    args.extend(inputs.iter().map(|p| p.to_str().unwrap()));
    rankline(&args)
}

/// Exit 2 and one line naming `path` and saying `problem`.
fn assert_refused(o: &Output, path: &Path, problem: &str) {
    common::assert_one_line_error(o, path.to_str().unwrap(), problem);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
}

#[test]
fn export_refuses_an_input_as_out() {
    let (_, f) = input("out_is_input");
    let o = export(&f, &[&f]);
    assert_refused(&o, &f, "is one of the inputs");
    assert_eq!(std::fs::read(&f).unwrap(), fixture_bytes());
    // By another name (a hard link) too.
    let other = f.with_file_name("trace.json");
    std::fs::hard_link(&f, &other).unwrap();
    let o = export(&other, &[&f]);
    assert_refused(&o, &other, "is one of the inputs");
    assert_eq!(std::fs::read(&f).unwrap(), fixture_bytes());
}

#[test]
fn export_refuses_a_file_the_input_directory_reads() {
    let d = temp_dir("out_in_input_dir");
    let job = d.join("job");
    std::fs::create_dir_all(&job).unwrap();
    let mut before = Vec::new();
    for f in common::sqlite_files(&root().join("fixtures/multinode")) {
        let to = job.join(f.file_name().unwrap());
        std::fs::copy(&f, &to).unwrap();
        before.push((to, std::fs::read(&f).unwrap()));
    }
    let out = job.join("node1.sqlite");
    let o = export(&out, &[&job]);
    assert_refused(&o, &out, "is one of the inputs");
    // Not there yet, but the next run of the directory would read it.
    let new = job.join("trace.SQLITE");
    let o = export(&new, &[&job]);
    assert_refused(&o, &new, "where rankline would read it as an input");
    assert!(!new.exists());
    for (f, bytes) in before {
        assert_eq!(std::fs::read(&f).unwrap(), bytes, "{}", f.display());
    }
    assert_eq!(std::fs::read_dir(&job).unwrap().count(), 4, "nothing new");
    // A trace beside the exports is no input.
    let fine = job.join("trace.json");
    let o = export(&fine, &[&job]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn export_replaces_a_symlink_at_out_and_leaves_its_target() {
    let (d, f) = input("out_symlink");
    let victim = d.join("notes.txt");
    std::fs::write(&victim, "mine").unwrap();
    let out = d.join("trace.json");
    std::os::unix::fs::symlink(&victim, &out).unwrap();
    let o = export(&out, &[&f]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine");
    let meta = std::fs::symlink_metadata(&out).unwrap();
    assert!(meta.is_file(), "the link was replaced by the trace");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert!(v["traceEvents"].as_array().is_some_and(|e| !e.is_empty()));
    let names: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "no temp left: {names:?}");
}

#[test]
fn export_streams_into_a_fifo_and_leaves_it_a_fifo() {
    let (d, f) = input("out_fifo");
    let fifo = d.join("pipe.json");
    mkfifo(&fifo);
    let (o, bytes) = reading_fifo(&fifo, || export(&fifo, &[&f]));
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert!(v["traceEvents"].as_array().is_some_and(|e| !e.is_empty()));
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "{kind:?}");
    // Through a symbolic link to it (`/dev/stdout`, `>(gzip)`): the same.
    let link = d.join("link.json");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    let (o, bytes) = reading_fifo(&fifo, || export(&link, &[&f]));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(serde_json::from_slice::<serde_json::Value>(&bytes).is_ok());
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
}

/// `--out /dev/null` as root replaced the system's /dev/null: a device
/// node made here stands for it (as root; elsewhere nodes cannot be made).
#[test]
fn export_writes_a_character_device_in_place_and_refuses_a_block_device() {
    let (d, f) = input("out_devices");
    let null = d.join("null");
    if !mknod(&null, libc::S_IFCHR, 1, 3) {
        eprintln!("skipped: device nodes need root");
        return;
    }
    let o = export(&null, &[&f]);
    assert!(o.status.success(), "{}", stderr(&o));
    let kind = std::fs::symlink_metadata(&null).unwrap().file_type();
    assert!(kind.is_char_device(), "{kind:?}");
    // A block device of a number no driver has: refused, and kept.
    let disk = d.join("disk");
    assert!(mknod(&disk, libc::S_IFBLK, 240, 0));
    let o = export(&disk, &[&f]);
    assert_refused(&o, &disk, "is a block device");
    let kind = std::fs::symlink_metadata(&disk).unwrap().file_type();
    assert!(kind.is_block_device(), "{kind:?}");
}

#[test]
fn export_gzips_a_gz_name_in_any_case() {
    let (d, f) = input("out_gz_case");
    let out = d.join("trace.JSON.GZ");
    let o = export(&out, &[&f]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[..2], &[0x1f, 0x8b], "gzip's magic");
}

#[test]
fn csv_out_dir_replaces_a_symlink_at_a_table_name_and_refuses_an_input() {
    let (d, f) = input("csv_symlink");
    let tables = d.join("tables");
    std::fs::create_dir_all(&tables).unwrap();
    let at = tables.join("skew.groups.csv");
    std::os::unix::fs::symlink("../in.sqlite", &at).unwrap();
    let run = || {
        rankline(&[
            "report",
            "all",
            "--no-cache",
            "--format",
            "csv",
            "--out-dir",
            tables.to_str().unwrap(),
            f.to_str().unwrap(),
        ])
    };
    let o = run();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&f).unwrap(), fixture_bytes());
    assert!(std::fs::symlink_metadata(&at).unwrap().is_file());
    let csv = std::fs::read_to_string(&at).unwrap();
    assert!(csv.starts_with("key,match_method,"), "{csv}");
    // A hard link to the input at a table's name is the input: refused,
    // before any table is written.
    std::fs::remove_dir_all(&tables).unwrap();
    std::fs::create_dir_all(&tables).unwrap();
    std::fs::hard_link(&f, &at).unwrap();
    let o = run();
    assert_refused(&o, &at, "is one of the inputs");
    assert_eq!(std::fs::read_dir(&tables).unwrap().count(), 1);
    assert_eq!(std::fs::read(&f).unwrap(), fixture_bytes());
}
