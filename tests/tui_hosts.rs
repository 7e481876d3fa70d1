//! Files from several hosts on the timeline: rows grouped host → device →
//! stream under a host header that collapses the whole host with Space.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rankline::analysis::Settings;
use rankline::profile::Source;
use rankline::tui::data::{self, LoadMsg};
use rankline::tui::keymap::Keymap;
use rankline::tui::lanes::LaneKind;
use rankline::tui::state::App;
use rankline::tui::ui;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::PathBuf;

fn two_hosts() -> (App, Terminal<TestBackend>) {
    let f = |n: &str| {
        Source::File(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures")
                .join(n),
        )
    };
    let mut app = App::new(Keymap::default_keymap(), false);
    let mut msgs = Vec::new();
    data::load(
        &[f("two_node_a.sqlite"), f("two_node_b.sqlite")],
        None,
        &Settings::default(),
        &mut |m| msgs.push(m),
    );
    for m in msgs {
        if !matches!(m, LoadMsg::Progress { .. }) {
            app.on_load(m);
        }
    }
    let mut terminal = Terminal::new(TestBackend::new(160, 50)).unwrap();
    terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    (app, terminal)
}

fn host_rows(app: &App) -> Vec<(usize, String)> {
    app.capture()
        .lanes
        .rows
        .iter()
        .enumerate()
        .filter(|(_, r)| matches!(r.kind, LaneKind::Host(_)))
        .map(|(i, r)| (i, r.label.clone()))
        .collect()
}

#[test]
fn each_host_heads_its_devices_and_collapses_as_a_whole() {
    let (mut app, mut terminal) = two_hosts();
    let hosts = host_rows(&app);
    assert_eq!(hosts.len(), 2, "{:?}", app.capture().lanes.rows);
    assert_eq!(hosts[0], (0, "node-a · 2 GPUs".to_string()));
    assert_eq!(hosts[1].1, "node-b · 2 GPUs");
    // Host a's devices, and only its, sit between the two headers.
    let between: Vec<&str> = app.capture().lanes.rows[1..hosts[1].0]
        .iter()
        .filter(|r| matches!(r.kind, LaneKind::Device(_)))
        .map(|r| r.label.as_str())
        .collect();
    assert_eq!(between.len(), 2, "{between:?}");
    assert!(
        between.iter().all(|l| l.starts_with("node-a:")),
        "{between:?}"
    );
    let all = app.capture().lanes.rows.len();

    app.put_cursor(0);
    app.on_key(KeyEvent::new(KeyCode::Char(' '), KeyModifiers::NONE));
    terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    assert!(app.capture().lanes.collapsed.contains(&LaneKind::Host(0)));
    assert!(
        matches!(app.capture().lanes.rows[1].kind, LaneKind::Host(1)),
        "{:?}",
        app.capture().lanes.rows[1]
    );
    assert_eq!(app.capture().lanes.rows.len(), all - hosts[1].0 + 1);

    app.on_key(KeyEvent::new(KeyCode::Char(' '), KeyModifiers::NONE));
    assert_eq!(app.capture().lanes.rows.len(), all);
}

#[test]
fn the_finder_finds_a_device_by_host_and_shows_its_row_expanding_its_host() {
    let (mut app, mut terminal) = two_hosts();
    let l = app.capture().data.clone().unwrap();
    let labels: Vec<&str> = l
        .entries
        .iter()
        .filter(|e| matches!(e.kind, rankline::tui::finder::EntryKind::Device(_)))
        .map(|e| e.label.as_str())
        .collect();
    assert_eq!(
        labels,
        vec![
            "node-a:0 (device on node-a)",
            "node-a:1 (device on node-a)",
            "node-b:0 (device on node-b)",
            "node-b:1 (device on node-b)"
        ]
    );
    // Host b collapsed, then found through the finder.
    let b = host_rows(&app)[1].0;
    app.put_cursor(b);
    let key = |c| KeyEvent::new(c, KeyModifiers::NONE);
    app.on_key(key(KeyCode::Char(' ')));
    assert!(app.capture().lanes.collapsed.contains(&LaneKind::Host(1)));
    for k in [KeyCode::Char('/')]
        .into_iter()
        .chain("node-b:1 (device".chars().map(KeyCode::Char))
        .chain([KeyCode::Enter])
    {
        app.on_key(key(k));
        terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    }
    assert!(!app.capture().lanes.collapsed.contains(&LaneKind::Host(1)));
    let row = &app.capture().lanes.rows[app.capture().lanes.cursor];
    assert!(matches!(row.kind, LaneKind::Device(_)), "{row:?}");
    assert!(row.label.starts_with("node-b:1 "), "{row:?}");
}
