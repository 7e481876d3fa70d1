//! Steps are numbered job-wide: step k is the same iteration on every
//! rank. `fixtures/staggered/` is one file per rank whose captures start
//! 0–5 collectives late, two collectives per `train_step` range: the rank
//! whose capture starts at instance 4 numbers its first range 2, as the
//! ranks that saw instances 1–4 do. Reports and screens take a kernel's
//! step from this one function (`Steps::of_kernel`).

mod common;
use common::*;
use rankline::profile::LoadPlan;
use serde_json::Value;

const PER_STEP: usize = 2;

fn truth() -> Value {
    let text = std::fs::read_to_string(root().join("fixtures/staggered.truth.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn every_ranks_kernel_of_instance_k_is_in_job_step_k_over_two() {
    let files: Vec<_> = sqlite_files(&root().join("fixtures/staggered"));
    let out = rankline::profile::load(
        &rankline::profile::files(&files),
        &LoadPlan::default(),
        &mut |_, _, _| {},
    );
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let p = &out.profile;
    let a = rankline::analysis::pipeline::analyze(p, &Default::default(), &mut |_| {});
    let t = truth();
    let late_starters: Vec<i64> = t["captured"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["first"].as_i64().unwrap() > PER_STEP as i64)
        .map(|c| c["rank"].as_i64().unwrap())
        .collect();
    assert!(
        !late_starters.is_empty(),
        "the fixture has ranks that start a step late"
    );
    let mut checked = 0;
    let mut wrong = Vec::new();
    for g in &a.matching.groups {
        for k in 0..g.instances() {
            for (d, row, (start, _)) in g.members(k) {
                let want = k / PER_STEP + 1;
                let got = a.steps.of_kernel(p, &a.clock, row, start).map(|s| s.0);
                checked += 1;
                // A capture that starts mid-step has no range for that
                // step's first kernel it saw: no step, never a wrong one.
                let mid_step_start = g.captured[d].first == k + 1 && k % PER_STEP != 0;
                if got != Some(want) && !(got.is_none() && mid_step_start) {
                    wrong.push(format!(
                        "{} instance {}: {} in step {got:?}, not {want}",
                        g.key,
                        k + 1,
                        p.device_label(g.devices[d]).tag()
                    ));
                }
            }
        }
    }
    assert!(checked > 60, "{checked}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
