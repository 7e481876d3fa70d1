//! `profile`: nsys SQLite exports → the columnar in-memory model.
//!
//! This is the only module that runs SQL. Files are opened read-only and
//! immutable; nothing is ever written beside them.

pub mod column;
mod finalize;
pub mod ids;
pub mod intern;
mod load;
mod model;
pub mod names;
mod open;
mod raw;
mod rows;
pub mod spec;

pub use intern::{Interner, Sym};
pub use load::{ProgressFn, Source, Stage};
pub use model::*;
pub use open::LoadError;

use std::path::PathBuf;

/// Loads several exports into one profile. A file that fails is reported in
/// the error list; the others still load.
pub fn load(paths: &[PathBuf], progress: &mut ProgressFn<'_>) -> (Profile, Vec<LoadError>) {
    let sources: Vec<Source> = paths.iter().cloned().map(Source::File).collect();
    load_sources(&sources, progress)
}

/// Like [`load`], from files or embedded databases.
pub fn load_sources(
    sources: &[Source],
    progress: &mut ProgressFn<'_>,
) -> (Profile, Vec<LoadError>) {
    let mut loaded = Vec::new();
    let mut errors = Vec::new();
    for (i, source) in sources.iter().enumerate() {
        match load::load_file(source, i, progress) {
            Ok(mut one) => {
                progress(i, Stage::Linking, 0);
                finalize::finalize(&mut one);
                loaded.push(one);
            }
            Err(e) => errors.push(e),
        }
    }
    (combine(loaded), errors)
}

/// One profile from finalized single-file profiles.
fn combine(mut files: Vec<Profile>) -> Profile {
    if files.len() == 1 {
        return files.pop().unwrap_or_default();
    }
    let mut profile = Profile::default();
    for one in files {
        finalize::merge(&mut profile, one);
    }
    profile.contexts.sort();
    profile.contexts.dedup();
    profile
}
