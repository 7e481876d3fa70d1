//! Hundreds of ranks on one screen (an in-memory 4 × 64-rank profile): the
//! skew panel lists the latest and the earliest ranks first and scrolls;
//! focus mode puts the late rank on top; the straggler map scrolls down.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rankline::analysis::Settings;
use rankline::profile::synthetic::{many_ranks, straggler};
use rankline::tui::data::Loaded;
use rankline::tui::keymap::Keymap;
use rankline::tui::panel::PanelKind;
use rankline::tui::state::App;
use rankline::tui::ui;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::Arc;

const HOSTS: usize = 4;
const PER_HOST: usize = 64;
const RANKS: usize = HOSTS * PER_HOST;

fn open(w: u16, h: u16) -> (App, Terminal<TestBackend>) {
    let p = many_ranks(HOSTS, PER_HOST, 40);
    let loaded = Loaded::build(p, &Settings::default(), &mut |_| {});
    let mut app = App::new(Keymap::default_keymap(), false);
    app.set_data(Arc::new(loaded));
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| ui::draw(f, &mut app)).unwrap();
    (app, t)
}

fn key(app: &mut App, t: &mut Terminal<TestBackend>, code: KeyCode) {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
    t.draw(|f| ui::draw(f, app)).unwrap();
}

/// The skew panel's text rows on screen.
fn skew_panel(app: &App, t: &Terminal<TestBackend>) -> Vec<String> {
    let r = app
        .chrome()
        .layout
        .panels
        .iter()
        .find(|p| p.kind == Some(PanelKind::Skew))
        .expect("skew panel drawn")
        .inner;
    let buf = t.backend().buffer();
    (r.y..r.bottom())
        .map(|y| {
            (r.x..r.right())
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
        })
        .collect()
}

/// Device labels (`node01:5`) of the rank rows, in order.
fn ranks(rows: &[String]) -> Vec<String> {
    rows.iter()
        .map(|r| r.trim_start())
        .filter(|r| r.starts_with("node"))
        .map(|r| r.split_whitespace().next().unwrap().to_string())
        .collect()
}

#[test]
fn the_skew_panel_lists_the_latest_and_earliest_ranks_first_and_scrolls() {
    let (mut app, mut t) = open(200, 60);
    let l = app.capture().data.clone().unwrap();
    // Instance 37 has a straggler.
    let k = 36;
    let late = straggler(k, RANKS).unwrap();
    app.go(rankline::tui::state::Target::Instance(0, k), true);
    key(&mut app, &mut t, KeyCode::Char('1'));
    let rows = skew_panel(&app, &t);
    let text = rows.join("\n");
    // The figures come before the list.
    let figures = rows.iter().position(|r| r.contains("start skew")).unwrap();
    let header = rows.iter().position(|r| r.contains("start+ms")).unwrap();
    assert!(figures < header, "{text}");
    assert!(
        text.contains(&format!("latest (5 of {RANKS} ranks)")),
        "{text}"
    );
    assert!(
        text.contains(&format!("earliest (5 of {RANKS} ranks)")),
        "{text}"
    );
    // Latest five: the straggler first, then by start, latest first; the
    // earliest five next, earliest first.
    let g = &l.analysis.matching.groups[0];
    let starts: Vec<i64> = g
        .members(k)
        .map(|(_, r, _)| l.profile.gpu.start(r))
        .collect();
    let label = |d: usize| l.profile.device_label(g.devices[d]).to_string();
    let mut by_start: Vec<usize> = (0..RANKS).collect();
    by_start.sort_by_key(|&d| (std::cmp::Reverse(starts[d]), d));
    assert_eq!(by_start[0], late);
    let mut want: Vec<String> = by_start[..5].iter().map(|&d| label(d)).collect();
    let mut earliest: Vec<usize> = by_start[RANKS - 5..].to_vec();
    earliest.sort_by_key(|&d| (starts[d], d));
    want.extend(earliest.iter().map(|&d| label(d)));
    let shown = ranks(&rows);
    assert_eq!(shown[..10], want[..], "{text}");
    assert!(rows.iter().any(|r| r.contains("LATE")), "{text}");
    // It scrolls: `}` moves down to the others.
    let before = app.chrome().panels.scroll(PanelKind::Skew).top;
    for _ in 0..10 {
        key(&mut app, &mut t, KeyCode::Char('}'));
    }
    assert!(app.chrome().panels.scroll(PanelKind::Skew).top > before);
    let later = ranks(&skew_panel(&app, &t));
    assert!(!later.is_empty() && later[0] != shown[0], "{later:?}");
}

#[test]
fn focus_mode_puts_the_late_rank_on_top_with_hundreds_of_ranks() {
    let (mut app, mut t) = open(200, 60);
    let l = app.capture().data.clone().unwrap();
    let k = 36;
    let late = straggler(k, RANKS).unwrap();
    app.go(rankline::tui::state::Target::Instance(0, k), true);
    key(&mut app, &mut t, KeyCode::Char('F'));
    assert!(app.capture().lanes.focus);
    let lane = l.analysis.matching.groups[0].lanes[late];
    let first_stream = app
        .capture()
        .lanes
        .rows
        .iter()
        .find_map(|r| match r.kind {
            rankline::tui::lanes::LaneKind::Stream(s) => Some(s),
            _ => None,
        })
        .unwrap();
    assert_eq!(first_stream, lane);
}

#[test]
fn the_straggler_map_groups_hundreds_of_ranks_by_host_and_scrolls_down() {
    let (mut app, mut t) = open(200, 60);
    key(&mut app, &mut t, KeyCode::Char('H'));
    let v = app.capture().straggler.as_ref().unwrap();
    assert_eq!(v.map.ranks(), RANKS);
    assert_eq!(v.rows.len(), RANKS + HOSTS, "a header per host");
    assert!(v.rows_scroll.visible < v.rows.len());
    key(&mut app, &mut t, KeyCode::PageDown);
    key(&mut app, &mut t, KeyCode::PageDown);
    let v = app.capture().straggler.as_ref().unwrap();
    assert!(v.rows_scroll.top > 0 && v.row >= v.rows_scroll.top);
    // Back to the top; Space collapses the first host to one row.
    for _ in 0..10 {
        key(&mut app, &mut t, KeyCode::PageUp);
    }
    key(&mut app, &mut t, KeyCode::Char(' '));
    let v = app.capture().straggler.as_ref().unwrap();
    assert_eq!(v.rows.len(), RANKS + HOSTS - PER_HOST);
    assert_eq!(v.row, 0);
}

/// Past 256 ranks (here 8 hosts × 40) the timeline and the straggler map
/// open host by host: one row per host, the map's rows each host's latest
/// rank per instance; Space opens a host; 256 ranks (4 × 64) open whole.
#[test]
fn past_256_ranks_hosts_start_collapsed_on_the_timeline_and_the_map() {
    use rankline::tui::lanes::LaneKind;
    use rankline::tui::stragglers::MapRow;
    let p = many_ranks(8, 40, 20);
    let loaded = Loaded::build(p, &Settings::default(), &mut |_| {});
    let mut app = App::new(Keymap::default_keymap(), false);
    app.set_data(Arc::new(loaded));
    let mut t = Terminal::new(TestBackend::new(160, 48)).unwrap();
    t.draw(|f| ui::draw(f, &mut app)).unwrap();
    let kinds: Vec<LaneKind> = app.capture().lanes.rows.iter().map(|r| r.kind).collect();
    assert_eq!(kinds.len(), 8, "{kinds:?}");
    assert!(kinds.iter().all(|k| matches!(k, LaneKind::Host(_))));
    key(&mut app, &mut t, KeyCode::Char('H'));
    let v = app.capture().straggler.as_ref().expect("the map");
    assert_eq!(v.rows.len(), 8);
    assert!(v.rows.iter().all(|r| matches!(r, MapRow::Host { .. })));
    // A collapsed host's cell is its latest rank's.
    let (late, rank) = v.cell(0, 0).expect("a host cell");
    let MapRow::Host { ranks, .. } = &v.rows[0] else {
        unreachable!()
    };
    let latest = ranks.iter().filter_map(|&r| v.map.at(r, 0)).max();
    assert_eq!(late, latest);
    assert!(ranks.contains(&rank));
    key(&mut app, &mut t, KeyCode::Char(' '));
    let v = app.capture().straggler.as_ref().unwrap();
    assert_eq!(
        v.rows.len(),
        8 + 40,
        "Space opens the host under the cursor"
    );
    // 256 ranks: whole.
    let (app, _) = open(160, 48);
    assert!(app.capture().lanes.rows.len() > RANKS);
}
