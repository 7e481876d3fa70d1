//! The timeline says an instance's bytes and bandwidth (skew panel) and a
//! kernel's message size (details panel) as `report` computes them, and
//! that sizes are not recorded where no payload gives one.

mod common;

use common::tui::*;
use rankline::analysis::bandwidth::NOT_RECORDED;
use rankline::tui::panel::PanelKind;

fn panel_text(
    app: &rankline::tui::state::App,
    t: &ratatui::Terminal<ratatui::backend::TestBackend>,
    k: PanelKind,
) -> String {
    rows(t, panel_area(app, k).inner).join("\n")
}

#[test]
fn the_skew_panel_gives_the_instances_bytes_algbw_and_busbw() {
    let report = common::json(&[
        "report",
        "skew",
        "--instances",
        "fixtures/payloads.sqlite",
        "--format",
        "json",
    ]);
    let list = report["groups"][0]["instance_list"]
        .as_array()
        .unwrap()
        .clone();
    // s20:2 is an AllGather whose rank 2 came 0.4 ms late.
    let (mut app, mut t) = open_at(&[fixture("payloads.sqlite")], Some("s20:2"), 160, 48);
    press(&mut app, &mut t, "1");
    let b = app
        .capture()
        .facts
        .bandwidth
        .clone()
        .expect("s20:2 has a size");
    let want = &list[1];
    assert_eq!(Some(b.bytes), want["bytes"].as_u64());
    // The report's figures (JSON keeps 16 significant digits).
    let close = |a: Option<f64>, b: Option<f64>| (a.unwrap() - b.unwrap()).abs() < 1e-9;
    assert!(close(b.algbw_gbps, want["algbw_gbps"].as_f64()), "{b:?}");
    assert!(close(b.busbw_gbps, want["busbw_gbps"].as_f64()), "{b:?}");
    let text = panel_text(&app, &t, PanelKind::Skew);
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for said in [
        "32.0 MiB (the gathered total, N × each rank's send buffer)".to_string(),
        format!(
            "algbw {:.1} GB/s · busbw {:.1} GB/s",
            b.algbw_gbps.unwrap(),
            b.busbw_gbps.unwrap()
        ),
        "(includes the wait)".to_string(),
        "busbw is not one link's utilisation".to_string(),
    ] {
        assert!(flat.contains(&said), "{said:?} not in\n{text}");
    }
    // The late rank's naive figure is near algbw; the waiting ranks' far below.
    let naive: Vec<f64> = b.naive_gbps.iter().map(|x| x.1).collect();
    let lo = naive.iter().copied().fold(f64::MAX, f64::min);
    assert!(lo < 0.7 * b.algbw_gbps.unwrap(), "{naive:?}");
    // s20:7 is the group of two ops with one kernel: no size.
    let (mut app, mut t) = open_at(&[fixture("payloads.sqlite")], Some("s20:7"), 160, 48);
    press(&mut app, &mut t, "1");
    assert!(app.capture().facts.bandwidth.is_none());
    let text = panel_text(&app, &t, PanelKind::Skew);
    assert!(
        text.contains("message size not recorded for this instance"),
        "{text}"
    );
}

#[test]
fn the_details_panel_gives_a_kernels_message_size() {
    let (mut app, mut t) = open_at(&[fixture("payloads.sqlite")], Some("s20:5"), 160, 48);
    press(&mut app, &mut t, "5");
    let text = panel_text(&app, &t, PanelKind::Details);
    // The ring exchange: ncclSend and ncclRecv of 4 MiB in one group.
    assert!(text.contains("message size 4.0 MiB"), "{text}");
}

#[test]
fn without_payloads_the_panels_say_sizes_are_not_recorded() {
    let (mut app, mut t) = open_at(&[fixture("megatron_tp8.sqlite")], Some("s20:55"), 160, 48);
    // The note is the panel's last line: scrolled to its end.
    press(&mut app, &mut t, "1}}}}");
    assert!(app.capture().facts.bandwidth.is_none());
    let text = panel_text(&app, &t, PanelKind::Skew);
    assert!(text.contains(NOT_RECORDED), "{text}");
    press(&mut app, &mut t, "5");
    let text = panel_text(&app, &t, PanelKind::Details);
    assert!(text.contains(NOT_RECORDED), "{text}");
}
