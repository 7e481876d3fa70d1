//! Clock data that cannot be right is refused, not used: a UTC stamp before
//! 2000 or a fitted drift no crystal has leaves that file out of every
//! cross-file figure (its devices form their own groups, said in a
//! warning and in `clock.files[].refused`), and a file on the boot clock is
//! known as such without `ANALYSIS_DETAILS`. On mutated copies of
//! fixtures/multinode (4 nodes × 4 GPUs, generator truth: skews under
//! 40 ms on s29).

mod common;
use common::split::copy;
use common::*;
use rusqlite::Connection;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The four nodes copied into a fresh directory; `mutate` changes node1.
fn nodes(name: &str, mutate: impl Fn(&Connection)) -> PathBuf {
    let dir = temp_dir(name);
    for n in 0..4 {
        let f = format!("node{n}.sqlite");
        let dst = copy(&root().join("fixtures/multinode").join(&f), &dir, &f);
        if n == 1 {
            mutate(&Connection::open(&dst).unwrap());
        }
    }
    dir
}

fn skew(dir: &Path, align: &str) -> Value {
    json(&[
        "report",
        "all",
        "--format",
        "json",
        "--no-cache",
        "--align",
        align,
        dir.to_str().unwrap(),
    ])
}

fn devices(g: &Value) -> Vec<String> {
    g["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap().to_string())
        .collect()
}

/// The largest start skew of the global all-reduce on stream 29 (the
/// node-local ones sharing stream 37 are paired across nodes on UTC alone,
/// as without the mutation).
fn max_start_skew_ms(v: &Value) -> f64 {
    v["skew"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["key"].as_str().unwrap().starts_with("s29"))
        .filter_map(|g| g["start_skew_ms"]["max"].as_f64())
        .fold(0.0, f64::max)
}

/// node1's devices are in groups of their own, and no group mixes them
/// with another node's.
fn assert_node1_alone(v: &Value) {
    let groups = v["skew"]["groups"].as_array().unwrap();
    let mut alone = 0;
    for g in groups {
        let d = devices(g);
        let node1 = d.iter().filter(|x| x.starts_with("node01")).count();
        assert!(node1 == 0 || node1 == d.len(), "{}: {d:?}", g["key"]);
        if node1 > 0 {
            alone += 1;
        }
    }
    assert!(alone > 0, "node1 has no group of its own");
}

#[test]
fn a_utc_stamp_of_zero_is_refused_not_shifted_by_56_years() {
    let dir = nodes("clock_refusals_utc_zero", |c| {
        c.execute(
            "UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = 0",
            [],
        )
        .unwrap();
    });
    for align in ["utc", "ends"] {
        let v = skew(&dir, align);
        let files = v["summary"]["clock"]["files"].as_array().unwrap().clone();
        let node1 = files
            .iter()
            .find(|f| f["path"].as_str().unwrap().ends_with("node1.sqlite"))
            .unwrap();
        assert_eq!(node1["isolated"], true, "{align}: {node1:#}");
        assert!(
            node1["refused"]
                .as_str()
                .unwrap()
                .contains("UTC start stamp (0 ns) is before 2000"),
            "{node1:#}"
        );
        assert_eq!(node1["offset_ms"].as_f64(), Some(0.0));
        let others_isolated = files.iter().filter(|f| f["isolated"] == true).count();
        assert_eq!(others_isolated, 1, "{align}");
        assert_node1_alone(&v);
        // The truth's skews are under 40 ms; today's 56-year shift made
        // every instance a big event.
        assert!(
            max_start_skew_ms(&v) < 40.0,
            "{align}: {}",
            max_start_skew_ms(&v)
        );
        let w = v["summary"]["warnings"].to_string();
        assert!(w.contains("clock refused for node1.sqlite"), "{w}");
    }
}

#[test]
fn a_drift_no_clock_has_is_refused_with_its_ppm() {
    // node1's kernel timestamps run 1.5× from its first kernel: the gaps
    // between its collectives are 1.5× every other node's, which no
    // clock's drift makes (the fit would find −333,333 ppm).
    let dir = nodes("clock_refusals_scaled", |c| {
        let t0: i64 = c
            .query_row(
                "SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL",
                [],
                |r| r.get(0),
            )
            .unwrap();
        for t in [
            "CUPTI_ACTIVITY_KIND_KERNEL",
            "CUPTI_ACTIVITY_KIND_MEMCPY",
            "CUPTI_ACTIVITY_KIND_MEMSET",
        ] {
            let _ = c.execute(
                &format!(
                    "UPDATE {t} SET start = ?1 + (start - ?1) * 3 / 2, \"end\" = ?1 + (\"end\" - ?1) * 3 / 2"
                ),
                [t0],
            );
        }
    });
    let v = skew(&dir, "ends");
    let files = v["summary"]["clock"]["files"].as_array().unwrap();
    let node1 = files
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with("node1.sqlite"))
        .unwrap();
    let why = node1["refused"].as_str().unwrap_or_default();
    assert_eq!(node1["isolated"], true, "{node1:#}");
    assert!(
        why.contains("run at 1.500× the pace of 3 of the 3 files"),
        "{why}"
    );
    assert!(why.contains("cannot be right"), "{why}");
    assert_node1_alone(&v);
    // The other three nodes keep their refinement and their true skews.
    for f in files.iter().filter(|f| f["isolated"] == false) {
        assert_ne!(f["method"], "utc", "{f:#}");
    }
    // (node1's own group is on its scaled clock: its skews are 1.5× too)
    let others = v["skew"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["key"].as_str().unwrap().starts_with("s29"))
        .filter(|g| !devices(g)[0].starts_with("node01"))
        .filter_map(|g| g["start_skew_ms"]["max"].as_f64())
        .fold(0.0, f64::max);
    assert!(others > 0.0 && others < 40.0, "{others}");
}

#[test]
fn a_boot_clock_file_without_analysis_details_stays_on_the_boot_clock() {
    let dir = nodes("clock_refusals_no_window", |c| {
        c.execute("DELETE FROM ANALYSIS_DETAILS", []).unwrap();
    });
    let v = skew(&dir, "utc");
    let files = v["summary"]["clock"]["files"].as_array().unwrap();
    let node1 = files
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with("node1.sqlite"))
        .unwrap();
    assert_eq!(node1["timebase"], "boot-clock", "{node1:#}");
    assert_eq!(node1["isolated"], false);
    // Taken as session-relative, UTC would give skews of hours.
    assert!(max_start_skew_ms(&v) < 40.0, "{}", max_start_skew_ms(&v));
}

#[test]
fn drift_is_null_in_json_when_not_fitted() {
    let v = common::clock_json("utc", &[root().join("fixtures/multinode")]);
    let files = v["files"].as_array().unwrap();
    assert!(!files.is_empty());
    for f in files {
        assert_eq!(f["drift_fitted"], false);
        assert!(f["drift_ppm"].is_null(), "{f:#}");
    }
}

#[test]
fn one_line_per_reason_names_every_file_it_covers() {
    let dir = temp_dir("clock_refusals_two_zero");
    for n in 0..4 {
        let f = format!("node{n}.sqlite");
        let dst = copy(&root().join("fixtures/multinode").join(&f), &dir, &f);
        if n == 1 || n == 2 {
            Connection::open(&dst)
                .unwrap()
                .execute(
                    "UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = 0",
                    [],
                )
                .unwrap();
        }
    }
    let out = text(&["report", "clock", "--no-cache", dir.to_str().unwrap()]);
    let unwrapped = out.replace("\n    ", " ");
    assert!(
        unwrapped.contains(
            "! 2 files left out of cross-file figures (node1.sqlite, node2.sqlite): its UTC start stamp (0 ns) is before 2000"
        ),
        "{out}"
    );
    assert_eq!(out.matches("is before 2000").count(), 1, "{out}");
    // the title says so, with the figure of the files kept
    assert!(
        out.starts_with("Clock alignment: collective ends, residual p90 "),
        "{out}"
    );
    // The title, wrapped within 100 columns, ends saying so.
    let title = out.split("\n  #").next().unwrap().replace("\n  ", " ");
    assert!(
        title.ends_with("2 file(s) left out: clock data cannot be right"),
        "{out}"
    );
}

#[test]
fn the_title_gives_a_figure_and_a_reason_not_a_bare_utc_only() {
    let out = text(&[
        "report",
        "clock",
        "--no-cache",
        "--align",
        "utc",
        root().join("fixtures/multinode").to_str().unwrap(),
    ]);
    let title = out.lines().next().unwrap();
    assert!(
        title.starts_with(
            "Clock alignment: UTC only (ends not asked for: --align utc; residual p90 "
        ),
        "{title}"
    );
}

#[test]
fn report_clock_has_a_rank_column_and_keeps_file_names_whole() {
    let out = text(&[
        "report",
        "clock",
        "--no-cache",
        root().join("fixtures/per_rank").to_str().unwrap(),
    ]);
    let header = out.lines().nth(1).unwrap();
    assert!(header.trim_start().starts_with("rank  file"), "{out}");
    for r in 0..4 {
        let row = out
            .lines()
            .find(|l| l.contains(&format!("rank{r}.sqlite")))
            .unwrap_or_else(|| panic!("{out}"));
        assert!(row.trim_start().starts_with(&r.to_string()), "{row}");
    }
}
