//! NIC metrics (`nsys profile --nic-metrics`): InfiniBand and Ethernet
//! counters per network interface and port. Each row of
//! `NET_NIC_METRIC` is what a counter added over [`start`, `end`] (bytes
//! sent in that interval, say), named through `TARGET_INFO_NETWORK_METRICS`
//! (`metricsListId`, `metricsIdx`); the interface through `NIC_ID_MAP`
//! (`globalId` → `nicId`) and `TARGET_INFO_NIC_INFO` (`nicId` → `name`).
//! Read on demand, as GPU metrics are; columns found by name. Unverified
//! against a real export: none here records NIC metrics.

use crate::profile::open::{LoadError, open_readonly, table_columns};
use rusqlite::Connection;
use std::collections::BTreeMap;
use std::path::Path;

/// One counter of one interface's port: its intervals in time order.
#[derive(Debug, Clone, PartialEq)]
pub struct NicSeries {
    /// The interface and port as the export names them (untrusted text).
    pub nic: String,
    /// Index into [`NicMetrics::names`].
    pub metric: usize,
    pub start: Vec<i64>,
    pub end: Vec<i64>,
    pub v: Vec<f64>,
}

/// The NIC counters of one export that `keep` accepts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NicMetrics {
    /// Counter names as the export spells them (untrusted text).
    pub names: Vec<String>,
    pub series: Vec<NicSeries>,
}

/// The counters `keep` accepts (by name) of the export at `path`; None
/// when it recorded none of them.
pub fn read(path: &Path, keep: &dyn Fn(&str) -> bool) -> Result<Option<NicMetrics>, LoadError> {
    let conn = open_readonly(path)?;
    counters(&conn, keep).map_err(|e| LoadError::new(path, format!("NET_NIC_METRIC: {e}")))
}

fn has_all(have: &[String], want: &[&str]) -> bool {
    want.iter().all(|w| have.iter().any(|h| h == w))
}

/// Interface names by `globalId`, where the export maps them.
fn nic_names(conn: &Connection) -> rusqlite::Result<BTreeMap<i64, String>> {
    let (map, info) = (
        table_columns(conn, "NIC_ID_MAP")?,
        table_columns(conn, "TARGET_INFO_NIC_INFO")?,
    );
    if !has_all(&map, &["nicId", "globalId"]) || !has_all(&info, &["nicId", "name"]) {
        return Ok(BTreeMap::new());
    }
    let mut stmt = conn.prepare(
        "SELECT m.globalId, i.name FROM NIC_ID_MAP m JOIN TARGET_INFO_NIC_INFO i USING (nicId)",
    )?;
    let names = stmt
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    // one name per interface, the first the export gives
    let mut out = BTreeMap::new();
    for (id, name) in names {
        out.entry(id).or_insert(name);
    }
    Ok(out)
}

/// One interval: start, end, what the counter added.
type Counted = (i64, i64, f64);

fn counters(
    conn: &Connection,
    keep: &dyn Fn(&str) -> bool,
) -> rusqlite::Result<Option<NicMetrics>> {
    let samples = table_columns(conn, "NET_NIC_METRIC")?;
    let want = [
        "start",
        "end",
        "globalId",
        "metricsListId",
        "metricsIdx",
        "value",
    ];
    if !has_all(&samples, &want) {
        return Ok(None);
    }
    let port = if samples.iter().any(|c| c == "portId") {
        "portId"
    } else {
        "0"
    };
    let mut names: Vec<String> = Vec::new();
    let mut name_of: BTreeMap<(i64, i64), usize> = BTreeMap::new();
    if has_all(
        &table_columns(conn, "TARGET_INFO_NETWORK_METRICS")?,
        &["metricsListId", "metricsIdx", "name"],
    ) {
        let mut stmt = conn.prepare(
            "SELECT metricsListId, metricsIdx, name FROM TARGET_INFO_NETWORK_METRICS ORDER BY rowid",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let key: (i64, i64) = (r.get(0)?, r.get(1)?);
            let name: Option<String> = r.get(2)?;
            name_of.entry(key).or_insert_with(|| {
                names.push(name.unwrap_or_else(|| format!("counter {}.{}", key.0, key.1)));
                names.len() - 1
            });
        }
    }
    let nics = nic_names(conn)?;
    let sql = format!(
        "SELECT globalId, {port}, metricsListId, metricsIdx, start, \"end\", value FROM NET_NIC_METRIC"
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    let mut kept: BTreeMap<usize, bool> = BTreeMap::new();
    // (globalId, port, counter) → its (start, end, value) intervals
    let mut by: BTreeMap<(i64, i64, usize), Vec<Counted>> = BTreeMap::new();
    while let Some(r) = rows.next()? {
        let (nic, port, list, idx): (i64, i64, i64, i64) =
            (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
        let (Some(start), Some(end)) = (r.get::<_, Option<i64>>(4)?, r.get::<_, Option<i64>>(5)?)
        else {
            continue;
        };
        let v: f64 = match r.get_ref(6)? {
            rusqlite::types::ValueRef::Integer(i) => i as f64,
            rusqlite::types::ValueRef::Real(x) => x,
            _ => continue,
        };
        if end < start {
            continue;
        }
        let metric = *name_of.entry((list, idx)).or_insert_with(|| {
            names.push(format!("counter {list}.{idx}"));
            names.len() - 1
        });
        if *kept.entry(metric).or_insert_with(|| keep(&names[metric])) {
            by.entry((nic, port, metric))
                .or_default()
                .push((start, end, v));
        }
    }
    if by.is_empty() {
        return Ok(None);
    }
    let series = by
        .into_iter()
        .map(|((nic, port, metric), mut at)| {
            at.sort_by_key(|&(s, _, _)| s);
            let name = nics
                .get(&nic)
                .cloned()
                .unwrap_or_else(|| format!("NIC {nic}"));
            NicSeries {
                nic: format!("{name} port {port}"),
                metric,
                start: at.iter().map(|a| a.0).collect(),
                end: at.iter().map(|a| a.1).collect(),
                v: at.iter().map(|a| a.2).collect(),
            }
        })
        .collect();
    Ok(Some(NicMetrics { names, series }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_read_per_interface_port_and_counter_with_their_names() {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE TABLE NET_NIC_METRIC (start INTEGER, \"end\" INTEGER, globalId INTEGER, portId INTEGER, metricsListId INTEGER, metricsIdx INTEGER, value INTEGER);
             CREATE TABLE TARGET_INFO_NETWORK_METRICS (metricsListId INTEGER, metricsIdx INTEGER, name TEXT, description TEXT, unit TEXT);
             CREATE TABLE NIC_ID_MAP (nicId INTEGER, globalId INTEGER);
             CREATE TABLE TARGET_INFO_NIC_INFO (globalId INTEGER, stateName TEXT, nicId INTEGER, name TEXT, deviceId INTEGER, vendorId INTEGER, linkLayer INTEGER);
             INSERT INTO TARGET_INFO_NETWORK_METRICS VALUES (0, 0, 'IB: Bytes sent', '', 'B'), (0, 1, 'IB: Packets sent', '', '');
             INSERT INTO NIC_ID_MAP VALUES (3, 77);
             INSERT INTO TARGET_INFO_NIC_INFO VALUES (1, 's', 3, 'mlx5_0', 0, 0, 1);
             INSERT INTO NET_NIC_METRIC VALUES (200, 300, 77, 1, 0, 0, 5000), (100, 200, 77, 1, 0, 0, 4000), (100, 200, 77, 1, 0, 1, 9), (100, 200, 78, 1, 0, 0, 7), (300, 250, 77, 1, 0, 0, 1);",
        )
        .unwrap();
        let m = counters(&c, &|n| n.contains("Bytes")).unwrap().unwrap();
        assert_eq!(m.names[m.series[0].metric], "IB: Bytes sent");
        let got: Vec<(&str, Vec<i64>, Vec<f64>)> = m
            .series
            .iter()
            .map(|s| (s.nic.as_str(), s.start.clone(), s.v.clone()))
            .collect();
        // an interval ending before it starts is no interval
        assert_eq!(
            got,
            [
                ("mlx5_0 port 1", vec![100, 200], vec![4000.0, 5000.0]),
                ("NIC 78 port 1", vec![100], vec![7.0]),
            ]
        );
        assert_eq!(counters(&c, &|_| false).unwrap(), None);
    }
}
