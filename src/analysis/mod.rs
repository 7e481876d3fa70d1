//! `analysis`: pure functions over the [`crate::profile::Profile`]. Nothing
//! here runs SQL or prints.

pub mod completeness;
pub mod intervals;
pub mod kernel_class;
pub mod nccl_breakdown;
pub mod nccl_name;
pub mod overlap;
pub mod window;

pub use window::Window;
