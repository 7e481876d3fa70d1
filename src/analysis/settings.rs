//! The settings that change analysis results: one value, handed whole to
//! the pipeline by every caller (timeline, `report`, `diff`, `index`,
//! `bench`), and the key of stored analyses derived from all of it.

use super::clock::AlignMode;
use super::steps::DEFAULT_STEP_MARKER;
use regex::Regex;

/// Analysis settings (the options that change results). A field added
/// here is in [`Settings::key`] without anyone remembering to add it.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Kernels whose name matches are communication too (`--comm-pattern`).
    pub comm_pattern: Option<Regex>,
    /// Start skew above which an instance is a big event (ns).
    pub big_skew_ns: i64,
    /// Anomalous: duration above this × the mean of the type.
    pub anomaly_ratio: f64,
    /// Names of top-level NVTX step ranges (`--step-marker`).
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

impl Settings {
    /// Every field, as text: equal keys, equal settings. Derived from the
    /// whole value (a regex shows its pattern, a float its exact value),
    /// so a new setting cannot be left out of the stored analyses' key.
    pub fn key(&self) -> String {
        format!("{self:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_changes_the_key() {
        let base = Settings::default();
        // A new field fails to compile here: give it a case below.
        let Settings {
            comm_pattern: _,
            big_skew_ns: _,
            anomaly_ratio: _,
            step_marker: _,
            align: _,
        } = &base;
        let re = |r: &str| Regex::new(r).unwrap();
        let changed = [
            Settings {
                comm_pattern: Some(re("gemm")),
                ..base.clone()
            },
            Settings {
                big_skew_ns: base.big_skew_ns + 1,
                ..base.clone()
            },
            Settings {
                anomaly_ratio: base.anomaly_ratio + 1e-9,
                ..base.clone()
            },
            Settings {
                step_marker: re("^step$"),
                ..base.clone()
            },
            Settings {
                align: AlignMode::None,
                ..base.clone()
            },
        ];
        for s in &changed {
            assert_ne!(s.key(), base.key(), "{s:?}");
        }
        assert_eq!(base.clone().key(), base.key());
    }
}
