//! Side panels, their scrolling and the mouse, on the whole app drawn into
//! TestBackend: each panel reaches its end, says when it is cut, scrolls
//! with `{` `}` and the wheel; clicks select; the launch panel's wording.

mod common;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use rankline::analysis::Settings;
use rankline::profile::Source;
use rankline::tui::keymap::Keymap;
use rankline::tui::panel::PanelKind;
use rankline::tui::state::{App, EventRef, Overlay};
use rankline::tui::ui;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/megatron_tp8.sqlite")
}

/// The app with `file` loaded, `--goto` applied, drawn once at w×h.
fn open(file: &Path, goto: Option<&str>, w: u16, h: u16) -> (App, Terminal<TestBackend>) {
    let mut app = App::new(Keymap::default_keymap(), false);
    app.set_goto(goto.map(String::from));
    app.load_now(
        &[Source::File(file.to_path_buf())],
        None,
        &Settings::default(),
    );
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    (app, terminal)
}

fn draw(app: &mut App, terminal: &mut Terminal<TestBackend>) {
    terminal.draw(|f| ui::draw(f, app)).unwrap();
}

fn press(app: &mut App, terminal: &mut Terminal<TestBackend>, keys: &str) {
    for c in keys.chars() {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        draw(app, terminal);
    }
}

fn key(app: &mut App, terminal: &mut Terminal<TestBackend>, code: KeyCode) {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
    draw(app, terminal);
}

fn mouse(
    app: &mut App,
    terminal: &mut Terminal<TestBackend>,
    kind: MouseEventKind,
    x: u16,
    y: u16,
) {
    app.on_mouse(MouseEvent {
        kind,
        column: x,
        row: y,
        modifiers: KeyModifiers::NONE,
    });
    draw(app, terminal);
}

/// The text of `r` on screen, one string per row.
fn rows(terminal: &Terminal<TestBackend>, r: Rect) -> Vec<String> {
    let buf = terminal.backend().buffer();
    (r.y..r.bottom())
        .map(|y| (r.x..r.right()).map(|x| buf[(x, y)].symbol()).collect())
        .collect()
}

fn screen(terminal: &Terminal<TestBackend>) -> String {
    rows(terminal, terminal.backend().buffer().area).join("\n")
}

/// Where panel `k` was drawn: (inside, the whole box).
fn panel(app: &App, k: PanelKind) -> (Rect, Rect) {
    let p = app
        .chrome()
        .layout
        .panels
        .iter()
        .find(|p| p.kind == Some(k))
        .unwrap_or_else(|| panic!("{} not drawn", k.name()));
    (p.inner, p.inner.outer(ratatui::layout::Margin::new(1, 1)))
}

/// The panel's box says it is cut.
fn says_more(terminal: &Terminal<TestBackend>, app: &App, k: PanelKind) -> bool {
    let (_, outer) = panel(app, k);
    let bottom = Rect::new(outer.x, outer.bottom() - 1, outer.width, 1);
    rows(terminal, bottom)[0].contains("↓ more")
}

#[test]
fn at_80x24_the_launch_panel_alone_scrolls_to_its_last_fact() {
    let (mut app, mut t) = open(&fixture(), Some("s20:55"), 80, 24);
    press(&mut app, &mut t, "2");
    let (inner, _) = panel(&app, PanelKind::Launch);
    let text = rows(&t, inner).join("\n");
    assert!(text.contains("late rank D2: cpu-late"), "{text}");
    assert!(
        text.contains("after the first peer's kernel started"),
        "{text}"
    );
    // The account follows, below the fold: the box says so, and `}`
    // scrolls to its last fact.
    assert!(says_more(&t, &app, PanelKind::Launch), "{}", screen(&t));
    press(&mut app, &mut t, "}}}}}}}}}}");
    let (inner, _) = panel(&app, PanelKind::Launch);
    let text = rows(&t, inner).join("\n");
    assert!(text.contains("delay 31.89 ms = CPU 31.78 ms"), "{text}");
    assert!(
        text.contains("not recorded: osrt, sched, samples"),
        "{text}"
    );
    assert!(!says_more(&t, &app, PanelKind::Launch), "{}", screen(&t));
    // The timeline keeps rows above it.
    assert!(
        app.capture().lanes.scroll.visible >= 4,
        "{}",
        app.capture().lanes.scroll.visible
    );
}

#[test]
fn with_every_panel_open_each_panel_scrolls_to_its_end() {
    let (mut app, mut t) = open(&fixture(), Some("s20:55"), 160, 48);
    press(&mut app, &mut t, "123456");
    let cut: Vec<PanelKind> = PanelKind::ALL
        .into_iter()
        .filter(|&k| app.chrome().panels.is_open(k) && says_more(&t, &app, k))
        .collect();
    assert!(!cut.is_empty(), "nothing is cut at 160×48:\n{}", screen(&t));
    let skew_rows = rows(&t, panel(&app, PanelKind::Skew).0).join("\n");
    for k in cut {
        // Reopening makes it the one `{` `}` scroll; its title says so.
        let digit = char::from(b'1' + PanelKind::ALL.iter().position(|&p| p == k).unwrap() as u8);
        press(&mut app, &mut t, &format!("{digit}{digit}"));
        let (_, outer) = panel(&app, k);
        let title = &rows(&t, Rect::new(outer.x, outer.y, outer.width, 1))[0];
        assert!(title.contains(&format!("▸{}", k.name())), "{title}");
        for _ in 0..20 {
            press(&mut app, &mut t, "}");
        }
        let s = app.chrome().panels.scroll(k);
        assert!(
            s.top > 0 && s.top + s.visible == s.len,
            "{}: {s:?}",
            k.name()
        );
        assert!(!says_more(&t, &app, k), "{}:\n{}", k.name(), screen(&t));
        // And back to the top.
        for _ in 0..20 {
            press(&mut app, &mut t, "{");
        }
        assert_eq!(app.chrome().panels.scroll(k).top, 0);
        assert!(says_more(&t, &app, k));
    }
    // The skew panel's last rank is there after scrolling, at most.
    assert!(skew_rows.contains("LATE"), "{skew_rows}");
}

/// gitui's test_correct_scroll_position: one panel in a small terminal,
/// its scroll checked against what fits, then the terminal grows.
#[test]
fn panel_scroll_state_follows_the_frame() {
    let (mut app, mut t) = open(&fixture(), Some("s20:55"), 80, 24);
    press(&mut app, &mut t, "1");
    let (inner, _) = panel(&app, PanelKind::Skew);
    let s = app.chrome().panels.scroll(PanelKind::Skew);
    assert_eq!(s.visible, inner.height as usize);
    assert!(s.len > s.visible, "{s:?}");
    assert!(says_more(&t, &app, PanelKind::Skew));
    press(&mut app, &mut t, "}");
    assert_eq!(
        app.chrome().panels.scroll(PanelKind::Skew).top,
        (s.visible - 1).min(s.len - s.visible)
    );
    for _ in 0..10 {
        press(&mut app, &mut t, "}");
    }
    let end = app.chrome().panels.scroll(PanelKind::Skew);
    assert_eq!(end.top, end.len - end.visible);
    assert!(!says_more(&t, &app, PanelKind::Skew));
    // The first row shown is the list row at `top`.
    let first = rows(&t, panel(&app, PanelKind::Skew).0)[0].clone();
    assert!(!first.contains("s20 · instance"), "{first}");
    // Taller: everything fits, the scroll goes back to the top.
    t.backend_mut().resize(80, 60);
    draw(&mut app, &mut t);
    let s = app.chrome().panels.scroll(PanelKind::Skew);
    assert_eq!((s.top, s.len <= s.visible), (0, true), "{s:?}");
    assert!(!says_more(&t, &app, PanelKind::Skew));
}

#[test]
fn brace_keys_say_so_when_no_panel_is_open() {
    let (mut app, mut t) = open(&fixture(), None, 160, 48);
    press(&mut app, &mut t, "}");
    assert!(
        screen(&t).contains("no panel open to scroll"),
        "{}",
        screen(&t)
    );
}

#[test]
fn the_wheel_over_a_panel_scrolls_that_panel() {
    let (mut app, mut t) = open(&fixture(), Some("s20:55"), 80, 24);
    press(&mut app, &mut t, "12");
    // The launch panel was opened last; the wheel goes to the skew panel.
    let (inner, _) = panel(&app, PanelKind::Skew);
    mouse(
        &mut app,
        &mut t,
        MouseEventKind::ScrollDown,
        inner.x + 2,
        inner.y + 1,
    );
    assert_eq!(app.chrome().panels.scroll(PanelKind::Skew).top, 3);
    assert_eq!(app.chrome().panels.scroll(PanelKind::Launch).top, 0);
    mouse(
        &mut app,
        &mut t,
        MouseEventKind::ScrollUp,
        inner.x + 2,
        inner.y + 1,
    );
    assert_eq!(app.chrome().panels.scroll(PanelKind::Skew).top, 0);
    // Zoom is untouched by it.
    let span = app.capture().view.span;
    mouse(
        &mut app,
        &mut t,
        MouseEventKind::ScrollDown,
        inner.x + 2,
        inner.y + 1,
    );
    assert_eq!(app.capture().view.span, span);
}

#[test]
fn the_wheel_over_the_timeline_zooms_at_the_pointer() {
    let (mut app, mut t) = open(&fixture(), None, 160, 48);
    let lanes = app.chrome().layout.lanes;
    let x0 = lanes.x + app.chrome().layout.label_width + 1;
    let width = (lanes.width - app.chrome().layout.label_width - 1) as f64;
    let x = x0 + (width / 4.0) as u16;
    let at = |app: &App| {
        app.capture().view.t0 + ((x - x0) as f64 + 0.5) / width * app.capture().view.span
    };
    let (before, span) = (at(&app), app.capture().view.span);
    mouse(&mut app, &mut t, MouseEventKind::ScrollUp, x, lanes.y + 3);
    assert!(app.capture().view.span < span);
    assert!((at(&app) - before).abs() < 1.0, "{} vs {before}", at(&app));
}

#[test]
fn a_click_selects_the_lane_and_the_event_under_the_pointer() {
    let (mut app, mut t) = open(&fixture(), Some("s20:55"), 160, 48);
    let (g, k) = app.capture().instance().expect("s20:55 selected");
    let row = app
        .capture()
        .lanes
        .rows
        .iter()
        .position(|r| r.label == "D1 S20 NCCL")
        .unwrap();
    let lanes = app.chrome().layout.lanes;
    let y = lanes.y + (row - app.capture().lanes.scroll.top) as u16;
    // The middle of the timeline is inside D1's long wait of this instance.
    let x = lanes.x
        + app.chrome().layout.label_width
        + 1
        + app.chrome().layout.timeline_width as u16 / 2;
    mouse(
        &mut app,
        &mut t,
        MouseEventKind::Down(MouseButton::Left),
        x,
        y,
    );
    assert_eq!(app.capture().lanes.cursor, row);
    assert_eq!(app.capture().instance(), Some((g, k)));
    let l = app.capture().data.clone().unwrap();
    let Some(EventRef::Gpu(r)) = app.capture().selection else {
        panic!("{:?}", app.capture().selection)
    };
    let lane = &l.profile.lanes[l.profile.gpu.lane(r) as usize];
    assert_eq!(l.profile.device_label(lane.device).to_string(), "1");
}

#[test]
fn a_click_on_a_panel_row_acts_like_enter_on_it() {
    let (mut app, mut t) = open(&fixture(), Some("s20:55"), 160, 48);
    press(&mut app, &mut t, "1");
    let (inner, _) = panel(&app, PanelKind::Skew);
    let y = rows(&t, inner)
        .iter()
        .position(|r| r.starts_with("D5 "))
        .expect("a D5 row") as u16;
    let before = app.capture().selection;
    mouse(
        &mut app,
        &mut t,
        MouseEventKind::Down(MouseButton::Left),
        inner.x + 1,
        inner.y + y,
    );
    assert_ne!(app.capture().selection, before);
    let l = app.capture().data.clone().unwrap();
    let Some(EventRef::Gpu(r)) = app.capture().selection else {
        panic!("{:?}", app.capture().selection)
    };
    let lane = &l.profile.lanes[l.profile.gpu.lane(r) as usize];
    assert_eq!(l.profile.device_label(lane.device).to_string(), "5");
    // Still the same collective instance.
    assert!(screen(&t).contains("instance 55/225"));
}

#[test]
fn m_turns_the_mouse_off_and_its_events_are_ignored() {
    let (mut app, mut t) = open(&fixture(), None, 160, 48);
    assert!(app.session().mouse);
    press(&mut app, &mut t, "m");
    assert!(!app.session().mouse);
    assert!(screen(&t).contains("mouse off"), "{}", screen(&t));
    let span = app.capture().view.span;
    let lanes = app.chrome().layout.lanes;
    mouse(
        &mut app,
        &mut t,
        MouseEventKind::ScrollUp,
        lanes.x + 60,
        lanes.y + 2,
    );
    assert_eq!(app.capture().view.span, span);
    press(&mut app, &mut t, "m");
    assert!(app.session().mouse);
}

#[test]
fn help_pages_with_page_down_and_stops_at_its_end() {
    let (mut app, mut t) = open(&fixture(), None, 100, 24);
    press(&mut app, &mut t, "?");
    assert!(screen(&t).contains("↓ more"));
    let help = |app: &rankline::tui::state::App| match app.chrome().overlay {
        Overlay::Help(s, _) => s,
        _ => panic!("help is not open"),
    };
    let visible = help(&app).visible;
    key(&mut app, &mut t, KeyCode::PageDown);
    assert_eq!(help(&app).top, visible - 1);
    for _ in 0..20 {
        key(&mut app, &mut t, KeyCode::PageDown);
    }
    let s = help(&app);
    assert_eq!(s.top, s.len - s.visible);
    assert!(!screen(&t).contains("↓ more"), "{}", screen(&t));
    // One PageUp from the end moves at once (no presses lost past the end).
    key(&mut app, &mut t, KeyCode::PageUp);
    assert_eq!(help(&app).top, s.len - s.visible - (visible - 1));
}

#[test]
fn a_cpu_late_instance_says_so_without_a_gpu_side_cause() {
    let (mut app, mut t) = open(&fixture(), Some("s20:55"), 160, 48);
    press(&mut app, &mut t, "2");
    let text = rows(&t, panel(&app, PanelKind::Launch).0).join("\n");
    assert!(text.contains("late rank D2: cpu-late"), "{text}");
    assert!(!text.contains("queued behind"), "{text}");
    assert!(text.contains("call took "), "{text}");
    // The late kernel is the one selected: its call→start is said once.
    assert_eq!(text.matches("→ kernel start").count(), 1, "{text}");
}

/// A gpu-side event whose stream held nothing ahead of it: the panel says
/// once what is known — nothing recorded held it, and the GEMM another
/// stream ran just before competed, not proven to block — never "queued
/// behind" that GEMM, as `report why` words it.
#[test]
fn a_gpu_side_instance_says_once_what_competed_as_report_why_does() {
    let (mut app, mut t) = open(&fixture(), Some("s20:100"), 160, 48);
    press(&mut app, &mut t, "2");
    let lines = rows(&t, panel(&app, PanelKind::Launch).0);
    let text = lines.join("\n");
    assert!(text.contains("gpu-side"), "{text}");
    assert!(!text.contains("queued behind"), "{text}");
    let i = lines
        .iter()
        .position(|l| l.trim_start().starts_with("gpu "))
        .unwrap_or_else(|| panic!("{text}"));
    // The row wraps under its indent; the next row starts on its own.
    let row: String = std::iter::once(lines[i].trim_end().to_string())
        .chain(
            lines[i + 1..]
                .iter()
                .take_while(|l| l.starts_with("    "))
                .map(|l| l.trim().to_string()),
        )
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(text.matches("sm90_xmma_gemm").count(), 1, "{text}");
    assert!(row.contains("competes, not proven to block"), "{row}");
    let report = common::text(&[
        "report",
        "why",
        "--no-cache",
        "fixtures/megatron_tp8.sqlite",
    ]);
    assert!(
        report.replace('\n', " ").split_whitespace().collect::<String>().contains(
            &"nothing recorded ahead of it on its stream or in an event it waited on; meanwhile the device ran sm90_xmma_gemm"
                .split_whitespace()
                .collect::<String>()
        ),
        "{report}"
    );
}

#[test]
fn the_skew_panel_names_the_devices_missing_from_the_instance() {
    let (mut app, mut t) = open(&fixture(), Some("s20:55"), 160, 48);
    press(&mut app, &mut t, "1");
    let text = rows(&t, panel(&app, PanelKind::Skew).0).join("\n");
    assert!(text.contains("not in this collective: D0"), "{text}");
}

#[test]
fn side_panels_use_the_width_at_300_columns() {
    let (mut app, mut t) = open(&fixture(), Some("s20:55"), 300, 80);
    press(&mut app, &mut t, "1");
    let (_, outer) = panel(&app, PanelKind::Skew);
    assert_eq!(outer.width, 120);
    // Long lines are no longer wrapped there.
    let text = rows(&t, panel(&app, PanelKind::Skew).0).join("\n");
    assert!(
        text.contains("wait = duration − shortest: waiting summed, not step time to win"),
        "{text}"
    );
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn the_summary_panel_lists_gpus_listed_but_unused() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/real-profiles/nsys2023_2_cutlass_osrt.sqlite");
    let (mut app, mut t) = open(&file, None, 160, 48);
    press(&mut app, &mut t, "4");
    let text = rows(&t, panel(&app, PanelKind::Summary).0).join("\n");
    assert!(text.contains("listed but unused: D1 D2 D3"), "{text}");
}

#[test]
fn the_finder_shows_the_selected_long_name_in_full() {
    let (mut app, mut t) = open(&fixture(), None, 80, 24);
    let l = app.capture().data.clone().unwrap();
    // Of the entries listed with short kernel names (the default).
    let longest = l
        .entries
        .iter()
        .filter(|e| {
            !matches!(
                e.kind,
                rankline::tui::finder::EntryKind::Kernel(
                    rankline::profile::names::KernelNames::Demangled,
                    _
                )
            )
        })
        .max_by_key(|e| e.label.len())
        .unwrap();
    assert!(longest.label.len() > 80, "{}", longest.label);
    let hits = rankline::tui::finder::search(
        &l.entries,
        &longest.label,
        200,
        rankline::profile::names::KernelNames::Short,
    );
    let i = hits
        .iter()
        .position(|&h| l.entries[h].label == longest.label)
        .unwrap();
    press(&mut app, &mut t, &format!("/{}", &longest.label));
    for _ in 0..i {
        key(&mut app, &mut t, KeyCode::Down);
    }
    // The popup's rows, border cut off, joined: the whole name is there.
    let inside: String = screen(&t)
        .lines()
        .filter_map(|r| {
            let cells: Vec<char> = r.chars().collect();
            let a = cells.iter().position(|&c| c == '│')?;
            let b = cells.iter().rposition(|&c| c == '│')?;
            (b > a).then(|| cells[a + 1..b].iter().collect::<String>())
        })
        .collect();
    let name = longest.label.replace(' ', "");
    assert!(inside.replace(' ', "").contains(&name), "{}", screen(&t));
}

/// A name too long for the finder's frame, when not the selected one,
/// ends in `…` and keeps its kind: it was cut at the frame without a mark.
#[test]
fn the_finders_other_long_names_end_in_an_ellipsis_and_keep_their_kind() {
    let (mut app, mut t) = open(&fixture(), None, 80, 24);
    // Every name; the first (a collective group) selected.
    press(&mut app, &mut t, "/");
    let s = screen(&t);
    let cut: Vec<&str> = s
        .lines()
        .filter(|l| l.contains("× ") && l.contains('…'))
        .collect();
    assert!(!cut.is_empty(), "{s}");
    for r in cut {
        assert!(r.ends_with("… (kernel)│"), "{r}");
    }
}

/// Every rank of an instance is one row of the skew panel (the bars
/// wrapped onto a second line when the tags were long: `gpu07:1 r1`).
#[test]
fn skew_panel_rows_stay_one_line_with_host_tags() {
    let rank_row = regex::Regex::new(r"^\S+:\d+( r\d+)?\s+\+\d+\.\d{3} ").unwrap();
    for (name, ranks, (w, h)) in [
        ("multinode", 16, (160, 48)),
        ("multinode", 16, (80, 24)),
        ("per_rank", 4, (160, 48)),
        ("per_rank", 4, (80, 24)),
    ] {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(name);
        let mut app = App::new(Keymap::default_keymap(), false);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        app.load_now(
            &files.into_iter().map(Source::File).collect::<Vec<_>>(),
            None,
            &Settings::default(),
        );
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        draw(&mut app, &mut t);
        press(&mut app, &mut t, "]1");
        // The panel scrolled whole, a page at a time.
        let (inner, _) = panel(&app, PanelKind::Skew);
        let mut seen = Vec::new();
        for _ in 0..10 {
            let shown = rows(&t, inner);
            for r in &shown {
                let r = r.trim_end();
                let only_bar =
                    !r.trim().is_empty() && r.trim().chars().all(|c| "█▉▊▋▌▍▎▏".contains(c));
                assert!(
                    !only_bar,
                    "{name} {w}x{h}: a wrapped bar: {}",
                    shown.join("\n")
                );
                if rank_row.is_match(r) && !seen.contains(&r.to_string()) {
                    seen.push(r.to_string());
                }
            }
            press(&mut app, &mut t, "}");
        }
        assert_eq!(
            seen.len(),
            ranks,
            "{name} {w}x{h}: {seen:#?}\n{}",
            screen(&t)
        );
    }
}

/// Keys typed while the first frame loads are kept and applied when the
/// timeline appears (they were dropped: `H 1 w w` on a 1 M-kernel file).
#[test]
fn keys_typed_before_the_first_frame_are_applied_when_it_appears() {
    let (fitted, _) = open(&fixture(), None, 160, 48);
    let mut app = App::new(Keymap::default_keymap(), false);
    for c in "1ww".chars() {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    assert_eq!(app.session().typed_ahead.len(), 3);
    app.load_now(&[Source::File(fixture())], None, &Settings::default());
    let mut t = Terminal::new(TestBackend::new(160, 48)).unwrap();
    draw(&mut app, &mut t);
    assert!(app.session().typed_ahead.is_empty());
    assert!(
        app.chrome().panels.is_open(PanelKind::Skew),
        "1 was dropped"
    );
    let zoomed = app.capture().view.span / fitted.capture().view.span;
    assert!(zoomed < 0.8, "w w were dropped: {zoomed}");
    // q still quits at once.
    let mut app = App::new(Keymap::default_keymap(), false);
    app.on_key(KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE));
    assert!(app.session().typed_ahead.is_empty());
}

/// However the details panel is scrolled, its first row is never a
/// fragment of a wrapped line (`l>)`): each stop is a line's start.
#[test]
fn a_scrolled_panel_starts_at_a_line_not_inside_one() {
    let (mut app, mut t) = open(&fixture(), Some("s20:55"), 80, 24);
    // Beside two others: narrow, so the kernel's name wraps, and short.
    press(&mut app, &mut t, "125");
    let (inner, _) = panel(&app, PanelKind::Details);
    let area = |app: &App| {
        app.chrome()
            .layout
            .panels
            .iter()
            .find(|p| p.kind == Some(PanelKind::Details))
            .unwrap()
            .clone()
    };
    let wrapped = area(&app).lines.iter().filter(|l| l.len() > 1).count();
    assert!(wrapped > 0, "no wrapped line: {}", screen(&t));
    let rows = area(&app).lines.last().unwrap().end;
    for top in 0..rows {
        app.put_panel_top(PanelKind::Details, top);
        draw(&mut app, &mut t);
        let shown = app.chrome().panels.scroll(PanelKind::Details).top;
        if let Some(l) = area(&app)
            .lines
            .iter()
            .find(|l| l.start < shown && shown < l.end)
        {
            assert!(l.len() >= inner.height as usize, "row {shown} inside {l:?}");
        }
    }
    // The wheel goes on to the end and back (a stop moved to a line's
    // start must not hold it in place).
    app.put_panel_top(PanelKind::Details, 0);
    draw(&mut app, &mut t);
    let max = app.chrome().panels.scroll(PanelKind::Details).max_top();
    for (kind, goal) in [
        (MouseEventKind::ScrollDown, max),
        (MouseEventKind::ScrollUp, 0),
    ] {
        for _ in 0..rows {
            mouse(&mut app, &mut t, kind, inner.x + 1, inner.y + 1);
        }
        assert_eq!(app.chrome().panels.scroll(PanelKind::Details).top, goal);
    }
}

#[test]
fn a_gpu_side_verdict_with_a_late_launch_says_both_parts() {
    // nodes_3d_payloads s25/3:3: rank gpu-a01:3 launched its AllReduce
    // 7.14 ms after the first peer started, then queued 14.74 ms behind
    // the GPU work its own rank 6 held up: mostly on the GPU, but never
    // "issued in time".
    let job = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/jobs/nodes_3d_payloads");
    let sources: Vec<Source> = (0..4)
        .map(|n| Source::File(job.join(format!("node{n}.sqlite"))))
        .collect();
    let mut app = App::new(Keymap::default_keymap(), false);
    app.set_goto(Some("s25/3:3".into()));
    app.load_now(&sources, None, &Settings::default());
    let mut t = Terminal::new(TestBackend::new(160, 48)).unwrap();
    draw(&mut app, &mut t);
    press(&mut app, &mut t, "2");
    let (inner, _) = panel(&app, PanelKind::Launch);
    let text = rows(&t, inner).join("\n");
    assert!(text.contains(": gpu-side"), "{text}");
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let at = lines
        .iter()
        .position(|l| *l == "  mostly on the GPU: launched 7.14 ms late,")
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(lines[at + 1], "  then queued 14.74 ms", "{text}");
    assert!(!text.contains("issued in time"), "{text}");
    // The rule each place states is the one the verdict follows.
    let glossary = rankline::tui::ui::glossary::TERMS
        .iter()
        .find(|(k, _)| *k == "cpu-late")
        .map(|(_, v)| *v)
        .unwrap();
    assert!(glossary.contains("by more than the kernel then waited on the GPU"));
}
