//! A small step-loop simulator for the compact fixtures: ranks, compute kernels, collectives
//! whose ranks all end together, memcpy/memset at step start, a sync at step end.

use crate::assemble::*;
use crate::model::{KName, Memcpy, Memset, Nccl};
use crate::names::Compute;
use crate::plan::{Op, Phase, RankPlan};
use crate::rng::Rng;

pub const US: i64 = 1_000;

/// The compact fixtures' step loop: each rank's plan played op by op,
/// collectives ending together (the scenario engine's `Sim` plays a graph).
pub struct StepLoop {
    pub ranks: Vec<Rank>,
    pub plans: Vec<RankPlan>,
    /// When each rank's compute stream is free (and its inputs are ready).
    pub ready: Vec<i64>,
    pub compute_stream: Vec<u32>,
    /// Ranks' ends of a collective are up to this far apart (µs).
    pub end_spread_us: f64,
}

/// One rank's part of a collective instance.
pub struct Member {
    pub rank: usize,
    pub stream: u32,
    /// Extra lateness of this rank (ns after base+jitter).
    pub late: i64,
    /// No launch call recorded for this kernel.
    pub orphan: bool,
}

pub fn member(rank: usize, stream: u32) -> Member {
    Member {
        rank,
        stream,
        late: 0,
        orphan: false,
    }
}

impl StepLoop {
    pub fn new(ranks: Vec<Rank>, compute_stream: Vec<u32>) -> Self {
        let plans = ranks
            .iter()
            .map(|r| RankPlan::new(r.pid, r.pid, true))
            .collect();
        let n = ranks.len();
        StepLoop {
            ranks,
            plans,
            ready: vec![0; n],
            compute_stream,
            end_spread_us: 45.0,
        }
    }

    pub fn init_calls(&mut self, before: i64, rng: &mut Rng) {
        for p in self.plans.iter_mut() {
            for api in INIT_CALLS {
                let (d, gap) = (rng.us(2.0, 40.0), rng.us(200.0, 2000.0));
                p.free(before, api, 0, d, gap, None);
            }
        }
    }

    /// HtoD batch copy and a memset on each rank's compute stream, from time `g`.
    pub fn step_start(&mut self, g: i64, rng: &mut Rng, phase: Option<Phase>) {
        for r in 0..self.ranks.len() {
            self.step_start_for(r, g, rng, phase);
        }
    }

    /// `step_start` for rank `r` only.
    pub fn step_start_for(&mut self, r: usize, g: i64, rng: &mut Rng, phase: Option<Phase>) {
        let rk = self.ranks[r];
        let s = self.compute_stream[r];
        let t0 = g.max(self.ready[r]) + rng.us(0.0, 50.0);
        let t1 = t0 + rng.us(150.0, 200.0);
        let m = Memcpy {
            pid: rk.pid,
            device: rk.device,
            context_id: rk.context_id,
            stream: s,
            start: t0,
            end: t1,
            bytes: 4 << 20,
            copy_kind: 1,
            corr: 0,
        };
        let l = launch_memcpy(rng);
        self.plans[r].op(Op::Memcpy(m), Some(l), phase);
        let t2 = t1 + rng.us(3.0, 8.0);
        let t3 = t2 + rng.us(20.0, 40.0);
        let m = Memset {
            pid: rk.pid,
            device: rk.device,
            context_id: rk.context_id,
            stream: s,
            start: t2,
            end: t3,
            bytes: 32 << 20,
            corr: 0,
        };
        let l = launch_memset(rng);
        self.plans[r].op(Op::Memset(m), Some(l), phase);
        self.ready[r] = t3;
    }

    #[allow(clippy::too_many_arguments)]
    /// A compute kernel on rank `r`'s compute stream, at `start` or when the stream is free.
    pub fn compute(
        &mut self,
        r: usize,
        start: i64,
        dur: i64,
        kind: Compute,
        orphan: bool,
        rng: &mut Rng,
        phase: Option<Phase>,
    ) -> (i64, i64) {
        let s0 = start.max(self.ready[r] + rng.us(3.0, 12.0));
        let k = self.ranks[r].compute(self.compute_stream[r], s0, s0 + dur, kind);
        let l = (!orphan).then(|| launch_compute(rng));
        self.plans[r].op(Op::Kernel(k), l, phase);
        self.ready[r] = s0 + dur;
        (s0, s0 + dur)
    }

    /// A collective: each member starts at base + jitter (+ its lateness), all end together
    /// at the latest start + transfer time (+ up to `end_spread_us` per rank). Returns (start, end) per member.
    #[allow(clippy::too_many_arguments)]
    pub fn collective(
        &mut self,
        members: &[Member],
        base: i64,
        jitter_us: f64,
        t_us: (f64, f64),
        coll: &(KName, Nccl),
        rng: &mut Rng,
        phase: Option<Phase>,
    ) -> Vec<(i64, i64)> {
        let starts: Vec<i64> = members
            .iter()
            .map(|m| base + rng.us(0.0, jitter_us) + m.late)
            .collect();
        let end = starts.iter().max().unwrap() + rng.us(t_us.0, t_us.1);
        let mut out = vec![];
        for (m, &s) in members.iter().zip(&starts) {
            let e = end + rng.us(0.0, self.end_spread_us);
            let k = self.ranks[m.rank].nccl(m.stream, s, e, coll, 16);
            let mut l = launch_nccl(rng);
            if m.late > 0 {
                l.q = rng.us(10.0, 15.0);
            }
            self.plans[m.rank].op(Op::Kernel(k), (!m.orphan).then_some(l), phase);
            out.push((s, e));
        }
        out
    }

    /// Loss copy back to the host and a stream synchronize; returns the latest sync end.
    pub fn step_end(&mut self, rng: &mut Rng, phase: Option<Phase>, after: &[i64]) -> i64 {
        let mut last = 0;
        for (r, &after) in after.iter().enumerate() {
            last = last.max(self.step_end_for(r, after, rng, phase));
        }
        last
    }

    /// `step_end` for rank `r` only; returns its sync's end.
    pub fn step_end_for(
        &mut self,
        r: usize,
        after: i64,
        rng: &mut Rng,
        phase: Option<Phase>,
    ) -> i64 {
        let (t0, t1) = self.loss_copy(r, after, rng, phase);
        let sync_end = t1 + rng.us(8.0, 15.0);
        self.plans[r].sync(
            t0 + 1,
            "cudaStreamSynchronize_v3020",
            sync_end,
            phase.map(|p| Phase { sub: None, ..p }),
        );
        sync_end
    }

    /// The loss copy of `step_end` alone (DtoH on the compute stream); returns its (start, end).
    pub fn loss_copy(
        &mut self,
        r: usize,
        after: i64,
        rng: &mut Rng,
        phase: Option<Phase>,
    ) -> (i64, i64) {
        let rk = self.ranks[r];
        let t0 = self.ready[r].max(after) + rng.us(5.0, 15.0);
        let t1 = t0 + rng.us(2.0, 4.0);
        let m = Memcpy {
            pid: rk.pid,
            device: rk.device,
            context_id: rk.context_id,
            stream: self.compute_stream[r],
            start: t0,
            end: t1,
            bytes: 4,
            copy_kind: 2,
            corr: 0,
        };
        let l = launch_memcpy(rng);
        self.plans[r].op(Op::Memcpy(m), Some(l), phase);
        self.ready[r] = t1;
        (t0, t1)
    }
}
