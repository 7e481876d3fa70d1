//! The straggler map (`H`) on the whole app drawn into TestBackend: the
//! big events' late ranks are the darkest cells, `s` sorts by mean
//! lateness, Enter (and a click) lands on the instance and rank on the
//! timeline, and Backspace comes back to the map.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use rankline::analysis::Settings;
use rankline::profile::Source;
use rankline::tui::action::Mode;
use rankline::tui::keymap::Keymap;
use rankline::tui::state::{App, EventRef, Screen};
use rankline::tui::ui;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::PathBuf;

fn open(w: u16, h: u16, no_color: bool) -> (App, Terminal<TestBackend>) {
    open_fixture("megatron_tp8.sqlite", w, h, no_color)
}

/// A fixture file, or every file of a fixture directory.
fn open_fixture(name: &str, w: u16, h: u16, no_color: bool) -> (App, Terminal<TestBackend>) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name);
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&path) {
        Ok(dir) => dir.map(|e| e.unwrap().path()).collect(),
        Err(_) => vec![path],
    };
    files.sort();
    let mut app = App::new(Keymap::default_keymap(), no_color);
    let sources: Vec<Source> = files.into_iter().map(Source::File).collect();
    app.load_now(&sources, None, &Settings::default());
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    (app, terminal)
}

fn key(app: &mut App, terminal: &mut Terminal<TestBackend>, code: KeyCode) {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
    terminal.draw(|f| ui::draw(f, app)).unwrap();
}

fn press(app: &mut App, terminal: &mut Terminal<TestBackend>, keys: &str) {
    for c in keys.chars() {
        key(app, terminal, KeyCode::Char(c));
    }
}

fn screen(terminal: &Terminal<TestBackend>) -> String {
    let buf = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        let line: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The map's cell glyph of (row on screen, column on screen).
fn cell(app: &App, terminal: &Terminal<TestBackend>, row: usize, col: usize) -> String {
    let a = app.chrome().layout.map_cells;
    terminal.backend().buffer()[(a.x + col as u16, a.y + row as u16)]
        .symbol()
        .to_string()
}

/// The group's device index of the map row on screen (a rank row).
fn rank_of_row(app: &App, row: usize) -> Option<usize> {
    let v = app.capture().straggler.as_ref().unwrap();
    match v.rows[v.rows_scroll.top + row] {
        rankline::tui::stragglers::MapRow::Rank(r) => Some(r),
        _ => None,
    }
}

#[test]
fn the_big_events_late_ranks_are_the_darkest_cells() {
    let (mut app, mut t) = open(160, 48, false);
    press(&mut app, &mut t, "H");
    assert_eq!(app.chrome().screen, Screen::Stragglers);
    assert_eq!(app.mode(), Mode::Stragglers);
    let v = app.capture().straggler.as_ref().unwrap();
    let l = app.capture().data.clone().unwrap();
    let g = &l.analysis.matching.groups[v.map.group];
    assert_eq!(g.key, "s20", "the first group with big events");
    assert_eq!((v.map.ranks(), v.map.columns()), (7, 225));
    let skew = l
        .analysis
        .skews
        .iter()
        .find(|s| s.group == v.map.group)
        .unwrap();
    let s = screen(&t);
    assert!(
        s.contains("straggler map · s20: 7 ranks × 225 instances"),
        "{s}"
    );
    assert!(
        s.contains("lateness (start − the instance's first start), ms:"),
        "{s}"
    );
    insta::assert_snapshot!("straggler_map_160x48", s);
    // Every big event's column, on the first screen or after End: its
    // late rank is █ and no other cell of the column is.
    let big: Vec<(usize, usize)> = skew
        .big_events
        .iter()
        .map(|e| (e.instance.index, e.instance.late))
        .collect();
    assert_eq!(big.len(), 4);
    let mut checked = Vec::new();
    for _ in 0..2 {
        let cols = app.capture().straggler.as_ref().unwrap().cols_scroll;
        for &(c, late) in &big {
            let Some(x) = c.checked_sub(cols.top).filter(|&x| x < cols.visible) else {
                continue;
            };
            for row in 1..=7 {
                let r = rank_of_row(&app, row).unwrap();
                let dark = cell(&app, &t, row, x) == "█";
                assert_eq!(dark, r == late, "instance {} rank {r}", c + 1);
            }
            checked.push(c);
        }
        key(&mut app, &mut t, KeyCode::End);
    }
    checked.sort();
    checked.dedup();
    assert_eq!(checked.len(), 4, "{checked:?}");
}

#[test]
fn s_sorts_ranks_by_mean_lateness() {
    let (mut app, mut t) = open(160, 48, false);
    press(&mut app, &mut t, "H");
    let order =
        |app: &App| -> Vec<usize> { (1..=7).map(|r| rank_of_row(app, r).unwrap()).collect() };
    assert_eq!(order(&app), (0..7).collect::<Vec<_>>());
    press(&mut app, &mut t, "s");
    let v = app.capture().straggler.as_ref().unwrap();
    let means: Vec<f64> = order(&app).iter().map(|&r| v.map.mean_ns[r]).collect();
    assert!(means.windows(2).all(|w| w[0] >= w[1]), "{means:?}");
    // Device 3 (index 2) is the latest on average in s20.
    assert_eq!(order(&app)[0], 2);
    assert!(screen(&t).contains("latest ranks first"));
    press(&mut app, &mut t, "s");
    assert_eq!(order(&app), (0..7).collect::<Vec<_>>());
}

#[test]
fn enter_opens_the_instance_at_the_rank_and_backspace_returns() {
    let (mut app, mut t) = open(160, 48, false);
    let before = app.capture().place(app.chrome().screen);
    press(&mut app, &mut t, "H");
    // Down to the third rank (the first is the cursor), right to
    // instance 55 (a big event).
    for _ in 0..2 {
        key(&mut app, &mut t, KeyCode::Down);
    }
    for _ in 0..54 {
        key(&mut app, &mut t, KeyCode::Right);
    }
    let rank = rank_of_row(&app, 3).unwrap();
    key(&mut app, &mut t, KeyCode::Enter);
    assert_eq!(app.chrome().screen, Screen::Timeline);
    let l = app.capture().data.clone().unwrap();
    let g = l.analysis.matching.group("s20").unwrap();
    assert_eq!(app.capture().instance(), Some((g, 54)));
    let row = l.analysis.matching.groups[g].row(54, rank).unwrap();
    assert_eq!(app.capture().selection, Some(EventRef::Gpu(row)));
    // That rank's lane is the cursor row, on screen.
    let lane = rankline::tui::lanes::LaneKind::Stream(l.profile.gpu.lane(row));
    assert_eq!(
        app.capture().lanes.rows[app.capture().lanes.cursor].kind,
        lane
    );
    assert!(
        app.capture().lanes.cursor >= app.capture().lanes.scroll.top
            && app.capture().lanes.cursor
                < app.capture().lanes.scroll.top + app.capture().lanes.scroll.visible
    );
    assert!(screen(&t).contains("s20 · instance 55/225"));
    // Back: the map, with its cursor where it was.
    key(&mut app, &mut t, KeyCode::Backspace);
    assert_eq!(app.chrome().screen, Screen::Stragglers);
    let v = app.capture().straggler.as_ref().unwrap();
    assert_eq!((v.col, v.row), (54, 3));
    // Esc leaves the map for the timeline as it was before.
    key(&mut app, &mut t, KeyCode::Esc);
    assert_eq!(app.chrome().screen, Screen::Timeline);
    assert_eq!(
        app.capture().place(app.chrome().screen).selection,
        before.selection
    );
}

#[test]
fn a_click_on_a_cell_opens_it_as_enter_does() {
    let (mut app, mut t) = open(160, 48, false);
    press(&mut app, &mut t, "H");
    let a = app.chrome().layout.map_cells;
    let rank = rank_of_row(&app, 2).unwrap();
    app.on_mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: a.x + 99,
        row: a.y + 2,
        modifiers: KeyModifiers::NONE,
    });
    t.draw(|f| ui::draw(f, &mut app)).unwrap();
    assert_eq!(app.chrome().screen, Screen::Timeline);
    let l = app.capture().data.clone().unwrap();
    let g = l.analysis.matching.group("s20").unwrap();
    let row = l.analysis.matching.groups[g].row(99, rank).unwrap();
    assert_eq!(app.capture().selection, Some(EventRef::Gpu(row)));
    assert_eq!(app.capture().instance(), Some((g, 99)));
}

#[test]
fn h_opens_on_the_selected_instance_and_its_rank() {
    let (mut app, mut t) = open(160, 48, false);
    // `]`: the first big event (instance 55, late device 2).
    press(&mut app, &mut t, "]H");
    let v = app.capture().straggler.as_ref().unwrap();
    assert_eq!(v.map.instances[v.col], 54);
    assert!(v.cols_scroll.top <= v.col && v.col < v.cols_scroll.top + v.cols_scroll.visible);
    let l = app.capture().data.clone().unwrap();
    match v.rows[v.row] {
        rankline::tui::stragglers::MapRow::Rank(r) => {
            assert_eq!(l.profile.device_label(v.map.devices[r]).to_string(), "2")
        }
        ref other => panic!("{other:?}"),
    }
}

#[test]
fn a_collapsed_host_is_one_row_and_the_map_scrolls_at_80x24() {
    let (mut app, mut t) = open(80, 24, false);
    press(&mut app, &mut t, "H");
    insta::assert_snapshot!("straggler_map_80x24", screen(&t));
    // Columns scroll with the cursor.
    key(&mut app, &mut t, KeyCode::End);
    let v = app.capture().straggler.as_ref().unwrap();
    assert_eq!(v.col, 224);
    assert!(v.cols_scroll.top > 0 && v.cols_scroll.top + v.cols_scroll.visible == 225);
    key(&mut app, &mut t, KeyCode::Char(' '));
    let v = app.capture().straggler.as_ref().unwrap();
    assert_eq!(v.rows.len(), 1, "one host, collapsed");
    assert!(screen(&t).contains("▸"));
}

#[test]
fn no_color_draws_the_scale_in_glyphs() {
    let (mut app, mut t) = open(160, 48, true);
    press(&mut app, &mut t, "H");
    let buf = t.backend().buffer();
    assert!(
        buf.content
            .iter()
            .all(|c| c.fg == ratatui::style::Color::Reset)
    );
    insta::assert_snapshot!("straggler_map_no_color", screen(&t));
}

#[test]
fn the_wheel_moves_the_cursor_as_the_arrows_do() {
    let (mut app, mut t) = open(160, 48, false);
    press(&mut app, &mut t, "H");
    let a = app.chrome().layout.map_cells;
    let wheel = |app: &mut App, t: &mut Terminal<TestBackend>, kind, mods| {
        app.on_mouse(MouseEvent {
            kind,
            column: a.x + 5,
            row: a.y + 2,
            modifiers: mods,
        });
        t.draw(|f| ui::draw(f, app)).unwrap();
    };
    let at = |app: &App| {
        let v = app.capture().straggler.as_ref().unwrap();
        (v.row, v.col)
    };
    assert_eq!(at(&app), (1, 0));
    wheel(
        &mut app,
        &mut t,
        MouseEventKind::ScrollDown,
        KeyModifiers::NONE,
    );
    assert_eq!(at(&app), (4, 0));
    wheel(
        &mut app,
        &mut t,
        MouseEventKind::ScrollDown,
        KeyModifiers::SHIFT,
    );
    assert_eq!(at(&app), (4, 3));
    assert_eq!(app.chrome().screen, Screen::Stragglers);
}

/// The ruler's numbers are whole instance numbers, none written over or
/// run into by a big event's `!` (it read `90 ! 110` and `! ! 20!`).
#[test]
fn the_ruler_marks_never_touch_its_numbers() {
    for (name, w, h) in [
        ("megatron_tp8.sqlite", 160, 48),
        ("megatron_tp8.sqlite", 80, 24),
        ("per_rank", 80, 24),
        ("multinode", 80, 24),
        ("multinode", 160, 48),
    ] {
        let (mut app, mut t) = open_fixture(name, w, h, false);
        press(&mut app, &mut t, "H");
        for _ in 0..2 {
            let s = screen(&t);
            // Under the legend (one line, or more where it wraps).
            let ruler = s
                .lines()
                .find(|l| l.starts_with(" rank  mean ms"))
                .unwrap_or_else(|| panic!("{s}"));
            let marks = ruler.matches('!').count();
            assert!(marks > 0 || w == 80, "{name} {w}: {ruler}");
            for word in ruler[" rank  mean ms".len()..].split_whitespace() {
                let ok = word == "!" || word.parse::<usize>().is_ok_and(|k| k.is_multiple_of(10));
                assert!(ok, "{name} {w}x{h}: {word:?} in {ruler}");
            }
            key(&mut app, &mut t, KeyCode::End);
        }
    }
}
