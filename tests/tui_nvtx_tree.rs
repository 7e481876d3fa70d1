//! `T`: the NVTX tree view shows `report nvtx-tree`'s ranges for the
//! thread, with the kernels launched directly in each as leaves; Enter
//! zooms the timeline to a range or a kernel on its lane; Tab to the next
//! thread.

mod common;

use common::tui::*;
use crossterm::event::KeyCode;
use rankline::tui::lanes::LaneKind;
use rankline::tui::nvtx_view::TreeRow;
use rankline::tui::selection::EventRef;
use rankline::tui::state::Overlay;

#[test]
fn the_tree_is_the_reports_and_enter_goes_to_a_range_or_kernel() {
    let (mut app, mut t) = open_at(&[fixture("megatron_tp8.sqlite")], None, 160, 48);
    let tree = tree_with_kernels(&mut app, &mut t);
    assert!(matches!(app.chrome().overlay, Overlay::NvtxTree(_)));
    let l = app.capture().data().unwrap();
    let p = &l.profile;
    let v = reported_tree(&p.threads[tree.thread].tid.to_string());
    let want: Vec<(String, u64, f64)> = common::nvtx_ranges(&v)
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["kernels"].as_u64().unwrap(),
                r["gpu_ms"].as_f64().unwrap(),
            )
        })
        .collect();
    let got: Vec<(String, u64, f64)> = tree
        .nodes
        .iter()
        .map(|n| {
            (
                p.strings.get(p.nvtx.name(n.row)).to_string(),
                n.kernels.len() as u64,
                n.gpu_ns as f64 / 1e6,
            )
        })
        .collect();
    assert_eq!(got, want);
    // Leaves: every kernel of a range is a leaf of it or of a range in it.
    let leaves = tree
        .rows
        .iter()
        .filter(|r| matches!(r, TreeRow::Kernel(..)))
        .count();
    let tops: usize = tree
        .nodes
        .iter()
        .filter(|n| n.level == 0)
        .map(|n| n.kernels.len())
        .sum();
    assert_eq!(leaves, tops);
    assert!(screen(&t).contains("train_step"), "{}", screen(&t));
    // Enter on the first range: selected on the timeline.
    key(&mut app, &mut t, KeyCode::Enter);
    assert_eq!(
        app.capture().selection,
        Some(EventRef::Nvtx(tree.nodes[0].row))
    );
    // The first kernel leaf: its launch call is on the thread, in its range.
    press(&mut app, &mut t, "T");
    assert_eq!(
        app.capture().nvtx_tree_now().unwrap().thread,
        tree.thread,
        "the same thread again"
    );
    let at = tree
        .rows
        .iter()
        .position(|r| matches!(r, TreeRow::Kernel(..)))
        .unwrap();
    for _ in 0..at {
        key(&mut app, &mut t, KeyCode::Down);
    }
    key(&mut app, &mut t, KeyCode::Enter);
    let Some(EventRef::Gpu(k)) = app.capture().selection else {
        panic!("{:?}", app.capture().selection)
    };
    let call = p.gpu.launch(k) as usize;
    assert_eq!(p.runtime.thread(call) as usize, tree.thread);
    // Tab: the next thread with ranges.
    press(&mut app, &mut t, "T");
    key(&mut app, &mut t, KeyCode::Tab);
    assert_ne!(app.capture().nvtx_tree_now().unwrap().thread, tree.thread);
}

/// `report nvtx-tree --thread TID` of the fixture, as JSON.
fn reported_tree(tid: &str) -> serde_json::Value {
    common::json(&[
        "report",
        "nvtx-tree",
        "--no-cache",
        "--format",
        "json",
        "--thread",
        tid,
        "fixtures/megatron_tp8.sqlite",
    ])
}

/// Opens `T` and tabs on to the first thread whose ranges launched
/// kernels (D0's threads launched nothing: it has no GPU activity).
fn tree_with_kernels(
    app: &mut rankline::tui::state::App,
    t: &mut ratatui::Terminal<ratatui::backend::TestBackend>,
) -> rankline::tui::nvtx_view::NvtxTree {
    press(app, t, "T");
    for _ in 0..8 {
        let tree = app.capture().nvtx_tree_now().unwrap();
        if tree.rows.iter().any(|r| matches!(r, TreeRow::Kernel(..))) {
            break;
        }
        key(app, t, KeyCode::Tab);
    }
    app.capture().nvtx_tree_now().cloned().unwrap()
}

/// The window shows `[start, end)` whole and is zoomed to it (no more
/// than twice as long), as `z` shows a selection.
fn zoomed_to(app: &rankline::tui::state::App, start: i64, end: i64, what: &str) {
    let v = app.capture().view;
    let len = (end - start) as f64;
    assert!(
        v.t0 <= start as f64 && v.t0 + v.span >= end as f64 && v.span <= 2.0 * len,
        "{what} [{start}, {end}) in the window {:.0}+{:.0}",
        v.t0,
        v.span
    );
}

#[test]
fn enter_zooms_the_timeline_to_the_range_or_kernel_on_its_lane() {
    let (mut app, mut t) = open_at(&[fixture("megatron_tp8.sqlite")], None, 160, 48);
    let tree = tree_with_kernels(&mut app, &mut t);
    let l = app.capture().data().unwrap();
    let p = &l.profile;
    // The ranges' spans as `report nvtx-tree` gives them, in the tree's
    // order: the second step's `forward` (not the first row).
    let v = reported_tree(&p.threads[tree.thread].tid.to_string());
    let ranges = common::nvtx_ranges(&v);
    let i = ranges
        .iter()
        .enumerate()
        .filter(|(_, r)| r["name"] == "forward")
        .nth(1)
        .unwrap()
        .0;
    let (start, end) = (
        ranges[i]["start_ns"].as_i64().unwrap(),
        ranges[i]["end_ns"].as_i64().unwrap(),
    );
    let row = tree
        .rows
        .iter()
        .position(|r| *r == TreeRow::Range(i))
        .unwrap();
    for _ in 0..row {
        key(&mut app, &mut t, KeyCode::Down);
    }
    key(&mut app, &mut t, KeyCode::Enter);
    assert_eq!(app.chrome().overlay, Overlay::None);
    assert_eq!(
        app.capture().selection,
        Some(EventRef::Nvtx(tree.nodes[i].row))
    );
    zoomed_to(&app, start, end, "forward");
    // The cursor on the range's lane: its thread's NVTX row at its depth.
    let LaneKind::Nvtx(track) = app.capture().lanes.at_cursor().unwrap().kind else {
        panic!("{:?}", app.capture().lanes.at_cursor())
    };
    let track = &l.index.nvtx_tracks[track];
    assert_eq!(track.thread as usize, tree.thread);
    assert_eq!(track.depth, Some(tree.nodes[i].level as u16));
    // A kernel leaf that is not a collective: zoomed to the kernel.
    press(&mut app, &mut t, "T");
    let (at, k) = tree
        .rows
        .iter()
        .enumerate()
        .find_map(|(at, r)| match *r {
            TreeRow::Kernel(k, _) if l.analysis.matching.instance_of(k).is_none() => Some((at, k)),
            _ => None,
        })
        .unwrap();
    for _ in 0..at {
        key(&mut app, &mut t, KeyCode::Down);
    }
    key(&mut app, &mut t, KeyCode::Enter);
    assert_eq!(app.capture().selection, Some(EventRef::Gpu(k)));
    let (ks, ke) = l.analysis.clock.gpu_span(p, k);
    zoomed_to(&app, ks, ke, "the kernel");
    // Back: where the tree's Enter left.
    key(&mut app, &mut t, KeyCode::Backspace);
    assert_eq!(
        app.capture().selection,
        Some(EventRef::Nvtx(tree.nodes[i].row))
    );
}

/// The tree's rows inside its frame, as drawn.
fn tree_rows(t: &ratatui::Terminal<ratatui::backend::TestBackend>) -> Vec<String> {
    let s = screen(t);
    let lines: Vec<Vec<char>> = s.lines().map(|l| l.chars().collect()).collect();
    let top = lines
        .iter()
        .position(|l| l.iter().collect::<String>().contains("┌ NVTX tree"))
        .expect("the tree is open");
    let left = lines[top].iter().position(|&c| c == '┌').unwrap();
    lines[top + 1..]
        .iter()
        .take_while(|l| l.get(left) == Some(&'│'))
        .map(|l| l[left + 1..].iter().collect::<String>())
        .map(|l| l.rsplit_once('│').map_or(l.clone(), |(a, _)| a.to_string()))
        .collect()
}

/// A kernel leaf cannot unfold: it is marked as launched in the range
/// above (`↳`), never with the fold marks `▸ ▾` the lanes use for rows
/// that fold; the tree's ranges carry none either (the tree does not
/// fold).
#[test]
fn kernel_leaves_carry_no_fold_mark() {
    for (w, h) in [(160, 48), (80, 24)] {
        let (mut app, mut t) = open_at(&[fixture("megatron_tp8.sqlite")], None, w, h);
        let tree = tree_with_kernels(&mut app, &mut t);
        let Overlay::NvtxTree(pick) = app.chrome().overlay else {
            panic!("{:?}", app.chrome().overlay)
        };
        let rows = tree_rows(&t);
        // Each leaf in view is drawn with its mark, and only leaves are.
        let shown = &tree.rows[pick.scroll.top..pick.scroll.top + pick.scroll.visible];
        let leaves = shown
            .iter()
            .filter(|r| matches!(r, TreeRow::Kernel(..)))
            .count();
        let marked = rows
            .iter()
            .filter(|r| r.contains("↳ ") && !r.contains("launched in"))
            .count();
        assert!(leaves > 0, "{rows:#?}");
        assert_eq!(marked, leaves, "{w}x{h}: {rows:#?}");
        let marks: Vec<&String> = rows.iter().filter(|r| r.contains(['▸', '▾'])).collect();
        assert!(marks.is_empty(), "{w}x{h}: {marks:#?}");
        assert!(
            rows.iter()
                .any(|r| r.contains("↳ a kernel launched in the range above")),
            "{rows:#?}"
        );
    }
}

/// The tree is built off the UI thread: `T` asks for one job and the view
/// says so until it ends; `Tab` asks for the next thread's, and the tree
/// kept is never shown as the next thread's.
#[test]
fn the_tree_is_built_off_the_key_and_shown_when_ready() {
    use rankline::tui::action::Action;
    let (mut app, mut t) = open_at(&[fixture("megatron_tp8.sqlite")], None, 160, 48);
    app.apply(Action::NvtxTree);
    assert!(matches!(app.chrome().overlay, Overlay::NvtxTree(_)));
    let job = app.next_derive_job().expect("the tree's job");
    t.draw(|f| rankline::tui::ui::draw(f, &mut app)).unwrap();
    assert!(
        screen(&t).contains("computing the NVTX tree…"),
        "{}",
        screen(&t)
    );
    app.on_derived(job.run());
    let first = app.capture().nvtx_tree_now().expect("its tree").thread;
    app.apply(Action::NextThread);
    assert!(
        app.capture().nvtx_tree_now().is_none(),
        "not the first thread's tree"
    );
    let job = app.next_derive_job().expect("the next thread's job");
    app.on_derived(job.run());
    assert_ne!(
        app.capture().nvtx_tree_now().expect("its tree").thread,
        first
    );
}
