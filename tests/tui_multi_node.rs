//! The timeline on `fixtures/multinode` (a directory of four node files)
//! drawn into TestBackend: the title says the clocks were aligned from
//! collective ends, every host heads its rows, and the straggler map (`H`)
//! shows the 16 ranks grouped under their 4 hosts.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rankline::analysis::Settings;
use rankline::profile::Source;
use rankline::profile::inputs::expand_inputs;
use rankline::tui::data::{self, LoadMsg};
use rankline::tui::keymap::Keymap;
use rankline::tui::lanes::LaneKind;
use rankline::tui::state::App;
use rankline::tui::stragglers::MapRow;
use rankline::tui::ui;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::PathBuf;

fn open() -> (App, Terminal<TestBackend>) {
    open_with("multinode", &Settings::default(), 200, 60)
}

fn open_with(
    fixture: &str,
    settings: &Settings,
    cols: u16,
    rows: u16,
) -> (App, Terminal<TestBackend>) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(fixture);
    let files = expand_inputs(&[dir]).expect("the directory's files");
    assert!(files.len() >= 2, "{fixture}: {files:?}");
    let sources: Vec<Source> = files.into_iter().map(Source::File).collect();
    let mut app = App::new(Keymap::default_keymap(), false);
    let mut msgs = Vec::new();
    data::load(&sources, None, settings, &mut |m| msgs.push(m));
    for m in msgs {
        if !matches!(m, LoadMsg::Progress { .. }) {
            app.on_load(m);
        }
    }
    let mut terminal = Terminal::new(TestBackend::new(cols, rows)).unwrap();
    terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    (app, terminal)
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
fn the_title_names_the_alignment_and_hosts_head_their_rows() {
    let (app, terminal) = open();
    let s = screen(&terminal);
    let title = s.lines().next().unwrap();
    assert!(
        title.contains("clocks: collective ends, residual "),
        "{title}"
    );
    let hosts: Vec<String> = app
        .capture()
        .lanes
        .rows
        .iter()
        .filter(|r| matches!(r.kind, LaneKind::Host(_)))
        .map(|r| r.label.clone())
        .collect();
    assert_eq!(
        hosts,
        [
            "node00 · 4 GPUs",
            "node01 · 4 GPUs",
            "node02 · 4 GPUs",
            "node03 · 4 GPUs"
        ]
    );
    assert!(s.contains("▾node00 · 4 GPUs"), "{s}");
    // Each host collapses to its header: then all four are on screen.
    let (mut app, mut terminal) = (app, terminal);
    for h in 0..4 {
        let row = app
            .capture()
            .lanes
            .rows
            .iter()
            .position(|r| r.kind == LaneKind::Host(h))
            .unwrap();
        app.put_cursor(row);
        app.on_key(KeyEvent::new(KeyCode::Char(' '), KeyModifiers::NONE));
        terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    }
    let s = screen(&terminal);
    for h in &hosts {
        assert!(s.contains(h), "{h} not drawn:\n{s}");
    }
}

#[test]
fn the_straggler_map_groups_16_ranks_under_4_hosts() {
    let (mut app, mut terminal) = open();
    app.on_key(KeyEvent::new(KeyCode::Char('H'), KeyModifiers::NONE));
    terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    let v = app.capture().straggler.as_ref().expect("the map is open");
    assert_eq!(v.map.ranks(), 16);
    assert_eq!(v.map.columns(), 24, "the global group s29");
    let l = app.capture().data.as_ref().unwrap();
    let mut hosts = Vec::new();
    let mut ranks_of: Vec<usize> = Vec::new();
    for row in &v.rows {
        match row {
            MapRow::Host { host, ranks } => {
                hosts.push(*host);
                ranks_of.push(ranks.len());
            }
            MapRow::Rank(r) => {
                // A rank sits under its own host's header.
                let host = l.profile.devices[v.map.devices[*r] as usize].host;
                assert_eq!(Some(&host), hosts.last(), "rank {r}");
            }
        }
    }
    assert_eq!(hosts, [0, 1, 2, 3]);
    assert_eq!(ranks_of, [4, 4, 4, 4]);
    // Lateness on the aligned clock: no cell beyond the group's largest
    // start skew (32 ms), none hours off.
    assert!(v.map.max_all_ns < 40_000_000, "{}", v.map.max_all_ns);
    let s = screen(&terminal);
    assert!(s.contains("node02"), "{s}");
}

/// fixtures/per_rank opened with `--align utc`, at `cols` × `rows`.
fn per_rank_on_utc(cols: u16, rows: u16) -> (App, Terminal<TestBackend>) {
    let settings = Settings {
        align: rankline::analysis::clock::AlignMode::Utc,
        ..Settings::default()
    };
    open_with("per_rank", &settings, cols, rows)
}

fn key(app: &mut App, c: char) {
    app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
}

/// On UTC-only clocks (`--align utc`, fixtures/per_rank: 4 ranks on 2
/// hosts, clocks agreeing to 6.4 ms) the map's legend offers no step finer
/// than the clock error: smaller lateness is drawn `~`, "not resolvable";
/// the title says how far the clocks can be trusted.
#[test]
fn on_utc_only_clocks_the_map_draws_no_step_finer_than_the_clock_error() {
    let (mut app, mut terminal) = per_rank_on_utc(160, 48);
    key(&mut app, 'H');
    terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    let s = screen(&terminal);
    assert!(s.contains("~≤6.4 not resolvable (clocks)"), "{s}");
    assert!(
        !s.contains("≤0."),
        "no step finer than the clock error: {s}"
    );
    assert!(
        s.contains("clocks: UTC only (ends not asked for: --align utc; residual p90"),
        "{s}"
    );
    insta::assert_snapshot!("straggler_map_utc_only", s);
}

/// The launch panel of a late rank on another host, on UTC-only clocks.
#[test]
fn on_utc_only_clocks_the_launch_panel_says_how_far_the_clocks_can_be_trusted() {
    let (mut app, mut terminal) = per_rank_on_utc(160, 48);
    // the second big event: rank 0 late, its first peer on the other host
    // (the first is rank 3, behind rank 2 on its own host's clock)
    key(&mut app, ']');
    key(&mut app, ']');
    key(&mut app, '2');
    terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    let s = screen(&terminal);
    assert!(
        s.contains("across hosts: their clocks agree to ±6.39 ms"),
        "{s}"
    );
    insta::assert_snapshot!("launch_panel_utc_only", s);
}

/// At 80 columns the map's title keeps whole words: the clock words are
/// left out when they do not fit, never cut (the legend still says what is
/// not resolvable).
#[test]
fn at_80_columns_the_maps_title_drops_the_clock_words_whole() {
    let (mut app, mut terminal) = per_rank_on_utc(80, 24);
    key(&mut app, 'H');
    terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
    let s = screen(&terminal);
    let title = s.lines().next().unwrap();
    assert!(title.ends_with("group order"), "{title}");
    assert!(s.contains("~≤6.4 not resolvable (clocks)"), "{s}");
}

/// per_rank records a world of 5 and has files for ranks 0–3: the title
/// warns of rank 4 as it warns of a device without activity, at both
/// sizes, and panel 4 names it.
#[test]
fn a_rank_without_a_file_is_warned_of_in_the_title_and_named_in_panel_4() {
    for (w, h) in [(160, 48), (80, 24)] {
        let (mut app, mut t) = open_with("per_rank", &Settings::default(), w, h);
        let s = screen(&t);
        let title = s.lines().next().unwrap();
        assert!(
            title.contains("⚠ rank 4 of a world of 5 has no file"),
            "{w}x{h}: {title}"
        );
        app.on_key(KeyEvent::new(KeyCode::Char('4'), KeyModifiers::NONE));
        t.draw(|f| ui::draw(f, &mut app)).unwrap();
        let s = screen(&t);
        assert!(
            s.contains("MISSING: rank 4 (no file; the world is 5"),
            "{w}x{h}: {s}"
        );
    }
}

/// `node02` in the finder is the host and its devices, not every device
/// numbered 2 (which match it letter by letter); Enter goes to the host.
#[test]
fn the_finder_matches_a_host_by_its_name() {
    let (mut app, mut t) = open_with("multinode", &Settings::default(), 160, 48);
    for c in "/node02".chars() {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    t.draw(|f| ui::draw(f, &mut app)).unwrap();
    let s = screen(&t);
    let hits: Vec<&str> = s
        .lines()
        .filter(|l| l.contains("(device on ") || l.contains("(host, "))
        .collect();
    assert!(!hits.is_empty(), "{s}");
    assert!(hits[0].contains("node02 (host, 4 devices)"), "{s}");
    assert!(hits.iter().all(|l| l.contains("node02")), "{hits:#?}");
    assert!(s.contains("5 names match"), "{s}");
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    t.draw(|f| ui::draw(f, &mut app)).unwrap();
    let l = app.data().unwrap();
    let row = app.capture().lanes.at_cursor().expect("a cursor row");
    let dev =
        rankline::tui::lanes::row_device(&l.profile, &l.index, row.kind).expect("a device row");
    assert_eq!(
        l.profile.host_label(l.profile.devices[dev as usize].host),
        "node02"
    );
}

/// On a multi-host job every lane keeps what it is — its stream or thread
/// and kind (`S29 NCCL`, `T41228 nvtx1`, `API`) — at both sizes: the host
/// and rank part gives way first (the host header above names it).
#[test]
fn lane_labels_keep_their_kind_on_multi_host_inputs() {
    for (w, h) in [(160, 48), (80, 24)] {
        let (mut app, mut t) = open_with("multinode", &Settings::default(), w, h);
        let mut checked = 0;
        for _ in 0..12 {
            let s = screen(&t);
            let lines: Vec<&str> = s.lines().collect();
            let lanes = app.chrome().layout.lanes;
            let lw = app.chrome().layout.label_width as usize;
            let top = app.capture().lanes.scroll.top;
            for y in lanes.y..lanes.bottom() {
                let i = top + (y - lanes.y) as usize;
                let Some(row) = app.capture().lanes.rows.get(i) else {
                    break;
                };
                if matches!(row.kind, LaneKind::Device(_) | LaneKind::Host(_)) {
                    continue;
                }
                let shown: String = lines[y as usize].chars().take(lw).collect();
                let words: Vec<&str> = row.label.split(' ').collect();
                // The stream or thread and its kind: the label's last two words.
                let tail = words[words.len().saturating_sub(2)..].join(" ");
                assert!(
                    shown.contains(&tail),
                    "{w}x{h}: {:?} shown as {shown:?}",
                    row.label
                );
                checked += 1;
            }
            app.on_key(KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE));
            t.draw(|f| ui::draw(f, &mut app)).unwrap();
        }
        assert!(checked > 20, "{checked}");
    }
}

fn press_keys(app: &mut App, t: &mut Terminal<TestBackend>, keys: &str) {
    for c in keys.chars() {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        t.draw(|f| ui::draw(f, app)).unwrap();
    }
}

/// multinode's s29:15 is a node-level event (node02's 4 ranks all late):
/// the status line says what its figure is, or at 80 columns keeps the
/// verdict whole before who was late; the skew panel and the `b` list name
/// the host, not its latest rank.
#[test]
fn a_late_host_is_named_and_its_figure_explained_everywhere_it_appears() {
    for (w, h) in [(160, 48), (80, 24)] {
        let (mut app, mut t) = open_with("multinode", &Settings::default(), w, h);
        app.set_goto(Some("s29:15".into()));
        let l = app.data().unwrap();
        app.set_data(l);
        press_keys(&mut app, &mut t, "1");
        let s = screen(&t);
        let status = s.lines().last().unwrap();
        if w == 160 {
            assert!(
                status.contains("late host node02 (4 ranks) +21.866 ms after every other host's last start · cpu-late"),
                "{status}"
            );
        } else {
            assert!(
                status.contains("s29:15 AllGather · cpu-late · late host node02 +21.9 ms"),
                "{status}"
            );
        }
        let flat: String = s
            .split(['│', '\n'])
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            flat.contains("late host node02: all 4 of its ranks started 21.866 ms after"),
            "{w}x{h}: {s}"
        );
        press_keys(&mut app, &mut t, "b");
        let s = screen(&t);
        let row = s
            .lines()
            .find(|l| l.contains(" 15 AllGather"))
            .unwrap_or_else(|| panic!("{s}"));
        assert!(row.contains("node02 ×4"), "{row}");
        // Cut at the frame only with a mark: the heading's last column.
        let heading = s.lines().find(|l| l.contains("verdict")).unwrap();
        let inner = heading.split('│').nth(1).unwrap().trim_end();
        assert!(
            inner.ends_with("largest cause") || inner.ends_with('…'),
            "{w}x{h}: {heading}"
        );
        assert!(
            s.contains("HOST ×N: every rank of the host started late"),
            "{s}"
        );
    }
}

/// nodes_pp4: node 5's stall is a node event, its rows in the `b` list
/// marked ⚑; node 4's two ranks of a lockstep exchange group, late in
/// step 2 behind rank 1's stall, started late together in those
/// instances only — no node event, no ⚑.
#[test]
fn a_node_events_rows_carry_its_flag_and_a_lockstep_pairs_do_not() {
    let (mut app, mut t) = open_with("jobs/nodes_pp4", &Settings::default(), 160, 48);
    press_keys(&mut app, &mut t, "b");
    let s = screen(&t);
    assert!(s.contains("⚑ a node event (its rows are one event)"), "{s}");
    let rows: Vec<&str> = s.lines().filter(|l| l.contains(" ×2")).collect();
    assert!(rows.iter().any(|r| r.contains("gpu-c05 ×2 ⚑")), "{s}");
    assert!(
        rows.iter()
            .any(|r| r.contains("gpu-c04 ×2") && !r.contains('⚑')),
        "{s}"
    );
}
