//! The options shared by the timeline, `report` and `diff`: `--no-cache` and the
//! options that change analysis results, validated in one place.

use clap::{Args, ValueEnum};
use rankline::analysis::Settings;
use rankline::analysis::clock::AlignMode;
use rankline::analysis::steps::DEFAULT_STEP_MARKER;
use regex::Regex;

/// `--no-cache`, offered only where reading without the cache makes sense
/// (not `index`, whose whole job is writing it).
#[derive(Args, Clone, Copy)]
pub(super) struct NoCacheArg {
    /// Neither read nor write the cache
    #[arg(long)]
    pub(super) no_cache: bool,
}

/// The options that change analysis results: one set for the timeline,
/// `report` and `diff`, validated in one place ([`AnalysisArgs::settings`]).
#[derive(Args, Clone)]
pub(super) struct AnalysisArgs {
    /// Also treat kernels whose name matches REGEX as communication
    #[arg(long, value_name = "REGEX")]
    comm_pattern: Option<String>,
    /// Start skew (ms) above which an instance is a big event
    #[arg(
        long,
        value_name = "MS",
        default_value_t = 20.0,
        allow_negative_numbers = true
    )]
    big_skew_ms: f64,
    /// A kernel is anomalous above R × the mean of its collective type
    #[arg(
        long,
        value_name = "R",
        default_value_t = 3.0,
        allow_negative_numbers = true
    )]
    anomaly_ratio: f64,
    /// Top-level NVTX ranges whose name matches REGEX mark training steps
    #[arg(long, value_name = "REGEX", default_value = DEFAULT_STEP_MARKER)]
    step_marker: String,
    /// How clocks of several files are aligned: none, utc, or ends (UTC refined from collective ends)
    #[arg(long, value_enum, value_name = "HOW", default_value_t = AlignArg::Ends)]
    align: AlignArg,
}

/// `--align`.
#[derive(Clone, Copy, ValueEnum)]
enum AlignArg {
    None,
    Utc,
    Ends,
}

impl AlignArg {
    fn mode(self) -> AlignMode {
        match self {
            AlignArg::None => AlignMode::None,
            AlignArg::Utc => AlignMode::Utc,
            AlignArg::Ends => AlignMode::Ends,
        }
    }
}

impl AnalysisArgs {
    /// The settings, or the one-line usage error of the first bad value.
    pub(super) fn settings(&self) -> Result<Settings, String> {
        let comm_pattern = match self.comm_pattern.as_deref().map(Regex::new) {
            None => None,
            Some(Ok(re)) => Some(re),
            Some(Err(e)) => {
                return Err(format!(
                    "--comm-pattern is not a valid regex: {}",
                    one_line(&e.to_string())
                ));
            }
        };
        let step_marker = Regex::new(&self.step_marker).map_err(|e| {
            format!(
                "--step-marker is not a valid regex: {}",
                one_line(&e.to_string())
            )
        })?;
        if !(self.big_skew_ms.is_finite() && self.big_skew_ms >= 0.0) {
            return Err("--big-skew-ms needs a number of milliseconds >= 0".into());
        }
        if !(self.anomaly_ratio.is_finite() && self.anomaly_ratio > 0.0) {
            return Err("--anomaly-ratio needs a number > 0".into());
        }
        Ok(Settings {
            comm_pattern,
            big_skew_ns: (self.big_skew_ms * 1e6).round() as i64,
            anomaly_ratio: self.anomaly_ratio,
            step_marker,
            align: self.align.mode(),
        })
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `--window START_S END_S` as the window it names (`ALL` without it), or
/// the usage error to say.
pub(super) fn window(arg: Option<&[f64]>) -> Result<rankline::analysis::Window, &'static str> {
    use rankline::analysis::Window;
    match arg {
        None => Ok(Window::ALL),
        Some(&[a, b]) if a.is_finite() && b.is_finite() && a <= b => Ok(Window::from_seconds(a, b)),
        Some(_) => Err("--window needs START_S <= END_S, in seconds"),
    }
}
