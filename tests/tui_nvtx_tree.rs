//! `T`: the NVTX tree view shows `report nvtx-tree`'s ranges for the
//! thread, with the kernels launched directly in each as leaves; Enter
//! goes to a range or a kernel; Tab to the next thread.

mod common;

use common::tui::*;
use crossterm::event::KeyCode;
use rankline::tui::nvtx_view::TreeRow;
use rankline::tui::selection::EventRef;
use rankline::tui::state::Overlay;

#[test]
fn the_tree_is_the_reports_and_enter_goes_to_a_range_or_kernel() {
    let (mut app, mut t) = open_at(&[fixture("megatron_tp8.sqlite")], None, 160, 48);
    press(&mut app, &mut t, "T");
    assert!(matches!(app.overlay, Overlay::NvtxTree(_)));
    // D0's threads launched nothing (it has no GPU activity): Tab on to
    // a thread whose ranges launched kernels.
    for _ in 0..8 {
        let tree = app.nvtx_tree.as_ref().unwrap();
        if tree.rows.iter().any(|r| matches!(r, TreeRow::Kernel(..))) {
            break;
        }
        key(&mut app, &mut t, KeyCode::Tab);
    }
    let tree = app.nvtx_tree.clone().unwrap();
    let l = app.capture.data().unwrap();
    let p = &l.profile;
    let tid = p.threads[tree.thread].tid.to_string();
    let v = common::json(&[
        "report",
        "nvtx-tree",
        "--no-cache",
        "--format",
        "json",
        "--thread",
        &tid,
        "fixtures/megatron_tp8.sqlite",
    ]);
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
        app.capture.selection,
        Some(EventRef::Nvtx(tree.nodes[0].row))
    );
    // The first kernel leaf: its launch call is on the thread, in its range.
    press(&mut app, &mut t, "T");
    assert_eq!(
        app.nvtx_tree.as_ref().unwrap().thread,
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
    let Some(EventRef::Gpu(k)) = app.capture.selection else {
        panic!("{:?}", app.capture.selection)
    };
    let call = p.gpu.launch(k) as usize;
    assert_eq!(p.runtime.thread(call) as usize, tree.thread);
    // Tab: the next thread with ranges.
    press(&mut app, &mut t, "T");
    key(&mut app, &mut t, KeyCode::Tab);
    assert_ne!(app.nvtx_tree.as_ref().unwrap().thread, tree.thread);
}
