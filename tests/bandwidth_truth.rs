//! Bytes and bandwidth from NCCL's NVTX payloads against the generator's
//! truth (`fixtures/payloads.sqlite`: direct and grouped calls, payloads
//! laid out by a real export's schema rows), and `null` — never 0 — on
//! every capture without payloads.

mod common;
use common::*;
use rankline::analysis::Analysis;
use rankline::analysis::bandwidth::{self, NOT_RECORDED};
use rankline::profile::{LoadPlan, Profile};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const PAYLOADS: &str = "fixtures/payloads.sqlite";

fn truth() -> Value {
    let text = std::fs::read_to_string(root().join("fixtures/payloads.truth.json")).unwrap();
    let t: Value = serde_json::from_str(&text).unwrap();
    t["scenario"]["bandwidth"].clone()
}

/// The payloads fixture loaded, and every analysis of it.
fn analyzed() -> (Profile, Analysis) {
    let out = rankline::profile::load(
        &rankline::profile::files(&[root().join(PAYLOADS)]),
        &LoadPlan::default(),
        &mut |_, _, _| {},
    );
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let a = rankline::analysis::pipeline::analyze(&out.profile, &Default::default(), &mut |_| {});
    (out.profile, a)
}

/// `report skew --instances` of the payloads fixture.
fn skew_instances() -> Value {
    json(&[
        "report",
        "skew",
        "--instances",
        PAYLOADS,
        "--format",
        "json",
    ])
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn assert_close(got: &Value, want: &Value, what: &str) {
    match (got.as_f64(), want.as_f64()) {
        (Some(g), Some(w)) => assert!(close(g, w), "{what}: {g} != {w}"),
        _ => assert_eq!(got, want, "{what}"),
    }
}

/// numpy.percentile(v, q) (linear), as nccl-tests' users compute it.
fn percentile(v: &[f64], q: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let at = q / 100.0 * (s.len() - 1) as f64;
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    s[lo] + (s[hi] - s[lo]) * (at - lo as f64)
}

#[test]
fn every_nccl_kernel_has_the_size_its_call_recorded() {
    let (p, a) = analyzed();
    let kernels = truth()["kernels"].as_array().unwrap().clone();
    assert_eq!(kernels.len(), 56);
    let (mut sized, mut unsized_) = (0, 0);
    for k in &kernels {
        let (device, start) = (k["device"].as_u64().unwrap(), k["start"].as_i64().unwrap());
        let row = (0..p.gpu.len())
            .find(|&r| {
                p.gpu.start(r) == start && p.lanes[p.gpu.lane(r) as usize].device as u64 == device
            })
            .unwrap_or_else(|| panic!("no kernel at {start} on {device}"));
        assert_eq!(
            a.sizes.of(row),
            k["recorded_bytes"].as_u64(),
            "kernel at {start} on device {device}"
        );
        match k["recorded_bytes"].as_u64() {
            Some(_) => sized += 1,
            None => unsized_ += 1,
        }
    }
    // Direct calls, a send/recv exchange and coalesced calls have sizes; a
    // group of two ops with one kernel has none.
    assert_eq!((sized, unsized_), (48, 8));
    assert!(
        a.sizes.said().contains("48 of 56 NCCL kernels"),
        "{}",
        a.sizes.said()
    );
}

#[test]
fn every_instance_has_the_generators_bytes_algbw_and_busbw() {
    let t = truth();
    let want = t["instances"].as_array().unwrap();
    let got = skew_instances();
    let g = &got["groups"][0];
    assert_eq!(
        g["match_method"], "nvtx",
        "every call names its communicator"
    );
    let list = g["instance_list"].as_array().unwrap();
    assert_eq!(list.len(), want.len());
    for (i, w) in list.iter().zip(want) {
        let what = format!("instance {} {}", w["instance"], w["op"]);
        assert_eq!(i["instance"], w["instance"], "{what}");
        assert_eq!(i["op"], w["op"], "{what}");
        assert_eq!(i["bytes"], w["bytes"], "{what}");
        assert_eq!(i["recorded_bytes"], w["recorded_bytes"], "{what}");
        assert_close(&i["algbw_gbps"], &w["algbw_gbps"], &format!("{what} algbw"));
        assert_close(&i["busbw_gbps"], &w["busbw_gbps"], &format!("{what} busbw"));
        if let Some(ns) = w["transfer_ns"].as_f64().filter(|_| !w["bytes"].is_null()) {
            assert_close(&i["transfer_ms"], &(ns / 1e6).into(), &what);
        }
    }
    // The naive figures (each rank's kernel, with its wait), per rank.
    let (_, a) = analyzed();
    let group = &a.matching.groups[0];
    for (k, w) in want.iter().enumerate() {
        let b = bandwidth::instance(group, k, false, &a.sizes);
        let Some(naive) = w["naive_gbps"].as_array() else {
            assert!(b.is_none(), "instance {}: no size", k + 1);
            continue;
        };
        let b = b.unwrap();
        let got: Vec<f64> = b.naive_gbps.iter().map(|x| x.1).collect();
        assert_eq!(got.len(), naive.len());
        for (g, w) in got.iter().zip(naive) {
            assert!(
                close(*g, w.as_f64().unwrap()),
                "instance {}: {g} vs {w}",
                k + 1
            );
        }
        // busbw = algbw × the factor nccl-tests gives the op for 4 ranks.
        let factor = w["factor"].as_f64().unwrap();
        assert!(close(b.busbw_gbps.unwrap(), b.algbw_gbps.unwrap() * factor));
        assert_eq!(bandwidth::bus_factor(group.ops[k], 4), Some(factor));
    }
}

#[test]
fn ops_sum_bytes_and_spread_bandwidth_over_their_instances() {
    let t = truth();
    /// Per op: bytes, algbw and busbw of the sized instances, instances, sized.
    type Op = (u64, Vec<f64>, Vec<f64>, usize, usize);
    let mut by_op: BTreeMap<String, Op> = BTreeMap::new();
    for w in t["instances"].as_array().unwrap() {
        let e = by_op.entry(w["op"].as_str().unwrap().into()).or_default();
        e.3 += 1;
        if let Some(b) = w["bytes"].as_u64() {
            e.0 += b;
            e.1.push(w["algbw_gbps"].as_f64().unwrap());
            e.2.push(w["busbw_gbps"].as_f64().unwrap());
            e.4 += 1;
        }
    }
    let got = json(&["report", "nccl", PAYLOADS, "--format", "json"]);
    let b = &got["bandwidth"];
    assert_eq!(b["sizes_recorded"], true);
    assert!(b["note"].as_str().unwrap().contains("unverified"));
    let ops = b["group_ops"].as_array().unwrap();
    assert_eq!(ops.len(), by_op.len());
    for o in ops {
        let (bytes, algbw, busbw, n, sized) = &by_op[o["op"].as_str().unwrap()];
        assert_eq!(o["instances"], *n as u64, "{o}");
        assert_eq!(o["sized_instances"], *sized as u64, "{o}");
        assert_eq!(o["bytes"], *bytes, "{o}");
        for (q, key) in [(50.0, "p50"), (90.0, "p90")] {
            assert!(close(
                o["algbw_gbps"][key].as_f64().unwrap(),
                percentile(algbw, q)
            ));
            assert!(close(
                o["busbw_gbps"][key].as_f64().unwrap(),
                percentile(busbw, q)
            ));
        }
    }
    // Per device, stream and op (one row per op here: the hints agree):
    // the bytes of the instances its kernels are in.
    let instances = t["instances"].as_array().unwrap();
    for d in got["devices"].as_array().unwrap() {
        for o in d["streams"][0]["ops"].as_array().unwrap() {
            let sized: Vec<u64> = instances
                .iter()
                .filter(|w| w["op"] == o["op"])
                .filter_map(|w| w["bytes"].as_u64())
                .collect();
            assert_eq!(o["sized_kernels"], sized.len() as u64, "{o}");
            assert_eq!(o["sizes_recorded"], !sized.is_empty());
            let total: u64 = sized.iter().sum();
            assert_eq!(o["bytes"], total, "{o}");
        }
    }
}

#[test]
fn each_rank_sends_the_factor_times_the_bytes_of_its_instances() {
    let t = truth();
    let mut per_step: BTreeMap<usize, f64> = BTreeMap::new();
    let instances = t["instances"].as_array().unwrap();
    let half = instances.len() / 2;
    for (k, w) in instances.iter().enumerate() {
        if let (Some(b), Some(f)) = (w["bytes"].as_f64(), w["factor"].as_f64()) {
            // Steps are numbered from 1, as instances are.
            *per_step.entry(k / half + 1).or_default() += b * f;
        }
    }
    let got = json(&["report", "nccl", PAYLOADS, "--format", "json"]);
    let ranks = got["bandwidth"]["rank_steps"].as_array().unwrap();
    assert_eq!(ranks.len(), 4 * 2, "4 ranks × 2 steps");
    for r in ranks {
        let step = r["step"].as_u64().unwrap() as usize;
        assert!(
            close(r["bytes_sent_estimate"].as_f64().unwrap(), per_step[&step]),
            "{r}"
        );
    }
    assert!(
        got["bandwidth"]["rank_steps_note"]
            .as_str()
            .unwrap()
            .contains("estimate")
    );
}

#[test]
fn the_text_says_how_sizes_and_figures_are_meant() {
    let out = text(&["report", "nccl", PAYLOADS]);
    for said in [
        "Bytes and bandwidth per group and op",
        "unverified",
        "48 of 56 NCCL kernels have a size",
        "AllGather: the gathered total, N × each rank's send buffer",
        "SendRecv: one direction",
        "! busbw is not one link's utilisation; compare with nccl-tests on the same topology and size",
        "Estimated bytes sent per rank",
    ] {
        assert!(out.contains(said), "{said:?} not in\n{out}");
    }
    let out = text(&["report", "skew", "--instances", PAYLOADS]);
    assert!(
        out.contains("Bytes and bandwidth per instance of s20"),
        "{out}"
    );
    assert!(
        out.contains("2 instance(s) without a size are not listed"),
        "{out}"
    );
}

/// Every capture without payloads: every byte and bandwidth figure is
/// null and the text says why.
#[test]
fn without_payloads_every_figure_is_null_and_said_so() {
    let mut inputs: Vec<Vec<PathBuf>> = vec![
        vec![root().join("fixtures/megatron_tp8.sqlite")],
        vec![root().join("fixtures/multinode")],
    ];
    inputs.extend(sqlite_files(&real_profiles()).into_iter().map(|f| vec![f]));
    assert!(inputs.len() >= 10, "the real exports are missing");
    for files in &inputs {
        let v = json_on(&["report", "nccl", "--format", "json"], files);
        let b = &v["bandwidth"];
        assert_eq!(b["sizes_recorded"], false, "{files:?}");
        assert!(
            b["note"].as_str().unwrap().starts_with(NOT_RECORDED),
            "{files:?}"
        );
        for o in b["group_ops"].as_array().unwrap() {
            for key in ["bytes", "algbw_gbps", "busbw_gbps", "naive_gbps"] {
                assert!(o[key].is_null(), "{files:?} {key}: {o}");
            }
        }
        assert!(b["rank_steps"].as_array().unwrap().is_empty(), "{files:?}");
        for d in v["devices"].as_array().unwrap() {
            for s in d["streams"].as_array().unwrap() {
                for o in s["ops"].as_array().unwrap() {
                    for key in ["bytes", "algbw_gbps", "busbw_gbps"] {
                        assert!(o[key].is_null(), "{files:?} {key}: {o}");
                    }
                    assert_eq!(o["sizes_recorded"], false);
                }
            }
        }
        // Said wherever there are NCCL kernels to say it of.
        let out = text_on(&["report", "nccl"], files);
        let nccl = !v["devices"].as_array().unwrap().is_empty();
        assert_eq!(out.contains(NOT_RECORDED), nccl, "{files:?}:\n{out}");
        let v = json_on(
            &["report", "skew", "--instances", "--format", "json"],
            files,
        );
        for g in v["groups"].as_array().unwrap() {
            for i in g["instance_list"].as_array().unwrap() {
                for key in ["bytes", "algbw_gbps", "busbw_gbps"] {
                    assert!(i[key].is_null(), "{files:?} {key}: {i}");
                }
            }
        }
    }
}

/// The 2026.2 NCCL export declares the schemas without payload data: it
/// says so, and it is read whole to find out.
#[test]
fn declared_schemas_without_data_are_said() {
    let f = real_profiles().join("nsys2026_2gpu_nccl_sendrecv.sqlite");
    let v = json_on(&["report", "nccl", "--format", "json"], &[f]);
    let note = v["bandwidth"]["note"].as_str().unwrap();
    assert!(
        note.contains("declares NCCL's payload schemas but holds no payload data"),
        "{note}"
    );
}

/// A copy of the payloads fixture whose AllReduce calls record twice the
/// size: `diff` says the bytes doubled and busbw with them.
#[test]
fn diff_compares_bytes_and_busbw_per_op() {
    let dir = temp_dir("bandwidth-diff");
    let after = dir.join("payloads_2x.sqlite");
    std::fs::copy(root().join(PAYLOADS), &after).unwrap();
    double_allreduce_sizes(&after);
    let v = json(&[
        "diff",
        PAYLOADS,
        after.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let ops = v["bandwidth"]["ops"].as_array().unwrap();
    let op = |name: &str| ops.iter().find(|o| o["op"] == name).unwrap();
    let ar = op("AllReduce");
    assert!(
        close(ar["bytes_delta_pct"].as_f64().unwrap(), 100.0),
        "{ar}"
    );
    assert!(
        close(ar["busbw_p50_delta_pct"].as_f64().unwrap(), 100.0),
        "{ar}"
    );
    assert_eq!(
        ar["after"]["bytes"].as_u64().unwrap(),
        2 * ar["before"]["bytes"].as_u64().unwrap()
    );
    let ag = op("AllGather");
    assert_eq!(ag["bytes_delta_pct"].as_f64(), Some(0.0), "{ag}");
    let out = text(&["diff", PAYLOADS, after.to_str().unwrap()]);
    assert!(out.contains("Bytes and busbw per op"), "{out}");
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("AllReduce") && l.contains("+100.0"))
        .unwrap_or_else(|| panic!("no AllReduce row of +100%:\n{out}"));
    assert!(line.contains("144.0") && line.contains("288.0"), "{line}");
    // One side without payloads: its figures are null, and said so.
    let v = json(&[
        "diff",
        "fixtures/megatron_tp8.sqlite",
        PAYLOADS,
        "--format",
        "json",
    ]);
    assert_eq!(v["bandwidth"]["sizes_recorded"]["before"], false);
    for o in v["bandwidth"]["ops"].as_array().unwrap() {
        if let Some(b) = o["before"].as_object() {
            assert!(b["bytes"].is_null() && b["busbw_gbps"].is_null(), "{o}");
        }
        assert!(o["bytes_delta_pct"].is_null(), "{o}");
    }
}

/// Rewrites each AllReduce payload's size field (offset 8 of the payload,
/// after nsys's 32-byte header where there is one) to twice its value.
fn double_allreduce_sizes(path: &Path) {
    let c = rusqlite::Connection::open(path).unwrap();
    let rows: Vec<(i64, Vec<u8>)> = c
        .prepare(
            "SELECT n.rowid, n.binaryData FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId
             WHERE s.value = 'ncclAllReduce' AND n.binaryData IS NOT NULL",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    // Per rank and step, one direct call and two coalesced ones.
    assert_eq!(rows.len(), 3 * 2 * 4);
    for (rowid, mut blob) in rows {
        let at = if blob.len() > 32 { 32 + 8 } else { 8 };
        let size = u64::from_le_bytes(blob[at..at + 8].try_into().unwrap());
        blob[at..at + 8].copy_from_slice(&(2 * size).to_le_bytes());
        c.execute(
            "UPDATE NVTX_EVENTS SET binaryData = ?1 WHERE rowid = ?2",
            rusqlite::params![blob, rowid],
        )
        .unwrap();
    }
}

/// The exported trace carries each NCCL kernel's recorded size, and no
/// size where none was recorded.
#[test]
fn the_trace_carries_each_kernels_message_size() {
    let dir = temp_dir("bandwidth-trace");
    let out = dir.join("trace.json");
    let o = rankline(&["export", PAYLOADS, "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let mut got: Vec<u64> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "kernel")
        .filter_map(|e| e["args"]["message_bytes"].as_u64())
        .collect();
    let mut want: Vec<u64> = truth()["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|k| k["recorded_bytes"].as_u64())
        .collect();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want);
}

/// The README's example is real.
#[test]
fn the_readme_example_is_real_output() {
    let real = text(&["report", "nccl", PAYLOADS]);
    assert_readme_shows(
        "$ rankline report nccl fixtures/payloads.sqlite\n",
        "```",
        &real,
    );
}

/// CSV carries the same figures: the group/op table, the instances'
/// bytes, and empty fields (null), never 0, without sizes.
#[test]
fn csv_tables_carry_the_bytes_and_bandwidth() {
    let read = |args: &[&str]| -> Vec<csv::StringRecord> {
        let out = text(args);
        let mut r = csv::Reader::from_reader(out.as_bytes());
        let head = r.headers().unwrap().clone();
        let mut rows = vec![head];
        rows.extend(r.records().map(Result::unwrap));
        rows
    };
    let col = |rows: &[csv::StringRecord], name: &str| -> Vec<String> {
        let i = rows[0].iter().position(|h| h == name).unwrap();
        rows[1..].iter().map(|r| r[i].to_string()).collect()
    };
    let json = json(&["report", "nccl", PAYLOADS, "--format", "json"]);
    let ops = &json["bandwidth"]["group_ops"];
    let rows = read(&[
        "report",
        "nccl",
        PAYLOADS,
        "--format",
        "csv",
        "--table",
        "group_ops",
    ]);
    let want: Vec<String> = ops
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["bytes"].to_string())
        .collect();
    assert_eq!(col(&rows, "bytes"), want);
    let rows = read(&[
        "report",
        "skew",
        "--instances",
        PAYLOADS,
        "--format",
        "csv",
        "--table",
        "instance_list",
    ]);
    let bytes = col(&rows, "bytes");
    assert_eq!(
        bytes.iter().filter(|b| b.is_empty()).count(),
        2,
        "{bytes:?}"
    );
    assert!(bytes.contains(&(64u64 << 20).to_string()));
    let rows = read(&[
        "report",
        "nccl",
        "fixtures/megatron_tp8.sqlite",
        "--format",
        "csv",
        "--table",
        "devices.streams.ops",
    ]);
    assert!(col(&rows, "bytes").iter().all(String::is_empty));
    assert!(col(&rows, "sizes_recorded").iter().all(|s| s == "false"));
}

/// `--window` keeps the instances wholly inside it, as `skew` does: the
/// first step's seven collectives.
#[test]
fn a_window_keeps_the_instances_inside_it() {
    let skew = skew_instances();
    let list = skew["groups"][0]["instance_list"].as_array().unwrap();
    let at = |k: usize| list[k]["start_ns"].as_i64().unwrap();
    let (a, b) = (window_seconds(at(0) - 1_000), window_seconds(at(7) - 1_000));
    let v = json(&[
        "report", "nccl", PAYLOADS, "--format", "json", "--window", &a, &b,
    ]);
    let ops = v["bandwidth"]["group_ops"].as_array().unwrap();
    let count = |op: &str| {
        ops.iter()
            .find(|o| o["op"] == op)
            .map_or(0, |o| o["instances"].as_u64().unwrap())
    };
    assert_eq!(
        [
            count("AllReduce"),
            count("AllGather"),
            count("ReduceScatter"),
            count("SendRecv")
        ],
        [2, 2, 1, 1],
        "{ops:?}"
    );
    let want: u64 = list[..7].iter().filter_map(|i| i["bytes"].as_u64()).sum();
    let got: u64 = ops.iter().filter_map(|o| o["bytes"].as_u64()).sum();
    assert_eq!(got, want);
}
