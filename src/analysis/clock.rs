//! Clock alignment across files: a value mapping each file's timestamps to
//! the reference clock (the first file's), found by the ladder same-host →
//! UTC → collective ends. Profile timestamps stay raw; whatever compares
//! times across files asks the [`Alignment`].
//!
//! Refinement from collective ends is accepted for a domain only when its
//! ends agree: at least [`MIN_INSTANCES`] matched instances kept by the
//! robust fit, and the median absolute deviation of the per-instance end
//! offsets (median end of the domain's ranks − median end of the reference
//! domain's ranks, after the fit) at most [`MAX_END_MAD_NS`]. Otherwise the
//! domain keeps its UTC shift and `refused` says why.

pub mod ends;
mod fit;
pub mod hosts;
mod joint;
pub mod pace;
pub mod timebase;
pub mod vote;

/// The GPU rows of each collective instance a matching found (its
/// groups' instances in order), then of each kernel pair partners in part
/// met at: all the clock fits read of a matching, so that the clock never
/// depends on how collectives were matched.
#[derive(Debug, Clone, Default)]
pub struct MatchedRows(pub Vec<Vec<u32>>);

pub use fit::{LineFit, median, robust_line};
pub use timebase::{AmbiguousTimebase, Compared};

use super::stats::Spread;
use super::window::Window;
use crate::profile::{LaneId, Profile, Timebase};
use std::ops::Range;

/// What the user asked for (`--align`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AlignMode {
    /// Raw timestamps.
    None,
    /// Each domain shifted by its UTC stamp.
    Utc,
    /// UTC, then refined from the ends of cross-domain collectives.
    #[default]
    Ends,
}

impl AlignMode {
    pub const ALL: [AlignMode; 3] = [AlignMode::None, AlignMode::Utc, AlignMode::Ends];

    pub fn name(self) -> &'static str {
        match self {
            AlignMode::None => "none",
            AlignMode::Utc => "utc",
            AlignMode::Ends => "ends",
        }
    }
}

/// How a clock (a file's, or the whole alignment's) was aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ClockMethod {
    /// Raw timestamps (`--align none`).
    None,
    /// The reference file itself.
    Reference,
    /// On the same clock as the reference (one host, one boot).
    SameHost,
    Utc,
    CollectiveEnds,
}

impl ClockMethod {
    pub fn name(self) -> &'static str {
        match self {
            ClockMethod::None => "none",
            ClockMethod::Reference => "reference",
            ClockMethod::SameHost => "same-host",
            ClockMethod::Utc => "utc",
            ClockMethod::CollectiveEnds => "collective-ends",
        }
    }
}

/// Fewest agreeing instances for a refinement from ends.
pub const MIN_INSTANCES: usize = 5;
/// Largest median absolute deviation of per-instance end offsets (ns)
/// for a refinement from ends.
pub const MAX_END_MAD_NS: f64 = 200_000.0;
/// A per-instance end offset this close to the fit (ns) is never an outlier.
const KEEP_FLOOR_NS: f64 = 20_000.0;
/// Drift is fitted only over instances spanning at least this (ns): over
/// a shorter capture, a few ppm move ends less than their jitter; over
/// two steps 5 s apart they move them by tens of µs.
pub const DRIFT_MIN_SPAN_NS: f64 = 2e9;
/// ... and at least this many instances.
const DRIFT_MIN_INSTANCES: usize = 6;
/// Hosts whose clocks the ends fitted this well (p90 residual, ns) are
/// matched as on one clock: the ends of one call still meet within the
/// matching's own tolerance (at least 20 µs).
pub const ONE_CLOCK_NS: i64 = 50_000;

/// A fitted drift beyond this (ppm) is not a clock's: crystals drift by
/// tens of ppm; a file whose timestamps are scaled fits thousands.
pub const MAX_DRIFT_PPM: f64 = 500.0;

/// One file's mapping to the reference clock:
/// `t_ref = t + offset_ns + drift_ppm·10⁻⁶·(t − t0)`. Its fields are the
/// clock module's: everything else asks [`Alignment`] for aligned times
/// ([`FileMapping`] says how a file was aligned, for showing it).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FileClock {
    /// Files sharing a clock share a domain (index of its first file).
    domain: usize,
    /// What to add to the file's timestamps to get its domain's first
    /// file's (0 for that file): files of one host differ by their
    /// session starts, known exactly on one boot clock.
    #[serde(default)]
    host_shift_ns: i64,
    /// How the file shares its domain's clock, when it is not the
    /// domain's first file.
    #[serde(default)]
    host_link: Option<HostLink>,
    /// |median aligned end of the file's ranks − median aligned end of its
    /// host's other files' ranks| (ms) over the instances they share: how
    /// well the files of one host agree.
    #[serde(default)]
    host_agreement_ms: Option<Spread>,
    /// The aligned host (domain) sharing the most collectives with this
    /// file's, when its clock was fitted from ends: the host it was
    /// reached through.
    #[serde(default)]
    fitted_via: Option<usize>,
    /// Why this file was taken off its host's clock: its ranks' ends
    /// disagree with its host's other files.
    #[serde(default)]
    off_host_clock: Option<String>,
    /// The timebase as read: the file's own, or the reading chosen for one
    /// its data could not decide ([`timebase`]).
    timebase: Timebase,
    /// What was made of a timebase the file's data could not decide.
    #[serde(default)]
    ambiguous_timebase: Option<AmbiguousTimebase>,
    method: ClockMethod,
    offset_ns: f64,
    drift_ppm: f64,
    drift_fitted: bool,
    /// The file's earliest event.
    t0: i64,
    /// |median aligned end of this file's ranks − median aligned end of the
    /// instance| (ms) over the instances used.
    residual_ms: Option<Spread>,
    instances_used: usize,
    /// When its shared instances implied offsets ms apart: how many of
    /// its communicators agreed on the one fitted ([`vote`]).
    #[serde(default)]
    voted: Option<vote::Voted>,
    /// Why ends were not used for this file's domain.
    refused: Option<String>,
    /// How far (ms, p90) the domain's per-instance end offsets stray from
    /// the best fit, when that is why ends were refused.
    disagreement_ms: Option<f64>,
    /// Its clock data cannot be right (a UTC stamp before 2000 or days
    /// from the others', a drift no crystal has): `refused` says why, and
    /// the file is left out of every cross-file figure (its devices form
    /// their own groups).
    #[serde(default)]
    isolated: bool,
}

/// How a file shares the clock of an earlier file of its host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum HostLink {
    /// Both record the host's boot instant (`systemClockNs`) and it is
    /// the same: one boot clock, their session starts known exactly.
    BootClock,
    /// The host's system UTC clock stamped both session starts.
    UtcClock,
}

impl HostLink {
    pub fn name(self) -> &'static str {
        match self {
            HostLink::BootClock => "boot-clock",
            HostLink::UtcClock => "utc-clock",
        }
    }
}

/// How one file was aligned, as reports and views show it.
#[derive(Debug, Clone, PartialEq)]
pub struct FileMapping {
    /// The first file of its clock domain (itself when it is).
    pub domain: usize,
    /// How it shares that file's clock, when it is another file of its
    /// host.
    pub host_link: Option<HostLink>,
    /// How well its ranks' ends agree with the rest of its host's (ms).
    pub host_agreement_ms: Option<Spread>,
    /// The host (its first file) its clock was fitted against.
    pub fitted_via: Option<usize>,
    /// Why it was taken off its host's clock.
    pub off_host_clock: Option<String>,
    pub timebase: Timebase,
    /// How a timebase its data could not decide was read, and why.
    pub ambiguous_timebase: Option<AmbiguousTimebase>,
    pub method: ClockMethod,
    /// What is added to the file's timestamps at its first event (ms).
    pub offset_ms: f64,
    /// The fitted drift (ppm of the file's time since its first event).
    pub ppm: f64,
    pub drift_fitted: bool,
    pub residual_ms: Option<Spread>,
    pub instances_used: usize,
    /// How many of its communicators agreed on its offset, when its
    /// instances disagreed.
    pub voted: Option<vote::Voted>,
    pub refused: Option<String>,
    /// Left out of cross-file figures: its clock data cannot be right.
    pub isolated: bool,
}

/// Every file's mapping to the reference clock (file 0). The one place
/// that turns a file's timestamps into reference-clock times: whatever
/// compares times of two files gets them here.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Alignment {
    method: ClockMethod,
    files: Vec<FileClock>,
    /// Said once (e.g. `ends` asked for without cross-domain collectives).
    warnings: Vec<String>,
}

impl Default for Alignment {
    fn default() -> Self {
        Alignment {
            method: ClockMethod::None,
            files: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

/// The mapping primitives: a file's timestamp and a reference-clock time.
impl Alignment {
    /// `t` of file `file` on the reference clock.
    pub fn to_reference(&self, file: usize, t: i64) -> i64 {
        match self.files.get(file) {
            None => t,
            Some(c) if c.offset_ns == 0.0 && c.drift_ppm == 0.0 => t,
            Some(c) => {
                let drift = c.drift_ppm * 1e-6 * t.saturating_sub(c.t0) as f64;
                t.saturating_add((c.offset_ns + drift).round() as i64)
            }
        }
    }

    /// The reference-clock time `t` as file `file`'s timestamp.
    pub fn to_file(&self, file: usize, t: i64) -> i64 {
        match self.files.get(file) {
            None => t,
            Some(c) if c.offset_ns == 0.0 && c.drift_ppm == 0.0 => t,
            Some(c) => {
                // Fixed point of x = t − shift(x), in differences so that
                // epoch-sized timestamps keep their ns.
                let k = c.drift_ppm * 1e-6;
                let shift =
                    |x: i64| (c.offset_ns + k * x.saturating_sub(c.t0) as f64).round() as i64;
                let x = t.saturating_sub(c.offset_ns.round() as i64);
                let x = t.saturating_sub(shift(x));
                t.saturating_sub(shift(x))
            }
        }
    }

    /// A reference-clock window as file `file`'s timestamps.
    pub fn window_in_file(&self, file: usize, w: Window) -> Window {
        if w.is_all() {
            return w;
        }
        Window {
            start: self.to_file(file, w.start),
            end: self.to_file(file, w.end),
        }
    }
}

/// Events on the reference clock.
impl Alignment {
    /// The file of a GPU row.
    pub fn row_file(&self, p: &Profile, row: usize) -> usize {
        p.gpu.file(row)
    }

    pub fn gpu_start(&self, p: &Profile, row: usize) -> i64 {
        self.to_reference(self.row_file(p, row), p.gpu.start(row))
    }

    pub fn gpu_end(&self, p: &Profile, row: usize) -> i64 {
        self.to_reference(self.row_file(p, row), p.gpu.end(row))
    }

    /// Start and end of a GPU row.
    pub fn gpu_span(&self, p: &Profile, row: usize) -> (i64, i64) {
        let f = self.row_file(p, row);
        (
            self.to_reference(f, p.gpu.start(row)),
            self.to_reference(f, p.gpu.end(row)),
        )
    }

    /// Start and end of a runtime or driver call.
    pub fn runtime_span(&self, p: &Profile, row: usize) -> (i64, i64) {
        let f = p.thread_file(p.runtime.thread(row));
        (
            self.to_reference(f, p.runtime.start(row)),
            self.to_reference(f, p.runtime.end(row)),
        )
    }

    /// Start of an OS runtime call.
    pub fn osrt_start(&self, p: &Profile, row: usize) -> i64 {
        self.to_reference(p.thread_file(p.osrt.thread(row)), p.osrt.start(row))
    }

    /// Start and end of an OS runtime call.
    pub fn osrt_span(&self, p: &Profile, row: usize) -> (i64, i64) {
        let f = p.thread_file(p.osrt.thread(row));
        (
            self.to_reference(f, p.osrt.start(row)),
            self.to_reference(f, p.osrt.end(row)),
        )
    }

    /// Time of a CPU sample.
    pub fn sample_time(&self, p: &Profile, row: usize) -> i64 {
        self.to_reference(p.thread_file(p.samples.thread(row)), p.samples.start(row))
    }

    /// When a thread was scheduled in or out of a CPU.
    pub fn sched_time(&self, p: &Profile, row: usize) -> i64 {
        self.to_reference(p.thread_file(p.sched.thread(row)), p.sched.start(row))
    }

    /// Start and end of a CUDA synchronization record (on its process's
    /// file's clock, mapped).
    pub fn sync_span(&self, p: &Profile, row: usize) -> (i64, i64) {
        let f = p.process_file(p.syncs.process(row));
        (
            self.to_reference(f, p.syncs.start(row)),
            self.to_reference(f, p.syncs.end(row)),
        )
    }

    /// When a CUDA event record's event completed on the device, when its
    /// export collected that (`None` for a timestamp of 0).
    pub fn cuda_event_time(&self, p: &Profile, row: usize) -> Option<i64> {
        match p.cuda_events.timestamp(row) {
            0 => None,
            t => Some(self.to_reference(p.process_file(p.cuda_events.process(row)), t)),
        }
    }

    /// When file `file`'s capture ended (its `capture_end_ns`).
    pub fn capture_end(&self, p: &Profile, file: usize) -> Option<i64> {
        p.files[file]
            .capture_end_ns
            .map(|t| self.to_reference(file, t))
    }

    /// File `file`'s capture window (its `capture_start_ns` to its
    /// `capture_end_ns`), when recorded.
    pub fn capture_window(&self, p: &Profile, file: usize) -> Option<(i64, i64)> {
        let f = p.files.get(file)?;
        Some((
            self.to_reference(file, f.capture_start_ns?),
            self.to_reference(file, f.capture_end_ns?),
        ))
    }

    /// Start and end of an NVTX range (or a mark).
    pub fn nvtx_span(&self, p: &Profile, row: usize) -> (i64, i64) {
        let f = p.thread_file(p.nvtx.thread(row));
        (
            self.to_reference(f, p.nvtx.start(row)),
            self.to_reference(f, p.nvtx.end(row)),
        )
    }

    /// The rows of thread `t`'s CUDA calls that reach into `w` (on the
    /// reference clock), found by search: a call holds a driver call or
    /// two, no more, so the look back is short.
    pub fn thread_calls(&self, p: &Profile, t: usize, w: Window) -> std::ops::Range<usize> {
        let rows = p.runtime_by_thread[t].clone();
        let wf = self.window_in_file(p.thread_file(t as _), w);
        let starts = p.runtime.starts(rows.clone());
        crate::analysis::window::rows_reaching(rows, starts, |k| p.runtime.end(k), wf)
    }

    /// First start and last end of a lane's rows, on file `onto`'s clock.
    pub fn lane_span_on(&self, p: &Profile, lane: LaneId, onto: usize) -> Option<(i64, i64)> {
        let rows = p.lanes[lane as usize].rows.clone();
        let first = rows.clone().next().map(|r| p.gpu.start(r))?;
        let last = p.gpu.ends(rows).iter().copied().max()?;
        let file = p.lane_file(lane);
        let on = |t: i64| self.to_file(onto, self.to_reference(file, t));
        Some((on(first), on(last)))
    }

    /// The rows of `lane` that may reach into `w` (a reference-clock
    /// window), each with its start and end on the clock of file `onto`
    /// (the lane's own file: its timestamps as they are). Found by binary
    /// search in the lane's file, so a narrow window costs little however
    /// long the lane. A device's figures are measured on its own file's
    /// clock; only the window is the reference clock's
    /// ([`Alignment::window_in_file`] gives it on `onto`'s).
    pub fn lane_rows<'a>(
        &'a self,
        p: &'a Profile,
        lane: LaneId,
        w: Window,
        onto: usize,
    ) -> impl Iterator<Item = (usize, i64, i64)> + 'a {
        let file = p.lane_file(lane);
        let lane_rows = p.lanes[lane as usize].rows.clone();
        let rows = rows_in_window(p, lane_rows, self.window_in_file(file, w));
        // The lane's rows lie in one file: its columns, read directly.
        let (starts, ends) = (p.gpu.starts(rows.clone()), p.gpu.ends(rows.clone()));
        let first = rows.start;
        let same = self.same_mapping(file, onto);
        let map = move |t: i64| {
            if same {
                t
            } else {
                self.to_file(onto, self.to_reference(file, t))
            }
        };
        starts
            .iter()
            .zip(ends)
            .enumerate()
            .map(move |(k, (&s, &e))| (first + k, map(s), map(e)))
    }

    /// Whether two files' timestamps map alike (one clock, or the same
    /// shift).
    fn same_mapping(&self, a: usize, b: usize) -> bool {
        if a == b {
            return true;
        }
        let shift = |f: usize| {
            self.files
                .get(f)
                .map_or((0.0, 0.0, 0), |c| (c.offset_ns, c.drift_ppm, c.t0))
        };
        let ((oa, da, ta), (ob, db, tb)) = (shift(a), shift(b));
        oa == ob && da == db && (da == 0.0 || ta == tb)
    }

    /// First start and last end of every event, on the reference clock
    /// (a file's own span maps as a whole: the mapping keeps order).
    pub fn span(&self, p: &Profile) -> Option<(i64, i64)> {
        p.file_models()
            .enumerate()
            .filter_map(|(f, m)| {
                m.span()
                    .map(|(a, b)| (self.to_reference(f, a), self.to_reference(f, b)))
            })
            .reduce(|(a, b), (x, y)| (a.min(x), b.max(y)))
    }

    /// First start and last end, on the reference clock, of the events
    /// wholly inside `w` (the whole capture for [`Window::ALL`], counted
    /// events included).
    pub fn span_within(&self, p: &Profile, w: Window) -> Option<(i64, i64)> {
        if w.is_all() {
            return self.span(p);
        }
        let mut span: Option<(i64, i64)> = None;
        for (f, m) in p.file_models().enumerate() {
            let wf = self.window_in_file(f, w);
            let cols: [(&[i64], &[i64]); 3] = [
                (&m.gpu.start, &m.gpu.end),
                (&m.runtime.start, &m.runtime.end),
                (&m.nvtx.start, &m.nvtx.end),
            ];
            for (starts, ends) in cols {
                for (&s, &e) in starts.iter().zip(ends) {
                    if wf.contains(s, e) {
                        let (s, e) = (self.to_reference(f, s), self.to_reference(f, e));
                        span = Some(span.map_or((s, e), |(a, b)| (a.min(s), b.max(e))));
                    }
                }
            }
        }
        span
    }
}

/// The rows of a lane (sorted by start) that may reach into `w` (on the
/// lane's file clock). Work on one stream runs in order, so only a few rows
/// starting before the window can still be running in it.
fn rows_in_window(p: &Profile, rows: Range<usize>, w: Window) -> Range<usize> {
    let starts = p.gpu.starts(rows.clone());
    super::window::rows_reaching(rows, starts, |k| p.gpu.end(k), w)
}

/// Clock domains and how far they can be trusted.
impl Alignment {
    /// How the clocks were aligned as a whole.
    pub fn method(&self) -> ClockMethod {
        self.method
    }

    /// Said once about the alignment (e.g. `ends` asked for without
    /// cross-domain collectives), in the order it was found.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// [`Self::warnings`], then one line per reason files were left out
    /// of cross-file figures, naming them (of `p`, the profile aligned).
    pub fn said(&self, p: &Profile) -> Vec<String> {
        let mut reasons: Vec<(&str, Vec<String>)> = Vec::new();
        for (i, c) in self.files.iter().enumerate().filter(|(_, c)| c.isolated) {
            let why = c.refused.as_deref().unwrap_or_default();
            let name = p.files.get(i).map_or_else(String::new, |f| f.name());
            match reasons.iter_mut().find(|r| r.0 == why) {
                Some(r) => r.1.push(name),
                None => reasons.push((why, vec![name])),
            }
        }
        let left_out = reasons.into_iter().map(|(why, names)| {
            format!(
                "clock refused for {}: {why} — left out of cross-file figures (its devices form their own groups)",
                names.join(", ")
            )
        });
        self.warnings.iter().cloned().chain(left_out).collect()
    }

    /// Files aligned (one per loaded file).
    pub fn file_count(&self) -> usize {
        self.files.len()
    }

    /// How each file was aligned, in file order.
    pub fn mappings(&self) -> impl Iterator<Item = FileMapping> + '_ {
        self.files.iter().map(|c| FileMapping {
            domain: c.domain,
            host_link: c.host_link,
            host_agreement_ms: c.host_agreement_ms,
            fitted_via: c.fitted_via,
            off_host_clock: c.off_host_clock.clone(),
            timebase: c.timebase,
            ambiguous_timebase: c.ambiguous_timebase,
            method: c.method,
            offset_ms: c.offset_ns / 1e6,
            ppm: c.drift_ppm,
            drift_fitted: c.drift_fitted,
            residual_ms: c.residual_ms,
            instances_used: c.instances_used,
            voted: c.voted,
            refused: c.refused.clone(),
            isolated: c.isolated,
        })
    }

    /// `t` of file `file` on its domain's clock (its domain's first
    /// file's timestamps), before any shift between domains.
    pub(super) fn on_domain_clock(&self, file: usize, t: i64) -> i64 {
        self.files
            .get(file)
            .map_or(t, |c| t.saturating_add(c.host_shift_ns))
    }

    /// Whether file `file` is left out of cross-file figures (its clock
    /// data cannot be right).
    pub fn isolated(&self, file: usize) -> bool {
        self.files.get(file).is_some_and(|c| c.isolated)
    }

    /// Leaves the files of domain `dom` out of cross-file figures, for
    /// `why` ([`Self::said`] says so).
    pub(super) fn isolate(&mut self, dom: usize, why: &str) {
        for c in self.files.iter_mut().filter(|c| c.domain == dom) {
            c.isolated = true;
            c.refused = Some(why.to_string());
        }
    }

    /// Adds `line` to what is said once about the alignment.
    pub(super) fn warn(&mut self, line: String) {
        self.warnings.push(line);
    }

    /// What to add to file `file`'s timestamps to get UTC ns since the
    /// epoch, on its timebase as read here (an ambiguous one as chosen).
    pub fn utc_shift_ns(&self, p: &Profile, file: usize) -> Option<i64> {
        let f = p.files.get(file)?;
        f.utc_shift_ns_as(self.files.get(file).map_or(f.timebase, |c| c.timebase))
    }

    /// How file `file` was aligned.
    pub fn file_method(&self, file: usize) -> ClockMethod {
        self.files.get(file).map_or(ClockMethod::None, |c| c.method)
    }

    /// The residual of file `file`'s alignment (ms), when measured.
    pub fn residual_ms(&self, file: usize) -> Option<Spread> {
        self.files.get(file).and_then(|c| c.residual_ms)
    }

    /// The clock domain of a file.
    pub fn domain(&self, file: usize) -> usize {
        self.files.get(file).map_or(0, |c| c.domain)
    }

    /// The clock on which this file's ends may be compared as on one
    /// clock: the reference's when its domain was fitted from ends to
    /// within [`ONE_CLOCK_NS`] (p90 residual), else its own domain's.
    /// Matching on a refined alignment reads communicators from ends
    /// across such hosts as within one.
    pub fn ends_domain(&self, file: usize) -> usize {
        let Some(c) = self.files.get(file) else {
            return 0;
        };
        let fitted = c.method == ClockMethod::CollectiveEnds
            && c.residual_ms
                .is_some_and(|s| s.p90 * 1e6 <= ONE_CLOCK_NS as f64);
        if fitted && !c.isolated { 0 } else { c.domain }
    }

    /// Whether these GPU rows come from more than one clock domain.
    pub fn spans_domains(&self, p: &Profile, rows: &[u32]) -> bool {
        let mut d = rows
            .iter()
            .map(|&r| self.domain(self.row_file(p, r as usize)));
        let first = d.next();
        d.any(|x| Some(x) != first)
    }

    /// The clock error (ns) under which a skew between these rows is not
    /// resolvable: 0 on one clock, else the largest residual p90 of their
    /// files.
    pub fn uncertainty_ns(&self, p: &Profile, rows: &[u32]) -> i64 {
        if !self.spans_domains(p, rows) {
            return 0;
        }
        rows.iter()
            .filter_map(|&r| self.residual_ms(self.row_file(p, r as usize)))
            .map(|s| (s.p90 * 1e6).round() as i64)
            .max()
            .unwrap_or(0)
    }

    /// The clock error (ns) between two files: 0 on one clock, else the
    /// larger residual p90 of the two (a time difference between them
    /// smaller than this is not resolvable).
    pub fn uncertainty_between_ns(&self, a: usize, b: usize) -> i64 {
        if self.domain(a) == self.domain(b) {
            return 0;
        }
        [a, b]
            .iter()
            .filter_map(|&f| self.residual_ms(f))
            .map(|s| (s.p90 * 1e6).round() as i64)
            .max()
            .unwrap_or(0)
    }

    /// The clock error (ns) between the files of two GPU rows: a time
    /// difference between them smaller than this is not resolvable.
    pub fn rows_error_ns(&self, p: &Profile, a: usize, b: usize) -> i64 {
        self.uncertainty_between_ns(self.row_file(p, a), self.row_file(p, b))
    }

    /// Whether ends may confirm or split pairings between these files:
    /// they share a clock, or both were refined from ends.
    pub fn ends_trusted(&self, a: usize, b: usize) -> bool {
        let refined = |f: usize| {
            self.files.get(f).is_none_or(|c| {
                matches!(
                    c.method,
                    ClockMethod::Reference | ClockMethod::SameHost | ClockMethod::CollectiveEnds
                )
            })
        };
        self.domain(a) == self.domain(b) || (refined(a) && refined(b))
    }

    /// Whether there is more than one clock domain.
    pub fn several_domains(&self) -> bool {
        self.files.iter().any(|c| c.domain != 0)
    }

    /// The worst host's residual p90 (ms), for a title, with a file of
    /// that host: the figure a group's notes and panels give for its own
    /// hosts, and `report clock` per host.
    pub fn worst_residual_p90(&self) -> Option<(usize, f64)> {
        self.files
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.isolated)
            .filter_map(|(f, c)| c.residual_ms.map(|s| (f, s.p90)))
            .reduce(|a, b| if b.1 > a.1 { b } else { a })
    }

    /// [`Alignment::describe`] naming the worst host (its label in `p`).
    pub fn describe_on(&self, p: &Profile) -> String {
        let host = self
            .worst_residual_p90()
            .and_then(|(f, _)| p.files.get(f))
            .map(|f| f.host.clone().unwrap_or_else(|| f.name()));
        self.with_left_out(self.describe_method_named(host.as_deref()))
    }

    /// How the clocks were aligned, in a few words (the report's clock
    /// section and the timeline title say it).
    pub fn describe(&self) -> String {
        self.with_left_out(self.describe_method())
    }

    fn with_left_out(&self, method: String) -> String {
        match self.left_out() {
            0 => method,
            n => format!("{method}; {n} file(s) left out: clock data cannot be right"),
        }
    }

    /// Files left out of every cross-file figure: their clock data cannot
    /// be right.
    pub fn left_out(&self) -> usize {
        self.files.iter().filter(|c| c.isolated).count()
    }

    /// How the clocks were aligned, without the files left out.
    pub fn describe_method(&self) -> String {
        self.describe_method_named(None)
    }

    /// [`Alignment::describe_method`] naming the worst host, when given.
    pub fn describe_method_on(&self, p: &Profile) -> String {
        let host = self
            .worst_residual_p90()
            .and_then(|(f, _)| p.files.get(f))
            .map(|f| f.host.clone().unwrap_or_else(|| f.name()));
        self.describe_method_named(host.as_deref())
    }

    fn describe_method_named(&self, worst: Option<&str>) -> String {
        match self.method {
            ClockMethod::None => "none (raw timestamps)".into(),
            ClockMethod::Reference | ClockMethod::SameHost => "one clock (same host)".into(),
            ClockMethod::CollectiveEnds => match self.worst_residual_p90() {
                Some((_, r)) => format!(
                    "collective ends, residual p90 {} ({})",
                    short_ms(r),
                    worst.map_or_else(|| "worst host".to_string(), |h| format!("worst: {h}"))
                ),
                None => "collective ends".into(),
            },
            ClockMethod::Utc => {
                // A figure and the reason, never a bare "UTC only".
                let mut why = Vec::new();
                let on_utc = || {
                    self.files
                        .iter()
                        .filter(|c| c.method == ClockMethod::Utc && !c.isolated)
                };
                if on_utc().next().is_none() {
                    return "the reference's clock only".into();
                }
                if let Some(r) = on_utc().filter_map(|c| c.disagreement_ms).reduce(f64::max) {
                    why.push(format!("ends disagree by {}", short_ms(r)));
                } else if let Some(r) = on_utc().find_map(|c| c.refused.as_deref()) {
                    why.push(r.split(';').next().unwrap_or(r).to_string());
                } else {
                    why.push("ends not asked for: --align utc".into());
                }
                if let Some(r) = on_utc()
                    .filter_map(|c| c.residual_ms.map(|s| s.p90))
                    .reduce(f64::max)
                {
                    why.push(format!("residual p90 {}", short_ms(r)));
                }
                match why.is_empty() {
                    true => "UTC only".into(),
                    false => format!("UTC only ({})", why.join("; ")),
                }
            }
        }
    }
}

/// A duration given in ms, in µs below 1 ms.
pub fn short_ms(ms: f64) -> String {
    if ms < 0.0005 {
        // "0 µs" would claim a perfect fit.
        "< 1 µs".to_string()
    } else if ms < 1.0 {
        format!("{:.0} µs", ms * 1e3)
    } else {
        format!("{ms:.1} ms")
    }
}

/// The alignment from the files' own facts: raw for `none`, else each
/// domain shifted by its UTC stamp (step 2 of the ladder).
pub fn from_utc(p: &Profile, mode: AlignMode) -> Alignment {
    from_utc_apart(p, mode, &Default::default())
}

/// A file taken off its host's clock, and why: its ends disagree with
/// its host's other files ([`hosts`]: it is fitted on its own), or its
/// clock runs at another pace than the job's ([`pace`]: it is left out).
#[derive(Debug, Clone, PartialEq)]
pub struct Apart {
    pub why: String,
    pub isolate: bool,
}

/// [`from_utc`], with the files of `apart` taken off their host's clock:
/// each is a domain of its own.
pub fn from_utc_apart(
    p: &Profile,
    mode: AlignMode,
    apart: &std::collections::BTreeMap<usize, Apart>,
) -> Alignment {
    from_utc_read(p, mode, apart, &Default::default())
}

/// [`from_utc_apart`], with the ambiguous timebases of `read` read as it
/// says (decided by the collective ends, [`timebase::ends`]).
pub fn from_utc_read(
    p: &Profile,
    mode: AlignMode,
    apart: &std::collections::BTreeMap<usize, Apart>,
    read: &std::collections::BTreeMap<usize, AmbiguousTimebase>,
) -> Alignment {
    let t0s = file_starts(p);
    let bad = bad_utc_stamps(p);
    // Files whose clock data cannot be right say nothing of another's
    // timebase.
    let untrusted = apart
        .iter()
        .filter(|(_, x)| x.isolate)
        .map(|(&i, _)| i)
        .chain(bad.keys().copied())
        .collect();
    let readings = timebase::read(p, &untrusted, read);
    let read = |i: usize| (&p.files[i], readings[i].0);
    let mut files: Vec<FileClock> = Vec::with_capacity(p.files.len());
    for i in 0..p.files.len() {
        // The first earlier domain of the file's host it shares a clock with.
        let link = (0..i)
            .filter(|&j| files[j].domain == j && !apart.contains_key(&j))
            .filter(|_| !apart.contains_key(&i))
            .find_map(|j| host_clock(read(j), read(i)).map(|l| (j, l)));
        let (domain, host_shift_ns, host_link) = match link {
            Some((j, (shift, how))) => (j, shift, Some(how)),
            None => (i, 0, None),
        };
        files.push(FileClock {
            domain,
            host_shift_ns,
            host_link,
            host_agreement_ms: None,
            off_host_clock: apart.get(&i).map(|x| x.why.clone()),
            fitted_via: None,
            timebase: readings[i].0,
            ambiguous_timebase: readings[i].1,
            method: ClockMethod::None,
            offset_ns: 0.0,
            drift_ppm: 0.0,
            drift_fitted: false,
            t0: t0s[i],
            residual_ms: None,
            instances_used: 0,
            voted: None,
            refused: None,
            disagreement_ms: None,
            isolated: false,
        });
    }
    let mut a = Alignment {
        method: ClockMethod::None,
        files,
        warnings: Vec::new(),
    };
    if mode == AlignMode::None {
        return a;
    }
    for (&i, x) in apart.iter().filter(|(_, x)| x.isolate) {
        a.isolate(i, &x.why);
    }
    for (&i, why) in &bad {
        // a domain's shift is its first file's: judged by it
        if a.files[i].domain == i && a.several_domains() {
            a.isolate(i, why);
        }
    }
    // Shifts are taken against the reference's UTC stamp, or when that
    // cannot be right, the first one that can (the reference is then
    // left out).
    let anchor = (0..p.files.len())
        .find(|&i| !a.files[i].isolated)
        .and_then(|i| {
            let d = a.files[i].domain;
            p.files[d].utc_shift_ns_as(readings[d].0)
        });
    let mut missing_utc = Vec::new();
    for i in 0..a.files.len() {
        let domain = a.files[i].domain;
        let c = &mut a.files[i];
        // Files of one domain share the shift of its first file, each
        // from its own session start.
        let host = c.host_shift_ns as f64;
        if i == 0 {
            c.method = ClockMethod::Reference;
        } else if domain == 0 {
            c.method = ClockMethod::SameHost;
            c.offset_ns = host;
        } else {
            c.method = ClockMethod::Utc;
            match (anchor, p.files[domain].utc_shift_ns_as(readings[domain].0)) {
                _ if c.isolated => {}
                (Some(r), Some(u)) => c.offset_ns = u.saturating_sub(r) as f64 + host,
                _ => missing_utc.push(i),
            }
        }
    }
    if !missing_utc.is_empty() {
        a.warn(format!(
            "{} file(s) record no UTC start time: their clocks are not shifted",
            missing_utc.len()
        ));
    }
    a.method = if a.several_domains() {
        ClockMethod::Utc
    } else {
        ClockMethod::SameHost
    };
    a
}

/// The earliest UTC stamp taken as real (2000-01-01), and how far a
/// domain's stamp may lie from the others' median.
const UTC_MIN_NS: i64 = 946_684_800_000_000_000;
const UTC_APART_NS: i64 = 86_400_000_000_000;

/// Domains whose UTC stamp (their first file's) cannot be right, with the
/// reason: before 2000, or a day or more from the median of the others'.
fn bad_utc_stamps(p: &Profile) -> std::collections::BTreeMap<usize, String> {
    let mut out = std::collections::BTreeMap::new();
    let stamps: Vec<(usize, i64)> = p
        .files
        .iter()
        .enumerate()
        .filter_map(|(i, f)| f.utc_start_ns.map(|u| (i, u)))
        .collect();
    let plausible: Vec<f64> = stamps
        .iter()
        .filter(|s| s.1 >= UTC_MIN_NS)
        .map(|s| s.1 as f64)
        .collect();
    let far = |u: i64, c: f64| (u as f64 - c).abs() >= UTC_APART_NS as f64;
    let mut consensus = (!plausible.is_empty()).then(|| median(plausible.clone()));
    // No majority (e.g. two files days apart): the reference's side stays.
    if let Some(c) = consensus
        && plausible.iter().all(|&u| far(u as i64, c))
    {
        consensus = stamps
            .iter()
            .find(|s| s.1 >= UTC_MIN_NS)
            .map(|s| s.1 as f64);
    }
    for (i, u) in stamps {
        let why = if u < UTC_MIN_NS {
            Some(format!("its UTC start stamp ({u} ns) is before 2000"))
        } else {
            consensus
                .filter(|&c| far(u, c))
                .map(|c| u as f64 - c)
                .map(|d| {
                    format!(
                        "its UTC start stamp is {:.1} days from the other files'",
                        d.abs() / UTC_APART_NS as f64
                    )
                })
        };
        if let Some(why) = why {
            out.insert(i, why);
        }
    }
    out
}

/// Whether file `f` shares the clock of `first` (an earlier file, the
/// first of its domain): both name one host and one boot of it. Then what
/// to add to `f`'s timestamps to get `first`'s, and how it is known.
/// Each file comes with its timebase as read.
fn host_clock(
    (first, first_tb): (&crate::profile::FileInfo, Timebase),
    (f, f_tb): (&crate::profile::FileInfo, Timebase),
) -> Option<(i64, HostLink)> {
    // host_index tells boots of one name apart where they are recorded
    if first.host.is_none() || first.host != f.host || first.host_index != f.host_index {
        return None;
    }
    let boots = first.boot_ns.zip(f.boot_ns);
    if let Some((x, y)) = boots
        && crate::profile::identity::same_boot(Some(x), Some(y))
        && let (Some(a), Some(b)) = (
            first.to_boot_clock_ns_as(first_tb),
            f.to_boot_clock_ns_as(f_tb),
        )
    {
        return Some((b.saturating_sub(a), HostLink::BootClock));
    }
    if boots.is_some() {
        // two boots of one host: two clocks
        return None;
    }
    let (a, b) = (first.utc_shift_ns_as(first_tb)?, f.utc_shift_ns_as(f_tb)?);
    Some((b.saturating_sub(a), HostLink::UtcClock))
}

/// The earliest GPU event of each file (0 without one).
fn file_starts(p: &Profile) -> Vec<i64> {
    let mut t0 = vec![i64::MAX; p.files.len()];
    for lane in &p.lanes {
        let f = p.processes[lane.process as usize].file as usize;
        if let Some(&s) = p.gpu.starts(lane.rows.clone()).iter().min() {
            t0[f] = t0[f].min(s);
        }
    }
    t0.into_iter()
        .map(|t| if t == i64::MAX { 0 } else { t })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_residual_under_a_microsecond_is_not_called_zero() {
        assert_eq!(short_ms(0.0004), "< 1 µs");
        assert_eq!(short_ms(0.006), "6 µs");
        assert_eq!(short_ms(9.9), "9.9 ms");
    }

    fn clock(offset_ns: f64, drift_ppm: f64, t0: i64) -> Alignment {
        Alignment {
            method: ClockMethod::CollectiveEnds,
            files: vec![FileClock {
                domain: 1,
                host_shift_ns: 0,
                host_link: None,
                host_agreement_ms: None,
                fitted_via: None,
                off_host_clock: None,
                timebase: Timebase::UtcEpoch,
                ambiguous_timebase: None,
                method: ClockMethod::CollectiveEnds,
                offset_ns,
                drift_ppm,
                drift_fitted: drift_ppm != 0.0,
                t0,
                residual_ms: None,
                instances_used: 0,
                voted: None,
                refused: None,
                disagreement_ms: None,
                isolated: false,
            }],
            warnings: Vec::new(),
        }
    }

    #[test]
    fn to_file_inverts_at_to_the_nanosecond_even_on_epoch_timestamps() {
        let t0 = 1_780_000_000_123_456_789;
        let a = clock(-10_817_123_456.0, 7.5, t0);
        for dt in [0i64, 1, 999_999_937, 3_600_000_000_000] {
            let t = t0 + dt;
            let r = a.to_reference(0, t);
            assert_eq!(a.to_file(0, r), t, "dt {dt}");
        }
        // 7.5 ppm over an hour: 27 ms.
        let hour = a.to_reference(0, t0 + 3_600_000_000_000) - (t0 + 3_600_000_000_000);
        assert_eq!(hour - a.to_reference(0, t0) + t0, 27_000_000);
    }

    /// A file of one thread of pid `pid` with one scheduling event at `t`,
    /// one sync record over `t..t + 5` and one event record completed at
    /// `t + 7`.
    fn cpu_file(pid: u32, t: i64) -> crate::profile::FileProfile {
        use crate::profile::*;
        let mut p = FileProfile::default();
        p.hosts.push(format!("host{pid}"));
        p.files.push(FileInfo {
            path: format!("{pid}.sqlite").into(),
            nsys_version: None,
            schema_version: None,
            export: Default::default(),
            host: None,
            tables: Vec::new(),
            utc_start_ns: None,
            system_clock_ns: None,
            timebase: Timebase::SessionRelative,
            boot_ns: None,
            timebase_alternative: None,
            capture_start_ns: None,
            capture_end_ns: None,
            rank: None,
            world_size: None,
            host_index: 0,
            suspect_rows: Default::default(),
            wal: None,
        });
        p.processes.push(Process {
            file: 0,
            pid,
            name: 0,
        });
        p.threads.push(Thread {
            process: 0,
            tid: pid + 1,
            name: 0,
        });
        let s = &mut p.sched;
        (s.start, s.thread, s.cpu, s.sched_in) = (
            vec![t].into(),
            vec![0].into(),
            vec![1].into(),
            vec![true].into(),
        );
        p.sched_by_thread = std::iter::once(0..1).collect();
        let y = &mut p.syncs;
        (y.start, y.end, y.process, y.device) = (
            vec![t].into(),
            vec![t + 5].into(),
            vec![0].into(),
            vec![NONE].into(),
        );
        (y.stream, y.lane, y.sync_type, y.event) = (
            vec![7].into(),
            vec![NONE].into(),
            vec![3].into(),
            vec![NO_EVENT].into(),
        );
        (y.correlation, y.call) = (vec![0].into(), vec![NONE].into());
        p.syncs_by_process = std::iter::once(0..1).collect();
        let e = &mut p.cuda_events;
        (e.process, e.device, e.stream, e.lane) = (
            vec![0].into(),
            vec![NONE].into(),
            vec![7].into(),
            vec![NONE].into(),
        );
        (e.event, e.correlation, e.call, e.timestamp) = (
            vec![2].into(),
            vec![0].into(),
            vec![NONE].into(),
            vec![t + 7].into(),
        );
        p.cuda_events_by_process = std::iter::once(0..1).collect();
        p
    }

    #[test]
    fn scheduling_sync_and_event_times_are_mapped_by_their_own_file() {
        let p = Profile::of_files(vec![cpu_file(10, 100), cpu_file(20, 100)]);
        let mut a = clock(0.0, 0.0, 0);
        let mut second = a.files[0].clone();
        second.offset_ns = 1000.0;
        a.files.push(second);
        assert_eq!((a.sched_time(&p, 0), a.sched_time(&p, 1)), (100, 1100));
        assert_eq!(
            (a.sync_span(&p, 0), a.sync_span(&p, 1)),
            ((100, 105), (1100, 1105))
        );
        assert_eq!(
            (a.cuda_event_time(&p, 0), a.cuda_event_time(&p, 1)),
            (Some(107), Some(1107))
        );
        assert_eq!(p.processes[p.syncs.process(1) as usize].pid, 20);
        assert_eq!(p.processes[p.cuda_events.process(1) as usize].pid, 20);
    }
}
