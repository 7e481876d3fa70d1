//! N of busbw on a capture missing a rank: the communicator size NCCL's
//! init payload records when there is one, else the captured ranks — and
//! either way the report's text, its JSON and the skew panel say which N
//! and why, once per group. A rank is taken out by deleting one device's
//! kernels from a copy of a bundled fixture.

mod common;
use common::tui::{open_at, panel_area, press, rows};
use common::*;
use rankline::analysis::bandwidth_n::source;
use rankline::analysis::matching::RanksFrom;
use rankline::profile::Source;
use rankline::tui::panel::PanelKind;
use rusqlite::Connection;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `fixture` copied into the test's directory without device `device`'s
/// kernels (its CUDA context, copies and CPU side stay).
fn without_kernels_of(test: &str, fixture: &str, device: u32) -> PathBuf {
    let to = temp_dir(test).join(Path::new(fixture).file_name().unwrap());
    std::fs::copy(root().join(fixture), &to).unwrap();
    Connection::open(&to)
        .unwrap()
        .execute(
            "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = ?1",
            [device],
        )
        .unwrap();
    to
}

/// `report nccl`'s per-group N of `input`, by group key.
fn groups(input: &Path) -> Vec<Value> {
    let v = json_on(
        &["report", "nccl", "--format", "json"],
        &[input.to_path_buf()],
    );
    v["bandwidth"]["groups"].as_array().unwrap().clone()
}

fn group<'a>(groups: &'a [Value], key: &str) -> &'a Value {
    groups
        .iter()
        .find(|g| g["group"] == key)
        .unwrap_or_else(|| panic!("no group {key} in {groups:?}"))
}

/// Text with its line breaks and indents folded to single spaces.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The skew panel's text at instance `at` of `input`.
fn skew_panel(input: &Path, at: &str) -> String {
    let (mut app, mut t) = open_at(&[Source::File(input.to_path_buf())], Some(at), 160, 48);
    press(&mut app, &mut t, "1");
    flat(&rows(&t, panel_area(&app, PanelKind::Skew).inner).join("\n"))
}

#[test]
fn a_communicator_of_known_size_missing_a_rank_keeps_nccls_n_and_says_so() {
    // The job's data-parallel communicator, as the generator made it.
    let truth: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("fixtures/jobs/moe_ep_payloads.truth.json")).unwrap(),
    )
    .unwrap();
    let dp = truth["communicators"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "dp/0")
        .unwrap();
    let size = dp["ranks"].as_array().unwrap().len();
    assert_eq!(size, 8);
    let input = without_kernels_of(
        "bandwidth_n_known",
        "fixtures/jobs/moe_ep_payloads.sqlite",
        7,
    );
    let got = groups(&input);
    let s13 = group(&got, "s13");
    assert_eq!(s13["n_used"], size, "{s13}");
    assert_eq!(s13["n_source"], source(RanksFrom::NcclInit));
    assert_eq!(s13["n_source"], "communicator size from NCCL's payload");
    assert_eq!(s13["matched_ranks"], size - 1);
    let note = format!(
        "N = {size}, communicator size from NCCL's payload; only {} of its ranks have kernels matched in the capture",
        size - 1
    );
    assert_eq!(s13["n_note"], note.as_str());
    // Send/recv exchanges do not use N: nothing to say of theirs.
    for key in ["s17/1", "s17/2"] {
        assert_eq!(group(&got, key)["n_note"], Value::Null, "{key}");
    }
    // The figures use it: AllReduce's factor for 8 ranks.
    let v = json_on(
        &["report", "nccl", "--format", "json"],
        std::slice::from_ref(&input),
    );
    let op = v["bandwidth"]["group_ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["group"] == "s13")
        .unwrap()
        .clone();
    assert_eq!(op["busbw_factor"], 1.75);
    // Once, in the text beside the table.
    let text = flat(&text_on(&["report", "nccl"], std::slice::from_ref(&input)));
    assert_eq!(text.matches(&format!("! s13: {note}")).count(), 1, "{text}");
    assert!(
        text.contains("N = communicator size from NCCL's payload"),
        "{text}"
    );
    // And on the skew panel, beside the instance's busbw.
    let panel = skew_panel(&input, "s13:1");
    assert!(panel.contains("busbw"), "{panel}");
    assert!(panel.contains(&note), "{panel}");
}

#[test]
fn without_a_communicator_size_n_is_the_captured_ranks_and_the_missing_device_is_named() {
    let input = without_kernels_of("bandwidth_n_captured", "fixtures/payloads.sqlite", 3);
    let got = groups(&input);
    let s20 = group(&got, "s20");
    assert_eq!(s20["n_used"], 3, "{s20}");
    assert_eq!(s20["matched_ranks"], 3);
    assert_eq!(s20["n_source"], source(RanksFrom::Members));
    assert_eq!(
        s20["n_source"],
        "captured ranks: the communicator size is not recorded"
    );
    let note = "N = 3, captured ranks: the communicator size is not recorded; device 3 has a CUDA context but no kernels in the capture: a communicator that includes it is larger than 3, and its busbw higher";
    assert_eq!(s20["n_note"], note);
    let text = flat(&text_on(&["report", "nccl"], std::slice::from_ref(&input)));
    assert_eq!(text.matches(&format!("! s20: {note}")).count(), 1, "{text}");
    // `report skew --instances` says it once beside its per-instance table.
    let text = flat(&text_on(
        &["report", "skew", "--instances"],
        std::slice::from_ref(&input),
    ));
    assert_eq!(text.matches(note).count(), 1, "{text}");
    let panel = skew_panel(&input, "s20:1");
    assert!(panel.contains(note), "{panel}");
}

#[test]
fn a_whole_capture_says_its_n_and_nothing_short() {
    let got = groups(&root().join("fixtures/payloads.sqlite"));
    let s20 = group(&got, "s20");
    assert_eq!(s20["n_used"], 4);
    assert_eq!(s20["n_source"], source(RanksFrom::Members));
    assert_eq!(s20["n_note"], Value::Null);
    let got = groups(&root().join("fixtures/jobs/moe_ep_payloads.sqlite"));
    let s13 = group(&got, "s13");
    assert_eq!(
        (s13["n_used"].as_u64(), s13["matched_ranks"].as_u64()),
        (Some(8), Some(8))
    );
    assert_eq!(s13["n_note"], Value::Null);
    let panel = skew_panel(&root().join("fixtures/payloads.sqlite"), "s20:1");
    assert!(!panel.contains("N = "), "{panel}");
}
