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

mod fit;

pub use fit::{LineFit, median, robust_line};

use super::matching::Matching;
use super::stats::Spread;
use crate::profile::{Profile, Timebase};

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
/// a shorter capture, a few ppm move ends less than their jitter.
pub const DRIFT_MIN_SPAN_NS: f64 = 10e9;
/// ... and at least this many instances.
const DRIFT_MIN_INSTANCES: usize = 10;
/// Boot instants of one host's files within this (ns) mean one clock.
const SAME_BOOT_NS: i64 = 1_000_000;

/// One file's mapping to the reference clock:
/// `t_ref = t + offset_ns + drift_ppm·10⁻⁶·(t − t0)`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FileClock {
    /// Files sharing a clock share a domain (index of its first file).
    pub domain: usize,
    pub timebase: Timebase,
    pub method: ClockMethod,
    pub offset_ns: f64,
    pub drift_ppm: f64,
    pub drift_fitted: bool,
    /// The file's earliest event.
    pub t0: i64,
    /// |median aligned end of this file's ranks − median aligned end of the
    /// instance| (ms) over the instances used.
    pub residual_ms: Option<Spread>,
    pub instances_used: usize,
    /// Why ends were not used for this file's domain.
    pub refused: Option<String>,
    /// How far (ms, p90) the domain's per-instance end offsets stray from
    /// the best fit, when that is why ends were refused.
    pub disagreement_ms: Option<f64>,
}

/// Every file's mapping to the reference clock (file 0).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Alignment {
    pub method: ClockMethod,
    pub files: Vec<FileClock>,
    /// Said once (e.g. `ends` asked for without cross-domain collectives).
    pub warning: Option<String>,
    /// The file of each lane.
    lane_file: Vec<u32>,
}

impl Default for Alignment {
    fn default() -> Self {
        Alignment {
            method: ClockMethod::None,
            files: Vec::new(),
            warning: None,
            lane_file: Vec::new(),
        }
    }
}

impl Alignment {
    /// `t` of file `file` on the reference clock.
    pub fn at(&self, file: usize, t: i64) -> i64 {
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

    /// The file a lane's events come from.
    pub fn lane_file(&self, lane: u32) -> usize {
        self.lane_file.get(lane as usize).map_or(0, |&f| f as usize)
    }

    /// The file of a GPU row.
    pub fn row_file(&self, p: &Profile, row: usize) -> usize {
        self.lane_file(p.gpu.lane[row])
    }

    pub fn gpu_start(&self, p: &Profile, row: usize) -> i64 {
        self.at(self.row_file(p, row), p.gpu.start[row])
    }

    pub fn gpu_end(&self, p: &Profile, row: usize) -> i64 {
        self.at(self.row_file(p, row), p.gpu.end[row])
    }

    /// The clock domain of a file.
    pub fn domain(&self, file: usize) -> usize {
        self.files.get(file).map_or(0, |c| c.domain)
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
            .filter_map(|&r| self.files[self.row_file(p, r as usize)].residual_ms)
            .map(|s| (s.p90 * 1e6).round() as i64)
            .max()
            .unwrap_or(0)
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

    /// The largest residual p50 (ms) over the files, for a title.
    pub fn residual_p50_ms(&self) -> Option<f64> {
        self.files
            .iter()
            .filter_map(|c| c.residual_ms.map(|s| s.p50))
            .reduce(f64::max)
    }

    /// How the clocks were aligned, in a few words (the report's clock
    /// section and the timeline title say it).
    pub fn describe(&self) -> String {
        match self.method {
            ClockMethod::None => "none (raw timestamps)".into(),
            ClockMethod::Reference | ClockMethod::SameHost => "one clock (same host)".into(),
            ClockMethod::CollectiveEnds => match self.residual_p50_ms() {
                Some(r) => format!("collective ends, residual p50 {}", short_ms(r)),
                None => "collective ends".into(),
            },
            ClockMethod::Utc => match self
                .files
                .iter()
                .filter_map(|c| c.disagreement_ms)
                .reduce(f64::max)
            {
                Some(r) => format!("UTC only (ends disagree by {})", short_ms(r)),
                None => "UTC only".into(),
            },
        }
    }
}

/// A duration given in ms, in µs below 1 ms.
fn short_ms(ms: f64) -> String {
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
    let lane_file = p
        .lanes
        .iter()
        .map(|l| p.processes[l.process as usize].file)
        .collect();
    let t0s = file_starts(p);
    let mut files: Vec<FileClock> = Vec::with_capacity(p.files.len());
    for (i, f) in p.files.iter().enumerate() {
        let domain = (0..i)
            .find(|&j| same_clock(&p.files[j], f))
            .map_or(i, |j| files[j].domain);
        files.push(FileClock {
            domain,
            timebase: f.timebase,
            method: ClockMethod::None,
            offset_ns: 0.0,
            drift_ppm: 0.0,
            drift_fitted: false,
            t0: t0s[i],
            residual_ms: None,
            instances_used: 0,
            refused: None,
            disagreement_ms: None,
        });
    }
    let mut a = Alignment {
        method: ClockMethod::None,
        files,
        warning: None,
        lane_file,
    };
    if mode == AlignMode::None {
        return a;
    }
    let ref_utc = p.files.first().and_then(|f| f.utc_shift_ns());
    let mut missing_utc = Vec::new();
    for i in 0..a.files.len() {
        let domain = a.files[i].domain;
        let c = &mut a.files[i];
        if i == 0 {
            c.method = ClockMethod::Reference;
        } else if domain == 0 {
            c.method = ClockMethod::SameHost;
        } else {
            c.method = ClockMethod::Utc;
            // Files of one domain share the shift of its first file.
            match (ref_utc, p.files[domain].utc_shift_ns()) {
                (Some(r), Some(u)) => c.offset_ns = u.saturating_sub(r) as f64,
                _ => missing_utc.push(i),
            }
        }
    }
    if !missing_utc.is_empty() {
        a.warning = Some(format!(
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

/// One host, both on its boot clock, booted at the same instant.
fn same_clock(a: &crate::profile::FileInfo, b: &crate::profile::FileInfo) -> bool {
    a.host.is_some()
        && a.host == b.host
        && match (a.boot_instant_ns(), b.boot_instant_ns()) {
            (Some(x), Some(y)) => x.abs_diff(y) <= SAME_BOOT_NS.unsigned_abs(),
            _ => false,
        }
}

/// The earliest GPU event of each file (0 without one).
fn file_starts(p: &Profile) -> Vec<i64> {
    let mut t0 = vec![i64::MAX; p.files.len()];
    for lane in &p.lanes {
        let f = p.processes[lane.process as usize].file as usize;
        if let Some(&s) = p.gpu.start[lane.rows.clone()].iter().min() {
            t0[f] = t0[f].min(s);
        }
    }
    t0.into_iter()
        .map(|t| if t == i64::MAX { 0 } else { t })
        .collect()
}

/// A matched instance seen across domains: its rows' files, raw ends and
/// aligned starts/ends.
struct Inst<'a> {
    /// Its place in [`instances`].
    index: usize,
    rows: &'a [u32],
}

fn instances(m: &Matching) -> Vec<Inst<'_>> {
    m.groups
        .iter()
        .flat_map(|g| (0..g.instances()).map(move |k| g.instance_rows(k)))
        .enumerate()
        .map(|(index, rows)| Inst { index, rows })
        .collect()
}

/// Step 3 of the ladder: refines every non-reference domain of `utc` from
/// the ends of the collectives in `m` (matched on `utc`), then records the
/// residuals. Without a cross-domain instance, `utc` stays (with a warning).
pub fn refine_from_ends(p: &Profile, utc: &Alignment, m: &Matching) -> Alignment {
    let mut a = utc.clone();
    let insts = instances(m);
    let cross: Vec<&Inst> = insts
        .iter()
        .filter(|i| a.spans_domains(p, i.rows))
        .collect();
    if !a.several_domains() {
        return with_residuals(p, a, m);
    }
    if cross.is_empty() {
        a.warning = Some(
            "--align ends: no collective spans two clock domains, so clocks stay on UTC".into(),
        );
        return with_residuals(p, a, m);
    }
    let domains: Vec<usize> = {
        let mut d: Vec<usize> = a.files.iter().map(|c| c.domain).collect();
        d.sort_unstable();
        d.dedup();
        d
    };
    // Instances whose ends a domain's accepted fit rejected: not one
    // collective across nodes (or a rank leaving late), so no residual.
    let mut rejected = vec![false; insts.len()];
    for &dom in domains.iter().filter(|&&d| d != 0) {
        let result = fit_domain(p, &a, &cross, dom);
        if let Ok(fit) = &result {
            for &k in &fit.rejected {
                rejected[k] = true;
            }
        }
        for c in a.files.iter_mut().filter(|c| c.domain == dom) {
            match &result {
                Ok(DomainFit { line: f, t0, .. }) => {
                    c.method = ClockMethod::CollectiveEnds;
                    c.drift_ppm = f.slope * 1e6;
                    c.drift_fitted = f.slope != 0.0;
                    // The line is in the domain's raw time from its t0;
                    // each file counts drift from its own t0.
                    c.offset_ns = f.offset + f.slope * (c.t0 - t0) as f64;
                    c.instances_used = f.kept;
                }
                Err((why, ms)) => {
                    c.refused = Some(why.clone());
                    c.disagreement_ms = *ms;
                }
            }
        }
    }
    a.method = if a
        .files
        .iter()
        .all(|c| c.domain == 0 || c.method == ClockMethod::CollectiveEnds)
    {
        ClockMethod::CollectiveEnds
    } else {
        ClockMethod::Utc
    };
    residuals_over(p, a, m, &|k| !rejected[k])
}

/// The median of the values of `rows` whose file passes `keep`.
fn median_of(
    p: &Profile,
    a: &Alignment,
    rows: &[u32],
    keep: impl Fn(usize) -> bool,
    value: impl Fn(usize, usize) -> i64,
) -> Option<f64> {
    let v: Vec<f64> = rows
        .iter()
        .map(|&r| r as usize)
        .filter(|&r| keep(a.row_file(p, r)))
        .map(|r| value(a.row_file(p, r), r) as f64)
        .collect();
    (!v.is_empty()).then(|| median(v))
}

/// An accepted fit of a domain: its line (in the domain's raw time from
/// `t0`) and the instances (by index) whose ends it rejected.
struct DomainFit {
    line: LineFit,
    t0: i64,
    rejected: Vec<usize>,
}

/// Fits domain `dom` against the reference domain: the offset (and drift)
/// mapping its raw ends onto the reference's; `Err` says why not.
fn fit_domain(
    p: &Profile,
    a: &Alignment,
    cross: &[&Inst],
    dom: usize,
) -> Result<DomainFit, (String, Option<f64>)> {
    let t0 = a
        .files
        .iter()
        .filter(|c| c.domain == dom)
        .map(|c| c.t0)
        .min()
        .unwrap_or(0);
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    let mut used = Vec::new();
    for inst in cross {
        let mine = median_of(p, a, inst.rows, |f| a.domain(f) == dom, |_, r| p.gpu.end[r]);
        let reference = median_of(
            p,
            a,
            inst.rows,
            |f| a.domain(f) == 0,
            |f, r| a.at(f, p.gpu.end[r]),
        );
        if let (Some(x), Some(y)) = (mine, reference) {
            xs.push(x - t0 as f64);
            ys.push(y - x);
            used.push(inst);
        }
    }
    if xs.len() < MIN_INSTANCES {
        return Err((
            format!(
                "{} collective(s) shared with the reference (needs {MIN_INSTANCES})",
                xs.len()
            ),
            None,
        ));
    }
    let span =
        xs.iter().copied().fold(f64::MIN, f64::max) - xs.iter().copied().fold(f64::MAX, f64::min);
    let fit_drift = span >= DRIFT_MIN_SPAN_NS && xs.len() >= DRIFT_MIN_INSTANCES;
    let mut f = robust_line(&xs, &ys, fit_drift, KEEP_FLOOR_NS).ok_or(("no fit".into(), None))?;
    if f.mad_all > MAX_END_MAD_NS || f.kept < MIN_INSTANCES {
        let mut off: Vec<f64> = xs
            .iter()
            .zip(&ys)
            .map(|(x, y)| (y - f.offset - f.slope * x).abs())
            .collect();
        let p90 = super::stats::percentile_select(&mut off, 90.0);
        return Err((
            format!(
                "ends disagree by {:.1} ms (p90 over {} instances, {} agreeing; needs {MIN_INSTANCES} agreeing and a median deviation ≤ {} ms)",
                p90 / 1e6,
                xs.len(),
                f.kept,
                MAX_END_MAD_NS / 1e6
            ),
            Some(p90 / 1e6),
        ));
    }
    let tolerance = (3.0 * 1.4826 * f.mad_all).max(KEEP_FLOOR_NS);
    f.offset += arrival_bias(p, a, &used, &xs, &ys, &f, tolerance, dom);
    // Never an impossible order: no rank may end an instance before the
    // last rank started it (beyond the fit's own noise).
    let map = |file: usize, t: i64| -> f64 {
        if a.domain(file) == dom {
            let x = (t - t0) as f64;
            t as f64 + f.offset + f.slope * x
        } else {
            a.at(file, t) as f64
        }
    };
    let out_of_order = |inst: &Inst, keep: &dyn Fn(usize) -> bool| {
        let rows = inst
            .rows
            .iter()
            .map(|&r| (a.row_file(p, r as usize), r as usize))
            .filter(|&(f, _)| keep(f));
        let last_start = rows
            .clone()
            .map(|(f, r)| map(f, p.gpu.start[r]))
            .fold(f64::MIN, f64::max);
        let first_end = rows
            .map(|(f, r)| map(f, p.gpu.end[r]))
            .fold(f64::MAX, f64::min);
        first_end < last_start - tolerance
    };
    // An instance already in that order on one clock is not one collective
    // (e.g. two communicators on one stream id): the fit did not cause it;
    // nor is one whose ends the fit rejected (e.g. node-local all-reduces
    // paired across nodes by a shared stream id). Only the two domains
    // compared count: the others are still on UTC.
    let agrees = |i: usize| (ys[i] - f.offset - f.slope * xs[i]).abs() <= tolerance;
    let impossible = used
        .iter()
        .enumerate()
        .filter(|&(i, _)| agrees(i))
        .map(|(_, inst)| inst)
        .filter(|inst| {
            !out_of_order(inst, &|f| a.domain(f) == dom)
                && !out_of_order(inst, &|f| a.domain(f) == 0)
                && out_of_order(inst, &|f| a.domain(f) == dom || a.domain(f) == 0)
        })
        .count();
    if impossible > 0 {
        return Err((
            format!(
                "aligning ends would put a rank's end before the last rank's start in {impossible} instance(s)"
            ),
            None,
        ));
    }
    let rejected = (0..used.len())
        .filter(|&i| !agrees(i))
        .map(|i| used[i].index)
        .collect();
    Ok(DomainFit {
        line: f,
        t0,
        rejected,
    })
}

/// Fewest instances in each arrival direction for [`arrival_bias`] to act.
const BALANCE_MIN: usize = 3;

/// How far the fitted offset leans toward the more frequent arrival order.
///
/// Ends do not line up exactly: the rank that arrives last at a collective
/// finishes its kernel a few µs apart from the ranks that waited for it, by
/// an amount that depends on who waited (measured on a real 2-GPU SendRecv
/// capture: rank 1's kernels end 22 µs before rank 0's when rank 1 arrives
/// last, 5 µs when rank 0 does). When one side arrives last in most
/// instances, the median of the ends carries that side's bias. The midpoint
/// of the two directions' median residuals cancels the part that flips
/// with the order; without instances both ways nothing is corrected.
#[allow(clippy::too_many_arguments)]
fn arrival_bias(
    p: &Profile,
    a: &Alignment,
    used: &[&&Inst],
    xs: &[f64],
    ys: &[f64],
    f: &LineFit,
    tolerance: f64,
    dom: usize,
) -> f64 {
    let (mut mine_last, mut reference_last) = (Vec::new(), Vec::new());
    for (i, inst) in used.iter().enumerate() {
        let residual = ys[i] - f.offset - f.slope * xs[i];
        if residual.abs() > tolerance {
            continue;
        }
        let mine = median_of(
            p,
            a,
            inst.rows,
            |f| a.domain(f) == dom,
            |_, r| p.gpu.start[r],
        );
        let reference = median_of(
            p,
            a,
            inst.rows,
            |f| a.domain(f) == 0,
            |f, r| a.at(f, p.gpu.start[r]),
        );
        if let (Some(mine), Some(reference)) = (mine, reference) {
            let mine = mine + f.offset + f.slope * xs[i];
            if mine > reference {
                mine_last.push(residual);
            } else {
                reference_last.push(residual);
            }
        }
    }
    if mine_last.len() < BALANCE_MIN || reference_last.len() < BALANCE_MIN {
        return 0.0;
    }
    (median(mine_last) + median(reference_last)) / 2.0
}

/// Adds each file's residual: over the instances holding it (cross-domain
/// ones when there are any), |median aligned end of its ranks − median
/// aligned end of the instance|.
pub fn with_residuals(p: &Profile, a: Alignment, m: &Matching) -> Alignment {
    residuals_over(p, a, m, &|_| true)
}

/// [`with_residuals`] over the instances (numbered as by [`instances`])
/// that pass `used`.
fn residuals_over(
    p: &Profile,
    mut a: Alignment,
    m: &Matching,
    used: &dyn Fn(usize) -> bool,
) -> Alignment {
    let insts = instances(m);
    let several = a.several_domains();
    let mut per_file: Vec<Vec<f64>> = vec![Vec::new(); a.files.len()];
    for inst in &insts {
        if (several && !a.spans_domains(p, inst.rows)) || !used(inst.index) {
            continue;
        }
        let Some(all) = median_of(p, &a, inst.rows, |_| true, |f, r| a.at(f, p.gpu.end[r])) else {
            continue;
        };
        let mut files: Vec<usize> = inst
            .rows
            .iter()
            .map(|&r| a.row_file(p, r as usize))
            .collect();
        files.sort_unstable();
        files.dedup();
        for f in files {
            if let Some(mine) =
                median_of(p, &a, inst.rows, |x| x == f, |x, r| a.at(x, p.gpu.end[r]))
            {
                per_file[f].push((mine - all).abs() / 1e6);
            }
        }
    }
    for (c, v) in a.files.iter_mut().zip(per_file) {
        if c.method != ClockMethod::CollectiveEnds {
            c.instances_used = v.len();
        }
        c.residual_ms = Spread::of(v);
    }
    a
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
                timebase: Timebase::UtcEpoch,
                method: ClockMethod::CollectiveEnds,
                offset_ns,
                drift_ppm,
                drift_fitted: drift_ppm != 0.0,
                t0,
                residual_ms: None,
                instances_used: 0,
                refused: None,
                disagreement_ms: None,
            }],
            warning: None,
            lane_file: Vec::new(),
        }
    }

    #[test]
    fn to_file_inverts_at_to_the_nanosecond_even_on_epoch_timestamps() {
        let t0 = 1_780_000_000_123_456_789;
        let a = clock(-10_817_123_456.0, 7.5, t0);
        for dt in [0i64, 1, 999_999_937, 3_600_000_000_000] {
            let t = t0 + dt;
            let r = a.at(0, t);
            assert_eq!(a.to_file(0, r), t, "dt {dt}");
        }
        // 7.5 ppm over an hour: 27 ms.
        let hour = a.at(0, t0 + 3_600_000_000_000) - (t0 + 3_600_000_000_000);
        assert_eq!(hour - a.at(0, t0) + t0, 27_000_000);
    }
}
