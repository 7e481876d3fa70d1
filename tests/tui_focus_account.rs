//! `F` (focus mode) shows, below the late rank, every lane its why
//! account names: the streams of its GPU chain's links (the work it queued
//! behind, the work an event it waited on followed), the stream of the
//! work a sync waited for, the stream of the kernel it says competed, and
//! its launching thread's rows — NVTX ones when it names the range the
//! thread was in. Checked against the fixtures' planted causes.

mod common;
use common::tui::{fixture, open_at, press, screen};
use rankline::tui::lanes::LaneKind;
use rankline::tui::state::App;
use serde_json::Value;

fn truth(name: &str) -> Value {
    let text = std::fs::read_to_string(common::root().join("fixtures").join(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Focus mode at `at`: its rows' labels, and the screen.
fn focused(name: &str, at: &str) -> (App, Vec<String>, String) {
    let (mut app, mut t) = open_at(&[fixture(name)], Some(at), 160, 48);
    press(&mut app, &mut t, "F");
    assert!(app.capture().lanes.focus, "{at}");
    let labels = app
        .capture()
        .lanes
        .rows
        .iter()
        .map(|r| r.label.clone())
        .collect();
    (app, labels, screen(&t))
}

/// The row of device `device`'s stream `stream`, and its label.
fn stream_row(app: &App, device: u64, stream: u64) -> Option<String> {
    let p = &app.capture().data.as_ref().unwrap().profile;
    app.capture().lanes.rows.iter().find_map(|r| match r.kind {
        LaneKind::Stream(l) => {
            let lane = &p.lanes[l as usize];
            (u64::from(lane.device) == device && u64::from(lane.stream) == stream)
                .then(|| r.label.clone())
        }
        _ => None,
    })
}

#[test]
fn f_shows_every_lane_the_why_account_names() {
    // why.sqlite: each instance's planted GPU chain and sync wait.
    for w in truth("why.truth.json")["why"].as_array().unwrap() {
        let (device, k) = (
            w["device"].as_u64().unwrap(),
            w["instance"].as_u64().unwrap(),
        );
        let at = format!("s20:{k}");
        let (app, labels, screen) = focused("why.sqlite", &at);
        let mut named: Vec<(u64, &str)> = w["gpu_chain"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| (l["stream"].as_u64().unwrap(), l["kind"].as_str().unwrap()))
            .collect();
        if let Some(s) = w["detail"]["waited_for"]["stream"].as_u64() {
            named.push((s, "waited for"));
        }
        // A stream is one row, named for the first link on it.
        named.dedup_by_key(|x| x.0);
        for (stream, kind) in named {
            let label = stream_row(&app, device, stream)
                .unwrap_or_else(|| panic!("{at}: no D{device} S{stream} ({kind}) in {labels:?}"));
            assert!(
                label.starts_with(&format!("D{device} S{stream} ")),
                "{label}"
            );
            // The late rank's own stream is its first row; another says why.
            if stream != 20 {
                assert!(label.ends_with(kind), "{at}: {label}");
            }
            assert!(screen.contains(&label), "{at}: {label} not drawn\n{screen}");
        }
    }
    // s20:7: device 6 waited on an event recorded after a GEMM on S24.
    let (app, _, _) = focused("why.sqlite", "s20:7");
    assert_eq!(
        stream_row(&app, 6, 24).as_deref(),
        Some("D6 S24 event-wait")
    );
    // s20:6: queued behind work on its own S20.
    let (app, labels, _) = focused("why.sqlite", "s20:6");
    assert!(stream_row(&app, 5, 20).is_some_and(|l| l.starts_with("D5 S20 +")));
    assert!(labels[0].starts_with("D5 S20 +"), "{labels:?}");

    // megatron s20:100: gpu-side, nothing held it; the GEMM another stream
    // ran just before competed (the launch truth's preceding kernel).
    let late = truth("megatron_tp8.truth.json")["launch"]["late_instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["instance"] == 100)
        .unwrap()
        .clone();
    let (device, stream) = (
        late["device"].as_u64().unwrap(),
        late["preceding_kernel"]["stream"].as_u64().unwrap(),
    );
    let (app, labels, screen) = focused("megatron_tp8.sqlite", "s20:100");
    let label = stream_row(&app, device, stream)
        .unwrap_or_else(|| panic!("no D{device} S{stream} in {labels:?}"));
    assert_eq!(label, format!("D{device} S{stream} competed"));
    assert!(screen.contains(&label), "{screen}");

    // megatron s20:55: cpu-late inside NVTX 'forward': the launching
    // thread's NVTX rows show, right below its API row.
    let (app, labels, screen) = focused("megatron_tp8.sqlite", "s20:55");
    let account = app.capture().facts.account.as_ref().unwrap();
    assert!(account.names_nvtx());
    let api = labels
        .iter()
        .position(|l| l.starts_with("D2 T") && l.ends_with(" API"))
        .unwrap_or_else(|| panic!("{labels:?}"));
    let thread = labels[api].trim_end_matches(" API").to_string();
    assert_eq!(labels[api + 1], format!("{thread} nvtx0"), "{labels:?}");
    assert_eq!(labels[api + 2], format!("{thread} nvtx1"), "{labels:?}");
    assert!(screen.contains("forward"), "{screen}");
}
