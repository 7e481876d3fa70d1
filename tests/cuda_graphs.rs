//! CUDA graphs (issue 42): a kernel replayed from a graph has the graph's
//! `cudaGraphLaunch` as its launch call, and the launch verdict, the why
//! account's CPU part and the timeline's launch panel use it like any
//! launch; what the graph's earlier nodes held it for on the GPU is said,
//! once, to be unrecorded. On `fixtures/jobs/cuda_graphs` with rank 1's PP
//! send recorded into the replay the planted 30 ms `pthread_cond_wait` made
//! late (`common::graph_job`); every figure from the truth file and the
//! planted OSRT row.

mod common;
use common::graph_job::{GraphLate, graph_kernel_late, planted, replayed, stall, truth};
use common::tui::{open_at, panel_area, press, rows};
use common::*;
use rankline::profile::Source;
use rankline::tui::panel::PanelKind;
use rankline::tui::timescale::format_duration;
use serde_json::Value;

const GRAPH_UNSEEN: &str =
    "inside a CUDA graph: what its earlier nodes held on the GPU is not recorded";

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The reports' unrounded ms are these ns.
fn assert_ms(got: &Value, ns: i64, what: &str) {
    assert!(
        (f(got) - ns as f64 / 1e6).abs() < 1e-9,
        "{what}: {got} ms ≠ {ns} ns"
    );
}

fn report(section: &str, c: &GraphLate, format: &str) -> String {
    let job = c.job.to_str().unwrap();
    text(&["report", section, "--no-cache", "--format", format, job])
}

fn report_json(section: &str, c: &GraphLate) -> Value {
    serde_json::from_str(&report(section, c, "json")).unwrap()
}

/// The launch entry of the one late instance whose kernel is a graph's.
fn graph_late(launch: &Value) -> Value {
    let from_graph: Vec<&Value> = launch["late_instances"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["from_graph"] == true)
        .collect();
    assert_eq!(from_graph.len(), 1, "{launch}");
    from_graph[0].clone()
}

/// The account of `x`'s instance in `report why` JSON.
fn account_of<'a>(why: &'a Value, x: &Value) -> &'a Value {
    why["why"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["group"] == x["group"] && w["instance"] == x["instance"])
        .unwrap_or_else(|| panic!("no account of {x}"))
}

/// Runs of whitespace as one space: wrapped text read as it was written.
fn flat(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn a_late_graph_kernel_is_judged_by_its_cuda_graph_launch() {
    let c = graph_kernel_late("graph_verdict");
    let p = &c.case;
    let v = report_json("launch", &c);
    assert_eq!(v["graph_kernels"], c.graph_kernels, "{v}");
    assert_eq!(v["kernels_without_launch"], 0);
    let x = graph_late(&v);
    assert_eq!(x["device"], p.device, "{x}");
    assert_eq!(x["verdict"], "cpu-late", "{x}");
    assert_eq!(x["resolvable"], true, "{x}");
    // as nsys names it: a five-digit version suffix stays
    assert_eq!(x["api"], "cudaGraphLaunch_v10000", "{x}");
    // CPU: the graph launch ended this long after the first peer started;
    // after it returned, the GPU's part.
    assert_ms(&x["cpu_delay_ms"], p.launch.1 - p.first_peer, "cpu_delay");
    assert_ms(&x["api_end_to_start_ms"], p.start - p.launch.1, "end→start");
}

#[test]
fn the_why_account_names_the_stall_before_the_graph_launch() {
    let c = graph_kernel_late("graph_why");
    let p = &c.case;
    let x = graph_late(&report_json("launch", &c));
    let why = report_json("why", &c);
    let w = account_of(&why, &x);
    assert_eq!(p.start - p.first_peer, p.start_skew, "the truth agrees");
    assert_ms(&w["lateness_ms"], p.start_skew, "lateness");
    assert_ms(&w["cpu_ms"], p.launch.1 - p.first_peer, "cpu");
    assert_ms(&w["gpu_ms"], p.start - p.launch.1, "gpu");
    let largest = w["cpu_parts"]
        .as_array()
        .unwrap()
        .iter()
        .max_by(|a, b| f(&a["ms"]).total_cmp(&f(&b["ms"])))
        .unwrap();
    assert_eq!(largest["kind"], "osrt", "{w}");
    assert_eq!(largest["name"], "pthread_cond_wait", "{w}");
    // The stall began before the first peer started and ended before the
    // graph launch.
    assert!(c.stall.0 < p.first_peer && c.stall.1 < p.launch.0);
    assert_eq!(largest["start_ns"], p.first_peer, "{w}");
    assert_eq!(largest["end_ns"], c.stall.1, "{w}");
    assert_ms(&largest["ms"], c.stall.1 - p.first_peer, "stall");
    assert_eq!(w["gpu_chain"], serde_json::json!([]), "{w}");
    assert!(
        w["missing"].as_array().unwrap().contains(&"graph".into()),
        "{w}"
    );

    let text = report("why", &c, "text");
    let head = format!(
        "  {}:{} D{} late by",
        x["group"].as_str().unwrap(),
        x["instance"],
        p.device
    );
    let from = text
        .find(&head)
        .unwrap_or_else(|| panic!("{head:?}: {text}"));
    let rest = &text[from + 2..];
    // Up to the next account, or the notes every account shares.
    let end = rest
        .find("\n  s")
        .or_else(|| rest.find("\n\n"))
        .unwrap_or(rest.len());
    let account = flat(&rest[..end]);
    let want = format!(
        "late by {:.3} ms: CPU {:.3} ms (its launch call ended after the earliest peer started), GPU {:.3} ms",
        p.start_skew as f64 / 1e6,
        (p.launch.1 - p.first_peer) as f64 / 1e6,
        (p.start - p.launch.1) as f64 / 1e6
    );
    assert!(account.contains(&want), "{want:?} in {account}");
    assert!(account.contains("pthread_cond_wait"), "{account}");
    assert!(!account.contains("launched in time"), "{account}");
    assert_eq!(
        flat(&text).matches(GRAPH_UNSEEN).count(),
        1,
        "said once: {text}"
    );
    assert!(account.contains(GRAPH_UNSEEN), "{account}");
}

#[test]
fn the_launch_panel_of_the_late_graph_kernel_says_its_graph_launch_was_late() {
    let c = graph_kernel_late("graph_panel");
    let p = &c.case;
    let x = graph_late(&report_json("launch", &c));
    let goto = format!("{}:{}", x["group"].as_str().unwrap(), x["instance"]);
    let (mut app, mut t) = open_at(&[Source::File(c.job.clone())], Some(&goto), 160, 48);
    press(&mut app, &mut t, "2");
    let panel = flat(&rows(&t, panel_area(&app, PanelKind::Launch).inner).join(" "));
    let (cpu, gpu) = (p.launch.1 - p.first_peer, p.start - p.launch.1);
    for want in [
        "launch call cudaGraphLaunch".to_string(),
        "launched from a CUDA graph".into(),
        format!("late rank D{}: cpu-late", p.device),
        format!(
            "its launch call ended {} after the first peer's kernel started",
            format_duration(cpu)
        ),
        format!(
            "delay {} = CPU {} + GPU {}",
            format_duration(p.start_skew),
            format_duration(cpu),
            format_duration(gpu)
        ),
        format!(
            "osrt {} pthread_cond_wait",
            format_duration(c.stall.1 - p.first_peer)
        ),
        format!(
            "gpu {} nothing recorded ahead of it on its stream or in an event it waited on; {GRAPH_UNSEEN}",
            format_duration(gpu)
        ),
    ] {
        assert!(panel.contains(&want), "{want:?} in {panel}");
    }
    assert_eq!(panel.matches(GRAPH_UNSEEN).count(), 1, "{panel}");
    for never in ["cannot tell", "launched in time", "graph,", ", graph"] {
        assert!(!panel.contains(never), "{never:?} in {panel}");
    }
}

/// The job as bundled: its replays' kernels are the graph kernels, none of
/// them a late rank; the PP send the stall made late, launched eagerly
/// after the replay, is late on the CPU, for the stall.
#[test]
fn the_bundled_job_counts_its_graph_kernels_and_blames_the_stall() {
    let t = truth();
    let p = planted(&t);
    let job = "fixtures/jobs/cuda_graphs.sqlite";
    let v = json(&["report", "launch", job, "--format", "json"]);
    assert_eq!(v["graph_kernels"], replayed(&t), "{v}");
    assert_eq!(v["kernels_without_launch"], 0);
    let late = v["late_instances"].as_array().unwrap();
    assert!(late.iter().all(|x| x["from_graph"] == false), "{v}");
    let why = json(&["report", "why", job, "--format", "json"]);
    let (x, w) = late
        .iter()
        .map(|x| (x, account_of(&why, x)))
        .find(|(x, w)| {
            x["device"] == p.device
                && (f(&w["lateness_ms"]) - p.start_skew as f64 / 1e6).abs() < 1e-9
        })
        .unwrap_or_else(|| panic!("no account of the send: {why}"));
    assert_eq!(x["verdict"], "cpu-late", "{x}");
    // Its own launch call came after the replay's.
    assert!(
        f(&w["cpu_ms"]) > (p.launch.1 - p.first_peer) as f64 / 1e6,
        "{w}"
    );
    let s = stall(&root().join(job), &p);
    let osrt = w["cpu_parts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["kind"] == "osrt" && x["name"] == "pthread_cond_wait")
        .unwrap_or_else(|| panic!("{w}"));
    assert_eq!(osrt["start_ns"], p.first_peer, "{w}");
    assert_eq!(osrt["end_ns"], s.1, "{w}");
    assert_eq!(w["largest"], "osrt", "{w}");
}
