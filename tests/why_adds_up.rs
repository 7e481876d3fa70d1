//! The why account adds up in its own text: under each event's header the
//! rows (CPU parts, unaccounted, GPU chain, the GPU part's rest) sum to
//! the lateness the header states — including a GPU part that is negative
//! because the kernel started before its launch call returned, and the
//! GPU's own few µs of launch latency. An off-CPU part lists the spans it
//! counts, not the whole descheduled spans an earlier kind also claims.

mod common;
use common::*;
use rusqlite::Connection;
use std::path::{Path, PathBuf};

/// Captures with big events: planted causes, one node, several nodes, a
/// pipeline, CUDA graphs.
const INPUTS: &[&str] = &[
    "fixtures/why.sqlite",
    "fixtures/megatron_tp8.sqlite",
    "fixtures/multinode",
    "fixtures/per_rank",
    "fixtures/jobs/pp4.sqlite",
    "fixtures/jobs/cuda_graphs.sqlite",
];

/// Per event: the lateness its header states and the sum of its rows
/// (each printed to 0.001 ms), with the number of rows.
fn accounts(text: &str) -> Vec<(String, f64, f64, usize)> {
    let header = regex::Regex::new(r"^  (\S+) .* late by (-?[\d.]+) ms").unwrap();
    let row = regex::Regex::new(r"^    (\S+)  +(−|-)?([\d.]+) ms").unwrap();
    let mut out: Vec<(String, f64, f64, usize)> = Vec::new();
    for line in text.lines() {
        if line.starts_with("Causes over all") {
            break;
        }
        if let Some(c) = header.captures(line) {
            out.push((c[1].to_string(), c[2].parse().unwrap(), 0.0, 0));
        } else if let (Some(c), Some(last)) = (row.captures(line), out.last_mut()) {
            let v: f64 = c[3].parse().unwrap();
            last.2 += if c.get(2).is_some() { -v } else { v };
            last.3 += 1;
        }
    }
    out
}

fn assert_adds_up(input: &str, text: &str) {
    let accounts = accounts(text);
    assert!(!accounts.is_empty(), "{input}: no account\n{text}");
    for (event, lateness, sum, rows) in accounts {
        // each row and the header rounded to 0.001 ms
        let tol = 0.0005 * (rows as f64 + 1.0) + 1e-9;
        assert!(
            (sum - lateness).abs() <= tol,
            "{input} {event}: rows sum to {sum:.4} ms, the header says {lateness} ms\n{text}"
        );
    }
}

#[test]
fn every_accounts_rows_add_up_to_its_lateness() {
    for input in INPUTS {
        let text = text(&["report", "why", "--no-cache", input]);
        assert_adds_up(input, &text);
    }
}

fn why_copy(test: &str) -> PathBuf {
    let dir = temp_dir(test);
    let to = dir.join("why.sqlite");
    std::fs::copy(root().join("fixtures/why.sqlite"), &to).unwrap();
    to
}

/// `report why`'s JSON account of instance `instance` of `path`.
fn account(path: &str, instance: u64) -> serde_json::Value {
    let v = json(&["report", "why", "--no-cache", "--format", "json", path]);
    v["why"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["instance"] == instance)
        .unwrap()
        .clone()
}

fn edit(path: &Path, sql: &str) {
    Connection::open(path).unwrap().execute_batch(sql).unwrap();
}

/// D1's launch call of s20:2 made to return 11.8 µs after its kernel
/// started (5.144064 s): CPU 44.0618 ms, GPU −0.0118 ms.
#[test]
fn a_kernel_started_before_its_launch_call_returned_is_a_negative_gpu_row() {
    let path = why_copy("why_negative_gpu");
    edit(
        &path,
        "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = 5144075800 WHERE start = 5144050000;",
    );
    let p = path.to_str().unwrap();
    let w = account(p, 2);
    let gpu = w["gpu_unexplained_ms"].as_f64().unwrap();
    assert!((gpu + 0.0118).abs() < 1e-9, "{w}");
    let text = text(&["report", "why", "--no-cache", p]);
    assert_adds_up(p, &text);
    assert!(
        text.contains("−0.012 ms") || text.contains("-0.012 ms"),
        "{text}"
    );
    assert!(
        text.contains("the kernel started before its launch call returned"),
        "{text}"
    );
}

/// D3's launching thread (instance 4) also descheduled for 4 ms inside its
/// `read` call (5.312–5.316 s): the read claims those ns, so the off-CPU
/// part still counts 10 ms, and the spans it lists are those 10 ms.
#[test]
fn an_off_cpu_part_lists_only_the_spans_it_counts() {
    let path = why_copy("why_off_cpu_counted");
    edit(
        &path,
        "INSERT INTO SCHED_EVENTS (start, cpu, isSchedIn, globalTid) VALUES \
         (5312000000, 12, 0, 281577384843224), (5316000000, 12, 1, 281577384843224);",
    );
    let p = path.to_str().unwrap();
    let w = account(p, 4);
    let part = w["cpu_parts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["kind"] == "off-cpu")
        .unwrap();
    let ms = part["ms"].as_f64().unwrap();
    assert!((ms - 10.0).abs() < 1e-9, "{part}");
    let listed: i64 = part["detail"]["spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["end_ns"].as_i64().unwrap() - s["start_ns"].as_i64().unwrap())
        .sum();
    assert_eq!(listed, 10_000_000, "{part}");
    assert_adds_up(p, &text(&["report", "why", "--no-cache", p]));
}

/// D5's s20:6 was queued behind one 26.1 ms kernel on its stream; split
/// into four back-to-back kernels of that name, the account says one row
/// "queued behind 4× …" whose time is the four links' sum, and still adds
/// up. The JSON keeps every link.
#[test]
fn a_queue_of_kernels_of_one_name_is_one_row_with_its_count() {
    let path = why_copy("why_queue_grouped");
    edit(
        &path,
        "CREATE TEMP TABLE k AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start = 5498900000;
         UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = 5505000000 WHERE start = 5498900000;
         UPDATE k SET start = 5505000000, end = 5511000000, correlationId = 900001;
         INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM k;
         UPDATE k SET start = 5511000000, end = 5518000000, correlationId = 900002;
         INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM k;
         UPDATE k SET start = 5518000000, end = 5525000000, correlationId = 900003;
         INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM k;",
    );
    let p = path.to_str().unwrap();
    let w = account(p, 6);
    let chain = w["gpu_chain"].as_array().unwrap();
    assert_eq!(chain.len(), 4, "{w}");
    let held: f64 = chain.iter().map(|l| l["held_ms"].as_f64().unwrap()).sum();
    let text = text(&["report", "why", "--no-cache", p]);
    assert_adds_up(p, &text);
    let event = text.split("  s20:6 ").nth(1).unwrap();
    let event = event.split("  s20:7 ").next().unwrap();
    let rows: Vec<&str> = event
        .lines()
        .filter(|l| l.starts_with("    stream "))
        .collect();
    assert_eq!(rows.len(), 1, "{event}");
    assert!(
        rows[0].contains(&format!("{held:.3} ms")),
        "{held}: {event}"
    );
    assert!(
        event
            .replace('\n', " ")
            .contains("queued behind 4× vectorized_elementwise_kernel on S20"),
        "{event}"
    );
}
