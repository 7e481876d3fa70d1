//! rankline: a terminal tool for Nsight Systems SQLite exports of
//! multi-GPU jobs.
//!
//! Layers, dependencies pointing one way: [`profile`] (SQLite → columnar
//! model) → [`analysis`] (pure functions) → [`report`] (text / JSON).

pub mod analysis;
pub mod binary;
pub mod ending_signals;
pub mod figure_text;
pub mod profile;
pub mod report;
pub mod text_safe;
pub mod tui;
