//! JSON conventions shared by every section: devices as integers (one
//! host) or `host:id` strings, times as unrounded floats.

use crate::profile::{DevId, DeviceKey, Profile};
use serde_json::Value;

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
