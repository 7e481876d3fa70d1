//! Timestamps at the ends of the i64 range (a damaged or hostile export):
//! durations saturate instead of wrapping, so neither `report` nor the
//! timeline panics (debug builds panic on overflow).

mod common;
use common::*;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rankline::analysis::Settings;
use rankline::profile::Source;
use rankline::tui::data::{self, LoadMsg};
use rankline::tui::keymap::Keymap;
use rankline::tui::state::App;
use rankline::tui::ui;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::PathBuf;

/// A copy of the 8-GPU fixture whose first and last kernels, first runtime
/// call and first NVTX range run from one end of the i64 range to the other
/// (the last kernel reversed).
fn extreme_copy(name: &str) -> PathBuf {
    let dir = temp_dir(name);
    let f = dir.join("extreme.sqlite");
    std::fs::copy(root().join("fixtures/megatron_tp8.sqlite"), &f).unwrap();
    let c = rusqlite::Connection::open(&f).unwrap();
    c.execute_batch(&format!(
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = {min}, end = {max}
           WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);
         UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = {max}, end = {min}
           WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);
         UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = {min}, end = {max}
           WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME);
         UPDATE NVTX_EVENTS SET start = {min}, end = {max}
           WHERE rowid = (SELECT min(rowid) FROM NVTX_EVENTS);",
        min = i64::MIN,
        max = i64::MAX
    ))
    .unwrap();
    f
}

#[test]
fn report_all_does_not_wrap_at_i64_extremes() {
    let f = extreme_copy("extreme_report");
    for format in ["text", "json"] {
        for trim in [&[][..], &["--trim", "5", "6"]] {
            let mut args = vec![
                "report",
                "all",
                "--no-cache",
                "--format",
                format,
                f.to_str().unwrap(),
            ];
            args.extend_from_slice(trim);
            let o = rankline(&args);
            assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
            assert!(!stderr(&o).contains("internal error"), "{}", stderr(&o));
        }
    }
    // The span saturates at i64::MAX ns rather than going negative.
    let o = rankline(
        &["report", "overlap", "--no-cache", "--format", "json"]
            .into_iter()
            .chain([f.to_str().unwrap()])
            .collect::<Vec<_>>(),
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let spans: Vec<f64> = v["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["span_ms"].as_f64().unwrap())
        .collect();
    assert!(spans.iter().all(|&s| s >= 0.0), "{spans:?}");
    // A kernel from i64::MIN to i64::MAX cannot be right: left out (and
    // counted), it no longer stretches a device's span across all time.
    assert!(spans.iter().all(|&s| s < 1e7), "{spans:?}");
}

#[test]
fn the_timeline_draws_at_i64_extremes() {
    let f = extreme_copy("extreme_tui");
    let mut app = App::new(Keymap::default_keymap(), false);
    let mut msgs = Vec::new();
    let opened = data::load(&[Source::File(f)], None, &Settings::default(), &mut |m| {
        msgs.push(m)
    });
    assert!(opened);
    for m in msgs {
        if !matches!(m, LoadMsg::Progress { .. }) {
            app.on_load(m);
        }
    }
    assert!(app.capture().data.is_some());
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
    terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    let press = |app: &mut App, terminal: &mut Terminal<TestBackend>, code: KeyCode| {
        app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
        terminal.draw(|f| ui::draw(f, app)).unwrap();
    };
    use KeyCode::*;
    // Every panel, the whole span, then on each lane: the first event
    // selected, its details, zoomed to it, panned and zoomed around it.
    for c in ['1', '2', '3', '4', '5', 'f', 't', 't', ']', '['] {
        press(&mut app, &mut terminal, Char(c));
    }
    for _ in 0..40 {
        for code in [
            Home,
            Tab,
            Enter,
            Char('5'),
            Char('z'),
            Char('w'),
            Char('s'),
            Char('a'),
            Char('d'),
            End,
            BackTab,
            Char('z'),
            Char('f'),
            Esc,
            Char('j'),
        ] {
            press(&mut app, &mut terminal, code);
        }
    }
}
