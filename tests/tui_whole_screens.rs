//! One whole-app snapshot per screen that must state its answer whole, at
//! 80×24 and 160×48: every cut ends in `…`, every label keeps what it is,
//! every figure is explained where it appears. Each case also asserts the
//! phrase it exists for, at both sizes, so a reviewed snapshot that lost
//! its answer fails here and not only in review.

mod common;

use common::tui::{draw, open_at, screen};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rankline::analysis::Settings;
use rankline::profile::Source;
use rankline::profile::inputs::expand_inputs;
use rankline::tui::keymap::Keymap;
use rankline::tui::state::App;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::PathBuf;

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];

fn file(name: &str) -> Vec<Source> {
    vec![common::tui::fixture(name)]
}

/// A fixture directory's files, one source each.
fn dir(name: &str) -> Vec<Source> {
    let files = expand_inputs(&[common::root().join("fixtures").join(name)]).unwrap();
    files.into_iter().map(Source::File).collect()
}

/// Keys as typed: characters, with `⏎` Enter, `⎋` Esc and `⇟` PageDown.
fn typed(app: &mut App, t: &mut Terminal<TestBackend>, keys: &str) {
    for c in keys.chars() {
        let code = match c {
            '⏎' => KeyCode::Enter,
            '⎋' => KeyCode::Esc,
            '⇟' => KeyCode::PageDown,
            '\t' => KeyCode::Tab,
            c => KeyCode::Char(c),
        };
        app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
        draw(app, t);
    }
}

/// What a screen's snapshot must not hold from one run to the next: the
/// UTC times the messages list gives each message.
fn masked(s: &str) -> String {
    regex::Regex::new(r"\d\d:\d\d:\d\dZ ")
        .unwrap()
        .replace_all(s, "HH:MM:SSZ ")
        .into_owned()
}

/// `sources` opened at each size, `keys` typed: the screen must contain
/// every phrase in `must` (the phrase for its size when they differ) and
/// match its reviewed snapshot `<name>_<w>x<h>`.
fn case(name: &str, sources: &[Source], goto: Option<&str>, keys: &str, must: &[(&str, &str)]) {
    for (w, h) in SIZES {
        let (mut app, mut t) = open_at(sources, goto, w, h);
        typed(&mut app, &mut t, keys);
        let s = screen(&t);
        for (narrow, wide) in must {
            let phrase = if w == 80 { narrow } else { wide };
            assert!(s.contains(phrase), "{name} {w}x{h}: no {phrase:?} in\n{s}");
        }
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), masked(&s));
    }
}

#[test]
fn the_status_line_keeps_the_verdict_of_a_late_host_event() {
    case(
        "late_host_status",
        &dir("multinode"),
        Some("s29:15"),
        "1",
        &[
            (
                "s29:15 AllGather · cpu-late · late host node02 +21.9 ms",
                "late host node02 (4 ranks) +21.866 ms after every other host's last start",
            ),
            ("late host node02", "late host node02: all 4 of its ranks"),
        ],
    );
}

#[test]
fn an_unknown_goto_is_read_whole_in_the_messages() {
    case(
        "unknown_goto_messages",
        &file("megatron_tp8.sqlite"),
        Some("foo"),
        "!",
        &[("groups are s20", "groups are s20")],
    );
}

#[test]
fn lane_labels_on_many_hosts_keep_their_kind() {
    case(
        "multinode_lanes",
        &dir("multinode"),
        None,
        "",
        &[("NCCL", "S29 NCCL")],
    );
}

#[test]
fn skew_rows_are_one_line_each_on_per_rank_files() {
    case(
        "per_rank_skew",
        &dir("per_rank"),
        None,
        "]1",
        &[("start skew", "start skew")],
    );
}

#[test]
fn the_straggler_map_ruler_keeps_numbers_clear_of_marks() {
    case(
        "multinode_straggler_ruler",
        &dir("multinode"),
        None,
        "H",
        &[("node02", "node02")],
    );
}

#[test]
fn a_scrolled_details_panel_starts_at_a_line() {
    case(
        "details_scrolled",
        &file("megatron_tp8.sqlite"),
        Some("s20:55"),
        "125}",
        &[("details", "details")],
    );
}

#[test]
fn help_ends_with_the_glossary() {
    case(
        "help_glossary",
        &file("megatron_tp8.sqlite"),
        None,
        "?⇟⇟⇟⇟⇟⇟⇟⇟⇟⇟⇟⇟⇟⇟⇟⇟⇟⇟⇟⇟",
        &[("name tokens are", "name tokens are specialization hints")],
    );
}

#[test]
fn the_legend_explains_lane_labels() {
    case(
        "legend",
        &dir("multinode"),
        None,
        "L",
        &[("legend", "legend")],
    );
}

#[test]
fn the_big_event_list_names_the_late_host() {
    case(
        "multinode_big_list",
        &dir("multinode"),
        None,
        "b",
        &[("ms", "node02 ×4")],
    );
}

#[test]
fn the_finder_matches_a_host() {
    case(
        "finder_host",
        &dir("multinode"),
        None,
        "/node02",
        &[("node02 (host, 4", "node02 (host, 4 devices)")],
    );
}

#[test]
fn a_missing_rank_is_in_the_title_and_panel_4() {
    case(
        "per_rank_missing",
        &dir("per_rank"),
        None,
        "4",
        &[
            (
                "rank 4 of a world of 5",
                "⚠ rank 4 of a world of 5 has no file",
            ),
            (
                "MISSING: rank 4",
                "MISSING: rank 4 (no file; the world is 5",
            ),
        ],
    );
}

#[test]
fn g_on_a_utc_ruler_asks_for_a_wall_clock_time() {
    case(
        "goto_utc_prompt",
        &dir("multinode"),
        None,
        "ttg",
        &[("UTC: 07:59:50.5", "UTC: 07:59:50.5, +02:00 for a zone")],
    );
}

#[test]
fn n_is_advertised_and_works_in_a_focused_panel() {
    case(
        "focused_panel_n",
        &file("megatron_tp8.sqlite"),
        Some("s20:55"),
        "1pn",
        &[("instance 56/225", "instance 56/225")],
    );
}

#[test]
fn after_j_the_launch_panel_shows_the_launched_kernel() {
    case(
        "after_j_launch",
        &file("megatron_tp8.sqlite"),
        Some("s20:55"),
        "2J",
        &[("launched:", "the selected call launched:")],
    );
}

#[test]
fn the_demo_status_line_has_one_separator_after_its_banner() {
    for (w, h) in SIZES {
        let (mut app, mut t) = open_at(&file("megatron_tp8.sqlite"), None, w, h);
        app.set_banner("demo profile (embedded)");
        draw(&mut app, &mut t);
        let s = screen(&t);
        let status = s.lines().last().unwrap();
        assert!(
            status
                .trim_start()
                .starts_with("demo profile (embedded) │ "),
            "{status}"
        );
        assert!(!status.contains("│ │"), "{status}");
        insta::assert_snapshot!(format!("demo_status_{w}x{h}"), s);
    }
}

/// A capture without collectives does not advertise `]`.
#[test]
#[cfg_attr(no_real_profiles, ignore = "../shared/real-profiles is absent")]
fn a_capture_without_collectives_does_not_offer_big_events() {
    let f = common::real_profiles().join("nsys2024_6_fuser_matmul.sqlite");
    for (w, h) in SIZES {
        let (_, t) = open_at(&[Source::File(f.clone())], None, w, h);
        let s = screen(&t);
        assert!(!s.contains("next big event"), "{s}");
        insta::assert_snapshot!(format!("no_collectives_{w}x{h}"), s);
    }
}

/// Below 80×24 one centred line says the size needed.
#[test]
fn a_small_terminal_gets_one_line_saying_the_size_needed() {
    let (_, t) = open_at(&file("megatron_tp8.sqlite"), None, 60, 20);
    let s = screen(&t);
    let said: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(said.len(), 1, "{s}");
    assert!(said[0].contains("80×24"), "{s}");
    insta::assert_snapshot!("too_small_60x20", s);
}

/// A user keymap binding many keys to one action: help puts the keys on a
/// line of their own rather than running them into the description.
#[test]
fn help_keeps_a_long_key_list_apart_from_its_description() {
    let dir = common::temp_dir("whole_screens_keymap");
    let path: PathBuf = dir.join("keymap.toml");
    std::fs::write(
        &path,
        "[timeline]\npan_left = { keys = [\"Left\", \"a\", \"h\", \"ctrl-b\", \"alt-Left\", \"F2\"], desc = \"Pan left\" }\n",
    )
    .unwrap();
    for (w, h) in SIZES {
        let mut app = App::new(Keymap::load(Some(&path)).unwrap(), false);
        app.load_now(&file("megatron_tp8.sqlite"), None, &Settings::default());
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        draw(&mut app, &mut t);
        typed(&mut app, &mut t, "?");
        let s = screen(&t);
        let keys_row = s
            .lines()
            .position(|l| l.contains("← a h ctrl-b alt-← F2"))
            .unwrap_or_else(|| panic!("{s}"));
        let row = s.lines().nth(keys_row).unwrap();
        assert!(!row.contains("Pan left"), "{row}");
        assert!(
            s.lines().nth(keys_row + 1).unwrap().contains("Pan left"),
            "{s}"
        );
        // The keymap's path is read whole (wrapped), wherever the checkout is.
        let flat: String = s
            .lines()
            .map(|l| l.split('│').nth(1).unwrap_or("").trim())
            .collect();
        assert!(flat.contains(&path.display().to_string()), "{s}");
        // From the keys on: the rows above hold the checkout's path.
        let keys: String = s
            .lines()
            .skip(keys_row - 1)
            .map(|l| l.to_string() + "\n")
            .collect();
        insta::assert_snapshot!(format!("help_long_keys_{w}x{h}"), keys);
    }
}

/// Files whose clock data cannot be right are left out of cross-file
/// figures: the title warns of it at both sizes (it was the tail of the
/// clock words, the first thing dropped at 80 columns).
#[test]
fn files_left_out_on_their_clocks_are_warned_of_in_the_title() {
    let dir = common::temp_dir("whole_screens_left_out");
    let mut sources = Vec::new();
    for n in 0..4 {
        let f = format!("node{n}.sqlite");
        let dst = common::split::copy(
            &common::root().join("fixtures/multinode").join(&f),
            &dir,
            &f,
        );
        if n == 1 || n == 2 {
            rusqlite::Connection::open(&dst)
                .unwrap()
                .execute(
                    "UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = 0",
                    [],
                )
                .unwrap();
        }
        sources.push(Source::File(dst));
    }
    for (w, h) in SIZES {
        let (_, t) = open_at(&sources, None, w, h);
        let s = screen(&t);
        let title = s.lines().next().unwrap();
        assert!(
            title.contains("⚠ 2 files left out of cross-file figures (clocks)"),
            "{w}x{h}: {title}"
        );
    }
}

/// The stats view: the columns that do not fit are named, long names end
/// in `…`, the keys are said under the table.
#[test]
fn the_stats_view_names_what_does_not_fit() {
    case(
        "stats_view",
        &file("megatron_tp8.sqlite"),
        None,
        "S",
        &[
            (
                "min_ms, max_ms, stddev_ms: in a wider terminal",
                "stddev_ms name",
            ),
            ("total_ms↓", "total_ms↓"),
            // Short names, as on the lanes; K shows the demangled ones.
            ("(by short name)", "(by short name)"),
            (
                "ncclDevKernel_ReduceScatter_Sum_bf16…",
                "ncclDevKernel_AllGather_RING_LL ",
            ),
        ],
    );
}

/// The stats view filtered, sorted by count, on the NVTX table.
#[test]
fn the_stats_view_filtered_and_sorted() {
    case(
        "stats_view_nvtx_filtered",
        &file("megatron_tp8.sqlite"),
        None,
        "S\t\t/a⏎>",
        &[
            ("filter: a", "filter: a"),
            ("count↓", "count↓"),
            ("stats: nvtx", "backward"),
        ],
    );
}

/// The range panel: its `--window`, busy per row in view (the rows the
/// frame shows, once the panel took its share), what is inside.
#[test]
fn the_range_panel_says_its_window_and_what_is_in_it() {
    case(
        "range_panel",
        &file("megatron_tp8.sqlite"),
        None,
        "w,dddd.",
        &[
            (
                "--window 5.554716343 5.932653326",
                "--window 5.554716343 5.932653326",
            ),
            ("busy in the range", "kernels by time, wholly inside"),
            ("range end", "range end"),
        ],
    );
}

/// The NVTX tree view: ranges indented, kernels as leaves, the columns
/// named.
#[test]
fn the_nvtx_tree_view_reads_whole() {
    case(
        "nvtx_tree",
        &file("megatron_tp8.sqlite"),
        None,
        "T\t",
        &[
            ("gpu_ms", "gpu_ms"),
            ("train_step", "train_step"),
            ("↳", "↳ a kernel launched"),
        ],
    );
}

#[test]
fn the_skew_panel_gives_bytes_and_bandwidth() {
    case(
        "bandwidth_skew_panel",
        &file("payloads.sqlite"),
        Some("s20:2"),
        "1",
        &[
            ("32.0 MiB", "32.0 MiB"),
            ("algbw 60.1 GB/s", "busbw 45.1 GB/s"),
        ],
    );
}
