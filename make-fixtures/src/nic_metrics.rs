//! `fixtures/nic/`: the two-node fixture's files with NIC counters (`nsys profile
//! --nic-metrics`), laid out as the
//! schema reference describes: `NET_NIC_METRIC` holds what each counter added over each
//! interval (`start`, `end`, `globalId`, `portId`, `metricsListId`, `metricsIdx`, `value`),
//! `TARGET_INFO_NETWORK_METRICS` names the counters, `NIC_ID_MAP` and
//! `TARGET_INFO_NIC_INFO` name the interface. No real export here records them, so the
//! layout is unverified against nsys itself.
//!
//! One InfiniBand interface per host, `mlx5_0` port 1, counted every millisecond over the
//! kernels' span: while one of the host's NCCL kernels runs at an interval's middle, 2.5 MB
//! sent and 2.4 MB received (the collectives span both hosts); otherwise a few kB.

use rusqlite::{Transaction, params};

use crate::model::Profile;

pub const DIR: &str = "fixtures/nic";

/// Where a two-node file goes with its counters: `fixtures/nic/<its name>`.
pub fn path_of(p: &Profile) -> String {
    let name = std::path::Path::new(&p.path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{DIR}/{name}")
}

const INTERVAL_NS: i64 = 1_000_000;
/// The interface's `globalId` (its device state's id) and `nicId`.
const GLOBAL_ID: i64 = 0x2_0000_0001;
const NIC_ID: i64 = 0;

const DDL: &str = "
CREATE TABLE TARGET_INFO_NIC_INFO (
    globalId                    INTEGER,                               -- Device state globalId
    stateName                   TEXT      NOT NULL,                    -- Device state name
    nicId                       INTEGER   NOT NULL,                    -- Network interface Id.
    name                        TEXT      NOT NULL,                    -- Network interface name
    deviceId                    INTEGER   NOT NULL,                    -- REFERENCES ENUM_NET_DEVICE_ID(id)
    vendorId                    INTEGER   NOT NULL,                    -- REFERENCES ENUM_NET_VENDOR_ID(id)
    linkLayer                   INTEGER   NOT NULL                     -- REFERENCES ENUM_NET_LINK_TYPE(id)
);
CREATE TABLE NIC_ID_MAP (
    -- Map between NIC info nicId and NIC metric globalId

    nicId                       INTEGER   NOT NULL,                    -- REFERENCES TARGET_INFO_NIC_INFO(nicId)
    globalId                    INTEGER   NOT NULL                     -- REFERENCES NET_NIC_METRIC(globalId)
);
CREATE TABLE TARGET_INFO_NETWORK_METRICS (
    metricsListId               INTEGER   NOT NULL,                    -- Metric list ID
    metricsIdx                  INTEGER   NOT NULL,                    -- List index of metric
    name                        TEXT      NOT NULL,                    -- Name of metric
    description                 TEXT      NOT NULL,                    -- Description of metric
    unit                        TEXT      NOT NULL                     -- Measurement unit of metric
);
CREATE TABLE NET_NIC_METRIC (
    start                       INTEGER   NOT NULL,                    -- Start timestamp (ns)
    end                         INTEGER   NOT NULL,                    -- End timestamp (ns)
    globalId                    INTEGER   NOT NULL,                    -- Serialized GlobalId.
    portId                      INTEGER   NOT NULL,                    -- Port ID
    metricsListId               INTEGER   NOT NULL,                    -- Metric list ID
    metricsIdx                  INTEGER   NOT NULL,                    -- List index of metric
    value                       INTEGER   NOT NULL                     -- Counter data value
);";

/// (metricsIdx, name, bytes per interval while NCCL runs, otherwise).
const COUNTERS: [(i64, &str, i64, i64); 3] = [
    (0, "IB: Bytes sent", 2_500_000, 4_000),
    (1, "IB: Bytes received", 2_400_000, 3_000),
    (2, "IB: Packets sent", 600, 2),
];

/// Adds the NIC tables to the export being written.
pub fn extra(p: &Profile, tx: &Transaction) -> rusqlite::Result<()> {
    tx.execute_batch(DDL)?;
    tx.execute(
        "INSERT INTO TARGET_INFO_NIC_INFO VALUES (?1, 'nic', ?2, 'mlx5_0', 4123, 5555, 1)",
        params![GLOBAL_ID, NIC_ID],
    )?;
    tx.execute(
        "INSERT INTO NIC_ID_MAP VALUES (?1, ?2)",
        params![NIC_ID, GLOBAL_ID],
    )?;
    for (idx, name, _, _) in COUNTERS {
        tx.execute(
            "INSERT INTO TARGET_INFO_NETWORK_METRICS VALUES (0, ?1, ?2, '', '')",
            params![idx, name],
        )?;
    }
    let nccl: Vec<(i64, i64)> = p
        .kernels
        .iter()
        .filter(|k| k.nccl.is_some())
        .map(|k| (k.start, k.end))
        .collect();
    let from = p.kernels.iter().map(|k| k.start).min().unwrap_or(0);
    let to = p.kernels.iter().map(|k| k.end).max().unwrap_or(0);
    let mut insert = tx.prepare("INSERT INTO NET_NIC_METRIC VALUES (?1, ?2, ?3, 1, 0, ?4, ?5)")?;
    let mut t = from;
    while t < to {
        let mid = t + INTERVAL_NS / 2;
        let busy = nccl.iter().any(|&(s, e)| s <= mid && mid < e);
        for (idx, _, during, idle) in COUNTERS {
            let v = if busy { during } else { idle };
            insert.execute(params![t, t + INTERVAL_NS, GLOBAL_ID, idx, v])?;
        }
        t += INTERVAL_NS;
    }
    Ok(())
}
