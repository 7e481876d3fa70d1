//! Moving around the timeline on the real app drawn into a TestBackend:
//! the first screen, resizing, zoom and pan bounds, labels, finder hits and
//! the jump history.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rankline::analysis::Settings;
use rankline::profile::Source;
use rankline::tui::keymap::Keymap;
use rankline::tui::state::{App, EventRef};
use rankline::tui::ui;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::PathBuf;

fn fixture() -> Source {
    Source::File(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/megatron_tp8.sqlite"))
}

/// The app with the 8-GPU fixture loaded, drawn once at `w`×`h`.
fn ready(w: u16, h: u16) -> (App, Terminal<TestBackend>) {
    let mut app = App::new(Keymap::default_keymap(), false);
    app.load_now(&[fixture()], None, &Settings::default());
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    (app, terminal)
}

/// Presses keys, drawing after each as the real loop does.
fn press(app: &mut App, terminal: &mut Terminal<TestBackend>, keys: &[KeyEvent]) {
    for &k in keys {
        app.on_key(k);
        terminal.draw(|f| ui::draw(f, app)).unwrap();
    }
}

fn chars(s: &str) -> Vec<KeyEvent> {
    s.chars()
        .map(|c| {
            let code = match c {
                '\n' => KeyCode::Enter,
                '\t' => KeyCode::Tab,
                '\x08' => KeyCode::Backspace,
                c => KeyCode::Char(c),
            };
            KeyEvent::new(code, KeyModifiers::NONE)
        })
        .collect()
}

fn typed(app: &mut App, terminal: &mut Terminal<TestBackend>, s: &str) {
    press(app, terminal, &chars(s));
}

fn lines(terminal: &Terminal<TestBackend>) -> Vec<String> {
    let buf = terminal.backend().buffer();
    (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect()
}

fn text(terminal: &Terminal<TestBackend>) -> String {
    lines(terminal).join("\n")
}

fn capture(app: &App) -> (i64, i64) {
    app.capture().data.as_ref().unwrap().span.unwrap()
}

#[test]
fn the_first_screen_starts_on_a_lane_with_events_and_names_the_worst_big_event() {
    let (mut app, mut terminal) = ready(160, 48);
    // D0 has only a CUDA context: its header and "missing" rows are skipped.
    assert_eq!(
        app.capture().lanes.rows[app.capture().lanes.cursor].label,
        "D0 T4101 API"
    );
    let status = lines(&terminal).pop().unwrap();
    assert!(
        status.contains("4 big-skew events, worst s20:145 late D4 +46.6 ms — press b"),
        "{status}"
    );
    // The first Enter selects an event (under the cursor or the nearest).
    typed(&mut app, &mut terminal, "\n");
    assert!(
        matches!(app.capture().selection, Some(EventRef::Api(_))),
        "{:?}",
        app.answer()
    );
    // Tab steps along the lane instead of asking for another row.
    typed(&mut app, &mut terminal, "\x1b\t");
    assert!(app.capture().selection.is_some(), "{:?}", app.answer());
}

#[test]
fn enter_with_nothing_under_the_cursor_selects_the_nearest_event_of_the_lane() {
    let (mut app, mut terminal) = ready(160, 48);
    let lane = app
        .capture()
        .lanes
        .rows
        .iter()
        .position(|r| r.label == "D1 S24 NCCL")
        .expect("a sparse lane");
    app.put_cursor(lane);
    typed(&mut app, &mut terminal, "\n");
    let Some(EventRef::Gpu(r)) = app.capture().selection else {
        panic!("nothing selected: {:?}", app.answer());
    };
    let l = app.capture().data.clone().unwrap();
    assert_eq!(
        l.profile.gpu.lane(r),
        match app.capture().lanes.rows[lane].kind {
            rankline::tui::lanes::LaneKind::Stream(s) => s,
            k => panic!("{k:?}"),
        }
    );
    assert!(text(&terminal).contains("selected the nearest"));
}

#[test]
fn growing_the_terminal_keeps_the_lanes_full() {
    let (mut app, mut terminal) = ready(80, 24);
    // To the last lane, then a terminal big enough for many more rows.
    let downs =
        vec![KeyEvent::new(KeyCode::Down, KeyModifiers::NONE); app.capture().lanes.rows.len()];
    press(&mut app, &mut terminal, &downs);
    assert!(app.capture().lanes.scroll.top > 0);
    terminal.backend_mut().resize(160, 48);
    terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    let h = app.capture().lanes.scroll.visible;
    assert_eq!(
        app.capture().lanes.scroll.top,
        app.capture().lanes.rows.len().saturating_sub(h)
    );
    // The bottom timeline row shows the last lane: no blank rows below.
    let screen = lines(&terminal);
    let last = &app.capture().lanes.rows.last().unwrap().label;
    assert!(
        screen[screen.len() - 2].starts_with(last.as_str()),
        "{screen:#?}"
    );
    // Collapsing every device makes the lanes fit: D0 comes back on top.
    app.collapse_all();
    terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    assert!(app.capture().lanes.rows.len() <= app.capture().lanes.scroll.visible);
    assert_eq!(app.capture().lanes.scroll.top, 0);
    assert!(
        lines(&terminal)[3].starts_with("▸D0"),
        "{}",
        text(&terminal)
    );
}

#[test]
fn zoom_out_zoom_in_and_pan_stop_near_the_data() {
    let (mut app, mut terminal) = ready(160, 48);
    let (a, b) = capture(&app);
    let len = (b - a) as f64;
    typed(&mut app, &mut terminal, &"s".repeat(30));
    assert!(
        app.capture().view.span <= len * 1.2 + 1.0,
        "{:?}",
        app.capture().view
    );
    let s = text(&terminal);
    assert!(
        !s.contains("-2000000000s") && !s.contains("time (abs)  -"),
        "{s}"
    );
    typed(&mut app, &mut terminal, &"d".repeat(200));
    assert!(
        app.capture().view.end() <= b as f64 + len * 0.1 + 1.0,
        "{:?}",
        app.capture().view
    );
    typed(&mut app, &mut terminal, &"a".repeat(400));
    assert!(
        app.capture().view.t0 >= a as f64 - len * 0.1 - 1.0,
        "{:?}",
        app.capture().view
    );
    typed(&mut app, &mut terminal, &"w".repeat(80));
    // The floor: 1 ns per column.
    assert_eq!(
        app.capture().view.span,
        app.chrome().layout.timeline_width as f64
    );
    let title = &lines(&terminal)[0];
    assert!(
        title.contains(&format!("window {} ns", app.chrome().layout.timeline_width)),
        "{title}"
    );
}

#[test]
fn the_title_keeps_the_window_when_narrow() {
    let (_, terminal) = ready(80, 24);
    let title = &lines(&terminal)[0];
    assert!(title.contains("window 1.117 s"), "{title}");
}

/// At 80×24 the selected instance's markers all keep their tags whole.
#[test]
fn marker_tags_and_ticks_are_whole_or_absent() {
    let (mut app, mut terminal) = ready(80, 24);
    typed(&mut app, &mut terminal, "]");
    let screen = lines(&terminal);
    let marks = &screen[2];
    assert!(marks.contains("┃first"), "{marks}");
    assert!(marks.contains("last┃"), "{marks}");
    assert!(marks.contains("┃end"), "{marks}");
    // Ticks: every label is a whole number of seconds with its unit.
    for word in screen[1].split('╷').skip(1) {
        let w = word.trim();
        assert!(
            w.is_empty() || (w.ends_with('s') && w[..w.len() - 1].parse::<f64>().is_ok()),
            "{w:?} in {}",
            screen[1]
        );
    }
}

#[test]
fn relative_ticks_are_signed_once_and_zero_has_no_sign() {
    let (mut app, mut terminal) = ready(160, 48);
    typed(&mut app, &mut terminal, "t");
    let ruler = &lines(&terminal)[1];
    assert!(ruler.contains("time (rel)"));
    assert!(
        !ruler.contains("+-") && !ruler.contains("-0s") && !ruler.contains("-0.0"),
        "{ruler}"
    );
    assert!(
        ruler.contains("╷0s") || ruler.contains("╷0.0s") || ruler.contains("+0.2s"),
        "{ruler}"
    );
}

#[test]
fn focus_labels_keep_their_unit_at_80_columns() {
    let (mut app, mut terminal) = ready(80, 24);
    typed(&mut app, &mut terminal, "]F");
    let screen = text(&terminal);
    assert!(screen.contains("D2 S20 +31.9ms ◀"), "{screen}");
}

#[test]
fn finder_hits_on_a_collective_step_instance_by_instance() {
    let (mut app, mut terminal) = ready(160, 48);
    typed(&mut app, &mut terminal, "/AllGather_RING_LL\n");
    let first = app.capture().instance().expect("an AllGather instance");
    let status = lines(&terminal).pop().unwrap();
    let instances = regex::Regex::new(r"hit 1 of (\d+) instances").unwrap();
    let n: usize = instances
        .captures(&status)
        .unwrap_or_else(|| panic!("{status}"))[1]
        .parse()
        .unwrap();
    // One hit per AllGather instance (of every group), not one per rank.
    let l = app.data().unwrap();
    let gathers: usize = l
        .analysis
        .matching
        .groups
        .iter()
        .map(|g| {
            (0..g.instances())
                .filter(|&k| {
                    (0..g.devices.len()).any(|d| {
                        g.row(k, d).is_some_and(|r| {
                            l.profile
                                .strings
                                .get(l.profile.gpu.name(r))
                                .contains("AllGather_RING_LL")
                        })
                    })
                })
                .count()
        })
        .sum();
    assert_eq!(n, gathers, "{status}");
    typed(&mut app, &mut terminal, "n");
    let second = app.capture().instance().expect("still an instance");
    assert_ne!(first, second, "n stayed on the same instance");
    let status = lines(&terminal).pop().unwrap();
    assert!(
        status.contains(&format!("hit 2 of {n} instances")),
        "{status}"
    );
    typed(&mut app, &mut terminal, "N");
    assert_eq!(app.capture().instance(), Some(first));
}

/// A kernel's hits are its kernels: `hit 1 of N kernels`, N the kernels
/// of that name.
#[test]
fn finder_hits_on_a_kernel_say_they_count_kernels() {
    let (mut app, mut terminal) = ready(160, 48);
    typed(&mut app, &mut terminal, "/vectorized_elementwise_kernel\n");
    let l = app.data().unwrap();
    let n = (0..l.profile.gpu.len())
        .filter(|&r| {
            l.profile.strings.get(l.profile.gpu.name(r)) == "vectorized_elementwise_kernel"
        })
        .count();
    let status = lines(&terminal).pop().unwrap();
    assert!(
        status.contains(&format!("hit 1 of {n} kernels")),
        "{status}"
    );
}

#[test]
fn back_and_forward_retrace_j_and_big_event_jumps() {
    let (mut app, mut terminal) = ready(160, 48);
    let start = app.capture().view;
    typed(&mut app, &mut terminal, "]");
    let kernel = app.capture().selection.expect("a big event");
    typed(&mut app, &mut terminal, "J");
    let call = app.capture().selection.unwrap();
    assert!(matches!(call, EventRef::Api(_)));
    // J on the call returns to its kernel.
    typed(&mut app, &mut terminal, "J");
    assert_eq!(app.capture().selection, Some(kernel));
    let back = KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE);
    let alt_left = KeyEvent::new(KeyCode::Left, KeyModifiers::ALT);
    let alt_right = KeyEvent::new(KeyCode::Right, KeyModifiers::ALT);
    press(&mut app, &mut terminal, &[back]);
    assert_eq!(app.capture().selection, Some(call));
    press(&mut app, &mut terminal, &[alt_left]);
    assert_eq!(app.capture().selection, Some(kernel));
    press(&mut app, &mut terminal, &[alt_left]);
    assert_eq!(app.capture().selection, None);
    assert_eq!(app.capture().view, start);
    press(&mut app, &mut terminal, &[alt_left]);
    assert!(text(&terminal).contains("no earlier jump"));
    press(&mut app, &mut terminal, &[alt_right, alt_right]);
    assert_eq!(app.capture().selection, Some(call));
}

#[test]
fn space_on_a_row_that_cannot_collapse_says_so() {
    let (mut app, mut terminal) = ready(160, 48);
    app.put_cursor(
        app.capture()
            .lanes
            .rows
            .iter()
            .position(|r| !r.collapsible)
            .unwrap(),
    );
    let rows = app.capture().lanes.rows.len();
    typed(&mut app, &mut terminal, " ");
    assert_eq!(app.capture().lanes.rows.len(), rows);
    assert!(text(&terminal).contains("this row cannot collapse"));
}

#[test]
fn stream_lanes_keep_short_labels_with_one_host() {
    let (app, _) = ready(160, 48);
    let labels: Vec<&str> = app
        .capture()
        .lanes
        .rows
        .iter()
        .map(|r| r.label.as_str())
        .collect();
    assert!(labels.contains(&"D1 S7 compute"), "{labels:?}");
    assert!(labels.contains(&"D1 S20 NCCL"), "{labels:?}");
}

#[test]
fn details_show_the_launch_configuration() {
    let (mut app, mut terminal) = ready(160, 48);
    typed(&mut app, &mut terminal, "]5");
    let s = text(&terminal);
    // The late kernel of s20:55 on D2, as in CUPTI_ACTIVITY_KIND_KERNEL:
    // grid 24,1,1; block 640,1,1; 96 registers; 21568 + 82240 bytes of
    // shared memory; correlationId 305.
    for want in [
        "grid 24×1×1  block 640×1×1",
        "registers/thread 96",
        "shared memory: static 21568 B  dynamic 82240 B",
        "correlation id 305",
    ] {
        assert!(s.contains(want), "{want}: {s}");
    }
}

fn with_goto(goto: &str) -> App {
    let mut app = App::new(Keymap::default_keymap(), false);
    app.set_goto(Some(goto.into()));
    app.load_now(&[fixture()], None, &Settings::default());
    app
}

#[test]
fn goto_an_unknown_group_lists_the_valid_ones() {
    let app = with_goto("s99:1");
    let m = app.answer().unwrap_or_default().to_string();
    assert!(m.contains("--goto s99:1"), "{m}");
    assert!(m.contains("groups are s20 s24 s28"), "{m}");
    let app = with_goto("s20:999");
    let m = app.answer().unwrap_or_default().to_string();
    assert!(m.contains("s20 has instances 1 to 225"), "{m}");
}

#[test]
fn goto_is_a_jump_that_backspace_undoes() {
    let mut app = with_goto("s20:55");
    assert_eq!(app.capture().instance().map(|i| i.1), Some(54));
    app.on_key(KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE));
    assert_eq!(app.capture().selection, None);
}

#[test]
fn below_the_smallest_size_the_screen_says_what_it_needs_and_keeps_state() {
    let (mut app, mut terminal) = ready(80, 24);
    typed(&mut app, &mut terminal, "]jj");
    let (sel, cursor, view) = (
        app.capture().selection,
        app.capture().lanes.cursor,
        app.capture().view,
    );
    for (w, h) in [(79, 24), (80, 23), (30, 6)] {
        terminal.backend_mut().resize(w, h);
        terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
        let s = text(&terminal);
        let said: Vec<&str> = s.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        let want = format!("rankline needs at least 80×24 (now {w}×{h})");
        if w >= 40 {
            // One line, in the middle of the screen, nothing else drawn.
            assert_eq!(said, [want.as_str()], "{s}");
            let row = s.lines().position(|l| l.contains("needs")).unwrap();
            assert_eq!(row, usize::from((h - 1) / 2), "{s}");
            let line = s.lines().nth(row).unwrap();
            let left = line.len() - line.trim_start().len();
            assert!(
                left.abs_diff(usize::from(w) - want.chars().count() - left) <= 1,
                "{s}"
            );
        } else {
            assert!(said.concat().contains("needs at least"), "{s}");
        }
    }
    terminal.backend_mut().resize(80, 24);
    terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    assert_eq!(
        (
            app.capture().selection,
            app.capture().lanes.cursor,
            app.capture().view
        ),
        (sel, cursor, view)
    );
    assert!(text(&terminal).contains("instance 55/225"));
}

/// The wheel zooms at the pointer, then pans to keep the time under it:
/// both stay on the data.
#[test]
fn the_wheel_zooms_out_no_further_than_the_keys() {
    use crossterm::event::{MouseEvent, MouseEventKind};
    let (mut app, mut terminal) = ready(160, 48);
    app.set_mouse(true);
    let (a, b) = capture(&app);
    let len = (b - a) as f64;
    for _ in 0..40 {
        app.on_mouse(MouseEvent {
            kind: MouseEventKind::ScrollDown,
            column: 150,
            row: 20,
            modifiers: KeyModifiers::NONE,
        });
        terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    }
    assert!(
        app.capture().view.span <= len * 1.2 + 1.0,
        "{:?}",
        app.capture().view
    );
    assert!(
        app.capture().view.t0 >= a as f64 - len * 0.1 - 1.0,
        "{:?}",
        app.capture().view
    );
    assert!(
        app.capture().view.end() <= b as f64 + len * 0.1 + 1.0,
        "{:?}",
        app.capture().view
    );
}

#[test]
fn n_and_n_step_hits_while_a_panel_has_the_keys() {
    let (mut app, mut terminal) = ready(160, 48);
    typed(&mut app, &mut terminal, "/AllGather_RING_LL\n");
    let first = app.capture().instance().expect("an AllGather instance");
    // The skew panel open and focused: n still steps, as advertised.
    typed(&mut app, &mut terminal, "1p");
    assert!(app.chrome().panels.focused().is_some());
    let status = lines(&terminal).pop().unwrap();
    assert!(status.contains("n/N"), "{status}");
    typed(&mut app, &mut terminal, "n");
    assert!(
        app.chrome().panels.focused().is_some(),
        "n took the focus away"
    );
    let second = app.capture().instance().expect("still an instance");
    assert_ne!(first, second, "n did nothing in the panel");
    typed(&mut app, &mut terminal, "N");
    assert_eq!(app.capture().instance(), Some(first));
}

#[test]
fn braces_scroll_the_focused_panel_not_the_last_opened() {
    use rankline::tui::panel::PanelKind;
    let (mut app, mut terminal) = ready(80, 24);
    // On a big event, skew (a row per rank: longer than its panel)
    // opened first, then launch (the last opened); skew focused.
    typed(&mut app, &mut terminal, "]12");
    while app.chrome().panels.focused() != Some(PanelKind::Skew) {
        typed(&mut app, &mut terminal, "p");
    }
    let (focused, other) = (PanelKind::Skew, PanelKind::Launch);
    typed(&mut app, &mut terminal, "}");
    assert!(
        app.chrome().panels.scroll(focused).top > 0,
        "{}",
        text(&terminal)
    );
    assert_eq!(app.chrome().panels.scroll(other).top, 0);
    typed(&mut app, &mut terminal, "{");
    assert_eq!(app.chrome().panels.scroll(focused).top, 0);
}

#[test]
fn after_j_the_launch_panel_shows_the_kernel_the_call_launched() {
    let (mut app, mut terminal) = ready(160, 48);
    typed(&mut app, &mut terminal, "]2");
    let Some(EventRef::Gpu(kernel)) = app.capture().selection else {
        panic!("a big event's kernel")
    };
    let name = {
        let l = app.data().unwrap();
        l.profile
            .strings
            .get(l.profile.gpu.name(kernel))
            .to_string()
    };
    typed(&mut app, &mut terminal, "J");
    assert!(matches!(app.capture().selection, Some(EventRef::Api(_))));
    let s = text(&terminal);
    assert!(s.contains("the selected call launched:"), "{s}");
    assert!(s.contains(&name[..20]), "{s}");
    assert!(
        s.contains("launch call cudaLaunchKernel") || s.contains("launch call "),
        "{s}"
    );
    assert!(!s.contains("Select a kernel"), "{s}");
}
