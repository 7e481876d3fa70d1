//! `scale --cpu`: the callchains of the CPU samples. A sample's stack follows from what its
//! thread was doing (scale_cpu.rs's `Kind`) and a generator seeded by the sample's id, so that
//! COMPOSITE_EVENTS and SAMPLING_CALLCHAINS, written in separate passes, agree.
//!
//! Stacks are 10 to 30 frames deep (13 on average), leaf first: a few kernel-mode frames on top
//! for some samples (a syscall in the driver's spin loop, an ioctl, a page fault, a timer
//! interrupt), the CUDA runtime and driver (libcuda unresolved, as in real exports), the op
//! (cuBLASLt, flash attention, ATen, NCCL, c10d), the autograd engine in backward, Python
//! frames and the interpreter's entry frames. A stack deeper than the sample's unwinding
//! depth (10–30, mostly near 10) loses its outer frames, and its outermost frame is
//! `[Broken backtraces]`, as in real exports. Every symbol and module is a StringIds row.

#[path = "scale_symbols.rs"]
mod symbols;

use super::{A_LAUNCH, A_LAUNCH_EX, A_MEMCPY, A_MEMSET, A_RECORD, A_SYNC, A_WAIT};
use crate::rng::Rng;

/// What a thread was doing when it was sampled.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum What {
    /// Inside a CUDA runtime call of the main thread (`api`, and `spec` for a kernel launch).
    Call,
    /// Inside an `ioctl` the driver made during such a call.
    Ioctl,
    /// The main thread in Python between calls.
    Py,
    /// The pin-memory thread copying a batch into pinned memory.
    Pin,
    /// The NCCL proxy thread progressing a collective.
    Proxy,
    /// The NCCL watchdog thread waking up (querying the work's end events).
    Watchdog,
    /// The CUDA event handler thread waking up from `poll`.
    Evt,
    /// torchrun's monitor loop.
    Torchrun,
}

#[derive(Clone, Copy, Debug)]
pub struct Kind {
    pub what: What,
    pub api: u8,
    pub spec: u8,
}

impl Kind {
    pub fn of(what: What) -> Self {
        Kind {
            what,
            api: 0,
            spec: NO_SPEC,
        }
    }
}

pub const NO_SPEC: u8 = u8::MAX;

pub struct Frame {
    pub symbol: i64,
    pub module: i64,
    pub unresolved: bool,
    pub kernel: bool,
    pub ip: i64,
    /// ENUM_STACK_UNWIND_METHOD: 7 DWARF_DF for user frames, 0 for the others.
    pub unwind: i64,
}

/// A list of frame indices, outermost first.
type Sec = Vec<u16>;

/// The frames of one kind of sample, outermost first, between the thread's base (and Python
/// frames) and the leaf part.
struct Op {
    /// Under the autograd engine (a backward op).
    backward: bool,
    /// Called back into Python from the engine (an autograd.Function's backward).
    py_node: bool,
    frames: Sec,
}

pub struct Frames {
    pub frames: Vec<Frame>,
    main_base: Sec,
    thread_base: Sec,
    py_eval: u16,
    py_calls: Sec,
    py_leaves: Sec,
    engine: Sec,
    py_node: Sec,
    /// Per kernel spec: the op's frames down to (not including) the launch call.
    ops: Vec<Op>,
    cuda_launch: u16,
    cu_launch_ex: u16,
    libcuda: Sec,
    memcpy: Sec,
    memset: Sec,
    sync: Sec,
    wait: Sec,
    record: Sec,
    sched_yield: u16,
    ioctl: u16,
    futex_wait: u16,
    poll: u16,
    pin: Sec,
    memmove: u16,
    proxy: Sec,
    proxy_leaves: Sec,
    watchdog: Sec,
    evt: Sec,
    torchrun: Sec,
    k_yield: Sec,
    k_ioctl: Sec,
    k_irq: Sec,
    k_fault: Sec,
    k_futex: Sec,
    k_poll: Sec,
    broken: u16,
}

impl Frames {
    /// `k` Python frames: an eval frame and the call that entered it, each.
    fn python(&self, rng: &mut Rng, k: usize, out: &mut Sec) {
        for _ in 0..k {
            out.push(self.py_eval);
            out.push(self.py_calls[(rng.next_u64() % self.py_calls.len() as u64) as usize]);
        }
        out.push(self.py_eval);
    }

    fn pick(rng: &mut Rng, v: &[u16]) -> u16 {
        v[(rng.next_u64() % v.len() as u64) as usize]
    }

    /// The stack of sample `id` (of kind `k`) into `out`, outermost first; the caller writes
    /// it leaf first. Deterministic in (`id`, `k`).
    pub fn stack(&self, id: i64, k: Kind, out: &mut Sec) {
        out.clear();
        let mut rng = Rng::new(0x5A3F_1E00_0000_0000 ^ id as u64);
        let roll = rng.range(0, 99);
        // the thread's base and Python frames, then the op, then the leaf part
        let main = matches!(k.what, What::Call | What::Ioctl | What::Py);
        if main || k.what == What::Torchrun {
            out.extend(&self.main_base);
        } else if k.what == What::Pin {
            out.extend(&self.thread_base);
        }
        let mut kernel: Option<&Sec> = None;
        match k.what {
            What::Call | What::Ioctl => {
                let (op, leaf): (&[u16], Option<u16>) = match k.api {
                    A_LAUNCH | A_LAUNCH_EX if k.spec != NO_SPEC => {
                        let op = &self.ops[k.spec as usize];
                        let launch = if k.api == A_LAUNCH_EX {
                            self.cu_launch_ex
                        } else {
                            self.cuda_launch
                        };
                        if op.backward {
                            self.python(&mut rng, 1 + (roll % 2) as usize, out);
                            out.extend(&self.engine);
                            if op.py_node {
                                out.extend(&self.py_node);
                                self.python(&mut rng, 0, out);
                            }
                        } else {
                            self.python(&mut rng, 1 + (roll % 4) as usize, out);
                        }
                        (&op.frames, Some(launch))
                    }
                    A_MEMCPY => (&self.memcpy, None),
                    A_MEMSET => (&self.memset, None),
                    A_SYNC => (&self.sync, None),
                    A_WAIT => (&self.wait, None),
                    A_RECORD => (&self.record, None),
                    _ => (&self.sync[..0], Some(self.cuda_launch)),
                };
                if !matches!(k.api, A_LAUNCH | A_LAUNCH_EX) || k.spec == NO_SPEC {
                    self.python(&mut rng, 1 + (roll % 3) as usize, out);
                }
                out.extend(op);
                out.extend(leaf);
                // the driver: a few unresolved libcuda frames
                for _ in 0..(2 + roll % 2) {
                    out.push(Self::pick(&mut rng, &self.libcuda));
                }
                if k.what == What::Ioctl {
                    out.push(self.ioctl);
                    kernel = Some(&self.k_ioctl);
                } else if roll < 10 {
                    out.push(self.sched_yield);
                    kernel = Some(&self.k_yield);
                } else if roll < 13 {
                    kernel = Some(&self.k_irq);
                }
            }
            What::Py => {
                self.python(&mut rng, 2 + (roll % 5) as usize, out);
                out.push(Self::pick(&mut rng, &self.py_leaves));
                if roll < 3 {
                    kernel = Some(&self.k_irq);
                }
            }
            What::Pin => {
                self.python(&mut rng, 2 + (roll % 3) as usize, out);
                out.extend(&self.pin);
                out.push(self.memmove);
                if roll < 15 {
                    kernel = Some(&self.k_fault);
                } else if roll < 18 {
                    kernel = Some(&self.k_irq);
                }
            }
            What::Proxy => {
                out.extend(&self.proxy);
                out.push(Self::pick(&mut rng, &self.proxy_leaves));
                if roll < 5 {
                    kernel = Some(&self.k_irq);
                }
            }
            What::Watchdog => {
                out.extend(&self.watchdog);
                for _ in 0..2 {
                    out.push(Self::pick(&mut rng, &self.libcuda));
                }
                if roll < 30 {
                    out.push(self.futex_wait);
                    kernel = Some(&self.k_futex);
                }
            }
            What::Evt => {
                out.extend(&self.evt);
                out.push(self.poll);
                if roll < 40 {
                    kernel = Some(&self.k_poll);
                }
            }
            What::Torchrun => {
                self.python(&mut rng, 2, out);
                out.extend(&self.torchrun);
                if roll < 40 {
                    kernel = Some(&self.k_futex);
                }
            }
        }
        if let Some(kf) = kernel {
            let n = 2 + (rng.next_u64() % (kf.len() as u64 - 1)) as usize;
            out.extend(&kf[..n]);
        }
        // the unwinding stops after 10 + the least of four draws of 0..=20 frames
        let mut d = || rng.range(0, 20) as usize;
        let depth = 10 + d().min(d()).min(d()).min(d());
        if out.len() > depth {
            out.drain(..out.len() - depth);
            out[0] = self.broken;
        }
        debug_assert!((10..=30).contains(&out.len()), "{k:?} {}", out.len());
    }

    /// The leaf's instruction pointer varies within its function.
    pub fn leaf_ip(&self, f: u16, id: i64) -> i64 {
        let fr = &self.frames[f as usize];
        if fr.unresolved {
            fr.ip
        } else {
            fr.ip + ((id as u64).wrapping_mul(0x9E37_79B9) >> 20 & 0x1f0) as i64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::A_QUERY;
    use super::*;
    use crate::scale_step::{ALLGATHER, specs};
    use crate::writer::Strings;

    #[test]
    fn stacks_are_10_to_30_frames_and_deterministic() {
        let mut st = Strings::default();
        let specs = specs();
        let f = Frames::new(&mut st, &specs);
        let mut a = vec![];
        let mut b = vec![];
        let kinds = [
            What::Call,
            What::Ioctl,
            What::Py,
            What::Pin,
            What::Proxy,
            What::Watchdog,
            What::Evt,
            What::Torchrun,
        ];
        for id in 1..3000 {
            for &what in &kinds {
                for api in [
                    A_LAUNCH,
                    A_LAUNCH_EX,
                    A_MEMCPY,
                    A_MEMSET,
                    A_SYNC,
                    A_WAIT,
                    A_RECORD,
                    A_QUERY,
                ] {
                    let spec = match api {
                        A_LAUNCH => (id % 29) as u8,
                        A_LAUNCH_EX => ALLGATHER + (id % 3) as u8,
                        _ => NO_SPEC,
                    };
                    let k = Kind { what, api, spec };
                    f.stack(id, k, &mut a);
                    f.stack(id, k, &mut b);
                    assert_eq!(a, b);
                    assert!((10..=30).contains(&a.len()), "{k:?}: {}", a.len());
                    // kernel frames only on top
                    let first_kernel = a.iter().position(|&i| f.frames[i as usize].kernel);
                    if let Some(p) = first_kernel {
                        assert!(a[p..].iter().all(|&i| f.frames[i as usize].kernel));
                    }
                }
            }
        }
    }
}
