//! `report stats` against plain SQL over the raw tables, on every fixture
//! and real export: for each table (kernels, NVTX, API, OS runtime,
//! copies) the rows' figures — count, total, min, max, median, sample
//! stddev — are those SQL's durations give, grouped as nsys groups them
//! (kernels by demangled name, else short; API names without nsys's six-character `_vNNNN`).

mod common;

use common::*;
use rusqlite::Connection;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// count, total, min, max, 2 × median (an integer), stddev (µs, rounded).
type Figures = (usize, i64, i64, i64, i64, i64);

fn figures(mut d: Vec<i64>) -> Figures {
    d.sort_unstable();
    let n = d.len();
    let total: i64 = d.iter().sum();
    let mean = total as f64 / n as f64;
    let twice_median = if n % 2 == 1 {
        2 * d[n / 2]
    } else {
        d[n / 2 - 1] + d[n / 2]
    };
    let sd = if n > 1 {
        (d.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    (
        n,
        total,
        d[0],
        d[n - 1],
        twice_median,
        (sd / 1e3).round() as i64,
    )
}

fn has_table(db: &Connection, t: &str) -> bool {
    db.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [t],
        |r| r.get::<_, i64>(0),
    )
    .unwrap()
        > 0
}

fn has_column(db: &Connection, t: &str, c: &str) -> bool {
    let mut st = db.prepare(&format!("PRAGMA table_info({t})")).unwrap();
    let cols: Vec<String> = st
        .query_map([], |r| r.get::<_, String>(1))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    cols.iter().any(|x| x == c)
}

/// (group key, duration) of every row `sql` returns, grouped.
fn grouped(db: &Connection, sql: &str) -> Vec<Figures> {
    grouped_as(db, sql, |k| k.to_string())
}

/// As [`grouped`], each key first made what nsys groups by.
fn grouped_as(db: &Connection, sql: &str, key: impl Fn(&str) -> String) -> Vec<Figures> {
    let mut st = db.prepare(sql).unwrap();
    let mut by: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    let rows = st
        .query_map([], |r| {
            Ok((r.get::<_, Option<String>>(0)?, r.get::<_, i64>(1)?))
        })
        .unwrap();
    for row in rows {
        let (k, d) = row.unwrap();
        by.entry(key(&k.unwrap_or_default())).or_default().push(d);
    }
    let mut out: Vec<Figures> = by.into_values().map(figures).collect();
    out.sort();
    out
}

fn truth(file: &Path, of: &str) -> Vec<Figures> {
    let db = Connection::open(file).unwrap();
    // nsys's cuda_api_sum: `substr(name, -6, 2) = '_v'` drops six characters
    let strip_version = regex::Regex::new(r"_v.{4}$").unwrap();
    match of {
        "kernels" if has_table(&db, "CUPTI_ACTIVITY_KIND_KERNEL") => {
            let name = if has_column(&db, "CUPTI_ACTIVITY_KIND_KERNEL", "demangledName") {
                "COALESCE(d.value, s.value)"
            } else {
                "s.value"
            };
            let join = if name.starts_with("COALESCE") {
                "LEFT JOIN StringIds d ON d.id = k.demangledName"
            } else {
                ""
            };
            grouped(
                &db,
                &format!(
                    "SELECT {name}, k.\"end\" - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k {join} \
                     LEFT JOIN StringIds s ON s.id = k.shortName"
                ),
            )
        }
        "copies" => {
            let mut d = Vec::new();
            if has_table(&db, "CUPTI_ACTIVITY_KIND_MEMCPY") {
                d.extend(grouped(
                    &db,
                    "SELECT 'memcpy ' || copyKind, \"end\" - start FROM CUPTI_ACTIVITY_KIND_MEMCPY",
                ));
            }
            if has_table(&db, "CUPTI_ACTIVITY_KIND_MEMSET") {
                d.extend(grouped(
                    &db,
                    "SELECT 'memset', \"end\" - start FROM CUPTI_ACTIVITY_KIND_MEMSET",
                ));
            }
            d.sort();
            d
        }
        "api" if has_table(&db, "CUPTI_ACTIVITY_KIND_RUNTIME") => grouped_as(
            &db,
            "SELECT s.value, r.\"end\" - r.start FROM CUPTI_ACTIVITY_KIND_RUNTIME r \
             JOIN StringIds s ON s.id = r.nameId",
            |n| strip_version.replace(n, "").into_owned(),
        ),
        "nvtx" if has_table(&db, "NVTX_EVENTS") => {
            let text = if has_column(&db, "NVTX_EVENTS", "textId") {
                "COALESCE(n.text, s.value)"
            } else {
                "n.text"
            };
            let join = if text.starts_with("COALESCE") {
                "LEFT JOIN StringIds s ON s.id = n.textId"
            } else {
                ""
            };
            grouped(
                &db,
                &format!(
                    "SELECT {text}, n.\"end\" - n.start FROM NVTX_EVENTS n {join} \
                     WHERE n.eventType IN (59, 60) AND n.\"end\" IS NOT NULL"
                ),
            )
        }
        // the calls whose times can be right (the others are left out)
        // as osrt_sum: the calls (eventClass 27), not nsys's markers
        "osrt" if has_table(&db, "OSRT_API") => grouped(
            &db,
            &format!(
                "SELECT s.value, o.\"end\" - o.start FROM OSRT_API o \
                 JOIN StringIds s ON s.id = o.nameId WHERE {}{}",
                can_be_right(&db, "o.start", "o.\"end\""),
                if has_column(&db, "OSRT_API", "eventClass") {
                    " AND o.eventClass = 27"
                } else {
                    ""
                }
            ),
        ),
        _ => Vec::new(),
    }
}

/// The JSON rows' figures, back in ns.
fn reported(file: &Path, of: &str) -> Vec<Figures> {
    let v = json(&[
        "report",
        "stats",
        "--of",
        of,
        "--no-cache",
        "--format",
        "json",
        file.to_str().unwrap(),
    ]);
    let ns = |x: &serde_json::Value| (x.as_f64().unwrap() * 1e6).round() as i64;
    let mut out: Vec<Figures> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["count"].as_u64().unwrap() as usize,
                ns(&r["total_ms"]),
                ns(&r["min_ms"]),
                ns(&r["max_ms"]),
                (r["median_ms"].as_f64().unwrap() * 2e6).round() as i64,
                (r["stddev_ms"].as_f64().unwrap() * 1e3).round() as i64,
            )
        })
        .collect();
    out.sort();
    out
}

fn check(files: &[PathBuf]) -> usize {
    let mut compared = 0;
    for f in files {
        for of in ["kernels", "nvtx", "api", "osrt", "copies"] {
            let want = truth(f, of);
            assert_eq!(reported(f, of), want, "{} --of {of}", f.display());
            compared += want.len();
        }
    }
    compared
}

#[test]
fn stats_equal_sql_on_every_fixture() {
    let files = sqlite_files(&root().join("fixtures"));
    assert!(files.len() >= 7);
    assert!(check(&files) > 50);
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn stats_equal_sql_on_every_real_export() {
    assert!(check(&sqlite_files(&real_profiles())) > 50);
}

/// By device and by stream, the rows split a name's figures and sum back
/// to it; `--by` on CPU events is a usage error; CSV has one header row
/// and a row per table row.
#[test]
fn by_device_and_stream_split_the_rows_and_csv_follows_the_json() {
    let f = root().join("fixtures/megatron_tp8.sqlite");
    let f = f.to_str().unwrap();
    let rows = |by: &str| {
        json(&[
            "report",
            "stats",
            "--by",
            by,
            "--no-cache",
            "--format",
            "json",
            f,
        ])["rows"]
            .as_array()
            .unwrap()
            .clone()
    };
    let count_of = |rows: &[serde_json::Value]| -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for r in rows {
            *m.entry(r["name"].as_str().unwrap().to_string())
                .or_default() += r["count"].as_u64().unwrap();
        }
        m
    };
    let (name, dev, stream) = (rows("name"), rows("device"), rows("stream"));
    assert!(dev.len() > name.len() && stream.len() >= dev.len());
    assert_eq!(count_of(&name), count_of(&dev));
    assert_eq!(count_of(&name), count_of(&stream));
    assert!(
        stream
            .iter()
            .all(|r| r["stream"].is_u64() && !r["device"].is_null())
    );
    let o = rankline(&[
        "report",
        "stats",
        "--of",
        "nvtx",
        "--by",
        "device",
        "--no-cache",
        f,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--by device is for kernels and copies"),
        "{}",
        stderr(&o)
    );
    let csv = text(&["report", "stats", "--no-cache", "--format", "csv", f]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "name,time_pct,total_ms,count,avg_ms,median_ms,min_ms,max_ms,stddev_ms"
    );
    assert_eq!(lines.len(), name.len() + 1);
    assert!(lines[1..].iter().all(|l| !l.contains(" ms")));
}

/// `--window` keeps the events wholly inside it, as SQL's `start >= a AND
/// end <= b` on a single file (its own clock is the reference).
#[test]
fn a_window_keeps_the_events_wholly_inside_it() {
    let f = root().join("fixtures/megatron_tp8.sqlite");
    let db = Connection::open(&f).unwrap();
    let (lo, hi) = kernel_span(&db);
    let (a, b) = (lo + (hi - lo) / 4, lo + (hi - lo) / 2);
    let want: i64 = db
        .query_row(
            "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start >= ?1 AND \"end\" <= ?2",
            [a, b],
            |r| r.get(0),
        )
        .unwrap();
    let secs = window_seconds;
    let v = json(&[
        "report",
        "stats",
        "--no-cache",
        "--format",
        "json",
        "--window",
        &secs(a),
        &secs(b),
        f.to_str().unwrap(),
    ]);
    let got: u64 = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["count"].as_u64().unwrap())
        .sum();
    assert!(want > 100, "{want}");
    assert_eq!(got as i64, want);
}

/// NVTX rows carry their domain as nsys's `nvtx_sum` tags them:
/// `domain:range`, `:range` in the default domain (the domain named by its
/// process's domain-create event), so one name in two domains is two rows.
#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn nvtx_rows_are_named_as_nsys_tags_them() {
    let mut domains_seen = 0;
    for f in sqlite_files(&real_profiles()) {
        let db = rusqlite::Connection::open(&f).unwrap();
        if !has_table(&db, "NVTX_EVENTS") || !has_column(&db, "NVTX_EVENTS", "textId") {
            continue;
        }
        let sql = "WITH domains AS (
                SELECT ne.domainId AS id, ne.globalTid AS globalTid,
                       coalesce(sid.value, ne.text) AS name
                FROM NVTX_EVENTS ne LEFT JOIN StringIds sid ON ne.textId = sid.id
                WHERE ne.eventType = 75 GROUP BY 1, 2)
            SELECT DISTINCT coalesce(d.name, '') || ':' || coalesce(sid.value, ne.text, '')
            FROM NVTX_EVENTS ne
            LEFT JOIN domains d ON ne.domainId = d.id
                AND (ne.globalTid & 0x0000FFFFFF000000) = (d.globalTid & 0x0000FFFFFF000000)
            LEFT JOIN StringIds sid ON ne.textId = sid.id
            WHERE ne.eventType IN (59, 60) AND ne.\"end\" IS NOT NULL";
        let want: std::collections::BTreeSet<String> = db
            .prepare(sql)
            .unwrap()
            .query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        domains_seen += want.iter().filter(|t| !t.starts_with(':')).count();
        let p = f.to_str().unwrap();
        let got: std::collections::BTreeSet<String> = json(&[
            "report",
            "stats",
            "--of",
            "nvtx",
            "--no-cache",
            "--format",
            "json",
            p,
        ])["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap().to_string())
            .collect();
        let extra: Vec<&String> = got.difference(&want).take(5).collect();
        let lacking: Vec<&String> = want.difference(&got).take(5).collect();
        assert!(
            extra.is_empty() && lacking.is_empty(),
            "{}: shown but not nsys's {extra:?}; nsys's but not shown {lacking:?}",
            f.display()
        );
    }
    assert!(domains_seen > 0, "a real export with a named NVTX domain");
}
