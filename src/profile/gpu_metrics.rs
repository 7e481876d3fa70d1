//! GPU metrics (`nsys profile --gpu-metrics-devices`): the samples of
//! `GPU_METRICS`, named by `TARGET_INFO_GPU_METRICS`. Read on demand by
//! `report metrics`, not part of the loaded model: a capture sampled at
//! 10 kHz holds millions of them and no other view reads them yet.
//!
//! Columns changed across nsys versions and are found by name: the time is
//! `timestamp` (ns on the capture's clock, as every other table), else
//! `rawTimestamp`; the GPU is `deviceId` where the table has it, else the
//! low byte of `typeId` (where nsys packs the GPU's id). Unverified against
//! a real export: none here records GPU metrics.

use crate::profile::open::{LoadError, open_readonly, table_columns};
use rusqlite::Connection;
use std::collections::BTreeMap;
use std::path::Path;

/// One metric of one GPU: its samples in time order.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricSeries {
    /// The GPU's id as the export gives it (`TARGET_INFO_GPU.id`, the
    /// kernels' `deviceId`).
    pub device: u32,
    /// Index into [`GpuMetrics::names`].
    pub metric: usize,
    pub t: Vec<i64>,
    pub v: Vec<f64>,
}

/// GPU metric samples of one export: the metrics asked for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GpuMetrics {
    /// Metric names as the export spells them (untrusted text).
    pub names: Vec<String>,
    /// By device, then metric.
    pub series: Vec<MetricSeries>,
}

/// One metric of one GPU, totalled as its samples are read.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesTotals {
    pub device: u32,
    /// Index into [`Totals::names`].
    pub metric: usize,
    pub samples: usize,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
    pub first: i64,
    pub last: i64,
}

/// Every metric of one export, totalled: what a whole-capture summary
/// needs, in memory per series, not per sample (sampled at 10 kHz, 20
/// metrics of 8 GPUs over a minute are 96 M samples).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    pub names: Vec<String>,
    /// By device, then metric.
    pub series: Vec<SeriesTotals>,
}

/// The samples of the metrics `keep` accepts (by name), of the export at
/// `path`; None when it recorded none of them.
pub fn read(path: &Path, keep: &dyn Fn(&str) -> bool) -> Result<Option<GpuMetrics>, LoadError> {
    let conn = open_readonly(path)?;
    samples(&conn, keep).map_err(|e| LoadError::new(path, format!("GPU_METRICS: {e}")))
}

fn samples(conn: &Connection, keep: &dyn Fn(&str) -> bool) -> rusqlite::Result<Option<GpuMetrics>> {
    let mut by: BTreeMap<(u32, usize), (Vec<i64>, Vec<f64>)> = BTreeMap::new();
    let names = each_sample(conn, keep, &mut |dev, metric, t, v| {
        let s = by.entry((dev, metric)).or_default();
        s.0.push(t);
        s.1.push(v);
    })?;
    let Some(names) = names.filter(|_| !by.is_empty()) else {
        return Ok(None);
    };
    let series = by
        .into_iter()
        .map(|((device, metric), (t, v))| {
            let mut at: Vec<(i64, f64)> = t.into_iter().zip(v).collect();
            at.sort_by_key(|&(t, _)| t);
            let (t, v) = at.into_iter().unzip();
            MetricSeries {
                device,
                metric,
                t,
                v,
            }
        })
        .collect();
    Ok(Some(GpuMetrics { names, series }))
}

/// Every metric of the export at `path`, totalled over the samples taken
/// within `within`; None when it recorded none at all (some, all outside:
/// no series).
pub fn totals(path: &Path, within: (i64, i64)) -> Result<Option<Totals>, LoadError> {
    let conn = open_readonly(path)?;
    totals_of(&conn, within).map_err(|e| LoadError::new(path, format!("GPU_METRICS: {e}")))
}

/// The totals of the samples taken within `[within.0, within.1]` (the
/// export's timestamps).
fn totals_of(conn: &Connection, within: (i64, i64)) -> rusqlite::Result<Option<Totals>> {
    let mut by: BTreeMap<(u32, usize), SeriesTotals> = BTreeMap::new();
    let mut sampled = false;
    let names = each_sample(conn, &|_| true, &mut |device, metric, t, v| {
        sampled = true;
        if t < within.0 || t > within.1 {
            return;
        }
        let s = by.entry((device, metric)).or_insert(SeriesTotals {
            device,
            metric,
            samples: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            first: t,
            last: t,
        });
        s.samples += 1;
        s.sum += v;
        s.min = s.min.min(v);
        s.max = s.max.max(v);
        s.first = s.first.min(t);
        s.last = s.last.max(t);
    })?;
    Ok(names.filter(|_| sampled).map(|names| Totals {
        names,
        series: by.into_values().collect(),
    }))
}

/// Calls `f(gpu, metric, time, value)` for each sample of the metrics
/// `keep` accepts; returns the metric names (None when the export has no
/// readable GPU_METRICS).
fn each_sample(
    conn: &Connection,
    keep: &dyn Fn(&str) -> bool,
    f: &mut dyn FnMut(u32, usize, i64, f64),
) -> rusqlite::Result<Option<Vec<String>>> {
    let samples = table_columns(conn, "GPU_METRICS")?;
    let has = |c: &str| samples.iter().any(|s| s == c);
    let time = ["timestamp", "rawTimestamp"].into_iter().find(|c| has(c));
    let (Some(time), true, true) = (time, has("metricId"), has("value")) else {
        return Ok(None);
    };
    let device = if has("deviceId") {
        "deviceId"
    } else if has("typeId") {
        "(typeId & 255)"
    } else {
        return Ok(None);
    };
    let mut names: Vec<String> = Vec::new();
    let mut name_of: BTreeMap<i64, usize> = BTreeMap::new();
    let described = table_columns(conn, "TARGET_INFO_GPU_METRICS")?;
    if ["metricId", "metricName"]
        .iter()
        .all(|c| described.iter().any(|d| d == c))
    {
        let mut stmt = conn
            .prepare("SELECT metricId, metricName FROM TARGET_INFO_GPU_METRICS ORDER BY rowid")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let (id, name): (i64, Option<String>) = (r.get(0)?, r.get(1)?);
            name_of.entry(id).or_insert_with(|| {
                names.push(name.unwrap_or_else(|| format!("metric {id}")));
                names.len() - 1
            });
        }
    }
    // Column names above are fixed strings, never the file's.
    let sql = format!(
        "SELECT {device}, metricId, {time}, value FROM GPU_METRICS WHERE {time} IS NOT NULL"
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    let mut kept: BTreeMap<usize, bool> = BTreeMap::new();
    while let Some(r) = rows.next()? {
        let (dev, id, t): (i64, i64, i64) = (r.get(0)?, r.get(1)?, r.get(2)?);
        let Ok(dev) = u32::try_from(dev) else {
            continue;
        };
        let v: f64 = match r.get_ref(3)? {
            rusqlite::types::ValueRef::Integer(i) => i as f64,
            rusqlite::types::ValueRef::Real(x) => x,
            _ => continue,
        };
        let metric = *name_of.entry(id).or_insert_with(|| {
            names.push(format!("metric {id}"));
            names.len() - 1
        });
        if *kept.entry(metric).or_insert_with(|| keep(&names[metric])) {
            f(dev, metric, t, v);
        }
    }
    Ok(Some(names))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn(ddl: &str, rows: &str) -> Connection {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(ddl).unwrap();
        c.execute_batch(rows).unwrap();
        c
    }

    /// typeId's low byte is the GPU; samples come back per GPU and metric,
    /// in time order, named.
    #[test]
    fn samples_are_read_per_gpu_and_metric_in_time_order() {
        let c = conn(
            "CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER, sourceId INTEGER, typeName TEXT, metricId INTEGER, metricName TEXT);
             CREATE TABLE GPU_METRICS (rawTimestamp INTEGER, timestamp INTEGER, typeId INTEGER, metricId INTEGER, value INTEGER);",
            "INSERT INTO TARGET_INFO_GPU_METRICS VALUES (65792, 0, 'GH100', 1, 'GPC Clock Frequency [MHz]'), (65793, 0, 'GH100', 1, 'GPC Clock Frequency [MHz]'), (65792, 0, 'GH100', 2, 'SMs Active [Throughput %]');
             INSERT INTO GPU_METRICS VALUES (0, 200, 65792, 1, 1980), (0, 100, 65792, 1, 1970), (0, 100, 65793, 1, 1410), (0, 100, 65792, 2, 80), (0, NULL, 65792, 2, 5);",
        );
        let m = samples(&c, &|_| true).unwrap().unwrap();
        assert_eq!(
            m.names,
            ["GPC Clock Frequency [MHz]", "SMs Active [Throughput %]"]
        );
        let got: Vec<(u32, usize, Vec<i64>, Vec<f64>)> = m
            .series
            .iter()
            .map(|s| (s.device, s.metric, s.t.clone(), s.v.clone()))
            .collect();
        assert_eq!(
            got,
            [
                (0, 0, vec![100, 200], vec![1970.0, 1980.0]),
                (0, 1, vec![100], vec![80.0]),
                (1, 0, vec![100], vec![1410.0]),
            ]
        );
    }

    /// Only the metrics asked for are kept; totals hold every metric's
    /// count, sum, range and first and last time.
    #[test]
    fn kept_metrics_and_totals() {
        let c = conn(
            "CREATE TABLE TARGET_INFO_GPU_METRICS (metricId INTEGER, metricName TEXT);
             CREATE TABLE GPU_METRICS (timestamp INTEGER, typeId INTEGER, metricId INTEGER, value INTEGER);",
            "INSERT INTO TARGET_INFO_GPU_METRICS VALUES (1, 'GPC Clock Frequency [MHz]'), (2, 'SMs Active [Throughput %]');
             INSERT INTO GPU_METRICS VALUES (300, 2, 1, 1400), (100, 2, 1, 1420), (100, 2, 2, 50);",
        );
        let m = samples(&c, &|n| n.starts_with("GPC")).unwrap().unwrap();
        assert_eq!(m.series.len(), 1);
        assert_eq!(m.series[0].t, [100, 300]);
        let t = totals_of(&c, (i64::MIN, i64::MAX)).unwrap().unwrap();
        let clock = &t.series[0];
        assert_eq!((clock.device, clock.samples, clock.sum), (2, 2, 2820.0));
        assert_eq!(
            (clock.min, clock.max, clock.first, clock.last),
            (1400.0, 1420.0, 100, 300)
        );
        assert_eq!(t.series[1].samples, 1);
        // a window keeps the samples inside it, ends included
        let t = totals_of(&c, (200, 300)).unwrap().unwrap();
        assert_eq!(t.series.len(), 1);
        assert_eq!((t.series[0].samples, t.series[0].sum), (1, 1400.0));
        let none_inside = totals_of(&c, (400, 500)).unwrap().unwrap();
        assert!(none_inside.series.is_empty());
    }

    /// A `deviceId` column is the GPU when there is one; without the
    /// table (or its columns) nothing was recorded.
    #[test]
    fn a_device_column_wins_and_no_table_is_none() {
        let c = conn(
            "CREATE TABLE GPU_METRICS (timestamp INTEGER, typeId INTEGER, deviceId INTEGER, metricId INTEGER, value REAL);",
            "INSERT INTO GPU_METRICS VALUES (5, 65792, 3, 7, 12.5);",
        );
        let m = samples(&c, &|_| true).unwrap().unwrap();
        assert_eq!((m.series[0].device, m.series[0].v[0]), (3, 12.5));
        assert_eq!(m.names, ["metric 7"]);
        let empty = conn("CREATE TABLE StringIds (id INTEGER, value TEXT);", "");
        assert_eq!(samples(&empty, &|_| true).unwrap(), None);
    }
}
