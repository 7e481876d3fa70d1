//! Issue 43: a boot reading under a minute (a host booted 43 s before its
//! capture) leaves a file's timebase undecided by the file alone; the
//! clock reads it the way that places its events among the rest of the
//! job's, and `report clock` says so. On copies of fixtures/jobs/boot43_nodes
//! and boot43 with their `ANALYSIS_DETAILS` window removed (the window is
//! what settles it today), against the truth beside them.

mod common;
use common::split::{copy, gpu_end, gpu_first, session, set_session};
use common::*;
use rusqlite::Connection;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The bound on each host's offset (ns).
const OFFSET_TOL_NS: f64 = 10_000.0;

fn truth(name: &str) -> Value {
    let p = root().join(format!("fixtures/jobs/{name}.truth.json"));
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn arr(v: &Value) -> &Vec<Value> {
    v.as_array().unwrap_or_else(|| panic!("not an array: {v}"))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn name(path: &Value) -> &str {
    path.as_str().unwrap().rsplit('/').next().unwrap()
}

fn drop_window(path: &Path) {
    let db = Connection::open(path).unwrap();
    db.execute_batch("DROP TABLE ANALYSIS_DETAILS").unwrap();
}

/// boot43_nodes's files named `which` copied into a fresh directory, node0
/// without its window and then changed by `mutate`.
fn boot43_nodes(test: &str, which: &[u32], mutate: impl Fn(&Path)) -> Vec<PathBuf> {
    boot43_nodes_and(test, which, mutate, |_| {})
}

/// [`boot43_nodes`], the other nodes changed by `others`.
fn boot43_nodes_and(
    test: &str,
    which: &[u32],
    mutate: impl Fn(&Path),
    others: impl Fn(&Path),
) -> Vec<PathBuf> {
    let dir = temp_dir(test);
    which
        .iter()
        .map(|n| {
            let f = format!("node{n}.sqlite");
            let dst = copy(
                &root().join("fixtures/jobs/boot43_nodes").join(&f),
                &dir,
                &f,
            );
            if *n == 0 {
                drop_window(&dst);
                mutate(&dst);
            } else {
                others(&dst);
            }
            dst
        })
        .collect()
}

/// The capture ran 100 s longer each way, with one more runtime call at
/// each end: a span that holds node0's events read either way.
fn ran_longer(path: &Path) {
    let db = Connection::open(path).unwrap();
    db.execute_batch(
        "UPDATE ANALYSIS_DETAILS SET startTime = startTime - 100000000000, \
         stopTime = stopTime + 100000000000, duration = duration + 200000000000",
    )
    .unwrap();
    for (by, first) in [(-100_000_000_000i64, "ASC"), (100_000_000_000, "DESC")] {
        db.execute(
            &format!(
                "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT start + ?1, end + ?1, \
                 eventClass, globalTid, \
                 (SELECT max(correlationId) + 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME), nameId, \
                 returnValue, callchainId FROM CUPTI_ACTIVITY_KIND_RUNTIME \
                 ORDER BY start {first} LIMIT 1"
            ),
            [by],
        )
        .unwrap();
    }
}

/// node0's UTC stamp made that of its timestamp 0: its events lie 44 s
/// after its session start, and read on the boot clock they would lie
/// 44 s before the other hosts'.
fn stamped_at_zero(path: &Path) {
    let (utc, sys) = session(path).unwrap();
    let sys = sys.unwrap();
    set_session(path, utc - sys, Some(sys));
}

fn clock(align: &str, files: &[PathBuf]) -> Value {
    common::clock_json(align, files)
}

fn clock_text(files: &[PathBuf]) -> String {
    text_on(&["report", "clock", "--no-cache"], files).replace("\n    ", " ")
}

/// The row of file `n` (by name) in `report clock`'s JSON.
fn row<'a>(clock: &'a Value, n: &str) -> &'a Value {
    arr(&clock["files"])
        .iter()
        .find(|r| name(&r["path"]) == n)
        .unwrap_or_else(|| panic!("no {n} in {clock:#}"))
}

/// How far (ns) each file's recovered mapping lies from the truth's, at
/// its first GPU start and its last kernel end: (file name, worst).
fn offset_errors(clock: &Value, t: &Value, files: &[PathBuf]) -> Vec<(String, f64)> {
    files
        .iter()
        .map(|path| {
            let n = path.file_name().unwrap().to_str().unwrap();
            let r = row(clock, n);
            let tf = arr(&t["files"])
                .iter()
                .find(|x| name(&x["path"]) == n)
                .unwrap();
            let t0 = gpu_first(path);
            let ppm = r["drift_ppm"].as_f64().unwrap_or(0.0);
            let k = (1.0 + f(&tf["drift_ppm"]) * 1e-6) / f(&tf["scale"]);
            let worst = [t0, gpu_end(path)]
                .iter()
                .map(|&at| {
                    let got = f(&r["offset_ms"]) * 1e6 + ppm * 1e-6 * (at - t0) as f64;
                    let since = (at - tf["anchor_file_ns"].as_i64().unwrap()) as f64;
                    let want = f(&tf["offset_ns_to_reference"]) + since * (k - 1.0);
                    (got - want).abs()
                })
                .fold(0.0, f64::max);
            (n.to_string(), worst)
        })
        .collect()
}

fn assert_offsets_within(clock: &Value, t: &Value, files: &[PathBuf], tol_ns: f64) {
    let errors = offset_errors(clock, t, files);
    eprintln!("offset errors (ns): {errors:?}");
    for (n, e) in errors {
        assert!(
            e <= tol_ns,
            "{n}: offset {e} ns from the truth (bound {tol_ns})"
        );
    }
}

/// The largest start skew (ms) of any group of `report skew`.
fn max_start_skew_ms(align: &str, files: &[PathBuf]) -> f64 {
    let args = [
        "report",
        "skew",
        "--format",
        "json",
        "--no-cache",
        "--align",
        align,
    ];
    arr(&json_on(&args, files)["groups"])
        .iter()
        .filter_map(|g| g["start_skew_ms"]["max"].as_f64())
        .fold(0.0, f64::max)
}

#[test]
fn a_node_booted_43_s_before_its_capture_is_read_on_the_boot_clock_as_the_other_hosts_say() {
    let files = boot43_nodes("ambiguous_boot_clock", &[0, 1, 2, 3], |_| {});
    let t = truth("boot43_nodes");
    let v = clock("ends", &files);
    let node0 = row(&v, "node0.sqlite");
    assert_eq!(node0["timebase"], "boot-clock", "{node0:#}");
    let a = &node0["timebase_ambiguous"];
    assert_eq!(a["system_clock_ns"], 43_957_972_595i64, "{a:#}");
    assert_eq!(a["read_as"], "boot-clock", "{a:#}");
    assert_eq!(a["other_reading"], "session-relative", "{a:#}");
    assert_eq!(a["decided"], true, "{a:#}");
    assert_eq!(a["compared_with"], "other-hosts", "{a:#}");
    // within the UTC stamps' ms errors; the other reading 44 s off
    assert!(f(&a["apart_ms"]) < 20.0, "{a:#}");
    assert!(f(&a["other_reading_apart_ms"]) > 43_000.0, "{a:#}");
    for n in ["node1.sqlite", "node2.sqlite", "node3.sqlite"] {
        assert_eq!(row(&v, n)["timebase_ambiguous"], Value::Null, "{n}");
    }
    assert_offsets_within(&v, &t, &files, OFFSET_TOL_NS);
    // on UTC alone, every host within its stamp's ms of the truth: never 44 s
    let utc = clock("utc", &files);
    assert_eq!(row(&utc, "node0.sqlite")["timebase"], "boot-clock");
    assert_offsets_within(&utc, &t, &files, 20e6);
    for align in ["utc", "ends"] {
        let skew = max_start_skew_ms(align, &files);
        assert!(
            skew > 0.0 && skew < 100.0,
            "--align {align}: start skews up to {skew} ms"
        );
    }
    let text = clock_text(&files);
    let said = "! node0.sqlite: timebase ambiguous (systemClockNs 43.958 s, under a minute): read as boot clock, which puts its events within ";
    let line = text
        .lines()
        .find(|l| l.contains(said))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("the other hosts'")
            && line.contains("; read from the session start they would lie 43.9"),
        "{line}"
    );
    assert!(line.ends_with(" s apart"), "{line}");
}

#[test]
fn read_from_the_session_start_when_that_places_its_events_among_the_other_hosts() {
    let files = boot43_nodes("ambiguous_session", &[0, 1, 2, 3], stamped_at_zero);
    let t = truth("boot43_nodes");
    let v = clock("ends", &files);
    let node0 = row(&v, "node0.sqlite");
    assert_eq!(node0["timebase"], "session-relative", "{node0:#}");
    let a = &node0["timebase_ambiguous"];
    assert_eq!(a["read_as"], "session-relative", "{a:#}");
    assert_eq!(a["other_reading"], "boot-clock", "{a:#}");
    assert_eq!(a["decided"], true, "{a:#}");
    assert!(f(&a["apart_ms"]) < 20.0, "{a:#}");
    assert!(f(&a["other_reading_apart_ms"]) > 43_000.0, "{a:#}");
    assert_offsets_within(&v, &t, &files, OFFSET_TOL_NS);
    assert_offsets_within(&clock("utc", &files), &t, &files, 20e6);
    let text = clock_text(&files);
    assert!(
        text.contains("read from the session start, which puts its events within "),
        "{text}"
    );
    assert!(
        text.contains("; read as boot clock they would lie 43.9"),
        "{text}"
    );
}

#[test]
fn per_rank_files_of_a_host_booted_43_s_before_are_not_ambiguous_without_a_window() {
    // Their events start near 0, 43 s below the boot reading: only the
    // session start fits them.
    let t = truth("boot43");
    let dir = temp_dir("ambiguous_per_rank");
    let files: Vec<PathBuf> = arr(&t["files"])
        .iter()
        .map(|x| {
            let path = root().join(x["path"].as_str().unwrap());
            if !x["path"].as_str().unwrap().contains("/boot43/") {
                return path;
            }
            let n = path.file_name().unwrap().to_str().unwrap().to_string();
            let dst = copy(&path, &dir, &n);
            drop_window(&dst);
            dst
        })
        .collect();
    let v = clock("ends", &files);
    for r in arr(&v["files"]) {
        assert_eq!(r["timebase"], "session-relative", "{r:#}");
        assert_eq!(r["timebase_ambiguous"], Value::Null, "{r:#}");
    }
    assert_offsets_within(&v, &t, &files, OFFSET_TOL_NS);
    assert!(!clock_text(&files).contains("ambiguous"));
}

#[test]
fn alone_the_file_keeps_its_default_reading_and_says_it_could_not_be_decided() {
    let files = boot43_nodes("ambiguous_alone", &[0], |_| {});
    let v = clock("ends", &files);
    let node0 = row(&v, "node0.sqlite");
    // without the window its data reads it from the session start
    assert_eq!(node0["timebase"], "session-relative", "{node0:#}");
    let a = &node0["timebase_ambiguous"];
    assert_eq!(a["read_as"], "session-relative", "{a:#}");
    assert_eq!(a["decided"], false, "{a:#}");
    assert_eq!(a["compared_with"], "nothing", "{a:#}");
    assert_eq!(a["apart_ms"], Value::Null, "{a:#}");
    let text = clock_text(&files);
    assert!(
        text.contains("! node0.sqlite: timebase ambiguous (systemClockNs 43.958 s, under a minute): read from the session start, as its data reads by default: no other file with a certain timebase, events and a UTC stamp to compare it with, so it could not be decided"),
        "{text}"
    );
    // with its window, the file alone decides: nothing to say
    let whole = [root().join("fixtures/jobs/boot43_nodes/node0.sqlite")];
    let v = clock("ends", &whole);
    assert_eq!(v["files"][0]["timebase"], "boot-clock");
    assert_eq!(v["files"][0]["timebase_ambiguous"], Value::Null);
}

#[test]
fn the_utc_ruler_reads_the_reference_as_the_clock_chose() {
    let files = boot43_nodes("ambiguous_ruler", &[0, 1, 2, 3], |_| {});
    let sources: Vec<_> = files
        .iter()
        .map(|p| rankline::profile::Source::File(p.clone()))
        .collect();
    let (mut app, mut t) = tui::open_at(&sources, None, 160, 48);
    tui::press(&mut app, &mut t, "tt");
    assert!(tui::screen(&t).contains("time (utc)"));
    let l = app.data().unwrap();
    // read on the boot clock: timestamp systemClockNs is the session start
    let (utc, sys) = session(&files[0]).unwrap();
    assert_eq!(app.utc_origin(&l), Some(utc - sys.unwrap()));
}

#[test]
fn when_the_other_hosts_captures_hold_both_readings_the_collective_ends_decide() {
    let t = truth("boot43_nodes");
    for (test, node0, right) in [
        (
            "ambiguous_ends_boot",
            (|_: &Path| {}) as fn(&Path),
            "boot-clock",
        ),
        (
            "ambiguous_ends_session",
            stamped_at_zero,
            "session-relative",
        ),
    ] {
        let files = boot43_nodes_and(test, &[0, 1, 2, 3], node0, ran_longer);
        // the UTC stamps cannot tell: the default stays, said so
        let utc = clock("utc", &files);
        let a = &row(&utc, "node0.sqlite")["timebase_ambiguous"];
        assert_eq!(a["decided"], false, "{test}: {a:#}");
        assert_eq!(a["compared_with"], "other-hosts", "{test}: {a:#}");
        assert_eq!(a["read_as"], "session-relative", "{test}: {a:#}");
        // the ends place the other hosts where the right reading's stamp does
        let v = clock("ends", &files);
        let node0 = row(&v, "node0.sqlite");
        assert_eq!(node0["timebase"], right, "{test}: {node0:#}");
        let a = &node0["timebase_ambiguous"];
        assert_eq!(a["read_as"], right, "{test}: {a:#}");
        assert_eq!(a["decided"], true, "{test}: {a:#}");
        assert_eq!(a["compared_with"], "collective-ends", "{test}: {a:#}");
        assert!(f(&a["apart_ms"]) < 20.0, "{test}: {a:#}");
        assert!(f(&a["other_reading_apart_ms"]) > 43_000.0, "{test}: {a:#}");
        assert_offsets_within(&v, &t, &files, OFFSET_TOL_NS);
        assert!(max_start_skew_ms("ends", &files) < 100.0, "{test}");
        let text = clock_text(&files);
        assert!(
            text.contains("as the collective ends place the hosts' clocks (its UTC stamp could not tell): read so, its stamp puts them within "),
            "{test}: {text}"
        );
    }
}
