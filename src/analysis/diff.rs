//! Before and after: the differences between two captures' analyses
//! (steps, kernels, kernel classes, overlap, skew, completeness) and the
//! regressions a CI gate fails on.
//!
//! Everything here is a value computed once from both sides' bundle
//! results; names and device labels are copied out, so the report and the
//! timeline read a [`Diff`] without either profile.

mod bandwidth;
mod completeness;
mod exposed;
mod kernels;
mod overlap;
mod regressions;
mod side;
mod skew;
mod step_account;
mod steps;

pub use bandwidth::{BytesDiff, OpBytesPair};
pub use completeness::{DeviceSet, DiffCompleteness};
pub use exposed::{ExposedNccl, ExposedPer};
pub use kernels::{ClassDelta, KernelClass, KernelDelta};
pub use overlap::OverlapPair;
pub use regressions::{Gate, Metric, Regression};
pub use side::{Side, Which, delta_pct};
pub use skew::{BigEventBrief, PairedBy, SkewPair, SkewSide, VerdictCounts};
pub use step_account::{AccountSide, CauseBrief, StepAccountDiff};
pub use steps::{STEPS_MISS_GPU_WAITS, StepFigures, StepsDiff};

use super::pipeline::{Stage, Stages};
use crate::profile::Profile;
use std::path::PathBuf;

/// The stages whose results a diff compares.
pub fn stages() -> Stages {
    Stages::of(&[
        Stage::Completeness,
        Stage::Overlap,
        Stage::Skew,
        Stage::Launch,
    ])
}

/// The differences between two captures.
#[derive(Debug, Clone)]
pub struct Diff {
    pub before_files: Vec<PathBuf>,
    pub after_files: Vec<PathBuf>,
    pub steps: StepsDiff,
    /// Each side's step account and first causes to fix.
    pub step_account: StepAccountDiff,
    /// Every kernel short name of either side, largest |Δ ms| first.
    pub kernels: Vec<KernelDelta>,
    /// Compute, each NCCL op, memcpy, memset (those present on a side).
    pub classes: Vec<ClassDelta>,
    /// Devices paired by label, in the before capture's device order, then
    /// those only after; an unpaired device has one side `None`.
    pub overlap: Vec<OverlapPair>,
    /// Paired groups first (before's order), then the unpaired ones.
    pub skew: Vec<SkewPair>,
    /// Bytes and busbw per op, from NCCL's recorded message sizes.
    pub bytes: BytesDiff,
    pub completeness: DiffCompleteness,
}

/// Computes the differences from `before` to `after`.
pub fn diff(before: Side, after: Side) -> Diff {
    let (kernels, classes) = kernels::deltas(before, after);
    Diff {
        before_files: files(before.profile),
        after_files: files(after.profile),
        steps: steps::steps_diff(before, after),
        step_account: step_account::step_account_diff(before, after),
        kernels,
        classes,
        overlap: overlap::overlap_pairs(before, after),
        skew: skew::skew_pairs(before, after),
        bytes: bandwidth::bytes_diff(before, after),
        completeness: completeness::diff_completeness(before, after),
    }
}

fn files(p: &Profile) -> Vec<PathBuf> {
    p.files.iter().map(|f| f.path.clone()).collect()
}

impl Diff {
    /// Total kernel time (every kernel, every device) before and after, ns.
    pub fn kernel_total_ns(&self) -> (i64, i64) {
        self.kernels.iter().fold((0, 0), |(b, a), k| {
            (b.saturating_add(k.before_ns), a.saturating_add(k.after_ns))
        })
    }

    /// The capture's own step-to-step spread as a share of its typical
    /// step: (p90 − p50) / p50 of the before capture's step durations, in
    /// %. `None` without steps.
    pub fn noise_pct(&self) -> Option<f64> {
        let s = self.steps.before.spread_ms?;
        (s.p50 > 0.0).then(|| 100.0 * (s.p90 - s.p50) / s.p50)
    }

    /// A change of `delta_pct` % is within noise: smaller than the before
    /// capture's step spread ([`Diff::noise_pct`]).
    pub fn within_noise(&self, delta_pct: Option<f64>) -> bool {
        match (self.noise_pct(), delta_pct) {
            (Some(noise), Some(d)) => d.abs() < noise,
            _ => false,
        }
    }

    /// Nothing differs: every figure of one side equals the other's (a
    /// capture compared with itself).
    pub fn unchanged(&self) -> bool {
        let same_overlap = |p: &OverlapPair| match (&p.before, &p.after) {
            (Some(b), Some(a)) => {
                crate::analysis::overlap::DeviceOverlap {
                    device: 0,
                    ..b.clone()
                } == crate::analysis::overlap::DeviceOverlap {
                    device: 0,
                    ..a.clone()
                }
            }
            _ => false,
        };
        let same_skew = |p: &SkewPair| match (&p.before, &p.after) {
            (Some(b), Some(a)) => {
                SkewSide {
                    group: 0,
                    ..b.clone()
                } == SkewSide {
                    group: 0,
                    ..a.clone()
                }
            }
            _ => false,
        };
        self.steps.before == self.steps.after
            && self
                .kernels
                .iter()
                .all(|k| k.before_ns == k.after_ns && k.before_count == k.after_count)
            && self
                .classes
                .iter()
                .all(|c| c.before_ns == c.after_ns && c.before_count == c.after_count)
            && self.overlap.iter().all(same_overlap)
            && self.skew.iter().all(same_skew)
            && self.bytes.ops.iter().all(|o| o.before == o.after)
            && !self.completeness.differs()
    }

    /// Exposed NCCL time (no compute under it) before and after, mean
    /// over devices: per step when both sides have steps, else per second.
    pub fn exposed_nccl(&self) -> Option<ExposedNccl> {
        exposed::exposed_nccl(
            &self.overlap,
            self.steps.before.count,
            self.steps.after.count,
        )
    }

    /// What grew by more than the gate's % of its before value: the step
    /// p50 (when both sides have steps), the exposed NCCL time, the excess
    /// of each paired skew group, and the total kernel time when asked. A
    /// figure that was 0 before and grew counts, with no percentage.
    pub fn regressions(&self, gate: Gate) -> Vec<Regression> {
        let pct = gate.pct;
        let check = regressions::check;
        let mut out = Vec::new();
        if let (Some(b), Some(a)) = (self.steps.before.spread_ms, self.steps.after.spread_ms) {
            out.extend(check(Metric::StepP50, None, b.p50, a.p50, pct));
        }
        if let Some(e) = self.exposed_nccl() {
            let metric = match e.per {
                ExposedPer::Step => Metric::ExposedNcclPerStep,
                ExposedPer::Second => Metric::ExposedNcclPerSecond,
            };
            out.extend(check(metric, None, e.before_ms, e.after_ms, pct));
        }
        for s in &self.skew {
            if let Some((b, a)) = s.excess_ns() {
                out.extend(check(
                    Metric::SkewExcess,
                    Some(&s.key),
                    b as f64 / 1e6,
                    a as f64 / 1e6,
                    pct,
                ));
            }
        }
        if gate.total_kernel {
            out.extend(self.kernel_total_grown(pct));
        }
        out
    }

    /// Exposed NCCL per step grew by more than `pct` % (the gate fails on
    /// it) while the step p50 moved by no more than `pct` % either way:
    /// what [`STEPS_MISS_GPU_WAITS`] explains.
    pub fn exposed_grew_steps_did_not(&self, pct: f64) -> bool {
        let (Some(b), Some(a)) = (self.steps.before.spread_ms, self.steps.after.spread_ms) else {
            return false;
        };
        let grew = self.exposed_nccl().is_some_and(|e| {
            e.per == ExposedPer::Step
                && regressions::check(
                    Metric::ExposedNcclPerStep,
                    None,
                    e.before_ms,
                    e.after_ms,
                    pct,
                )
                .is_some()
        });
        grew && delta_pct(b.p50, a.p50).is_some_and(|d| d.abs() <= pct)
    }

    /// The total kernel time as a regression when it grew by more than
    /// `pct` %, gated or not (the text says when it grew ungated).
    pub fn kernel_total_grown(&self, pct: f64) -> Option<Regression> {
        let (b, a) = self.kernel_total_ns();
        regressions::check(
            Metric::KernelTotal,
            None,
            b as f64 / 1e6,
            a as f64 / 1e6,
            pct,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::pipeline::Analysis;
    use crate::analysis::pipeline::analyze;
    use crate::analysis::settings::Settings;

    fn gate(pct: f64, total_kernel: bool) -> Gate {
        Gate { pct, total_kernel }
    }

    fn load(name: &str) -> (Profile, Analysis) {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let out = crate::profile::load(
            &crate::profile::files(&[root.join("fixtures").join(name)]),
            &crate::profile::LoadPlan::default(),
            &mut |_, _, _| {},
        );
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        let p = out.profile;
        let a = analyze(&p, &Settings::default(), &mut |_| {});
        (p, a)
    }

    #[test]
    fn a_capture_against_itself_changes_nothing() {
        let (p, a) = load("megatron_tp8.sqlite");
        let side = Side {
            profile: &p,
            analysis: &a,
        };
        let d = diff(side, side);
        assert!(d.steps.before.count > 0);
        assert_eq!(d.steps.before, d.steps.after);
        assert!(!d.kernels.is_empty());
        assert!(
            d.kernels
                .iter()
                .all(|k| k.delta_ns() == 0 && k.only().is_none())
        );
        assert!(d.classes.iter().all(|c| c.delta_ns() == 0));
        assert!(
            d.overlap
                .iter()
                .all(|o| o.before == o.after && o.before.is_some())
        );
        assert!(!d.skew.is_empty());
        assert!(
            d.skew
                .iter()
                .all(|s| s.paired_by == Some(PairedBy::Key) && s.before == s.after)
        );
        assert!(!d.completeness.differs());
        assert!(d.unchanged());
        assert_eq!(d.regressions(gate(0.0, true)), Vec::new());
    }

    #[test]
    fn a_slower_kernel_shows_under_its_name_and_trips_the_gate() {
        let (before, ab) = load("megatron_tp8.sqlite");
        let row = (0..before.gpu.len())
            .find(|&i| {
                before.gpu.kind(i) == crate::profile::GpuKind::Kernel
                    && ab.classes.comm(&before, i).is_none()
            })
            .expect("a compute kernel");
        // One file: its rows are the capture's.
        let mut model = before.file_models().next().expect("one file").clone();
        model.gpu.end[row] += 10_000_000;
        let after = Profile::of_files(vec![model]);
        let aa = analyze(&after, &Settings::default(), &mut |_| {});
        let d = diff(
            Side {
                profile: &before,
                analysis: &ab,
            },
            Side {
                profile: &after,
                analysis: &aa,
            },
        );
        assert!(!d.unchanged());
        let name = before.strings.get(before.gpu.name(row));
        assert_eq!(d.kernels[0].name, name);
        assert_eq!(d.kernels[0].delta_ns(), 10_000_000);
        assert!(d.kernels[1..].iter().all(|k| k.delta_ns() == 0));
        let compute = d
            .classes
            .iter()
            .find(|c| c.class == KernelClass::Compute)
            .unwrap();
        assert_eq!(compute.delta_ns(), 10_000_000);
        let (b, a) = d.kernel_total_ns();
        assert_eq!(a - b, 10_000_000);
        let pct = 100.0 * 10_000_000.0 / b as f64;
        let grown = d.regressions(gate(pct / 2.0, true));
        assert!(
            grown.iter().any(|r| r.metric == Metric::KernelTotal),
            "{grown:?}"
        );
        // Ungated unless asked.
        assert!(
            !d.regressions(gate(pct / 2.0, false))
                .iter()
                .any(|r| r.metric == Metric::KernelTotal)
        );
        assert!(
            !d.regressions(gate(pct * 2.0, true))
                .iter()
                .any(|r| r.metric == Metric::KernelTotal)
        );
    }

    /// The bundled pair whose late ranks come back: exposed NCCL per step
    /// grows by 67 % with the step p50 unchanged.
    #[test]
    fn exposed_growth_with_steady_steps_is_told_only_where_the_gate_fails_on_it() {
        let (pb, ab) = load("diff/no_big_skew.sqlite");
        let (pa, aa) = load("megatron_tp8.sqlite");
        let side = |profile, analysis| Side { profile, analysis };
        let d = diff(side(&pb, &ab), side(&pa, &aa));
        let e = d.exposed_nccl().unwrap();
        assert_eq!(e.per, ExposedPer::Step);
        assert!(e.delta_pct().unwrap() > 60.0, "{e:?}");
        assert!(d.exposed_grew_steps_did_not(5.0));
        // Within a wider gate it did not fail.
        assert!(!d.exposed_grew_steps_did_not(70.0));
        // Steps that moved past the gate show what they show.
        let mut slower = d.clone();
        let p50 = &mut slower.steps.after.spread_ms.as_mut().unwrap().p50;
        *p50 *= 1.06;
        assert!(!slower.exposed_grew_steps_did_not(5.0));
        // Exposed NCCL that shrank needs no word.
        let back = diff(side(&pa, &aa), side(&pb, &ab));
        assert!(!back.exposed_grew_steps_did_not(5.0));
    }

    #[test]
    fn groups_pair_by_key_else_by_op_sequence_else_not() {
        let (p, a) = load("megatron_tp8.sqlite");
        assert!(a.skews.len() >= 2, "{}", a.skews.len());
        let mut renamed = a.clone();
        renamed.matching.groups[a.skews[0].group].key = "renamed".into();
        let mut fewer = a.clone();
        fewer.skews.remove(1);
        let side = |a| Side {
            profile: &p,
            analysis: a,
        };
        let d = diff(side(&a), side(&renamed));
        let by_seq: Vec<&SkewPair> = d
            .skew
            .iter()
            .filter(|s| s.paired_by == Some(PairedBy::OpSequence))
            .collect();
        // Groups with the same ops could pair crosswise; the renamed one pairs.
        assert!(by_seq.iter().any(|s| s.key == "renamed"), "{:?}", d.skew);
        assert!(d.skew.iter().all(|s| s.paired_by.is_some()));
        let d = diff(side(&a), side(&fewer));
        let lost = &a.matching.groups[a.skews[1].group].key;
        let unpaired: Vec<&SkewPair> = d.skew.iter().filter(|s| s.paired_by.is_none()).collect();
        assert_eq!(unpaired.len(), 1);
        assert_eq!(&unpaired[0].key, lost);
        assert!(unpaired[0].after.is_none() && unpaired[0].before.is_some());
        assert_eq!(d.skew.last().map(|s| &s.key), Some(lost));
    }
}
