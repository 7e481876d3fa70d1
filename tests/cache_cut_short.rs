//! A cache entry cut short while it is mapped (another user of a shared
//! cache directory, a quota tool, NFS replacing it): the run ends with one
//! line naming the entry and exit 1, never SIGBUS; the entry is set aside
//! and the next run rebuilds it. The cut is made from inside rankline,
//! right after the entry was checked, through a test-only variable.

mod common;
use common::*;
use std::path::Path;

const CUT: &str = "RANKLINE_TEST_CUT_ENTRY_AFTER_OPEN";

fn report_all(f: &Path, cache: &Path, cut: bool) -> std::process::Output {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_rankline"));
    c.args(["report", "all", "--format", "json", "--cache-dir"])
        .arg(cache)
        .arg(f)
        .current_dir(root());
    if cut {
        c.env(CUT, "1");
    }
    c.output().unwrap()
}

#[test]
fn an_entry_cut_short_under_a_report_ends_it_with_one_line_and_is_rebuilt() {
    let (f, cache) = megatron_and_cache("cache_cut_short");
    let truth = report_all(&f, &cache, false);
    assert!(truth.status.success(), "{}", stderr(&truth));
    let entry = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "rlcache"))
        .expect("an entry was written");

    let cut = report_all(&f, &cache, true);
    assert_eq!(cut.status.code(), Some(1), "{cut:?}");
    assert_one_line_error(
        &cut,
        entry.to_str().unwrap(),
        "cache entry cut short while in use",
    );
    assert!(stderr(&cut).contains("set aside"), "{}", stderr(&cut));
    assert!(
        !entry.exists(),
        "set aside, so that the next run rebuilds it"
    );

    let again = report_all(&f, &cache, false);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(stdout(&again), stdout(&truth));
    assert!(entry.exists(), "rebuilt");
    let left: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(
        left.is_empty(),
        "the set-aside copy is cleaned up: {left:?}"
    );
}
