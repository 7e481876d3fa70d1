//! Helpers for whole-app tests on TestBackend: open fixtures, press keys
//! drawing between them as the loop does, read the screen back.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rankline::analysis::Settings;
use rankline::profile::Source;
use rankline::tui::keymap::Keymap;
use rankline::tui::panel::{PanelArea, PanelKind};
use rankline::tui::state::App;
use rankline::tui::ui;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;

/// A bundled fixture, by its path under `fixtures/`.
pub fn fixture(name: &str) -> Source {
    Source::File(super::root().join("fixtures").join(name))
}

/// A frame as the loop draws it: again when it moved what the rows in
/// view derive.
pub fn draw(app: &mut App, t: &mut Terminal<TestBackend>) {
    t.draw(|f| ui::draw(f, app)).unwrap();
    // Until what the frame shows is what it asked for: each result is
    // drawn, and a frame that moved the rows in view asks again (a few
    // rounds at most: the panels settle at their size).
    for _ in 0..4 {
        app.after_frame();
        if !derive(app) {
            break;
        }
        t.draw(|f| ui::draw(f, app)).unwrap();
    }
}

/// Runs the derived work the app asked for, as the loop does off its
/// thread, handing each result back before the next frame. True when any
/// ran.
pub fn derive(app: &mut App) -> bool {
    let mut ran = false;
    while let Some(job) = app.next_derive_job() {
        app.on_derived(job.run());
        ran = true;
    }
    ran
}

/// Each character of `keys` as a key press, drawing after each.
pub fn press(app: &mut App, t: &mut Terminal<TestBackend>, keys: &str) {
    for c in keys.chars() {
        key(app, t, KeyCode::Char(c));
    }
}

/// A key press; the bookmark file's work it asks for is done before the
/// next frame (the loop runs it off its thread and hands back the end).
pub fn key(app: &mut App, t: &mut Terminal<TestBackend>, code: KeyCode) {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
    while let Some(job) = app.next_bookmark_job() {
        app.on_bookmarks(job.run());
    }
    derive(app);
    draw(app, t);
}

/// The cells of `r`, one string per row.
pub fn rows(t: &Terminal<TestBackend>, r: Rect) -> Vec<String> {
    let buf = t.backend().buffer();
    (r.y..r.bottom())
        .map(|y| (r.x..r.right()).map(|x| buf[(x, y)].symbol()).collect())
        .collect()
}

/// The whole screen, each row trimmed and ended by a newline.
pub fn screen(t: &Terminal<TestBackend>) -> String {
    rows(t, t.backend().buffer().area)
        .iter()
        .map(|r| r.trim_end().to_string() + "\n")
        .collect()
}

/// `sources` loaded at once (with `--goto`, when given) and drawn at w×h.
pub fn open_at(
    sources: &[Source],
    goto: Option<&str>,
    w: u16,
    h: u16,
) -> (App, Terminal<TestBackend>) {
    let mut app = App::new(Keymap::default_keymap(), false);
    app.set_goto(goto.map(String::from));
    app.load_now(sources, None, &Settings::default());
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    draw(&mut app, &mut t);
    (app, t)
}

/// `after` with `before` as its baseline, loaded at once and drawn at w×h.
pub fn open_with_baseline(
    after: &[Source],
    before: &[Source],
    w: u16,
    h: u16,
) -> (App, Terminal<TestBackend>) {
    let mut app = App::new(Keymap::default_keymap(), false);
    app.load_now_with_baseline(after, before, None, &Settings::default());
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    draw(&mut app, &mut t);
    (app, t)
}

/// Where the last frame drew panel `k`.
pub fn panel_area(app: &App, k: PanelKind) -> PanelArea {
    app.chrome()
        .layout
        .panels
        .iter()
        .find(|p| p.kind == Some(k))
        .unwrap_or_else(|| panic!("{} not drawn", k.name()))
        .clone()
}

/// The 0-based instance of group `g` with the largest start skew (the
/// first of equals), from the shown capture's own skew analysis.
pub fn worst(app: &App, g: usize) -> usize {
    let l = app.capture().data.as_ref().unwrap();
    let gs = l.analysis.skews.iter().find(|s| s.group == g).unwrap();
    let max = gs.instances.iter().map(|i| i.start_skew_ns).max().unwrap();
    gs.instances
        .iter()
        .find(|i| i.start_skew_ns == max)
        .unwrap()
        .index
}
