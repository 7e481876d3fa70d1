//! Who is who across files: hosts (a name plus a boot instant), GPUs (a
//! UUID, else their file), ranks from the capture environment, and the
//! names shown for them (JSON values, short text labels).

use super::model::{DevId, DeviceKey, DeviceLabel, Labels, Profile};
use std::collections::HashMap;
use std::path::Path;

/// Boot instants closer than this are one boot of one host.
pub const SAME_BOOT_NS: i64 = 1_000_000;

/// `(rank, world size)` variable pairs, the rank variables in the order
/// they are trusted. A launcher sets one family; the size read is the one
/// of the family that gave the rank, else the first recorded.
const RANK_VARS: [(&str, &str); 4] = [
    ("RANK", "WORLD_SIZE"),
    ("SLURM_PROCID", "SLURM_NTASKS"),
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
    ("PMI_RANK", "PMI_SIZE"),
];
const SIZE_VARS: [&str; 4] = [
    "PMI_SIZE",
    "SLURM_NTASKS",
    "WORLD_SIZE",
    "OMPI_COMM_WORLD_SIZE",
];

/// Whether `name` is one of the variables [`rank_from_env`] reads.
pub fn is_rank_var(name: &str) -> bool {
    RANK_VARS.iter().any(|(r, s)| *r == name || *s == name) || SIZE_VARS.contains(&name)
}

/// One `META_DATA_CAPTURE` `PROCESS_N:ENVIRONMENT_VARIABLE` value,
/// `NAME="value"` (quotes optional), as (name, value).
pub fn parse_env_var(row: &str) -> Option<(&str, &str)> {
    let (name, value) = row.split_once('=')?;
    let value = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(value);
    Some((name.trim(), value))
}

/// The rank and world size a capture environment records. `envs` holds
/// one environment per launched process (`PROCESS_N`); when they disagree
/// on the rank, none is taken: it is never guessed.
pub fn rank_from_env(envs: &[HashMap<String, String>]) -> (Option<u32>, Option<u32>) {
    let num = |env: &HashMap<String, String>, k: &str| env.get(k)?.trim().parse::<u32>().ok();
    let mut ranks = Vec::new();
    let mut size = None;
    for env in envs {
        let family = RANK_VARS.iter().find(|(r, _)| num(env, r).is_some());
        if let Some((r, s)) = family {
            ranks.push(num(env, r));
            size = size.or(num(env, s));
        }
        size = size.or_else(|| SIZE_VARS.iter().find_map(|s| num(env, s)));
    }
    ranks.dedup();
    let rank = match ranks[..] {
        [Some(r)] => Some(r),
        _ => None,
    };
    (rank, size.filter(|&s| s > 0))
}

/// The boot instant from `TARGET_INFO_SESSION_START_TIME`: the UTC of
/// the boot clock's zero.
pub fn boot_instant(utc_epoch_ns: Option<i64>, system_clock_ns: Option<i64>) -> Option<i64> {
    utc_epoch_ns?.checked_sub(system_clock_ns?)
}

/// Whether two files naming one host come from the same boot of it
/// (unknown instants do not tell them apart).
pub fn same_boot(a: Option<i64>, b: Option<i64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.abs_diff(b) <= SAME_BOOT_NS as u64,
        _ => true,
    }
}

/// The host name a file without a Hostname goes by in labels: its stem.
pub fn stem_host(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| path.display().to_string())
}

/// `name`, or `name#2`, `name#3` … : the first not in `taken`.
pub fn unique_name(name: &str, taken: &[String]) -> String {
    let mut out = name.to_string();
    let mut n = 1;
    while taken.contains(&out) {
        n += 1;
        out = format!("{name}#{n}");
    }
    out
}

impl Labels {
    /// The labels of `p`'s hosts and devices as it is now.
    pub fn of(p: &Profile) -> Labels {
        let hosts = short_hosts(p);
        let ids_unique = {
            let mut ids: Vec<u32> = p.devices.iter().map(|d| d.id).collect();
            ids.sort_unstable();
            ids.windows(2).all(|w| w[0] != w[1])
        };
        let plain = p.hosts.len() <= 1 && ids_unique;
        let mut taken: Vec<String> = Vec::new();
        let mut devices: Vec<DeviceLabel> = (0..p.devices.len() as DevId)
            .map(|d| {
                let dev = &p.devices[d as usize];
                let rank = dev.rank.map(|r| format!(" r{r}")).unwrap_or_default();
                if plain {
                    return DeviceLabel {
                        key: DeviceKey::Id(dev.id),
                        text: format!("{}{rank}", dev.id),
                    };
                }
                let host = dev.host as usize;
                let key = unique_name(&format!("{}:{}", p.hosts[host], dev.id), &taken);
                let short = hosts.get(host).unwrap_or(&p.hosts[host]);
                taken.push(key.clone());
                DeviceLabel {
                    key: DeviceKey::HostId(key),
                    text: format!("{short}:{}{rank}", dev.id),
                }
            })
            .collect();
        // The text takes the key's `#N` only when the rank does not
        // already tell the devices apart.
        let texts: Vec<String> = devices.iter().map(|l| l.text.clone()).collect();
        for (d, l) in devices.iter_mut().enumerate() {
            let DeviceKey::HostId(key) = &l.key else {
                continue;
            };
            if texts.iter().filter(|t| **t == l.text).count() > 1 {
                let dev = &p.devices[d];
                let suffix = &key[key.rfind(':').unwrap_or(0)..];
                let short = hosts
                    .get(dev.host as usize)
                    .unwrap_or(&p.hosts[dev.host as usize]);
                let rank = dev.rank.map(|r| format!(" r{r}")).unwrap_or_default();
                l.text = format!("{short}{suffix}{rank}");
            }
        }
        Labels { hosts, devices }
    }
}

/// How hosts and devices are named and found by name.
impl Profile {
    /// How a device is named: in JSON its integer id while all files come
    /// from one host and ids are unique, else `host:id` (`#N` when still
    /// not unique); in text with the host's short name and the rank.
    pub fn device_label(&self, d: DevId) -> DeviceLabel {
        match self.labels.devices.get(d as usize) {
            Some(l) if self.labels.fits(self) => l.clone(),
            _ => Labels::of(self).devices[d as usize].clone(),
        }
    }

    /// The name of a host in text: its first label when that is unique.
    pub fn host_label(&self, h: u32) -> &str {
        match self.labels.hosts.get(h as usize) {
            Some(l) if self.labels.fits(self) => l,
            _ => &self.hosts[h as usize],
        }
    }

    /// Finds devices by a label: `3` (on every host), `host:3` or
    /// `short:3` (`#N` included), the text label (`node03:0 r4`) or a rank
    /// (`r4`).
    pub fn find_devices(&self, label: &str) -> Vec<DevId> {
        let label = label.trim();
        let rank = label.strip_prefix('r').and_then(|r| r.parse::<u32>().ok());
        let bare = label.parse::<u32>().ok();
        (0..self.devices.len() as DevId)
            .filter(|&d| {
                let dev = &self.devices[d as usize];
                let l = self.device_label(d);
                let key = l.key_string();
                let short_key = format!("{}:{}", self.host_label(dev.host), dev.id);
                let full_key = format!("{}:{}", self.hosts[dev.host as usize], dev.id);
                bare == Some(dev.id)
                    || (rank.is_some() && dev.rank == rank)
                    || key == label
                    || l.text == label
                    || full_key == label
                    || short_key == label
            })
            .collect()
    }
}

/// Each host's first label (`node03` of `node03.cluster.org`) when no
/// other host shortens to the same; names from file stems and IP
/// addresses are kept whole.
fn short_hosts(p: &Profile) -> Vec<String> {
    let stem = |h: usize| {
        p.files
            .iter()
            .any(|f| f.host_index as usize == h && f.host.is_none())
    };
    let short: Vec<String> = p
        .hosts
        .iter()
        .enumerate()
        .map(|(h, name)| {
            let (base, n) = match name.rsplit_once('#') {
                Some((b, n)) if n.parse::<u32>().is_ok() => (b, Some(n)),
                _ => (name.as_str(), None),
            };
            if stem(h) || base.parse::<std::net::IpAddr>().is_ok() {
                return name.clone();
            }
            let first = base.split('.').next().unwrap_or(base);
            match n {
                Some(n) => format!("{first}#{n}"),
                None => first.to_string(),
            }
        })
        .collect();
    short
        .iter()
        .enumerate()
        .map(|(h, s)| {
            let clash = short.iter().filter(|x| *x == s).count() > 1;
            if clash { p.hosts[h].clone() } else { s.clone() }
        })
        .collect()
}

/// Names the hosts and devices of `p` (after every file is merged).
pub fn label(p: &mut Profile) {
    p.labels = Labels::of(p);
}

#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) mod tests_support {
    pub(crate) use super::tests::json_options;
}
