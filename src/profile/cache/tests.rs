//! Cache entries under attack: a full disk while writing, a changed input
//! behind unchanged metadata, forged entries with valid checksums (targeted
//! and fuzzed): each is an error or a rejection, never a panic or a lie.

use super::*;
use crate::profile::mapped::Mapping;
use memmap2::MmapOptions;
use std::panic::{AssertUnwindSafe, catch_unwind};

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/test-tmp/cache-unit")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A private copy of a small fixture, its key and its loaded profile.
fn input(dir: &Path) -> (PathBuf, Key, FileProfile) {
    let f = dir.join("two_node_a.sqlite");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/two_node_a.sqlite"),
        &f,
    )
    .unwrap();
    let out = super::super::load(
        &super::super::files(std::slice::from_ref(&f)),
        &super::super::LoadPlan::default(),
        &mut |_, _, _| {},
    );
    assert!(out.errors.is_empty());
    let p = out.profile.file_models().next().unwrap().clone();
    let key = Key::of(&f).unwrap();
    (f, key, p)
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_full_disk_fails_the_write_and_leaves_nothing_behind() {
    let d = scratch("full_disk");
    let (_, key, p) = input(&d);
    let cache = d.join("cache");
    for room in [0, 10, 4000] {
        let err = store_limited(&cache, &key, &p, Some(room)).unwrap_err();
        assert!(
            err.contains("cannot write") && err.contains("no space left"),
            "{err}"
        );
        assert!(listing(&cache).is_empty(), "{:?}", listing(&cache));
    }
    let entry = store_limited(&cache, &key, &p, None).unwrap();
    assert_eq!(listing(&cache), vec![key.file_name()]);
    match lookup(&cache, &key) {
        Lookup::Hit(_) => {}
        Lookup::Rejected(why) => panic!("rejected: {why}"),
        Lookup::Missing => panic!("missing"),
    }
    assert_eq!(entry, cache.join(key.file_name()));
}

#[test]
fn changed_content_behind_the_same_metadata_is_stale() {
    let d = scratch("fingerprint");
    let (f, key, p) = input(&d);
    let cache = d.join("cache");
    store(&cache, &key, &p).unwrap();
    // The same size, different content (another capture in its place).
    let mut bytes = std::fs::read(&f).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x5A;
    std::fs::write(&f, &bytes).unwrap();
    let now = Key::of(&f).unwrap();
    assert_ne!(now.fingerprint, key.fingerprint);
    // Everything the file system says as before (what ctime cannot hide
    // on one machine can on another: a copy, a remount).
    let mut forged = key.clone();
    forged.fingerprint = now.fingerprint;
    assert_eq!(forged.file_name(), key.file_name());
    match lookup(&cache, &forged) {
        Lookup::Rejected(why) => assert!(why.contains("content changed"), "{why}"),
        _ => panic!("an entry of other content was served"),
    }
}

#[test]
fn the_fingerprint_reads_the_header_and_a_few_pages() {
    let d = scratch("fingerprint_pages");
    let (f, key, _) = input(&d);
    // 94208 bytes of 4096-byte pages: first, six sampled, last.
    assert_eq!(key.fingerprint.pages.len(), 8);
    assert_eq!(key.fingerprint.header.len(), 200);
    let mut bytes = std::fs::read(&f).unwrap();
    bytes[24] ^= 1; // the file change counter
    std::fs::write(&f, &bytes).unwrap();
    assert_ne!(Key::of(&f).unwrap().fingerprint, key.fingerprint);
}

/// The bytes of a real entry and its key.
fn real_entry(name: &str) -> (Vec<u8>, Key) {
    let d = scratch(name);
    let (_, key, p) = input(&d);
    let entry = store(&d.join("cache"), &key, &p).unwrap();
    (std::fs::read(entry).unwrap(), key)
}

/// Rebuilds an entry around a new directory, with checksums that pass.
fn with_directory(entry: &[u8], directory: &serde_json::Value) -> Vec<u8> {
    let (_, data_start) = sections(entry).unwrap();
    let data = &entry[data_start..];
    let meta = serde_json::to_vec(directory).unwrap();
    let mut out = header(meta.len(), data.len(), xxh3_64(&meta), xxh3_64(data));
    out.extend_from_slice(&meta);
    out.resize(align(out.len(), 64), 0);
    out.extend_from_slice(data);
    out
}

/// Recomputes both checksums, when the header's lengths still fit.
fn reseal(b: &mut [u8]) {
    let Ok((meta, data_start)) = sections(b) else {
        return;
    };
    let (m, d) = (xxh3_64(meta), xxh3_64(&b[data_start..]));
    b[32..40].copy_from_slice(&m.to_le_bytes());
    b[40..48].copy_from_slice(&d.to_le_bytes());
}

/// Decodes `bytes` as the entry of `key`, and reports on what it serves:
/// Ok(served?) or the panic.
fn decode_bytes(bytes: &[u8], key: &Key) -> Result<bool, String> {
    let mut anon = MmapOptions::new().len(bytes.len()).map_anon().unwrap();
    anon.copy_from_slice(bytes);
    let map = Arc::new(Mapping::from(anon.make_read_only().unwrap()));
    assert_eq!(map.len(), bytes.len());
    catch_unwind(AssertUnwindSafe(|| match decode(&map, key) {
        Ok(p) => {
            report_all(&crate::profile::Profile::of_files(vec![p]));
            true
        }
        Err(_) => false,
    }))
    .map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

/// Every report section of `p`, as `report all` would print it.
fn report_all(p: &crate::profile::Profile) {
    use crate::report::{Format, Options, Section, render};
    let options = Options {
        format: Format::Json,
        instances: true,
        ..Default::default()
    };
    render(p, &Section::ALL, &options);
}

fn assert_rejected(bytes: &[u8], key: &Key, what: &str) {
    match decode_bytes(bytes, key) {
        Ok(false) => {}
        Ok(true) => panic!("{what}: served"),
        Err(panic) => panic!("{what}: panicked: {panic}"),
    }
}

#[test]
fn forged_entries_with_valid_checksums_are_rejected() {
    let (entry, key) = real_entry("forged");
    assert_eq!(decode_bytes(&entry, &key), Ok(true));
    let (meta, _) = sections(&entry).unwrap();
    let directory: serde_json::Value = serde_json::from_slice(meta).unwrap();
    let forge = |what: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut d = directory.clone();
        edit(&mut d);
        assert_rejected(&with_directory(&entry, &d), &key, what);
    };
    forge("device index", &|d| d["lanes"][0]["device"] = 99.into());
    forge("context's device", &|d| {
        d["contexts"][0]["device"] = 99.into()
    });
    forge("context's process", &|d| {
        d["contexts"][0]["process"] = 99.into()
    });
    forge("device's host", &|d| d["devices"][0]["host"] = 7.into());
    forge("thread's process", &|d| {
        d["threads"][0]["process"] = 99.into()
    });
    forge("reversed lane rows", &|d| {
        let end = d["lanes"][0]["rows"]["end"].clone();
        d["lanes"][0]["rows"]["end"] = d["lanes"][0]["rows"]["start"].clone();
        d["lanes"][0]["rows"]["start"] = end;
    });
    forge("reversed thread rows", &|d| {
        d["runtime_by_thread"][0] = serde_json::json!({"start": 3, "end": 1})
    });
    forge("rows past the end", &|d| {
        d["nvtx_by_thread"][0] = serde_json::json!({"start": 0, "end": 1_000_000_000})
    });
    forge("overlapping lanes", &|d| {
        d["lanes"][1]["rows"]["start"] = 0.into()
    });
    forge("column offset overflow", &|d| {
        d["columns"][3]["offset"] = u64::MAX.into()
    });
    forge("column length overflow", &|d| {
        d["columns"][3]["len"] = u64::MAX.into()
    });
    forge("short nccl column", &|d| {
        d["nccl_ops"]["operation"] = serde_json::json!([1])
    });
    forge("missing string", &|d| {
        d["processes"][0]["name"] = 1_000_000.into()
    });
    forge("stale key", &|d| d["key"]["path"] = "/elsewhere".into());
    let column = |d: &serde_json::Value, name: &str| {
        d["columns"]
            .as_array()
            .unwrap()
            .iter()
            .position(|c| c["name"] == name)
            .unwrap()
    };
    forge("short launch-shape column", &|d| {
        let i = column(d, "gpu.details.registers");
        d["columns"][i]["len"] = 4.into()
    });
    forge("short detail column", &|d| {
        let i = column(d, "gpu.details.bytes");
        d["columns"][i]["len"] = 8.into()
    });
    // Columns of one length, but every row's detail id past the table.
    forge("detail id out of range", &|d| {
        for c in d["columns"].as_array_mut().unwrap() {
            if c["name"].as_str().unwrap().starts_with("gpu.details.") {
                c["len"] = 0.into();
            }
        }
    });
    forge("missing launch-shape column", &|d| {
        let i = column(d, "gpu.details.dynamic_smem");
        d["columns"].as_array_mut().unwrap().remove(i);
    });
    // Header lengths that overflow when added or aligned.
    for (at, value) in [
        (16, u64::MAX),
        (16, u64::MAX - 40),
        (16, u64::MAX - 100),
        (24, u64::MAX),
        (24, u64::MAX - 63),
    ] {
        let mut b = entry.clone();
        b[at..at + 8].copy_from_slice(&value.to_le_bytes());
        assert_rejected(&b, &key, &format!("header length {value} at {at}"));
    }
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Every number in a JSON value, as a path of keys/indices.
fn numbers(v: &serde_json::Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        serde_json::Value::Number(_) => out.push(at.clone()),
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                at.push(i.to_string());
                numbers(x, at, out);
                at.pop();
            }
        }
        serde_json::Value::Object(o) => {
            for (k, x) in o {
                at.push(k.clone());
                numbers(x, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn at_path<'a>(v: &'a mut serde_json::Value, path: &[String]) -> &'a mut serde_json::Value {
    path.iter().fold(v, |v, k| match v {
        serde_json::Value::Array(a) => &mut a[k.parse::<usize>().unwrap()],
        other => &mut other[k.as_str()],
    })
}

#[test]
fn fuzzed_entries_are_served_or_rejected_never_a_panic() {
    let iterations: usize = std::env::var("RANKLINE_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let (entry, key) = real_entry("fuzz");
    let (meta, data_start) = sections(&entry).unwrap();
    let directory: serde_json::Value = serde_json::from_slice(meta).unwrap();
    let mut paths = Vec::new();
    numbers(&directory, &mut Vec::new(), &mut paths);
    let interesting: [i128; 10] = [
        0,
        1,
        -1,
        2,
        255,
        65535,
        u32::MAX as i128,
        u32::MAX as i128 + 1,
        i64::MAX as i128,
        u64::MAX as i128,
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut hits, mut rejected) = (0, 0);
    for i in 0..iterations {
        let bytes = match i % 3 {
            // A number of the directory set to an edge value.
            0 => {
                let mut d = directory.clone();
                for _ in 0..1 + rng.below(2) {
                    let path = &paths[rng.below(paths.len())];
                    let value = interesting[rng.below(interesting.len())];
                    *at_path(&mut d, path) = serde_json::from_str(&value.to_string()).unwrap();
                }
                with_directory(&entry, &d)
            }
            // Bytes of the columns (ids, times, enums, bools).
            1 => {
                let mut b = entry.clone();
                for _ in 0..1 + rng.below(4) {
                    let at = data_start + rng.below(b.len() - data_start);
                    b[at] = rng.next() as u8;
                }
                reseal(&mut b);
                b
            }
            // Bytes anywhere, header included.
            _ => {
                let mut b = entry.clone();
                for _ in 0..1 + rng.below(3) {
                    let at = rng.below(b.len());
                    b[at] = rng.next() as u8;
                }
                reseal(&mut b);
                b
            }
        };
        match decode_bytes(&bytes, &key) {
            Ok(true) => hits += 1,
            Ok(false) => rejected += 1,
            Err(panic) => panic!("mutation {i} panicked: {panic}"),
        }
    }
    eprintln!("{hits} hits, {rejected} rejected");
    // Both outcomes happen: the mutations reach past the checksums.
    assert!(hits > 0 && rejected > 0, "{hits} hits, {rejected} rejected");
}

/// The kernels' launch configuration comes back from an entry as loaded.
#[test]
fn the_launch_shape_survives_a_cache_entry() {
    let d = scratch("shape");
    let (_, key, p) = input(&d);
    let entry = std::fs::read(store(&d.join("cache"), &key, &p).unwrap()).unwrap();
    let mut anon = MmapOptions::new().len(entry.len()).map_anon().unwrap();
    anon.copy_from_slice(&entry);
    let map = Arc::new(Mapping::from(anon.make_read_only().unwrap()));
    let back = decode(&map, &key).unwrap();
    let kernel = (0..p.gpu.len())
        .find(|&r| p.gpu.kind(r) == GpuKind::Kernel)
        .unwrap();
    assert_ne!(p.gpu.shape(kernel).block, [0, 0, 0]);
    assert_eq!(&p.gpu.detail[..], &back.gpu.detail[..]);
    let (a, b) = (&p.gpu.details, &back.gpu.details);
    for (a, b) in a.shape.columns().iter().zip(b.shape.columns()) {
        assert_eq!(&a[..], &b[..]);
    }
    assert_eq!(&a.long_name[..], &b.long_name[..]);
    assert_eq!(&a.bytes[..], &b.bytes[..]);
    assert_eq!(&a.graph_node[..], &b.graph_node[..]);
}

/// A changed data byte is named as such, whether or not the column checks
/// (which run beside the data checksum) would also refuse the entry.
#[test]
fn a_changed_data_byte_is_a_data_checksum_mismatch() {
    let (entry, key) = real_entry("data_byte");
    let (_, data_start) = sections(&entry).unwrap();
    // The first start of the GPU rows (the lanes' order breaks) and the
    // entry's last byte.
    for at in [data_start + 7, entry.len() - 1] {
        let mut b = entry.clone();
        b[at] ^= 0x40;
        let mut anon = MmapOptions::new().len(b.len()).map_anon().unwrap();
        anon.copy_from_slice(&b);
        let map = Arc::new(Mapping::from(anon.make_read_only().unwrap()));
        let got = decode(&map, &key).err();
        assert_eq!(
            got.as_deref(),
            Some("data checksum mismatch (corrupted)"),
            "byte {at}"
        );
    }
}
