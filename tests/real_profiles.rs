//! Every real export in ../shared/real-profiles opens and reports, and the
//! schema variants each one exercises come out right.

mod common;
use common::*;
use serde_json::Value;
use std::path::PathBuf;

fn report_json(path: &str) -> Value {
    let o = rankline(&["report", "all", path, "--format", "json"]);
    assert!(o.status.success(), "{path}: {}", stderr(&o));
    assert!(stderr(&o).is_empty(), "{path}: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("json")
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn every_real_export_loads_and_reports_in_both_formats() {
    let dir = real_profiles();
    let files = sqlite_files(&dir);
    assert!(
        files.len() >= 8,
        "expected the 8 real exports, found {}",
        files.len()
    );
    for f in &files {
        let path = f.to_str().unwrap();
        let v = report_json(path);
        for key in ["summary", "nccl", "overlap"] {
            assert!(v[key].is_object(), "{path}: no {key}");
        }
        assert!(
            v["summary"]["files"][0]["nsys_version"].is_string(),
            "{path}: no nsys version"
        );
        let o = rankline(&["report", "all", path]);
        assert!(
            o.status.success() && stdout(&o).contains("Capture completeness"),
            "{path}"
        );
    }
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn schema_variants() {
    let dir = real_profiles();
    let p = |n: &str| dir.join(n).to_str().unwrap().to_string();

    // Oldest export, EXPORT_META_DATA, extra columns appended by another tool.
    let v = report_json(&p("nsys2022_1_dlprof_altered.sqlite"));
    assert_eq!(v["summary"]["files"][0]["nsys_version"], "2022.1.3.3");
    assert_eq!(v["summary"]["files"][0]["schema_version"], "2.9.1");
    assert_eq!(v["summary"]["devices"][0]["kernels"], 59);

    // No kernel table at all: said plainly, not a failure.
    let v = report_json(&p("nsys2023_3_wsl_no_kernels.sqlite"));
    assert_eq!(v["summary"]["devices_with_kernels"], serde_json::json!([]));
    let warnings = v["summary"]["warnings"].to_string();
    assert!(
        warnings.contains("no kernel, memcpy or memset"),
        "{warnings}"
    );
    assert_eq!(v["overlap"]["devices"], serde_json::json!([]));
    let o = rankline(&["report", "all", &p("nsys2023_3_wsl_no_kernels.sqlite")]);
    assert!(o.status.success());
    let text = stdout(&o);
    assert!(
        text.contains("no kernel, memcpy or memset was recorded"),
        "{text}"
    );
    assert!(text.matches("nothing to analyse").count() >= 3, "{text}");

    // 4 GPUs listed, kernels on one: the others are listed, unused, not missing.
    let v = report_json(&p("nsys2023_2_cutlass_osrt.sqlite"));
    assert_eq!(v["summary"]["devices_with_kernels"], serde_json::json!([0]));
    assert_eq!(
        v["summary"]["listed_unused_devices"],
        serde_json::json!([1, 2, 3])
    );
    assert_eq!(v["summary"]["missing_devices"], serde_json::json!([]));
    assert_eq!(v["summary"]["files"][0]["nsys_version"], "2023.2.3.0");

    // No TARGET_INFO_GPU: names fall back to "GPU <id>"; SendRecv per rank.
    let v = report_json(&p("nsys2026_2gpu_nccl_sendrecv.sqlite"));
    assert_eq!(v["summary"]["devices"][1]["name"], "GPU 1");
    assert_eq!(v["summary"]["expected_devices"], serde_json::json!([0, 1]));
    for d in 0..2 {
        let op = &v["nccl"]["devices"][d]["streams"][0]["ops"][0];
        assert_eq!(op["op"], "SendRecv");
        assert_eq!(op["count"], 33);
    }
    assert_eq!(v["nccl"]["devices"][0]["streams"][0]["stream"], 7);
    assert_eq!(v["nccl"]["devices"][1]["streams"][0]["stream"], 15);
}

/// Counts against independent SQL on the file itself.
#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn counts_match_sql() {
    let dir = real_profiles();
    for f in sqlite_files(&dir) {
        let c =
            rusqlite::Connection::open_with_flags(&f, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .unwrap();
        let count = |sql: &str| -> i64 { c.query_row(sql, [], |r| r.get(0)).unwrap_or(0) };
        let kernels = count("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL");
        let runtime = count("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME");
        let nvtx = count("SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60)");
        let v = report_json(f.to_str().unwrap());
        let devs = v["summary"]["devices"].as_array().unwrap();
        let got: i64 = devs.iter().map(|d| d["kernels"].as_i64().unwrap()).sum();
        assert_eq!(got, kernels, "{f:?} kernels");
        // Runtime calls and ranges of the processes with a CUDA context.
        let procs: Vec<i64> = devs
            .iter()
            .flat_map(|d| {
                d["processes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| p.as_i64().unwrap())
            })
            .collect();
        if procs.is_empty() {
            continue;
        }
        let list = procs
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let rt = count(&format!(
            "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE (globalTid >> 24) & 16777215 IN ({list})"
        ));
        let nv = count(&format!(
            "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND (globalTid >> 24) & 16777215 IN ({list})"
        ));
        let got_rt: i64 = devs
            .iter()
            .map(|d| d["runtime_calls"].as_i64().unwrap())
            .sum();
        let got_nv: i64 = devs
            .iter()
            .map(|d| d["nvtx_ranges"].as_i64().unwrap())
            .sum();
        // One process per device in these files, so the per-device sums add up.
        assert_eq!(got_rt, rt, "{f:?} runtime (all {runtime})");
        assert_eq!(got_nv, nv, "{f:?} nvtx (all {nvtx})");
    }
}

/// The 2-process NCCL export: SendRecv on each rank's default stream (7 and
/// 15) pairs into one group; launch links are process-aware.
#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn nccl_sendrecv_pairs_streams_and_links_launches_per_process() {
    let dir = real_profiles();
    let f = dir.join("nsys2026_2gpu_nccl_sendrecv.sqlite");
    let path = f.to_str().unwrap();
    let v = report_json(path);
    let groups = v["skew"]["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{groups:?}");
    let g = &groups[0];
    assert_eq!(g["key"], "s7+s15");
    assert_eq!(g["match_method"], "sequence");
    assert_eq!(g["instances"], 33);
    assert_eq!(g["sequence_consistent"], true);
    assert_eq!(g["end_aligned"], true);

    let c = rusqlite::Connection::open_with_flags(&f, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    let count = |sql: &str| -> i64 { c.query_row(sql, [], |r| r.get(0)).unwrap() };
    let linked = count(
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r
           WHERE r.correlationId = k.correlationId AND (r.globalTid >> 24) & 16777215 = (k.globalPid >> 24) & 16777215)",
    );
    let total = count("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL");
    // A join on correlationId alone links kernels to the other process's calls.
    let naive = count(
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId",
    );
    assert_ne!(
        naive, linked,
        "the file should have colliding correlation ids"
    );
    assert_eq!(v["launch"]["kernels_with_launch"], linked);
    assert_eq!(v["launch"]["kernels_without_launch"], total - linked);
    assert!(
        v["launch"]["kernels_without_launch"].as_i64().unwrap() > 0,
        "a window cut has orphans"
    );
    assert_eq!(v["launch"]["devices"].as_array().unwrap().len(), 2);
}

/// memcpy/memset time is busy time: on the H100 export, host-to-device
/// copies keep device 0 busy for most of its span, and the five parts of
/// every device of every real export add up to its span.
#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn overlap_counts_copies_as_busy_time() {
    let dir = real_profiles();
    for f in sqlite_files(&dir) {
        let v = report_json(f.to_str().unwrap());
        for d in v["overlap"]["devices"].as_array().unwrap() {
            assert_parts_sum_to_span(d);
        }
    }
    let v = report_json(dir.join("nsys2026_2gpu_h100_nvtx.sqlite").to_str().unwrap());
    let d0 = &v["overlap"]["devices"][0];
    assert_eq!(d0["device"], 0);
    let near = |k: &str, want: f64| {
        let got = d0[k].as_f64().unwrap();
        assert!((got - want).abs() < 0.05, "{k}: {got}, expected ≈ {want}");
    };
    near("span_ms", 969.4);
    near("idle_ms", 6.6);
    near("copy_only_ms", 940.5);
}

/// Real captures have kernels that started before their launch call
/// returned: counted per device, as plain SQL counts them, and kept signed.
#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn kernels_starting_before_their_launch_returned_are_counted() {
    let dir = real_profiles();
    let mut seen = 0;
    for f in sqlite_files(&dir) {
        let v = report_json(f.to_str().unwrap());
        let Some(devs) = v["launch"]["devices"].as_array() else {
            continue;
        };
        let c =
            rusqlite::Connection::open_with_flags(&f, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .unwrap();
        for d in devs {
            let Some(dev) = d["device"].as_i64() else {
                continue;
            };
            let (n, most): (i64, Option<i64>) = c
                .query_row(
                    "SELECT count(*), max(r.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k
                     JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId
                       AND (r.globalTid >> 24) & 16777215 = (k.globalPid >> 24) & 16777215
                     WHERE k.deviceId = ?1 AND k.start < r.end",
                    [dev],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .unwrap_or((0, None));
            assert_eq!(d["started_before_launch_returned"], n, "{f:?} device {dev}");
            let got = d["most_before_launch_returned_ms"].as_f64().unwrap();
            assert_eq!(got, most.unwrap_or(0) as f64 / 1e6, "{f:?} device {dev}");
            seen += n;
        }
    }
    assert!(
        seen > 0,
        "no real capture has a kernel starting before its launch returned"
    );
    let v = report_json(dir.join("nsys2026_2gpu_h100_nvtx.sqlite").to_str().unwrap());
    assert_eq!(
        v["launch"]["devices"][0]["started_before_launch_returned"],
        2
    );
    let o = rankline(&[
        "report",
        "launch",
        dir.join("nsys2026_2gpu_h100_nvtx.sqlite").to_str().unwrap(),
    ]);
    assert!(
        stdout(&o).contains(
            "! device 0: 2 kernels started up to 2.6 µs before their launch call returned (clock granularity)"
        ),
        "{}",
        stdout(&o)
    );
}

/// Text fits 100 display columns on every real export, as on the fixtures.
#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn report_text_fits_100_columns() {
    use unicode_width::UnicodeWidthStr;
    let files = sqlite_files(&real_profiles());
    let mut all: Vec<&str> = vec!["report", "all"];
    all.extend(files.iter().map(|f| f.to_str().unwrap()));
    // Each file alone, and all of them in one model (host:id labels).
    let runs: Vec<Vec<&str>> = files
        .iter()
        .map(|f| vec!["report", "all", f.to_str().unwrap()])
        .chain([all])
        .collect();
    for args in runs {
        let o = rankline(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let out = stdout(&o);
        let wide: Vec<&str> = out
            .lines()
            .filter(|l| UnicodeWidthStr::width(*l) > 100)
            .collect();
        assert_eq!(wide, Vec::<&str>::new(), "{args:?}");
    }
}

/// The profile of `paths`, and the files that failed.
fn open(
    paths: &[PathBuf],
) -> (
    rankline::profile::Profile,
    Vec<rankline::profile::LoadError>,
) {
    let plan = rankline::profile::LoadPlan::default();
    let out = rankline::profile::load(&rankline::profile::files(paths), &plan, &mut |_, _, _| {});
    (out.profile, out.errors)
}

#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn identity_read_from_real_exports() {
    let dir = real_profiles();
    // 2026.2: systemClockNs gives the boot instant; torchrun's own
    // environment records no rank, so none is shown.
    let f = dir.join("nsys2026_2gpu_nccl_sendrecv.sqlite");
    let (p, errors) = open(std::slice::from_ref(&f));
    assert!(errors.is_empty(), "{errors:?}");
    let file = &p.files[0];
    assert_eq!(
        file.boot_ns,
        Some(1_779_782_330_176_752_435 - 28_254_349_605)
    );
    assert_eq!((file.rank, file.world_size), (None, None));
    assert!(p.devices.iter().all(|d| d.rank.is_none()));
    assert_eq!(file.host.as_deref(), Some("modal"));
    // Two captures on hosts both called "modal", booted days apart: two
    // hosts, the second one `modal#2`.
    let other = dir.join("nsys2026_2gpu_h100_nvtx.sqlite");
    let (p, errors) = open(&[other, f]);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(p.hosts, vec!["modal", "modal#2"]);
    // 2025.5: a UUID in TARGET_INFO_GPU, no systemClockNs.
    let f = dir.join("nsys2025_5_single_kernel_osrt.sqlite");
    let (p, _) = open(std::slice::from_ref(&f));
    assert_eq!(p.files[0].boot_ns, None);
    assert_eq!(
        p.devices[0].uuid.as_deref(),
        Some("f5d31907-01db-69a5-cf6c-0414eaef5706")
    );
}

/// A window is the window (issue 44): every device that ran anything is
/// listed, its span is the window (within the device's activity over the
/// whole capture), idle at the edges counts, and the parts add up to it. Checked on every real export
/// with GPU activity, in a window a tenth of its capture, inside it.
#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn overlap_in_a_window_spans_the_window() {
    for path in sqlite_files(&real_profiles()) {
        let path = path.display().to_string();
        let json = |args: &[&str]| -> Value {
            let o = rankline(args);
            assert!(o.status.success(), "{args:?}: {}", stderr(&o));
            serde_json::from_str(&stdout(&o)).expect("json")
        };
        let all = json(&["report", "overlap", "--format", "json", "--no-cache", &path]);
        let busy = all["devices"].as_array().unwrap();
        if busy.is_empty() {
            continue;
        }
        // Inside the GPU activity as SQL reads it: inside the capture
        // however much of it a read of the GPU tables alone knows.
        let c = rusqlite::Connection::open_with_flags(
            &path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .unwrap();
        let (mut a, mut b) = (f64::MAX, f64::MIN);
        for table in [
            "CUPTI_ACTIVITY_KIND_KERNEL",
            "CUPTI_ACTIVITY_KIND_MEMCPY",
            "CUPTI_ACTIVITY_KIND_MEMSET",
        ] {
            let sql = format!("SELECT min(start), max(end) FROM {table}");
            if let Ok((Some(lo), Some(hi))) = c.query_row(&sql, [], |r| {
                Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, Option<i64>>(1)?))
            }) {
                (a, b) = (a.min(lo as f64), b.max(hi as f64));
            }
        }
        let (ws, we) = ((a + 0.4 * (b - a)) / 1e9, (a + 0.5 * (b - a)) / 1e9);
        let (ws, we) = (format!("{ws:.6}"), format!("{we:.6}"));
        let got = json(&[
            "report",
            "overlap",
            "--format",
            "json",
            "--no-cache",
            "--window",
            &ws,
            &we,
            &path,
        ]);
        let devices = got["devices"].as_array().unwrap();
        assert_eq!(devices.len(), busy.len(), "{path}: {got}");
        let want_ms = (we.parse::<f64>().unwrap() - ws.parse::<f64>().unwrap()) * 1e3;
        for d in devices {
            let f = |k: &str| d[k].as_f64().unwrap();
            assert!((f("span_ms") - want_ms).abs() < 1e-3, "{path}: {d}");
            let parts = f("compute_only_ms")
                + f("nccl_only_ms")
                + f("overlap_ms")
                + f("copy_only_ms")
                + f("idle_ms");
            assert!((parts - f("span_ms")).abs() < 1e-3, "{path}: {d}");
        }
    }
}
