//! `report behind` against the generator's truth: the hang's last complete
//! instance, divergence, waiting and behind ranks with what the behind rank
//! was last seen doing; early stops and a crash said apart from a hang;
//! ranks of the world size with no file; `--fail-on-behind`.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeSet;

/// Issue 10's tolerance on a recovered clock (ms), in ns.
const ALIGN_TOL_NS: f64 = 20_000.0;

fn truth(name: &str) -> Value {
    let text = std::fs::read_to_string(root().join(format!("fixtures/{name}.truth.json")))
        .expect("truth file");
    serde_json::from_str(&text).expect("truth json")
}

fn paths(name: &str) -> Vec<String> {
    sqlite_files(&root().join("fixtures").join(name))
        .iter()
        .map(|p| p.display().to_string())
        .collect()
}

fn behind(name: &str, extra: &[&str]) -> std::process::Output {
    let files = paths(name);
    let mut args = vec!["report", "behind", "--no-cache"];
    args.extend(extra);
    args.extend(files.iter().map(String::as_str));
    rankline(&args)
}

fn behind_json(name: &str) -> Value {
    let o = behind(name, &["--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("json")
}

/// Truth ranks → the report's device keys (`host:gpu`), via `captured`.
fn keys(t: &Value, ranks: &Value) -> BTreeSet<String> {
    ranks
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let c = t["captured"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["rank"] == *r)
                .expect("rank in truth");
            format!("{}:{}", c["host"].as_str().unwrap(), c["gpu_id"])
        })
        .collect()
}

fn set(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap().to_string())
        .collect()
}

/// `cudaStreamSynchronize_v3020` as rankline names it (version dropped).
fn unversioned(name: &str) -> &str {
    match name.rfind("_v") {
        Some(i) if name[i + 2..].chars().all(|c| c.is_ascii_digit()) => &name[..i],
        _ => name,
    }
}

#[test]
fn the_hang_names_who_waits_and_who_is_behind() {
    let t = truth("hang");
    let want = &t["behind"];
    let v = behind_json("hang");
    assert_eq!(v["hang"], true);
    let g = &v["groups"][0];
    assert_eq!(g["hang"], true);
    assert_eq!(g["last_complete"], want["last_complete"]);
    assert_eq!(g["diverges_at"], want["diverges_at"]);
    assert_eq!(set(&g["waiting"]), keys(&t, &want["waiting"]));
    assert_eq!(set(&g["behind"]), keys(&t, &want["behind"]));
    let since = g["waiting_since_ns"].as_f64().unwrap();
    let true_since = want["waiting_since_ns"].as_f64().unwrap();
    assert!(
        (since - true_since).abs() <= ALIGN_TOL_NS,
        "{since} vs {true_since}"
    );
    // What the behind rank was last seen doing.
    let rank = want["behind"][0].to_string();
    let seen = &want["last_seen"][&rank];
    let key = keys(&t, &want["behind"]).into_iter().next().unwrap();
    let got = &g["last_seen"][&key];
    assert_eq!(
        got["cuda_call"].as_str(),
        Some(unversioned(seen["cuda_call"].as_str().unwrap()))
    );
    for f in ["nvtx", "osrt", "frame"] {
        assert_eq!(got[f], seen[f], "{f}");
    }
    let at = got["at_ns"].as_f64().unwrap();
    let true_at = seen["at_ns"].as_f64().unwrap();
    assert!((at - true_at).abs() <= ALIGN_TOL_NS, "{at} vs {true_at}");
    assert_eq!(g["stopped_early"], serde_json::json!([]));
}

#[test]
fn fail_on_behind_exits_3_on_a_hang_only() {
    let o = behind("hang", &["--fail-on-behind"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("HANG at instance 9 (AllGather)"), "{text}");
    assert!(
        text.contains("hang01:2: last CUDA call cudaStreamSynchronize"),
        "{text}"
    );
    assert_eq!(behind("hang", &[]).status.code(), Some(0));
    for name in ["staggered", "crash", "desync", "per_rank"] {
        let o = behind(name, &["--fail-on-behind"]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stdout(&o));
    }
}

#[test]
fn an_early_stop_and_a_crash_are_not_a_hang() {
    for (name, rank) in [("staggered", 6), ("crash", 2)] {
        let t = truth(name);
        let v = behind_json(name);
        assert_eq!(v["hang"], false, "{name}");
        let g = &v["groups"][0];
        assert_eq!(g["behind"], serde_json::json!([]), "{name}");
        let c = t["captured"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["rank"] == rank)
            .unwrap();
        let stopped = &g["stopped_early"];
        assert_eq!(stopped.as_array().unwrap().len(), 1, "{name}: {stopped}");
        let s = &stopped[0];
        assert_eq!(
            s["device"].as_str(),
            keys(&t, &serde_json::json!([rank]))
                .iter()
                .next()
                .map(String::as_str)
        );
        assert_eq!(s["last"], c["last"], "{name}");
        let before = t["sequence_length"].as_u64().unwrap() - c["last"].as_u64().unwrap();
        assert_eq!(s["instances_before_end"].as_u64(), Some(before), "{name}");
        let end = s["capture_end_ns"].as_f64().unwrap();
        let file = t["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| {
                f["ranks"]
                    .as_array()
                    .unwrap()
                    .contains(&serde_json::json!(rank))
            })
            .unwrap();
        let true_end = file["capture_end_ns"].as_f64().unwrap();
        assert!(
            (end - true_end).abs() <= ALIGN_TOL_NS,
            "{name}: {end} vs {true_end}"
        );
    }
    if let Some(early) = truth("staggered")["early_stop"].as_array() {
        assert_eq!(early[0]["instances_before_end"], 4);
    }
    let text = stdout(&behind("staggered", &[]));
    assert!(
        text.contains("stg01:2 r6: capture ends 4 instances before the others'"),
        "{text}"
    );
}

#[test]
fn ranks_of_the_world_with_no_file_are_never_captured() {
    let v = behind_json("per_rank");
    assert_eq!(v["world_size"], 5);
    assert_eq!(v["never_captured"], serde_json::json!([4]));
    assert_eq!(v["hang"], false);
}

#[test]
fn report_all_has_the_behind_section() {
    let files = paths("hang");
    let mut args = vec!["report", "all", "--format", "json", "--no-cache"];
    args.extend(files.iter().map(String::as_str));
    let v = json(&args);
    assert_eq!(v["behind"]["groups"][0]["diverges_at"], 9);
}

#[test]
fn an_instance_still_running_at_capture_end_has_no_end_skew() {
    let files = paths("hang");
    let mut args = vec![
        "report",
        "skew",
        "--format",
        "json",
        "--instances",
        "--no-cache",
    ];
    args.extend(files.iter().map(String::as_str));
    let g = &json(&args)["groups"][0];
    let list = g["instance_list"].as_array().unwrap();
    for i in list {
        assert_eq!(i["unfinished"], i["instance"] == 9, "{i}");
    }
    // The group's end figures are over the finished instances only.
    let finished_max = list
        .iter()
        .filter(|i| i["unfinished"] == false)
        .map(|i| i["end_skew_ms"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert_eq!(g["end_skew_ms"]["max"].as_f64(), Some(finished_max));
}

/// Times compared across hosts say how far the hosts' clocks agree, in
/// text and JSON; the hang's 2 nodes were aligned by collective ends.
#[test]
fn behind_says_how_far_the_hosts_clocks_agree() {
    let v = behind_json("hang");
    let g = &v["groups"][0];
    let err = g["clock_error_ms"].as_f64().unwrap();
    assert!(err > 0.0 && err < 0.1, "{err}");
    let o = behind("hang", &[]);
    let out = stdout(&o).replace("\n    ", " ");
    assert!(
        out.contains(&format!(
            "times compared across 2 clocks aligned by collective-ends, which agree to ±{err:.3} ms"
        )),
        "{out}"
    );
}

/// `fixtures/per_rank` cut as issue 44 describes it: rank 2's capture
/// ends after instance 25; ranks 0 and 1 are inside instance 30 when their
/// capture ends; rank 3 records on but never launches instance 30.
fn early_stop_then_hang() -> Vec<String> {
    let dir = temp_dir("behind_early_stop_then_hang");
    let nccl = |c: &rusqlite::Connection| -> Vec<(i64, i64, i64)> {
        let mut s = c
            .prepare(
                "SELECT k.rowid, k.start, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k \
                 JOIN StringIds s ON s.id = k.shortName WHERE s.value LIKE 'nccl%' ORDER BY k.start",
            )
            .unwrap();
        s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    // Every row ending after `t` goes (but `keep`), and the capture stops at `t`.
    let stop_at = |c: &rusqlite::Connection, t: i64, keep: i64| {
        for table in [
            "CUPTI_ACTIVITY_KIND_KERNEL",
            "CUPTI_ACTIVITY_KIND_MEMCPY",
            "CUPTI_ACTIVITY_KIND_MEMSET",
            "CUPTI_ACTIVITY_KIND_RUNTIME",
            "NVTX_EVENTS",
        ] {
            c.execute(
                &format!("DELETE FROM {table} WHERE coalesce(end, start) > ?1 AND rowid != ?2"),
                (t, keep),
            )
            .unwrap();
        }
        c.execute("UPDATE ANALYSIS_DETAILS SET stopTime = ?1", [t])
            .unwrap();
    };
    let mut out = Vec::new();
    for rank in 0..4 {
        let name = format!("rank{rank}.sqlite");
        let path = dir.join(&name);
        std::fs::copy(root().join("fixtures/per_rank").join(&name), &path).unwrap();
        let c = rusqlite::Connection::open(&path).unwrap();
        let k = nccl(&c);
        assert_eq!(k.len(), 33, "{name}");
        match rank {
            2 => stop_at(&c, k[24].2 + 1_000_000, -1),
            0 | 1 => {
                // Inside instance 30 when the capture ends, 50 ms on.
                let (row, start, _) = k[29];
                let end = start + 50_000_000;
                c.execute(
                    "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = ?1 WHERE rowid = ?2",
                    (end, row),
                )
                .unwrap();
                c.execute(
                    "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start > ?1",
                    [start],
                )
                .unwrap();
                stop_at(&c, end, row);
            }
            _ => {
                for &(row, _, _) in &k[29..] {
                    c.execute(
                        "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid = ?1",
                        [row],
                    )
                    .unwrap();
                }
            }
        }
        out.push(path.display().to_string());
    }
    out
}

#[test]
fn an_early_stop_does_not_hide_a_later_hang() {
    let files = early_stop_then_hang();
    let run = |extra: &[&str]| {
        let mut args = vec!["report", "behind", "--no-cache"];
        args.extend(extra);
        args.extend(files.iter().map(String::as_str));
        rankline(&args)
    };
    let o = run(&["--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["hang"], true, "{v}");
    let g = &v["groups"][0];
    assert_eq!(g["diverges_at"], 30, "{g}");
    assert_eq!(g["last_complete"], 29, "{g}");
    let devices = |k: &str| -> Vec<String> {
        let mut v: Vec<String> = g[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_str().unwrap().to_string())
            .collect();
        v.sort();
        v
    };
    // Each file's device, as the report names it: by its process.
    let o = rankline(
        &["report", "summary", "--format", "json", "--no-cache"]
            .into_iter()
            .chain(files.iter().map(String::as_str))
            .collect::<Vec<_>>(),
    );
    let summary: Value = serde_json::from_str(&stdout(&o)).expect("json");
    let device_of = |rank: usize| -> String {
        let c = rusqlite::Connection::open(&files[rank]).unwrap();
        let pid: i64 = c
            .query_row("SELECT pid FROM PROCESSES", [], |r| r.get(0))
            .unwrap();
        let d = summary["devices"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["processes"].as_array().unwrap().contains(&pid.into()))
            .expect("the file's device");
        d["device"].as_str().unwrap().to_string()
    };
    let mut waiting = vec![device_of(0), device_of(1)];
    waiting.sort();
    assert_eq!(devices("waiting"), waiting, "{g}");
    assert_eq!(devices("behind"), vec![device_of(3)], "{g}");
    let stopped = g["stopped_early"].as_array().unwrap();
    assert_eq!(stopped.len(), 1, "{g}");
    assert_eq!(
        stopped[0]["device"].as_str(),
        Some(device_of(2).as_str()),
        "{g}"
    );
    assert_eq!(stopped[0]["last"], 25, "{g}");
    assert_eq!(run(&["--fail-on-behind"]).status.code(), Some(3));
}

/// A desync names what each side ran (the truth: AllGather on ranks 0–2,
/// ReduceScatter on rank 3 at instance 7).
#[test]
fn a_desync_names_the_ops_each_side_ran() {
    let t = truth("desync");
    assert_eq!(t["desync"]["instance"], 7);
    let text = stdout(&behind("desync", &[]));
    assert!(text.contains("desync at instance 7"), "{text}");
    assert!(
        text.contains("ran AllGather: dsy00:0 dsy00:1 dsy01:0"),
        "{text}"
    );
    assert!(text.contains("ran ReduceScatter: dsy01:1"), "{text}");
}

/// The hung instance names the rank that never launched it as the one the
/// others wait for, its skew open at capture end (a lower bound), never a
/// lateness among the ranks that did start it (issue 44).
#[test]
fn the_hung_instance_waits_for_the_rank_that_never_launched_it() {
    let t = truth("hang");
    let behind = keys(&t, &t["behind"]["behind"]);
    let mut args = vec!["report", "skew", "--no-cache", "--format", "json"];
    let files = paths("hang");
    args.extend(files.iter().map(String::as_str));
    let o = rankline(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    let g = &v["groups"][0];
    let k = t["behind"]["diverges_at"].as_u64().unwrap();
    let e = g["big_events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["instance"].as_u64() == Some(k))
        .unwrap_or_else(|| panic!("instance {k} among the big events: {g}"));
    assert_eq!(e["open"], true, "{e}");
    assert_eq!(
        BTreeSet::from([e["late_device"].as_str().unwrap().to_string()]),
        behind,
        "{e}"
    );
    assert_eq!(e["late_duration_ms"], Value::Null, "{e}");
    // At least from the others' first start to the end of the capture.
    let since = t["behind"]["waiting_since_ns"].as_f64().unwrap();
    let skew_ns = e["start_skew_ms"].as_f64().unwrap() * 1e6;
    let end = e["start_ns"].as_f64().unwrap() + skew_ns;
    assert!(skew_ns > 1e9 && end > since, "{e}");
    // The spread of the instances all ranks started leaves it out.
    assert!(g["start_skew_ms"]["max"].as_f64().unwrap() < 5.0, "{g}");
    // No launch or account is made up for the rank that never launched it.
    let mut why = vec!["report", "why", "--no-cache", "--format", "json"];
    why.extend(files.iter().map(String::as_str));
    let w: Value = serde_json::from_str(&stdout(&rankline(&why))).expect("json");
    assert!(
        w["why"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["instance"].as_u64() != Some(k)),
        "{w}"
    );
}
