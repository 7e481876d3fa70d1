//! Files of one host share its clock (issue 22): per-rank files of one
//! boot of a host are tied by their `systemClockNs` exactly, and without
//! it by the host's system UTC clock; they are never refined apart, and
//! how well they agree is said apart from the error between hosts.

mod common;
use common::split::{copy, session, set_session};
use common::*;
use serde_json::Value;
use std::path::PathBuf;

fn truth() -> Value {
    let t = std::fs::read_to_string(root().join("fixtures/per_rank.truth.json")).unwrap();
    serde_json::from_str(&t).unwrap()
}

fn clock(align: &str, files: &[PathBuf]) -> Value {
    common::clock_json(align, files)
}

fn clock_text(align: &str, files: &[PathBuf]) -> String {
    let args = ["report", "clock", "--no-cache", "--align", align];
    text_on(&args, files).replace("\n    ", " ")
}

fn per_rank() -> Vec<PathBuf> {
    sqlite_files(&root().join("fixtures/per_rank"))
}

fn ms(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn ranks_of_one_boot_share_its_clock_exactly_under_every_alignment() {
    let t = truth();
    let files = per_rank();
    for align in ["utc", "ends"] {
        let v = clock(align, &files);
        let f = v["files"].as_array().unwrap();
        // rank 1 on rank 0's host: the generator's true offset to the ns,
        // from the two session starts on the host's boot clock (its UTC
        // stamp alone errs by 0.25 ms)
        assert_eq!(f[1]["method"], "same-host", "{align}");
        assert_eq!(f[1]["host_clock"]["via"], "boot-clock", "{align}");
        assert!(
            f[1]["host_clock"]["shared_with"]
                .as_str()
                .unwrap()
                .ends_with("rank0.sqlite")
        );
        let err = ms(&f[1]["offset_ms"]) - ms(&t["files"][1]["true_offset_ms"]);
        assert!(err.abs() < 1e-6, "{align}: rank 1 off by {err} ms");
        // ranks 2 and 3 move as one clock: their offsets differ by their
        // session starts' boot-clock difference, not their UTC stamps'
        let apart = ms(&f[3]["offset_ms"]) - ms(&f[2]["offset_ms"]);
        let true_apart =
            ms(&t["files"][3]["true_offset_ms"]) - ms(&t["files"][2]["true_offset_ms"]);
        // (over their 0.15 s of first events, 3.5 ppm drift moves it < 1 µs)
        assert!(
            (apart - true_apart).abs() < 1e-3,
            "{align}: {apart} vs {true_apart}"
        );
        assert_eq!(f[3]["host_clock"]["via"], "boot-clock", "{align}");
        for (i, file) in f.iter().enumerate() {
            assert!(file["refused"].is_null(), "{align} file {i}: {file}");
            // one host's ranks end together here (the generator's 1 µs)
            let within = ms(&file["host_agreement_ms"]["p90"]);
            assert!(within < 0.005, "{align} file {i}: {within}");
        }
        let out = clock_text(align, &files);
        assert!(
            out.contains("2 files of gpu07.hpc.example share its clock (rank0.sqlite, rank1.sqlite): one boot clock"),
            "{out}"
        );
        assert!(out.contains("their ranks' ends agree within"), "{out}");
        assert!(
            out.contains("the collective's own end spread plus the clock error between hosts"),
            "{out}"
        );
    }
}

#[test]
fn under_utc_the_residual_is_the_error_between_hosts_not_half_of_it() {
    // Two hosts of two ranks: each host's ranks against the other's, so
    // the second host's whole UTC error (6.2–6.4 ms) shows.
    let t = truth();
    let v = clock("utc", &per_rank());
    let utc_error = t["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| ms(&f["utc_only_error_at_last_event_ms"]).abs())
        .fold(0.0, f64::max);
    for file in v["files"].as_array().unwrap() {
        let p90 = ms(&file["residual_end_skew_ms"]["p90"]);
        assert!((p90 - utc_error).abs() < 0.1, "{p90} vs {utc_error}");
    }
}

/// Copies of the per-rank files whose session rows keep their UTC stamps
/// but lose `systemClockNs` (as exports without it).
fn without_system_clock(test: &str) -> Vec<PathBuf> {
    let dir = temp_dir(test);
    per_rank()
        .iter()
        .map(|f| {
            let to = copy(f, &dir, f.file_name().unwrap().to_str().unwrap());
            let (utc, _) = session(&to).unwrap();
            set_session(&to, utc, None);
            to
        })
        .collect()
}

#[test]
fn without_system_clock_one_hosts_files_share_its_utc_clock_and_say_how_well_they_agree() {
    let t = truth();
    let files = without_system_clock("host_clock_utc");
    let v = clock("utc", &files);
    let f = v["files"].as_array().unwrap();
    assert_eq!(f[1]["method"], "same-host");
    assert_eq!(f[1]["host_clock"]["via"], "utc-clock");
    assert!(f[1]["refused"].is_null());
    // the UTC stamps' own difference (rank 1's errs 0.25 ms more)
    let err = ms(&f[1]["offset_ms"]) - ms(&t["files"][1]["utc_offset_ms"]);
    assert!(err.abs() < 1e-6, "{err}");
    // ... which is how far the two ranks' ends now stray from each other
    let stray = ms(&t["files"][1]["utc_error_ms"]) - ms(&t["files"][0]["utc_error_ms"]);
    for i in [0, 1] {
        let within = ms(&f[i]["host_agreement_ms"]["p50"]);
        assert!(
            (within - stray.abs()).abs() < 0.01,
            "file {i}: {within} vs {stray}"
        );
    }
    let out = clock_text("utc", &files);
    assert!(out.contains("one system UTC clock"), "{out}");
    // Refinement checks the tie first: ranks 1 and 3, whose UTC stamps put
    // their ends 0.25 and 0.35 ms from their host mates', are each fitted
    // on their own, and named.
    let v = clock("ends", &files);
    let f = v["files"].as_array().unwrap();
    for file in &f[1..4] {
        assert_eq!(file["method"], "collective-ends", "{file}");
        assert!(ms(&file["residual_end_skew_ms"]["p90"]) < 0.01, "{file}");
    }
    for i in [1, 3] {
        let why = f[i]["off_host_clock"].as_str().unwrap_or_default();
        assert!(
            why.contains("their UTC start stamps tie them only to the stamps' error"),
            "{why}"
        );
    }
    assert!(f[2]["off_host_clock"].is_null());
}

#[test]
fn a_host_rebooted_between_two_files_is_two_clocks() {
    let dir = temp_dir("host_clock_reboot");
    let files: Vec<PathBuf> = per_rank()
        .iter()
        .map(|f| copy(f, &dir, f.file_name().unwrap().to_str().unwrap()))
        .collect();
    // rank 1's host booted an hour later than rank 0's saw it
    let (utc, sys) = session(&files[1]).unwrap();
    set_session(&files[1], utc, Some(sys.unwrap() - 3_600_000_000_000));
    let v = clock("utc", &files);
    let f = v["files"].as_array().unwrap();
    assert!(f[1]["host_clock"].is_null(), "{}", f[1]);
    assert_eq!(f[1]["method"], "utc");
    // ranks 2 and 3 still share theirs
    assert_eq!(f[3]["host_clock"]["via"], "boot-clock");
}
