//! Every analysis of a profile, computed once, for views that show them all
//! (the timeline UI).

use super::Window;
use super::anomalies::{AnomalyEvent, anomalies};
use super::clock::{self, AlignMode, Alignment};
use super::completeness::{Completeness, completeness};
use super::kernel_class::KernelClasses;
use super::launch::{LaunchReport, launch_report};
use super::matching::{Matching, match_collectives};
use super::nccl_breakdown::{DeviceNccl, nccl_breakdown};
use super::overlap::{DeviceOverlap, overlap};
use super::skew::{GroupSkew, skew};
use super::steps::{DEFAULT_STEP_MARKER, Steps};
use crate::profile::Profile;
use regex::Regex;

/// Analysis settings (the report's options that change results).
#[derive(Debug, Clone)]
pub struct Settings {
    pub comm_pattern: Option<Regex>,
    pub big_skew_ns: i64,
    pub anomaly_ratio: f64,
    pub step_marker: Regex,
    /// How clocks of several files are aligned (`--align`).
    pub align: AlignMode,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            comm_pattern: None,
            big_skew_ns: 20_000_000,
            anomaly_ratio: 3.0,
            step_marker: Regex::new(DEFAULT_STEP_MARKER).expect("default step marker"),
            align: AlignMode::default(),
        }
    }
}

/// The results of every analysis over the whole capture.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Analysis {
    pub classes: KernelClasses,
    pub completeness: Completeness,
    /// Each file's mapping to the reference clock (file 0).
    pub clock: Alignment,
    pub nccl: Vec<DeviceNccl>,
    pub overlap: Vec<DeviceOverlap>,
    pub matching: Matching,
    pub steps: Steps,
    pub skews: Vec<GroupSkew>,
    pub launch: LaunchReport,
    pub anomaly_rows: usize,
    pub anomalies: Vec<AnomalyEvent>,
}

/// The analyses the timeline needs before its first frame (kernel classes,
/// completeness); the cross-rank ones are left empty, to be filled by
/// [`analyze`] while the user already looks at the timeline.
pub fn analyze_quick(p: &Profile, s: &Settings) -> Analysis {
    let classes = KernelClasses::new(p, s.comm_pattern.as_ref());
    let completeness = completeness(p, Window::ALL);
    let clock = clock::from_utc(p, s.align);
    Analysis {
        classes,
        completeness,
        clock,
        nccl: Vec::new(),
        overlap: Vec::new(),
        matching: Matching::default(),
        steps: Steps::default(),
        skews: Vec::new(),
        launch: LaunchReport::default(),
        anomaly_rows: 0,
        anomalies: Vec::new(),
    }
}

/// The analyses `diff` compares: those of [`analyze`] without the NCCL
/// breakdown, the launch report and the anomalies, which it does not show
/// (left empty, as [`analyze_quick`] leaves the cross-rank ones); a big
/// event's launch verdict is worked out for it alone
/// (`launch::explain_late`).
pub fn analyze_for_diff(p: &Profile, s: &Settings) -> Analysis {
    let quick = analyze_quick(p, s);
    let w = Window::ALL;
    let overlap = overlap(p, &quick.classes, w);
    let (clock, matching) = align_and_match(p, &quick.classes, s.align);
    let steps = Steps::new(p, &s.step_marker);
    let skews = skew(p, &matching, &steps, w, s.big_skew_ns, &clock);
    Analysis {
        overlap,
        clock,
        matching,
        steps,
        skews,
        ..quick
    }
}

/// Runs every analysis; `stage` is told what is being computed.
pub fn analyze(p: &Profile, s: &Settings, stage: &mut dyn FnMut(&'static str)) -> Analysis {
    stage("classifying kernels");
    complete(p, s, analyze_quick(p, s), stage)
}

/// Adds the cross-rank analyses to the result of [`analyze_quick`].
pub fn complete(
    p: &Profile,
    s: &Settings,
    quick: Analysis,
    stage: &mut dyn FnMut(&'static str),
) -> Analysis {
    let w = Window::ALL;
    let Analysis {
        classes,
        completeness,
        ..
    } = quick;
    stage("NCCL breakdown");
    let nccl = nccl_breakdown(p, &classes, w);
    stage("computing overlap");
    let overlap = overlap(p, &classes, w);
    stage("matching collectives");
    let (clock, matching) = align_and_match(p, &classes, s.align);
    let steps = Steps::new(p, &s.step_marker);
    stage("computing skew");
    let skews = skew(p, &matching, &steps, w, s.big_skew_ns, &clock);
    stage("correlating launches");
    let launch = launch_report(p, &classes, &matching, &skews, w);
    let (anomaly_rows, anomalies) = anomalies(p, &matching, &skews, s.anomaly_ratio);
    Analysis {
        classes,
        completeness,
        clock,
        nccl,
        overlap,
        matching,
        steps,
        skews,
        launch,
        anomaly_rows,
        anomalies,
    }
}

/// The clock ladder and the matching that goes with it: collectives are
/// matched on UTC-aligned clocks (sequence matching works whatever the
/// clocks), the ends of those that span clock domains refine the clocks,
/// and the collectives are matched again on the result, so that ends
/// compared across files (end alignment, skew) are on the reference clock.
pub fn align_and_match(
    p: &Profile,
    classes: &KernelClasses,
    mode: AlignMode,
) -> (Alignment, Matching) {
    let utc = clock::from_utc(p, mode);
    let first = match_collectives(p, classes, &utc);
    let aligned = match mode {
        AlignMode::Ends => clock::ends::refine_from_ends(p, &utc, &first),
        AlignMode::Utc | AlignMode::None => clock::ends::with_residuals(p, utc, &first),
    };
    if !aligned.several_domains() {
        return (aligned, first);
    }
    let matching = match_collectives(p, classes, &aligned);
    (aligned, matching)
}
