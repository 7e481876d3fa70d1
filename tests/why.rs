//! `report why` (issue 21, first part) on the bundled Megatron fixture:
//! each big event's lateness is its CPU part plus its GPU part, the CPU
//! parts and the unaccounted time add up to the CPU part exactly, the
//! lateness is the instance's start skew, and what the capture lacks is
//! named with the nsys option that records it.

mod common;
use common::*;

#[test]
fn every_late_ranks_delay_adds_up() {
    let v = json(&[
        "report",
        "why",
        "fixtures/megatron_tp8.sqlite",
        "--format",
        "json",
    ]);
    let skew = json(&[
        "report",
        "skew",
        "fixtures/megatron_tp8.sqlite",
        "--format",
        "json",
    ]);
    let big = skew["groups"][0]["big_events"].as_array().unwrap();
    let why = v["why"].as_array().unwrap();
    assert_eq!(why.len(), big.len());
    assert_eq!(why.len(), 4);
    let f = |x: &serde_json::Value| x.as_f64().unwrap();
    for (w, b) in why.iter().zip(big) {
        assert_eq!(w["instance"], b["instance"], "{w}");
        assert!(
            (f(&w["lateness_ms"]) - f(&b["start_skew_ms"])).abs() < 1e-6,
            "{w} {b}"
        );
        assert!(
            (f(&w["lateness_ms"]) - f(&w["cpu_ms"]) - f(&w["gpu_ms"])).abs() < 1e-9,
            "{w}"
        );
        let parts: f64 = w["cpu_parts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| f(&p["ms"]))
            .sum();
        assert!(
            (parts + f(&w["unaccounted_ms"]) - f(&w["cpu_ms"])).abs() < 1e-9,
            "{w}"
        );
        for m in ["osrt", "sched", "samples"] {
            assert!(
                w["missing"].as_array().unwrap().iter().any(|x| x == m),
                "{w}"
            );
        }
    }
    // Instance 145 (D4): launched 46.3 ms late, all of it inside the NVTX
    // `forward` range but for its launch calls; instance 100 (D3): launched
    // in time, all GPU.
    let d4 = why.iter().find(|w| w["instance"] == 145).unwrap();
    assert!(f(&d4["cpu_ms"]) > 46.0, "{d4}");
    let largest = d4["cpu_parts"]
        .as_array()
        .unwrap()
        .iter()
        .max_by(|a, b| f(&a["ms"]).total_cmp(&f(&b["ms"])))
        .unwrap();
    assert_eq!(
        (&largest["kind"], &largest["name"]),
        (&"nvtx".into(), &"forward".into())
    );
    let d3 = why.iter().find(|w| w["instance"] == 100).unwrap();
    assert_eq!(f(&d3["cpu_ms"]), 0.0);
    assert!(f(&d3["gpu_ms"]) > 41.0, "{d3}");
    let text = text(&["report", "why", "fixtures/megatron_tp8.sqlite"]);
    assert!(text.contains("s20:145 D4 late by 46.566 ms"), "{text}");
    assert!(
        text.contains("no OS runtime calls recorded (nsys --trace=osrt)"),
        "{text}"
    );
}
