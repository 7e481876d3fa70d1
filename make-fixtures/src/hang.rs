//! A hang (`fixtures/hang/node0..1.sqlite`): one file per node, 2 nodes × 4 ranks (rank =
//! node·4 + local, multinode.rs's layout and boot clocks). Every rank runs collectives 1..8;
//! at instance 9 rank 6 never launches its NCCL kernel: it is inside an open
//! `cudaStreamSynchronize` (its row ends at capture end), inside an open `optimizer_step` NVTX
//! range (end NULL), blocked in `pthread_cond_wait` (OSRT_API, ending at capture end) with CPU
//! samples whose callchains show it. The other 7 ranks launched instance 9, whose kernel runs
//! until the capture stops: its `end` is the capture end, NULL on rank 1.
//!
//! NULL `end`: the real DDL declares CUPTI_ACTIVITY_KIND_KERNEL.end NOT NULL, so node0.sqlite's
//! kernel table is that DDL with the constraint dropped on `end` (the only deviation from the
//! real schema in any fixture).

use rusqlite::{Transaction, params};
use serde_json::{Value, json};

use crate::clock::Capture;
use crate::job::{self, AG, AR, BC, Job, MS, NodeClock, RS};
use crate::model::{Nvtx, NvtxKind, global_tid};
use crate::rng::Rng;
use crate::truth_clock::File;
use crate::truth_faults::Faults;
use crate::writer::Strings;

pub const DIR: &str = "fixtures/hang";
const NODES: usize = 2;
const GPUS: usize = 4;
/// Instance (1-based) at which rank `BEHIND` never launches.
pub const K: usize = 9;
pub const BEHIND: usize = 6;
/// The waiting rank whose kernel row of instance K has `end` NULL.
pub const NULL_END: usize = 1;
const SEQ: [&str; K] = [BC, AG, RS, AR, AG, RS, AR, AR, AG];
const T_FIRST: i64 = 4_000_000 * MS;
/// The capture stops this long after the first kernel of instance K started.
const HANG_FOR: i64 = 2_500 * MS;
const SYNC: &str = "cudaStreamSynchronize_v3020";
const OSRT_WAIT: &str = "pthread_cond_wait";
const NVTX_OPEN: &str = "optimizer_step";
const LIBC: &str = "/usr/lib/x86_64-linux-gnu/libc.so.6";
const PY: &str = "/usr/bin/python3.10";
/// Frames of the blocked thread, leaf first: (symbol, module, unresolved).
const FRAMES: [(&str, &str, bool); 8] = [
    (OSRT_WAIT, LIBC, false),
    (
        "0x7f3a1c2b4e10",
        "/usr/lib/x86_64-linux-gnu/libcuda.so.550.90.07",
        true,
    ),
    (
        "cudaStreamSynchronize",
        "/usr/local/lib/python3.10/dist-packages/torch/lib/libcudart-9335f6a2.so.12",
        false,
    ),
    (
        "c10::cuda::stream_synchronize(CUstream_st*)",
        "/usr/local/lib/python3.10/dist-packages/torch/lib/libc10_cuda.so",
        false,
    ),
    ("_PyEval_EvalFrameDefault", PY, false),
    ("Py_RunMain", PY, false),
    ("__libc_start_main", LIBC, false),
    ("_start", PY, false),
];

pub fn host(n: usize) -> String {
    format!("hang{n:02}.cluster.example")
}

/// OS runtime and sampling rows of one file, true time: (pid, start, end, callchain) and
/// (pid, sample time).
#[derive(Default)]
pub struct Cpu {
    osrt: Vec<(u32, i64, i64, bool)>,
    samples: Vec<(u32, i64)>,
    /// (pid, true start) of the kernel whose end is written NULL.
    null_end: Option<(u32, i64)>,
}

pub fn build(rng: &mut Rng) -> (Vec<File>, Vec<Cpu>, Value) {
    let n_ranks = NODES * GPUS;
    let ranks = job::ranks(n_ranks, GPUS, 28_400, false);
    let mut j = Job::new(ranks.clone(), &SEQ, T_FIRST, rng);
    let all: Vec<usize> = (0..n_ranks).collect();
    let others: Vec<usize> = all.iter().copied().filter(|&r| r != BEHIND).collect();
    let last_step = (K - 1) / 2;
    let mut adam_op = 0;
    for s in 0..last_step {
        j.step_start(s, &all, rng);
        for inst in [2 * s, 2 * s + 1] {
            let who: Vec<_> = all.iter().map(|&r| (r, SEQ[inst])).collect();
            j.collective(inst, &who, rng);
        }
        if s + 1 < last_step {
            j.step_end(s, &all, rng);
        } else {
            j.step_end(s, &others, rng);
            j.adam(s, BEHIND, rng);
            adam_op = j.sim.plans[BEHIND].ops.len() - 1;
        }
    }
    j.step_start(last_step, &others, rng);
    let who: Vec<_> = others.iter().map(|&r| (r, SEQ[K - 1])).collect();
    j.collective(K - 1, &who, rng);
    let since = others
        .iter()
        .map(|&r| j.kernels[K - 1][r].unwrap().1)
        .min()
        .unwrap();
    let hi = since + HANG_FOR;
    let adam_end = j.sim.ready[BEHIND];
    j.sim.plans[BEHIND].sync(adam_end, SYNC, hi, None);
    for &r in &others {
        let k = j.kernels[K - 1][r].as_mut().unwrap();
        k.2 = hi;
    }
    let kernels = j.kernels.clone();
    let mut outs = j.finish(rng);
    for &r in &others {
        let start = kernels[K - 1][r].unwrap().1;
        let k = outs[r]
            .kernels
            .iter_mut()
            .find(|k| k.nccl.is_some() && k.start == start)
            .unwrap();
        k.end = hi;
    }
    for o in outs.iter_mut() {
        job::open_last_step(o);
    }
    // rank 6: the open optimizer range around its optimizer kernel and the sync
    let o = &mut outs[BEHIND];
    let (adam_call, _) = o.launch_of[adam_op].unwrap();
    let nvtx_start = adam_call - 2_000;
    let bwd_end = o
        .nvtx
        .iter()
        .filter(|e| e.text == "backward")
        .map(|e| e.end.unwrap())
        .max()
        .unwrap();
    assert!(bwd_end < nvtx_start, "optimizer_step overlaps backward");
    let pid = ranks[BEHIND].pid;
    o.nvtx.push(Nvtx {
        pid,
        tid: pid,
        kind: NvtxKind::PushPop,
        start: nvtx_start,
        end: None,
        text: NVTX_OPEN.into(),
        registered: false,
        domain: 0,
        range_id: None,
    });
    let sync = o
        .calls
        .iter()
        .find(|c| c.api == SYNC && c.end == hi)
        .expect("the open sync")
        .clone();
    // OS runtime: a pthread_cond_wait inside every stream synchronize
    let mut cpu: Vec<Cpu> = (0..NODES).map(|_| Cpu::default()).collect();
    for (r, o) in outs.iter().enumerate() {
        for c in o.calls.iter().filter(|c| c.api == SYNC) {
            let open = c.end == hi;
            let end = if open { hi } else { c.end - 1_500 };
            cpu[r / GPUS].osrt.push((c.pid, c.start + 2_000, end, open));
        }
    }
    let osrt_start = sync.start + 2_000;
    let c6 = &mut cpu[BEHIND / GPUS];
    for t in [osrt_start + 40_000, osrt_start + 1_200 * MS, hi - 3 * MS] {
        c6.samples.push((pid, t));
    }
    let last_sample = hi - 3 * MS;
    cpu[NULL_END / GPUS].null_end =
        Some((ranks[NULL_END].pid, kernels[K - 1][NULL_END].unwrap().1));

    let first = outs.iter().map(|o| job::span(o).0).min().unwrap();
    let windows: Vec<(i64, i64)> = (0..NODES)
        .map(|n| (first - 400 * MS + n as i64 * 230 * MS, hi))
        .collect();
    let clocks = [
        NodeClock {
            boot_offset: 0,
            drift_ppm: 0.0,
            utc_error_ns: 1_100_000,
        },
        NodeClock {
            boot_offset: 2 * 3_600_000 * MS + 17 * 60_000 * MS + 555_123_457,
            drift_ppm: 2.0,
            utc_error_ns: -3_300_000,
        },
    ];
    let hosts: Vec<String> = (0..NODES).map(host).collect();
    let files = job::per_node_files(
        DIR,
        &hosts,
        GPUS,
        &ranks,
        outs,
        &windows,
        &clocks,
        0x0DD5_EED8,
    );
    let mut f = Faults {
        files: &files,
        rank_at: (0..n_ranks)
            .map(|r| (r / GPUS, ranks[r].pid, ranks[r].device))
            .collect(),
        kernels: &kernels,
        seq: &SEQ,
        early_stop: vec![],
        crashed: vec![],
        behind: None,
    };
    let behind = json!({
        "last_complete": K - 1,
        "diverges_at": K,
        "waiting": others,
        "behind": [BEHIND],
        "waiting_since_ns": f.on_ref(since),
        "last_seen": {
            BEHIND.to_string(): {
                "cuda_call": SYNC,
                "cuda_call_start_ns": f.on_ref(sync.start),
                "nvtx": NVTX_OPEN,
                "nvtx_start_ns": f.on_ref(nvtx_start),
                "osrt": OSRT_WAIT,
                "osrt_start_ns": f.on_ref(osrt_start),
                "frame": FRAMES[0].0,
                "frames": FRAMES.iter().map(|x| x.0).collect::<Vec<_>>(),
                "sample_ns": f.on_ref(last_sample),
                "at_ns": f.on_ref(sync.start),
            }
        },
    });
    f.behind = Some(behind);
    let scenario = json!({
        "description": "2 nodes x 4 GPUs, one file per node, boot clocks; 9 collectives (non-periodic ops) on stream 16, two per step every 600 ms; at instance 9 rank 6 never launches: it is blocked in cudaStreamSynchronize inside an open optimizer_step NVTX range (pthread_cond_wait in OSRT_API, CPU samples with its callchain); the other 7 ranks' instance-9 kernels run until the capture stops 2.5 s after the first of them started (end = capture end; NULL on rank 1)",
        "files": (0..NODES).map(|n| format!("{DIR}/node{n}.sqlite")).collect::<Vec<_>>(),
        "hosts": hosts,
        "null_end_rank": NULL_END,
        "note": "global rank r is GPU r % 4 of node r / 4; the kernel table of the file holding the NULL end drops NOT NULL on `end` (the real DDL forbids NULL there)",
    });
    let t = crate::truth_faults::truth(&f, scenario);
    (files, cpu, t)
}

pub fn capture(n: usize) -> Capture {
    job::node_capture(
        n,
        NODES,
        GPUS,
        &host(0),
        "9d2e4f61-7a3b-4c58-b0e9-1f6a2c8d3e",
    )
}

/// The kernel table's DDL without NOT NULL on `end`.
fn kernel_ddl_null_end() -> String {
    let (_, ddl) = crate::ddl::TABLES
        .iter()
        .find(|t| t.0 == "CUPTI_ACTIVITY_KIND_KERNEL")
        .unwrap();
    let from = "end                         INTEGER   NOT NULL,                    ";
    let to = "end                         INTEGER,                               ";
    assert!(ddl.contains(from));
    ddl.replacen(from, to, 1)
}

/// The OS runtime and sampling tables of a file (and its NULL kernel end), its timestamps on
/// clock `c`.
pub fn write_cpu(
    tx: &Transaction,
    st: &mut Strings,
    cpu: &Cpu,
    c: &crate::clock::FileClock,
) -> rusqlite::Result<()> {
    for (_, ddl) in crate::ddl::OSRT_TABLES {
        tx.execute_batch(ddl)?;
    }
    let chain_rows = |table: &str, id: i64, st: &mut Strings| -> rusqlite::Result<()> {
        let mut ins = tx.prepare(&format!(
            "INSERT INTO {table} (id, symbol, module, kernelMode, thumbCode, unresolved, specialEntry, originalIP, unwindMethod, stackDepth) VALUES (?1, ?2, ?3, 0, 0, ?4, NULL, ?5, 7, ?6)"
        ))?;
        for (d, (sym, module, unresolved)) in FRAMES.iter().enumerate() {
            let ip = 0x7f3a_1c00_0000_i64 + (d as i64) * 0x1_2345 + id * 0x10;
            ins.execute(params![
                id,
                st.id(sym),
                st.id(module),
                unresolved,
                ip,
                d as i64
            ])?;
        }
        Ok(())
    };
    let mut chain = 0;
    for &(pid, s, e, open) in &cpu.osrt {
        let cc = if open {
            chain += 1;
            chain_rows("OSRT_CALLCHAINS", chain, st)?;
            chain
        } else {
            0
        };
        tx.execute(
            "INSERT INTO OSRT_API (start, end, eventClass, globalTid, nameId, returnValue, nestingLevel, callchainId, argumentsId) VALUES (?1, ?2, 27, ?3, ?4, 0, 0, ?5, 0)",
            params![c.file_time(s), c.file_time(e), global_tid(pid, pid), st.id(OSRT_WAIT), cc],
        )?;
    }
    for (i, &(pid, t)) in cpu.samples.iter().enumerate() {
        let id = i as i64 + 1;
        tx.execute(
            "INSERT INTO COMPOSITE_EVENTS (id, start, cpu, threadState, globalTid, cpuCycles) VALUES (?1, ?2, 17, 1, ?3, 1)",
            params![id, c.file_time(t), global_tid(pid, pid)],
        )?;
        chain_rows("SAMPLING_CALLCHAINS", id, st)?;
    }
    if let Some((pid, start)) = cpu.null_end {
        tx.execute_batch(&format!(
            "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO kernel_old; {}; INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM kernel_old; DROP TABLE kernel_old;",
            kernel_ddl_null_end()
        ))?;
        let n = tx.execute(
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = NULL WHERE globalPid = ?1 AND start = ?2",
            params![crate::model::global_pid(pid), c.file_time(start)],
        )?;
        assert_eq!(n, 1, "the still-running kernel");
    }
    Ok(())
}
