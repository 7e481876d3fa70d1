//! The options `nsys export` records in `META_DATA_EXPORT`
//! (`EXPORT_PARAM_*`): read from every real export as plain SQL gives
//! them, and a window (`--times`), a subset of tables (`--tables`), a shift
//! (`--ts-shift`) or normalised timestamps (`--ts-normalize`) said once per
//! file in `summary`, never as control sequences.

mod common;
use common::*;
use rusqlite::Connection;
use serde_json::Value;

fn summary(path: &str) -> Value {
    json(&["report", "summary", "--format", "json", "--no-cache", path])
}

/// The value plain SQL gives for `name` (the table is `EXPORT_META_DATA`
/// before 2023.2).
fn param(c: &Connection, name: &str) -> Option<String> {
    ["META_DATA_EXPORT", "EXPORT_META_DATA"]
        .iter()
        .find_map(|t| {
            c.query_row(
                &format!("SELECT value FROM {t} WHERE name = ?1"),
                [name],
                |r| r.get(0),
            )
            .ok()
        })
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn every_real_export_reads_as_plain_sql_gives_its_options() {
    let mut with_params = 0;
    for f in sqlite_files(&real_profiles()) {
        let path = f.display().to_string();
        let c = Connection::open(&f).unwrap();
        let s = summary(&path);
        let got = &s["files"][0]["export_params"];
        let flag = |name: &str| param(&c, name).map(|v| Value::Bool(v == "true"));
        let expect = serde_json::json!({
            "include_blobs": flag("EXPORT_PARAM_INCLUDE_BLOBS"),
            "time_normalize": flag("EXPORT_PARAM_TIME_NORMALIZE"),
            "time_shift_ns": param(&c, "EXPORT_PARAM_TIME_SHIFT").map(|v| v.parse::<i64>().unwrap()),
            "tables": param(&c, "EXPORT_PARAM_TABLES_TO_EXPORT"),
            "times": param(&c, "EXPORT_PARAM_TIMES_TO_EXPORT"),
        });
        assert_eq!(got, &expect, "{path}");
        with_params += usize::from(!got["times"].is_null());
        // All exported whole, as they were: nothing to say.
        let warned = s["warnings"].to_string();
        assert!(!warned.contains("exported with --"), "{path}: {warned}");
        assert!(!warned.contains("at export"), "{path}: {warned}");
    }
    assert!(with_params >= 5, "the 2023.3+ exports record their options");
    // A 2026.2 export with NCCL's schemas and no payload data records why.
    let nccl = real_profiles().join("nsys2026_2gpu_nccl_sendrecv.sqlite");
    let said = text(&["report", "nccl", "--no-cache", &nccl.display().to_string()]);
    assert!(
        said.replace("\n    ", " ")
            .contains("no payload data (exported with --include-blobs=false)"),
        "{said}"
    );
}

#[test]
fn a_window_a_subset_a_shift_and_normalised_times_are_each_said_once() {
    let f = copy_fixture("export_params", "megatron_tp8.sqlite");
    Connection::open(&f)
        .unwrap()
        .execute_batch(
            "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PARAM_TIMES_TO_EXPORT', '1s/2s');
             INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PARAM_TABLES_TO_EXPORT', 'cuda_gpu_trace,nvtx' || char(27) || '[31m');
             INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PARAM_TIME_SHIFT', '2500000');
             INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PARAM_TIME_NORMALIZE', 'true');",
        )
        .unwrap();
    let path = f.display().to_string();
    let s = summary(&path);
    let warnings: Vec<&str> = s["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    let one = |needle: &str| {
        let hits: Vec<&&str> = warnings.iter().filter(|w| w.contains(needle)).collect();
        assert_eq!(hits.len(), 1, "{needle}: {warnings:#?}");
        assert!(hits[0].starts_with(&path), "{}", hits[0]);
    };
    one("exported with --times 1s/2s: only the events of that window");
    one("exported with --tables cuda_gpu_trace,nvtx");
    one("timestamps shifted by 2500000 ns at export (--ts-shift)");
    one("timestamps normalised at export (--ts-normalize)");
    let summary_text = text(&["report", "summary", "--no-cache", &path]);
    assert!(
        !summary_text.contains('\x1b'),
        "a control character reached the output"
    );
    assert_eq!(
        s["files"][0]["export_params"]["time_shift_ns"],
        Value::from(2_500_000)
    );
    // `clock` says what the export did to the file's timestamps.
    let clock = json(&["report", "clock", "--format", "json", "--no-cache", &path]);
    assert_eq!(
        clock["files"][0]["export_time"],
        serde_json::json!({"normalized": true, "shift_ns": 2_500_000})
    );
    let said = text(&["report", "clock", "--no-cache", &path]).replace("\n    ", " ");
    assert!(
        said.contains("timestamps shifted by 2500000 ns at export"),
        "{said}"
    );
    assert!(said.contains("timestamps normalised at export"), "{said}");
}

/// `report clock` names each file's alignment source: the reference, the
/// collective ends that refined it, or — placed by its stamps alone — UTC,
/// or "vclock-or-utc" for timestamps normalised at export (the export does
/// not record whether vClock data was there).
#[test]
fn each_files_alignment_source_is_named() {
    let a = root()
        .join("fixtures/two_node_a.sqlite")
        .display()
        .to_string();
    let b = copy_fixture("alignment_source", "two_node_b.sqlite");
    let plain = copy_fixture("alignment_source_plain", "two_node_b.sqlite");
    Connection::open(&b)
        .unwrap()
        .execute_batch(
            "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PARAM_TIME_NORMALIZE', 'true');",
        )
        .unwrap();
    let sources = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["report", "clock", "--format", "json", "--no-cache"];
        all.extend_from_slice(args);
        json(&all)["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["alignment_source"].as_str().unwrap().to_string())
            .collect()
    };
    let (b, plain) = (b.display().to_string(), plain.display().to_string());
    assert_eq!(sources(&[&a, &b]), ["reference", "collective-ends"]);
    assert_eq!(
        sources(&["--align", "utc", &a, &b]),
        ["reference", "vclock-or-utc"]
    );
    assert_eq!(
        sources(&["--align", "utc", &a, &plain]),
        ["reference", "utc"]
    );
}
