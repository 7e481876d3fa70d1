//! `report nccl`'s NIC throughput per host and collective type on
//! `fixtures/nic/` (the two-node fixture), whose hosts count InfiniBand bytes every
//! millisecond (`nsys profile --nic-metrics`): each row equals what plain
//! SQL on the file gives — the intervals whose middle falls while one of
//! the host's NCCL kernels of that op ran, and those while none did.

mod common;
use common::*;
use std::collections::BTreeMap;

const FILES: [&str; 2] = [
    "fixtures/nic/two_node_a.sqlite",
    "fixtures/nic/two_node_b.sqlite",
];

/// (counter, start, end, bytes) of the file's byte counters, and its NCCL
/// kernels (start, end, name).
type Interval = (String, i64, i64, f64);
type Kernel = (i64, i64, String);

fn read(file: &str) -> (Vec<Interval>, Vec<Kernel>) {
    let intervals = sql_rows(
        file,
        "SELECT n.name, m.start, m.end, m.value FROM NET_NIC_METRIC m
         JOIN TARGET_INFO_NETWORK_METRICS n USING (metricsListId, metricsIdx)
         WHERE n.name LIKE '%Bytes%'",
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    );
    let kernels = sql_rows(
        file,
        "SELECT k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k
         JOIN StringIds s ON s.id = k.shortName WHERE s.value LIKE 'nccl%'",
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    );
    (intervals, kernels)
}

/// Per counter: (intervals, MB/s) over the intervals `keep` accepts.
fn rates(intervals: &[Interval], keep: impl Fn(i64) -> bool) -> BTreeMap<String, (u64, f64)> {
    let mut sums: BTreeMap<String, (u64, f64, i64)> = BTreeMap::new();
    for (name, s, e, v) in intervals {
        if keep(s + (e - s) / 2) {
            let x = sums.entry(name.clone()).or_default();
            x.0 += 1;
            x.1 += v;
            x.2 += e - s;
        }
    }
    sums.into_iter()
        .map(|(k, (n, bytes, ns))| (k, (n, bytes / ns as f64 * 1e9 / 1e6)))
        .collect()
}

#[test]
fn nic_throughput_while_each_collective_ran_equals_plain_sql() {
    let mut args = vec!["report", "nccl", "--format", "json", "--no-cache"];
    args.extend(FILES);
    let r = json(&args);
    let got = r["nics"]["rows"].as_array().unwrap();
    let mut checked = 0;
    for (file, host) in FILES.iter().zip(["node-a", "node-b"]) {
        let (intervals, kernels) = read(file);
        let running = |t: i64, op: &str| {
            kernels
                .iter()
                .any(|(s, e, name)| *s <= t && t < *e && name.contains(op))
        };
        let idle = rates(&intervals, |t| !running(t, "nccl"));
        for op in ["AllReduce", "Broadcast"] {
            let during = rates(&intervals, |t| running(t, &format!("_{op}")));
            assert_eq!(during.len(), 2, "{host} {op}: sent and received");
            for (counter, (n, mb)) in during {
                let row = got
                    .iter()
                    .find(|x| {
                        x["host"] == host && x["op"] == op && x["counter"] == counter.as_str()
                    })
                    .unwrap_or_else(|| panic!("{host} {op} {counter}"));
                assert_eq!(row["nic"], "mlx5_0 port 1");
                assert_eq!(row["intervals"], n, "{host} {op} {counter}");
                assert!((row["mb_per_s"].as_f64().unwrap() - mb).abs() < 1e-6);
                let (idle_n, idle_mb) = idle[&counter];
                assert_eq!(row["no_nccl_intervals"], idle_n);
                assert!((row["no_nccl_mb_per_s"].as_f64().unwrap() - idle_mb).abs() < 1e-6);
                // as generated: 2.4-2.5 GB/s during collectives, kB/s otherwise
                assert!(mb > 2000.0 && idle_mb < 10.0, "{host} {op} {counter}");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, got.len(), "packet counters are not bytes");
    let mut args = vec!["report", "nccl", "--no-cache"];
    args.extend(FILES);
    let t = text(&args);
    assert!(
        t.contains("NIC throughput while each collective type ran"),
        "{t}"
    );
    assert!(t.contains("IB: Bytes sent"), "{t}");
}
