//! The stats view (`S`): the table `report stats` prints, for the whole
//! capture or the visible window; sorted by any column, filtered; Enter
//! goes to the name's longest event and `n` / `N` through the next
//! longest, one per collective instance.

mod common;

use common::tui::*;
use rankline::tui::state::Overlay;

const MEGATRON: &str = "megatron_tp8.sqlite";

#[test]
fn s_opens_again_after_a_jump() {
    let (mut app, mut t) = open_at(&[fixture(MEGATRON)], None, 160, 48);
    press(&mut app, &mut t, "S");
    assert!(matches!(app.chrome().overlay, Overlay::Stats(_)));
    key(&mut app, &mut t, crossterm::event::KeyCode::Enter);
    assert!(matches!(app.chrome().overlay, Overlay::None));
    press(&mut app, &mut t, "n");
    println!("{:?} {:?}", app.mode(), app.chrome().panels.focused());
    press(&mut app, &mut t, "S");
    assert!(
        matches!(app.chrome().overlay, Overlay::Stats(_)),
        "{:?}",
        app.mode()
    );
}

use crossterm::event::KeyCode;
use rankline::tui::selection::EventRef;
use serde_json::Value;

/// The view's rows as (name, total ns, count, max ns), in the order shown.
fn shown(app: &rankline::tui::state::App) -> Vec<(String, i64, usize, i64)> {
    let Overlay::Stats(st) = &app.chrome().overlay else {
        panic!("the stats view is not open")
    };
    let l = app.capture().data().unwrap();
    let t = app.stats_table().unwrap();
    rankline::tui::stats_view::order(t, &l.profile.strings, st)
        .into_iter()
        .map(|i| {
            let r = &t.rows[i];
            (
                l.profile.strings.get(r.name).to_string(),
                r.total_ns,
                r.count,
                r.max_ns,
            )
        })
        .collect()
}

/// `report stats` JSON rows as (name, total ms, count).
fn report(extra: &[&str]) -> Vec<(String, f64, u64)> {
    let mut args = vec!["report", "stats", "--no-cache", "--format", "json"];
    args.extend(extra);
    args.push("fixtures/megatron_tp8.sqlite");
    common::json(&args)["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r: &Value| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["total_ms"].as_f64().unwrap(),
                r["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn same_as_report(rows: &[(String, i64, usize, i64)], want: &[(String, f64, u64)]) {
    assert_eq!(rows.len(), want.len());
    for (r, w) in rows.iter().zip(want) {
        assert_eq!(r.0, w.0);
        assert!((r.1 as f64 / 1e6 - w.1).abs() < 1e-9, "{r:?} {w:?}");
        assert_eq!(r.2 as u64, w.2);
    }
}

#[test]
fn the_table_is_the_reports_for_the_capture_and_for_the_window() {
    let (mut app, mut t) = open_at(&[fixture(MEGATRON)], None, 160, 48);
    press(&mut app, &mut t, "S");
    let rows = shown(&app);
    assert!(rows.len() > 5);
    // Kernels by the names the timeline shows (short), then by demangled
    // name after K, as `report stats` has them either way.
    same_as_report(&rows, &report(&["--names", "short"]));
    press(&mut app, &mut t, "K");
    let demangled = shown(&app);
    same_as_report(&demangled, &report(&[]));
    assert_ne!(demangled, rows, "the fixture's kernels have two names");
    assert!(screen(&t).contains("by demangled name"), "{}", screen(&t));
    press(&mut app, &mut t, "K");
    assert!(screen(&t).contains("by short name"), "{}", screen(&t));
    // Zoomed in, the window's table is the report's over that window.
    press(&mut app, &mut t, "Swwww");
    let v = app.capture().view;
    press(&mut app, &mut t, "S");
    press(&mut app, &mut t, "w");
    let (a, b) = (v.t0.floor() / 1e9, (v.t0 + v.span).ceil() / 1e9);
    let win = report(&[
        "--names",
        "short",
        "--window",
        &format!("{a:.9}"),
        &format!("{b:.9}"),
    ]);
    assert!(!win.is_empty() && win.len() <= rows.len());
    same_as_report(&shown(&app), &win);
    assert!(screen(&t).contains("over the window"), "{}", screen(&t));
    // Tab: the next table, the copies, as the report has them.
    press(&mut app, &mut t, "w");
    press_code(&mut app, &mut t, KeyCode::Tab);
    same_as_report(&shown(&app), &report(&["--of", "copies"]));
}

fn press_code(
    app: &mut rankline::tui::state::App,
    t: &mut ratatui::Terminal<ratatui::backend::TestBackend>,
    c: KeyCode,
) {
    key(app, t, c);
}

#[test]
fn any_column_sorts_either_way_and_the_filter_keeps_matching_names() {
    let (mut app, mut t) = open_at(&[fixture(MEGATRON)], None, 160, 48);
    press(&mut app, &mut t, "S");
    // total → count → avg → med → min → max.
    for _ in 0..5 {
        press_code(&mut app, &mut t, KeyCode::Right);
    }
    let rows = shown(&app);
    assert!(
        rows.windows(2).all(|w| w[0].3 >= w[1].3),
        "by max, largest first"
    );
    assert!(screen(&t).contains("max_ms↓"), "{}", screen(&t));
    press(&mut app, &mut t, "r");
    let reversed = shown(&app);
    assert!(reversed.windows(2).all(|w| w[0].3 <= w[1].3));
    assert!(screen(&t).contains("max_ms↑"));
    press(&mut app, &mut t, "/NCCL");
    // Typed letters go to the filter, not to the keys (r, w…).
    press(&mut app, &mut t, "rw");
    key(&mut app, &mut t, KeyCode::Backspace);
    key(&mut app, &mut t, KeyCode::Backspace);
    key(&mut app, &mut t, KeyCode::Enter);
    let filtered = shown(&app);
    assert_eq!(filtered.len(), 3, "{filtered:?}");
    assert!(filtered.iter().all(|r| r.0.to_lowercase().contains("nccl")));
    assert!(screen(&t).contains("filter: NCCL"));
    key(&mut app, &mut t, KeyCode::Esc);
    assert!(matches!(app.chrome().overlay, Overlay::None), "Esc closes");
    press(&mut app, &mut t, "S");
    assert_eq!(shown(&app), filtered, "the view opens as it was left");
}

/// Enter: the name's longest kernel's instance; `n` the next longest, in
/// another instance each time, never longer than the one before.
#[test]
fn enter_goes_to_the_longest_and_n_to_the_next_longest() {
    let (mut app, mut t) = open_at(&[fixture(MEGATRON)], None, 160, 48);
    press(&mut app, &mut t, "S");
    let top = shown(&app)[0].clone();
    assert!(top.0.starts_with("ncclDevKernel_AllGather"), "{top:?}");
    key(&mut app, &mut t, KeyCode::Enter);
    let l = app.capture().data().unwrap();
    let (p, m) = (&l.profile, &l.analysis.matching);
    let longest_instance = |app: &rankline::tui::state::App| {
        let (g, k) = app.capture().instance().expect("an instance selected");
        m.groups[g]
            .members(k)
            .map(|(_, _, (s, e))| e - s)
            .max()
            .unwrap()
    };
    assert_eq!(longest_instance(&app), top.3, "the instance of the longest");
    assert!(screen(&t).contains("the longest of 959"), "{}", screen(&t));
    let mut seen = vec![app.capture().instance().unwrap()];
    let mut last = top.3;
    for _ in 0..5 {
        press(&mut app, &mut t, "n");
        let here = app.capture().instance().unwrap();
        assert!(!seen.contains(&here), "n moved on: {seen:?} {here:?}");
        let d = longest_instance(&app);
        assert!(d <= last, "{d} after {last}");
        last = d;
        seen.push(here);
    }
    let Some(EventRef::Gpu(r)) = app.capture().selection else {
        panic!()
    };
    assert_eq!(p.strings.get(p.gpu.name(r)), top.0);
}

/// Enter zooms the timeline to what it picks, as `z` shows a selection:
/// a compute kernel's longest run fills the window, the cursor on its
/// stream; Backspace goes back to the window it left.
#[test]
fn enter_zooms_the_timeline_to_the_names_longest_event() {
    let (mut app, mut t) = open_at(&[fixture(MEGATRON)], None, 160, 48);
    let before = app.capture().view;
    press(&mut app, &mut t, "S");
    let rows = shown(&app);
    let at = rows.iter().position(|r| !r.0.contains("nccl")).unwrap();
    for _ in 0..at {
        press_code(&mut app, &mut t, KeyCode::Down);
    }
    key(&mut app, &mut t, KeyCode::Enter);
    assert!(matches!(app.chrome().overlay, Overlay::None));
    let l = app.capture().data().unwrap();
    let p = &l.profile;
    let Some(EventRef::Gpu(r)) = app.capture().selection else {
        panic!("{:?}", app.capture().selection)
    };
    assert_eq!(
        p.strings.get(p.gpu.name_as(r, app.capture().show.names)),
        rows[at].0
    );
    let (s, e) = l.analysis.clock.gpu_span(p, r);
    assert_eq!(e - s, rows[at].3, "the longest");
    let v = app.capture().view;
    assert!(
        v.t0 <= s as f64 && v.t0 + v.span >= e as f64 && v.span <= 2.0 * (e - s) as f64,
        "[{s}, {e}) in the window {:.0}+{:.0}",
        v.t0,
        v.span
    );
    let row = app.capture().lanes.at_cursor().unwrap();
    assert!(
        rankline::tui::lanes::event_on_row(p, &l.index, row.kind, EventRef::Gpu(r)),
        "the cursor on {}",
        row.label
    );
    key(&mut app, &mut t, KeyCode::Backspace);
    assert_eq!(app.capture().view, before);
}

/// The table is derived off the UI thread: `S` asks for one job, the view
/// says so until it ends, then shows the table; `Tab` asks for the next
/// kind's, and the table kept is never shown as the other kind's.
#[test]
fn the_table_is_computed_off_the_key_and_shown_when_ready() {
    use rankline::tui::action::Action;
    let (mut app, mut t) = open_at(&[fixture(MEGATRON)], None, 160, 48);
    app.apply(Action::StatsView);
    let job = app.next_derive_job().expect("the table's job");
    assert!(app.next_derive_job().is_none(), "one job");
    t.draw(|f| rankline::tui::ui::draw(f, &mut app)).unwrap();
    assert!(
        screen(&t).contains("computing the table…"),
        "{}",
        screen(&t)
    );
    assert!(app.stats_table().is_none());
    app.on_derived(job.run());
    let kernels = app.stats_table().expect("the kernels' table").of;
    app.apply(Action::NextTable);
    assert!(
        app.stats_table().is_none(),
        "not the kernels' table as the next kind's"
    );
    let job = app.next_derive_job().expect("the next kind's job");
    app.on_derived(job.run());
    assert_ne!(app.stats_table().expect("its table").of, kernels);
}
