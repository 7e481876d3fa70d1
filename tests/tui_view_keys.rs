//! Each view's own keys, from the keymap: `?` in a view opens the help
//! with that view's keys first (the NVTX tree, the bookmarks, the range
//! panel, who is behind, and every other list), under a heading that
//! names the view and the key that opens it; the status line names the
//! open view's main keys.

mod common;

use common::tui::*;
use crossterm::event::KeyCode;
use rankline::analysis::Settings;
use rankline::profile::bookmarks::Bookmark;
use rankline::tui::action::Mode;
use rankline::tui::keymap::Keymap;
use rankline::tui::state::{App, Overlay};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const MEGATRON: &str = "megatron_tp8.sqlite";

/// The fixture at 160×48, under `keymap`.
fn open_with(keymap: Keymap) -> (App, Terminal<TestBackend>) {
    let mut app = App::new(keymap, false);
    app.load_now(&[fixture(MEGATRON)], None, &Settings::default());
    let mut t = Terminal::new(TestBackend::new(160, 48)).unwrap();
    draw(&mut app, &mut t);
    (app, t)
}

/// Opens the view whose keys are `mode`'s, as a user does.
fn open_view(app: &mut App, t: &mut Terminal<TestBackend>, mode: Mode) {
    match mode {
        Mode::NvtxTree => press(app, t, "T"),
        Mode::Bookmarks => {
            // Read from the state directory in use; one made here keeps
            // the test off the disk.
            app.set_bookmarks(vec![Bookmark {
                name: "a place".into(),
                group: None,
                instance: None,
                window_ns: [0, 1],
                created: "2026-12-06T00:00:00Z".into(),
            }]);
            press(app, t, "'");
        }
        // A range marked at the cursor and four pans on, its panel focused.
        Mode::Range => press(app, t, ",dddd.p"),
        Mode::Behind => press(app, t, "W"),
        Mode::Stats => press(app, t, "S"),
        Mode::BigEvents => press(app, t, "b"),
        Mode::Messages => press(app, t, "!"),
        Mode::Panel => press(app, t, "1p"),
        other => panic!("no view to open for {}", other.name()),
    }
    assert_eq!(app.mode(), mode, "{} did not open", mode.name());
}

/// The help popup's text as drawn, one string per row inside its frame.
fn popup_rows(t: &Terminal<TestBackend>) -> Vec<String> {
    let s = screen(t);
    let lines: Vec<Vec<char>> = s.lines().map(|l| l.chars().collect()).collect();
    let top = lines
        .iter()
        .position(|l| l.iter().collect::<String>().contains("┌ help"))
        .expect("the help is open");
    let left = lines[top].iter().position(|&c| c == '┌').unwrap();
    let right = left + lines[top][left..].iter().position(|&c| c == '┐').unwrap();
    lines[top + 1..]
        .iter()
        .take_while(|l| l.get(left) == Some(&'│'))
        .map(|l| l[left + 1..right.min(l.len())].iter().collect())
        .collect()
}

/// Words joined by single spaces: a wrapped description reads as one.
fn words(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The views named in issue 44 and every other list: `?` shows the
/// view's own keys first, each with its description, as the keymap has
/// them.
#[test]
fn question_mark_in_a_view_shows_that_views_keys_first() {
    let views = [
        (
            Mode::NvtxTree,
            "nvtx_tree keys: the NVTX tree (T on the timeline)",
        ),
        (
            Mode::Bookmarks,
            "bookmarks keys: the bookmarks list (' on the timeline)",
        ),
        (
            Mode::Range,
            "range keys: the range panel with the keys (p on the timeline)",
        ),
        (
            Mode::Behind,
            "behind keys: who is behind (W on the timeline)",
        ),
        (
            Mode::Stats,
            "stats keys: the stats view (S on the timeline)",
        ),
        (
            Mode::BigEvents,
            "big_events keys: the largest start skews (b on the timeline)",
        ),
        (
            Mode::Messages,
            "messages keys: the messages (! on the timeline)",
        ),
        (
            Mode::Panel,
            "panel keys: a side panel with the keys (p on the timeline)",
        ),
    ];
    for (mode, heading) in views {
        let (mut app, mut t) = open_with(Keymap::default_keymap());
        open_view(&mut app, &mut t, mode);
        press(&mut app, &mut t, "?");
        assert!(matches!(app.chrome().overlay, Overlay::Help(_, m) if m == mode));
        let rows = popup_rows(&t);
        // After the keymap's line and a blank one: the view's heading,
        // then its keys up to the next blank line.
        let at = rows
            .iter()
            .position(|r| r.trim() == heading)
            .unwrap_or_else(|| panic!("{heading:?} not in {rows:#?}"));
        assert_eq!(at, 2, "the view's keys come first: {rows:#?}");
        let end = rows[at..]
            .iter()
            .position(|r| r.trim().is_empty())
            .map_or(rows.len(), |e| at + e);
        let section = words(&rows[at + 1..end].join(" "));
        let listed = app.session().keymap.help(mode);
        assert!(listed.len() >= 4, "{}: {listed:?}", mode.name());
        for (keys, desc) in listed {
            let row = words(&format!("{keys} {desc}"));
            assert!(
                section.contains(&row),
                "{}: {row:?} in {section:?}",
                mode.name()
            );
        }
    }
}

/// What the views' keys are is the keymap's: a user's file that rebinds
/// them changes the help with them.
#[test]
fn the_views_keys_in_the_help_follow_the_users_keymap() {
    let dir = common::temp_dir("view-keys-keymap");
    let file = dir.join("keymap.toml");
    std::fs::write(
        &file,
        "[nvtx_tree]\naccept = { keys = [\"l\"], desc = \"Into the range\" }\n\
         [timeline]\nnvtx_tree = { keys = [\"X\"] }\n",
    )
    .unwrap();
    let (mut app, mut t) = open_with(Keymap::load(Some(&file)).unwrap());
    press(&mut app, &mut t, "X?");
    let rows = popup_rows(&t);
    // The keymap's path wraps; the first section follows its blank line.
    let at = 1 + rows.iter().position(|r| r.trim().is_empty()).unwrap();
    assert_eq!(
        rows[at].trim(),
        "nvtx_tree keys: the NVTX tree (X on the timeline)"
    );
    let section = words(&rows[at + 1..at + 14].join(" "));
    assert!(section.contains("l Into the range"), "{section}");
    assert!(!section.contains("Enter"), "{section}");
    // The status line under the tree names the same key.
    key(&mut app, &mut t, KeyCode::Esc);
    press(&mut app, &mut t, "X");
    assert!(
        status(&t).starts_with("NVTX tree: ↑ k ↓ j row · l zoom ·"),
        "{}",
        status(&t)
    );
    // The tree's `l` does what Enter did.
    assert!(matches!(app.chrome().overlay, Overlay::NvtxTree(_)));
    press(&mut app, &mut t, "l");
    assert_eq!(app.chrome().overlay, Overlay::None);
    assert!(app.capture().selection.is_some());
}

/// The status line, trimmed.
fn status(t: &Terminal<TestBackend>) -> String {
    screen(t).lines().last().unwrap_or("").trim().to_string()
}

/// While a view is open the status line names its keys, not the
/// timeline's; at 80 columns the least wanted give way, whole.
#[test]
fn the_status_line_names_the_open_views_keys() {
    let views = [
        (
            Mode::NvtxTree,
            "NVTX tree: ↑ k ↓ j row · Enter zoom · Tab next thread · Esc q T close · ? help",
        ),
        (
            Mode::Bookmarks,
            "bookmarks: ↑ k ↓ j row · Enter go · Esc q ' close · ? help",
        ),
        (
            Mode::Range,
            "range: ↑ k ↓ j row · Enter go · y copy --window · p Tab next panel · Esc q back",
        ),
        (
            Mode::Behind,
            "who is behind: ↑ k ↓ j row · Enter open · Esc q W close · ? help",
        ),
        (
            Mode::Stats,
            "stats: ↑ k ↓ j row · Enter zoom · ← < → > sort · Tab table · / filter · Esc q S close · ? help",
        ),
        (
            Mode::BigEvents,
            "largest skews: ↑ k ↓ j row · Enter go · s sort · Esc q b close · ? help",
        ),
        (
            Mode::Messages,
            "messages: ↑ k ↓ j scroll · Esc q Enter ! close · ? help",
        ),
    ];
    for (mode, want) in views {
        let (mut app, mut t) = open_with(Keymap::default_keymap());
        open_view(&mut app, &mut t, mode);
        assert_eq!(status(&t), want, "{}", mode.name());
    }
    let (mut app, mut t) = open_at(&[fixture(MEGATRON)], None, 80, 24);
    press(&mut app, &mut t, "S");
    assert_eq!(
        status(&t),
        "stats: ↑ k ↓ j row · Enter zoom · ← < → > sort · Tab table · / filter"
    );
    // Closed, the timeline's hints are back.
    press(&mut app, &mut t, "S");
    assert!(status(&t).contains("/ find"), "{}", status(&t));
}
