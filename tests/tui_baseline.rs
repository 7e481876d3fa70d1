//! The timeline with `--baseline`: both captures load (the main one's first
//! frame first), `B` switches between them at the same offset from the same
//! step's start, and panel 6 shows the diff; Enter on its rows routes to
//! the kernel or the worst instance. On the whole app in TestBackend.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rankline::analysis::bundle::Settings;
use rankline::profile::Source;
use rankline::tui::baseline::{BaselineMsg, load_pair};
use rankline::tui::data::LoadMsg;
use rankline::tui::keymap::Keymap;
use rankline::tui::state::{App, step_starts};
use rankline::tui::ui;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::PathBuf;

fn fixture(name: &str) -> Source {
    Source::File(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(name),
    )
}

/// The per-rank fixture: four exports, one capture.
fn per_rank() -> Vec<Source> {
    (0..4)
        .map(|r| fixture(&format!("per_rank/rank{r}.sqlite")))
        .collect()
}

fn draw(app: &mut App, t: &mut Terminal<TestBackend>) {
    t.draw(|f| ui::draw(f, app)).unwrap();
}

fn press(app: &mut App, t: &mut Terminal<TestBackend>, keys: &str) {
    for c in keys.chars() {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        draw(app, t);
    }
}

fn screen(t: &Terminal<TestBackend>) -> String {
    let buf = t.backend().buffer();
    (0..buf.area.height)
        .map(|y| {
            let row: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
            row.trim_end().to_string() + "\n"
        })
        .collect()
}

/// `after` with `before` as its baseline, drawn once at w×h.
fn open(after: &[Source], before: &[Source], w: u16, h: u16) -> (App, Terminal<TestBackend>) {
    let mut app = App::new(Keymap::default_keymap(), false);
    app.load_now_with_baseline(after, before, None, &Settings::default());
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    draw(&mut app, &mut t);
    (app, t)
}

fn shown_file(app: &App) -> String {
    let l = app.loaded.as_ref().unwrap();
    l.profile.files[0]
        .path
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn the_main_capture_draws_before_the_baseline_loads() {
    let msgs = std::sync::Mutex::new(Vec::new());
    let opened = load_pair(
        &[fixture("megatron_tp8.sqlite")],
        &per_rank(),
        None,
        &Settings::default(),
        &|m| {
            let what = match m {
                LoadMsg::Done(_) => "main drawable",
                LoadMsg::Analysed(_) => "main analysed",
                LoadMsg::Baseline(BaselineMsg::Loaded(_)) => "baseline loaded",
                LoadMsg::Baseline(_) => "baseline stage",
                _ => return,
            };
            msgs.lock().unwrap().push(what)
        },
    );
    assert!(opened);
    let order = msgs.into_inner().unwrap();
    let at = |what| order.iter().position(|&m| m == what).unwrap();
    assert!(at("main drawable") < at("baseline stage"), "{order:?}");
    assert_eq!(order.iter().filter(|&&m| m == "baseline loaded").count(), 1);
    assert!(order.contains(&"main analysed"), "{order:?}");
}

#[test]
fn b_switches_capture_at_the_same_offset_from_the_same_step() {
    let (mut app, mut t) = open(&[fixture("megatron_tp8.sqlite")], &per_rank(), 160, 48);
    assert_eq!(shown_file(&app), "megatron_tp8.sqlite");
    let main_steps = step_starts(app.loaded.as_ref().unwrap());
    let base_steps = step_starts(app.baseline.as_ref().unwrap().other().unwrap());
    assert!(main_steps.len() >= 3 && base_steps.len() >= 3);
    // The captures' steps start at different times: a plain time offset
    // would not land on the same step.
    assert_ne!(main_steps[2] - main_steps[0], base_steps[2] - base_steps[0]);
    // A 20 ms window starting 1.5 ms into step 3.
    app.view.span = 20e6;
    app.view.t0 = main_steps[2] as f64 + 1.5e6;
    press(&mut app, &mut t, "B");
    assert!(app.baseline.as_ref().unwrap().shown);
    assert_eq!(shown_file(&app), "rank0.sqlite");
    assert!(
        (app.view.t0 - (base_steps[2] as f64 + 1.5e6)).abs() < 1.0,
        "{}",
        app.view.t0
    );
    assert_eq!(app.view.span, 20e6);
    let s = screen(&t);
    assert!(s.contains("B: the baseline, step 3"), "{s}");
    assert!(s.lines().next().unwrap().contains("BASELINE"), "{s}");
    // Moved within the baseline, then back: the same offset in the main one.
    app.view.t0 = base_steps[1] as f64 + 0.25e6;
    press(&mut app, &mut t, "B");
    assert!(!app.baseline.as_ref().unwrap().shown);
    assert_eq!(shown_file(&app), "megatron_tp8.sqlite");
    assert!((app.view.t0 - (main_steps[1] as f64 + 0.25e6)).abs() < 1.0);
    let s = screen(&t);
    assert!(s.contains("B: the main capture, step 2"), "{s}");
    assert!(!s.lines().next().unwrap().contains("BASELINE"), "{s}");
}

#[test]
fn b_keeps_each_captures_selection_for_when_it_comes_back() {
    let (mut app, mut t) = open(&[fixture("megatron_tp8.sqlite")], &per_rank(), 160, 48);
    press(&mut app, &mut t, "]");
    let (selected, instance) = (app.selection, app.instance);
    assert!(instance.is_some());
    press(&mut app, &mut t, "B");
    // Events are numbered per capture: nothing selected in the other one.
    assert_eq!((app.selection, app.instance), (None, None));
    press(&mut app, &mut t, "B");
    assert_eq!((app.selection, app.instance), (selected, instance));
}

#[test]
fn b_without_a_baseline_says_how_to_get_one() {
    let mut app = App::new(Keymap::default_keymap(), false);
    app.load_now(
        &[fixture("megatron_tp8.sqlite")],
        None,
        &Settings::default(),
    );
    let mut t = Terminal::new(TestBackend::new(160, 48)).unwrap();
    draw(&mut app, &mut t);
    let before = app.view;
    press(&mut app, &mut t, "B");
    assert_eq!(app.view, before);
    let s = screen(&t);
    assert!(
        s.contains("no baseline to switch to: start with rankline AFTER... --baseline BEFORE"),
        "{s}"
    );
}

#[test]
fn b_while_the_baseline_loads_says_so() {
    let msgs = std::sync::Mutex::new(Vec::new());
    load_pair(
        &[fixture("megatron_tp8.sqlite")],
        &per_rank(),
        None,
        &Settings::default(),
        &|m| msgs.lock().unwrap().push(m),
    );
    let mut app = App::new(Keymap::default_keymap(), false);
    app.baseline = Some(rankline::tui::state::Baseline::loading());
    for m in msgs.into_inner().unwrap() {
        if matches!(m, LoadMsg::Baseline(BaselineMsg::Loaded(_))) {
            break;
        }
        app.on_load(m);
    }
    let mut t = Terminal::new(TestBackend::new(160, 48)).unwrap();
    draw(&mut app, &mut t);
    press(&mut app, &mut t, "B");
    assert!(!app.baseline.as_ref().unwrap().shown);
    assert!(
        screen(&t).contains("the baseline is still loading"),
        "{}",
        screen(&t)
    );
}
