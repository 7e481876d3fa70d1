//! Clock alignment across files: one file of a pair is moved onto another
//! clock (hours away, drifting, with a UTC stamp a few ms off), and the
//! alignment must recover the truth from the collectives' ends — or refuse
//! and say why when the ends disagree.

mod common;
use common::split::{
    Mapping, UTC0, copy, gpu_end, gpu_start, keep_pids, set_host, set_session, shift,
};
use common::*;
use rusqlite::Connection;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Hours (and a bit) between the two clocks.
const SHIFT_NS: i64 = 3 * 3_600_000_000_000 + 17_123_456_789;
/// The shifted clock runs fast by this.
const DRIFT_PPM: f64 = 5.0;
/// How far the shifted file's UTC stamp is off.
const UTC_ERROR_NS: i64 = 3_700_000;

/// The shifted file's clock: `t + SHIFT + drift·(t − t0)`.
fn moved(t0: i64) -> Mapping {
    Mapping {
        shift_ns: SHIFT_NS,
        drift_ppm: DRIFT_PPM,
        t0,
    }
}

fn report(args: &[&str], files: &[&Path]) -> Value {
    let mut all: Vec<&str> = vec!["report", "all", "--format", "json", "--no-cache"];
    all.extend_from_slice(args);
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    all.extend(names.iter().map(String::as_str));
    let o = rankline(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

/// The reference-clock time of the shifted file's timestamp `t`, in truth.
fn true_time(t: i64, t0: i64) -> f64 {
    moved(t0).original(t as f64)
}

/// Checks the shifted file's mapping against the truth at both ends of its
/// capture: within `tolerance_ms`.
fn assert_recovered(clock: &Value, shifted: &Path, t0: i64, tolerance_ms: f64) {
    let f = &clock["files"][1];
    let (first, last) = (gpu_start(shifted), gpu_end(shifted));
    let offset = f["offset_ms"].as_f64().unwrap() * 1e6;
    // null when not fitted
    let drift = f["drift_ppm"].as_f64().unwrap_or(0.0) * 1e-6;
    for t in [first, last] {
        let mapped = t as f64 + offset + drift * (t - first) as f64;
        let err_ms = (mapped - true_time(t, t0)).abs() / 1e6;
        assert!(
            err_ms <= tolerance_ms,
            "error {err_ms} ms at {t}: {clock:#}"
        );
    }
}

fn spread(v: &Value) -> [f64; 3] {
    ["p50", "p90", "max"].map(|k| v[k].as_f64().unwrap())
}

fn assert_close(a: [f64; 3], b: [f64; 3], tolerance_ms: f64, what: &str) {
    for (x, y) in a.iter().zip(&b) {
        assert!(
            (x - y).abs() <= tolerance_ms,
            "{what}: {a:?} vs truth {b:?}"
        );
    }
}

/// The two-node fixture with node-b moved onto another clock.
fn shifted_two_node(name: &str) -> (PathBuf, PathBuf, i64) {
    let dir = temp_dir(name);
    let a = copy(&root().join("fixtures/two_node_a.sqlite"), &dir, "a.sqlite");
    let b = copy(&root().join("fixtures/two_node_b.sqlite"), &dir, "b.sqlite");
    let t0 = gpu_start(&b);
    shift(&b, &moved(t0));
    set_session(&a, UTC0, None);
    set_session(&b, UTC0 - SHIFT_NS + UTC_ERROR_NS, None);
    (a, b, t0)
}

#[test]
fn two_nodes_on_different_clocks_are_aligned_by_their_collective_ends() {
    let (a, b, t0) = shifted_two_node("clock_two_node");
    let v = report(&[], &[&a, &b]);
    let clock = &v["summary"]["clock"];
    assert_eq!(clock["method"], "collective-ends", "{clock:#}");
    assert_eq!(clock["reference"], a.display().to_string());
    let fb = &clock["files"][1];
    assert_eq!(fb["timebase"], "session-relative");
    assert_eq!(fb["method"], "collective-ends");
    assert_eq!(fb["refused"], Value::Null);
    assert_eq!(
        fb["drift_fitted"], false,
        "a 37 ms capture cannot resolve drift"
    );
    assert!(fb["instances_used"].as_u64().unwrap() >= 5);
    assert!(fb["residual_end_skew_ms"]["p90"].as_f64().unwrap() < 0.05);
    assert_recovered(clock, &b, t0, 0.02);
    // Every skew figure as on one clock.
    let truth: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("fixtures/two_node.truth.json")).unwrap(),
    )
    .unwrap();
    let (g, t) = (&v["skew"]["groups"][0], &truth["skew"]["groups"][0]);
    assert_eq!(g["key"], t["key"]);
    assert_eq!(g["instances"], t["instances"]);
    let (gs, ts) = (spread(&g["start_skew_ms"]), spread(&t["start_skew_ms"]));
    assert_close(gs, ts, 0.01, "start skew");
    let (ge, te) = (spread(&g["end_skew_ms"]), spread(&t["end_skew_ms"]));
    assert_close(ge, te, 0.01, "end skew");
    for (dev, want) in t["mean_lateness_ms_excluding_big"].as_object().unwrap() {
        let got = g["mean_lateness_ms_excluding_big"][dev].as_f64().unwrap();
        assert!(
            (got - want.as_f64().unwrap()).abs() <= 0.01,
            "{dev}: {got} vs {want}"
        );
    }
    assert_eq!(g["late_counts"], t["late_counts"]);
    assert_eq!(g["early_counts"], t["early_counts"]);
}

#[test]
fn align_utc_and_none_do_what_they_say() {
    let (a, b, _) = shifted_two_node("clock_two_node_utc");
    let v = report(&["--align", "utc"], &[&a, &b]);
    let clock = &v["summary"]["clock"];
    assert_eq!(clock["method"], "utc");
    let off = clock["files"][1]["offset_ms"].as_f64().unwrap();
    assert_eq!(off, (UTC_ERROR_NS - SHIFT_NS) as f64 / 1e6);
    // The pairing stands (sequence), but UTC cannot confirm it by ends.
    let g = &v["skew"]["groups"][0];
    assert_eq!(g["instances"], 7);
    let notes = g["notes"].to_string();
    assert!(notes.contains("UTC only"), "{notes}");
    let v = report(&["--align", "none"], &[&a, &b]);
    assert_eq!(v["summary"]["clock"]["method"], "none");
    let notes = v["skew"]["groups"][0]["notes"].to_string();
    assert!(notes.contains("whose clocks are not aligned"), "{notes}");
    assert_eq!(v["summary"]["clock"]["files"][1]["offset_ms"], 0.0);
}

#[test]
fn disagreeing_ends_refuse_refinement_and_keep_utc() {
    let (a, b, _) = shifted_two_node("clock_two_node_refused");
    // Every other NCCL kernel of node-b ends 2 ms later.
    let db = Connection::open(&b).unwrap();
    db.execute(
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = end + 2000000 WHERE rowid % 2 = 0 \
         AND shortName IN (SELECT id FROM StringIds WHERE value LIKE 'nccl%')",
        [],
    )
    .unwrap();
    drop(db);
    let v = report(&[], &[&a, &b]);
    let clock = &v["summary"]["clock"];
    assert_eq!(clock["method"], "utc", "{clock:#}");
    let fb = &clock["files"][1];
    assert_eq!(fb["method"], "utc");
    let why = fb["refused"].as_str().unwrap();
    assert!(why.contains("ends disagree by"), "{why}");
    let ms: f64 = why["ends disagree by ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1.0..=2.1).contains(&ms), "{why}");
    assert_eq!(
        fb["offset_ms"].as_f64().unwrap(),
        (UTC_ERROR_NS - SHIFT_NS) as f64 / 1e6
    );
    let o = rankline(&[
        "report",
        "clock",
        "--no-cache",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    let text = stdout(&o);
    assert!(text.contains("UTC only (ends disagree by"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn real_exports_timebases_come_from_their_data() {
    for f in sqlite_files(&real_profiles()) {
        let v = report(&[], &[&f]);
        let clock = &v["summary"]["clock"];
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let want = if name.starts_with("nsys2026") {
            "boot-clock"
        } else {
            "session-relative"
        };
        assert_eq!(clock["files"][0]["timebase"], want, "{name}");
        assert_eq!(clock["method"], "same-host", "{name}");
    }
}

#[test]
fn a_host_whose_ranks_all_arrive_last_is_named_on_the_aligned_clock() {
    let (a, b, _) = shifted_two_node("clock_late_host");
    let v = report(&["--big-skew-ms", "0.5"], &[&a, &b]);
    let g = &v["skew"]["groups"][0];
    let events = g["big_events"].as_array().unwrap();
    let hosts: Vec<(u64, Value)> = events
        .iter()
        .map(|e| (e["instance"].as_u64().unwrap(), e["late_host"].clone()))
        .collect();
    // On the one true clock both node-a ranks start after both node-b
    // ranks in instances 1 (by 0.349 ms) and 3 (by 0.020 ms), and in no
    // other; elsewhere a single late rank names no host.
    for (k, h) in &hosts {
        match k {
            1 | 3 => {
                assert_eq!(h["host"], "node-a", "{hosts:?}");
                assert_eq!(h["ranks"], 2);
            }
            _ => assert_eq!(*h, Value::Null, "instance {k}: {h}"),
        }
    }
    let margin = hosts[0].1["margin_ms"].as_f64().unwrap();
    assert!((margin - 0.349).abs() <= 0.01, "{margin}");
    assert!(events.iter().all(|e| e["resolvable"] == true));
    assert_eq!(g["late_counts_by_host"]["node-a"], 7);
    assert_eq!(g["late_counts_by_host"]["node-b"], 0);
    assert_eq!(g["early_counts_by_host"]["node-b"], 5);
    let o = rankline(&[
        "report",
        "skew",
        "--no-cache",
        "--big-skew-ms",
        "0.5",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    let text = stdout(&o);
    assert!(
        text.contains("instance 1: late host node-a (2 ranks) +0.3"),
        "{text}"
    );
    assert!(text.contains("offset_in_step_ms"), "{text}");
}

#[test]
fn the_timeline_says_how_clocks_were_aligned_and_names_the_late_host() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use rankline::analysis::Settings;
    use rankline::profile::Source;
    use rankline::tui::data::{self, LoadMsg};
    use rankline::tui::keymap::Keymap;
    use rankline::tui::state::App;
    use rankline::tui::ui;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    let (a, b, _) = shifted_two_node("clock_tui");
    let settings = Settings {
        big_skew_ns: 500_000,
        ..Settings::default()
    };
    let mut app = App::new(Keymap::default_keymap(), false);
    let mut msgs = Vec::new();
    data::load(
        &[Source::File(a), Source::File(b)],
        None,
        &settings,
        &mut |m| msgs.push(m),
    );
    for m in msgs {
        if !matches!(m, LoadMsg::Progress { .. }) {
            app.on_load(m);
        }
    }
    let mut terminal = Terminal::new(TestBackend::new(200, 40)).unwrap();
    terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    // `]`: the first big event, instance 1, where node-a's ranks are late.
    app.on_key(KeyEvent::new(KeyCode::Char(']'), KeyModifiers::NONE));
    terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    let buf = terminal.backend().buffer();
    let screen: String = (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
                + "\n"
        })
        .collect();
    assert!(
        screen.contains("clocks: collective ends, residual p90"),
        "{screen}"
    );
    assert!(!screen.contains("not aligned"), "{screen}");
    assert!(
        screen.contains("late host node-a (2 ranks) +0.3"),
        "{screen}"
    );
    // node-b's kernels, hours away on its own clock, are drawn beside
    // node-a's on the reference clock.
    for lane in [
        "node-a:1 S20 NCCL",
        "node-b:0 S20 NCCL",
        "node-b:1 S20 NCCL",
    ] {
        let line = screen.lines().find(|l| l.starts_with(lane)).unwrap();
        assert!(line.contains("ncclDevKernel_Broadcast"), "{screen}");
    }
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn two_captures_days_apart_are_not_put_on_one_clock() {
    // Two unrelated exports, 329 days apart: not one job's clocks. The
    // reference's side stays; the other is left out of cross-file figures
    // rather than shifted by 329 days.
    let dir = real_profiles();
    let a = dir.join("nsys2024_6_fuser_matmul.sqlite");
    let b = dir.join("nsys2023_2_cutlass_osrt.sqlite");
    let v = report(&[], &[&a, &b]);
    let clock = &v["summary"]["clock"];
    let other = &clock["files"][1];
    assert_eq!(other["isolated"], true, "{clock:#}");
    assert_eq!(clock["files"][0]["isolated"], false, "{clock:#}");
    let why = other["refused"].as_str().unwrap();
    assert!(why.contains("329.1 days from the other files'"), "{why}");
    assert_eq!(other["offset_ms"].as_f64(), Some(0.0));
    let w = v["summary"]["warnings"].to_string();
    assert!(
        w.contains("clock refused for nsys2023_2_cutlass_osrt.sqlite"),
        "{w}"
    );
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn the_cache_entry_carries_the_clock_facts() {
    let real = real_profiles().join("nsys2026_2gpu_nccl_sendrecv.sqlite");
    let cache = temp_dir("clock_cache");
    let run = || {
        let o = rankline(&[
            "report",
            "clock",
            "--format",
            "json",
            "--cache-dir",
            cache.to_str().unwrap(),
            real.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_str::<Value>(&stdout(&o)).unwrap()
    };
    let fresh = run();
    assert!(
        std::fs::read_dir(&cache).unwrap().next().is_some(),
        "no entry written"
    );
    let cached = run();
    assert_eq!(fresh, cached);
    assert_eq!(cached["files"][0]["timebase"], "boot-clock");
}

#[test]
fn communicators_sharing_a_stream_id_across_refined_clocks_split_by_ends() {
    // Two communicators {0,1} and {2,3} on stream id 20 (ends 2.5-6 ms
    // apart); devices 0 and 2 in one file, 1 and 3 in another, hours away.
    let src = root().join("fixtures/shared_stream_two_comms.sqlite");
    let dir = temp_dir("clock_shared_stream");
    let a = copy(&src, &dir, "a.sqlite");
    let b = copy(&src, &dir, "b.sqlite");
    // another host: one host's files would share its UTC clock
    set_host(&b, "dgx-c04");
    keep_pids(&a, &[6101, 6103]);
    keep_pids(&b, &[6102, 6104]);
    let t0 = gpu_start(&b);
    shift(&b, &moved(t0));
    set_session(&a, UTC0, None);
    set_session(&b, UTC0 - SHIFT_NS + UTC_ERROR_NS, None);
    let v = report(&[], &[&a, &b]);
    assert_eq!(v["summary"]["clock"]["method"], "collective-ends");
    let keys: Vec<&str> = v["skew"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["s20/1", "s20/2"], "{:#}", v["skew"]);
    assert_eq!(v["skew"]["groups"][0]["instances"], 8);
    // On UTC alone the clocks stay unfitted, but a true partner still
    // shows itself by the constancy of its ends' difference: the same two
    // groups, whose notes say the skews are on UTC only.
    let v = report(&["--align", "utc"], &[&a, &b]);
    let groups = v["skew"]["groups"].as_array().unwrap();
    let keys: Vec<&str> = groups.iter().map(|g| g["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["s20/1", "s20/2"], "{:#}", v["skew"]);
    let pairs: Vec<String> = groups.iter().map(|g| g["devices"].to_string()).collect();
    assert_eq!(
        pairs,
        [
            r#"["dgx-c03:0","dgx-c04:1"]"#,
            r#"["dgx-c03:2","dgx-c04:3"]"#
        ]
    );
    for g in groups {
        let notes = g["notes"].to_string();
        assert!(notes.contains("clocks aligned by UTC only"), "{notes}");
    }
}
