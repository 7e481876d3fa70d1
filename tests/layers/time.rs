//! Time in one place: outside the two time modules — `analysis::clock`,
//! which owns the mapping of each file's clock onto the reference clock,
//! and the timeline's `capture::time`, the only UI code that reads it — no
//! code maps a timestamp between clocks or names the alignment's mapping
//! fields. Everything else asks those modules for aligned times, so no
//! view or analysis can forget the clock.

use super::source;

/// The files allowed to map between clocks (a folder: every file in it).
pub const TIME_MODULES: [&str; 3] = [
    "src/analysis/clock.rs",
    "src/analysis/clock/",
    "src/tui/capture/time.rs",
];

/// The mapping's primitives and fields.
const MAPPING: [&str; 5] = [
    "to_reference",
    "to_file",
    "offset_ns",
    "drift_ppm",
    "FileClock",
];

/// Where `text` (the source of `file`) names the mapping outside the time
/// modules: one line per use, with the identifier.
pub fn uses_outside(file: &str, text: &str) -> Vec<String> {
    source::names_outside(file, text, &TIME_MODULES, &MAPPING)
}
