//! `tui`: the timeline explorer. State (`state`) is separate from views
//! (`ui`); data arrives from a background loader; the UI runs no SQL.

pub mod action;
pub mod baseline;
pub mod behind;
pub mod bookmark_jobs;
pub mod capture;
pub mod data;
pub mod derive_jobs;
pub mod derived;
pub mod export;
pub mod filtered;
pub mod finder;
pub mod history;
pub mod index;
pub mod keymap;
pub mod lanes;
pub mod messages;
pub mod nvtx_view;
pub mod offscreen;
pub mod osc52;
pub mod panel;
pub mod pick;
pub mod range;
pub mod run;
pub mod scroll;
pub mod selection;
pub mod show;
pub mod state;
pub mod stats_view;
pub mod steps_view;
pub mod stragglers;
pub mod terminal_rescue;
pub mod timescale;
pub mod ui;
pub mod wallclock;
pub mod wallclock_input;
