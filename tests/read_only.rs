//! rankline never writes its input, and never creates files beside it.

mod common;
use common::*;
use std::time::SystemTime;

fn snapshot(dir: &std::path::Path) -> Vec<(String, Vec<u8>, SystemTime)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
                m.modified().unwrap(),
            )
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

#[test]
fn full_run_leaves_file_and_directory_unchanged() {
    let d = temp_dir("read_only");
    let src = root().join("fixtures/megatron_tp8.sqlite");
    let f = d.join("input.sqlite");
    std::fs::copy(&src, &f).unwrap();
    let before = snapshot(&d);
    for section in ["summary", "nccl", "overlap", "all"] {
        for format in ["text", "json"] {
            let o = rankline(&["report", section, f.to_str().unwrap(), "--format", format]);
            assert!(o.status.success(), "{}", stderr(&o));
        }
    }
    let after = snapshot(&d);
    assert_eq!(before.len(), after.len(), "files appeared beside the input");
    assert!(before == after, "input bytes or mtime changed");
}
