//! Issue 19's split-and-shift test: a single-clock capture (the megatron
//! fixture, the real 2-process SendRecv export) written as one file per
//! rank, each moved hours and a few ppm onto a clock of its own with a UTC
//! stamp a few ms off (tests/common/split.rs), gives every cross-file
//! figure of the original — skew, stragglers, launch verdicts and delays,
//! summary span, overlap in a window, diff — within the clock error.
//!
//! The clock error is the larger of the residual rankline reports and the
//! alignment's true error, measured here from the split's known mappings
//! and held to issue 10's 0.02 ms. The reported residual alone is no bound:
//! on one clock, the real capture's rank 1 SendRecv kernels end 13.5 µs
//! before rank 0's on average, a bias that ends cannot tell from a clock
//! offset, so the recovered offset is 13.6 µs off while the residual p90
//! is 6 µs.
//!
//! Devices are matched by process (each device has one, on both sides):
//! the original labels them by bare id (one host), the split `host-rN:id`
//! (one host per file).

mod common;
use common::split::{Split, gpu_edge_near, gpu_first, split_per_process};
use common::*;
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Display;
use std::path::Path;
use std::sync::OnceLock;

/// Issue 10's tolerance on a recovered clock (ms).
const ALIGN_TOL_MS: f64 = 0.02;
/// Aligned times are rounded to the ns; a difference of two, twice.
const ROUND_MS: f64 = 1e-5;
/// A kernel's start − its own launch call's end: one file, one clock.
const SAME_FILE_TOL_MS: f64 = 1e-4;
/// A sum over one file's events (overlap parts, kernel totals): each
/// shifted timestamp was rounded to the ns, and thousands of intervals add
/// their rounding (tens of ns seen).
const SUM_TOL_MS: f64 = 1e-3;

/// One capture, its split, and `report all` of both.
struct Case {
    split: Split,
    /// `--big-skew-ms` of every run. The real capture has no start skew
    /// over the default 20 ms; over 0.1 ms, 15 of its 33 instances, with
    /// both verdicts and delays down to 13 µs, near its clock residual.
    big_skew_ms: &'static str,
    before: Value,
    after: Value,
    /// Device label → pid, per side.
    pid_before: HashMap<String, u32>,
    pid_after: HashMap<String, u32>,
    /// The largest residual p90 rankline reports for the split's files.
    residual_ms: f64,
    /// The largest difference of two events' alignment errors (the split's
    /// mappings are known): what a figure comparing two aligned times can
    /// be off by.
    clock_error_ms: f64,
    /// The largest drift of a split file: a duration measured on one file's
    /// clock is off by this share of itself.
    drift: f64,
}

fn run(args: &[&str], files: &[&Path], big_skew_ms: &str) -> Value {
    let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    let mut all: Vec<&str> = args.to_vec();
    all.extend([
        "--format",
        "json",
        "--no-cache",
        "--big-skew-ms",
        big_skew_ms,
    ]);
    all.extend(names.iter().map(String::as_str));
    json(&all)
}

/// A device label as text, from a JSON value (`3`, `"node:3"`) or key.
fn label(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A file's fitted drift (ppm); `null` (not fitted) is none.
fn drift(row: &Value) -> f64 {
    row["drift_ppm"].as_f64().unwrap_or(0.0)
}

fn arr(v: &Value) -> &Vec<Value> {
    v.as_array().unwrap_or_else(|| panic!("not an array: {v}"))
}

/// Each device's process, from the summary's devices.
fn pids(all: &Value) -> HashMap<String, u32> {
    arr(&all["summary"]["devices"])
        .iter()
        .map(|d| {
            let procs = arr(&d["processes"]);
            assert_eq!(procs.len(), 1, "one process per device: {d}");
            (label(&d["device"]), procs[0].as_u64().unwrap() as u32)
        })
        .collect()
}

impl Case {
    fn new(src: &Path, name: &str, big_skew_ms: &'static str) -> Case {
        let split = split_per_process(src, name);
        let args = ["report", "all", "--instances"];
        let before = run(&args, &[&split.original], big_skew_ms);
        let after = run(&args, &[&split.dir], big_skew_ms);
        let rows = arr(&after["summary"]["clock"]["files"]);
        assert_eq!(rows.len(), split.files.len());
        let residual_ms = rows
            .iter()
            .map(|r| f(&r["residual_end_skew_ms"]["p90"]))
            .fold(0.0, f64::max);
        // Each file's alignment error at both ends of the capture: rankline's
        // mapping of its timestamp minus the reference clock's timestamp of
        // the same original instant. Errors are linear in time, so these
        // bound every difference of two aligned times.
        let span = arr(&before["summary"]["span_ns"]);
        let mut errors = Vec::new();
        for (row, file) in rows.iter().zip(&split.files) {
            assert_eq!(row["path"], file.path.display().to_string());
            let t0 = gpu_first(&file.path) as f64;
            for t in span {
                let x = file.clock.apply(t.as_i64().unwrap()) as f64;
                let offset = f(&row["offset_ms"]) * 1e6 + drift(row) * 1e-6 * (x - t0);
                let truth = split.on_reference(file.clock.original(x));
                errors.push((x + offset - truth) / 1e6);
            }
        }
        let hi = errors.iter().copied().fold(f64::MIN, f64::max);
        let lo = errors.iter().copied().fold(f64::MAX, f64::min);
        let drift = split
            .files
            .iter()
            .map(|s| s.clock.drift_ppm.abs() * 1e-6)
            .fold(0.0, f64::max);
        Case {
            pid_before: pids(&before),
            pid_after: pids(&after),
            split,
            big_skew_ms,
            before,
            after,
            residual_ms,
            clock_error_ms: hi - lo,
            drift,
        }
    }

    /// The tolerance of a figure comparing files.
    fn tol_ms(&self) -> f64 {
        self.residual_ms.max(self.clock_error_ms) + ROUND_MS
    }

    /// The process of a device of the original (`before`) or the split.
    fn pid(&self, before: bool, device: &Value) -> u32 {
        let map = if before {
            &self.pid_before
        } else {
            &self.pid_after
        };
        *map.get(&label(device)).unwrap_or_else(|| {
            panic!(
                "no device {device} on the {} side",
                ["split", "original"][before as usize]
            )
        })
    }

    fn pids(&self, before: bool, devices: &Value) -> Vec<u32> {
        arr(devices).iter().map(|d| self.pid(before, d)).collect()
    }

    /// Rows of a per-device list (`devices` of a section) by process.
    fn by_pid(&self, before: bool, devices: &Value) -> HashMap<u32, Value> {
        arr(devices)
            .iter()
            .map(|d| (self.pid(before, &d["device"]), d.clone()))
            .collect()
    }

    /// A per-device map (keys are labels) by process.
    fn map_by_pid(&self, before: bool, map: &Value) -> HashMap<u32, Value> {
        map.as_object()
            .unwrap_or_else(|| panic!("not a map: {map}"))
            .iter()
            .map(|(d, v)| (self.pid(before, &Value::from(d.as_str())), v.clone()))
            .collect()
    }

    /// How many instances of group `key` have a late rank that started
    /// within the clock error of the next (the original's `stragglers`
    /// says): the split may count them for the other rank.
    fn ambiguous_late(&self, stragglers: &Value, key: &Value) -> i64 {
        let tol = self.tol_ms();
        margins(stragglers, key)
            .iter()
            .filter(|m| m.0 <= tol)
            .count() as i64
    }

    /// `args` run on the original and on the split.
    fn both(&self, args: &[&str]) -> (Value, Value) {
        (
            run(args, &[&self.split.original], self.big_skew_ms),
            run(args, &[&self.split.dir], self.big_skew_ms),
        )
    }

    /// A check whose tolerance is this case's clock error, which must be
    /// small: a lost alignment fails every check, not only its own.
    fn check(&self, what: &str) -> Check {
        let mut k = Check {
            what: what.into(),
            tol_ms: self.tol_ms(),
            drift: self.drift,
            wrong: Vec::new(),
            compared: 0,
        };
        k.eq(
            format!(
                "clock error {} ms within {ALIGN_TOL_MS} ms",
                self.clock_error_ms
            ),
            self.clock_error_ms <= ALIGN_TOL_MS,
            true,
        );
        k
    }
}

/// Collects every difference, so that one run lists them all.
struct Check {
    what: String,
    tol_ms: f64,
    drift: f64,
    wrong: Vec<String>,
    compared: usize,
}

impl Check {
    /// `got` within `tol_ms`, plus the drift over a duration of `want`.
    fn close_by(&mut self, at: impl Display, got: &Value, want: &Value, tol_ms: f64) {
        self.compared += 1;
        let (g, w) = (f(got), f(want));
        let tol = tol_ms + self.drift * w.abs();
        if (g - w).abs() > tol {
            self.wrong.push(format!("{at}: {g} vs {w} (±{tol:.6})"));
        }
    }

    /// A figure comparing files: within the clock error.
    fn close(&mut self, at: impl Display, got: &Value, want: &Value) {
        self.close_by(at, got, want, self.tol_ms);
    }

    fn eq<T: PartialEq + std::fmt::Debug>(&mut self, at: impl Display, got: T, want: T) {
        self.compared += 1;
        if got != want {
            self.wrong.push(format!("{at}: {got:?} vs {want:?}"));
        }
    }

    fn finish(self) {
        assert!(self.compared > 0, "{}: nothing compared", self.what);
        assert!(
            self.wrong.is_empty(),
            "{}: {} of {} figures differ from the original (clock tolerance {:.6} ms):\n{}",
            self.what,
            self.wrong.len(),
            self.compared,
            self.tol_ms,
            self.wrong.join("\n")
        );
    }
}

fn megatron() -> &'static Case {
    static CASE: OnceLock<Case> = OnceLock::new();
    CASE.get_or_init(|| {
        Case::new(
            &root().join("fixtures/megatron_tp8.sqlite"),
            "split_megatron",
            "20",
        )
    })
}

fn sendrecv() -> &'static Case {
    static CASE: OnceLock<Case> = OnceLock::new();
    CASE.get_or_init(|| {
        Case::new(
            &real_profiles().join("nsys2026_2gpu_nccl_sendrecv.sqlite"),
            "split_sendrecv",
            "0.1",
        )
    })
}

/// A group of a list, by `key` (skew, diff) or `group` (stragglers).
fn group<'a>(groups: &'a Value, key: &Value) -> &'a Value {
    arr(groups)
        .iter()
        .find(|g| g["key"] == *key || g["group"] == *key)
        .unwrap_or_else(|| panic!("no group {key}"))
}

fn keys(groups: &Value) -> Vec<Value> {
    arr(groups).iter().map(|g| g["key"].clone()).collect()
}

/// Per instance of a group, how far (ms, on the original's one clock) its
/// late rank started after the next and its early rank before the next:
/// under the clock error, the split may name the other rank.
fn margins(stragglers: &Value, key: &Value) -> Vec<(f64, f64)> {
    let rows = arr(&group(&stragglers["groups"], key)["lateness_ms"]);
    let n = arr(&rows[0]).len();
    (0..n)
        .map(|i| {
            let mut v: Vec<f64> = rows.iter().map(|r| f(&r[i])).collect();
            v.sort_by(f64::total_cmp);
            (v[v.len() - 1] - v[v.len() - 2], v[1] - v[0])
        })
        .collect()
}

/// Each rank's count of instances it started last, off by no more than
/// the instances where it was not clearly last.
fn late_counts_match(k: &mut Check, c: &Case, key: &Value, b: &Value, a: &Value, ambiguous: i64) {
    let bm = c.map_by_pid(true, &b["late_counts"]);
    let am = c.map_by_pid(false, &a["late_counts"]);
    for (pid, want) in &bm {
        let got = am.get(pid).map_or(0, |n| n.as_i64().unwrap());
        let want = want.as_i64().unwrap();
        k.eq(
            format!("{key} late count of pid {pid}: {got} vs {want}, {ambiguous} unclear"),
            (got - want).abs() <= ambiguous,
            true,
        );
    }
}

/// The split is the original, process by process, and its clocks were
/// recovered: what every other check rests on. Within-file figures
/// (counts, whole-capture overlap, anomalies) hold on any clock.
fn split_is_faithful(c: &Case) {
    let mut k = c.check("split");
    let clock = &c.after["summary"]["clock"];
    k.eq("method", &clock["method"], &Value::from("collective-ends"));
    let timebase = &c.before["summary"]["clock"]["files"][0]["timebase"];
    for row in arr(&clock["files"]) {
        let at = &row["path"];
        // Still read on the original's timebase (a boot clock stays one).
        k.eq(format!("{at} timebase"), &row["timebase"], timebase);
    }
    for row in &arr(&clock["files"])[1..] {
        let at = &row["path"];
        k.eq(
            format!("{at} method"),
            &row["method"],
            &Value::from("collective-ends"),
        );
        k.eq(format!("{at} refused"), &row["refused"], &Value::Null);
    }
    let b = c.by_pid(true, &c.before["summary"]["devices"]);
    let a = c.by_pid(false, &c.after["summary"]["devices"]);
    k.eq("one device per file", a.len(), c.split.files.len());
    k.eq("devices", b.len(), a.len());
    for (pid, bd) in &b {
        for n in [
            "kernels",
            "memcpy",
            "memset",
            "runtime_calls",
            "nvtx_ranges",
        ] {
            k.eq(format!("pid {pid} {n}"), &a[pid][n], &bd[n]);
        }
    }
    let b = c.by_pid(true, &c.before["overlap"]["devices"]);
    let a = c.by_pid(false, &c.after["overlap"]["devices"]);
    k.eq("overlap devices", a.len(), b.len());
    for (pid, bd) in &b {
        let ad = &a[pid];
        for n in ["compute_kernels", "nccl_kernels", "copies"] {
            k.eq(format!("overlap pid {pid} {n}"), &ad[n], &bd[n]);
        }
        for n in overlap_ms() {
            // One device, one file: only its drift and rounding differ.
            k.close_by(format!("overlap pid {pid} {n}"), &ad[n], &bd[n], SUM_TOL_MS);
        }
    }
    let events = |all: &Value, before: bool| -> Vec<(Value, Value, Vec<u32>)> {
        arr(&all["anomalies"]["events"])
            .iter()
            .map(|e| {
                let mut ps = c.pids(before, &e["devices"]);
                ps.sort();
                (e["group"].clone(), e["instance"].clone(), ps)
            })
            .collect()
    };
    k.eq(
        "anomalies",
        events(&c.after, false),
        events(&c.before, true),
    );
    k.finish();
}

/// The overlap figures in ms: the span and the parts that sum to it.
fn overlap_ms() -> impl Iterator<Item = &'static str> {
    std::iter::once("span_ms").chain(OVERLAP_PARTS_MS)
}

/// Skew per group and instance, and the straggler matrix, as on one clock.
fn skew_and_stragglers_match(c: &Case) {
    let mut k = c.check("skew and stragglers");
    let tol = c.tol_ms();
    let (sb, sa) = c.both(&["report", "stragglers"]);
    let (bg, ag) = (&c.before["skew"]["groups"], &c.after["skew"]["groups"]);
    k.eq("groups", keys(ag), keys(bg));
    for b in arr(bg) {
        let key = &b["key"];
        let a = group(ag, key);
        k.eq(format!("{key} instances"), &a["instances"], &b["instances"]);
        k.eq(
            format!("{key} ranks"),
            c.pids(false, &a["devices"]),
            c.pids(true, &b["devices"]),
        );
        for s in ["start_skew_ms", "end_skew_ms"] {
            for q in ["p50", "p90", "max"] {
                k.close(format!("{key} {s} {q}"), &a[s][q], &b[s][q]);
            }
        }
        for n in ["nccl_total_ms", "baseline_ms", "excess_ms", "big_excess_ms"] {
            k.close(format!("{key} {n}"), &a[n], &b[n]);
        }
        let lateness = "mean_lateness_ms_excluding_big";
        let am = c.map_by_pid(false, &a[lateness]);
        for (pid, want) in c.map_by_pid(true, &b[lateness]) {
            let got = am.get(&pid).unwrap_or(&Value::Null);
            k.close(format!("{key} {lateness} pid {pid}"), got, &want);
        }
        // Per instance; who was late or early only where the original
        // says so by more than the clock error.
        let margins = margins(&sb, key);
        let (bl, al) = (arr(&b["instance_list"]), arr(&a["instance_list"]));
        k.eq(format!("{key} instance list"), al.len(), bl.len());
        for ((bi, ai), (late_by, early_by)) in bl.iter().zip(al).zip(&margins) {
            let at = format!("{key} #{}", bi["instance"]);
            k.eq(format!("{at} number"), &ai["instance"], &bi["instance"]);
            k.eq(format!("{at} op"), &ai["op"], &bi["op"]);
            k.close(
                format!("{at} start skew"),
                &ai["start_skew_ms"],
                &bi["start_skew_ms"],
            );
            k.close(
                format!("{at} end skew"),
                &ai["end_skew_ms"],
                &bi["end_skew_ms"],
            );
            if *late_by > tol {
                let (g, w) = (
                    c.pid(false, &ai["late_device"]),
                    c.pid(true, &bi["late_device"]),
                );
                k.eq(format!("{at} late rank"), g, w);
            }
            if *early_by > tol {
                let (g, w) = (
                    c.pid(false, &ai["early_device"]),
                    c.pid(true, &bi["early_device"]),
                );
                k.eq(format!("{at} early rank"), g, w);
            }
            // Across clocks a skew is resolvable only above the residual.
            let skew = f(&bi["start_skew_ms"]);
            if (skew - c.residual_ms).abs() > tol {
                k.eq(
                    format!("{at} resolvable"),
                    &ai["resolvable"],
                    &Value::from(skew > c.residual_ms),
                );
            }
            let big: f64 = c.big_skew_ms.parse().unwrap();
            if (skew - big).abs() > tol {
                k.eq(format!("{at} big"), &ai["big"], &bi["big"]);
            }
        }
        late_counts_match(&mut k, c, key, b, a, c.ambiguous_late(&sb, key));
        // The straggler matrix: each rank's lateness in each instance.
        let (mb, ma) = (group(&sb["groups"], key), group(&sa["groups"], key));
        k.eq(
            format!("{key} straggler instances"),
            &ma["instances"],
            &mb["instances"],
        );
        let rank_b = c.pids(true, &mb["ranks"]);
        let rank_a = c.pids(false, &ma["ranks"]);
        for (rb, pid) in rank_b.iter().enumerate() {
            let Some(ra) = rank_a.iter().position(|p| p == pid) else {
                k.eq(format!("{key} straggler rank {pid}"), None, Some(pid));
                continue;
            };
            let (lb, la) = (arr(&mb["lateness_ms"][rb]), arr(&ma["lateness_ms"][ra]));
            k.eq(
                format!("{key} pid {pid} lateness count"),
                la.len(),
                lb.len(),
            );
            for (i, (x, y)) in la.iter().zip(lb).enumerate() {
                k.close(format!("{key} pid {pid} lateness #{}", i + 1), x, y);
            }
        }
    }
    k.eq(
        "straggler groups",
        arr(&sa["groups"]).len(),
        arr(&sb["groups"]).len(),
    );
    k.finish();
}

/// Every big event's launch verdict and delays as on one clock. Across
/// clocks a delay under the residual is `not-resolvable` (its sign kept);
/// that, and only where the true delay allows it, may replace a verdict.
fn launch_matches(c: &Case) {
    let mut k = c.check("launch");
    let (u, e) = (c.residual_ms, c.clock_error_ms);
    let late = |all: &Value| arr(&all["launch"]["late_instances"]).clone();
    let (bl, al) = (late(&c.before), late(&c.after));
    let ids = |v: &[Value]| -> Vec<(Value, Value)> {
        v.iter()
            .map(|x| (x["group"].clone(), x["instance"].clone()))
            .collect()
    };
    k.eq("late instances", ids(&al), ids(&bl));
    k.eq("some late instances", bl.is_empty(), false);
    for (b, a) in bl.iter().zip(&al) {
        let at = format!("{} #{}", b["group"], b["instance"]);
        k.eq(
            format!("{at} late rank"),
            c.pid(false, &a["device"]),
            c.pid(true, &b["device"]),
        );
        k.eq(format!("{at} api"), &a["api"], &b["api"]);
        k.close_by(
            format!("{at} api_end_to_start_ms"),
            &a["api_end_to_start_ms"],
            &b["api_end_to_start_ms"],
            SAME_FILE_TOL_MS,
        );
        // The true signed delay: the late rank's launch end − the earliest
        // other start = its start skew − its queue time, on one clock.
        let skew_group = group(&c.before["skew"]["groups"], &b["group"]);
        let inst = &arr(&skew_group["instance_list"])[b["instance"].as_u64().unwrap() as usize - 1];
        let signed = f(&inst["start_skew_ms"]) - f(&b["api_end_to_start_ms"]);
        if a["verdict"] == "not-resolvable" {
            // Rankline measures it within `e` of the truth.
            k.eq(
                format!("{at} not resolvable: |{signed}| ms under the residual {u} (± {e})"),
                signed.abs() < u + e,
                true,
            );
            k.eq(
                format!("{at} resolvable"),
                &a["resolvable"],
                &Value::Bool(false),
            );
            k.close(
                format!("{at} signed cpu_delay_ms"),
                &a["cpu_delay_ms"],
                &Value::from(signed),
            );
        } else {
            k.eq(
                format!("{at} resolvable: |{signed}| ms not under the residual {u} (± {e})"),
                signed.abs() + e >= u,
                true,
            );
            k.eq(format!("{at} verdict"), &a["verdict"], &b["verdict"]);
            k.close(
                format!("{at} cpu_delay_ms"),
                &a["cpu_delay_ms"],
                &b["cpu_delay_ms"],
            );
        }
    }
    k.finish();
}

/// The summary's span is the original's, on the reference clock.
fn summary_span_matches(c: &Case) {
    let mut k = c.check("summary span");
    let (b, a) = (
        arr(&c.before["summary"]["span_ns"]),
        arr(&c.after["summary"]["span_ns"]),
    );
    k.eq("span given", a.len(), 2);
    for (i, end) in ["first", "last"].iter().enumerate() {
        let want = c.split.on_reference(f(&b[i]));
        let off_ms = (f(&a[i]) - want) / 1e6;
        k.close(
            format!("{end} event − the original's on the reference clock"),
            &Value::from(off_ms),
            &Value::from(0.0),
        );
    }
    let len = |s: &[Value]| Value::from((f(&s[1]) - f(&s[0])) / 1e6);
    k.close("span_ms", &len(a), &len(b));
    k.finish();
}

/// Overlap over a window given on the reference clock: the original's over
/// the same instants. The window's edges fall where no GPU activity starts
/// or ends within twice the tolerance, so that the same kernels reach in.
fn overlap_window_matches(c: &Case) {
    let mut k = c.check("overlap in a window");
    let margin_ns = (2.0 * c.tol_ms() * 1e6) as i64;
    let span = arr(&c.before["summary"]["span_ns"]);
    let (lo, hi) = (f(&span[0]), f(&span[1]));
    let edge = |from: f64| -> f64 {
        (0..200)
            .map(|i| lo + (from + i as f64 * 0.001) * (hi - lo))
            .find(|&t| !gpu_edge_near(&c.split.original, t as i64, margin_ns))
            .expect("a quiet instant for the window's edge")
    };
    let (start, end) = (edge(0.35), edge(0.6));
    let s = |t: f64| format!("{:.9}", t / 1e9);
    let trim = |a: String, b: String| {
        ["report", "overlap", "--trim"]
            .into_iter()
            .map(String::from)
            .chain([a, b])
            .collect::<Vec<String>>()
    };
    let ob = trim(s(start), s(end));
    let oa = trim(s(c.split.on_reference(start)), s(c.split.on_reference(end)));
    let ob: Vec<&str> = ob.iter().map(String::as_str).collect();
    let oa: Vec<&str> = oa.iter().map(String::as_str).collect();
    let before = run(&ob, &[&c.split.original], c.big_skew_ms);
    let after = run(&oa, &[&c.split.dir], c.big_skew_ms);
    let b = c.by_pid(true, &before["devices"]);
    let a = c.by_pid(false, &after["devices"]);
    k.eq("devices in the window", a.len(), b.len());
    for (pid, bd) in &b {
        let Some(ad) = a.get(pid) else {
            k.eq(format!("pid {pid} in the window"), false, true);
            continue;
        };
        for n in ["compute_kernels", "nccl_kernels", "copies"] {
            k.eq(format!("pid {pid} {n}"), &ad[n], &bd[n]);
        }
        // Each edge moves by the clock error against the file's events.
        for n in overlap_ms() {
            k.close_by(format!("pid {pid} {n}"), &ad[n], &bd[n], 2.0 * c.tol_ms());
        }
    }
    k.finish();
}

/// `diff ORIGINAL SPLIT`: no change beyond the clock error. The diff pairs
/// devices by label, which differ here, so per-device rows are paired by
/// process.
fn diff_shows_no_change(c: &Case) {
    let mut k = c.check("diff");
    let original = c.split.original.display().to_string();
    let split = c.split.dir.display().to_string();
    let d = json(&[
        "diff",
        "--format",
        "json",
        "--no-cache",
        "--big-skew-ms",
        c.big_skew_ms,
        &original,
        &split,
    ]);
    let (sb, _) = c.both(&["report", "stragglers"]);
    let steps = &d["steps"];
    k.eq(
        "step count",
        &steps["after"]["count"],
        &steps["before"]["count"],
    );
    if steps["before"]["count"].as_u64() > Some(0) {
        for q in ["p50_ms", "p90_ms", "max_ms"] {
            k.close(format!("step {q}"), &steps["after"][q], &steps["before"][q]);
        }
    }
    for (list, name) in [("kernels", "name"), ("classes", "class")] {
        for row in arr(&d[list]) {
            let at = format!("{list} {}", row[name]);
            k.close_by(
                format!("{at} ms"),
                &row["after_ms"],
                &row["before_ms"],
                SUM_TOL_MS,
            );
            if row.get("before_count").is_some() {
                k.eq(
                    format!("{at} count"),
                    &row["after_count"],
                    &row["before_count"],
                );
            }
        }
    }
    let mut sides: [HashMap<u32, Value>; 2] = Default::default();
    for row in arr(&d["overlap"]) {
        for (i, side) in ["before", "after"].iter().enumerate() {
            if !row[side].is_null() {
                sides[i].insert(c.pid(i == 0, &row["device"]), row[side].clone());
            }
        }
    }
    k.eq("overlap devices", sides[1].len(), sides[0].len());
    for (pid, bd) in &sides[0] {
        let Some(ad) = sides[1].get(pid) else {
            k.eq(format!("overlap pid {pid} after"), false, true);
            continue;
        };
        for n in overlap_ms() {
            k.close_by(format!("overlap pid {pid} {n}"), &ad[n], &bd[n], SUM_TOL_MS);
        }
    }
    for s in arr(&d["skew"]) {
        let key = &s["key"];
        k.eq(
            format!("{key} paired by"),
            &s["paired_by"],
            &Value::from("key"),
        );
        let (b, a) = (&s["before"], &s["after"]);
        k.eq(format!("{key} instances"), &a["instances"], &b["instances"]);
        k.close(format!("{key} excess_ms"), &a["excess_ms"], &b["excess_ms"]);
        for q in ["p50", "p90", "max"] {
            k.close(
                format!("{key} start skew {q}"),
                &a["start_skew_ms"][q],
                &b["start_skew_ms"][q],
            );
        }
        k.close(
            format!("{key} end skew p50"),
            &a["end_skew_ms"]["p50"],
            &b["end_skew_ms"]["p50"],
        );
        let events = |v: &Value, before: bool| -> Vec<(Value, u32)> {
            arr(&v["big_events"])
                .iter()
                .map(|e| (e["instance"].clone(), c.pid(before, &e["late_device"])))
                .collect()
        };
        k.eq(
            format!("{key} big events"),
            events(a, false),
            events(b, true),
        );
        // Across clocks a verdict whose delay is under the residual turns
        // `not-resolvable` (launch_matches checks each one is); no other
        // verdict changes.
        let count = |v: &Value, name: &str| v["verdicts"][name].as_i64().unwrap_or(0);
        let turned = count(a, "not-resolvable") - count(b, "not-resolvable");
        let mut lost = 0;
        for name in ["cpu-late", "gpu-side", "unknown"] {
            let drop = count(b, name) - count(a, name);
            k.eq(format!("{key} {name} verdicts only lost"), drop >= 0, true);
            lost += drop;
        }
        k.eq(
            format!("{key} verdicts turned not-resolvable"),
            lost,
            turned,
        );
        late_counts_match(&mut k, c, key, b, a, c.ambiguous_late(&sb, key));
    }
    k.eq(
        "skew groups",
        arr(&d["skew"]).len(),
        arr(&c.before["skew"]["groups"]).len(),
    );
    let comp = &d["completeness"];
    k.eq(
        "world size",
        &comp["after"]["world_size"],
        &comp["before"]["world_size"],
    );
    k.eq("regressions", &d["regressions"], &Value::Array(vec![]));
    k.finish();
}

/// One test per capture; the real export's is ignored without it.
macro_rules! per_capture {
    ($check:ident: $mega:ident, $real:ident) => {
        #[test]
        fn $mega() {
            $check(megatron());
        }

        #[test]
        #[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
        fn $real() {
            $check(sendrecv());
        }
    };
}

per_capture!(split_is_faithful: megatron_split_is_faithful, sendrecv_split_is_faithful);
per_capture!(skew_and_stragglers_match: megatron_skew_and_stragglers_match, sendrecv_skew_and_stragglers_match);
per_capture!(launch_matches: megatron_launch_verdicts_and_delays_match, sendrecv_launch_verdicts_and_delays_match);
per_capture!(summary_span_matches: megatron_summary_span_is_the_original_on_the_reference_clock, sendrecv_summary_span_is_the_original_on_the_reference_clock);
per_capture!(overlap_window_matches: megatron_overlap_in_a_reference_clock_window_matches, sendrecv_overlap_in_a_reference_clock_window_matches);
per_capture!(diff_shows_no_change: megatron_diff_against_the_original_shows_no_change, sendrecv_diff_against_the_original_shows_no_change);
