//! The analysis pipeline: every stage written once, in the one order every
//! caller runs them (the timeline, `report`, `diff`, `index`, `bench`).
//! A caller says which results it needs; the stages they depend on run
//! with them. The clocks come first whenever times of several files are
//! compared, so that every later stage reads aligned times. A group's
//! straggler matrix is derived from the skew stage by one function
//! (`stragglers::straggler_map`) when shown, not stored: it is ranks ×
//! instances per group, and the timeline shows one group at a time.

use super::anomalies::{AnomalyEvent, anomalies};
use super::bandwidth::Sizes;
use super::clock::{self, AlignMode, Alignment};
use super::completeness::{Completeness, completeness};
use super::kernel_class::KernelClasses;
use super::launch::{LaunchReport, late_launches, launch_queues};
use super::matching::{Matching, match_collectives};
use super::nccl_breakdown::{DeviceNccl, nccl_breakdown};
use super::overlap::{DeviceOverlap, overlap};
use super::settings::Settings;
use super::skew::{GroupSkew, skew};
use super::steps::Steps;
use super::window::Window;
use crate::profile::Profile;
use std::collections::BTreeMap;

/// A stage of the pipeline, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Stage {
    /// Collectives matched across ranks, clocks aligned from their ends,
    /// matched again on the aligned clocks; the message sizes NCCL's calls
    /// recorded.
    Clock,
    Completeness,
    Nccl,
    Overlap,
    /// Steps and the skew of every instance.
    Skew,
    Launch,
    Anomalies,
}

impl Stage {
    pub const ALL: [Stage; 7] = [
        Stage::Clock,
        Stage::Completeness,
        Stage::Nccl,
        Stage::Overlap,
        Stage::Skew,
        Stage::Launch,
        Stage::Anomalies,
    ];

    /// What the stage is doing, for a progress line.
    pub fn doing(self) -> &'static str {
        match self {
            Stage::Clock => "matching collectives",
            Stage::Completeness => "checking completeness",
            Stage::Nccl => "NCCL breakdown",
            Stage::Overlap => "computing overlap",
            Stage::Skew => "computing skew",
            Stage::Launch => "correlating launches",
            Stage::Anomalies => "finding anomalies",
        }
    }

    /// The stages this one reads the results of.
    fn needs(self) -> &'static [Stage] {
        match self {
            Stage::Clock | Stage::Completeness | Stage::Nccl | Stage::Overlap => &[],
            Stage::Skew => &[Stage::Clock],
            Stage::Launch | Stage::Anomalies => &[Stage::Skew],
        }
    }
}

/// A set of stages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stages(u16);

impl Stages {
    pub const NONE: Stages = Stages(0);

    pub fn all() -> Stages {
        Stages::of(&Stage::ALL)
    }

    /// `stages` and every stage they need.
    pub fn of(stages: &[Stage]) -> Stages {
        let mut s = Stages::NONE;
        for &st in stages {
            s = s.with(st);
        }
        s
    }

    /// This set with `st` and the stages it needs.
    pub fn with(self, st: Stage) -> Stages {
        let mut s = Stages(self.0 | 1 << st as u16);
        for &n in st.needs() {
            s = s.with(n);
        }
        s
    }

    pub fn has(self, st: Stage) -> bool {
        self.0 & (1 << st as u16) != 0
    }

    fn without(self, done: Stages) -> Stages {
        Stages(self.0 & !done.0)
    }

    /// This set with `st` alone (not the stages it needs).
    fn with_only(self, st: Stage) -> Stages {
        Stages(self.0 | 1 << st as u16)
    }
}

/// The results of the pipeline; a stage not run leaves its results empty
/// ([`Analysis::holds`] says which ran).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Analysis {
    /// The stages whose results these are.
    pub holds: Stages,
    pub classes: KernelClasses,
    pub completeness: Completeness,
    /// Each file's mapping to the reference clock (file 0): from the files'
    /// UTC stamps, refined from collective ends once [`Stage::Clock`] ran.
    pub clock: Alignment,
    pub nccl: Vec<DeviceNccl>,
    /// The message size NCCL recorded for each NCCL kernel (none without
    /// payloads): with the matching, bytes and bandwidth.
    pub sizes: Sizes,
    pub overlap: Vec<DeviceOverlap>,
    pub matching: Matching,
    pub steps: Steps,
    pub skews: Vec<GroupSkew>,
    pub launch: LaunchReport,
    pub anomaly_rows: usize,
    pub anomalies: Vec<AnomalyEvent>,
}

impl Analysis {
    /// Nothing computed yet but the kernel classes and the UTC clocks.
    fn start(p: &Profile, s: &Settings) -> Analysis {
        Analysis {
            holds: Stages::NONE,
            classes: KernelClasses::new(p, s.comm_pattern.as_ref()),
            completeness: Completeness::default(),
            clock: clock::from_utc(p, s.align),
            nccl: Vec::new(),
            sizes: Sizes::default(),
            overlap: Vec::new(),
            matching: Matching::default(),
            steps: Steps::default(),
            skews: Vec::new(),
            launch: LaunchReport::default(),
            anomaly_rows: 0,
            anomalies: Vec::new(),
        }
    }
}

/// Runs the stages `wanted` (and those they need) over `w`, a window on
/// the reference clock; `stage` is told what is being computed. A window
/// other than the whole capture is placed in each file through the clocks,
/// so then the clocks are aligned first.
pub fn run(
    p: &Profile,
    s: &Settings,
    w: Window,
    wanted: Stages,
    stage: &mut dyn FnMut(&'static str),
) -> Analysis {
    stage("classifying kernels");
    let wanted = if w.is_all() {
        wanted
    } else {
        wanted.with(Stage::Clock)
    };
    resume(p, s, w, Analysis::start(p, s), wanted, stage)
}

/// Adds the stages of `wanted` that `a` does not hold (the timeline's
/// first frame holds completeness; the rest follows).
pub fn resume(
    p: &Profile,
    s: &Settings,
    w: Window,
    mut a: Analysis,
    wanted: Stages,
    stage: &mut dyn FnMut(&'static str),
) -> Analysis {
    let mut todo = wanted.without(a.holds);
    let beside = clock_free(p, w, todo);
    // The launch section's queues read no clock either (see
    // `launch_queues`); its late launches wait for the skews.
    let queues_beside = w.is_all() && todo.has(Stage::Launch);
    let mut queues = None;
    if todo.has(Stage::Clock) && (beside != Stages::NONE || queues_beside) {
        // The matching on this core, the stages that read no clock on the
        // other.
        stage(Stage::Clock.doing());
        let (classes, utc) = (&a.classes, &a.clock);
        let ((c, n, o, q), clocked) = crate::profile::parallel::beside(
            move || {
                (
                    beside
                        .has(Stage::Completeness)
                        .then(|| completeness(p, utc, w)),
                    beside
                        .has(Stage::Nccl)
                        .then(|| nccl_breakdown(p, classes, utc, w)),
                    beside
                        .has(Stage::Overlap)
                        .then(|| overlap(p, classes, utc, w)),
                    queues_beside.then(|| launch_queues(p, classes, utc, w)),
                )
            },
            || clock_stage(p, classes, s.align),
        );
        a.completeness = c.unwrap_or(a.completeness);
        a.nccl = n.unwrap_or(a.nccl);
        a.overlap = o.unwrap_or(a.overlap);
        queues = q;
        a.holds = Stages(a.holds.0 | beside.0);
        set_clocked(p, w, &mut a, clocked);
        a.holds = a.holds.with_only(Stage::Clock);
        todo = todo.without(a.holds);
    }
    for st in Stage::ALL {
        if !todo.has(st) {
            continue;
        }
        stage(st.doing());
        match st {
            Stage::Clock => {
                let clocked = clock_stage(p, &a.classes, s.align);
                set_clocked(p, w, &mut a, clocked);
            }
            Stage::Completeness => a.completeness = completeness(p, &a.clock, w),
            Stage::Nccl => a.nccl = nccl_breakdown(p, &a.classes, &a.clock, w),
            Stage::Overlap => a.overlap = overlap(p, &a.classes, &a.clock, w),
            Stage::Skew => {
                a.steps = Steps::new(p, &s.step_marker);
                a.steps.number_job_wide(p, &a.clock, &a.matching);
                a.skews = skew(p, &a.matching, &a.steps, w, s.big_skew_ns, &a.clock);
                super::events::mark_node_events(p, &a.matching, &mut a.skews);
            }
            Stage::Launch => {
                let mut launch = queues
                    .take()
                    .unwrap_or_else(|| launch_queues(p, &a.classes, &a.clock, w));
                launch.late = late_launches(p, &a.clock, &a.matching, &a.skews);
                a.launch = launch;
            }
            Stage::Anomalies => {
                (a.anomaly_rows, a.anomalies) = anomalies(p, &a.matching, &a.skews, s.anomaly_ratio)
            }
        }
        a.holds = a.holds.with_only(st);
    }
    a
}

/// The clock stage: clocks and matching, and the message sizes from the
/// NCCL calls that name rung 2's communicators.
fn clock_stage(
    p: &Profile,
    classes: &KernelClasses,
    mode: AlignMode,
) -> (Alignment, Matching, Sizes) {
    let (clock, matching) = align_and_match(p, classes, mode);
    (clock, matching, Sizes::read(p, classes))
}

/// The clock stage's results into `a`. Completeness measured before the
/// clocks were aligned spans the capture on them now.
fn set_clocked(p: &Profile, w: Window, a: &mut Analysis, clocked: (Alignment, Matching, Sizes)) {
    (a.clock, a.matching, a.sizes) = clocked;
    if a.holds.has(Stage::Completeness) {
        a.completeness.span = a.clock.span_within(p, w);
    }
}

/// The stages of `todo` whose results the clocks cannot change, which
/// may run beside the matching: over the whole capture, completeness
/// counts every row (its span is set once the clocks are known) and the
/// NCCL breakdown reads each lane on its own clock; the overlap unites a
/// device's lanes on one clock, which the alignment changes only for a
/// device seen by two files.
fn clock_free(p: &Profile, w: Window, todo: Stages) -> Stages {
    if !w.is_all() {
        return Stages::NONE;
    }
    let mut file_of: Vec<Option<usize>> = vec![None; p.devices.len()];
    let one_file_per_device = (0..p.lanes.len()).all(|l| {
        let file = p.lane_file(l as crate::profile::LaneId);
        *file_of[p.lanes[l].device as usize].get_or_insert(file) == file
    });
    let mut free = Stages::NONE;
    for st in [Stage::Completeness, Stage::Nccl, Stage::Overlap] {
        if todo.has(st) && (st != Stage::Overlap || one_file_per_device) {
            free = free.with_only(st);
        }
    }
    free
}

/// Every stage over the whole capture.
pub fn analyze(p: &Profile, s: &Settings, stage: &mut dyn FnMut(&'static str)) -> Analysis {
    run(p, s, Window::ALL, Stages::all(), stage)
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
    // A clock that runs at another pace than the job's cannot be right.
    let mut apart: BTreeMap<usize, clock::Apart> = BTreeMap::new();
    if mode != AlignMode::None {
        for o in clock::pace::off_pace(p, classes) {
            let why = o.why();
            apart.insert(o.file, clock::Apart { why, isolate: true });
        }
    }
    let mut utc = clock::from_utc_apart(p, mode, &apart);
    let mut first = match_collectives(p, classes, &utc, &Default::default());
    // Files of one host share its clock only if their ends say so (on
    // UTC alone a file taken apart would keep the same stamps: its
    // agreement is stated instead).
    if mode == AlignMode::Ends {
        let more = clock::hosts::disagreeing_files(p, &utc, &first.rows_per_instance());
        if !more.is_empty() {
            apart.extend(more);
            utc = clock::from_utc_apart(p, mode, &apart);
            first = match_collectives(p, classes, &utc, &Default::default());
        }
    }
    // What the first matching found on one clock each.
    let (aligned, units) = match mode {
        AlignMode::Ends => {
            let mut aligned = clock::ends::refine_from_ends(p, &utc, &first.rows_per_instance());
            // A timebase the UTC stamps could not decide, the ends may:
            // then the clocks are aligned again on the reading they give.
            let by_ends = clock::timebase::ends::decided(p, &apart, &utc, &aligned);
            if by_ends.flips {
                utc = clock::from_utc_read(p, mode, &apart, &by_ends.read);
                first = match_collectives(p, classes, &utc, &Default::default());
                aligned = clock::ends::refine_from_ends(p, &utc, &first.rows_per_instance());
            } else {
                clock::timebase::ends::record(&mut aligned, &by_ends);
            }
            (aligned, first.evidence())
        }
        AlignMode::Utc | AlignMode::None => {
            let units = first.evidence();
            (
                clock::ends::with_residuals(p, utc, &first.rows_per_instance()),
                units,
            )
        }
    };
    if !aligned.several_domains() {
        return (aligned, first);
    }
    let matching = match_collectives(p, classes, &aligned, &units);
    (aligned, matching)
}
