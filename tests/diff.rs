//! `rankline diff`: every figure against the generator's truth for the
//! before/after pairs in `fixtures/diff/` (and kernel sums against the
//! SQLite tables), the regression gate's exit codes, bad input, a capture
//! against itself, the JSON shape and the text width.

mod common;
use common::*;

use serde_json::Value;
use std::collections::BTreeMap;

const BEFORE: &str = "fixtures/megatron_tp8.sqlite";
const PAIRS: [&str; 3] = ["no_big_skew", "slow_gemm", "fewer_devices"];

fn after(name: &str) -> String {
    format!("fixtures/diff/{name}.sqlite")
}

fn truth(name: &str) -> Value {
    let path = root().join(format!("fixtures/diff/{name}.truth.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn diff_json(before: &str, after: &str, extra: &[&str]) -> Value {
    let mut args = vec!["diff", before, after, "--format", "json"];
    args.extend(extra);
    json(&args)
}

/// Stdout of a run that exits with `code`.
fn out_with(args: &[&str], code: i32) -> String {
    let o = rankline(args);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

fn close(a: &Value, b: &Value, what: &str) {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => assert!((x - y).abs() < 1e-6, "{what}: {x} vs {y}"),
        _ => assert_eq!(a, b, "{what}"),
    }
}

fn by<'a>(list: &'a Value, key: &str) -> BTreeMap<String, &'a Value> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let k = match &v[key] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k, v)
        })
        .collect()
}

#[test]
fn steps_kernels_and_classes_match_the_truth() {
    for name in PAIRS {
        let t = truth(name);
        let d = diff_json(BEFORE, &after(name), &[]);
        for side in ["before", "after"] {
            for f in ["count", "p50_ms", "p90_ms", "max_ms"] {
                close(
                    &d["steps"][side][f],
                    &t[side]["steps"][f],
                    &format!("{name} steps {side} {f}"),
                );
            }
        }
        for (section, key) in [("kernels", "name"), ("classes", "class")] {
            let got = by(&d[section], key);
            let want = by(&t[section], key);
            assert_eq!(
                got.keys().collect::<Vec<_>>(),
                want.keys().collect::<Vec<_>>(),
                "{name} {section}"
            );
            for (k, w) in want {
                let g = got[&k];
                for f in ["before_ms", "after_ms"] {
                    close(&g[f], &w[f], &format!("{name} {section} {k} {f}"));
                }
                let (b, a) = (
                    w["before_ms"].as_f64().unwrap(),
                    w["after_ms"].as_f64().unwrap(),
                );
                close(
                    &g["delta_ms"],
                    &(a - b).into(),
                    &format!("{name} {k} delta"),
                );
                if b == 0.0 {
                    assert!(g["delta_pct"].is_null(), "{name} {k}");
                } else {
                    close(
                        &g["delta_pct"],
                        &(100.0 * (a - b) / b).into(),
                        &format!("{name} {k} %"),
                    );
                }
                if section == "kernels" {
                    assert_eq!(g["before_count"], w["before_count"], "{name} {k}");
                    assert_eq!(g["after_count"], w["after_count"], "{name} {k}");
                }
            }
        }
    }
}

#[test]
fn the_slower_gemm_is_the_largest_change_and_its_size_is_the_designed_one() {
    let t = truth("slow_gemm");
    let d = diff_json(BEFORE, &after("slow_gemm"), &[]);
    let top = &d["kernels"][0];
    assert_eq!(top["name"], t["scenario"]["kernel"]);
    close(&top["delta_ms"], &t["scenario"]["added_ms"], "added");
    for k in d["kernels"].as_array().unwrap().iter().skip(1) {
        assert_eq!(k["delta_ms"], 0.0, "{k}");
    }
    // Only device 3's overlap changes.
    for o in d["overlap"].as_array().unwrap() {
        assert_eq!(o["before"] == o["after"], o["device"] != 3, "{o}");
    }
}

#[test]
fn overlap_per_device_matches_the_truth() {
    for name in PAIRS {
        let t = truth(name);
        let d = diff_json(BEFORE, &after(name), &[]);
        let pairs = by(&d["overlap"], "device");
        for side in ["before", "after"] {
            let want = by(&t[side]["overlap"]["devices"], "device");
            let have: Vec<&String> = pairs
                .iter()
                .filter(|(_, p)| !p[side].is_null())
                .map(|(k, _)| k)
                .collect();
            assert_eq!(have, want.keys().collect::<Vec<_>>(), "{name} {side}");
            for (dev, w) in want {
                let g = &pairs[&dev][side];
                for (f, v) in w.as_object().unwrap() {
                    if f != "device" {
                        close(&g[f], v, &format!("{name} {side} device {dev} {f}"));
                    }
                }
            }
        }
    }
    // Device 7 is only before, listed with no after side.
    let d = diff_json(BEFORE, &after("fewer_devices"), &[]);
    let pairs = by(&d["overlap"], "device");
    assert!(pairs["7"]["after"].is_null() && !pairs["7"]["before"].is_null());
}

#[test]
fn skew_pairs_match_the_truth() {
    for name in PAIRS {
        let t = truth(name);
        let d = diff_json(BEFORE, &after(name), &[]);
        let got = by(&d["skew"], "key");
        assert_eq!(
            got.len(),
            t["skew_pairs"].as_array().unwrap().len(),
            "{name}"
        );
        for p in t["skew_pairs"].as_array().unwrap() {
            let key = p["after"].as_str().unwrap();
            let g = got[key];
            assert_eq!(g["paired_by"], p["paired_by"], "{name} {key}");
            for side in ["before", "after"] {
                let want_key = &p[side];
                let w = t[side]["skew"]["groups"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|x| x["key"] == *want_key)
                    .unwrap();
                let s = &g[side];
                let what = format!("{name} {key} {side}");
                assert_eq!(s["group"], *want_key, "{what}");
                assert_eq!(s["instances"], w["instances"], "{what}");
                for f in ["excess_ms", "excess_pct"] {
                    close(&s[f], &w[f], &format!("{what} {f}"));
                }
                for q in ["p50", "p90", "max"] {
                    close(
                        &s["start_skew_ms"][q],
                        &w["start_skew_ms"][q],
                        &format!("{what} start {q}"),
                    );
                }
                close(
                    &s["end_skew_ms"]["p50"],
                    &w["end_skew_ms"]["p50"],
                    &format!("{what} end"),
                );
                assert_eq!(s["late_counts"], w["late_counts"], "{what}");
                let want_big: Vec<(Value, Value)> = w["big_events"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| (e["instance"].clone(), e["late_device"].clone()))
                    .collect();
                let got_big: Vec<(Value, Value)> = s["big_events"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| (e["instance"].clone(), e["late_device"].clone()))
                    .collect();
                assert_eq!(got_big, want_big, "{what}");
                // Launch verdicts of the group's big events.
                let mut verdicts =
                    BTreeMap::from([("cpu-late", 0), ("gpu-side", 0), ("unknown", 0)]);
                for l in t[side]["launch"]["late_instances"].as_array().unwrap() {
                    if l["group"] == *want_key {
                        *verdicts.get_mut(l["verdict"].as_str().unwrap()).unwrap() += 1;
                    }
                }
                for (v, n) in verdicts {
                    assert_eq!(s["verdicts"][v], n, "{what} {v}");
                }
            }
        }
    }
    // The designed change: the main group's big events are gone.
    let d = diff_json(BEFORE, &after("no_big_skew"), &[]);
    let main = by(&d["skew"], "key")["s21"].clone();
    assert_eq!(main["before"]["big_events"].as_array().unwrap().len(), 4);
    assert!(main["after"]["big_events"].as_array().unwrap().is_empty());
    assert!(main["after"]["excess_ms"].as_f64() < main["before"]["excess_ms"].as_f64());
}

/// Σ duration and count per kernel short name, read with plain SQL.
fn sql_kernel_sums(path: &str) -> BTreeMap<String, (i64, usize)> {
    let db = rusqlite::Connection::open_with_flags(
        root().join(path),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let mut q = db
        .prepare(
            "SELECT s.value, SUM(k.end - k.start), COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k \
             JOIN StringIds s ON s.id = k.shortName GROUP BY s.value",
        )
        .unwrap();
    q.query_map([], |r| {
        Ok((r.get(0)?, (r.get(1)?, r.get::<_, i64>(2)? as usize)))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

#[test]
fn kernel_totals_match_sums_from_the_sqlite_tables() {
    for name in PAIRS {
        let d = diff_json(BEFORE, &after(name), &[]);
        let (b, a) = (sql_kernel_sums(BEFORE), sql_kernel_sums(&after(name)));
        for k in d["kernels"].as_array().unwrap() {
            let n = k["name"].as_str().unwrap();
            let (bn, bc) = b.get(n).copied().unwrap_or_default();
            let (an, ac) = a.get(n).copied().unwrap_or_default();
            close(&k["before_ms"], &(bn as f64 / 1e6).into(), n);
            close(&k["after_ms"], &(an as f64 / 1e6).into(), n);
            assert_eq!(
                (k["before_count"].as_u64(), k["after_count"].as_u64()),
                (Some(bc as u64), Some(ac as u64)),
                "{n}"
            );
        }
        assert_eq!(
            d["kernels"].as_array().unwrap().len(),
            b.keys()
                .chain(a.keys())
                .collect::<std::collections::BTreeSet<_>>()
                .len()
        );
    }
}

#[test]
fn the_gate_exits_3_when_a_figure_grows_beyond_it_and_0_otherwise() {
    // slow_gemm: total kernel time grows by about 0.48 %, the step p50
    // and the exposed NCCL time do not: the default gate passes, and says
    // what it did not gate.
    let slow_gemm = after("slow_gemm");
    let gate = |extra: &[&str]| {
        let mut args = vec!["diff", BEFORE, &slow_gemm, "--fail-on-regression", "0.1"];
        args.extend_from_slice(extra);
        rankline(&args)
    };
    let o = gate(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("not gated: total kernel time 6367.866 -> 6398.634 ms (+0.5%)"),
        "{}",
        stdout(&o)
    );
    // Asked for, it gates.
    let o = gate(&["--gate", "total-kernel"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines[0].starts_with("rankline: regression gate failed: 1 figure grew by more than 0.1%"),
        "{err}"
    );
    assert!(lines[1].contains("total kernel time"), "{err}");
    assert_eq!(lines.len(), 2, "{err}");
    assert!(stdout(&o).contains("Regressions (gate"));
    assert!(!stdout(&o).contains("not gated"));
    // --gate without a gate is a usage error.
    let o = rankline(&["diff", BEFORE, BEFORE, "--gate", "total-kernel"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = rankline(&[
        "diff",
        BEFORE,
        &after("slow_gemm"),
        "--fail-on-regression",
        "1",
        "--gate",
        "total-kernel",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let d: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(d["regressions"], serde_json::json!([]));
    assert!(stderr(&o).contains("regression gate passed"));

    // Putting the big-skew events back: the main group's excess and the
    // exposed NCCL time grow; the step p50 does not (and the total kernel
    // time, which grows too, is not gated).
    let o = rankline(&[
        "diff",
        &after("no_big_skew"),
        BEFORE,
        "--fail-on-regression",
        "5",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let d: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let r = d["regressions"].as_array().unwrap();
    let metrics: Vec<(&str, &Value)> = r
        .iter()
        .map(|x| (x["metric"].as_str().unwrap(), &x["key"]))
        .collect();
    assert_eq!(
        metrics,
        vec![
            ("exposed_nccl_ms_per_step", &Value::Null),
            ("skew_excess_ms", &Value::from("s20"))
        ]
    );
    let e = &d["exposed_nccl"];
    assert_eq!(e["per"], "step");
    close(&r[0]["before"], &e["before_ms"], "exposed before");
    close(&r[0]["after"], &e["after_ms"], "exposed after");
    // Independently: the mean of the devices' nccl_only_ms over the steps.
    let mean_per_step = |side: &str| {
        let each: Vec<f64> = d["overlap"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| &o[side])
            .filter(|o| o["nccl_kernels"].as_u64() > Some(0))
            .map(|o| o["nccl_only_ms"].as_f64().unwrap())
            .collect();
        let steps = d["steps"][side]["count"].as_f64().unwrap();
        Value::from(each.iter().sum::<f64>() / each.len() as f64 / steps)
    };
    close(&e["before_ms"], &mean_per_step("before"), "mean before");
    close(&e["after_ms"], &mean_per_step("after"), "mean after");
    let excess = &r[1];
    let main = by(&d["skew"], "key")["s20"].clone();
    close(&excess["before"], &main["before"]["excess_ms"], "before");
    close(&excess["after"], &main["after"]["excess_ms"], "after");
    let (b, a) = (
        excess["before"].as_f64().unwrap(),
        excess["after"].as_f64().unwrap(),
    );
    close(&excess["pct"], &(100.0 * (a - b) / b).into(), "pct");
    // The fix direction never fails the gate.
    let o = rankline(&[
        "diff",
        BEFORE,
        &after("no_big_skew"),
        "--fail-on-regression",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// Putting the big-skew events back grows exposed NCCL per step by 67 %
/// with the step p50 unchanged: the text says why once, under that
/// regression; where the gate does not fail on it, nothing is said.
#[test]
fn exposed_nccl_grown_with_steady_steps_is_explained_once_under_its_regression() {
    let why = rankline::analysis::diff::STEPS_MISS_GPU_WAITS;
    let no_big_skew = after("no_big_skew");
    let text = out_with(
        &["diff", &no_big_skew, BEFORE, "--fail-on-regression", "5"],
        3,
    );
    assert_eq!(text.matches(why).count(), 1, "{text}");
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let at = lines.iter().position(|l| *l == why).unwrap();
    assert!(
        lines[at - 1].starts_with("exposed NCCL per step 37.905 -> 63.443 ms"),
        "{text}"
    );
    for (args, code) in [
        // No gate, or a gate it passes.
        (vec!["diff", &no_big_skew, BEFORE], 0),
        (
            vec!["diff", &no_big_skew, BEFORE, "--fail-on-regression", "70"],
            3,
        ),
        // Exposed NCCL shrank.
        (
            vec!["diff", BEFORE, &no_big_skew, "--fail-on-regression", "5"],
            0,
        ),
    ] {
        let text = out_with(&args, code);
        assert!(!text.contains(why), "{args:?}: {text}");
    }
}

#[test]
fn bad_input_keeps_exit_1_and_bad_usage_exit_2() {
    let o = rankline(&["diff", BEFORE, "fixtures/diff/missing.sqlite"]);
    assert_eq!(o.status.code(), Some(1));
    assert_one_line_error(&o, "fixtures/diff/missing.sqlite", "no such file");
    assert!(stdout(&o).is_empty());
    // The gate does not hide bad input.
    let o = rankline(&[
        "diff",
        "fixtures/diff/missing.sqlite",
        BEFORE,
        "--fail-on-regression",
        "5",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let empty = temp_dir("diff-empty-side");
    let o = rankline(&["diff", BEFORE, empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    let not_sqlite = root().join("fixtures/diff/slow_gemm.truth.json");
    let o = rankline(&["diff", not_sqlite.to_str().unwrap(), BEFORE]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    for args in [
        vec!["diff", BEFORE, BEFORE, "--fail-on-regression", "-1"],
        vec!["diff", BEFORE, BEFORE, "--fail-on-regression", "nan"],
        vec!["diff", BEFORE, BEFORE, "--table", "kernels"],
        vec!["diff", BEFORE, BEFORE, "--step-marker", "("],
        vec!["diff", BEFORE],
    ] {
        let o = rankline(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn a_capture_against_itself_shows_no_change() {
    for side in [BEFORE, "fixtures/per_rank"] {
        let o = rankline(&[
            "diff",
            side,
            side,
            "--format",
            "json",
            "--fail-on-regression",
            "0",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let d: Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(d["steps"]["before"], d["steps"]["after"]);
        for k in d["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .chain(d["classes"].as_array().unwrap())
        {
            assert_eq!(k["delta_ms"], 0.0, "{k}");
            assert_eq!(k["before_ms"], k["after_ms"], "{k}");
        }
        for o in d["overlap"].as_array().unwrap() {
            assert_eq!(o["before"], o["after"], "{o}");
        }
        assert!(!d["skew"].as_array().unwrap().is_empty());
        for s in d["skew"].as_array().unwrap() {
            assert_eq!(s["paired_by"], "key");
            assert_eq!(s["before"], s["after"], "{s}");
        }
        assert_eq!(d["regressions"], serde_json::json!([]));
        // The text says so and stops: the answer, not tables of zeros.
        let t = text(&["diff", side, side]);
        assert!(
            t.contains("no change: every figure (steps, kernels, overlap, skew, devices) is the same on both sides"),
            "{t}"
        );
        // What follows is only what was compared: no table of zeros.
        for table in ["Steps", "Kernels", "Overlap", "Skew"] {
            assert!(!t.lines().any(|l| l.starts_with(table)), "{table}: {t}");
        }
    }
    // A side with a copy of its file drops it (once per side), and still
    // compares equal to the file alone.
    let dir = temp_dir("diff-duplicate-side");
    std::fs::copy(root().join(BEFORE), dir.join("a.sqlite")).unwrap();
    std::fs::copy(root().join(BEFORE), dir.join("b.sqlite")).unwrap();
    let o = rankline(&["diff", dir.to_str().unwrap(), BEFORE]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("same content"), "{}", stderr(&o));
    assert!(stdout(&o).contains("no change"), "{}", stdout(&o));
}

#[test]
fn a_side_with_one_bad_file_still_compares_the_rest_and_exits_1() {
    let dir = temp_dir("diff-one-bad-file");
    std::fs::copy(root().join(BEFORE), dir.join("a.sqlite")).unwrap();
    std::fs::write(dir.join("b.sqlite"), b"not a database").unwrap();
    let o = rankline(&[
        "diff",
        BEFORE,
        dir.to_str().unwrap(),
        "--fail-on-regression",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("b.sqlite"), "{err}");
    // The file that loaded is compared, and equals the before side.
    assert!(stdout(&o).contains("no change"), "{}", stdout(&o));
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

#[test]
fn json_has_the_documented_shape() {
    let d = diff_json(
        BEFORE,
        &after("no_big_skew"),
        &["--fail-on-regression", "0"],
    );
    assert_eq!(
        keys(&d),
        [
            "before",
            "after",
            "steps",
            "step_account",
            "kernels",
            "classes",
            "overlap",
            "skew",
            "bandwidth",
            "exposed_nccl",
            "completeness",
            "regressions"
        ]
    );
    assert_eq!(
        keys(&d["step_account"]["before"]),
        ["steps", "mean_per_step_rank", "causes"]
    );
    // Neither side recorded message sizes: said, and every figure null.
    let b = &d["bandwidth"];
    assert_eq!(keys(b), ["sizes_recorded", "note", "caveat", "ops"]);
    assert_eq!(
        b["sizes_recorded"],
        serde_json::json!({"before": false, "after": false})
    );
    for o in b["ops"].as_array().unwrap() {
        assert_eq!(
            keys(o),
            [
                "op",
                "before",
                "after",
                "bytes_delta_pct",
                "busbw_p50_delta_pct"
            ]
        );
        assert!(
            o["after"]["bytes"].is_null() && o["after"]["busbw_gbps"].is_null(),
            "{o}"
        );
    }
    assert_eq!(keys(&d["before"]), ["files"]);
    assert_eq!(
        d["after"]["files"],
        serde_json::json!([after("no_big_skew")])
    );
    assert_eq!(keys(&d["steps"]), ["before", "after"]);
    assert_eq!(
        keys(&d["steps"]["after"]),
        ["count", "p50_ms", "p90_ms", "max_ms"]
    );
    assert_eq!(
        keys(&d["kernels"][0]),
        [
            "name",
            "before_ms",
            "after_ms",
            "delta_ms",
            "delta_pct",
            "before_count",
            "after_count"
        ]
    );
    assert_eq!(
        keys(&d["classes"][0]),
        ["class", "before_ms", "after_ms", "delta_ms", "delta_pct"]
    );
    assert_eq!(keys(&d["overlap"][0]), ["device", "before", "after"]);
    assert_parts_sum_to_span(&d["overlap"][0]["after"]);
    assert_eq!(keys(&d["skew"][0]), ["key", "paired_by", "before", "after"]);
    let s = &d["skew"][0]["before"];
    for k in [
        "instances",
        "excess_ms",
        "excess_pct",
        "start_skew_ms",
        "end_skew_ms",
        "big_events",
        "late_counts",
        "verdicts",
    ] {
        assert!(s.get(k).is_some(), "{k} missing: {s}");
    }
    assert_eq!(
        keys(&d["exposed_nccl"]),
        ["per", "before_ms", "after_ms", "delta_pct"]
    );
    assert_eq!(keys(&s["start_skew_ms"]), ["p50", "p90", "max"]);
    assert_eq!(keys(&s["end_skew_ms"]), ["p50"]);
    assert_eq!(
        keys(&s["verdicts"]),
        ["cpu-late", "gpu-side", "not-resolvable", "unknown"]
    );
    // Kernels are largest |delta| first.
    let deltas: Vec<f64> = d["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["delta_ms"].as_f64().unwrap().abs())
        .collect();
    assert!(deltas.windows(2).all(|w| w[0] >= w[1]), "{deltas:?}");
    // Reversed, the regressions carry their documented keys.
    let reversed = [
        "diff",
        &after("no_big_skew"),
        BEFORE,
        "--fail-on-regression",
        "0",
        "--format",
        "json",
    ];
    let d: Value = serde_json::from_str(&out_with(&reversed, 3)).unwrap();
    assert_eq!(
        keys(&d["regressions"][0]),
        ["metric", "key", "before", "after", "pct"]
    );
}

#[test]
fn different_device_sets_are_said_first_and_listed() {
    let d = diff_json(BEFORE, &after("fewer_devices"), &[]);
    assert_eq!(d["completeness"]["only_before"], serde_json::json!([7]));
    assert_eq!(d["completeness"]["only_after"], serde_json::json!([]));
    assert_eq!(
        d["completeness"]["before"]["missing_devices"],
        serde_json::json!([0])
    );
    let t = text(&["diff", BEFORE, &after("fewer_devices")]);
    let warning = t
        .find("! the captures cover different devices (8 expected before, 7 after)")
        .expect(&t);
    assert!(warning < t.find("\nSteps").unwrap(), "{t}");
    assert!(t.contains("devices expected only before: D7"), "{t}");
    assert!(t.contains("before only"), "{t}");
}

#[test]
fn text_fits_100_columns_and_wide_keeps_whole_names() {
    for name in PAIRS {
        for (a, b) in [
            (BEFORE.to_string(), after(name)),
            (after(name), BEFORE.to_string()),
        ] {
            // Exit 0 or 3: the text is the same either way.
            let o = rankline(&["diff", &a, &b, "--fail-on-regression", "1"]);
            assert!(matches!(o.status.code(), Some(0 | 3)), "{}", stderr(&o));
            let t = stdout(&o);
            for l in t.lines() {
                assert!(
                    l.chars().count() <= 100,
                    "{} columns: {l}",
                    l.chars().count()
                );
            }
            for section in [
                "Steps",
                "Kernels by name",
                "Kernel classes",
                "Overlap per device",
                "Skew per group",
                "Completeness",
                "Regressions",
            ] {
                assert!(t.contains(&format!("\n{section}")), "{section} missing");
            }
        }
    }
    let gemm = truth("slow_gemm")["scenario"]["kernel"]
        .as_str()
        .unwrap()
        .to_string();
    let t = text(&["diff", BEFORE, &after("slow_gemm")]);
    assert!(
        !t.contains(&gemm) && t.contains("sm90_xmma_gemm_bf16bf16_…"),
        "{t}"
    );
    let t = text(&["diff", BEFORE, &after("slow_gemm"), "--wide"]);
    assert!(t.contains(&gemm), "{t}");
    // The GEMM change (+3.2 %) is inside the capture's step spread (4 %).
    let line = t.lines().find(|l| l.contains(&gemm)).unwrap();
    assert!(line.ends_with("within noise"), "{line}");
}

#[test]
fn ops_sequence_pairing_and_noise_are_explained_in_text() {
    let t = text(&["diff", BEFORE, &after("no_big_skew")]);
    assert!(
        t.contains("Skew of s21 (before: s20, paired by op-sequence)"),
        "{t}"
    );
    // Unchanged groups are their summary row only.
    assert!(
        t.contains("groups whose figures did not change: s24, s28"),
        "{t}"
    );
    assert!(!t.contains("Skew of s24"), "{t}");
    // Notes wrap: read them as one line.
    let flat = t.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("within noise: a change smaller than the before capture's own step-to-step spread, (p90 − p50) / p50 of its steps = 4.0%"),
        "{t}"
    );
    let line = t
        .lines()
        .find(|l| l.trim_start().starts_with("big_events"))
        .unwrap();
    assert_eq!(
        line.split_whitespace().take(4).collect::<Vec<_>>(),
        ["big_events", "4", "0", "-4"]
    );
}

/// The README's example is real, its exit status too.
#[test]
fn the_readme_example_is_real_output() {
    let o = rankline(&[
        "diff",
        "fixtures/diff/no_big_skew.sqlite",
        "fixtures/megatron_tp8.sqlite",
        "--fail-on-regression",
        "5",
    ]);
    assert_eq!(o.status.code(), Some(3));
    let real = format!("{}{}", stdout(&o), stderr(&o));
    let readme = assert_readme_shows(
        "$ rankline diff fixtures/diff/no_big_skew.sqlite fixtures/megatron_tp8.sqlite --fail-on-regression 5",
        "$ echo $?",
        &real,
    );
    assert!(readme.starts_with("$ echo $?\n3\n"));
}

/// The diff counts each side's devices as `report summary` does: the same
/// lists in JSON, the summary's own sentence in text.
fn assert_devices_counted_as_the_summary_counts_them(input: &str) {
    let summary = json(&["report", "summary", input, "--no-cache", "--format", "json"]);
    let d = diff_json(input, input, &["--no-cache"]);
    for side in ["before", "after"] {
        for key in [
            "expected_devices",
            "devices_with_kernels",
            "missing_devices",
            "listed_unused_devices",
            "world_size",
        ] {
            assert_eq!(
                d["completeness"][side][key], summary[key],
                "{input}: {side} {key}"
            );
        }
    }
    let summary_text = text(&["report", "summary", input, "--no-cache"]);
    let sentence = summary_text
        .lines()
        .find_map(|l| l.trim().strip_prefix("devices: "))
        .expect(&summary_text)
        .to_string();
    let t = text(&["diff", input, input, "--no-cache"]);
    assert!(
        t.contains(&format!("devices before: {sentence}")),
        "{input}: {t}"
    );
}

#[test]
fn devices_are_counted_as_the_summary_counts_them() {
    for input in [BEFORE, "fixtures/multinode", "fixtures/per_rank"] {
        assert_devices_counted_as_the_summary_counts_them(input);
    }
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn real_exports_count_devices_as_the_summary_does() {
    // 2023.2 lists 4 GPUs and has kernels on one: expected and listed
    // differ, which is what the diff once counted as one.
    let f = real_profiles().join("nsys2023_2_cutlass_osrt.sqlite");
    let summary = json(&[
        "report",
        "summary",
        f.to_str().unwrap(),
        "--no-cache",
        "--format",
        "json",
    ]);
    assert_ne!(
        summary["expected_devices"].as_array().map(Vec::len),
        summary["devices"].as_array().map(Vec::len),
        "the export no longer lists unused GPUs: {summary}"
    );
    for f in sqlite_files(&real_profiles()) {
        assert_devices_counted_as_the_summary_counts_them(f.to_str().unwrap());
    }
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn real_exports_against_themselves_and_each_other() {
    let files = sqlite_files(&real_profiles());
    assert!(files.len() >= 2);
    for f in &files {
        let f = f.to_str().unwrap();
        let o = rankline(&["diff", f, f, "--no-cache", "--fail-on-regression", "0"]);
        assert_eq!(o.status.code(), Some(0), "{f}: {}", stderr(&o));
        let t = stdout(&o);
        assert!(t.contains("no change"), "{f}: {t}");
        assert!(t.lines().all(|l| l.chars().count() <= 100), "{f}: {t}");
    }
    // Two unrelated captures: every name is on one side or both, and the
    // sums add up.
    let (a, b) = (files[0].to_str().unwrap(), files[1].to_str().unwrap());
    let d = diff_json(a, b, &["--no-cache"]);
    let total = |side: &str| -> f64 {
        d["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k[side].as_f64().unwrap())
            .sum()
    };
    let classes = |side: &str| -> f64 {
        d["classes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["class"] != "memcpy" && c["class"] != "memset")
            .map(|c| c[side].as_f64().unwrap())
            .sum()
    };
    for side in ["before_ms", "after_ms"] {
        assert!((total(side) - classes(side)).abs() < 1e-6, "{side}");
    }
}

/// The diff's step account is each side's `report steps`: its parts'
/// means over the steps after warm-up and ranks, its causes in order.
#[test]
fn the_step_account_is_each_sides_report_steps() {
    let (before, after) = (
        "fixtures/jobs/3d_dedicated.sqlite",
        "fixtures/jobs/throttled.sqlite",
    );
    let d = common::json(&["diff", "--no-cache", "--format", "json", before, after]);
    for (side, file) in [("before", before), ("after", after)] {
        let r = common::json(&["report", "steps", "--no-cache", "--format", "json", file]);
        let kept: Vec<&serde_json::Value> = r["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["warmup"] == false)
            .collect();
        let got = &d["step_account"][side];
        assert_eq!(got["steps"].as_u64(), Some(kept.len() as u64));
        for part in [
            "compute_ms",
            "waiting_ms",
            "transfer_ms",
            "host_bound_ms",
            "idle_ms",
        ] {
            let cells: Vec<f64> = kept
                .iter()
                .flat_map(|s| s["ranks"].as_array().unwrap())
                .map(|r| r[part].as_f64().unwrap())
                .collect();
            let mean = cells.iter().sum::<f64>() / cells.len() as f64;
            let shown = got["mean_per_step_rank"][part].as_f64().unwrap();
            assert!(
                (shown - mean).abs() < 1e-5,
                "{side} {part}: {shown} vs {mean}"
            );
        }
        let causes = r["causes"].as_array().unwrap();
        let first = &got["causes"][0];
        assert_eq!(first["kind"], causes[0]["kind"], "{side}");
        assert_eq!(first["what"], causes[0]["what"], "{side}");
        assert_eq!(first["steps"], causes[0]["steps"], "{side}");
        assert!(
            (first["saves_ms"].as_f64().unwrap() - causes[0]["saves_ms"].as_f64().unwrap()).abs()
                < 1e-5
        );
    }
    // The planted stall is first to fix before, the throttled GPU after.
    assert_eq!(
        d["step_account"]["before"]["causes"][0]["what"],
        "pthread_cond_wait"
    );
    assert_eq!(d["step_account"]["after"]["causes"][0]["on"], "D6");
    assert_eq!(d["step_account"]["after"]["causes"][0]["steps"], 3);
    let text = common::stdout(&common::rankline(&["diff", "--no-cache", before, after]));
    assert!(text.contains("Step account (report steps)"), "{text}");
    assert!(
        text.contains("before, first to fix: os_wait on D3 (pthread_cond_wait)"),
        "{text}"
    );
}
