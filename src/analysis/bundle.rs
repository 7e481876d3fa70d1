//! Every analysis of a profile, computed once, for views that show them all
//! (the timeline UI).

use super::Window;
use super::anomalies::{AnomalyEvent, anomalies};
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
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            comm_pattern: None,
            big_skew_ns: 20_000_000,
            anomaly_ratio: 3.0,
            step_marker: Regex::new(DEFAULT_STEP_MARKER).expect("default step marker"),
        }
    }
}

/// The results of every analysis over the whole capture.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub classes: KernelClasses,
    pub completeness: Completeness,
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
    Analysis {
        classes,
        completeness,
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
    let matching = match_collectives(p, &classes);
    let steps = Steps::new(p, &s.step_marker);
    stage("computing skew");
    let skews = skew(p, &matching, &steps, w, s.big_skew_ns);
    stage("correlating launches");
    let launch = launch_report(p, &classes, &matching, &skews, w);
    let (anomaly_rows, anomalies) = anomalies(p, &matching, &skews, s.anomaly_ratio);
    Analysis {
        classes,
        completeness,
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
