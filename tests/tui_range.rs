//! A range marked on the ruler (`,` and `.`, or a drag on it): the range
//! panel's figures equal `report stats --window` and `report overlap
//! --window` over the same `--window` it shows; its instances are those
//! wholly inside; Esc clears it; `y` copies its `--window`.

mod common;

use common::tui::*;
use crossterm::event::{KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use rankline::tui::lanes::LaneKind;
use rankline::tui::panel::PanelKind;
use rankline::tui::range::window_arg;

const MEGATRON: &str = "megatron_tp8.sqlite";

fn report(section: &str, window: &str, extra: &[&str]) -> serde_json::Value {
    let w: Vec<&str> = window.split(' ').collect();
    let mut args = vec![
        "report",
        section,
        "--no-cache",
        "--format",
        "json",
        w[0],
        w[1],
        w[2],
    ];
    args.extend(extra);
    args.push("fixtures/megatron_tp8.sqlite");
    common::json(&args)
}

#[test]
fn the_range_panel_equals_the_reports_over_its_window() {
    let (mut app, mut t) = open_at(&[fixture(MEGATRON)], None, 160, 48);
    // Zoomed in, the start at the cursor, panned right, the end.
    press(&mut app, &mut t, "w,dddd.");
    assert!(app.chrome().panels.is_open(PanelKind::Range));
    let f = app
        .capture()
        .range_facts_now()
        .cloned()
        .expect("the range's facts");
    let w = f.window;
    assert!(w.end > w.start);
    let arg = window_arg(w);
    assert!(screen(&t).contains(&arg), "{}", screen(&t));
    // Kernels and NVTX ranges: report stats --window's rows, kernels by
    // the names shown (short, then demangled after K).
    let l = app.capture().data().unwrap();
    let p = &l.profile;
    let same = |rows: &[rankline::analysis::name_stats::StatRow], want: &serde_json::Value, of| {
        let want = want["rows"].as_array().unwrap();
        assert_eq!(rows.len(), want.len(), "{of}");
        assert!(!rows.is_empty(), "{of}");
        for (r, w) in rows.iter().zip(want) {
            assert_eq!(r.label(&p.strings), w["name"].as_str().unwrap());
            assert_eq!(r.count as u64, w["count"].as_u64().unwrap());
        }
    };
    let short = report("stats", &arg, &["--of", "kernels", "--names", "short"]);
    same(&f.kernels, &short, "kernels");
    same(&f.nvtx, &report("stats", &arg, &["--of", "nvtx"]), "nvtx");
    press(&mut app, &mut t, "K");
    let demangled = app.capture().range_facts_now().cloned().unwrap().kernels;
    same(
        &demangled,
        &report("stats", &arg, &["--of", "kernels"]),
        "demangled",
    );
    let short_names: Vec<&str> = short["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    let long_names: Vec<&str> = demangled.iter().map(|r| p.strings.get(r.name)).collect();
    assert_ne!(
        short_names, long_names,
        "the fixture's kernels have two names"
    );
    press(&mut app, &mut t, "K");
    // Busy per device row: report overlap --window's span − idle.
    let overlap = report("overlap", &arg, &[]);
    let mut devices = 0;
    for (kind, busy) in &f.busy {
        if let LaneKind::Device(d) = kind {
            let Some(row) = overlap["devices"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["device"] == *d)
            else {
                assert_eq!(*busy, 0, "D{d} has no GPU activity");
                continue;
            };
            let want = row["span_ms"].as_f64().unwrap() - row["idle_ms"].as_f64().unwrap();
            assert!(
                (*busy as f64 / 1e6 - want).abs() < 1e-5,
                "D{d}: {busy} vs {want}"
            );
            devices += 1;
        }
    }
    assert!(devices > 0, "a device row in view: {:?}", f.busy);
    // Instances: every one whose ranks' kernels all lie inside.
    let m = &l.analysis.matching;
    let mut want = Vec::new();
    for (g, group) in m.groups.iter().enumerate() {
        for k in 0..group.instances() {
            let spans: Vec<_> = group.members(k).map(|x| x.2).collect();
            if !spans.is_empty() && spans.iter().all(|s| s.0 >= w.start && s.1 <= w.end) {
                want.push((g, k));
            }
        }
    }
    let mut got: Vec<_> = f.instances.iter().map(|i| (i.group, i.index)).collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);
    assert!(!got.is_empty());
    // y copies the --window; Esc clears the range, then the selection.
    press(&mut app, &mut t, "y");
    assert!(app.answer().unwrap().contains(&arg));
    key(&mut app, &mut t, KeyCode::Esc);
    assert!(app.capture().range.is_empty() && !app.chrome().panels.is_open(PanelKind::Range));
    assert_eq!(app.answer(), Some("range cleared"));
}

#[test]
fn a_drag_on_the_ruler_marks_a_range_and_a_click_marks_none() {
    let (mut app, mut t) = open_at(&[fixture(MEGATRON)], None, 160, 48);
    app.set_mouse(true);
    let ruler_y = app.chrome().layout.timeline.y;
    let x0 = app.chrome().layout.lanes.x + app.chrome().layout.label_width + 1;
    // The ruler as the drag saw it (the panel opens on release).
    let v = app.capture().view;
    let cols = f64::from(app.chrome().layout.lanes.width - app.chrome().layout.label_width - 1);
    let mouse = |kind, column| MouseEvent {
        kind,
        column,
        row: ruler_y,
        modifiers: KeyModifiers::NONE,
    };
    app.on_mouse(mouse(MouseEventKind::Down(MouseButton::Left), x0 + 10));
    app.on_mouse(mouse(MouseEventKind::Up(MouseButton::Left), x0 + 10));
    assert!(app.capture().range.is_empty(), "a click marks nothing");
    app.on_mouse(mouse(MouseEventKind::Down(MouseButton::Left), x0 + 10));
    app.on_mouse(mouse(MouseEventKind::Drag(MouseButton::Left), x0 + 30));
    app.on_mouse(mouse(MouseEventKind::Up(MouseButton::Left), x0 + 50));
    draw(&mut app, &mut t);
    let w = app.capture().range.window().expect("a range");
    let want = 40.0 * v.span / cols;
    assert!(
        ((w.end - w.start) as f64 - want).abs() < v.span / cols,
        "{w:?}"
    );
    assert!(app.chrome().panels.is_open(PanelKind::Range));
    let s = screen(&t);
    assert!(s.contains("range") && s.contains("range end"), "{s}");
}

/// Across four nodes (four clocks), each device's busy time in the range
/// is `report overlap --window`'s: measured on its own file's clock with
/// the range placed in it.
#[test]
fn across_nodes_busy_is_the_overlap_reports() {
    let files =
        rankline::profile::inputs::expand_inputs(&[common::root().join("fixtures/multinode")])
            .unwrap();
    let src: Vec<_> = files
        .iter()
        .cloned()
        .map(rankline::profile::Source::File)
        .collect();
    let (mut app, mut t) = open_at(&src, None, 160, 48);
    press(&mut app, &mut t, "w,dd.");
    let f = app
        .capture()
        .range_facts_now()
        .cloned()
        .expect("the range's facts");
    let arg = window_arg(f.window);
    let w: Vec<&str> = arg.split(' ').collect();
    let overlap = common::json(&[
        "report",
        "overlap",
        "--no-cache",
        "--format",
        "json",
        w[0],
        w[1],
        w[2],
        "fixtures/multinode",
    ]);
    let l = app.capture().data().unwrap();
    let mut checked = 0;
    for (kind, busy) in &f.busy {
        let LaneKind::Device(d) = kind else { continue };
        let label = serde_json::Value::from(l.profile.device_label(*d).key_string());
        let row = overlap["devices"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["device"] == label)
            .unwrap_or_else(|| panic!("{label} in {overlap}"));
        let want = row["span_ms"].as_f64().unwrap() - row["idle_ms"].as_f64().unwrap();
        assert!(
            (*busy as f64 / 1e6 - want).abs() < 1e-5,
            "{label}: {busy} vs {want}"
        );
        checked += 1;
    }
    assert!(checked > 0, "{:?}", f.busy);
}
