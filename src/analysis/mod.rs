//! `analysis`: pure functions over the [`crate::profile::Profile`]. Nothing
//! here runs SQL or prints.

pub mod account;
pub mod anomalies;
pub mod bandwidth;
pub mod bandwidth_n;
pub mod behind;
pub mod caveats;
mod chunks;
pub mod clock;
pub mod completeness;
pub mod cpu_state;
pub mod cuda_sync;
pub mod diff;
pub mod events;
pub mod gpu_chain;
pub mod gpu_metrics;
pub mod intervals;
pub mod kernel_class;
pub mod launch;
pub mod matching;
pub mod name_stats;
pub mod nccl_breakdown;
pub mod nccl_calls;
pub mod nccl_name;
pub mod nccl_streams;
pub mod nvtx_tree;
mod op_keys;
pub mod overlap;
pub mod pipeline;
pub mod settings;
pub mod skew;
pub mod stats;
pub mod step_account;
pub mod steps;
pub mod stored;
pub mod stragglers;
pub mod thread_account;
pub mod tracks;
pub mod why;
pub mod why_words;
pub mod window;

pub use pipeline::Analysis;
pub use settings::Settings;
pub use window::Window;
