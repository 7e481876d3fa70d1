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

pub use fit::{LineFit, median, robust_line};

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

    /// First start and last end of every event, on the reference clock
    /// (a file's own span maps as a whole: the mapping keeps order).
    pub fn span(&self, p: &Profile) -> Option<(i64, i64)> {
        p.file_models()
            .enumerate()
            .filter_map(|(f, m)| m.span().map(|(a, b)| (self.at(f, a), self.at(f, b))))
            .reduce(|(a, b), (x, y)| (a.min(x), b.max(y)))
    }

    /// The file a lane's events come from.
    pub fn lane_file(&self, lane: u32) -> usize {
        self.lane_file.get(lane as usize).map_or(0, |&f| f as usize)
    }

    /// The file of a GPU row.
    pub fn row_file(&self, p: &Profile, row: usize) -> usize {
        self.lane_file(p.gpu.lane(row))
    }

    pub fn gpu_start(&self, p: &Profile, row: usize) -> i64 {
        self.at(self.row_file(p, row), p.gpu.start(row))
    }

    pub fn gpu_end(&self, p: &Profile, row: usize) -> i64 {
        self.at(self.row_file(p, row), p.gpu.end(row))
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
