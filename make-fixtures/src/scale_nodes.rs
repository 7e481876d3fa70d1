//! `make-fixtures scale-nodes`: many per-node files for benchmarks (default 64 nodes × 8 GPUs,
//! about 1 M kernels in all) under `target/scale/nodes/`, each on its own clock like the
//! multinode fixture (boot clocks hours apart, UTC stamps off by ms, a few ppm of drift on some
//! nodes, ≥ 60 s of capture), with `nodes.truth.json` beside the directory (clock fields as in
//! truth_clock.rs).
//!
//! Each step of every rank: 13 compute kernels on stream 7, a node-local AllReduce on stream 37
//! (ranks of the node leave together), a global AllReduce on stream 29 (all ranks arrive up to
//! 2 ms apart and leave within 4 µs of a step-wide end), one optimizer kernel. Every kernel has
//! its launch call; one NVTX `train_step` range per step. Files are independent given the
//! step schedule, so they are generated in parallel, each from its own seed.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::json;

use crate::assemble::{Rank, process, threads};
use crate::clock::{Capture, FileClock};
use crate::model::*;
use crate::names::{self, Compute};
use crate::rng::Rng;
use crate::scale::{count, resolve};

const S_COMPUTE: u32 = 7;
const S_GLOBAL: u32 = 29;
const S_LOCAL: u32 = 37;
const COMPUTE_PER_STEP: usize = 13;
/// Kernels of one rank per step: compute, the two collectives, the optimizer.
const KERNELS_PER_STEP: u64 = COMPUTE_PER_STEP as u64 + 3;
const MS: i64 = 1_000_000;
const US: i64 = 1_000;
const T_FIRST: i64 = 4 * 3_600_000 * MS;
/// Every rank has arrived at the global collective this long after its step started.
const GLOBAL_BOUND: i64 = 7_500 * US;
const ROTATION: [Compute; 5] = [
    Compute::Xmma,
    Compute::Nvjet,
    Compute::Elementwise,
    Compute::FlashFwd,
    Compute::FlashBwd,
];

pub struct Args {
    files: u32,
    gpus: u32,
    kernels: u64,
    out: Option<PathBuf>,
}

pub fn parse(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        files: 64,
        gpus: 8,
        kernels: 1_000_000,
        out: None,
    };
    super::scale::each_flag(args, |flag, value| {
        match flag {
            "--files" => a.files = count(&value()?)? as u32,
            "--gpus" => a.gpus = count(&value()?)? as u32,
            "--kernels" => a.kernels = count(&value()?)?,
            "--out" => a.out = Some(PathBuf::from(value()?)),
            _ => return Err(format!("unknown argument {flag:?}")),
        }
        Ok(())
    })?;
    if !(1..=1000).contains(&a.files) {
        return Err(format!("--files must be 1..=1000, not {}", a.files));
    }
    if !(1..=8).contains(&a.gpus) {
        return Err(format!("--gpus must be 1..=8, not {}", a.gpus));
    }
    Ok(a)
}

/// The output directory (`out`, else `default` under `root`), never under fixtures/.
pub fn out_dir(out: Option<&Path>, default: &str, root: &Path) -> Result<PathBuf, String> {
    let out = out.map_or_else(|| root.join(default), Path::to_path_buf);
    let resolved = resolve(&out)?;
    if resolved.iter().any(|c| c == "fixtures") {
        return Err(format!(
            "refusing to write {} into a fixtures/ directory: scale files go under target/",
            out.display()
        ));
    }
    if resolved.is_file() {
        return Err(format!("{} is a file", out.display()));
    }
    Ok(resolved)
}

/// Creates `dir` and removes the `node<digits>.sqlite` files of an earlier run (a larger
/// one's would join this one when the directory is opened).
pub fn fresh_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    for e in std::fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))? {
        let path = e.map_err(|e| e.to_string())?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let numbered = name
            .strip_prefix("node")
            .and_then(|x| x.strip_suffix(".sqlite"))
            .is_some_and(|x| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit()));
        if numbered {
            std::fs::remove_file(&path).map_err(|e| format!("removing {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// The clock of node `n` (node 0 is the reference).
fn clock(n: u32, session_true: i64, rng: &mut Rng) -> FileClock {
    let utc_error = rng.range(-8 * MS, 8 * MS);
    if n == 0 {
        return FileClock::boot(session_true, 0, 0.0, utc_error);
    }
    let hours = (n as i64 * 7 + 3) % 40 - 3;
    let boot_offset = hours * 3_600_000 * MS + n as i64 * 1_234_567_891;
    let drift = if n % 3 == 1 {
        (n % 7) as f64 - 3.0
    } else {
        0.0
    };
    FileClock::boot(session_true, boot_offset, drift, utc_error)
}

struct Layout {
    files: u32,
    gpus: u32,
    steps: usize,
    period: i64,
    width: usize,
}

impl Layout {
    fn host(&self, n: u32) -> String {
        format!("node{n:0w$}.cluster.example", w = self.width)
    }
}

/// One node's file, its events in true time.
fn node(l: &Layout, n: u32) -> Profile {
    let mut rng = Rng::new(0x5CA1_0000 + n as u64);
    let gpus = l.gpus as usize;
    let ranks: Vec<Rank> = (0..l.gpus)
        .map(|g| Rank {
            pid: 61_000 + n * 17 % 900 + g * 3,
            device: g,
            context_id: g + 1,
        })
        .collect();
    let mut p = Profile {
        path: format!("node{n:0w$}.sqlite", w = l.width),
        host: l.host(n),
        ..Default::default()
    };
    let mut urng = Rng::new(0x0DD5_0000 + n as u64);
    for g in 0..l.gpus {
        p.gpus.push(h100(g, DGX_BUS[g as usize], uuid(&mut urng)));
    }
    for rk in &ranks {
        let ctx = Context {
            device: rk.device,
            context_id: rk.context_id,
            null_stream: S_COMPUTE,
            streams: vec![(S_COMPUTE, 3, 0), (S_LOCAL, 2, 0), (S_GLOBAL, 2, 0)],
        };
        let th = threads(rk.pid, &[(0, "python3")]);
        p.processes.push(process(rk.pid, "python3", th, Some(ctx)));
    }
    let local = names::nccl("AllReduce", Some("f32"), "RING", "LL");
    let global = names::nccl("AllReduce", Some("bf16"), "RING", "LL128");
    let mut corr = vec![1_i64; gpus];
    let launch =
        |p: &mut Profile, rng: &mut Rng, corr: &mut i64, rk: &Rank, cpu: &mut i64, nccl: bool| {
            let start = *cpu + rng.range(1_500, 2_400);
            let end = start + rng.us(3.0, 9.0);
            let (api, class) = if nccl {
                ("cuLaunchKernelEx", 1)
            } else {
                ("cudaLaunchKernel_v7000", 0)
            };
            p.calls.push(Call {
                pid: rk.pid,
                tid: rk.pid,
                start,
                end,
                api: api.into(),
                class,
                corr: *corr,
            });
            *cpu = end;
            *corr += 1;
            (end, *corr - 1)
        };
    for s in 0..l.steps {
        let t = T_FIRST + s as i64 * l.period;
        // the same for every file: the step's global end
        let global_end = t + GLOBAL_BOUND + Rng::new(0x5CA1_E0DE + s as u64).us(900.0, 1400.0);
        let mut cpu: Vec<i64> = (0..gpus).map(|_| t + rng.us(0.0, 300.0)).collect();
        let step_start = cpu.clone();
        let mut free = cpu.clone();
        for (r, rk) in ranks.iter().enumerate() {
            for c in 0..COMPUTE_PER_STEP {
                let (call_end, id) = launch(&mut p, &mut rng, &mut corr[r], rk, &mut cpu[r], false);
                let start =
                    (call_end + rng.range(4_000, 10_000)).max(free[r] + rng.range(1_000, 4_000));
                let end = start + rng.us(150.0, 300.0);
                let mut k = rk.compute(S_COMPUTE, start, end, ROTATION[c % ROTATION.len()]);
                k.corr = id;
                p.kernels.push(k);
                free[r] = end;
            }
        }
        // node-local AllReduce: ends together after the node's last arrival
        let mut local_ids = vec![];
        let mut arrive = vec![];
        for (r, rk) in ranks.iter().enumerate() {
            local_ids.push(launch(&mut p, &mut rng, &mut corr[r], rk, &mut cpu[r], true).1);
            arrive.push(free[r] + rng.range(1_000, 4_000));
        }
        let local_end = arrive.iter().max().unwrap() + rng.us(300.0, 500.0);
        let mut local_ends = vec![];
        for (r, rk) in ranks.iter().enumerate() {
            let e = local_end + rng.us(0.0, 4.0);
            let mut k = rk.nccl(S_LOCAL, arrive[r], e, &local, 16);
            k.corr = local_ids[r];
            p.kernels.push(k);
            local_ends.push(e);
        }
        // global AllReduce: arrivals spread by ms, ends at the step-wide instant
        for (r, rk) in ranks.iter().enumerate() {
            let (_, id) = launch(&mut p, &mut rng, &mut corr[r], rk, &mut cpu[r], true);
            let start = local_ends[r] + rng.us(2.0, 2000.0);
            assert!(
                start < global_end && cpu[r] < start,
                "GLOBAL_BOUND too small"
            );
            let e = global_end + rng.us(0.0, 4.0);
            let mut k = rk.nccl(S_GLOBAL, start, e, &global, 32);
            k.corr = id;
            p.kernels.push(k);
            let (call_end, id) = launch(&mut p, &mut rng, &mut corr[r], rk, &mut cpu[r], false);
            let start = (e + rng.range(2_000, 6_000)).max(call_end + 4_000);
            let end = start + rng.us(300.0, 500.0);
            let mut k = rk.compute(S_COMPUTE, start, end, Compute::Adam);
            k.corr = id;
            p.kernels.push(k);
            p.nvtx.push(Nvtx {
                pid: rk.pid,
                tid: rk.pid,
                kind: NvtxKind::PushPop,
                start: step_start[r],
                end: Some(end + 20 * US),
                text: "train_step".into(),
                registered: false,
                domain: 0,
                range_id: None,
            });
        }
        assert!(t + l.period > global_end + 10 * MS, "steps overlap");
    }
    p.kernels.sort_by_key(|k| (k.start, k.device, k.stream));
    let mut next_grid = vec![1_000_i64; gpus];
    for k in &mut p.kernels {
        k.grid_id = next_grid[k.device as usize];
        next_grid[k.device as usize] += 1;
    }
    p.calls.sort_by_key(|c| (c.start, c.pid));
    p.nvtx.sort_by_key(|e| (e.start, e.pid));
    p
}

fn capture(l: &Layout, n: u32) -> Capture {
    Capture {
        command: "torchrun",
        arguments: vec![
            format!("--nnodes={}", l.files),
            format!("--nproc_per_node={}", l.gpus),
            format!("--node_rank={n}"),
            "train.py".into(),
        ],
        environment: vec![],
        session_uuid: format!("5ca1e000-0000-4000-8000-{n:012}"),
    }
}

/// Runs `make-fixtures scale-nodes`.
pub fn run(a: &Args, root: &Path) -> Result<(), String> {
    let t0 = Instant::now();
    let dir = out_dir(a.out.as_deref(), "target/scale/nodes", root)?;
    fresh_dir(&dir)?;
    let per_rank = a.kernels / (a.files as u64 * a.gpus as u64);
    let steps = (per_rank / KERNELS_PER_STEP).max(1) as usize;
    let l = Layout {
        files: a.files,
        gpus: a.gpus,
        steps,
        // at least 61 s of capture, however few the steps
        period: (61_000 * MS / steps as i64).max(500 * MS),
        width: (a.files - 1).to_string().len().max(2),
    };
    eprintln!(
        "writing {} files x {} GPUs, {} steps of {} kernels per rank into {}",
        a.files,
        a.gpus,
        steps,
        KERNELS_PER_STEP,
        dir.display()
    );
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    let mut fields: Vec<(u32, serde_json::Value)> = vec![];
    let reference = clock(0, T_FIRST - 2_000 * MS, &mut Rng::new(0xC10C_0000));
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (l, dir, reference) = (&l, &dir, &reference);
                scope.spawn(move || {
                    let mut out = vec![];
                    for n in (w..l.files).step_by(workers as usize) {
                        let mut p = node(l, n);
                        let after = (n as i64 * 37 % 900) * MS;
                        let mut c = clock(
                            n,
                            T_FIRST - 2_000 * MS + after,
                            &mut Rng::new(0xC10C_0000 + n as u64),
                        );
                        c.stop_true = crate::clock::event_span(&p).1 + 500 * MS + after;
                        let m = crate::truth_clock::clock_fields(reference, &p, &c);
                        c.apply(&mut p);
                        let path = dir.join(&p.path);
                        let hook = |tx: &rusqlite::Transaction, _: &mut crate::writer::Strings| {
                            crate::clock::write_tables(tx, &c, &capture(l, n))
                        };
                        crate::writer::write_with(&p, &path, &hook)
                            .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
                        out.push((n, serde_json::Value::Object(m)));
                    }
                    out
                })
            })
            .collect();
        for h in handles {
            fields.extend(h.join().expect("a writer thread panicked"));
        }
    });
    fields.sort_by_key(|f| f.0);
    let kernels = KERNELS_PER_STEP * steps as u64 * a.files as u64 * a.gpus as u64;
    let mut truth = json!({
        "description": "one file per node; per step and rank 13 compute kernels (stream 7), a node-local AllReduce f32 (stream 37, one communicator per node), a global AllReduce bf16 (stream 29, all ranks; ends within 4 us), an optimizer kernel",
        "files_dir": dir.strip_prefix(resolve(root)?).unwrap_or(&dir).to_string_lossy(),
        "reference": fields[0].1["path"],
        "files": fields.into_iter().map(|f| f.1).collect::<Vec<_>>(),
        "ranks": a.files * a.gpus,
        "kernels": kernels,
        "steps": steps,
        "global_group": format!("s{S_GLOBAL}"),
        "node_local_groups": format!("s{S_LOCAL}/1 .. s{S_LOCAL}/{}", a.files),
    });
    truth.sort_all_objects();
    let truth_path = dir.with_extension("truth.json");
    std::fs::write(
        &truth_path,
        serde_json::to_string_pretty(&truth).unwrap() + "\n",
    )
    .map_err(|e| format!("writing {}: {e}", truth_path.display()))?;
    println!(
        "{} files, {} kernels, {} runtime calls, {:.1} s of timeline; truth in {} ({:.1} s)",
        a.files,
        kernels,
        kernels,
        (steps as i64 * l.period) as f64 / 1e9,
        truth_path.display(),
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}
