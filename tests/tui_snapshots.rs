//! Whole-app render tests: the real state and views, drawn into ratatui's
//! TestBackend, compared with reviewed snapshots (`cargo insta review`).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rankline::analysis::Settings;
use rankline::profile::Source;
use rankline::tui::data::{self, LoadMsg};
use rankline::tui::keymap::Keymap;
use rankline::tui::state::App;
use rankline::tui::ui;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::PathBuf;

fn fixture() -> Source {
    Source::File(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/megatron_tp8.sqlite"))
}

/// An app with the 8-GPU fixture loaded (synchronously).
fn app(no_color: bool) -> App {
    let mut app = App::new(Keymap::default_keymap(), no_color);
    let mut msgs = Vec::new();
    data::load(&[fixture()], None, &Settings::default(), &mut |m| {
        msgs.push(m)
    });
    for m in msgs {
        if let LoadMsg::Progress { .. } = m {
            continue;
        }
        app.on_load(m);
    }
    assert!(app.capture().data.is_some());
    app
}

fn keys(app: &mut App, terminal: &mut Terminal<TestBackend>, keys: &str) {
    for c in keys.chars() {
        let code = match c {
            '\n' => KeyCode::Enter,
            '\x1b' => KeyCode::Esc,
            '\t' => KeyCode::Tab,
            c => KeyCode::Char(c),
        };
        app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
        // Draw between keys, as the real loop does: the state learns the
        // frame's geometry.
        terminal.draw(|f| ui::draw(f, app)).unwrap();
    }
}

fn screen(w: u16, h: u16, no_color: bool, typed: &str) -> String {
    let mut app = app(no_color);
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    keys(&mut app, &mut terminal, typed);
    terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    let buf = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        let line: String = (0..buf.area.width)
            .map(|x| buf[(x, y)].symbol().to_string())
            .collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[test]
fn first_view() {
    let s = screen(160, 48, false, "");
    assert!(s.contains("no GPU activity recorded"));
    assert!(s.contains("D1 S20 NCCL"));
    insta::assert_snapshot!("first_view", s);
}

#[test]
fn zoomed_view() {
    let s = screen(160, 48, false, "www");
    insta::assert_snapshot!("zoomed_view", s);
}

#[test]
fn big_skew_instance_with_skew_and_launch_panels() {
    let s = screen(160, 48, false, "]12");
    assert!(
        s.contains("s20 · instance 55/225 · AllGather · late D2 +31.9 ms · cpu-late"),
        "{s}"
    );
    assert!(s.contains("LATE"));
    assert!(s.contains("late rank D2: cpu-late"));
    insta::assert_snapshot!("big_skew_panels", s);
}

#[test]
fn gpu_side_verdict_names_the_kernel_that_competed() {
    let s = screen(160, 48, false, "]]2");
    assert!(
        s.contains("instance 100/225") && s.contains("gpu-side"),
        "{s}"
    );
    assert!(
        !s.contains("queued behind")
            && s.contains("meanwhile the device")
            && s.contains("sm90_xmma_gemm"),
        "{s}"
    );
}

/// The overlap panel counts copies as busy: its copy column holds the
/// report's copy-only time (device 1 of the fixture: 1.015 ms).
#[test]
fn overlap_panel_shows_copy_time() {
    let s = screen(160, 48, false, "3");
    // The panel is the second-to-last cell between borders.
    let panel = |l: &str| l.rsplit('│').nth(1).unwrap_or("").to_string();
    let lines: Vec<String> = s.lines().map(panel).collect();
    let header = lines.iter().find(|l| l.contains(" comp ")).expect(&s);
    let cols: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(
        cols,
        ["dev", "comp", "nccl", "ovl", "copy", "idle", "hid%"],
        "{header}"
    );
    let d1 = lines
        .iter()
        .skip_while(|l| !l.contains("whole capture, ms"))
        .find(|l| l.starts_with("D1 "))
        .expect(&s);
    let cells: Vec<&str> = d1.split_whitespace().collect();
    assert_eq!(cells[4], "1.015", "{d1}");
    assert!(
        s.contains("copy = memcpy/memset while no kernel runs"),
        "{s}"
    );
}

#[test]
fn focus_mode() {
    let s = screen(160, 48, false, "]F");
    assert!(s.contains("FOCUS"));
    // Latest arriver first.
    let lanes: Vec<&str> = s.lines().filter(|l| l.contains(" S20 +")).collect();
    assert_eq!(lanes.len(), 7, "{s}");
    assert!(lanes[0].starts_with("D2 S20"), "{lanes:?}");
    // Right below the late rank, the thread that launched its kernel: a
    // cpu-late cause (this instance's verdict) is visible there.
    let rows: Vec<&str> = s.lines().skip_while(|l| !l.starts_with("D2 S20")).collect();
    assert!(rows[1].starts_with("D2 T4103 API"), "{rows:?}");
    assert!(s.contains("cpu-late"), "{s}");
    insta::assert_snapshot!("focus_mode", s);
}

#[test]
fn finder() {
    let s = screen(160, 48, false, "/allgather");
    assert!(
        s.contains("ncclDevKernel_AllGather_RING_LL (kernel)"),
        "{s}"
    );
    insta::assert_snapshot!("finder", s);
}

#[test]
fn finder_jump_then_next_occurrence() {
    let s = screen(160, 48, false, "/train_step\nn");
    assert!(s.contains("NVTX train_step"), "{s}");
    assert!(s.contains("n/N: train_step (NVTX)"), "{s}");
}

#[test]
fn help_overlay() {
    let s = screen(160, 48, false, "?");
    assert!(s.contains("timeline keys") && s.contains("Pan left"), "{s}");
    insta::assert_snapshot!("help", s);
}

#[test]
fn small_terminal() {
    let s = screen(80, 24, false, "]1");
    assert!(s.contains("instance 55/225"), "{s}");
    insta::assert_snapshot!("small_80x24", s);
}

#[test]
fn no_color() {
    let s = screen(160, 48, true, "]");
    // Collectives are told apart by letters, not colour alone.
    assert!(s.contains('G'), "{s}");
    insta::assert_snapshot!("no_color", s);
}

#[test]
fn goto_time_and_relative_toggle() {
    let mut app = app(false);
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
    terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    keys(&mut app, &mut terminal, "tg0.5\n");
    let first = app.capture().data.as_ref().unwrap().span.unwrap().0 as f64;
    assert!(
        (app.capture().view.center() - (first + 0.5e9)).abs() < 1.0,
        "{}",
        app.capture().view.center()
    );
}

/// An app with the fixture, drawn once at 160×48, ready for keys.
fn ready() -> (App, Terminal<TestBackend>) {
    let mut app = app(false);
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
    terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    (app, terminal)
}

fn text(terminal: &Terminal<TestBackend>) -> String {
    let buf = terminal.backend().buffer();
    (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
                + "\n"
        })
        .collect()
}

#[test]
fn collapse_relative_time_and_launch_jump() {
    let (mut app, mut terminal) = ready();
    let rows = app.capture().lanes.rows.len();
    // The cursor starts on D0's header: Space collapses the device.
    keys(&mut app, &mut terminal, " ");
    assert!(
        app.capture().lanes.rows.len() < rows,
        "collapse hid nothing"
    );
    keys(&mut app, &mut terminal, " ");
    assert_eq!(app.capture().lanes.rows.len(), rows);
    keys(&mut app, &mut terminal, "t");
    assert!(text(&terminal).contains("time (rel)"));
    // A big event, then the late kernel's launch call on its API lane.
    keys(&mut app, &mut terminal, "]J");
    let s = text(&terminal);
    assert!(s.contains("cuLaunchKernelEx · T4103"), "{s}");
}

#[test]
fn tab_steps_through_events_on_the_lane() {
    let (mut app, mut terminal) = ready();
    let lane = app
        .capture()
        .lanes
        .rows
        .iter()
        .position(|r| r.label == "D1 S20 NCCL")
        .unwrap();
    app.put_cursor(lane);
    // Tab selects the first event after the cursor (mid-capture), and the
    // next Tab the one after it: instances k and k + 1 of s20.
    keys(&mut app, &mut terminal, "\t");
    let (g, k) = app
        .capture()
        .instance()
        .expect("an NCCL kernel of s20 is selected");
    assert!(k > 0);
    assert!(text(&terminal).contains(&format!("instance {}/225", k + 1)));
    keys(&mut app, &mut terminal, "\t");
    assert_eq!(app.capture().instance(), Some((g, k + 1)));
    keys(&mut app, &mut terminal, "\x1b");
    assert!(app.capture().selection.is_none());
}

#[test]
fn goto_an_unknown_instance_says_so() {
    let mut app = App::new(Keymap::default_keymap(), false);
    app.set_goto(Some("s99:1".into()));
    let mut msgs = Vec::new();
    data::load(&[fixture()], None, &Settings::default(), &mut |m| {
        msgs.push(m)
    });
    for m in msgs {
        app.on_load(m);
    }
    assert!(
        app.answer().unwrap_or("").contains("--goto s99:1"),
        "{:?}",
        app.answer()
    );
}

#[test]
fn the_timeline_writes_its_cache_after_the_first_frame() {
    let dir =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-tmp/tui_cache");
    let _ = std::fs::remove_dir_all(&dir);
    let cache = rankline::profile::CacheDir {
        dir: dir.clone(),
        cap_bytes: 1 << 30,
    };
    let mut order = Vec::new();
    data::load(&[fixture()], Some(&cache), &Settings::default(), &mut |m| {
        let entries = std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0);
        match m {
            LoadMsg::Done(_) => order.push(("drawable", entries)),
            LoadMsg::Analysed(_) => order.push(("analysed", entries)),
            _ => {}
        }
    });
    // Nothing was written before the UI had what it needs…
    assert_eq!(order, vec![("drawable", 0), ("analysed", 0)]);
    // …and the entry exists once loading is over; the next open reads it.
    let path =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/megatron_tp8.sqlite");
    assert!(matches!(
        rankline::profile::cache::read(&dir, &path),
        rankline::profile::cache::Lookup::Hit(_)
    ));
}

/// At 80 columns the key hints give way: the first screen's notice and a
/// selection's status are whole, never cut.
#[test]
fn status_line_drops_hints_before_cutting_the_answer() {
    let s = screen(80, 24, false, "");
    let status = s.lines().last().unwrap();
    assert!(
        status
            .trim_end()
            .ends_with("worst s20:145 late D4 +46.6 ms — press b"),
        "{status}"
    );
    let s = screen(80, 24, false, "]");
    let status = s.lines().last().unwrap();
    assert!(
        status.contains("instance 55/225 · AllGather · late D2 +31.9 ms · cpu-late"),
        "{status}"
    );
}
