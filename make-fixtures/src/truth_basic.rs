//! Ground truth for the `summary`, `nccl` and `overlap` sections, computed directly from the
//! generator's own event lists (an independent oracle: no rankline code, no SQL).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use crate::model::{Kernel, NvtxKind, Profile};
use crate::stats::{intersection, length, ms, union};
use crate::writer::{NSYS_VERSION, SCHEMA_VERSION};

/// A device of one file: (file index, host, device id). Sorted by host then id.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct Dev {
    pub host: String,
    pub id: u32,
    pub file: usize,
}

pub struct Input<'a> {
    pub files: Vec<&'a Profile>,
}

impl<'a> Input<'a> {
    pub fn new(files: Vec<&'a Profile>) -> Self {
        Input { files }
    }

    fn multi_host(&self) -> bool {
        self.files
            .iter()
            .map(|f| &f.host)
            .collect::<BTreeSet<_>>()
            .len()
            > 1
    }

    /// Plain integer with one host, `"host:id"` with several.
    pub fn dev_json(&self, d: &Dev) -> Value {
        if self.multi_host() {
            json!(format!("{}:{}", d.host, d.id))
        } else {
            json!(d.id)
        }
    }

    /// Key of per-device maps (`late_counts` ...): `"3"` or `"node-a:1"`.
    pub fn dev_key(&self, d: &Dev) -> String {
        if self.multi_host() {
            format!("{}:{}", d.host, d.id)
        } else {
            d.id.to_string()
        }
    }

    pub fn dev(&self, file: usize, id: u32) -> Dev {
        Dev {
            host: self.files[file].host.clone(),
            id,
            file,
        }
    }

    /// Kernels of every file with their device.
    pub fn kernels(&self) -> impl Iterator<Item = (Dev, &'a Kernel)> + '_ {
        self.files
            .iter()
            .enumerate()
            .flat_map(move |(fi, f)| f.kernels.iter().map(move |k| (self.dev(fi, k.device), k)))
    }

    pub fn devices_with_kernels(&self) -> BTreeSet<Dev> {
        self.kernels().map(|(d, _)| d).collect()
    }
}

pub fn summary(inp: &Input) -> Value {
    let files: Vec<Value> = inp
        .files
        .iter()
        .map(|f| json!({"path": f.path, "nsys_version": NSYS_VERSION, "schema_version": SCHEMA_VERSION, "host": f.host}))
        .collect();
    let (mut first, mut last) = (i64::MAX, i64::MIN);
    let mut see = |s: i64, e: i64| {
        first = first.min(s);
        last = last.max(e);
    };
    for f in &inp.files {
        f.kernels.iter().for_each(|x| see(x.start, x.end));
        f.memcpys.iter().for_each(|x| see(x.start, x.end));
        f.memsets.iter().for_each(|x| see(x.start, x.end));
        f.calls.iter().for_each(|x| see(x.start, x.end));
        f.nvtx
            .iter()
            .for_each(|x| see(x.start, x.end.unwrap_or(x.start)));
    }

    let mut listed = BTreeSet::new();
    let mut expected = BTreeSet::new();
    let mut with_activity = BTreeSet::new();
    for (fi, f) in inp.files.iter().enumerate() {
        for g in &f.gpus {
            listed.insert(inp.dev(fi, g.id));
        }
        for p in &f.processes {
            if let Some(c) = &p.context {
                expected.insert(inp.dev(fi, c.device));
            }
        }
        let act = f
            .kernels
            .iter()
            .map(|k| k.device)
            .chain(f.memcpys.iter().map(|m| m.device))
            .chain(f.memsets.iter().map(|m| m.device));
        for d in act {
            expected.insert(inp.dev(fi, d));
            with_activity.insert(inp.dev(fi, d));
        }
    }
    let all: BTreeSet<Dev> = listed.union(&expected).cloned().collect();
    let with_kernels = inp.devices_with_kernels();
    let mut devices = vec![];
    for d in &all {
        let f = inp.files[d.file];
        let name = f.gpus.iter().find(|g| g.id == d.id).map(|g| g.name.clone());
        let pids: BTreeSet<u32> = f
            .processes
            .iter()
            .filter(|p| p.context.as_ref().is_some_and(|c| c.device == d.id))
            .map(|p| p.pid)
            .collect();
        devices.push(json!({
            "device": inp.dev_json(d),
            "name": name,
            "processes": pids.iter().collect::<Vec<_>>(),
            "kernels": f.kernels.iter().filter(|k| k.device == d.id).count(),
            "memcpy": f.memcpys.iter().filter(|k| k.device == d.id).count(),
            "memset": f.memsets.iter().filter(|k| k.device == d.id).count(),
            "runtime_calls": f.calls.iter().filter(|c| pids.contains(&c.pid)).count(),
            "nvtx_ranges": f.nvtx.iter().filter(|e| pids.contains(&e.pid) && matches!(e.kind, NvtxKind::PushPop | NvtxKind::StartEnd)).count(),
        }));
    }
    let list =
        |s: &mut dyn Iterator<Item = &Dev>| -> Vec<Value> { s.map(|d| inp.dev_json(d)).collect() };
    let with_contexts: BTreeSet<Dev> = inp
        .files
        .iter()
        .enumerate()
        .flat_map(|(fi, f)| {
            f.processes
                .iter()
                .filter_map(move |p| p.context.as_ref().map(|c| (fi, c.device)))
        })
        .map(|(fi, d)| inp.dev(fi, d))
        .collect();
    json!({
        "files": files,
        "span_ns": [first, last],
        "devices": devices,
        "expected_devices": list(&mut expected.iter()),
        "devices_with_kernels": list(&mut with_kernels.iter()),
        "missing_devices": list(&mut expected.iter().filter(|d| !with_activity.contains(d))),
        "listed_unused_devices": list(&mut listed.iter().filter(|d| !with_contexts.contains(d))),
    })
}

pub fn nccl(inp: &Input) -> Value {
    // device -> (stream, pid) -> (op, dtype) -> durations
    type Ops = BTreeMap<
        (&'static str, Option<&'static str>),
        (Vec<i64>, Option<&'static str>, Option<&'static str>),
    >;
    let mut by_dev: BTreeMap<Dev, BTreeMap<(u32, u32), Ops>> = BTreeMap::new();
    for (d, k) in inp.kernels() {
        let Some(n) = k.nccl else { continue };
        let e = by_dev
            .entry(d)
            .or_default()
            .entry((k.stream, k.pid))
            .or_default()
            .entry((n.op, n.dtype))
            .or_insert((vec![], n.algo, n.proto));
        assert_eq!(
            (e.1, e.2),
            (n.algo, n.proto),
            "one algo/proto per op in the fixtures"
        );
        e.0.push(k.end - k.start);
    }
    let mut devices = vec![];
    for (d, streams) in &by_dev {
        let dev_total: i64 = streams
            .values()
            .flat_map(|o| o.values())
            .flat_map(|v| v.0.iter())
            .sum();
        let mut sv = vec![];
        for ((stream, pid), ops) in streams {
            let mut rows: Vec<(i64, &str, Option<&str>, Value)> = vec![];
            for ((op, dtype), (durs, algo, proto)) in ops {
                let total: i64 = durs.iter().sum();
                rows.push((
                    total,
                    op,
                    *dtype,
                    json!({
                        "op": op,
                        "dtype": dtype,
                        "hints": {"algo": algo, "proto": proto},
                        "count": durs.len(),
                        "total_ms": ms(total),
                        "avg_ms": total as f64 / durs.len() as f64 / 1e6,
                        "min_ms": ms(*durs.iter().min().unwrap()),
                        "max_ms": ms(*durs.iter().max().unwrap()),
                        "pct_of_device_nccl": 100.0 * total as f64 / dev_total as f64,
                    }),
                ));
            }
            // total desc, ties: op then dtype (None first)
            rows.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)).then(a.2.cmp(&b.2)));
            sv.push(json!({"stream": stream, "pid": pid, "ops": rows.into_iter().map(|r| r.3).collect::<Vec<_>>()}));
        }
        devices.push(
            json!({"device": inp.dev_json(d), "nccl_total_ms": ms(dev_total), "streams": sv}),
        );
    }
    json!({ "devices": devices })
}

/// Per device: kernel time split into compute-only, NCCL-only and both; copy-only time (a memcpy
/// or memset runs and no kernel does); idle for the rest of the span, which runs from the first
/// start to the last end of any activity on the device.
pub fn overlap(inp: &Input) -> Value {
    let mut by_dev: BTreeMap<Dev, Vec<&Kernel>> = BTreeMap::new();
    let mut copies: BTreeMap<Dev, Vec<(i64, i64)>> = BTreeMap::new();
    for (d, k) in inp.kernels() {
        by_dev.entry(d).or_default().push(k);
    }
    for (fi, f) in inp.files.iter().enumerate() {
        let spans = f
            .memcpys
            .iter()
            .map(|m| (m.device, m.start, m.end))
            .chain(f.memsets.iter().map(|m| (m.device, m.start, m.end)));
        for (device, start, end) in spans {
            let d = inp.dev(fi, device);
            by_dev.entry(d.clone()).or_default();
            copies.entry(d).or_default().push((start, end));
        }
    }
    let mut devices = vec![];
    for (d, ks) in &by_dev {
        let copy_spans = copies.get(d).cloned().unwrap_or_default();
        let c = union(
            ks.iter()
                .filter(|k| k.nccl.is_none())
                .map(|k| (k.start, k.end))
                .collect(),
        );
        let n = union(
            ks.iter()
                .filter(|k| k.nccl.is_some())
                .map(|k| (k.start, k.end))
                .collect(),
        );
        let any_kernel = union(ks.iter().map(|k| (k.start, k.end)).collect());
        let m = union(copy_spans.clone());
        let all = ks
            .iter()
            .map(|k| (k.start, k.end))
            .chain(copy_spans.iter().copied());
        let first = all.clone().map(|s| s.0).min().unwrap();
        let last = all.map(|s| s.1).max().unwrap();
        let (lc, ln, ov) = (length(&c), length(&n), intersection(&c, &n));
        let copy_only = length(&m) - intersection(&m, &any_kernel);
        let busy = length(&any_kernel) + copy_only;
        assert_eq!(length(&any_kernel), lc + ln - ov);
        devices.push(json!({
            "device": inp.dev_json(d),
            "span_ms": ms(last - first),
            "compute_only_ms": ms(lc - ov),
            "nccl_only_ms": ms(ln - ov),
            "overlap_ms": ms(ov),
            "copy_only_ms": ms(copy_only),
            "idle_ms": ms(last - first - busy),
            "nccl_overlapped_pct": if ln > 0 { json!(100.0 * ov as f64 / ln as f64) } else { Value::Null },
            "compute_kernels": ks.iter().filter(|k| k.nccl.is_none()).count(),
            "nccl_kernels": ks.iter().filter(|k| k.nccl.is_some()).count(),
            "copies": copy_spans.len(),
        }));
    }
    json!({ "devices": devices })
}
