//! The pipeline runs the matching beside the stages that read no clock
//! (completeness, NCCL breakdown, overlap) when it may. Whatever ran
//! beside what, the results are those of the stages run one at a time:
//! the clocks first, then every other stage in order.

use rankline::analysis::pipeline::{self, Stage, Stages};
use rankline::analysis::{Settings, Window};
use rankline::profile::{LoadPlan, Profile};
use std::path::PathBuf;

fn load(names: &[&str]) -> Profile {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let files: Vec<PathBuf> = names.iter().map(|n| root.join(n)).collect();
    let out = rankline::profile::load(
        &rankline::profile::files(&files),
        &LoadPlan::default(),
        &mut |_, _, _| {},
    );
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    out.profile
}

/// The whole analysis as JSON: two runs agree only if every figure does.
fn both_ways(p: &Profile) -> (String, String) {
    let s = Settings::default();
    let at_once = pipeline::analyze(p, &s, &mut |_| {});
    let clocks = pipeline::run(p, &s, Window::ALL, Stages::of(&[Stage::Clock]), &mut |_| {});
    let one_by_one = pipeline::resume(p, &s, Window::ALL, clocks, Stages::all(), &mut |_| {});
    let json = |a| serde_json::to_string(a).expect("an analysis serializes");
    (json(&at_once), json(&one_by_one))
}

#[test]
fn one_file_gives_the_same_analysis_whichever_way_the_stages_ran() {
    let p = load(&["megatron_tp8.sqlite"]);
    let (at_once, one_by_one) = both_ways(&p);
    assert!(
        at_once.contains("\"overlap\":[{"),
        "the overlap was computed"
    );
    assert_eq!(at_once, one_by_one);
}

#[test]
fn several_clocks_give_the_same_analysis_whichever_way_the_stages_ran() {
    let p = load(&["two_node_a.sqlite", "two_node_b.sqlite"]);
    let (at_once, one_by_one) = both_ways(&p);
    assert_eq!(at_once, one_by_one);
}

/// The timeline's way: completeness first (its first frame), the rest
/// after; the capture's span is then on the aligned clocks all the same.
#[test]
fn completeness_measured_first_spans_the_capture_on_the_aligned_clocks() {
    let p = load(&["two_node_a.sqlite", "two_node_b.sqlite"]);
    let s = Settings::default();
    let first = Stages::of(&[Stage::Completeness]);
    let quick = pipeline::run(&p, &s, Window::ALL, first, &mut |_| {});
    let rest = pipeline::resume(&p, &s, Window::ALL, quick, Stages::all(), &mut |_| {});
    let clocks = pipeline::run(
        &p,
        &s,
        Window::ALL,
        Stages::of(&[Stage::Clock]),
        &mut |_| {},
    );
    let clocks_first = pipeline::resume(&p, &s, Window::ALL, clocks, Stages::all(), &mut |_| {});
    assert!(rest.completeness.span.is_some());
    assert_eq!(rest.completeness.span, clocks_first.completeness.span);
    let json = |a| serde_json::to_string(a).expect("an analysis serializes");
    assert_eq!(json(&rest), json(&clocks_first));
}
