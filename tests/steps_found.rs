//! Steps without step ranges: found from the period of the collectives.
//! On every scenario job (whose steps the markers give), the same job read
//! with a marker that matches nothing finds its steps from the collectives
//! and says so: as many steps, in order, none overlapping the next, each
//! holding its marked step's middle, and the same first cause to fix;
//! with the markers, nothing changes.

mod common;

use serde_json::Value;

fn steps(file: &str, extra: &[&str]) -> Value {
    let mut args = vec!["report", "steps", "--no-cache", "--format", "json"];
    args.extend(extra);
    args.push(file);
    common::json(&args)
}

fn spans(v: &Value) -> Vec<(i64, i64)> {
    v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["start_ns"].as_i64().unwrap(),
                s["end_ns"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn without_markers_the_collectives_period_gives_the_steps() {
    let jobs = common::root().join("fixtures/jobs");
    let mut all = 0;
    for e in std::fs::read_dir(&jobs).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.ends_with(".json") || name.starts_with("boot43") || name == "scaled_rank" {
            continue;
        }
        let file = path.to_str().unwrap();
        let marked = steps(file, &[]);
        assert_eq!(marked["steps_from"]["source"], "markers", "{name}");
        let found = steps(file, &["--step-marker", "^no such range$"]);
        assert_eq!(found["steps_from"]["source"], "collectives", "{name}");
        assert!(found["steps_from"]["group"].is_string(), "{name}");
        let (m, f) = (spans(&marked), spans(&found));
        assert_eq!(f.len(), m.len(), "{name}: {f:?} found, {m:?} marked");
        for w in f.windows(2) {
            assert!(w[0].0 <= w[0].1 && w[0].1 <= w[1].0, "{name}: {f:?}");
        }
        // Each found step holds the middle of its marked one.
        for (i, (ms, fs)) in m.iter().zip(&f).enumerate() {
            let mid = (ms.0 + ms.1) / 2;
            assert!(
                fs.0 <= mid && mid <= fs.1,
                "{name} step {}: {fs:?} vs {ms:?}",
                i + 1
            );
        }
        // What to fix first does not hang on where the steps part.
        let first = |v: &Value| {
            let c = &v["causes"][0];
            (c["kind"].clone(), c["what"].clone(), c["device"].clone())
        };
        assert_eq!(first(&found), first(&marked), "{name}");
        all += 1;
    }
    assert!(all >= 20, "{all} jobs");
    // Said in the text.
    let text = common::stdout(&common::rankline(&[
        "report",
        "steps",
        "--no-cache",
        "--step-marker",
        "^no such range$",
        "fixtures/jobs/3d_dedicated.sqlite",
    ]));
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("steps found from the period of the collectives"),
        "{text}"
    );
}

#[test]
fn one_group_alone_has_no_period() {
    // why.sqlite: no step ranges, and its collectives give no period the
    // other groups confirm.
    let v = steps("fixtures/why.sqlite", &[]);
    assert!(v["steps"].as_array().unwrap().is_empty(), "{v}");
    assert!(v["steps_from"].is_null(), "{v}");
}
