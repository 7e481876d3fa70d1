//! Ranks → process groups (communicators) of a Megatron/NeMo job, in Megatron's default rank
//! order "tp-cp-ep-dp-pp": tensor-parallel rank fastest, then data-parallel (whose low part
//! is the expert-parallel rank), then pipeline stage — or "tp-cp-ep-pp-dp", pipeline stage
//! before data-parallel rank. Also the point-to-point exchanges: the neighbouring stage pairs
//! of each pipeline.

use super::spec::{Order, Spec};

/// A kind of process group.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Hash)]
pub enum Kind {
    Tp,
    Pp,
    Dp,
    Ep,
    GradNorm,
    Emb,
    /// The default process group (every rank).
    World,
}

impl Kind {
    /// In the order a rank creates its groups' streams when the policy is not lazy (the
    /// default group first, as init_process_group makes it before Megatron's groups; the
    /// embedding group last: middle stages lack it, and nothing after it shifts).
    pub const ALL: [Kind; 7] = [
        Kind::World,
        Kind::Tp,
        Kind::Pp,
        Kind::Dp,
        Kind::Ep,
        Kind::GradNorm,
        Kind::Emb,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Tp => "tp",
            Kind::Pp => "pp",
            Kind::Dp => "dp",
            Kind::Ep => "ep",
            Kind::GradNorm => "gradnorm",
            Kind::Emb => "emb",
            Kind::World => "world",
        }
    }
}

/// One communicator: its members in communicator-rank order (a pipeline's in stage order).
pub struct Comm {
    pub name: String,
    pub kind: Kind,
    pub ranks: Vec<usize>,
}

/// Two neighbouring stages of one pipeline communicator: their point-to-point traffic.
pub struct Exchange {
    pub name: String,
    pub comm: usize,
    /// (earlier stage's rank, later stage's rank).
    pub ranks: [usize; 2],
}

/// Where a rank sits in the job.
#[derive(Clone, Copy, Debug)]
pub struct Coord {
    pub tp: usize,
    pub dp: usize,
    pub pp: usize,
}

pub struct Layout {
    pub order: Order,
    pub tp: usize,
    pub dp: usize,
    pub pp: usize,
    pub ep: usize,
    pub comms: Vec<Comm>,
    pub exchanges: Vec<Exchange>,
}

impl Layout {
    pub fn new(s: &Spec) -> Layout {
        let ep = s.moe.as_ref().map_or(1, |m| m.ep);
        assert!(s.dp.is_multiple_of(ep), "ep must divide dp");
        let mut l = Layout {
            order: s.order,
            tp: s.tp,
            dp: s.dp,
            pp: s.pp,
            ep,
            comms: vec![],
            exchanges: vec![],
        };
        let (tp, dp, pp) = (s.tp, s.dp, s.pp);
        let coords: Vec<Coord> = (0..tp * dp * pp).map(|r| l.coord(r)).collect();
        let all = |f: &dyn Fn(usize, usize, usize) -> Option<(usize, usize)>| {
            // (group key, position) of every rank; members sorted by position
            let mut groups: Vec<(usize, Vec<(usize, usize)>)> = vec![];
            for (r, c) in coords.iter().enumerate() {
                let Some((key, pos)) = f(c.tp, c.dp, c.pp) else {
                    continue;
                };
                match groups.iter_mut().find(|g| g.0 == key) {
                    Some(g) => g.1.push((pos, r)),
                    None => groups.push((key, vec![(pos, r)])),
                }
            }
            let mut out: Vec<Vec<usize>> = groups
                .into_iter()
                .map(|(_, mut m)| {
                    m.sort();
                    m.into_iter().map(|x| x.1).collect()
                })
                .collect();
            out.sort_by_key(|m| *m.iter().min().unwrap());
            out
        };
        let add = |l: &mut Layout, kind: Kind, groups: Vec<Vec<usize>>| {
            for (i, ranks) in groups.into_iter().enumerate() {
                if ranks.len() > 1 {
                    l.comms.push(Comm {
                        name: format!("{}/{i}", kind.name()),
                        kind,
                        ranks,
                    });
                }
            }
        };
        if s.world_allreduce {
            let world = vec![(0..tp * dp * pp).collect()];
            add(&mut l, Kind::World, world);
        }
        add(&mut l, Kind::Tp, all(&|_, d, p| Some((d + dp * p, 0))));
        add(&mut l, Kind::Pp, all(&|t, d, p| Some((t + tp * d, p))));
        add(&mut l, Kind::Dp, all(&|t, d, p| Some((t + tp * p, d))));
        if ep > 1 {
            // the expert-parallel rank is the low part of the data-parallel rank
            add(
                &mut l,
                Kind::Ep,
                all(&|t, d, p| Some((t + tp * (d / ep + dp * p), d % ep))),
            );
        }
        // the model-parallel group: the TP × PP ranks of one data-parallel replica
        add(
            &mut l,
            Kind::GradNorm,
            all(&|t, d, p| Some((d, t + tp * p))),
        );
        // the word embeddings' group: first and last stage of each pipeline
        add(
            &mut l,
            Kind::Emb,
            all(&|t, d, p| (pp > 1 && (p == 0 || p == pp - 1)).then_some((t + tp * d, p))),
        );
        for (ci, c) in l.comms.iter().enumerate() {
            if c.kind != Kind::Pp {
                continue;
            }
            for w in c.ranks.windows(2) {
                l.exchanges.push(Exchange {
                    name: format!("{}:{}-{}", c.name, w[0], w[1]),
                    comm: ci,
                    ranks: [w[0], w[1]],
                });
            }
        }
        l
    }

    pub fn world(&self) -> usize {
        self.tp * self.dp * self.pp
    }

    pub fn coord(&self, r: usize) -> Coord {
        let tp = r % self.tp;
        match self.order {
            Order::TpDpPp => Coord {
                tp,
                dp: (r / self.tp) % self.dp,
                pp: r / (self.tp * self.dp),
            },
            Order::TpPpDp => Coord {
                tp,
                pp: (r / self.tp) % self.pp,
                dp: r / (self.tp * self.pp),
            },
        }
    }

    /// The rank at `c`.
    pub fn rank(&self, c: Coord) -> usize {
        match self.order {
            Order::TpDpPp => c.tp + self.tp * (c.dp + self.dp * c.pp),
            Order::TpPpDp => c.tp + self.tp * (c.pp + self.pp * c.dp),
        }
    }

    /// The communicator of kind `k` rank `r` belongs to.
    pub fn comm_of(&self, r: usize, k: Kind) -> Option<usize> {
        self.comms
            .iter()
            .position(|c| c.kind == k && c.ranks.contains(&r))
    }

    /// The exchange between rank `a` and rank `b` (either order).
    pub fn exchange(&self, a: usize, b: usize) -> usize {
        self.exchanges
            .iter()
            .position(|x| x.ranks == [a, b] || x.ranks == [b, a])
            .unwrap_or_else(|| panic!("no exchange between ranks {a} and {b}"))
    }

    /// The rank at stage `p` of rank `r`'s pipeline.
    pub fn stage_rank(&self, r: usize, p: usize) -> usize {
        self.rank(Coord {
            pp: p,
            ..self.coord(r)
        })
    }
}
