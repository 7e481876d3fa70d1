//! `report steps`: each step × rank account against the scenario engine's
//! truth (`fixtures/jobs/*.truth.json`, `steps`), which computes the same
//! parts from its own intervals, launch calls and instances.

mod common;
use common::*;
use serde_json::Value;

/// The parts, as the JSON names them (`{part}_ms`) and the truth
/// (`{part}_ns`).
use rankline::analysis::step_account::PARTS;

/// Every scenario job with its truth and the files to open; the jobs whose
/// files carry a planted clock fault are left out (their times are wrong
/// on purpose: `clock_refusals` reads them).
fn jobs() -> Vec<(String, Value, Vec<String>)> {
    let dir = root().join("fixtures/jobs");
    let mut out = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let n = e.unwrap().file_name().to_string_lossy().to_string();
            n.strip_suffix(".truth.json").map(str::to_string)
        })
        .collect();
    names.sort();
    for name in names {
        let t: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("{name}.truth.json"))).unwrap(),
        )
        .unwrap();
        if t["faults"].as_array().is_some_and(|f| !f.is_empty()) {
            continue;
        }
        let files: Vec<String> = match t["files"].as_array() {
            Some(f) => f
                .iter()
                .map(|f| f["path"].as_str().unwrap().to_string())
                .collect(),
            None => vec![format!("fixtures/jobs/{name}.sqlite")],
        };
        out.push((name, t, files));
    }
    assert!(out.len() >= 10, "scenario jobs: {}", out.len());
    out
}

fn steps(files: &[String]) -> Value {
    let mut args = vec!["report", "steps", "--format", "json", "--no-cache"];
    args.extend(files.iter().map(String::as_str));
    json(&args)
}

/// The truth's rank `r` as `report` names its device: the device id on one
/// host, `host:id` across hosts.
fn device_key(t: &Value, r: &Value) -> Value {
    let rank = &t["ranks"][r["rank"].as_u64().unwrap() as usize];
    if t["files"].is_array() {
        Value::from(format!(
            "{}:{}",
            rank["host"].as_str().unwrap(),
            r["device"]
        ))
    } else {
        r["device"].clone()
    }
}

#[test]
fn every_step_and_rank_adds_up_to_its_span() {
    for (name, _, files) in jobs() {
        let r = steps(&files);
        let all = r["steps"].as_array().unwrap();
        assert!(!all.is_empty(), "{name}: no steps");
        for s in all {
            for rank in s["ranks"].as_array().unwrap() {
                let sum: f64 = PARTS
                    .iter()
                    .map(|p| rank[format!("{p}_ms")].as_f64().unwrap())
                    .sum();
                let span = rank["span_ms"].as_f64().unwrap();
                assert!(
                    (sum - span).abs() < 5e-7,
                    "{name} step {}: {rank}",
                    s["step"]
                );
                assert_eq!(rank["span_ms"], s["time_ms"], "{name}");
                for p in PARTS {
                    assert!(
                        rank[format!("{p}_ms")].as_f64().unwrap() >= 0.0,
                        "{name}: {rank}"
                    );
                }
            }
        }
    }
}

/// Each part within 0.01 ms of the truth's (0.02 ms across hosts, whose
/// clocks the ends align to µs). Without payloads, sibling groups in
/// lockstep can be matched as one, which moves time between waiting and
/// transfer: there the two are checked as their sum (exposed NCCL).
#[test]
fn each_part_is_the_truths() {
    let mut checked = 0;
    for (name, t, files) in jobs() {
        let r = steps(&files);
        let (got, want) = (
            r["steps"].as_array().unwrap(),
            t["steps"].as_array().unwrap(),
        );
        assert_eq!(got.len(), want.len(), "{name}: steps");
        let tol = if t["files"].is_array() { 0.02 } else { 0.01 };
        for (g, w) in got.iter().zip(want) {
            let span =
                (w["end_ns"].as_i64().unwrap() - w["start_ns"].as_i64().unwrap()) as f64 / 1e6;
            assert!(
                (g["time_ms"].as_f64().unwrap() - span).abs() < tol,
                "{name} step {}",
                w["step"]
            );
            for wr in w["ranks"].as_array().unwrap() {
                let key = device_key(&t, wr);
                let gr = g["ranks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|x| x["device"] == key)
                    .unwrap_or_else(|| panic!("{name}: no device {key}"));
                let ms = |v: &Value, p: &str, unit: &str| -> f64 {
                    let x = v[format!("{p}_{unit}")].as_f64().unwrap();
                    if unit == "ns" { x / 1e6 } else { x }
                };
                let exact_waiting = t["payloads"] == true;
                for p in PARTS {
                    if !exact_waiting && (p == "waiting" || p == "transfer") {
                        continue;
                    }
                    let (a, b) = (ms(gr, p, "ms"), ms(wr, p, "ns"));
                    assert!(
                        (a - b).abs() < tol,
                        "{name} step {} {key} {p}: {a} vs {b}",
                        w["step"]
                    );
                }
                let exposed =
                    |v: &Value, unit: &str| ms(v, "waiting", unit) + ms(v, "transfer", unit);
                let (a, b) = (exposed(gr, "ms"), exposed(wr, "ns"));
                assert!(
                    (a - b).abs() < tol,
                    "{name} step {} {key} exposed: {a} vs {b}",
                    w["step"]
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 500, "{checked}");
}

/// The planted causes of `3d_dedicated` land where they belong: rank 3's
/// 22 ms off-CPU stall before a launch is host-bound idle in step 2, and
/// rank 5's GEMM 8 ms long is compute in step 3, against its peers.
#[test]
fn planted_causes_show_as_their_parts() {
    let r = steps(&["fixtures/jobs/3d_dedicated.sqlite".to_string()]);
    let rank = |step: usize, d: u64| -> Value {
        r["steps"][step - 1]["ranks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["device"] == d)
            .unwrap()
            .clone()
    };
    let host = rank(2, 3)["host_bound_ms"].as_f64().unwrap();
    assert!((21.9..22.2).contains(&host), "{host}");
    let peer = rank(3, 4)["compute_ms"].as_f64().unwrap();
    let slow = rank(3, 5)["compute_ms"].as_f64().unwrap();
    assert!((slow - peer - 8.0).abs() < 0.05, "{slow} vs {peer}");
    assert_eq!(r["steps"][0]["warmup"], true);
    assert_eq!(r["steps"][1]["warmup"], false);
}

/// Text fits 100 columns, marks the warm-up step, and a capture without
/// step ranges says how to mark them.
#[test]
fn text_names_warmup_and_fits() {
    let out = text(&[
        "report",
        "steps",
        "--no-cache",
        "fixtures/jobs/3d_dedicated.sqlite",
    ]);
    assert!(out.lines().all(|l| l.chars().count() <= 100), "{out}");
    assert!(out.contains("1 w "), "{out}");
    assert!(
        out.contains("summed over the 2 steps after warm-up"),
        "{out}"
    );
    let none = text(&["report", "steps", "--no-cache", "fixtures/why.sqlite"]);
    assert!(none.contains("--step-marker"), "{none}");
}

/// The critical path of every step adds up to the step, and runs through
/// as much compute, transfer, OS waits and copies as the engine's own path
/// (its graph's binding dependencies, back from the step's last end):
/// within 0.01 ms or 1 % of the step — two dependencies that end µs apart
/// (a launch call and the stream's last kernel) can route a path either
/// way, each such turn moving µs between compute and host — except where
/// the path crosses hosts at a collective whose last arrivals are within
/// the clocks' error (it says so).
#[test]
fn the_critical_path_is_the_truths() {
    let mut checked = 0;
    for (name, t, files) in jobs() {
        let r = steps(&files);
        for (g, w) in r["steps"]
            .as_array()
            .unwrap()
            .iter()
            .zip(t["steps"].as_array().unwrap())
        {
            let path = g["critical_path"].as_array().unwrap();
            let total: f64 = path.iter().map(|s| s["ms"].as_f64().unwrap()).sum();
            assert!(
                (total - g["time_ms"].as_f64().unwrap()).abs() < 1e-6,
                "{name} step {}",
                w["step"]
            );
            if path.iter().any(|s| s["uncertain"] == true) {
                continue;
            }
            let sum = |kinds: &[&str]| -> f64 {
                path.iter()
                    .filter(|s| kinds.contains(&s["kind"].as_str().unwrap()))
                    .map(|s| s["ms"].as_f64().unwrap())
                    .sum()
            };
            let truth = |k: &str| w["critical_path"][k].as_f64().unwrap_or(0.0) / 1e6;
            for (kinds, k) in [
                (&["compute"][..], "compute"),
                (&["transfer", "nccl"][..], "transfer"),
                (&["os_wait"][..], "os_wait"),
                (&["copy"][..], "copy"),
            ] {
                let (a, b) = (sum(kinds), truth(k));
                let tol = (0.01 * g["time_ms"].as_f64().unwrap()).max(0.01);
                assert!(
                    (a - b).abs() < tol,
                    "{name} step {} {k}: {a} vs {b}",
                    w["step"]
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked}");
}

/// Each planted cause's what-if saves what the engine saves by running the
/// same job without it (within 5 %, or 0.5 ms): a stall before a launch,
/// a GEMM 8 ms long, and a host-wide pause removed on all its ranks at
/// once. A cause off the critical path (the engine saves nothing) gets no
/// what-if worth naming.
#[test]
fn what_ifs_save_what_the_truth_says() {
    let mut checked = 0;
    for (name, t, files) in jobs() {
        let r = steps(&files);
        let host_of = |rank: &Value| {
            t["ranks"][rank.as_u64().unwrap() as usize]["host"]
                .as_str()
                .unwrap()
                .to_string()
        };
        for w in t["what_if"].as_array().unwrap() {
            let want = w["saves_ns"].as_f64().unwrap() / 1e6;
            let step = w["step"].as_u64().unwrap() as usize;
            let got: Vec<f64> = r["steps"][step - 1]["what_if"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|x| match w["kind"].as_str().unwrap() {
                    "node_stall" => {
                        let ranks = w["ranks"].as_array().unwrap();
                        x["kind"] == "os_wait"
                            && x["ranks"] == ranks.len()
                            && x["device"]
                                .as_str()
                                .unwrap()
                                .starts_with(&format!("{}:", host_of(&ranks[0])))
                    }
                    kind => {
                        let device = device_key(&t, w);
                        x["device"] == device
                            && x["ranks"] == 1
                            && x["kind"]
                                == if kind == "cpu_stall" {
                                    "os_wait"
                                } else {
                                    "compute"
                                }
                    }
                })
                .map(|x| x["saves_ms"].as_f64().unwrap())
                .collect();
            let best = got.iter().copied().fold(0.0, f64::max);
            let tol = (want * 0.05).max(0.5);
            assert!(
                (best - want).abs() <= tol,
                "{name} {}: {best} vs {want}",
                w["kind"]
            );
            checked += 1;
        }
    }
    assert!(checked >= 30, "{checked}");
}

/// The GPU planted slow for several steps (every compute kernel 20 %
/// longer) is the one compute straggler, in exactly those steps, at the
/// planted factor; no other scenario job names one (a pipeline's last
/// stage runs more of some kernels, and is not slower for it).
#[test]
fn a_throttled_gpu_is_the_one_compute_straggler() {
    for (name, t, files) in jobs() {
        let r = steps(&files);
        let got = r["compute_stragglers"].as_array().unwrap();
        if t["throttle"].is_null() {
            assert!(got.is_empty(), "{name}: {got:?}");
            continue;
        }
        let want = &t["throttle"];
        assert_eq!(got.len(), 1, "{name}: {got:?}");
        assert_eq!(got[0]["device"], want["device"], "{name}");
        assert_eq!(got[0]["slow_steps"], want["steps"], "{name}");
        let (ratio, factor) = (
            got[0]["ratio"].as_f64().unwrap(),
            want["factor"].as_f64().unwrap(),
        );
        assert!((ratio - factor).abs() < 0.02, "{name}: {ratio} vs {factor}");
    }
}
