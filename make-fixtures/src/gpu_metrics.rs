//! `fixtures/gpu_metrics.sqlite`: megatron_tp8's capture with GPU metrics, as `nsys
//! profile --gpu-metrics-devices=all` records them: `TARGET_INFO_GPU_METRICS` names each
//! metric per GPU type (`typeId` = the GPU's id in its low byte over a type code), and
//! `GPU_METRICS` holds one row per sample (`rawTimestamp`, `timestamp` in ns on the capture
//! clock, `typeId`, `metricId`, `value`). Laid out as the schema reference describes; no
//! real export here records them, so the layout is unverified against nsys itself.
//!
//! Every GPU is sampled every millisecond over the kernels' span. GPU `THROTTLED` runs its
//! GPC clock at 1410 MHz while the others run near 1980 MHz; SM activity follows whether a
//! kernel runs at the sample's instant, NVLink traffic whether an NCCL kernel does (the
//! TP group is inside the node); PCIe stays low throughout. Metric names as nsys writes
//! them for an H100 (`NVLink TX Responses User Data [Throughput %]`, `PCIe RX Throughput
//! [Throughput %]`).

use rusqlite::{Transaction, params};
use serde_json::{Value, json};

use crate::model::Profile;

pub const PATH: &str = "fixtures/gpu_metrics.sqlite";

/// The GPU held at a lower clock.
pub const THROTTLED: u32 = 5;

const INTERVAL_NS: i64 = 1_000_000;
/// nsys's type code above the GPU id (the low byte).
const TYPE_BASE: i64 = 0x10100;

const DDL: &str = "
CREATE TABLE TARGET_INFO_GPU_METRICS (
    typeId                      INTEGER   NOT NULL,                    -- REFERENCES GPU_METRICS(typeId)
    sourceId                    INTEGER   NOT NULL,                    -- REFERENCES GPU_METRICS(sourceId)
    typeName                    TEXT      NOT NULL,                    -- Name of event type
    metricId                    INTEGER   NOT NULL,                    -- REFERENCES GPU_METRICS(metricId)
    metricName                  TEXT      NOT NULL                     -- Name of metric
);
CREATE TABLE GPU_METRICS (
    rawTimestamp                INTEGER   NOT NULL,                    -- Raw event timestamp recorded during profiling
    timestamp                   INTEGER,                               -- Event timestamp (ns)
    typeId                      INTEGER   NOT NULL,                    -- REFERENCES TARGET_INFO_GPU_METRICS(typeId) and GPU ID
    metricId                    INTEGER   NOT NULL,                    -- REFERENCES TARGET_INFO_GPU_METRICS(metricId)
    value                       INTEGER   NOT NULL                     -- Counter data value
);";

/// (metricId, metricName).
const METRICS: [(i64, &str); 7] = [
    (0, "GPC Clock Frequency [MHz]"),
    (1, "SMs Active [Throughput %]"),
    (2, "DRAM Read Bandwidth [Throughput %]"),
    (3, "NVLink TX Responses User Data [Throughput %]"),
    (4, "NVLink RX Responses User Data [Throughput %]"),
    (5, "PCIe TX Throughput [Throughput %]"),
    (6, "PCIe RX Throughput [Throughput %]"),
];

/// One sample: (timestamp, GPU, metricId, value).
type Sample = (i64, u32, i64, i64);

/// Every sample, GPUs in order, then time, then metric.
fn samples(p: &Profile) -> Vec<Sample> {
    let from = p.kernels.iter().map(|k| k.start).min().unwrap_or(0);
    let to = p.kernels.iter().map(|k| k.end).max().unwrap_or(0);
    let mut out = Vec::new();
    for g in &p.gpus {
        let mine: Vec<(i64, i64, bool)> = p
            .kernels
            .iter()
            .filter(|k| k.device == g.id)
            .map(|k| (k.start, k.end, k.nccl.is_some()))
            .collect();
        let mut t = from;
        let mut n: i64 = 0;
        while t <= to {
            // a few MHz of wander, the same every run
            let wander = (n * 7 + g.id as i64 * 3) % 11 - 5;
            let clock = if g.id == THROTTLED { 1410 } else { 1980 } + wander;
            let busy = mine.iter().any(|&(s, e, _)| s <= t && t < e);
            let nccl = mine.iter().any(|&(s, e, nccl)| nccl && s <= t && t < e);
            let sm = if busy { 85 + (n % 10) } else { n % 3 };
            let dram = if busy { 40 + (n * 13 % 20) } else { 0 };
            let (tx, rx) = if nccl {
                (55 + (n * 11 % 30), 50 + (n * 5 % 30))
            } else {
                (n % 2, n % 2)
            };
            let (pcie_tx, pcie_rx) = (1 + n % 3, 2 + n % 4);
            for (metric, value) in [
                (0, clock),
                (1, sm),
                (2, dram),
                (3, tx),
                (4, rx),
                (5, pcie_tx),
                (6, pcie_rx),
            ] {
                out.push((t, g.id, metric, value));
            }
            t += INTERVAL_NS;
            n += 1;
        }
    }
    out
}

/// Adds the two tables to the export being written.
pub fn extra(p: &Profile, tx: &Transaction) -> rusqlite::Result<()> {
    tx.execute_batch(DDL)?;
    for g in &p.gpus {
        for (id, name) in METRICS {
            tx.execute(
                "INSERT INTO TARGET_INFO_GPU_METRICS VALUES (?1, 0, 'GH100', ?2, ?3)",
                params![TYPE_BASE + g.id as i64, id, name],
            )?;
        }
    }
    let mut insert = tx.prepare("INSERT INTO GPU_METRICS VALUES (?1, ?2, ?3, ?4, ?5)")?;
    for (t, gpu, metric, value) in samples(p) {
        // the raw stamp is the GPU's own counter: not the capture clock
        insert.execute(params![t / 32, t, TYPE_BASE + gpu as i64, metric, value])?;
    }
    Ok(())
}

/// Per GPU and metric: samples, mean, min, max, interval; and the throttled GPU.
pub fn truth(p: &Profile) -> Value {
    let all = samples(p);
    let mut devices = Vec::new();
    for g in &p.gpus {
        let mut metrics = Vec::new();
        for (id, name) in METRICS {
            let v: Vec<i64> = all
                .iter()
                .filter(|s| s.1 == g.id && s.2 == id)
                .map(|s| s.3)
                .collect();
            metrics.push(json!({
                "metric": name,
                "samples": v.len(),
                "interval_ns": INTERVAL_NS,
                "mean": v.iter().sum::<i64>() as f64 / v.len() as f64,
                "min": v.iter().min(),
                "max": v.iter().max(),
            }));
        }
        devices.push(json!({"device": g.id, "metrics": metrics}));
    }
    json!({
        "description": "megatron_tp8's capture with GPU metrics sampled every 1 ms on every GPU; GPU 5's GPC clock held at 1410 MHz, the others near 1980; NVLink TX/RX at 55-85 / 50-80 % while an NCCL kernel of the GPU runs, 0-1 % otherwise; PCIe 1-6 % throughout",
        "devices": devices,
        "throttled": [THROTTLED],
    })
}
