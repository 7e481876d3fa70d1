//! The input files of a command: directories expanded, inputs given twice dropped.

use super::messages::say;
use rankline::profile::distinct::{Duplicate, distinct_inputs};
use rankline::profile::inputs::expand_inputs_noting;
use rankline::profile::inputs::is_nsys_report;
use std::path::PathBuf;

/// The input files the command line's `FILE|DIR ...` name, every command
/// reads its inputs through this: directories expanded, then inputs given
/// twice (the same file, or a copy) dropped, since counted twice every
/// figure would double. Also the lines to say about them: duplicates, and
/// reports read through the export beside them. Err: a directory with no
/// input (one line, exit 1).
pub(super) fn input_files(files: &[PathBuf]) -> Result<(Vec<PathBuf>, Vec<String>), String> {
    let (files, mut notes) = expand_inputs_noting(files)?;
    let (kept, dropped): (Vec<PathBuf>, Vec<Duplicate>) = distinct_inputs(&files);
    notes.extend(dropped.iter().map(ToString::to_string));
    Ok((kept, notes))
}

/// [`input_files`], its notes said on stderr; from now on a signal
/// removes what a cache write or an export in progress leaves. When some
/// are nsys reports, nsys's output is copied to stderr.
pub(super) fn distinct(files: Vec<PathBuf>) -> Result<Vec<PathBuf>, String> {
    rankline::profile::scratch::remove_scratch_on_signals();
    let (kept, notes) = input_files(&files)?;
    for n in &notes {
        say(n);
    }
    if kept.iter().any(|f| is_nsys_report(f)) {
        rankline::profile::nsys_export::echo_nsys_output(true);
    }
    Ok(kept)
}
