//! The timeline with `--baseline`: both captures load (the main one's first
//! frame first), `B` switches between them at the same offset from the same
//! step's start, and panel 6 shows the diff; Enter on its rows routes to
//! the kernel or the worst instance. On the whole app in TestBackend.

mod common;

use common::tui::{draw, fixture, open_at, open_with_baseline, press, rows, screen, worst};

use crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use rankline::analysis::Settings;
use rankline::profile::Source;
use rankline::tui::baseline::{BaselineMsg, load_pair};
use rankline::tui::data::LoadMsg;
use rankline::tui::keymap::Keymap;
use rankline::tui::panel::PanelKind;
use rankline::tui::state::{App, step_starts};
use rankline::tui::state::{EventRef, JumpSource};
use rankline::tui::timescale::View;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Margin;
use std::path::PathBuf;

/// The per-rank fixture: four exports, one capture.
fn per_rank() -> Vec<Source> {
    (0..4)
        .map(|r| fixture(&format!("per_rank/rank{r}.sqlite")))
        .collect()
}

/// `after` with `before` as its baseline, drawn once at w×h.
fn open(after: &[Source], before: &[Source], w: u16, h: u16) -> (App, Terminal<TestBackend>) {
    open_with_baseline(after, before, w, h)
}

fn shown_file(app: &App) -> String {
    let l = app.capture().data.as_ref().unwrap();
    l.profile.files[0]
        .path
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn the_main_capture_draws_before_the_baseline_loads() {
    let msgs = std::sync::Mutex::new(Vec::new());
    let opened = load_pair(
        &[fixture("megatron_tp8.sqlite")],
        &per_rank(),
        None,
        &Settings::default(),
        &|m| {
            let what = match m {
                LoadMsg::Done(_) => "main drawable",
                LoadMsg::Analysed(_) => "main analysed",
                LoadMsg::Baseline(BaselineMsg::Loaded(_)) => "baseline loaded",
                LoadMsg::Baseline(_) => "baseline stage",
                _ => return,
            };
            msgs.lock().unwrap().push(what)
        },
    );
    assert!(opened);
    let order = msgs.into_inner().unwrap();
    let at = |what| order.iter().position(|&m| m == what).unwrap();
    assert!(at("main drawable") < at("baseline stage"), "{order:?}");
    assert_eq!(order.iter().filter(|&&m| m == "baseline loaded").count(), 1);
    assert!(order.contains(&"main analysed"), "{order:?}");
}

#[test]
fn b_switches_capture_at_the_same_offset_from_the_same_step() {
    let (mut app, mut t) = open(&[fixture("megatron_tp8.sqlite")], &per_rank(), 160, 48);
    assert_eq!(shown_file(&app), "megatron_tp8.sqlite");
    let main_steps = step_starts(app.capture().data.as_ref().unwrap());
    let base_steps = step_starts(app.baseline().unwrap().other().unwrap());
    assert!(main_steps.len() >= 3 && base_steps.len() >= 3);
    // The captures' steps start at different times: a plain time offset
    // would not land on the same step.
    assert_ne!(main_steps[2] - main_steps[0], base_steps[2] - base_steps[0]);
    // A 20 ms window starting 1.5 ms into step 3.
    app.set_view(View {
        t0: main_steps[2] as f64 + 1.5e6,
        span: 20e6,
    });
    press(&mut app, &mut t, "B");
    assert!(app.baseline().unwrap().shown);
    assert_eq!(shown_file(&app), "rank0.sqlite");
    assert!(
        (app.capture().view.t0 - (base_steps[2] as f64 + 1.5e6)).abs() < 1.0,
        "{}",
        app.capture().view.t0
    );
    assert_eq!(app.capture().view.span, 20e6);
    let s = screen(&t);
    assert!(s.contains("B: the baseline, step 3"), "{s}");
    assert!(s.lines().next().unwrap().contains("BASELINE"), "{s}");
    // Moved within the baseline, then back: the same offset in the main one.
    app.set_view(View {
        t0: base_steps[1] as f64 + 0.25e6,
        ..app.capture().view
    });
    press(&mut app, &mut t, "B");
    assert!(!app.baseline().unwrap().shown);
    assert_eq!(shown_file(&app), "megatron_tp8.sqlite");
    assert!((app.capture().view.t0 - (main_steps[1] as f64 + 0.25e6)).abs() < 1.0);
    let s = screen(&t);
    assert!(s.contains("B: the main capture, step 2"), "{s}");
    assert!(!s.lines().next().unwrap().contains("BASELINE"), "{s}");
}

#[test]
fn b_keeps_each_captures_selection_for_when_it_comes_back() {
    let (mut app, mut t) = open(&[fixture("megatron_tp8.sqlite")], &per_rank(), 160, 48);
    press(&mut app, &mut t, "]");
    let (selected, instance) = (app.capture().selection, app.capture().instance());
    assert!(instance.is_some());
    press(&mut app, &mut t, "B");
    // Events are numbered per capture: nothing selected in the other one.
    assert_eq!(
        (app.capture().selection, app.capture().instance()),
        (None, None)
    );
    press(&mut app, &mut t, "B");
    assert_eq!(
        (app.capture().selection, app.capture().instance()),
        (selected, instance)
    );
}

#[test]
fn b_without_a_baseline_says_how_to_get_one() {
    let (mut app, mut t) = open_at(&[fixture("megatron_tp8.sqlite")], None, 160, 48);
    let before = app.capture().view;
    press(&mut app, &mut t, "B");
    assert_eq!(app.capture().view, before);
    let s = screen(&t);
    assert!(
        s.contains("no baseline to switch to: start with rankline AFTER... --baseline BEFORE"),
        "{s}"
    );
}

#[test]
fn b_while_the_baseline_loads_says_so() {
    let msgs = std::sync::Mutex::new(Vec::new());
    load_pair(
        &[fixture("megatron_tp8.sqlite")],
        &per_rank(),
        None,
        &Settings::default(),
        &|m| msgs.lock().unwrap().push(m),
    );
    let mut app = App::new(Keymap::default_keymap(), false);
    app.expect_baseline();
    for m in msgs.into_inner().unwrap() {
        if matches!(m, LoadMsg::Baseline(BaselineMsg::Loaded(_))) {
            break;
        }
        app.on_load(m);
    }
    let mut t = Terminal::new(TestBackend::new(160, 48)).unwrap();
    draw(&mut app, &mut t);
    press(&mut app, &mut t, "B");
    assert!(!app.baseline().unwrap().shown);
    assert!(
        screen(&t).contains("the baseline is still loading"),
        "{}",
        screen(&t)
    );
}

/// Panel 6's box as drawn (border included), one string per row.
fn diff_panel(app: &App, t: &Terminal<TestBackend>) -> String {
    let p = app
        .chrome()
        .layout
        .panels
        .iter()
        .find(|p| p.kind == Some(PanelKind::Diff))
        .expect("panel 6 drawn");
    let outer = p.inner.outer(Margin::new(1, 1));
    rows(t, outer)
        .iter()
        .map(|r| r.trim_end().to_string() + "\n")
        .collect()
}

/// Clicks panel 6's first row that starts with `text` (a click acts as
/// Enter on the row).
fn click_diff_row(app: &mut App, t: &mut Terminal<TestBackend>, text: &str) {
    let inner = app
        .chrome()
        .layout
        .panels
        .iter()
        .find(|p| p.kind == Some(PanelKind::Diff))
        .expect("panel 6 drawn")
        .inner;
    let y = rows(t, inner)
        .iter()
        .position(|r| r.starts_with(text))
        .unwrap_or_else(|| panic!("no row {text}:\n{}", screen(t))) as u16;
    app.on_mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: inner.x + 1,
        row: inner.y + y,
        modifiers: KeyModifiers::NONE,
    });
    draw(app, t);
}

/// Megatron, then the same job with its late ranks on time.
fn no_big_skew() -> (App, Terminal<TestBackend>) {
    open(
        &[fixture("diff/no_big_skew.sqlite")],
        &[fixture("megatron_tp8.sqlite")],
        160,
        48,
    )
}

#[test]
fn panel_6_shows_steps_kernels_and_skew_excess() {
    let (mut app, mut t) = no_big_skew();
    press(&mut app, &mut t, "6");
    let panel = diff_panel(&app, &t);
    // The figures are the generator's truth, as the panel rounds them.
    let truth: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/diff/no_big_skew.truth.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let gather = truth["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "ncclDevKernel_AllGather_RING_LL")
        .unwrap();
    let row = |name: &str| {
        panel
            .lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("{name}: {panel}"))
            .to_string()
    };
    let cells = |name: &str| -> Vec<String> {
        row(name)
            .trim_matches('│')
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    let ms = |v: &serde_json::Value| format!("{:.3}", v.as_f64().unwrap());
    let g = cells("ncclDevKernel_AllGather");
    assert_eq!(g[1..3], [ms(&gather["before_ms"]), ms(&gather["after_ms"])]);
    // s20 became s21 (stream renumbered): paired by its op sequence.
    let excess = |side: &str, key: &str| {
        let groups = truth[side]["skew"]["groups"].as_array().unwrap();
        ms(&groups.iter().find(|g| g["key"] == key).unwrap()["excess_ms"])
    };
    let s = cells("s20→s21");
    assert_eq!(s[1..3], [excess("before", "s20"), excess("after", "s21")]);
    insta::assert_snapshot!("diff_panel_160x48", panel);
}

/// Panel 6's exposed NCCL row holds `rankline diff --format json`'s
/// figures, rounded as the panel rounds; where exposed NCCL grew past the
/// before capture's step spread with the step p50 unchanged (the late
/// ranks put back), one line says why the steps did not show it.
#[test]
fn panel_6_shows_exposed_nccl_as_the_diff_gate_computes_it() {
    let why = rankline::analysis::diff::STEPS_MISS_GPU_WAITS;
    for (before, after, explained) in [
        ("megatron_tp8.sqlite", "diff/slow_gemm.sqlite", false),
        ("diff/no_big_skew.sqlite", "megatron_tp8.sqlite", true),
    ] {
        let (mut app, mut t) = open(&[fixture(after)], &[fixture(before)], 160, 48);
        press(&mut app, &mut t, "6");
        let panel = diff_panel(&app, &t);
        let path = |f: &str| format!("fixtures/{f}");
        let d = common::json(&["diff", &path(before), &path(after), "--format", "json"]);
        let e = &d["exposed_nccl"];
        assert_eq!(e["per"], "step");
        let (b, a) = (
            e["before_ms"].as_f64().unwrap(),
            e["after_ms"].as_f64().unwrap(),
        );
        let row = panel
            .lines()
            .find(|l| l.contains("exposed NCCL/step"))
            .unwrap_or_else(|| panic!("{panel}"));
        let cells: Vec<&str> = row.trim_matches('│').split_whitespace().collect();
        let pct = e["delta_pct"].as_f64().unwrap();
        assert_eq!(
            cells[cells.len() - 4..],
            [
                format!("{b:.3}"),
                format!("{a:.3}"),
                format!("{:+.3}", a - b),
                format!("{pct:+.1}%")
            ],
            "{before} -> {after}: {panel}"
        );
        // The line as the panel wraps it, borders dropped.
        let words: Vec<&str> = panel
            .lines()
            .flat_map(|l| l.trim_matches('│').split_whitespace())
            .collect();
        let said = words.join(" ").matches(why).count();
        assert_eq!(said, usize::from(explained), "{before} -> {after}: {panel}");
    }
}

#[test]
fn panel_6_at_80x24_fits_below_the_timeline() {
    let (mut app, mut t) = open(
        &[fixture("diff/no_big_skew.sqlite")],
        &[fixture("megatron_tp8.sqlite")],
        80,
        24,
    );
    press(&mut app, &mut t, "6");
    insta::assert_snapshot!("diff_panel_80x24", diff_panel(&app, &t));
}

#[test]
fn panel_6_without_a_baseline_says_how_to_get_one() {
    let (mut app, mut t) = open_at(&[fixture("megatron_tp8.sqlite")], None, 160, 48);
    press(&mut app, &mut t, "6");
    let panel = diff_panel(&app, &t);
    assert!(
        panel.contains("rankline AFTER... --baseline BEFORE"),
        "{panel}"
    );
}

#[test]
fn enter_on_a_skew_row_selects_the_groups_worst_instance_in_the_shown_capture() {
    let (mut app, mut t) = no_big_skew();
    press(&mut app, &mut t, "6");
    click_diff_row(&mut app, &mut t, "s20→s21");
    let l = app.capture().data.clone().unwrap();
    let g = l.analysis.matching.group("s21").expect("s21 after");
    assert_eq!(app.capture().instance(), Some((g, worst(&app, g))));
    assert_eq!(app.capture().jump, Some(JumpSource::Group(g)));
    // In the baseline the same row is s20, whose worst is s20:145 (the
    // fixture's truth: late D4 +46.6 ms).
    press(&mut app, &mut t, "B");
    click_diff_row(&mut app, &mut t, "s20→s21");
    let l = app.capture().data.clone().unwrap();
    let g = l.analysis.matching.group("s20").expect("s20 before");
    assert_eq!(app.capture().instance(), Some((g, 144)));
    assert!(
        screen(&t).contains("s20 · instance 145/225"),
        "{}",
        screen(&t)
    );
}

#[test]
fn enter_on_a_kernel_row_finds_that_kernel() {
    let (mut app, mut t) = open(
        &[fixture("diff/slow_gemm.sqlite")],
        &[fixture("megatron_tp8.sqlite")],
        160,
        48,
    );
    press(&mut app, &mut t, "6");
    let gemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas";
    // The slower GEMM is the largest change: the first kernel row.
    click_diff_row(&mut app, &mut t, "sm90_xmma_gemm");
    let l = app.capture().data.clone().unwrap();
    let Some(EventRef::Gpu(r)) = app.capture().selection else {
        panic!("{:?}", app.capture().selection)
    };
    assert_eq!(l.profile.strings.get(l.profile.gpu.name(r)), gemm);
    // Found as the finder finds it: n/N step through its occurrences.
    match &app.capture().jump {
        Some(JumpSource::Finder { label, events }) => {
            assert!(label.starts_with(gemm), "{label}");
            assert!(events.len() > 1);
        }
        other => panic!("{other:?}"),
    }
    let n = match &app.capture().jump {
        Some(JumpSource::Finder { events, .. }) => events.len(),
        _ => 0,
    };
    assert_eq!(app.finder_hit(), Some((1, n)));
}

#[test]
fn enter_on_a_kernel_only_in_the_other_capture_says_so() {
    let (mut app, mut t) = open(&[fixture("megatron_tp8.sqlite")], &per_rank(), 160, 48);
    press(&mut app, &mut t, "6");
    let before = app.capture().selection;
    click_diff_row(&mut app, &mut t, "ncclDevKernel_Broadcast");
    assert_eq!(app.capture().selection, before);
    assert!(
        screen(&t).contains("no kernel ncclDevKernel_Broadcast"),
        "{}",
        screen(&t)
    );
}

#[test]
fn baseline_without_the_capture_to_compare_is_a_usage_error() {
    let o = common::rankline(&["--baseline", "fixtures/megatron_tp8.sqlite"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        common::stderr(&o),
        "rankline: --baseline BEFORE needs the capture to compare: rankline AFTER... --baseline BEFORE\n"
    );
}

/// The rows of the stats table shown, as (name, total, count).
fn stats_rows(app: &App) -> Vec<(String, i64, usize)> {
    let l = app.capture().data.as_ref().unwrap();
    let t = app.stats_table().expect("a stats table");
    t.rows
        .iter()
        .map(|r| {
            (
                r.label(&l.profile.strings).into_owned(),
                r.total_ns,
                r.count,
            )
        })
        .collect()
}

/// The NVTX tree shown, as (thread, row count).
fn tree_of(app: &App) -> (usize, usize) {
    let tree = app.capture().nvtx_tree_now().expect("an NVTX tree");
    (tree.thread, tree.rows.len())
}

/// After `B` every view derived from a capture is the baseline's: its
/// stats table and NVTX tree equal the baseline's opened alone (never the
/// main capture's under the baseline's name), and the main capture's
/// bookmarks stay with it.
#[test]
fn after_b_the_stats_table_tree_and_bookmarks_are_the_shown_captures() {
    use crossterm::event::KeyCode;
    let main = [fixture("diff/slow_gemm.sqlite")];
    let base = [fixture("megatron_tp8.sqlite")];
    let (mut app, mut t) = open(&main, &base, 160, 48);
    press(&mut app, &mut t, "S");
    let main_stats = stats_rows(&app);
    common::tui::key(&mut app, &mut t, KeyCode::Esc);
    press(&mut app, &mut t, "T");
    let main_tree = tree_of(&app);
    common::tui::key(&mut app, &mut t, KeyCode::Esc);
    app.set_bookmarks(vec![rankline::profile::bookmarks::Bookmark {
        name: "main only".into(),
        group: None,
        instance: None,
        window_ns: [0, 1],
        created: String::new(),
    }]);

    press(&mut app, &mut t, "B");
    assert_eq!(shown_file(&app), "megatron_tp8.sqlite");
    let (mut alone, mut t2) = open_at(&base, None, 160, 48);
    press(&mut app, &mut t, "S");
    press(&mut alone, &mut t2, "S");
    assert_eq!(stats_rows(&app), stats_rows(&alone));
    assert_ne!(stats_rows(&app), main_stats);
    assert!(
        screen(&t).contains("BASELINE") || screen(&t).contains("baseline"),
        "{}",
        screen(&t)
    );
    common::tui::key(&mut app, &mut t, KeyCode::Esc);
    common::tui::key(&mut alone, &mut t2, KeyCode::Esc);
    press(&mut app, &mut t, "T");
    press(&mut alone, &mut t2, "T");
    assert_eq!(tree_of(&app), tree_of(&alone));
    common::tui::key(&mut app, &mut t, KeyCode::Esc);
    // the baseline has not read its bookmarks: not the main capture's
    assert!(
        app.capture().bookmarks.is_none(),
        "{:?}",
        app.capture().bookmarks
    );

    press(&mut app, &mut t, "B");
    assert_eq!(shown_file(&app), "slow_gemm.sqlite");
    assert_eq!(app.capture().bookmarks.as_ref().map(Vec::len), Some(1));
    press(&mut app, &mut t, "S");
    assert_eq!(stats_rows(&app), main_stats);
    common::tui::key(&mut app, &mut t, KeyCode::Esc);
    press(&mut app, &mut t, "T");
    assert_eq!(tree_of(&app), main_tree);
}

/// The finder's hits belong to the capture shown: typed after `B`, they
/// are the baseline's, as in the baseline opened alone.
#[test]
fn after_b_the_finder_searches_the_shown_capture() {
    use crossterm::event::KeyCode;
    let main = [fixture("why.sqlite")];
    let base = [fixture("megatron_tp8.sqlite")];
    let (mut app, mut t) = open(&main, &base, 160, 48);
    press(&mut app, &mut t, "/flash");
    let main_screen = screen(&t);
    common::tui::key(&mut app, &mut t, KeyCode::Esc);
    press(&mut app, &mut t, "B/flash");
    let (mut alone, mut t2) = open_at(&base, None, 160, 48);
    press(&mut alone, &mut t2, "/flash");
    // The hit rows: `   12× name (kernel)`.
    let row = regex::Regex::new(r"^\s*\d+× ").unwrap();
    let hits = |s: &str| -> Vec<String> {
        s.lines()
            .filter_map(|l| l.split('│').nth(1))
            .filter(|c| row.is_match(c))
            .map(|c| c.trim().to_string())
            .collect()
    };
    assert!(!hits(&screen(&t2)).is_empty(), "{}", screen(&t2));
    assert_eq!(hits(&screen(&t)), hits(&screen(&t2)));
    assert_ne!(hits(&main_screen), hits(&screen(&t2)), "{main_screen}");
}

/// The overlap panel's window is derived off the UI thread: a job started
/// on the main capture and ending after `B` goes to the main capture, and
/// the baseline's panel shows the baseline's own figures, as the baseline
/// opened alone does, once its own job ends ("computing…" until then).
#[test]
fn after_b_a_window_overlap_job_ends_in_the_capture_that_asked() {
    let main = [fixture("diff/slow_gemm.sqlite")];
    let base = [fixture("megatron_tp8.sqlite")];
    let (mut app, mut t) = open(&main, &base, 160, 48);
    app.apply(rankline::tui::action::Action::PanelOverlap);
    app.derive();
    let main_job = app.next_derive_job().expect("the main capture's job");
    let main_key = app.capture().window_key();
    // `B` before the main capture's job ends.
    app.apply(rankline::tui::action::Action::SwitchCapture);
    assert_eq!(shown_file(&app), "megatron_tp8.sqlite");
    app.on_derived(main_job.run());
    assert!(
        app.capture().window_overlap().is_none(),
        "the main capture's figures are not the baseline's"
    );
    let other = &app.baseline().unwrap().other;
    assert_eq!(other.window_key(), main_key);
    assert!(other.window_overlap().is_some(), "kept by the main capture");
    // The baseline's own job, asked for when the main's ended.
    while let Some(job) = app.next_derive_job() {
        app.on_derived(job.run());
    }
    draw(&mut app, &mut t);
    let (mut alone, mut t2) = open_at(&base, None, 160, 48);
    alone.apply(rankline::tui::action::Action::PanelOverlap);
    draw(&mut alone, &mut t2);
    let panel = |s: String| -> Vec<String> {
        s.lines()
            .skip_while(|l| !l.contains("visible window, ms"))
            .take(10)
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        app.capture().window_overlap(),
        alone.capture().window_overlap()
    );
    assert!(!panel(screen(&t)).is_empty(), "{}", screen(&t));
    assert_eq!(panel(screen(&t)), panel(screen(&t2)));
}

/// Every view opened on the baseline after `B` shows what it shows on the
/// baseline opened alone: the same screen, but the title, which names the
/// pair. Both are first fitted to the whole capture (`B` keeps the offset
/// from the step's start, not the window).
#[test]
fn after_b_every_view_is_the_baseline_alone_s() {
    use crossterm::event::KeyCode;
    let main = [fixture("diff/slow_gemm.sqlite")];
    let base = [fixture("megatron_tp8.sqlite")];
    for keys in [
        "S", "T", "b", "W", "H", "P", "1", "2", "3", "4", "5", "/flash", "]5",
    ] {
        let (mut app, mut t) = open(&main, &base, 160, 48);
        press(&mut app, &mut t, "3S");
        common::tui::key(&mut app, &mut t, KeyCode::Esc);
        press(&mut app, &mut t, "3Bf");
        press(&mut app, &mut t, keys);
        let (mut alone, mut t2) = open_at(&base, None, 160, 48);
        press(&mut alone, &mut t2, "f");
        press(&mut alone, &mut t2, keys);
        let body = |s: String| -> Vec<String> { s.lines().skip(1).map(str::to_string).collect() };
        let (paired, single) = (body(screen(&t)), body(screen(&t2)));
        let differ: Vec<String> = paired
            .iter()
            .zip(&single)
            .filter(|(a, b)| a != b)
            .map(|(a, b)| format!("pair:  {a}\nalone: {b}"))
            .collect();
        assert!(differ.is_empty(), "{keys}: {}", differ.join("\n"));
    }
}
