//! Devices named on the command line (`--device`, `--devices`), as
//! `report --device` takes them.

use rankline::profile::{DevId, Profile};

/// The devices `labels` name (each as `report --device` takes it), or the
/// refusal that names the option `flag` and the devices there are.
pub(super) fn named(p: &Profile, flag: &str, labels: &[String]) -> Result<Vec<DevId>, String> {
    let mut out = Vec::new();
    for l in labels {
        let found = p.find_devices(l);
        if found.is_empty() {
            let known: Vec<String> = (0..p.devices.len() as DevId)
                .map(|d| p.device_label(d).to_string())
                .collect();
            return Err(format!(
                "{flag} {l}: no such device (devices: {})",
                known.join(", ")
            ));
        }
        out.extend(found);
    }
    Ok(out)
}
