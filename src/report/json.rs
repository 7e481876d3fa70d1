//! JSON conventions shared by every section: devices as integers (one
//! host) or `host:id` strings, times as unrounded floats.

use crate::analysis::stats::Spread;
use crate::profile::{DevId, DeviceKey, Profile};
use serde_json::{Value, json};

pub fn device(p: &Profile, d: DevId) -> Value {
    match p.device_label(d).key {
        DeviceKey::Id(i) => Value::from(i),
        DeviceKey::HostId(s) => Value::from(s),
    }
}

pub fn devices(p: &Profile, ds: &[DevId]) -> Value {
    Value::Array(ds.iter().map(|&d| device(p, d)).collect())
}

/// Nanoseconds as unrounded milliseconds.
pub fn ms(ns: i64) -> f64 {
    ns as f64 / 1e6
}

/// p50, p90 and max; each null when there is no figure.
pub fn spread_json(s: Option<Spread>) -> Value {
    match s {
        Some(s) => json!({"p50": s.p50, "p90": s.p90, "max": s.max}),
        None => json!({"p50": null, "p90": null, "max": null}),
    }
}

/// p50, p90 and max, or null (not an object of nulls) when there is no
/// figure: bandwidth, which must never read as a measured 0.
pub fn spread_or_null(s: Option<Spread>) -> Value {
    s.map_or(Value::Null, |s| spread_json(Some(s)))
}
