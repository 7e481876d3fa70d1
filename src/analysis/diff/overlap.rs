//! Overlap per device before and after, devices paired by label.

use super::side::Side;
use crate::analysis::overlap::DeviceOverlap;
use crate::profile::DeviceLabel;

/// One device's overlap on both sides; `None` where the device is absent
/// (or had no GPU activity). Each side's `device` is an id of that side's
/// profile: read the label here.
#[derive(Debug, Clone, PartialEq)]
pub struct OverlapPair {
    pub device: DeviceLabel,
    pub before: Option<DeviceOverlap>,
    pub after: Option<DeviceOverlap>,
}

pub fn overlap_pairs(before: Side, after: Side) -> Vec<OverlapPair> {
    let mut out: Vec<OverlapPair> = before
        .analysis
        .overlap
        .iter()
        .map(|o| OverlapPair {
            device: before.profile.device_label(o.device),
            before: Some(o.clone()),
            after: None,
        })
        .collect();
    for o in &after.analysis.overlap {
        let device = after.profile.device_label(o.device);
        match out
            .iter_mut()
            .find(|x| x.device.key == device.key && x.after.is_none())
        {
            Some(pair) => pair.after = Some(o.clone()),
            None => out.push(OverlapPair {
                device,
                before: None,
                after: Some(o.clone()),
            }),
        }
    }
    out
}
