//! Processes that each see their GPU as CUDA device 0 (CUDA_VISIBLE_DEVICES
//! per task) are told apart through TARGET_INFO_CUDA_DEVICE.

mod common;

use common::{json, temp_dir};
use serde_json::Value;

/// The 8-GPU fixture rewritten as if every process saw only its own GPU:
/// activity and context rows say device 0, and TARGET_INFO_CUDA_DEVICE maps
/// each process's ordinal 0 to its GPU.
fn every_process_sees_device_zero() -> String {
    let dir = temp_dir("cuda_ordinals");
    let copy = dir.join("visible_devices.sqlite");
    std::fs::copy(common::root().join("fixtures/megatron_tp8.sqlite"), &copy).unwrap();
    let db = rusqlite::Connection::open(&copy).unwrap();
    for table in [
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET",
        "TARGET_INFO_CUDA_CONTEXT_INFO",
    ] {
        db.execute(&format!("UPDATE {table} SET deviceId = 0"), [])
            .unwrap();
    }
    let mapped = db
        .execute("UPDATE TARGET_INFO_CUDA_DEVICE SET cudaId = 0", [])
        .unwrap();
    assert_eq!(mapped, 8);
    copy.to_str().unwrap().to_string()
}

fn sections(v: &Value) -> Vec<(&str, &Value)> {
    ["nccl", "overlap", "skew", "launch", "anomalies"]
        .into_iter()
        .map(|s| (s, &v[s]))
        .chain([("devices", &v["summary"]["devices"])])
        .collect()
}

#[test]
fn devices_seen_as_ordinal_zero_stay_eight_gpus_with_the_same_figures() {
    let copy = every_process_sees_device_zero();
    let args = |f: &str| ["report", "all", "--format", "json", "--no-cache", f].map(String::from);
    let original = json(
        &args("fixtures/megatron_tp8.sqlite")
            .each_ref()
            .map(|s| s.as_str()),
    );
    let remapped = json(&args(&copy).each_ref().map(|s| s.as_str()));
    assert_eq!(
        remapped["summary"]["devices"].as_array().unwrap().len(),
        original["summary"]["devices"].as_array().unwrap().len()
    );
    for ((name, a), (_, b)) in sections(&original).into_iter().zip(sections(&remapped)) {
        assert!(!a.is_null(), "{name} missing from the report");
        assert_eq!(a, b, "{name} differs once ordinals are mapped");
    }
}
