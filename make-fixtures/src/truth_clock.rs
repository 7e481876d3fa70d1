//! Ground truth of the multi-file scenarios (issue 10): each file's true clock, and every
//! collective instance in true time, computed from the generator's own event lists before
//! they are moved onto the files' clocks (no rankline code, no SQL).
//!
//! Fields of `<scenario>.truth.json` (instants such as `start_ns` are timestamps of the
//! reference file's clock; durations and skews are in true time, which that clock keeps):
//! - `reference`: path of the reference file (the first file; no drift, so its clock keeps true
//!   time).
//! - `files[]`: one per file, in command-line order:
//!   - `path`, `host` (TARGET_INFO_SYSTEM_ENV Hostname), `timebase` (`boot-clock` |
//!     `session-relative`);
//!   - `first_event_ns`, `last_event_ns`: the file's earliest start / latest end, on its own
//!     clock (`t_file,0` of the mapping);
//!   - `true_offset_ns`, `true_offset_ms`: `t_ref − t_file` at `first_event_ns`;
//!   - `true_drift_ppm`: so that `t_ref = t_file + true_offset_ns + true_drift_ppm·10⁻⁶·(t_file −
//!     first_event_ns)` holds for every timestamp of the file (to < 1 ns);
//!   - `true_offset_at_last_event_ms`: the same mapping's offset at `last_event_ns`;
//!   - `span_s`: (last − first event) in seconds (drift is resolvable from ≥ 60 s);
//!   - `utc_epoch_ns`, `system_clock_ns`: the recorded TARGET_INFO_SESSION_START_TIME values;
//!     `boot_instant_utc_ns` = utcEpochNs − systemClockNs (boot-clock files only, else null);
//!   - `utc_error_ms`: recorded utcEpochNs − true UTC (the known error of the stamp);
//!   - `utc_offset_ms`: the offset a UTC-only alignment applies (UTC of this file's timestamp 0
//!     minus UTC of the reference's timestamp 0, by the stamps);
//!   - `utc_only_error_ms` / `utc_only_error_at_last_event_ms`: `utc_offset − true offset` at the
//!     first / last event (what UTC alignment gets wrong);
//!   - `ranks`: capture-environment ranks of the file's processes (empty when none recorded);
//!   - `ends_vs_reference_ms` (files other than the reference): over the instances of groups
//!     spanning both files, `d = median end of this file's ranks − median end of the reference
//!     file's ranks` (true time): `{"instances", "median", "mad"}` (mad = median |d − median|);
//!   - `refinement_expected`: `accepted` when ≥ 5 such instances and mad ≤ 0.2 ms, else
//!     `refused` (null for the reference).
//! - `devices[]`: one per (file, CUDA device used by kernels): `file` (index), `host`,
//!   `device` (the deviceId in the file's kernels), `gpu_id` (TARGET_INFO_GPU.id through
//!   TARGET_INFO_CUDA_DEVICE), `uuid`, `pid`, `rank` (null when not recorded).
//! - `world_size`, `missing_ranks`: from the capture environment (null / [] when none).
//! - `groups[]`: `key` (as rankline should name it), `scope` (`global` | `node-local`),
//!   `host` (node-local only), `stream`, `ops` (distinct, in order of first use), `members[]`
//!   (`file`, `host`, `device`, `rank`), `instance_count`, `start_skew_ms`/`end_skew_ms`
//!   `{p50, p90, max}`, `late_counts_by_host`, `early_counts_by_host`,
//!   `mean_lateness_ms_excluding_big_by_host` (mean over non-big instances and the host's ranks
//!   of start − earliest start), and `instances[]`:
//!   - `number` (1-based, by earliest start), `op`, `start_ns` (earliest start), `start_skew_ms`,
//!     `end_skew_ms`, `big` (start skew > 20 ms), `late` / `early` (member: `file`, `host`,
//!     `device`, `rank`), `late_by_ms` (latest − second-latest start);
//!   - `late_host`: the host all of whose ≥ 2 ranks start later than every rank of the other
//!     hosts, by `late_host_margin_ms` (> 0), else null; given on every instance, big or not
//!     (rankline names it on big events). A margin under 0.05 ms could flip with a residual of
//!     a few µs: such instances have `late_host` null and `late_host_ambiguous` true (tests
//!     skip them); otherwise `late_host_ambiguous` is false.
//! - `single_clock_skew` (multinode only): the issue-3 skew oracle (truth_skew.rs) run on all
//!   four files in true time, device keys `host:id` (e.g. `node02.cluster.example:1`).
//! - `single_clock_launch` (multinode only): the issue-3 launch oracle (truth_skew.rs) on the
//!   same true-time files, at `--big-skew-ms` 20 (rankline's default) and 1: a list of
//!   `{big_skew_ms, late_instances[]}`, one late instance per instance whose start skew exceeds
//!   it (group, then instance order): `group`, `instance` (1-based), `device` (`host:id`), `api`,
//!   `api_end_to_start_ms` (its kernel's start − its launch call's end), `cpu_delay_ms` (the
//!   launch call's end − the earliest other rank's start, clamped at 0), `signed_cpu_delay_ms`
//!   (the same, unclamped), `verdict` (`cpu-late` when the call ended after that start, else
//!   `gpu-side`), `preceding_kernel`, `late_by_ms` (its start − the second-latest start: below a
//!   clock residual, another rank could be called the late one).
//! - `scenario`: what was generated (description, files, hosts, the injected late events).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::clock::{FileClock, Timebase, event_span};
use crate::model::{Kernel, Profile};
use crate::stats::{ms, p50_p90_max};

pub const BIG_SKEW_MS: f64 = 20.0;
/// The rule for accepting a refined clock.
const MAD_LIMIT_MS: f64 = 0.2;
const MIN_INSTANCES: usize = 5;
/// A late host's margin below this is ambiguous (a clock residual could flip it).
const LATE_HOST_MARGIN_MS: f64 = 0.05;

/// A file of a scenario, its events still in true time.
pub struct File {
    pub profile: Profile,
    pub clock: FileClock,
    /// (pid, rank) from the capture environment.
    pub ranks: Vec<(u32, u32)>,
}

/// One rank of a group: (file index, CUDA device, stream).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Member {
    pub file: usize,
    pub device: u32,
    pub stream: u32,
}

pub struct GroupDef {
    pub key: String,
    pub global: bool,
    pub members: Vec<Member>,
}

/// The reference file's timestamp of true time `t` (the reference clock has no drift; for a
/// boot-clock reference the two are equal, for a session-relative one they differ by its start).
fn on_ref(files: &[File], t: f64) -> f64 {
    let r = &files[0].clock;
    assert_eq!(r.drift_ppm, 0.0, "the reference clock defines true time");
    t - (r.session_true - r.session_file) as f64
}

fn pid_of(f: &File, device: u32) -> u32 {
    f.profile
        .processes
        .iter()
        .find(|p| p.context.as_ref().is_some_and(|c| c.device == device))
        .expect("a process on every device")
        .pid
}

fn rank_of(f: &File, device: u32) -> Option<u32> {
    let pid = pid_of(f, device);
    f.ranks.iter().find(|r| r.0 == pid).map(|r| r.1)
}

fn member_json(files: &[File], m: &Member) -> Value {
    let f = &files[m.file];
    json!({"file": m.file, "host": f.profile.host, "device": m.device, "rank": rank_of(f, m.device)})
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

struct Inst<'a> {
    ranks: Vec<(Member, &'a Kernel)>,
}

impl Inst<'_> {
    fn earliest(&self) -> i64 {
        self.ranks.iter().map(|r| r.1.start).min().unwrap()
    }
    fn latest(&self) -> i64 {
        self.ranks.iter().map(|r| r.1.start).max().unwrap()
    }
    fn late(&self) -> Member {
        let l = self.latest();
        self.ranks.iter().find(|r| r.1.start == l).unwrap().0
    }
    fn early(&self) -> Member {
        let e = self.earliest();
        self.ranks.iter().find(|r| r.1.start == e).unwrap().0
    }
    fn end_skew(&self) -> i64 {
        let e = self.ranks.iter().map(|r| r.1.end);
        e.clone().max().unwrap() - e.min().unwrap()
    }
    fn median_end_of(&self, file: usize) -> Option<f64> {
        let mut v: Vec<f64> = self
            .ranks
            .iter()
            .filter(|r| r.0.file == file)
            .map(|r| r.1.end as f64)
            .collect();
        (!v.is_empty()).then(|| median(&mut v))
    }
}

fn instances<'a>(files: &'a [File], g: &GroupDef) -> Vec<Inst<'a>> {
    let seqs: Vec<Vec<&Kernel>> = g
        .members
        .iter()
        .map(|m| {
            let mut v: Vec<&Kernel> = files[m.file]
                .profile
                .kernels
                .iter()
                .filter(|k| k.nccl.is_some() && k.device == m.device && k.stream == m.stream)
                .collect();
            v.sort_by_key(|k| k.start);
            v
        })
        .collect();
    let n = seqs[0].len();
    assert!(
        seqs.iter().all(|s| s.len() == n),
        "{}: members differ in instance count",
        g.key
    );
    let mut out: Vec<Inst> = (0..n)
        .map(|i| Inst {
            ranks: g
                .members
                .iter()
                .zip(&seqs)
                .map(|(m, s)| (*m, s[i]))
                .collect(),
        })
        .collect();
    for i in &out {
        let op = i.ranks[0].1.nccl.unwrap().op;
        assert!(i.ranks.iter().all(|r| r.1.nccl.unwrap().op == op));
    }
    out.sort_by_key(|i| i.earliest());
    out
}

/// (host, margin ms) when every rank of one host (≥ 2 ranks) starts after every other rank.
fn late_host(files: &[File], i: &Inst) -> Option<(String, f64)> {
    let host = |m: &Member| &files[m.file].profile.host;
    let late = i.late();
    let h = host(&late);
    let mine: Vec<i64> = i
        .ranks
        .iter()
        .filter(|r| host(&r.0) == h)
        .map(|r| r.1.start)
        .collect();
    let others: Vec<i64> = i
        .ranks
        .iter()
        .filter(|r| host(&r.0) != h)
        .map(|r| r.1.start)
        .collect();
    if mine.len() < 2 || others.is_empty() {
        return None;
    }
    let margin = ms(mine.iter().min().unwrap() - others.iter().max().unwrap());
    (margin > 0.0).then(|| (h.clone(), margin))
}

fn group_json(files: &[File], g: &GroupDef) -> Value {
    let insts = instances(files, g);
    let host = |m: &Member| files[m.file].profile.host.clone();
    let mut ops: Vec<&str> = vec![];
    let mut rows = vec![];
    let mut late_counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut early_counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut lateness: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for m in &g.members {
        late_counts.insert(host(m), 0);
        early_counts.insert(host(m), 0);
        lateness.insert(host(m), vec![]);
    }
    for (n, i) in insts.iter().enumerate() {
        let op = i.ranks[0].1.nccl.unwrap().op;
        if !ops.contains(&op) {
            ops.push(op);
        }
        let skew = i.latest() - i.earliest();
        let big = ms(skew) > BIG_SKEW_MS;
        let mut starts: Vec<i64> = i.ranks.iter().map(|r| r.1.start).collect();
        starts.sort();
        let mut lh = late_host(files, i);
        let ambiguous = lh.as_ref().is_some_and(|x| x.1 < LATE_HOST_MARGIN_MS);
        if ambiguous {
            lh = None;
        }
        *late_counts.get_mut(&host(&i.late())).unwrap() += 1;
        *early_counts.get_mut(&host(&i.early())).unwrap() += 1;
        if !big {
            for (m, k) in &i.ranks {
                lateness
                    .get_mut(&host(m))
                    .unwrap()
                    .push(k.start - i.earliest());
            }
        }
        rows.push(json!({
            "number": n + 1,
            "op": op,
            "start_ns": on_ref(files, i.earliest() as f64) as i64,
            "start_skew_ms": ms(skew),
            "end_skew_ms": ms(i.end_skew()),
            "big": big,
            "late": member_json(files, &i.late()),
            "early": member_json(files, &i.early()),
            "late_by_ms": ms(starts[starts.len() - 1] - starts[starts.len() - 2]),
            "late_host": lh.as_ref().map(|x| x.0.clone()),
            "late_host_margin_ms": lh.as_ref().map(|x| x.1),
            "late_host_ambiguous": ambiguous,
        }));
    }
    let starts: Vec<f64> = insts
        .iter()
        .map(|i| ms(i.latest() - i.earliest()))
        .collect();
    let ends: Vec<f64> = insts.iter().map(|i| ms(i.end_skew())).collect();
    let mean: BTreeMap<String, Value> = lateness
        .into_iter()
        .map(|(h, v)| {
            let m = if v.is_empty() {
                Value::Null
            } else {
                json!(v.iter().sum::<i64>() as f64 / v.len() as f64 / 1e6)
            };
            (h, m)
        })
        .collect();
    let hosts: Vec<String> = g.members.iter().map(host).collect();
    json!({
        "key": g.key,
        "scope": if g.global { "global" } else { "node-local" },
        "host": if g.global { Value::Null } else { json!(hosts[0]) },
        "stream": g.members[0].stream,
        "ops": ops,
        "members": g.members.iter().map(|m| member_json(files, m)).collect::<Vec<_>>(),
        "instance_count": insts.len(),
        "start_skew_ms": p50_p90_max(&starts),
        "end_skew_ms": p50_p90_max(&ends),
        "late_counts_by_host": late_counts,
        "early_counts_by_host": early_counts,
        "mean_lateness_ms_excluding_big_by_host": mean,
        "instances": rows,
    })
}

/// Per file (index > 0): the per-instance differences of median ends against the reference.
fn ends_vs_reference(files: &[File], groups: &[GroupDef]) -> Vec<Vec<f64>> {
    let mut d = vec![vec![]; files.len()];
    for g in groups {
        for i in instances(files, g) {
            let Some(r) = i.median_end_of(0) else {
                continue;
            };
            for (f, v) in d.iter_mut().enumerate().skip(1) {
                if let Some(e) = i.median_end_of(f) {
                    v.push((e - r) / 1e6);
                }
            }
        }
    }
    d
}

/// The clock fields of a file (`path` … `utc_only_error_at_last_event_ms`), from its events in
/// true time and its clock; `reference` is the first file's clock.
pub fn clock_fields(reference: &FileClock, p: &Profile, c: &FileClock) -> Map<String, Value> {
    assert_eq!(
        reference.drift_ppm, 0.0,
        "the reference clock defines true time"
    );
    // the reference file's timestamp of true time t
    let on_ref = |t: f64| t - (reference.session_true - reference.session_file) as f64;
    let (lo, hi) = event_span(p);
    let (first, last) = (c.file_time(lo), c.file_time(hi));
    let off = on_ref(c.true_time(first)) - first as f64;
    let off_last = on_ref(c.true_time(last)) - last as f64;
    let utc_offset = (c.utc_of_zero() - reference.utc_of_zero()) as f64;
    let v = json!({
        "path": p.path,
        "host": p.host,
        "timebase": c.timebase.name(),
        "first_event_ns": first,
        "last_event_ns": last,
        "span_s": (last - first) as f64 / 1e9,
        "true_offset_ns": off,
        "true_offset_ms": off / 1e6,
        "true_drift_ppm": c.drift_ppm,
        "true_offset_at_last_event_ms": off_last / 1e6,
        "utc_epoch_ns": c.utc_epoch_ns(),
        "system_clock_ns": c.boot_at_session,
        "boot_instant_utc_ns": (c.timebase == Timebase::Boot).then(|| c.utc_epoch_ns() - c.boot_at_session),
        "utc_error_ms": c.utc_error_ns as f64 / 1e6,
        "utc_offset_ms": utc_offset / 1e6,
        "utc_only_error_ms": (utc_offset - off) / 1e6,
        "utc_only_error_at_last_event_ms": (utc_offset - off_last) / 1e6,
    });
    match v {
        Value::Object(m) => m,
        _ => unreachable!(),
    }
}

fn file_json(files: &[File], fi: usize, ends: &[f64]) -> Value {
    let f = &files[fi];
    let mut m = clock_fields(&files[0].clock, &f.profile, &f.clock);
    let (ends_json, verdict) = if fi == 0 {
        (Value::Null, Value::Null)
    } else {
        let mut v = ends.to_vec();
        let med = median(&mut v);
        let mut dev: Vec<f64> = v.iter().map(|x| (x - med).abs()).collect();
        let mad = median(&mut dev);
        let ok = v.len() >= MIN_INSTANCES && mad <= MAD_LIMIT_MS;
        (
            json!({"instances": v.len(), "median": med, "mad": mad}),
            json!(if ok { "accepted" } else { "refused" }),
        )
    };
    let mut ranks: Vec<u32> = f.ranks.iter().map(|r| r.1).collect();
    ranks.sort();
    m.insert("ranks".into(), json!(ranks));
    m.insert("ends_vs_reference_ms".into(), ends_json);
    m.insert("refinement_expected".into(), verdict);
    Value::Object(m)
}

fn devices_json(files: &[File]) -> Value {
    let mut out = vec![];
    for (fi, f) in files.iter().enumerate() {
        let mut devs: Vec<u32> = f.profile.kernels.iter().map(|k| k.device).collect();
        devs.sort();
        devs.dedup();
        for d in devs {
            let gpu = f
                .profile
                .gpus
                .iter()
                .find(|g| g.cuda_id == Some(d))
                .expect("a listed GPU for every CUDA device");
            out.push(json!({
                "file": fi,
                "host": f.profile.host,
                "device": d,
                "gpu_id": gpu.id,
                "uuid": gpu.uuid,
                "pid": pid_of(f, d),
                "rank": rank_of(f, d),
            }));
        }
    }
    json!(out)
}

/// The truth of a scenario; `world_size` from the capture environment when recorded.
pub fn truth(
    files: &[File],
    groups: &[GroupDef],
    world_size: Option<u32>,
    scenario: Value,
) -> Value {
    let ends = ends_vs_reference(files, groups);
    let ranks: Vec<u32> = files
        .iter()
        .flat_map(|f| f.ranks.iter().map(|r| r.1))
        .collect();
    let missing: Vec<u32> = world_size
        .map(|w| (0..w).filter(|r| !ranks.contains(r)).collect())
        .unwrap_or_default();
    json!({
        "scenario": scenario,
        "reference": files[0].profile.path,
        "files": (0..files.len()).map(|i| file_json(files, i, &ends[i])).collect::<Vec<_>>(),
        "devices": devices_json(files),
        "world_size": world_size,
        "missing_ranks": missing,
        "groups": groups.iter().map(|g| group_json(files, g)).collect::<Vec<_>>(),
    })
}
