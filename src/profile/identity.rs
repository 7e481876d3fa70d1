//! Who is who across files: hosts (a name plus a boot instant), GPUs (a
//! UUID, else their file), ranks from the capture environment, and the
//! names shown for them (JSON values, short text labels).

use super::model::{DevId, Device, DeviceKey, DeviceLabel, FileInfo, Labels};
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
    // A size that is a number but cannot be one (0, -1) is kept as 0, so
    // that it is said rather than taken for none recorded.
    let size_of = |env: &HashMap<String, String>, k: &str| {
        let v = env.get(k)?.trim();
        num(env, k).or_else(|| {
            v.parse::<i64>()
                .ok()
                .map(|n| if n <= 0 { 0 } else { u32::MAX })
        })
    };
    let mut ranks = Vec::new();
    let mut size = None;
    for env in envs {
        let family = RANK_VARS.iter().find(|(r, _)| num(env, r).is_some());
        if let Some((r, s)) = family {
            ranks.push(num(env, r));
            size = size.or(size_of(env, s));
        }
        size = size.or_else(|| SIZE_VARS.iter().find_map(|s| size_of(env, s)));
    }
    ranks.dedup();
    let rank = match ranks[..] {
        [Some(r)] => Some(r),
        _ => None,
    };
    (rank, size)
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
    /// The labels of a capture's hosts and devices (its files give which
    /// host names are file stems).
    pub fn of(files: &[FileInfo], host_names: &[String], gpus: &[Device]) -> Labels {
        let hosts = short_hosts(files, host_names);
        let ids_unique = {
            let mut ids: Vec<u32> = gpus.iter().map(|d| d.id).collect();
            ids.sort_unstable();
            ids.windows(2).all(|w| w[0] != w[1])
        };
        let plain = host_names.len() <= 1 && ids_unique;
        let mut taken: Vec<String> = Vec::new();
        let mut devices: Vec<DeviceLabel> = (0..gpus.len() as DevId)
            .map(|d| {
                let dev = &gpus[d as usize];
                let rank = dev.rank.map(|r| format!(" r{r}")).unwrap_or_default();
                if plain {
                    return DeviceLabel {
                        key: DeviceKey::Id(dev.id),
                        text: format!("{}{rank}", dev.id),
                    };
                }
                let host = dev.host as usize;
                let key = unique_name(&format!("{}:{}", host_names[host], dev.id), &taken);
                let short = hosts.get(host).unwrap_or(&host_names[host]);
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
                let dev = &gpus[d];
                let suffix = &key[key.rfind(':').unwrap_or(0)..];
                let short = hosts
                    .get(dev.host as usize)
                    .unwrap_or(&host_names[dev.host as usize]);
                let rank = dev.rank.map(|r| format!(" r{r}")).unwrap_or_default();
                l.text = format!("{short}{suffix}{rank}");
            }
        }
        Labels { hosts, devices }
    }
}

/// Each host's first label (`node03` of `node03.cluster.org`) when no
/// other host shortens to the same; names from file stems and IP
/// addresses are kept whole.
fn short_hosts(files: &[FileInfo], host_names: &[String]) -> Vec<String> {
    let stem = |h: usize| {
        files
            .iter()
            .any(|f| f.host_index as usize == h && f.host.is_none())
    };
    let short: Vec<String> = host_names
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
            if clash {
                host_names[h].clone()
            } else {
                s.clone()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) mod tests_support {
    pub(crate) use super::tests::json_options;
}
