//! The timeline on `fixtures/multinode` (four nodes, clocks hours apart):
//! the view is on the reference clock and every lane on its file's, so
//! finding "the event at the cursor" must map one onto the other. For
//! every stream lane of every file, with the view centred on the lane's
//! middle kernel, Enter, a click, Tab and `n` land on that kernel (or its
//! instance); and the overlap panel's visible window covers every file's
//! devices with the figures `report overlap --window` gives.

mod common;

use common::tui::{draw, open_at, screen};
use common::{json, root};
use crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use rankline::profile::Source;
use rankline::tui::action::Action;
use rankline::tui::capture::time;
use rankline::tui::lanes::LaneKind;
use rankline::tui::state::{App, EventRef, Target};
use rankline::tui::timescale::View;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn multinode() -> (App, Terminal<TestBackend>) {
    let files: Vec<Source> = (0..4)
        .map(|n| Source::File(root().join(format!("fixtures/multinode/node{n}.sqlite"))))
        .collect();
    open_at(&files, None, 200, 60)
}

/// Every stream lane with kernels, and the GPU rows of its track in time
/// order.
fn stream_lanes(app: &App) -> Vec<(LaneKind, Vec<usize>)> {
    let l = app.capture().data.clone().unwrap();
    app.capture()
        .lanes
        .rows
        .iter()
        .filter(|r| matches!(r.kind, LaneKind::Stream(_)))
        .filter_map(|r| {
            let (track, _) = time::track(&l, r.kind)?;
            let rows: Vec<usize> = (0..track.len()).map(|i| track.row(i)).collect();
            (rows.len() >= 3).then_some((r.kind, rows))
        })
        .collect()
}

/// Centres the view on GPU row `r` (20× its duration across) with the
/// cursor on lane `kind`, and draws.
fn centre_on(app: &mut App, t: &mut Terminal<TestBackend>, kind: LaneKind, r: usize) {
    let l = app.capture().data.clone().unwrap();
    let (a, b) = time::event_span(&l, EventRef::Gpu(r));
    let span = ((b - a) as f64 * 20.0).max(1e3);
    app.set_view(View {
        t0: (a as f64 + b as f64) / 2.0 - span / 2.0,
        span,
    });
    app.select(None, false);
    let row = app.capture().lanes.find(kind).expect("the lane is shown");
    app.put_cursor(row);
    draw(app, t);
}

/// The label of a lane, for messages.
fn label(app: &App, kind: LaneKind) -> String {
    let row = app.capture().lanes.find(kind).unwrap();
    app.capture().lanes.rows[row].label.clone()
}

#[test]
fn every_lane_of_every_file_selects_the_kernel_under_the_cursor() {
    let (mut app, mut t) = multinode();
    let lanes = stream_lanes(&app);
    // Every node's streams: 4 nodes × 4 GPUs × 3 streams.
    assert_eq!(
        lanes.len(),
        48,
        "{:?}",
        lanes.iter().map(|l| l.0).collect::<Vec<_>>()
    );
    let mut wrong = Vec::new();
    for (kind, rows) in &lanes {
        let mid = rows.len() / 2;
        let r = rows[mid];
        let want = Some(EventRef::Gpu(r));
        // Enter at the cursor.
        centre_on(&mut app, &mut t, *kind, r);
        app.apply(Action::SelectUnderCursor);
        if app.capture().selection != want {
            wrong.push(format!(
                "{}: Enter gave {:?}",
                label(&app, *kind),
                app.capture().selection
            ));
        }
        // A click on the cursor's column of the lane.
        centre_on(&mut app, &mut t, *kind, r);
        let lanes_area = app.chrome().layout.lanes;
        let row = app.capture().lanes.cursor - app.capture().lanes.scroll.top;
        let x = lanes_area.x
            + app.chrome().layout.label_width
            + 1
            + (app.chrome().layout.timeline_width / 2) as u16;
        app.on_mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: x,
            row: lanes_area.y + row as u16,
            modifiers: KeyModifiers::NONE,
        });
        if app.capture().selection != want {
            wrong.push(format!(
                "{}: a click gave {:?}",
                label(&app, *kind),
                app.capture().selection
            ));
        }
        // Tab from the kernel before it on the lane.
        centre_on(&mut app, &mut t, *kind, r);
        app.select(Some(EventRef::Gpu(rows[mid - 1])), false);
        app.apply(Action::NextEvent);
        if app.capture().selection != want {
            wrong.push(format!(
                "{}: Tab gave {:?}",
                label(&app, *kind),
                app.capture().selection
            ));
        }
        // `n` from the instance before it, when it is a collective.
        let l = app.capture().data.clone().unwrap();
        if let Some((g, k)) = l.analysis.matching.instance_of(r).filter(|i| i.1 > 0) {
            app.go(Target::Instance(g, k - 1), true);
            app.apply(Action::NextOccurrence);
            let (a, b) = time::event_span(&l, EventRef::Gpu(r));
            let v = app.capture().view;
            if app.capture().instance() != Some((g, k)) || (a as f64) < v.t0 || b as f64 > v.end() {
                wrong.push(format!(
                    "{}: n gave {:?} in {:?}",
                    label(&app, *kind),
                    app.capture().instance(),
                    v
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn the_visible_window_of_the_overlap_panel_is_every_file_s_and_the_report_s() {
    let (mut app, mut t) = multinode();
    app.apply(Action::FitAll);
    app.apply(Action::PanelOverlap);
    draw(&mut app, &mut t);
    let (_, w) = app.capture().window_key().expect("a window");
    let windowed = app
        .capture()
        .window_overlap()
        .expect("derived when the panel opened")
        .clone();
    assert_eq!(windowed.len(), 16, "every node's devices");
    // The same window, to the ns, as `report overlap --window` takes it.
    let secs = |ns: i64| format!("{:.9}", ns as f64 / 1e9);
    let report = json(&[
        "report",
        "overlap",
        "fixtures/multinode",
        "--no-cache",
        "--format",
        "json",
        "--window",
        &secs(w.start),
        &secs(w.end),
    ]);
    let devices = report["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 16);
    let l = app.capture().data.clone().unwrap();
    for (d, want) in windowed.iter().zip(devices) {
        let key = l.profile.device_label(d.device).key_string();
        assert_eq!(want["device"], key.as_str());
        let ms = |ns: i64| ns as f64 / 1e6;
        for (got, field) in [
            (ms(d.span_ns), "span_ms"),
            (ms(d.compute_only_ns), "compute_only_ms"),
            (ms(d.nccl_only_ns), "nccl_only_ms"),
            (ms(d.overlap_ns), "overlap_ms"),
            (ms(d.copy_only_ns), "copy_only_ms"),
            (ms(d.idle_ns), "idle_ms"),
        ] {
            let w = want[field].as_f64().unwrap();
            assert!((got - w).abs() < 1e-6, "{key} {field}: {got} vs {w}");
        }
        assert_eq!(want["nccl_kernels"], d.nccl_kernels);
    }
    // Derived when the view changes, not redrawn per frame: a frame alone
    // keeps it, a zoom replaces it.
    // Derived off the UI thread: a zoom asks for the new window's, and
    // until its job ends the panel says it is computing.
    draw(&mut app, &mut t);
    assert!(app.capture().window_overlap().is_some());
    app.apply(Action::ZoomIn);
    assert_ne!(app.capture().window_key().map(|k| k.1), Some(w));
    assert!(app.capture().window_overlap().is_none());
    app.derive();
    let job = app.next_derive_job().expect("the new window's job");
    assert!(app.next_derive_job().is_none(), "one job at a time");
    t.draw(|f| rankline::tui::ui::draw(f, &mut app)).unwrap();
    assert!(screen(&t).contains("computing…"), "{}", screen(&t));
    app.on_derived(job.run());
    assert!(app.capture().window_overlap().is_some());
}
