//! The hung job on the whole app drawn into TestBackend
//! (`fixtures/hang/`): the first screen says there is a hang, `W` lists who
//! is behind and Enter opens the divergence instance, whose missing rank is
//! marked on its lane and in the skew panel; the straggler map draws the
//! behind rank's cells as "never launched", apart from "not captured".

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rankline::analysis::Settings;
use rankline::profile::Source;
use rankline::tui::action::Mode;
use rankline::tui::keymap::Keymap;
use rankline::tui::state::{App, Screen};
use rankline::tui::ui;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::PathBuf;

fn open(dir: &str, w: u16, h: u16) -> (App, Terminal<TestBackend>) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sqlite"))
        .collect();
    files.sort();
    let sources: Vec<Source> = files.into_iter().map(Source::File).collect();
    let mut app = App::new(Keymap::default_keymap(), false);
    app.load_now(&sources, None, &Settings::default());
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    (app, terminal)
}

fn key(app: &mut App, terminal: &mut Terminal<TestBackend>, code: KeyCode) {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
    terminal.draw(|f| ui::draw(f, app)).unwrap();
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

#[test]
fn the_first_screen_says_there_is_a_hang() {
    let (_app, t) = open("hang", 160, 48);
    let s = screen(&t);
    assert!(
        s.contains("hang: s16 #9 AllGather, 7 waiting, behind hang01:2 — press W"),
        "{s}"
    );
}

#[test]
fn w_lists_who_is_behind_and_enter_opens_the_divergence() {
    let (mut app, mut t) = open("hang", 160, 48);
    key(&mut app, &mut t, KeyCode::Char('W'));
    assert_eq!(app.mode(), Mode::Behind);
    let s = screen(&t);
    assert!(s.contains("who is behind"), "{s}");
    assert!(
        s.contains("s16 HANG at #9 AllGather: 7 waiting since"),
        "{s}"
    );
    assert!(
        s.contains("hang01:2 behind: in cudaStreamSynchronize · NVTX optimizer_step"),
        "{s}"
    );
    insta::assert_snapshot!("behind_list_160x48", s);
    key(&mut app, &mut t, KeyCode::Enter);
    assert_eq!(app.mode(), Mode::Timeline);
    let (g, k) = app.capture().instance().expect("an instance is selected");
    let l = app.capture().data.clone().unwrap();
    assert_eq!((l.analysis.matching.groups[g].key.as_str(), k), ("s16", 8));
    // The behind rank's stream is marked where the instance starts (the
    // cursor put on it: the threads' CPU rows push it below the screen).
    let at = app
        .capture()
        .lanes
        .rows
        .iter()
        .position(|r| r.label.starts_with("hang01:2 S16 NCCL"))
        .expect("the behind rank's NCCL row");
    app.put_cursor(at);
    t.draw(|f| ui::draw(f, &mut app)).unwrap();
    let s = screen(&t);
    let lane = s
        .lines()
        .find(|l| l.starts_with("hang01:2 S16 NCCL"))
        .expect("the behind rank's NCCL lane is shown");
    assert!(lane.contains("× never launched (behind)"), "{lane}");
    // The skew panel names it.
    key(&mut app, &mut t, KeyCode::Char('1'));
    let s = screen(&t);
    assert!(s.contains("never launched: hang01:2"), "{s}");
}

#[test]
fn the_straggler_map_draws_never_launched_apart_from_not_captured() {
    let (mut app, mut t) = open("hang", 160, 48);
    key(&mut app, &mut t, KeyCode::Char('H'));
    assert_eq!(app.chrome().screen, Screen::Stragglers);
    let v = app.capture().straggler.as_ref().unwrap();
    // hang01:2 is the group's 7th device; instance 9 is the last column.
    let col = v.map.columns() - 1;
    assert_eq!(v.map.instances[col], 8);
    assert!(v.never_launched(6, col));
    assert!(!v.never_launched(6, col - 1));
    assert!(!v.never_launched(5, col));
    let s = screen(&t);
    assert!(s.contains("×never launched (behind)"), "{s}");
    assert!(s.contains('×'), "{s}");
    // A late start is "not captured", never "never launched".
    let (mut app, mut t) = open("staggered", 160, 48);
    key(&mut app, &mut t, KeyCode::Char('H'));
    let v = app.capture().straggler.as_ref().unwrap();
    assert!((0..v.map.ranks()).all(|r| (0..v.map.columns()).all(|c| !v.never_launched(r, c))));
    let s = screen(&t);
    assert!(s.contains("-not captured"), "{s}");
    assert!(!s.contains("never launched"), "{s}");
}
