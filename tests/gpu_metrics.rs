//! `report metrics`: GPU metric samples per device, against the
//! generator's truth (`fixtures/gpu_metrics.truth.json`) and against plain
//! SQL on the file; a capture without them says how to record them.

mod common;
use common::*;
use serde_json::Value;

const FIXTURE: &str = "fixtures/gpu_metrics.sqlite";

fn truth() -> Value {
    let text = std::fs::read_to_string(root().join("fixtures/gpu_metrics.truth.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// `report metrics` JSON with `args` (options, then the files).
fn metrics(args: &[&str]) -> Value {
    let mut all = vec!["report", "metrics", "--format", "json", "--no-cache"];
    all.extend_from_slice(args);
    json(&all)
}

fn report() -> Value {
    metrics(&[FIXTURE])
}

/// Every device's every metric: samples, interval, mean, min and max as
/// the generator wrote them.
#[test]
fn each_devices_metrics_are_the_truths() {
    let (t, r) = (truth(), report());
    let want = t["devices"].as_array().unwrap();
    let got = r["devices"].as_array().unwrap();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g["device"], w["device"]);
        assert_eq!(g["ran_cuda_work"], true);
        let (gm, wm) = (
            g["metrics"].as_array().unwrap(),
            w["metrics"].as_array().unwrap(),
        );
        assert_eq!(gm.len(), wm.len(), "{}", g["device"]);
        for (a, b) in gm.iter().zip(wm) {
            assert_eq!(a["metric"], b["metric"]);
            for k in ["samples", "interval_ns"] {
                assert_eq!(a[k], b[k], "{} {k}", a["metric"]);
            }
            for k in ["mean", "min", "max"] {
                let (x, y) = (a[k].as_f64().unwrap(), b[k].as_f64().unwrap());
                assert!((x - y).abs() < 1e-9, "{} {k}: {x} vs {y}", a["metric"]);
            }
        }
    }
}

/// The throttled GPU, and only it, ran below its peers; the text names it
/// with its clock and says a figure is a sample.
#[test]
fn the_throttled_gpu_is_below_its_peers() {
    let (t, r) = (truth(), report());
    let below: Vec<&Value> = r["below_peers"].as_array().unwrap().iter().collect();
    let throttled = t["throttled"].as_array().unwrap();
    assert_eq!(below.len(), throttled.len());
    assert_eq!(below[0]["device"], throttled[0]);
    assert_eq!(below[0]["metric"], "GPC Clock Frequency [MHz]");
    assert_eq!(below[0]["peers_median"].as_f64().unwrap().round(), 1980.0);
    let text = text(&["report", "metrics", "--no-cache", FIXTURE]);
    assert!(text.contains("sampled"), "{text}");
    assert!(
        text.contains(&format!(
            "D{} ran at 1410 MHz while its peers' median was 1980 MHz",
            throttled[0]
        )),
        "{text}"
    );
}

/// Per GPU (`typeId`'s low byte) and metric, plain SQL's sample count
/// and mean over the samples `filter` (an SQL condition) keeps.
fn sql_counts(filter: &str) -> Vec<(i64, String, i64, f64)> {
    sql_rows(
        FIXTURE,
        &format!(
            "SELECT m.typeId & 255, n.metricName, COUNT(*), AVG(m.value) FROM GPU_METRICS m
             JOIN (SELECT DISTINCT metricId, metricName FROM TARGET_INFO_GPU_METRICS) n USING (metricId)
             WHERE {filter}
             GROUP BY 1, 2"
        ),
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )
}

/// Each of `rows` is the report's count and mean for its GPU and metric.
fn report_has(r: &Value, rows: &[(i64, String, i64, f64)]) {
    for (dev, metric, n, mean) in rows {
        let m = r["devices"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["device"] == *dev)
            .and_then(|d| {
                d["metrics"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|m| m["metric"] == metric.as_str())
            })
            .unwrap_or_else(|| panic!("{dev} {metric}"));
        assert_eq!(m["samples"], *n, "{dev} {metric}");
        assert!(
            (m["mean"].as_f64().unwrap() - mean).abs() < 1e-9,
            "{dev} {metric}"
        );
    }
}

/// Sample counts and means per GPU and metric equal plain SQL's, the GPU
/// being `typeId`'s low byte.
#[test]
fn counts_and_means_equal_plain_sql() {
    let rows = sql_counts("1");
    assert_eq!(rows.len(), 8 * 7);
    report_has(&report(), &rows);
}

/// `--device` shows the devices asked for; their peers are still every
/// device (with two shown, which is slow could not be said otherwise).
#[test]
fn peers_are_every_device_whatever_is_shown() {
    let r = metrics(&["--device", "5", "--device", "2", FIXTURE]);
    let shown: Vec<&Value> = r["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["device"])
        .collect();
    assert_eq!(shown, [&Value::from(2), &Value::from(5)]);
    assert_eq!(r["below_peers"][0]["device"], 5);
    let r = metrics(&["--device", "2", FIXTURE]);
    assert!(r["below_peers"].as_array().unwrap().is_empty());
}

/// Without the tables: no device, the file named, the capture option said.
#[test]
fn a_capture_without_metrics_says_how_to_record_them() {
    let r = metrics(&["fixtures/megatron_tp8.sqlite"]);
    assert_eq!(r["devices"].as_array().unwrap().len(), 0);
    assert_eq!(
        r["files_without_metrics"][0],
        "fixtures/megatron_tp8.sqlite"
    );
    let text = text(&[
        "report",
        "metrics",
        "--no-cache",
        "fixtures/megatron_tp8.sqlite",
    ]);
    assert!(
        text.contains("not recorded: nsys profile --gpu-metrics-devices=all"),
        "{text}"
    );
}

/// In the why account, the late rank's GPU clock over its GPU part
/// against its peers': the throttled GPU's event says so, the others'
/// ran as fast as their peers; without metrics, nothing is said.
#[test]
fn the_why_account_names_a_late_ranks_lower_clock() {
    let throttled = truth()["throttled"][0].clone();
    let r = json(&["report", "why", "--format", "json", "--no-cache", FIXTURE]);
    let events = r["why"].as_array().unwrap();
    assert!(events.iter().any(|e| e["device"] == throttled));
    for e in events {
        let c = &e["gpu_clock"];
        assert_eq!(c["metric"], "GPC Clock Frequency [MHz]");
        let (mean, peers) = (
            c["mean"].as_f64().unwrap(),
            c["peers_median"].as_f64().unwrap(),
        );
        assert!((peers - 1980.0).abs() <= 5.0, "{e}");
        let slow = e["device"] == throttled;
        assert_eq!(c["below_peers"], slow, "{e}");
        assert!(
            (mean - if slow { 1410.0 } else { 1980.0 }).abs() <= 5.0,
            "{e}"
        );
    }
    let t = text(&["report", "why", "--no-cache", FIXTURE]);
    assert!(t.contains(&format!("D{throttled} at 1410 MHz")), "{t}");
    assert!(t.contains("throttled, or held at a lower clock"), "{t}");
    let plain = json(&[
        "report",
        "why",
        "--format",
        "json",
        "--no-cache",
        "fixtures/megatron_tp8.sqlite",
    ]);
    assert!(
        plain["why"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["gpu_clock"].is_null())
    );
}

/// `--window` keeps the samples taken inside it (on the file's clock, its
/// ends included): counts and means as plain SQL gives them over the same
/// bounds; a window that holds none says so, not "not recorded".
#[test]
fn a_window_keeps_the_samples_inside_it() {
    let rows = sql_counts("m.timestamp BETWEEN 5500000000 AND 5600000000");
    assert_eq!(rows.len(), 8 * 7);
    assert!(rows.iter().all(|r| r.2 < 110), "the window's samples");
    let r = metrics(&["--window", "5.5", "5.6", FIXTURE]);
    report_has(&r, &rows);
    assert_eq!(r["below_peers"].as_array().unwrap().len(), 1);
    let none = metrics(&["--window", "9", "10", FIXTURE]);
    assert!(none["devices"].as_array().unwrap().is_empty());
    assert!(none["files_without_metrics"].as_array().unwrap().is_empty());
    assert_eq!(
        none["files_without_samples_in_window"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

/// Plain SQL's link samples (GPU, metric, time, value) and NCCL kernels
/// (GPU, start, end, name), sorted; the sample's GPU is `typeId`'s low byte.
type Sample = (i64, String, i64, f64);
type Kernel = (i64, i64, i64, String);

fn link_samples_and_nccl_kernels() -> (Vec<Sample>, Vec<Kernel>) {
    let samples = sql_rows(
        FIXTURE,
        "SELECT m.typeId & 255, n.metricName, m.timestamp, m.value FROM GPU_METRICS m
         JOIN (SELECT DISTINCT metricId, metricName FROM TARGET_INFO_GPU_METRICS) n USING (metricId)
         WHERE n.metricName LIKE 'NVLink%' OR n.metricName LIKE 'PCIe%'",
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    );
    let kernels = sql_rows(
        FIXTURE,
        "SELECT k.deviceId, k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k
         JOIN StringIds s ON s.id = k.shortName WHERE s.value LIKE 'nccl%'",
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    );
    (samples, kernels)
}

/// Count and mean of `samples` of (GPU, metric) that `keep` accepts.
fn count_mean<'a>(
    samples: impl Iterator<Item = &'a Sample>,
    keep: impl Fn(&Sample) -> bool,
) -> std::collections::BTreeMap<(i64, String), (i64, f64)> {
    let mut sums: std::collections::BTreeMap<(i64, String), (i64, f64)> = Default::default();
    for x in samples.filter(|x| keep(x)) {
        let e = sums.entry((x.0, x.1.clone())).or_default();
        e.0 += 1;
        e.1 += x.3;
    }
    sums.into_iter()
        .map(|(k, (n, sum))| (k, (n, sum / n as f64)))
        .collect()
}

/// `report nccl`'s link throughput per device and collective type: the
/// samples taken while one of the device's NCCL kernels of that op ran,
/// and those taken while none ran, are those plain SQL reads; NVLink is
/// busy while collectives run (as generated) and PCIe is not.
#[test]
fn link_throughput_while_each_collective_ran_equals_plain_sql() {
    let r = json(&["report", "nccl", "--format", "json", "--no-cache", FIXTURE]);
    let got = r["links"]["rows"].as_array().unwrap();
    let (samples, kernels) = link_samples_and_nccl_kernels();
    let running = |x: &Sample, op: &str| {
        kernels.iter().any(|k| {
            k.0 == x.0 && k.1 <= x.2 && x.2 < k.2 && k.3.starts_with(&format!("ncclDevKernel_{op}"))
        })
    };
    let idle = count_mean(samples.iter(), |x| !running(x, ""));
    let mut checked = 0;
    for op in ["AllReduce", "AllGather", "ReduceScatter"] {
        let during = count_mean(samples.iter(), |x| running(x, op));
        assert!(!during.is_empty(), "{op}");
        for ((dev, metric), (n, mean)) in during {
            let row = got
                .iter()
                .find(|x| x["device"] == dev && x["op"] == op && x["metric"] == metric.as_str())
                .unwrap_or_else(|| panic!("{dev} {op} {metric}"));
            assert_eq!(row["samples"], n, "{dev} {op} {metric}");
            assert!((row["mean_pct"].as_f64().unwrap() - mean).abs() < 1e-9);
            let (idle_n, idle_mean) = idle[&(dev, metric.clone())];
            assert_eq!(row["no_nccl_samples"], idle_n);
            assert!((row["no_nccl_mean_pct"].as_f64().unwrap() - idle_mean).abs() < 1e-9);
            assert_eq!(row["interval_ms"], 1.0);
            if metric.starts_with("NVLink") {
                assert!(mean >= 50.0 && idle_mean <= 1.0, "{dev} {op} {metric}");
            } else {
                assert!(mean < 10.0, "{dev} {op} {metric}");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, got.len());
    // The text names the metrics and says a figure is a sample.
    let t = text(&["report", "nccl", "--no-cache", FIXTURE]);
    assert!(t.contains("NVLink TX Responses User Data"), "{t}");
    assert!(t.contains("not byte counts"), "{t}");
}
