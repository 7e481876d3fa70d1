//! Side panels from the keyboard, on the whole app in TestBackend: `p`
//! gives the keys to the last-opened panel (mode `panel`), the cursor moves
//! over its rows and keeps in view, Enter goes where a click on the row
//! goes, `p` / `Tab` go on to the next open panel, Esc / `q` give the keys
//! back to the timeline.

mod common;

use common::tui::{
    draw, fixture, key, open_at, open_with_baseline, panel_area, press, rows, screen, worst,
};
use crossterm::event::{KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use rankline::tui::action::Mode;
use rankline::tui::panel::{PanelKind, PanelTarget};
use rankline::tui::state::{App, EventRef, JumpSource};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::{Margin, Rect};
use ratatui::style::Modifier;

/// `after` with `before` as its baseline, drawn once at w×h.
fn with_baseline(after: &str, before: &str, w: u16, h: u16) -> (App, Terminal<TestBackend>) {
    open_with_baseline(&[fixture(after)], &[fixture(before)], w, h)
}

/// Megatron with `--goto`, drawn once at w×h.
fn megatron(goto: Option<&str>, w: u16, h: u16) -> (App, Terminal<TestBackend>) {
    open_at(&[fixture("megatron_tp8.sqlite")], goto, w, h)
}

fn status(t: &Terminal<TestBackend>) -> String {
    let a = t.backend().buffer().area;
    rows(t, Rect::new(0, a.bottom() - 1, a.width, 1)).remove(0)
}

/// The first line of panel `k` (as the last frame drew it) whose target
/// passes `want`.
fn line_to(app: &App, k: PanelKind, want: impl Fn(&PanelTarget) -> bool) -> usize {
    let a = panel_area(app, k);
    (0..a.lines.len())
        .find(|&i| a.target(i).as_ref().is_some_and(&want))
        .unwrap_or_else(|| panic!("no such row in {}", k.name()))
}

/// Moves the focused panel's cursor down to line `line` with the arrow key.
fn down_to(app: &mut App, t: &mut Terminal<TestBackend>, k: PanelKind, line: usize) {
    while app.chrome().panels.cursor(k) < line {
        let before = app.chrome().panels.cursor(k);
        key(app, t, KeyCode::Down);
        assert_eq!(app.chrome().panels.cursor(k), before + 1);
    }
    assert_eq!(app.chrome().panels.cursor(k), line);
}

/// Panel `k`'s box as drawn, each row marked `>` where the cursor
/// highlights it (a style the text alone does not show).
fn focused_box(app: &App, t: &Terminal<TestBackend>, k: PanelKind) -> String {
    let outer = panel_area(app, k).inner.outer(Margin::new(1, 1));
    let buf = t.backend().buffer();
    (outer.y..outer.bottom())
        .map(|y| {
            let text: String = (outer.x..outer.right())
                .map(|x| buf[(x, y)].symbol())
                .collect();
            let lit = buf[(outer.x + 1, y)].modifier.contains(Modifier::REVERSED);
            format!("{}{}\n", if lit { '>' } else { ' ' }, text.trim_end())
        })
        .collect()
}

#[test]
fn p_focuses_panel_6_and_enter_on_a_kernel_row_finds_that_kernel() {
    let (mut app, mut t) = with_baseline("diff/slow_gemm.sqlite", "megatron_tp8.sqlite", 160, 48);
    press(&mut app, &mut t, "6");
    assert_eq!(app.mode(), Mode::Timeline);
    press(&mut app, &mut t, "p");
    assert_eq!(app.mode(), Mode::Panel);
    assert_eq!(app.chrome().panels.focused(), Some(PanelKind::Diff));
    let gemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas";
    let line = line_to(
        &app,
        PanelKind::Diff,
        |to| matches!(to, PanelTarget::Kernel(n) if n == gemm),
    );
    assert!(line > 0, "the cursor starts on the first row");
    down_to(&mut app, &mut t, PanelKind::Diff, line);
    assert_eq!(app.capture().selection, None);
    key(&mut app, &mut t, KeyCode::Enter);
    let l = app.capture().data.clone().unwrap();
    let Some(EventRef::Gpu(r)) = app.capture().selection else {
        panic!("{:?}", app.capture().selection)
    };
    assert_eq!(l.profile.strings.get(l.profile.gpu.name(r)), gemm);
    // Found as the finder (and a click) finds it: hit 1 of its occurrences.
    let n = match &app.capture().jump {
        Some(JumpSource::Finder { label, events }) => {
            assert!(label.starts_with(gemm), "{label}");
            events.len()
        }
        other => panic!("{other:?}"),
    };
    assert!(n > 1);
    assert_eq!(app.finder_hit(), Some((1, n)));
    // The panel keeps the keys, and its cursor its row.
    assert_eq!(app.mode(), Mode::Panel);
    assert_eq!(app.chrome().panels.cursor(PanelKind::Diff), line);
    assert!(
        status(&t).contains(&format!("{gemm} · D")),
        "{}",
        status(&t)
    );
}

#[test]
fn enter_on_a_skew_row_of_panel_6_selects_the_groups_worst_instance() {
    let (mut app, mut t) = with_baseline("diff/no_big_skew.sqlite", "megatron_tp8.sqlite", 160, 48);
    press(&mut app, &mut t, "6p");
    let line = line_to(&app, PanelKind::Diff, |to| {
        matches!(to, PanelTarget::Instance(..))
    });
    down_to(&mut app, &mut t, PanelKind::Diff, line);
    let a = panel_area(&app, PanelKind::Diff);
    let y = a.lines[line].start - app.chrome().panels.scroll(PanelKind::Diff).top;
    let row = &rows(&t, a.inner)[y];
    assert!(row.starts_with("s20→s21"), "{row}");
    key(&mut app, &mut t, KeyCode::Enter);
    let l = app.capture().data.clone().unwrap();
    let g = l.analysis.matching.group("s21").expect("s21 after");
    assert_eq!(app.capture().instance(), Some((g, worst(&app, g))));
    assert_eq!(app.capture().jump, Some(JumpSource::Group(g)));
}

#[test]
fn enter_on_a_rank_of_the_skew_panel_selects_its_kernel_and_esc_gives_the_keys_back() {
    let (mut app, mut t) = megatron(Some("s20:55"), 160, 48);
    press(&mut app, &mut t, "1p");
    let a = panel_area(&app, PanelKind::Skew);
    let y = rows(&t, a.inner)
        .iter()
        .position(|r| r.starts_with("D5 "))
        .expect("a D5 row");
    let line = a
        .line_at(app.chrome().panels.scroll(PanelKind::Skew).top + y)
        .unwrap();
    assert!(matches!(a.target(line), Some(PanelTarget::Event(_))));
    down_to(&mut app, &mut t, PanelKind::Skew, line);
    key(&mut app, &mut t, KeyCode::Enter);
    let l = app.capture().data.clone().unwrap();
    let Some(EventRef::Gpu(r)) = app.capture().selection else {
        panic!("{:?}", app.capture().selection)
    };
    let lane = &l.profile.lanes[l.profile.gpu.lane(r) as usize];
    assert_eq!(l.profile.device_label(lane.device).to_string(), "5");
    assert!(screen(&t).contains("instance 55/225"), "{}", screen(&t));
    // Esc gives the keys back and keeps the selection (on the timeline
    // Esc would clear it).
    let selected = app.capture().selection;
    key(&mut app, &mut t, KeyCode::Esc);
    assert_eq!(app.mode(), Mode::Timeline);
    assert_eq!(app.chrome().panels.focused(), None);
    assert_eq!(app.capture().selection, selected);
    // Up and Down move lanes again, not the panel's cursor.
    let cursor = app.capture().lanes.cursor;
    key(&mut app, &mut t, KeyCode::Down);
    assert_eq!(app.capture().lanes.cursor, cursor + 1);
    assert_eq!(app.chrome().panels.cursor(PanelKind::Skew), line);
    // `q` in a focused panel goes back to the timeline; it does not quit.
    press(&mut app, &mut t, "pq");
    assert!(!app.session().quit);
    assert_eq!(app.mode(), Mode::Timeline);
    press(&mut app, &mut t, "q");
    assert!(app.session().quit);
}

#[test]
fn enter_on_a_row_without_a_target_says_so() {
    let (mut app, mut t) = megatron(Some("s20:55"), 160, 48);
    press(&mut app, &mut t, "1p");
    let a = panel_area(&app, PanelKind::Skew);
    assert_eq!(a.target(0), None, "the first line is the instance's title");
    let selected = app.capture().selection;
    key(&mut app, &mut t, KeyCode::Enter);
    assert_eq!(app.capture().selection, selected);
    assert!(
        status(&t).contains("nothing to go to on this row"),
        "{}",
        status(&t)
    );
}

#[test]
fn the_cursor_stays_in_view_past_the_visible_rows() {
    let (mut app, mut t) = megatron(Some("s20:55"), 80, 24);
    press(&mut app, &mut t, "1p");
    let k = PanelKind::Skew;
    let s = app.chrome().panels.scroll(k);
    assert!(s.len > s.visible + 2, "{s:?}");
    let in_view = |app: &App| {
        let a = panel_area(app, k);
        let rows = a.lines[app.chrome().panels.cursor(k)].clone();
        let s = app.chrome().panels.scroll(k);
        s.top <= rows.start && rows.end <= s.top + s.visible
    };
    for _ in 0..s.visible + 2 {
        key(&mut app, &mut t, KeyCode::Down);
        assert!(in_view(&app), "{:?}", app.chrome().panels.scroll(k));
    }
    let s = app.chrome().panels.scroll(k);
    assert!(s.top > 0, "{s:?}");
    // The last row the cursor is on is the panel's last visible one.
    let a = panel_area(&app, k);
    assert_eq!(
        a.lines[app.chrome().panels.cursor(k)].end,
        s.top + s.visible,
        "{s:?}"
    );
    // End: the last line, the list scrolled to its end; Home: back.
    key(&mut app, &mut t, KeyCode::End);
    let s = app.chrome().panels.scroll(k);
    assert_eq!(app.chrome().panels.cursor(k), a.lines.len() - 1);
    assert_eq!(s.top, s.len - s.visible);
    key(&mut app, &mut t, KeyCode::Home);
    assert_eq!(
        (
            app.chrome().panels.cursor(k),
            app.chrome().panels.scroll(k).top
        ),
        (0, 0)
    );
    // PageDown: about a page of rows at a time, the cursor in view.
    key(&mut app, &mut t, KeyCode::PageDown);
    let at = app.chrome().panels.cursor(k);
    assert!(at > 1, "{at}");
    assert!(panel_area(&app, k).lines[at].start >= s.visible.saturating_sub(2));
    assert!(in_view(&app));
    key(&mut app, &mut t, KeyCode::PageUp);
    assert_eq!(app.chrome().panels.cursor(k), 0);
    // The position in the title follows the scroll.
    key(&mut app, &mut t, KeyCode::End);
    let outer = panel_area(&app, k).inner.outer(Margin::new(1, 1));
    let title = &rows(&t, Rect::new(outer.x, outer.y, outer.width, 1))[0];
    assert!(title.contains(&format!("/{} ", s.len)), "{title}");
    assert!(!rows(&t, outer).last().unwrap().contains("↓ more"));
}

#[test]
fn p_and_tab_go_round_the_open_panels() {
    let (mut app, mut t) = megatron(Some("s20:55"), 160, 48);
    press(&mut app, &mut t, "125");
    // The last opened first, then on in screen order, round to the first.
    press(&mut app, &mut t, "p");
    assert_eq!(app.chrome().panels.focused(), Some(PanelKind::Details));
    press(&mut app, &mut t, "p");
    assert_eq!(app.chrome().panels.focused(), Some(PanelKind::Skew));
    key(&mut app, &mut t, KeyCode::Tab);
    assert_eq!(app.chrome().panels.focused(), Some(PanelKind::Launch));
    // The focused panel is the one `{` `}` scroll once back on the
    // timeline, and the one `p` focuses again.
    key(&mut app, &mut t, KeyCode::Esc);
    assert_eq!(app.chrome().panels.last_opened, Some(PanelKind::Launch));
    press(&mut app, &mut t, "p");
    assert_eq!(app.chrome().panels.focused(), Some(PanelKind::Launch));
}

#[test]
fn p_with_no_panel_open_says_so() {
    let (mut app, mut t) = megatron(None, 160, 48);
    press(&mut app, &mut t, "p");
    assert_eq!(app.mode(), Mode::Timeline);
    assert!(
        status(&t).contains("no panel open to focus (1-6 open one)"),
        "{}",
        status(&t)
    );
}

#[test]
fn the_focused_panel_says_so_and_the_status_line_has_its_keys() {
    let (mut app, mut t) = megatron(Some("s20:55"), 160, 48);
    press(&mut app, &mut t, "15");
    let title = |app: &App, t: &Terminal<TestBackend>, k| {
        let outer = panel_area(app, k).inner.outer(Margin::new(1, 1));
        rows(t, Rect::new(outer.x, outer.y, outer.width, 1)).remove(0)
    };
    assert!(!status(&t).contains("next panel"), "{}", status(&t));
    press(&mut app, &mut t, "p");
    assert!(
        title(&app, &t, PanelKind::Details).contains("▶details · Enter go · Esc q back"),
        "{}",
        title(&app, &t, PanelKind::Details)
    );
    assert!(!title(&app, &t, PanelKind::Skew).contains('▶'));
    let s = status(&t);
    assert!(
        s.contains("details: ↑ k ↓ j row · Enter go · p Tab next panel · Esc q back │ s20 · instance 55/225"),
        "{s}"
    );
}

#[test]
fn a_click_puts_the_cursor_on_the_row_it_acts_on() {
    let (mut app, mut t) = megatron(Some("s20:55"), 160, 48);
    press(&mut app, &mut t, "1");
    let a = panel_area(&app, PanelKind::Skew);
    let y = rows(&t, a.inner)
        .iter()
        .position(|r| r.starts_with("D5 "))
        .expect("a D5 row");
    app.on_mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: a.inner.x + 1,
        row: a.inner.y + y as u16,
        modifiers: KeyModifiers::NONE,
    });
    draw(&mut app, &mut t);
    let line = a.line_at(y).unwrap();
    assert_eq!(app.chrome().panels.cursor(PanelKind::Skew), line);
    // A click does not take the keys from the timeline.
    assert_eq!(app.mode(), Mode::Timeline);
    press(&mut app, &mut t, "p");
    insta::assert_snapshot!("focused_skew_panel", focused_box(&app, &t, PanelKind::Skew));
}

#[test]
fn a_focused_panel_6_snapshot() {
    let (mut app, mut t) = with_baseline("diff/no_big_skew.sqlite", "megatron_tp8.sqlite", 160, 48);
    press(&mut app, &mut t, "6p");
    let line = line_to(&app, PanelKind::Diff, |to| {
        matches!(to, PanelTarget::Kernel(_))
    });
    down_to(&mut app, &mut t, PanelKind::Diff, line);
    insta::assert_snapshot!("focused_diff_panel", focused_box(&app, &t, PanelKind::Diff));
}
