//! Whether the two captures cover the same devices: devices on one side
//! only, devices recorded with no activity, and the world sizes.

use super::side::Side;
use crate::profile::DeviceLabel;

/// What the two captures' device sets say.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DiffCompleteness {
    /// Devices each side expected or listed (`Completeness::devices`).
    pub before_devices: Vec<DeviceLabel>,
    pub after_devices: Vec<DeviceLabel>,
    /// Devices (paired by label) on one side only.
    pub only_before: Vec<DeviceLabel>,
    pub only_after: Vec<DeviceLabel>,
    /// Devices with a CUDA context but no GPU activity, per side.
    pub missing_before: Vec<DeviceLabel>,
    pub missing_after: Vec<DeviceLabel>,
    /// The job's world size, when the capture environment records it.
    pub before_world_size: Option<u32>,
    pub after_world_size: Option<u32>,
}

impl DiffCompleteness {
    /// The two sides cover different devices (or report different world
    /// sizes): figures are compared per device, and totals cover
    /// different sets.
    pub fn differs(&self) -> bool {
        !self.only_before.is_empty()
            || !self.only_after.is_empty()
            || self.before_world_size != self.after_world_size
            || self.before_devices.len() != self.after_devices.len()
    }
}

fn labels(s: Side, ids: impl IntoIterator<Item = u32>) -> Vec<DeviceLabel> {
    ids.into_iter().map(|d| s.profile.device_label(d)).collect()
}

pub fn diff_completeness(before: Side, after: Side) -> DiffCompleteness {
    let (bc, ac) = (&before.analysis.completeness, &after.analysis.completeness);
    let before_devices = labels(before, bc.devices.iter().map(|d| d.device));
    let after_devices = labels(after, ac.devices.iter().map(|d| d.device));
    let absent = |from: &[DeviceLabel], other: &[DeviceLabel]| -> Vec<DeviceLabel> {
        from.iter()
            .filter(|d| !other.iter().any(|o| o.key == d.key))
            .cloned()
            .collect()
    };
    DiffCompleteness {
        only_before: absent(&before_devices, &after_devices),
        only_after: absent(&after_devices, &before_devices),
        missing_before: labels(before, bc.missing.iter().copied()),
        missing_after: labels(after, ac.missing.iter().copied()),
        before_world_size: bc.world_size,
        after_world_size: ac.world_size,
        before_devices,
        after_devices,
    }
}
