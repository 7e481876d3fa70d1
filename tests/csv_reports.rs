//! `--format csv` on every tabular report: each table, read back by an
//! independent RFC 4180 reader, holds exactly the JSON's rows and values
//! (machine units, no separators); several tables go to `--out-dir` or
//! one is named by `--table`; what cannot be met is one line, exit 2.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeMap;

const MEGATRON: &str = "fixtures/megatron_tp8.sqlite";
const SECTIONS: [&str; 10] = [
    "summary",
    "clock",
    "nccl",
    "overlap",
    "skew",
    "launch",
    "why",
    "anomalies",
    "behind",
    "stats",
];

/// Header and records of a CSV text, each record as long as the header.
fn read(csv_text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(csv_text.as_bytes());
    let header = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|rec| rec.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

/// The JSON value's text as the CSV must write it (text a spreadsheet
/// would evaluate begins with `'`).
fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) if s.starts_with(['=', '+', '-', '@']) && s.parse::<f64>().is_err() => {
            format!("'{s}")
        }
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(cell).collect::<Vec<_>>().join(";"),
        other => other.to_string(),
    }
}

/// The value at a flattened column (`start_skew_ms.p50`) of a JSON row;
/// keys may hold dots themselves (`late_counts.node00.cluster:0`).
fn at<'a>(row: &'a Value, column: &str) -> &'a Value {
    if let Some(v) = row.get(column) {
        return v;
    }
    for (i, _) in column.match_indices('.') {
        if let Some(v) = row.get(&column[..i]) {
            let inner = at(v, &column[i + 1..]);
            if !inner.is_null() {
                return inner;
            }
        }
    }
    &Value::Null
}

/// Writes every table of `args` under a fresh directory: file name → text.
fn tables_of(test: &str, args: &[&str]) -> BTreeMap<String, String> {
    let dir = temp_dir(test);
    let mut all = args.to_vec();
    all.extend(["--format", "csv", "--out-dir", dir.to_str().unwrap()]);
    let o = rankline(&all);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let listed = stdout(&o);
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        assert!(listed.contains(&format!("{name}.csv (")), "{listed}");
        out.insert(name, std::fs::read_to_string(&path).unwrap());
    }
    assert_eq!(listed.lines().count(), out.len(), "a line per file");
    out
}

/// Every top-level table of every section equals the JSON's array, row
/// by row and cell by cell, on fixtures of one file, of many, of a hang.
#[test]
fn every_table_holds_the_json_rows_and_values() {
    for input in [MEGATRON, "fixtures/multinode", "fixtures/per_rank"] {
        for section in SECTIONS {
            let args = ["report", section, input, "--no-cache"];
            let tables = tables_of(&format!("csv-{section}"), &args);
            let mut j = args.to_vec();
            j.extend(["--format", "json"]);
            let json = json(&j);
            let mut checked = 0;
            for (name, text) in &tables {
                let path: Vec<&str> = name.split('.').skip(1).collect();
                let Some(Value::Array(rows)) = path
                    .iter()
                    .try_fold(&json, |v, k| v.get(*k))
                    .map(Some)
                    .unwrap_or(None)
                else {
                    continue; // nested in rows: checked below by its count
                };
                checked += 1;
                let (header, records) = read(text);
                assert_header_when_empty(name, &header, rows.is_empty());
                if rows.is_empty() {
                    assert!(records.is_empty(), "{input} {name}: {text}");
                    continue;
                }
                assert_eq!(records.len(), rows.len(), "{input} {name}");
                for (row, rec) in rows.iter().zip(&records) {
                    for (c, got) in header.iter().zip(rec) {
                        let want = at(row, c);
                        if want.is_object()
                            || want.is_array() && want.get(0).is_some_and(Value::is_object)
                        {
                            continue;
                        }
                        // Machine units: a figure is a plain number, the
                        // JSON's (read back within its last digit: the
                        // test's JSON reader rounds, not the CSV).
                        if let Some(w) = want.as_f64() {
                            let g: f64 = got.parse().unwrap_or(f64::NAN);
                            assert!(
                                (g - w).abs() <= 1e-12 * w.abs().max(1.0),
                                "{input} {name} {c}: {got} vs {w}"
                            );
                        } else {
                            assert_eq!(got, &cell(want), "{input} {name} column {c}");
                        }
                    }
                }
            }
            assert!(checked > 0 || tables.is_empty(), "{input} {section}");
        }
    }
}

/// A top-level table's header when it has no rows is known, and its
/// columns are in every header the table has with rows, in order.
fn assert_header_when_empty(name: &str, header: &[String], empty: bool) {
    let when_empty = rankline::report::csv_columns::when_empty(name)
        .unwrap_or_else(|| panic!("{name}: no header for when it has no rows"));
    if empty {
        assert_eq!(header, when_empty, "{name}");
    } else {
        let mut columns = header.iter();
        for c in when_empty {
            assert!(columns.any(|h| h == c), "{name}: {c} not in {header:?}");
        }
    }
}

/// The sections not in `SECTIONS`, and `diff`: an empty table is written
/// with its header (it was a 0-byte file), every table that may be empty
/// has one.
#[test]
fn empty_tables_have_their_header() {
    let runs: [&[&str]; 5] = [
        &["report", "stragglers", "fixtures/two_node_a.sqlite"],
        &["report", "nvtx-tree", "fixtures/two_node_a.sqlite"],
        &["report", "bookmarks", "fixtures/two_node_a.sqlite"],
        &["report", "all", "fixtures/two_node_a.sqlite"],
        &["diff", MEGATRON, "fixtures/diff/slow_gemm.sqlite"],
    ];
    let mut empty = 0;
    for args in runs {
        let mut all = args.to_vec();
        all.push("--no-cache");
        for (name, text) in tables_of("csv-empty-tables", &all) {
            assert!(!text.is_empty(), "{args:?}: {name}.csv is empty");
            let (header, records) = read(&text);
            let top = rankline::report::csv_columns::when_empty(&name).is_some();
            if records.is_empty() || top {
                assert_header_when_empty(&name, &header, records.is_empty());
            }
            empty += usize::from(records.is_empty());
        }
    }
    assert!(empty >= 5, "{empty} empty tables seen");
}

/// Kernel and NVTX names a spreadsheet would evaluate are written as text
/// (a leading `'`); numbers, negative ones too, stay numbers.
#[test]
fn names_a_spreadsheet_would_evaluate_are_text() {
    let d = temp_dir("csv-formulas");
    let f = d.join("in.sqlite");
    std::fs::copy(root().join("fixtures/two_node_a.sqlite"), &f).unwrap();
    let db = rusqlite::Connection::open(&f).unwrap();
    // Short and demangled names alike (reports show the demangled).
    let sql = "UPDATE StringIds SET value = '=HYPERLINK(\"http://x\",\"y\")'
           WHERE id IN (SELECT k.%s FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s
                        ON s.id = k.shortName WHERE s.value = 'vectorized_elementwise_kernel');
         UPDATE StringIds SET value = '@SUM(1+1)*cmd|'' /C calc''!A0'
           WHERE id IN (SELECT k.%s FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s
                        ON s.id = k.shortName WHERE s.value = 'multi_tensor_apply_kernel');";
    for column in ["demangledName", "shortName"] {
        db.execute_batch(&sql.replace("%s", column)).unwrap();
    }
    drop(db);
    let o = rankline(&[
        "report",
        "stats",
        "--no-cache",
        "--format",
        "csv",
        f.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (header, records) = read(&stdout(&o));
    assert_eq!(header[0], "name");
    let names: Vec<&str> = records.iter().map(|r| r[0].as_str()).collect();
    assert!(
        names.contains(&"'=HYPERLINK(\"http://x\",\"y\")"),
        "{names:?}"
    );
    assert!(names.contains(&"'@SUM(1+1)*cmd|' /C calc'!A0"), "{names:?}");
    assert!(
        names.iter().all(|n| !n.starts_with(['=', '+', '-', '@'])),
        "{names:?}"
    );
    // A negative figure is a number, as written.
    let o = rankline(&[
        "report",
        "clock",
        "--no-cache",
        "--format",
        "csv",
        "--table",
        "files",
        "fixtures/multinode",
    ]);
    let (header, records) = read(&stdout(&o));
    let at = header.iter().position(|h| h == "offset_ms").unwrap();
    let offsets: Vec<&str> = records.iter().map(|r| r[at].as_str()).collect();
    assert!(
        offsets
            .iter()
            .all(|o| o.is_empty() || o.parse::<f64>().is_ok()),
        "{offsets:?}"
    );
}

/// A table nested in rows (a device's streams' collective types) has a
/// row per nested item, each repeating its parents' fields.
#[test]
fn a_nested_table_repeats_its_parents_fields() {
    let args = ["report", "nccl", MEGATRON, "--no-cache"];
    let tables = tables_of("csv-nested", &args);
    let mut j = args.to_vec();
    j.extend(["--format", "json"]);
    let json = json(&j);
    let mut want = Vec::new();
    for d in json["devices"].as_array().unwrap() {
        for s in d["streams"].as_array().unwrap() {
            for op in s["ops"].as_array().unwrap() {
                want.push((
                    cell(&d["device"]),
                    cell(&s["stream"]),
                    cell(&op["op"]),
                    cell(&op["total_ms"]),
                ));
            }
        }
    }
    let (header, rows) = read(&tables["nccl.devices.streams.ops"]);
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let got: Vec<_> = rows
        .iter()
        .map(|r| {
            (
                r[col("device")].clone(),
                r[col("stream")].clone(),
                r[col("op")].clone(),
                r[col("total_ms")].clone(),
            )
        })
        .collect();
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

/// One table goes to stdout as it would to a file; `--table` takes the
/// name or its end; `diff` has tables too.
#[test]
fn one_table_prints_and_table_picks_one() {
    let overlap = text(&[
        "report",
        "overlap",
        MEGATRON,
        "--no-cache",
        "--format",
        "csv",
    ]);
    let files = tables_of("csv-one", &["report", "overlap", MEGATRON, "--no-cache"]);
    assert_eq!(files.len(), 1);
    assert_eq!(files["overlap.devices"], overlap);
    assert!(overlap.starts_with("device,span_ms,compute_only_ms,nccl_only_ms,"));
    for name in ["groups", "skew.groups"] {
        let t = text(&[
            "report",
            "skew",
            MEGATRON,
            "--no-cache",
            "--format",
            "csv",
            "--table",
            name,
        ]);
        let (header, rows) = read(&t);
        assert_eq!(header[0], "key");
        assert_eq!(rows.len(), 3, "three groups");
    }
    let d = text(&[
        "diff",
        "fixtures/diff/no_big_skew.sqlite",
        MEGATRON,
        "--no-cache",
        "--format",
        "csv",
        "--table",
        "kernels",
    ]);
    let (header, rows) = read(&d);
    assert!(header.iter().any(|h| h == "name"), "{header:?}");
    assert!(!rows.is_empty());
}

/// What the tables cannot meet: one line naming them, exit 2, no output.
#[test]
fn a_choice_the_tables_cannot_meet_is_one_line() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["report", "skew", MEGATRON, "--no-cache", "--format", "csv"],
            "skew.groups",
        ),
        (
            &[
                "report",
                "skew",
                MEGATRON,
                "--no-cache",
                "--format",
                "csv",
                "--table",
                "nope",
            ],
            "--table nope: report skew has no such table",
        ),
        (
            &[
                "report",
                "skew",
                MEGATRON,
                "--no-cache",
                "--table",
                "groups",
            ],
            "--table and --out-dir are for --format csv",
        ),
        (
            &["report", "all", MEGATRON, "--no-cache", "--format", "csv"],
            "--out-dir DIR",
        ),
        (
            &[
                "diff",
                MEGATRON,
                MEGATRON,
                "--no-cache",
                "--format",
                "csv",
                "--table",
                "big_events",
            ],
            "--table big_events: names 2 tables of diff (diff.skew.before.big_events, diff.skew.after.big_events)",
        ),
    ];
    for (args, says) in cases {
        let o = rankline(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(stdout(&o).is_empty());
    }
}
