//! Identity across files, on small copies of the fixtures edited with
//! rusqlite: host names and boots, GPUs by UUID or file, ranks, world size.

use super::*;
use crate::profile::{Profile, load};
use rusqlite::Connection;
use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/test-tmp/identity-unit")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// How a copy of `two_node_a.sqlite` is edited.
#[derive(Default, Clone)]
struct Edit {
    /// `None`: the Hostname row removed.
    host: Option<&'static str>,
    /// Keep only device 0 (a per-rank capture).
    one_gpu: bool,
    /// UUID of device 0; `None`: cleared.
    uuid: Option<&'static str>,
    /// (utcEpochNs, systemClockNs) of the session start.
    start: Option<(i64, i64)>,
    /// `PROCESS_0:ENVIRONMENT_VARIABLE` values.
    env: Vec<&'static str>,
}

fn make(dir: &std::path::Path, name: &str, e: &Edit) -> PathBuf {
    let f = dir.join(name);
    std::fs::copy(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/two_node_a.sqlite"),
        &f,
    )
    .unwrap();
    let c = Connection::open(&f).unwrap();
    match e.host {
        Some(h) => c
            .execute(
                "UPDATE TARGET_INFO_SYSTEM_ENV SET value = ?1 WHERE name = 'Hostname'",
                [h],
            )
            .unwrap(),
        None => c
            .execute(
                "DELETE FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'",
                [],
            )
            .unwrap(),
    };
    if e.one_gpu {
        for t in [
            "CUPTI_ACTIVITY_KIND_KERNEL",
            "CUPTI_ACTIVITY_KIND_MEMCPY",
            "CUPTI_ACTIVITY_KIND_MEMSET",
            "TARGET_INFO_CUDA_CONTEXT_INFO",
        ] {
            c.execute(&format!("DELETE FROM {t} WHERE deviceId != 0"), [])
                .unwrap();
        }
        c.execute("DELETE FROM TARGET_INFO_CUDA_DEVICE WHERE gpuId != 0", [])
            .unwrap();
        c.execute("DELETE FROM TARGET_INFO_GPU WHERE id != 0", [])
            .unwrap();
    }
    c.execute(
        "UPDATE TARGET_INFO_GPU SET uuid = ?1 WHERE id = 0",
        [e.uuid],
    )
    .unwrap();
    if let Some((utc, sys)) = e.start {
        c.execute_batch(
            "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT, systemClockNs INTEGER)",
        )
        .unwrap();
        c.execute(
            "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?1, '', '', ?2)",
            [utc, sys],
        )
        .unwrap();
    }
    if !e.env.is_empty() {
        c.execute_batch("CREATE TABLE META_DATA_CAPTURE (name TEXT NOT NULL, value TEXT)")
            .unwrap();
        c.execute(
            "INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:COMMAND', 'python')",
            [],
        )
        .unwrap();
        for v in &e.env {
            c.execute(
                "INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:ENVIRONMENT_VARIABLE', ?1)",
                [v],
            )
            .unwrap();
        }
    }
    f
}

fn open(files: &[PathBuf]) -> Profile {
    let out = load(
        &crate::profile::files(files),
        &crate::profile::LoadPlan::default(),
        &mut |_, _, _| {},
    );
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    out.profile
}

/// The options of `report --format json` with its defaults.
pub(crate) fn json_options() -> crate::report::Options {
    crate::report::Options {
        format: crate::report::Format::Json,
        instances: true,
        ..Default::default()
    }
}

fn keys(p: &Profile) -> Vec<String> {
    (0..p.devices.len() as u32)
        .map(|d| p.device_label(d).key_string())
        .collect()
}

fn texts(p: &Profile) -> Vec<String> {
    (0..p.devices.len() as u32)
        .map(|d| p.device_label(d).text)
        .collect()
}

#[test]
fn fqdns_shorten_to_their_first_label_when_unique() {
    let d = scratch("fqdn");
    let a = make(
        &d,
        "a.sqlite",
        &Edit {
            host: Some("node03.cluster.example.org"),
            ..Edit::default()
        },
    );
    let b = make(
        &d,
        "b.sqlite",
        &Edit {
            host: Some("node04.cluster.example.org"),
            ..Edit::default()
        },
    );
    let p = open(&[a.clone(), b.clone()]);
    assert_eq!(
        keys(&p),
        vec![
            "node03.cluster.example.org:0",
            "node03.cluster.example.org:1",
            "node04.cluster.example.org:0",
            "node04.cluster.example.org:1"
        ]
    );
    assert_eq!(
        texts(&p),
        vec!["node03:0", "node03:1", "node04:0", "node04:1"]
    );
    assert_eq!(p.find_devices("node04:1"), vec![3]);
    assert_eq!(p.find_devices("node04.cluster.example.org:1"), vec![3]);

    // First labels that clash keep the whole name.
    let c = make(
        &d,
        "c.sqlite",
        &Edit {
            host: Some("gpu1.east.example.org"),
            ..Edit::default()
        },
    );
    let e = make(
        &d,
        "e.sqlite",
        &Edit {
            host: Some("gpu1.west.example.org"),
            ..Edit::default()
        },
    );
    let p = open(&[c, e]);
    assert_eq!(p.device_label(0).text, "gpu1.east.example.org:0");
    assert_eq!(p.device_label(2).text, "gpu1.west.example.org:0");
}

#[test]
fn one_host_booted_twice_is_two_hosts_and_one_boot_is_one() {
    let d = scratch("boot");
    // Boot instants: 1_000 s and 1_000.005 s after the epoch (5 ms apart).
    let at = |boot_ns: i64| Edit {
        host: Some("modal"),
        start: Some((boot_ns + 7_000_000_000, 7_000_000_000)),
        uuid: Some("GPU-a0"),
        ..Edit::default()
    };
    let a = make(&d, "a.sqlite", &at(1_000_000_000_000));
    let b = make(&d, "b.sqlite", &at(1_000_005_000_000));
    let p = open(&[a.clone(), b]);
    assert_eq!(p.files[0].boot_ns, Some(1_000_000_000_000));
    assert_eq!(p.hosts, vec!["modal", "modal#2"]);
    assert_eq!(
        keys(&p),
        vec!["modal:0", "modal:1", "modal#2:0", "modal#2:1"]
    );
    assert_eq!(p.device_label(2).text, "modal#2:0");

    // 0.5 ms apart: the same boot, one host; its GPUs (UUIDs of the copy)
    // are the same GPUs.
    let c = make(&d, "c.sqlite", &at(1_000_000_500_000));
    let p = open(&[a, c]);
    assert_eq!(p.hosts, vec!["modal"]);
    assert_eq!(p.devices.len(), 2, "{:?}", keys(&p));
    assert_eq!(
        p.files.iter().map(|f| f.host_index).collect::<Vec<_>>(),
        vec![0, 0]
    );
}

#[test]
fn a_file_without_hostname_goes_by_its_stem_in_labels_only() {
    let d = scratch("stem");
    let a = make(&d, "rank3.sqlite", &Edit::default());
    let b = make(
        &d,
        "b.sqlite",
        &Edit {
            host: Some("node04"),
            ..Edit::default()
        },
    );
    let p = open(&[a.clone(), b]);
    assert_eq!(p.hosts, vec!["rank3", "node04"]);
    assert_eq!(p.files[0].host, None);
    assert_eq!(texts(&p)[..2], ["rank3:0", "rank3:1"]);
    // One file: plain ids.
    let p = open(&[a]);
    assert_eq!(p.hosts, vec!["rank3"]);
    assert_eq!(texts(&p), vec!["0", "1"]);
}

#[test]
fn per_rank_files_on_one_host_are_distinct_gpus_with_their_ranks() {
    let d = scratch("ranks");
    let rank = |r: &'static str, uuid: Option<&'static str>| Edit {
        host: Some("node03.cluster.example.org"),
        one_gpu: true,
        uuid,
        env: vec![r, "WORLD_SIZE=\"4\"", "LOCAL_RANK=\"0\""],
        ..Edit::default()
    };
    // By UUID.
    let a = make(&d, "r0.sqlite", &rank("RANK=\"0\"", Some("GPU-aaaa")));
    let b = make(&d, "r1.sqlite", &rank("RANK=\"1\"", Some("GPU-bbbb")));
    let p = open(&[a.clone(), b.clone()]);
    assert_eq!(p.devices.len(), 2);
    assert_eq!(
        p.devices.iter().map(|x| x.rank).collect::<Vec<_>>(),
        vec![Some(0), Some(1)]
    );
    // One host, both "device 0": the JSON values stay distinct.
    assert_eq!(
        keys(&p),
        vec![
            "node03.cluster.example.org:0",
            "node03.cluster.example.org:0#2"
        ]
    );
    assert_eq!(texts(&p), vec!["node03:0 r0", "node03:0 r1"]);
    assert_eq!(p.find_devices("r1"), vec![1]);
    assert_eq!(p.find_devices("node03:0 r1"), vec![1]);
    // By file (no UUID).
    let a2 = make(&d, "r0n.sqlite", &rank("RANK=\"0\"", None));
    let b2 = make(&d, "r1n.sqlite", &rank("RANK=\"1\"", None));
    let p = open(&[a2.clone(), b2.clone()]);
    assert_eq!(p.devices.len(), 2);
    // Without ranks either, the text keeps the `#N` that tells them apart.
    let a3 = make(
        &d,
        "n0.sqlite",
        &Edit {
            host: Some("node03"),
            one_gpu: true,
            ..Edit::default()
        },
    );
    let b3 = make(
        &d,
        "n1.sqlite",
        &Edit {
            host: Some("node03"),
            one_gpu: true,
            ..Edit::default()
        },
    );
    assert_eq!(texts(&open(&[a3, b3])), vec!["node03:0", "node03:0#2"]);
    // The same UUID in two files of one boot: one GPU.
    let c = make(
        &d,
        "r1same.sqlite",
        &rank("SLURM_PROCID=\"0\"", Some("GPU-aaaa")),
    );
    let p = open(&[a.clone(), c]);
    assert_eq!(p.devices.len(), 1);
    // ... unless two ranks used it: then the listing's UUID is not trusted.
    let e = make(&d, "r5same.sqlite", &rank("RANK=\"5\"", Some("GPU-aaaa")));
    let p = open(&[a, e]);
    assert_eq!(p.devices.len(), 2);

    // Summary JSON: the rank field, the world size, the ranks missing.
    let out = crate::report::render(
        &open(&[
            make(&d, "x0.sqlite", &rank("RANK=\"0\"", Some("GPU-aaaa"))),
            make(&d, "x2.sqlite", &rank("RANK=\"2\"", Some("GPU-cccc"))),
        ]),
        &[crate::report::Section::Summary],
        &json_options(),
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let s = &v;
    let ranks: Vec<&serde_json::Value> = s["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| &x["rank"])
        .collect();
    assert_eq!(ranks, vec![0, 2]);
    assert_eq!(s["world_size"], 4);
    assert_eq!(s["ranks_missing"], serde_json::json!([1, 3]));
    let warnings = s["warnings"].to_string();
    assert!(
        warnings.contains("ranks 1, 3 of a world of 4 have no file"),
        "{warnings}"
    );
}

#[test]
fn a_file_using_several_gpus_gives_none_of_them_its_launchers_rank() {
    let d = scratch("launcher");
    let a = make(
        &d,
        "node.sqlite",
        &Edit {
            host: Some("node03"),
            env: vec!["SLURM_PROCID=\"3\"", "SLURM_NTASKS=\"8\""],
            ..Edit::default()
        },
    );
    let p = open(&[a]);
    assert_eq!(p.files[0].rank, Some(3));
    assert_eq!(p.files[0].world_size, Some(8));
    assert!(p.devices.iter().all(|x| x.rank.is_none()));
    assert_eq!(texts(&p), vec!["0", "1"]);
}

#[test]
fn the_rank_comes_from_one_family_of_variables_never_a_guess() {
    let env = |pairs: &[(&str, &str)]| -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    assert_eq!(
        rank_from_env(&[env(&[
            ("SLURM_PROCID", "5"),
            ("SLURM_NTASKS", "16"),
            ("PMI_SIZE", "9")
        ])]),
        (Some(5), Some(16))
    );
    assert_eq!(
        rank_from_env(&[env(&[("PMI_RANK", "2"), ("PMI_SIZE", "4")])]),
        (Some(2), Some(4))
    );
    // Two launched processes with different ranks: none.
    assert_eq!(
        rank_from_env(&[env(&[("RANK", "0")]), env(&[("RANK", "1")])]),
        (None, None)
    );
    assert_eq!(
        rank_from_env(&[env(&[("WORLD_SIZE", "8")])]),
        (None, Some(8))
    );
    assert_eq!(rank_from_env(&[]), (None, None));
    assert_eq!(parse_env_var("RANK=\"4\""), Some(("RANK", "4")));
}
