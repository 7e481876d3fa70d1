//! `rankline export`'s CPU tracks: the spans a thread was descheduled and
//! its CPU samples, on the track of the thread's CUDA calls and on the
//! aligned clock, so the why account's CPU causes can be read in a viewer.
//! Checked against the why fixture's planted causes, SQL over its raw
//! tables, and a real export with scheduling events and samples.

mod common;

use common::trace::export;
use common::*;
use rusqlite::Connection;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn why_fixture() -> PathBuf {
    root().join("fixtures/why.sqlite")
}

/// The why fixture's account of the big event planted with `cause`.
fn planted(cause: &str) -> Value {
    let truth: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("fixtures/why.truth.json")).unwrap(),
    )
    .unwrap();
    truth["why"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["cause"] == cause)
        .unwrap_or_else(|| panic!("no {cause} in the truth"))
        .clone()
}

fn part<'a>(why: &'a Value, kind: &str) -> &'a Value {
    why["cpu_parts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} part: {why}"))
}

fn i64_of(v: &Value) -> i64 {
    v.as_i64().unwrap()
}

fn events(v: &Value) -> &Vec<Value> {
    v["traceEvents"].as_array().unwrap()
}

/// (pid, tid) of the trace's CUDA call that starts at `start_ns`.
fn track_of_call(v: &Value, start_ns: i64) -> (u64, u64) {
    let e = events(v)
        .iter()
        .find(|e| e["cat"] == "cuda_api" && e["ts"].as_f64() == Some(start_ns as f64 / 1e3))
        .unwrap_or_else(|| panic!("no CUDA call at {start_ns} ns"));
    (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap())
}

fn on_track<'a>(v: &'a Value, cat: &str, (pid, tid): (u64, u64)) -> Vec<&'a Value> {
    events(v)
        .iter()
        .filter(|e| e["cat"] == cat && e["pid"] == pid && e["tid"] == tid)
        .collect()
}

/// The metadata name `what` (`process_name`, `thread_name`) of a track.
fn named(v: &Value, what: &str, pid: u64, tid: Option<u64>) -> String {
    events(v)
        .iter()
        .find(|e| e["name"] == what && e["pid"] == pid && tid.is_none_or(|t| e["tid"] == t))
        .and_then(|e| e["args"]["name"].as_str())
        .unwrap_or_else(|| panic!("no {what} for {pid}/{tid:?}"))
        .to_string()
}

/// The raw `globalTid` of the CUDA call starting at `start_ns`.
fn global_tid(db: &Connection, start_ns: i64) -> i64 {
    db.query_row(
        "SELECT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE start = ?1",
        [start_ns],
        |r| r.get(0),
    )
    .unwrap()
}

/// Events a refusal or the summary line counts: complete events and samples.
fn counted(v: &Value) -> usize {
    events(v)
        .iter()
        .filter(|e| e["ph"] == "X" || e["cat"] == "cpu_sample")
        .count()
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-6)
}

#[test]
fn the_late_ranks_planted_off_cpu_span_is_on_its_launching_threads_track() {
    let why = planted("off-cpu");
    let off = part(&why, "off-cpu");
    let launch = part(&why, "cuda-call");
    let (start, end) = (i64_of(&off["start_ns"]), i64_of(&off["end_ns"]));
    // Inside its account window, so the truth's part is the whole
    // planted span, which the trace holds unclipped.
    assert!(start > i64_of(&why["earliest_peer_start_ns"]) && end < i64_of(&launch["start_ns"]));
    let d = temp_dir("export_cpu_off");
    let (o, v) = export(&[&why_fixture()], &d.join("t.json"), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = v.unwrap();
    assert!(
        stdout(&o).contains(" 2 off-CPU spans, 20 CPU samples)"),
        "{}",
        stdout(&o)
    );
    // The track of the late rank's launch call: its process and thread by SQL.
    let track = track_of_call(&v, i64_of(&launch["start_ns"]));
    let db = Connection::open(why_fixture()).unwrap();
    let gtid = global_tid(&db, i64_of(&launch["start_ns"]));
    let pid: i64 = db
        .query_row(
            "SELECT DISTINCT (globalPid >> 24) & 16777215 FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = ?1",
            [i64_of(&why["device"])],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!((gtid >> 24) & 0xFF_FFFF, pid);
    assert!(
        named(&v, "process_name", track.0, None).contains(&format!(" pid {pid} ")),
        "{}",
        named(&v, "process_name", track.0, None)
    );
    assert_eq!(
        named(&v, "thread_name", track.0, Some(track.1)),
        format!("T{} CUDA API, off-CPU, samples", gtid & 0xFF_FFFF)
    );
    let spans = on_track(&v, "off_cpu", track);
    assert_eq!(spans.len(), 1, "{spans:?}");
    let e = spans[0];
    assert_eq!(e["ph"], "X");
    assert_eq!(e["name"], off["name"], "as the account names it");
    assert!(close(e["ts"].as_f64(), start as f64 / 1e3), "{e}");
    assert!(close(e["dur"].as_f64(), (end - start) as f64 / 1e3), "{e}");
    assert_eq!(e["args"]["cpu"], why["detail"]["cpu"]);
    let ran = why["detail"]["ran_meanwhile"][0].as_str().unwrap();
    assert!(
        e["args"]["ran_meanwhile"][0]
            .as_str()
            .is_some_and(|r| r.starts_with(ran)),
        "{e}"
    );
}

#[test]
fn cpu_samples_are_on_the_busy_ranks_launching_thread_named_by_their_innermost_user_frame() {
    let why = planted("on-cpu");
    let launch = part(&why, "cuda-call");
    let frame = part(&why, "on-cpu")["name"].as_str().unwrap().to_string();
    let d = temp_dir("export_cpu_samples");
    let (o, v) = export(&[&why_fixture()], &d.join("t.json.gz"), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = v.unwrap();
    let db = Connection::open(why_fixture()).unwrap();
    let gtid = global_tid(&db, i64_of(&launch["start_ns"]));
    // SQL's samples of that thread: when, and the innermost frame not in
    // the kernel (every fourth has a kernel frame on top).
    let mut st = db
        .prepare(
            "SELECT e.start, (SELECT s.value FROM SAMPLING_CALLCHAINS c JOIN StringIds s ON s.id = c.symbol \
             WHERE c.id = e.id AND c.kernelMode = 0 ORDER BY c.stackDepth LIMIT 1) \
             FROM COMPOSITE_EVENTS e WHERE e.globalTid = ?1 ORDER BY e.start",
        )
        .unwrap();
    let want: Vec<(f64, String)> = st
        .query_map([gtid], |r| {
            Ok((r.get::<_, i64>(0)? as f64 / 1e3, r.get(1)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(want.len() as i64, i64_of(&why["detail"]["samples"]));
    let samples = on_track(
        &v,
        "cpu_sample",
        track_of_call(&v, i64_of(&launch["start_ns"])),
    );
    let got: Vec<(f64, String)> = samples
        .iter()
        .map(|e| {
            (
                e["ts"].as_f64().unwrap(),
                e["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(got, want);
    for e in &samples {
        assert_eq!((e["ph"].as_str(), e["s"].as_str()), (Some("i"), Some("t")));
        let stack: Vec<&str> = e["args"]["stack"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        assert_eq!(stack[0], e["name"], "innermost first");
        assert!(stack.contains(&frame.as_str()), "{e}");
        assert!(!stack.contains(&"copy_user_enhanced_fast_string"), "{e}");
    }
    // No thread has samples the capture did not record.
    assert_every_sample_is_in(&db, &v);
}

/// `--window` clips an off-CPU span to it and keeps the samples in it;
/// `--max-events` counts both.
#[test]
fn a_window_clips_off_cpu_spans_and_keeps_its_samples_and_max_events_counts_them() {
    let off_why = planted("off-cpu");
    let off = part(&off_why, "off-cpu");
    let (start, end) = (i64_of(&off["start_ns"]), i64_of(&off["end_ns"]));
    let busy = planted("on-cpu");
    let from = start + (end - start) / 2;
    let to = i64_of(&part(&busy, "on-cpu")["start_ns"]) + 10_000_000;
    let window = [window_seconds(from), window_seconds(to)];
    let d = temp_dir("export_cpu_window");
    let args = ["--window", &window[0], &window[1]];
    let (o, v) = export(&[&why_fixture()], &d.join("w.json"), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = v.unwrap();
    let track = track_of_call(&v, i64_of(&part(&off_why, "cuda-call")["start_ns"]));
    let spans = on_track(&v, "off_cpu", track);
    assert_eq!(spans.len(), 1, "{spans:?}");
    assert!(
        close(spans[0]["ts"].as_f64(), from as f64 / 1e3),
        "{}",
        spans[0]
    );
    assert!(
        close(spans[0]["dur"].as_f64(), (end - from) as f64 / 1e3),
        "{}",
        spans[0]
    );
    let db = Connection::open(why_fixture()).unwrap();
    let busy_call = i64_of(&part(&busy, "cuda-call")["start_ns"]);
    let in_window: i64 = db
        .query_row(
            "SELECT count(*) FROM COMPOSITE_EVENTS WHERE globalTid = ?1 AND start BETWEEN ?2 AND ?3",
            [global_tid(&db, busy_call), from, to],
            |r| r.get(0),
        )
        .unwrap();
    assert!(in_window > 0 && in_window < 20, "{in_window}");
    let samples = events(&v)
        .iter()
        .filter(|e| e["cat"] == "cpu_sample")
        .count();
    assert_eq!(samples as i64, in_window);
    let n = counted(&v);
    let out = d.join("refused.json");
    let max = (n - 1).to_string();
    let (o, _) = export(
        &[&why_fixture()],
        &out,
        &[&args[..], &["--max-events", &max]].concat(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("{n} events in the window")),
        "{}",
        stderr(&o)
    );
}

/// nsys 2025.5 with scheduling events and samples (read in place): every
/// descheduled span SQL finds (a switch out to the thread's next switch
/// in) is on its thread's track, every sample is there, and the only
/// other spans are a thread's last switch out, which no switch in ends.
#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn on_a_real_export_every_descheduled_span_and_sample_is_on_its_threads_track() {
    let f = real_profiles().join("nsys2025_5_single_kernel_osrt.sqlite");
    let d = temp_dir("export_cpu_real");
    let (o, v) = export(&[&f], &d.join("r.json"), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = v.unwrap();
    let db = Connection::open(&f).unwrap();
    let mut st = db
        .prepare("SELECT globalTid & 16777215, start, isSchedIn FROM SCHED_EVENTS ORDER BY globalTid, start, rowid")
        .unwrap();
    let mut by_tid: BTreeMap<i64, Vec<(i64, bool)>> = BTreeMap::new();
    for row in st
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
    {
        let (tid, at, into) = row.unwrap();
        by_tid.entry(tid).or_default().push((at, into));
    }
    let mut closed = Vec::new();
    let mut last_out = Vec::new();
    for (&tid, rows) in &by_tid {
        let mut out = None;
        for &(at, into) in rows {
            match (into, out) {
                (true, Some(a)) => {
                    closed.push((tid, a, at));
                    out = None;
                }
                (false, None) => out = Some(at),
                _ => {}
            }
        }
        if let Some(a) = out {
            last_out.push((tid, a));
        }
    }
    assert!(closed.len() > 500, "{}", closed.len());
    // Each off-CPU event as (tid, start, end) in ns, its tid by its track's name.
    let tid_of = |e: &Value| -> i64 {
        let n = named(
            &v,
            "thread_name",
            e["pid"].as_u64().unwrap(),
            e["tid"].as_u64(),
        );
        n[1..n.find(' ').unwrap()].parse().unwrap()
    };
    let ns = |x: &Value| (x.as_f64().unwrap() * 1e3).round() as i64;
    let mut got: Vec<(i64, i64, i64)> = events(&v)
        .iter()
        .filter(|e| e["cat"] == "off_cpu")
        .map(|e| (tid_of(e), ns(&e["ts"]), ns(&e["ts"]) + ns(&e["dur"])))
        .collect();
    got.sort_unstable();
    closed.sort_unstable();
    let extra: Vec<(i64, i64, i64)> = got
        .iter()
        .filter(|s| closed.binary_search(s).is_err())
        .copied()
        .collect();
    assert_eq!(got.len() - extra.len(), closed.len(), "every closed span");
    assert!(
        extra.iter().all(|&(t, a, _)| last_out.contains(&(t, a))),
        "{extra:?}"
    );
    assert_every_sample_is_in(&db, &v);
}

/// The trace holds as many CPU samples as the export recorded.
fn assert_every_sample_is_in(db: &Connection, v: &Value) {
    let samples: i64 = db
        .query_row("SELECT count(*) FROM COMPOSITE_EVENTS", [], |r| r.get(0))
        .unwrap();
    let in_trace = events(v)
        .iter()
        .filter(|e| e["cat"] == "cpu_sample")
        .count();
    assert_eq!(in_trace as i64, samples);
}

/// `--devices` keeps the CPU tracks of the processes driving those
/// devices, and no other's: the descheduled rank's process (its launching
/// thread and its data worker) without the busy rank's samples, and back.
#[test]
fn devices_keep_the_cpu_tracks_of_the_processes_driving_them() {
    let d = temp_dir("export_cpu_devices");
    let of = |cat: &str, v: &Value| events(v).iter().filter(|e| e["cat"] == cat).count();
    for (device, off_cpu, samples) in [
        (planted("off-cpu")["device"].to_string(), 2, 0),
        (planted("on-cpu")["device"].to_string(), 0, 20),
    ] {
        let (o, v) = export(
            &[&why_fixture()],
            &d.join("d.json"),
            &["--devices", &device],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let v = v.unwrap();
        assert_eq!(
            (of("off_cpu", &v), of("cpu_sample", &v)),
            (off_cpu, samples),
            "{device}"
        );
    }
}
