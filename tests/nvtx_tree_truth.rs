//! `report nvtx-tree`: every push/pop range's count of launched kernels
//! and GPU time equal plain SQL — the kernels whose launch call (same
//! process and correlation id) ran on the range's thread wholly inside
//! the range, and the union of their [start, end) — on the fixture and on
//! every real export with NVTX push/pop ranges.

mod common;

use common::*;
use rusqlite::Connection;
use std::collections::BTreeMap;

/// (tid, start, end) → (kernels, gpu ns), by SQL.
fn by_sql(db: &Connection) -> BTreeMap<(i64, i64, i64), (usize, i64)> {
    let mut out = BTreeMap::new();
    let mut ranges = db
        .prepare(
            "SELECT globalTid, start, \"end\" FROM NVTX_EVENTS
             WHERE eventType = 59 AND \"end\" IS NOT NULL AND \"end\" >= start",
        )
        .unwrap();
    let mut kernels = db
        .prepare(
            "SELECT k.start, k.\"end\" FROM CUPTI_ACTIVITY_KIND_KERNEL k
             JOIN CUPTI_ACTIVITY_KIND_RUNTIME r
               ON r.correlationId = k.correlationId
              AND (r.globalTid >> 24) = (k.globalPid >> 24)
             WHERE r.globalTid = ?1 AND r.start >= ?2 AND r.\"end\" <= ?3",
        )
        .unwrap();
    let rows: Vec<(i64, i64, i64)> = ranges
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (gtid, s, e) in rows {
        let mut spans: Vec<(i64, i64)> = kernels
            .query_map([gtid, s, e], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        spans.sort();
        let (mut total, mut cur) = (0i64, None::<(i64, i64)>);
        for (a, b) in spans.iter().copied() {
            cur = match cur {
                Some((ca, cb)) if a <= cb => Some((ca, cb.max(b))),
                Some((ca, cb)) => {
                    total += cb - ca;
                    Some((a, b))
                }
                None => Some((a, b)),
            };
        }
        if let Some((ca, cb)) = cur {
            total += cb - ca;
        }
        out.insert((gtid & 0xFF_FFFF, s, e), (spans.len(), total));
    }
    out
}

#[test]
fn kernels_and_gpu_time_per_range_equal_sql() {
    let mut files = vec![root().join("fixtures/megatron_tp8.sqlite")];
    files.extend(sqlite_files(&real_profiles()).into_iter().filter(|f| {
        Connection::open(f)
            .unwrap()
            .query_row(
                "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59",
                [],
                |r| r.get::<_, i64>(0),
            )
            .is_ok_and(|n| n > 0)
    }));
    assert!(files.len() >= 5, "{files:?}");
    for f in &files {
        let v = json(&[
            "report",
            "nvtx-tree",
            "--no-cache",
            "--format",
            "json",
            f.to_str().unwrap(),
        ]);
        let got: BTreeMap<(i64, i64, i64), (usize, i64)> = nvtx_ranges(&v)
            .iter()
            .map(|r| {
                let key = (
                    r["thread"].as_i64().unwrap(),
                    r["start_ns"].as_i64().unwrap(),
                    r["end_ns"].as_i64().unwrap(),
                );
                let gpu_ns = (r["gpu_ms"].as_f64().unwrap() * 1e6).round() as i64;
                (key, (r["kernels"].as_u64().unwrap() as usize, gpu_ns))
            })
            .collect();
        let want = by_sql(&Connection::open(f).unwrap());
        assert_eq!(got.len(), want.len(), "{}", f.display());
        let with_kernels = want.values().filter(|w| w.0 > 0).count();
        assert!(
            with_kernels > 0,
            "{}: no range launched a kernel",
            f.display()
        );
        for (k, w) in &want {
            assert_eq!(got.get(k), Some(w), "{} range {k:?}", f.display());
        }
    }
}

#[test]
fn thread_and_depth_narrow_the_tree_and_text_fits() {
    let f = "fixtures/megatron_tp8.sqlite";
    let v = json(&[
        "report",
        "nvtx-tree",
        "--no-cache",
        "--format",
        "json",
        "--thread",
        "T4102",
        "--depth",
        "1",
        f,
    ]);
    let ranges = v["ranges"].as_array().unwrap();
    assert!(!ranges.is_empty());
    assert!(
        ranges
            .iter()
            .all(|r| r["thread"] == 4102 && r["children"].as_array().unwrap().is_empty())
    );
    assert!(
        ranges
            .iter()
            .all(|r| r["name"] == "train_step" || r["name"] == "prefetch_batch"),
        "{ranges:?}"
    );
    let o = rankline(&["report", "nvtx-tree", "--no-cache", "--thread", "T9", f]);
    let text = stdout(&o);
    assert!(text.contains("--thread T9: no thread"), "{text}");
    let text = text_of(f);
    assert!(text.lines().all(|l| l.chars().count() <= 100));
}

fn text_of(f: &str) -> String {
    text(&["report", "nvtx-tree", "--no-cache", f])
}
