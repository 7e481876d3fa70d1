//! The CPU account's split on a real thread (issue 21's core): the hung
//! rank of `fixtures/hang/` sits in an open `cudaStreamSynchronize`, with
//! an OS `pthread_cond_wait` inside it and an NVTX `optimizer_step` around
//! it. Every nanosecond of a window goes to one explanation, the sync call
//! first, and the shares add up to the window exactly.

use rankline::analysis::account::CpuKind;
use rankline::analysis::thread_account::thread_account;
use rankline::analysis::{Settings, pipeline};
use rankline::profile::{LoadPlan, Profile};
use std::path::PathBuf;

fn load(files: &[PathBuf]) -> Profile {
    let out = rankline::profile::load(
        &rankline::profile::files(files),
        &LoadPlan::default(),
        &mut |_, _, _| {},
    );
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    out.profile
}

fn hang() -> Profile {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/hang");
    load(&[dir.join("node0.sqlite"), dir.join("node1.sqlite")])
}

#[test]
fn the_hung_ranks_wait_goes_to_its_sync_call_then_its_nvtx_range() {
    let p = hang();
    let a = pipeline::analyze(&p, &Settings::default(), &mut |_| {});
    let name = |s| p.strings.get(s);
    // The thread whose last CUDA call is the open cudaStreamSynchronize.
    let (thread, sync) = (0..p.threads.len())
        .filter_map(|t| {
            let r = p.runtime_by_thread.get(t)?.clone().last()?;
            (name(p.runtime.name(r)) == "cudaStreamSynchronize").then_some((t as u32, r))
        })
        .next()
        .expect("the hung thread");
    let (sync_start, sync_end) = a.clock.runtime_span(&p, sync);
    let file = p.thread_file(thread);
    let end = a.clock.capture_end(&p, file).unwrap();
    assert_eq!(sync_end, end, "the open call ends at the capture end");
    // 1 ms before the sync: the range is open, some CUDA calls ran.
    let window = (sync_start - 1_000_000, end);
    let s = thread_account(&p, &a.clock, thread, window);
    let shares: i64 = s.shares.iter().map(|x| x.ns()).sum();
    assert_eq!(shares + s.unaccounted_ns(), window.1 - window.0);
    let sync_share = &s.shares[0];
    assert_eq!(sync_share.kind, CpuKind::CudaSync);
    assert_eq!(name(sync_share.label), "cudaStreamSynchronize");
    assert_eq!(sync_share.ns(), end - sync_start);
    // The OS wait inside the sync is the sync's, not counted again.
    assert!(s.shares.iter().all(|x| x.kind != CpuKind::Osrt), "{s:?}");
    // Before it, what no call covers is an open NVTX range's, but for the
    // half millisecond the first CPU sample inside the sync stands for
    // (its thread has too few samples for a period: 1 kHz is assumed).
    assert!(
        s.shares.iter().all(|x| matches!(
            x.kind,
            CpuKind::CudaSync | CpuKind::CudaCall | CpuKind::Nvtx | CpuKind::OnCpu
        )),
        "{s:?}"
    );
    let on: i64 = s
        .shares
        .iter()
        .filter(|x| x.kind == CpuKind::OnCpu)
        .map(|x| x.ns())
        .sum();
    assert!(on > 0 && on <= 500_000, "{s:?}");
    assert_eq!(s.unaccounted_ns(), 0, "{s:?}");
    // The account over the sync alone: all of it, nothing unaccounted.
    let s = thread_account(&p, &a.clock, thread, (sync_start, end));
    assert_eq!(s.shares.len(), 1);
    assert_eq!(s.unaccounted_ns(), 0);
}

/// On a real export with OS runtime calls (nsys 2023.2, read in place):
/// the busiest thread's time over its CUDA calls' span, against plain SQL
/// over CUPTI_ACTIVITY_KIND_RUNTIME and OSRT_API. CUDA calls take their
/// union; OS calls what the CUDA calls leave; everything adds up.
#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn a_real_threads_split_equals_sql() {
    use rankline::analysis::intervals::{clip, subtract, total, union};
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/real-profiles/nsys2023_2_cutlass_osrt.sqlite");
    let p = load(std::slice::from_ref(&path));
    let a = pipeline::analyze(&p, &Settings::default(), &mut |_| {});
    let c = rankline::profile::open_readonly(&path).unwrap();
    // The thread with the most OS runtime calls, and its CUDA calls' span.
    let (gtid, lo, hi): (i64, i64, i64) = c
        .query_row(
            "SELECT r.globalTid, min(r.start), max(r.end) FROM CUPTI_ACTIVITY_KIND_RUNTIME r
             WHERE r.globalTid = (SELECT globalTid FROM OSRT_API GROUP BY globalTid
                                  ORDER BY count(*) DESC LIMIT 1)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    let spans = |sql: &str| -> Vec<(i64, i64)> {
        let mut st = c.prepare(sql).unwrap();
        st.query_map([gtid], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let cuda = clip(
        &union(spans(
            "SELECT start, end FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE globalTid = ?1",
        )),
        (lo, hi),
    );
    let osrt = clip(
        &union(spans(
            "SELECT start, end FROM OSRT_API WHERE globalTid = ?1",
        )),
        (lo, hi),
    );
    let (pid, tid) = (((gtid >> 24) & 0xFF_FFFF) as u32, (gtid & 0xFF_FFFF) as u32);
    let thread = (0..p.threads.len())
        .find(|&t| {
            let th = &p.threads[t];
            th.tid == tid && p.processes[th.process as usize].pid == pid
        })
        .expect("the thread") as u32;
    let s = thread_account(&p, &a.clock, thread, (lo, hi));
    let of = |k: CpuKind| -> i64 {
        s.shares
            .iter()
            .filter(|x| x.kind == k)
            .map(|x| x.ns())
            .sum()
    };
    assert_eq!(of(CpuKind::CudaSync) + of(CpuKind::CudaCall), total(&cuda));
    assert_eq!(of(CpuKind::Osrt), total(&subtract(&osrt, &cuda)));
    assert!(of(CpuKind::Osrt) > 0, "{s:?}");
    let shares: i64 = s.shares.iter().map(|x| x.ns()).sum();
    assert_eq!(shares + s.unaccounted_ns(), hi - lo);
}

/// Every step-end `cudaStreamSynchronize` of the Megatron fixture waited
/// for the GPU work of its process that ended last while it ran: checked
/// against a scan of every GPU row of that process.
#[test]
fn a_sync_call_names_the_work_it_waited_for() {
    use rankline::analysis::why::waited_for;
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/megatron_tp8.sqlite");
    let out = rankline::profile::load(
        &rankline::profile::files(&[path]),
        &LoadPlan::default(),
        &mut |_, _, _| {},
    );
    let p = out.profile;
    let a = pipeline::analyze(&p, &Settings::default(), &mut |_| {});
    let mut checked = 0;
    for r in 0..p.runtime.len() {
        if p.strings.get(p.runtime.name(r)) != "cudaStreamSynchronize" {
            continue;
        }
        let t = p.runtime.thread(r);
        let (s, e) = a.clock.runtime_span(&p, r);
        let got: Vec<_> = waited_for(&p, &a.clock, t, (s, e))
            .into_iter()
            .filter(|w| w.call == r)
            .collect();
        let process = p.threads[t as usize].process;
        let want = (0..p.gpu.len())
            .filter(|&g| p.lanes[p.gpu.lane(g) as usize].process == process)
            .map(|g| (g, a.clock.gpu_span(&p, g)))
            .filter(|&(_, (gs, ge))| ge >= s && ge <= e && gs < ge)
            .max_by_key(|&(g, (_, ge))| (ge, std::cmp::Reverse(g)));
        match want {
            Some((g, _)) => {
                assert_eq!(got.len(), 1, "sync {r}");
                assert_eq!(got[0].row, g, "sync {r}");
                checked += 1;
            }
            None => assert!(got.is_empty(), "sync {r}: {got:?}"),
        }
    }
    assert!(checked >= 30, "{checked} of 40 syncs waited for something");
}

/// On the real exports with OS runtime calls, scheduling events and CPU
/// samples (nsys 2023.2 and 2025.5, read in place): the main thread's
/// account over its CUDA calls' span equals the same precedence computed
/// here from plain SQL — CUDA calls, then OS calls, then descheduled spans
/// (switch out to the next switch in), then the samples' coverage (half
/// the median gap either side of each), each taking what those before it
/// left — and the on-CPU share is named by the innermost user-mode frame
/// most of its samples hold.
#[test]
#[cfg_attr(no_real_profiles, ignore = "needs ../shared/real-profiles")]
fn a_real_threads_sched_and_samples_split_equals_sql() {
    use rankline::analysis::intervals::{clip, subtract, total, union};
    let mut off_seen = 0;
    for name in [
        "nsys2023_2_cutlass_osrt.sqlite",
        "nsys2025_5_single_kernel_osrt.sqlite",
    ] {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/real-profiles")
            .join(name);
        let p = load(std::slice::from_ref(&path));
        let a = pipeline::analyze(&p, &Settings::default(), &mut |_| {});
        let c = rankline::profile::open_readonly(&path).unwrap();
        let (gtid, lo, hi): (i64, i64, i64) = c
            .query_row(
                "SELECT globalTid, min(start), max(end) FROM CUPTI_ACTIVITY_KIND_RUNTIME
                 WHERE globalTid = (SELECT globalTid FROM COMPOSITE_EVENTS GROUP BY globalTid
                                    ORDER BY count(*) DESC LIMIT 1)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        let spans = |sql: &str| -> Vec<(i64, i64)> {
            let mut st = c.prepare(sql).unwrap();
            st.query_map([gtid], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        let w = (lo, hi);
        let cuda = clip(
            &union(spans(
                "SELECT start, end FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE globalTid = ?1",
            )),
            w,
        );
        let osrt = clip(
            &union(spans(
                "SELECT start, end FROM OSRT_API WHERE globalTid = ?1",
            )),
            w,
        );
        // descheduled: each switch out to the next switch in
        let mut off = Vec::new();
        let mut left = None;
        for (at, into) in spans(
            "SELECT start, isSchedIn FROM SCHED_EVENTS WHERE globalTid = ?1 ORDER BY start, rowid",
        ) {
            match (into != 0, left) {
                (true, Some(a)) => {
                    off.push((a, at));
                    left = None;
                }
                (false, None) => left = Some(at),
                _ => {}
            }
        }
        if let Some(a) = left {
            off.push((a, hi));
        }
        let off = clip(&union(off), w);
        // samples: half the median gap (gaps over 10 ms are idle) either side
        let times: Vec<i64> =
            spans("SELECT start, id FROM COMPOSITE_EVENTS WHERE globalTid = ?1 ORDER BY start, id")
                .iter()
                .map(|s| s.0)
                .collect();
        let mut gaps: Vec<i64> = times
            .windows(2)
            .map(|x| x[1] - x[0])
            .filter(|&g| g > 0 && g <= 10_000_000)
            .collect();
        gaps.sort_unstable();
        let period = gaps.get(gaps.len() / 2).copied().unwrap_or(1_000_000);
        let h = period / 2;
        let on = clip(&union(times.iter().map(|&t| (t - h, t + h)).collect()), w);
        let taken = union([cuda.clone(), osrt.clone()].concat());
        let off_share = subtract(&off, &taken);
        let taken = union([taken, off.clone()].concat());
        let on_share = subtract(&on, &taken);

        let (pid, tid) = (((gtid >> 24) & 0xFF_FFFF) as u32, (gtid & 0xFF_FFFF) as u32);
        let thread = (0..p.threads.len())
            .find(|&t| {
                let th = &p.threads[t];
                th.tid == tid && p.processes[th.process as usize].pid == pid
            })
            .expect("the thread") as u32;
        let s = thread_account(&p, &a.clock, thread, w);
        let of = |k: CpuKind| -> i64 {
            s.shares
                .iter()
                .filter(|x| x.kind == k)
                .map(|x| x.ns())
                .sum()
        };
        assert_eq!(
            of(CpuKind::CudaSync) + of(CpuKind::CudaCall),
            total(&cuda),
            "{name}"
        );
        assert_eq!(of(CpuKind::Osrt), total(&subtract(&osrt, &cuda)), "{name}");
        assert_eq!(of(CpuKind::OffCpu), total(&off_share), "{name}");
        assert_eq!(of(CpuKind::OnCpu), total(&on_share), "{name}");
        assert!(of(CpuKind::OnCpu) > 0, "{name}: {s:?}");
        off_seen += of(CpuKind::OffCpu);
        let shares: i64 = s.shares.iter().map(|x| x.ns()).sum();
        assert_eq!(shares + s.unaccounted_ns(), hi - lo, "{name}");

        // The on-CPU frame: over the samples whose span meets the window,
        // the innermost user-mode frame more than half of them hold.
        let mut st = c
            .prepare(
                "SELECT e.id, s.value, cc.stackDepth FROM COMPOSITE_EVENTS e
                 JOIN SAMPLING_CALLCHAINS cc ON cc.id = e.id
                 JOIN StringIds s ON s.id = cc.symbol
                 WHERE e.globalTid = ?1 AND e.start + ?2 > ?3 AND e.start - ?2 < ?4
                   AND coalesce(cc.kernelMode, 0) = 0 AND cc.stackDepth < 12
                 ORDER BY e.id, cc.stackDepth",
            )
            .unwrap();
        let rows: Vec<(i64, String)> = st
            .query_map(rusqlite::params![gtid, h, lo, hi], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let mut stacks: Vec<Vec<String>> = Vec::new();
        let mut last = None;
        for (id, sym) in rows {
            if last != Some(id) {
                stacks.push(Vec::new());
                last = Some(id);
            }
            let s = stacks.last_mut().unwrap();
            if s.len() < 8 {
                s.push(sym);
            }
        }
        // every sample near the window counts, stack or not
        let n: i64 = c
            .query_row(
                "SELECT count(*) FROM COMPOSITE_EVENTS WHERE globalTid = ?1 AND start + ?2 > ?3 AND start - ?2 < ?4",
                rusqlite::params![gtid, h, lo, hi],
                |r| r.get(0),
            )
            .unwrap();
        let n = n as usize;
        let mut best: Option<(f64, String)> = None;
        let mut most: (usize, Vec<String>) = (0, Vec::new());
        let mut names: Vec<&String> = stacks.iter().flatten().collect();
        names.sort();
        names.dedup();
        for f in names {
            let depths: Vec<usize> = stacks
                .iter()
                .filter_map(|s| s.iter().position(|x| x == f))
                .collect();
            if depths.len() > most.0 {
                most = (depths.len(), Vec::new());
            }
            if depths.len() == most.0 {
                most.1.push(f.clone());
            }
            if 2 * depths.len() > n {
                let mean = depths.iter().sum::<usize>() as f64 / depths.len() as f64;
                if best.as_ref().is_none_or(|b| mean < b.0) {
                    best = Some((mean, f.clone()));
                }
            }
        }
        let on_share = s.shares.iter().find(|x| x.kind == CpuKind::OnCpu).unwrap();
        let label = p.strings.get(on_share.label).to_string();
        match best {
            Some((_, frame)) => assert_eq!(label, frame, "{name}"),
            // no majority: one of the frames most samples hold
            None => assert!(most.1.contains(&label), "{name}: {label} of {most:?}"),
        }
    }
    assert!(off_seen > 0, "no descheduled time in either window");
}
