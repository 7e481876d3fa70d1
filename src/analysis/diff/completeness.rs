//! Whether the two captures cover the same devices, counted as the
//! summary counts them (expected: a CUDA context; with kernels; missing:
//! a context but no activity; listed but unused), the devices expected on
//! one side only, and the world sizes.

use super::side::Side;
use crate::profile::DeviceLabel;

/// One capture's devices, by the summary's definitions.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeviceSet {
    /// Devices with a CUDA context.
    pub expected: Vec<DeviceLabel>,
    pub with_kernels: Vec<DeviceLabel>,
    /// Expected, but no kernel, memcpy or memset recorded.
    pub missing: Vec<DeviceLabel>,
    /// Listed in `TARGET_INFO_GPU` without a context.
    pub listed_unused: Vec<DeviceLabel>,
    /// The job's world size, when the capture environment records it.
    pub world_size: Option<u32>,
}

/// What the two captures' device sets say.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DiffCompleteness {
    pub before: DeviceSet,
    pub after: DeviceSet,
    /// Expected devices (paired by label) on one side only.
    pub only_before: Vec<DeviceLabel>,
    pub only_after: Vec<DeviceLabel>,
}

impl DiffCompleteness {
    /// The two sides expect different devices (or report different world
    /// sizes): figures are compared per device, and totals cover
    /// different sets.
    pub fn differs(&self) -> bool {
        !self.only_before.is_empty()
            || !self.only_after.is_empty()
            || self.before.world_size != self.after.world_size
            || self.before.expected.len() != self.after.expected.len()
    }
}

fn device_set(s: Side) -> DeviceSet {
    let c = &s.analysis.completeness;
    let labels = |ids: &[u32]| -> Vec<DeviceLabel> {
        ids.iter().map(|&d| s.profile.device_label(d)).collect()
    };
    DeviceSet {
        expected: labels(&c.expected),
        with_kernels: labels(&c.with_kernels),
        missing: labels(&c.missing),
        listed_unused: labels(&c.listed_unused),
        world_size: c.world_size,
    }
}

pub fn diff_completeness(before: Side, after: Side) -> DiffCompleteness {
    let (before, after) = (device_set(before), device_set(after));
    let absent = |from: &[DeviceLabel], other: &[DeviceLabel]| -> Vec<DeviceLabel> {
        from.iter()
            .filter(|d| !other.iter().any(|o| o.key == d.key))
            .cloned()
            .collect()
    };
    DiffCompleteness {
        only_before: absent(&before.expected, &after.expected),
        only_after: absent(&after.expected, &before.expected),
        before,
        after,
    }
}
