//! `make-fixtures scenario-scale`: nodes_3d's job at benchmark size (default 32 nodes × 8
//! GPUs, TP8 × PP4 × DP8, 3 steps: 256 ranks), one file per node on its own clock, into
//! `target/scale/nodes_3d_scale/` with `nodes_3d_scale.truth.json` beside it (the fields of
//! the scenario jobs' truth). Not a fixture: too large to commit.

use std::path::Path;

use super::spec::{Delay, NodeStall, Spec, Target};
use crate::scale::count;
use crate::scale_nodes::{fresh_dir, out_dir};

pub const USAGE: &str = "\
usage: make-fixtures scenario-scale [options]  nodes_3d's 3D job at scale, one file per node
options (counts as for scale):
  --nodes N     nodes (default 32)
  --gpus G      GPUs per node, at most 8 (default 8)
  --tp T --pp P --dp D  parallel sizes, T x P x D = N x G (default 8, 4, 8)
  --steps S     training steps (default 3)
  --seed X      another draw of the same job: clocks, durations, jitter (default: nodes_3d's)
  --out DIR     output directory (default target/scale/nodes_3d_scale; never under
                fixtures/); the truth is DIR.truth.json";

const NAME: &str = "nodes_3d_scale";

struct Args {
    nodes: usize,
    gpus: usize,
    tp: usize,
    pp: usize,
    dp: usize,
    steps: usize,
    seed: Option<u64>,
    out: Option<std::path::PathBuf>,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        nodes: 32,
        gpus: 8,
        tp: 8,
        pp: 4,
        dp: 8,
        steps: 3,
        seed: None,
        out: None,
    };
    crate::scale::each_flag(args, |flag, value| {
        let mut n = || count(&value()?).map(|n| n as usize);
        match flag {
            "--nodes" => a.nodes = n()?,
            "--gpus" => a.gpus = n()?,
            "--tp" => a.tp = n()?,
            "--pp" => a.pp = n()?,
            "--dp" => a.dp = n()?,
            "--steps" => a.steps = n()?,
            "--seed" => a.seed = Some(n()? as u64),
            "--out" => a.out = Some(value()?.into()),
            _ => return Err(format!("unknown argument {flag:?}")),
        }
        Ok(())
    })?;
    if !(1..=8).contains(&a.gpus) {
        return Err(format!("--gpus must be 1..=8, not {}", a.gpus));
    }
    if a.nodes < 2 || a.tp * a.pp * a.dp != a.nodes * a.gpus {
        return Err(format!(
            "tp x pp x dp ({}) must be nodes x gpus ({}), on 2 nodes or more",
            a.tp * a.pp * a.dp,
            a.nodes * a.gpus
        ));
    }
    if a.steps == 0 {
        return Err("--steps must be at least 1".into());
    }
    Ok(a)
}

/// nodes_3d's spec at the size asked, its delays moved onto ranks of that job: a CPU stall on
/// the second node (stage 0) in step 2, a slow GEMM on the first node of the last stage and
/// the last node's node-level stall in the last step (each when the job has its target).
fn spec(a: &Args) -> Spec {
    let path = super::dir().join("nodes_3d.toml");
    let mut s = super::spec::load(&path)
        .into_iter()
        .find(|j| j.name == "nodes_3d")
        .expect("nodes_3d in nodes_3d.toml")
        .spec;
    s.description = format!(
        "nodes_3d's job at scale: TP{} x PP{} x DP{} on {} nodes of {} GPUs, {} steps, one file per node",
        a.tp, a.pp, a.dp, a.nodes, a.gpus, a.steps
    );
    (s.tp, s.pp, s.dp, s.steps) = (a.tp, a.pp, a.dp, a.steps);
    if let Some(seed) = a.seed {
        s.seed = seed;
    }
    s.gpus_per_node = Some(a.gpus);
    // a full pipeline: a microbatch per stage at least
    s.microbatches = s.microbatches.max(a.pp);
    let (step, last) = (2.min(a.steps), a.steps);
    let at = |rank, step, op: &str, nth| Target {
        rank,
        step,
        group: "tp".into(),
        op: Some(op.into()),
        nth,
    };
    s.delays.clear();
    s.node_stalls.clear();
    if a.tp > 1 {
        s.delays.push(Delay::CpuStall {
            at: at(a.gpus + 2 % a.gpus, step, "AllGather", 1),
            ms: 22.0,
        });
        let first_of_last_stage = a.dp * (a.pp - 1) * a.tp / a.gpus;
        s.delays.push(Delay::SlowGemm {
            at: at(
                first_of_last_stage * a.gpus + 1 % a.gpus,
                last,
                "ReduceScatter",
                2,
            ),
            ms: Some(8.0),
            factor: None,
        });
    }
    if a.pp > 1 {
        s.node_stalls.push(NodeStall {
            node: a.nodes - 1,
            ms: 30.0,
            step: last,
            group: "pp".into(),
            op: None,
            nth: 1,
        });
    }
    s
}

/// Runs `make-fixtures scenario-scale`.
pub fn run(args: &[String], root: &Path) -> Result<(), String> {
    let t0 = std::time::Instant::now();
    let a = parse(args)?;
    let dir = out_dir(a.out.as_deref(), &format!("target/scale/{NAME}"), root)?;
    fresh_dir(&dir)?;
    let spec = spec(&a);
    // paths in the truth relative to the project when the directory is in it
    let root = crate::scale::resolve(root)?;
    let stem = dir.strip_prefix(&root).unwrap_or(&dir);
    super::play_into(NAME, &spec, stem.to_str().ok_or("a UTF-8 path")?);
    println!(
        "{} nodes x {} GPUs, {} steps, in {:.1} s",
        a.nodes,
        a.gpus,
        a.steps,
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}
