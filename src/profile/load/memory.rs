//! Whether an export fits in the memory this process may still use: a
//! refusal in one line, giving both figures, beats being killed halfway.

use std::path::{Path, PathBuf};

/// Peak resident bytes per row of the large tables while loading and
/// analysing (measured: `report all` of the 1 M-kernel scale profile peaks
/// at about 104 B per row, the load alone a little lower).
pub const BYTES_PER_ROW: u64 = 100;

/// Address space each reader thread (one per core) takes beyond its rows:
/// a 2 MiB stack and some slack (a malloc arena the limit refuses is not
/// needed: malloc falls back to the main one). Counted only against
/// `ulimit -v`.
const READER_THREAD_ADDRESS_SPACE: u64 = 4 << 20;

/// Hands memory freed while loading (raw rows, columns replaced when
/// sorted) back to the system: glibc keeps it in its arenas otherwise, and
/// the process would stay as large as the load's peak.
pub fn give_back_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: glibc's malloc_trim takes no pointers and may be called
        // at any time from any thread.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// A limit on this process's memory and what of it is already in use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    /// Where the limit comes from, e.g. `ulimit -v`.
    pub source: String,
    pub limit: u64,
    pub used: u64,
    /// Virtual address space (counts reservations, not only touched pages).
    pub address_space: bool,
}

/// Bytes needed to load `rows` rows, against `limit`.
pub fn estimate(rows: u64, limit: &Limit) -> u64 {
    let extra = if limit.address_space {
        READER_THREAD_ADDRESS_SPACE
            .saturating_mul(super::ranges::ReadPlan::default().readers as u64)
    } else {
        0
    };
    rows.saturating_mul(BYTES_PER_ROW).saturating_add(extra)
}

/// `Err` with one sentence when `rows` would not fit under one of `limits`.
pub fn check(rows: u64, limits: &[Limit]) -> Result<(), String> {
    for l in limits {
        let need = estimate(rows, l);
        let left = l.limit.saturating_sub(l.used);
        if need > left {
            return Err(format!(
                "too large for this process's memory limit: its {rows} rows need about {} to load, but {} leaves {} ({} limit, {} in use)",
                size(need),
                l.source,
                size(left),
                size(l.limit),
                size(l.used)
            ));
        }
    }
    Ok(())
}

fn size(bytes: u64) -> String {
    const MIB: f64 = (1u64 << 20) as f64;
    let b = bytes as f64;
    if b >= 1024.0 * MIB {
        format!("{:.1} GiB", b / (1024.0 * MIB))
    } else {
        format!("{:.1} MiB", b / MIB)
    }
}

/// The limits that apply to this process now: `ulimit -v` and the memory
/// limit of its cgroup (v2 `memory.max`, v1 `memory.limit_in_bytes`, the
/// tightest along the path to the root).
pub fn current_limits() -> Vec<Limit> {
    let read = |p: &Path| std::fs::read_to_string(p).ok();
    let status = read(Path::new("/proc/self/status")).unwrap_or_default();
    let mut out = Vec::new();
    if let Some(limit) = read(Path::new("/proc/self/limits"))
        .as_deref()
        .and_then(address_space_limit)
    {
        out.push(Limit {
            source: "ulimit -v".to_string(),
            limit,
            used: status_bytes(&status, "VmSize:").unwrap_or(0),
            address_space: true,
        });
    }
    let cgroup = read(Path::new("/proc/self/cgroup")).unwrap_or_default();
    let tightest = cgroup_limit_files(&cgroup, Path::new("/sys/fs/cgroup"))
        .into_iter()
        .filter_map(|f| Some((read(&f).as_deref().and_then(limit_value)?, f)))
        .min();
    if let Some((limit, file)) = tightest {
        out.push(Limit {
            source: format!("the cgroup's {}", file.display()),
            limit,
            used: status_bytes(&status, "VmRSS:").unwrap_or(0),
            address_space: false,
        });
    }
    out
}

/// The soft "Max address space" of `/proc/self/limits`; `None` when
/// unlimited.
pub fn address_space_limit(proc_limits: &str) -> Option<u64> {
    let line = proc_limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    line["Max address space".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// A `kB` figure of `/proc/self/status`, in bytes.
pub fn status_bytes(status: &str, key: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line[key.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kb * 1024)
}

/// A cgroup limit file's value; `None` for "max" and v1's "no limit"
/// (a number near 2⁶³).
pub fn limit_value(text: &str) -> Option<u64> {
    let v: u64 = text.trim().parse().ok()?;
    (v < 1 << 60).then_some(v)
}

/// The limit files that apply to the process whose `/proc/self/cgroup` is
/// `proc_cgroup`: its own cgroup's and every ancestor's, v2 and v1.
pub fn cgroup_limit_files(proc_cgroup: &str, root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for line in proc_cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (base, file) = if controllers.is_empty() {
            (root.to_path_buf(), "memory.max")
        } else if controllers.split(',').any(|c| c == "memory") {
            (root.join("memory"), "memory.limit_in_bytes")
        } else {
            continue;
        };
        let mut dir = base.join(path.trim_start_matches('/'));
        loop {
            out.push(dir.join(file));
            if dir == base || !dir.pop() {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(limit: u64, used: u64, address_space: bool) -> Limit {
        Limit {
            source: "ulimit -v".to_string(),
            limit,
            used,
            address_space,
        }
    }

    #[test]
    fn refuses_only_what_does_not_fit_and_gives_both_figures() {
        let rows = 100_000_000; // about 9.3 GiB
        assert_eq!(check(rows, &[]), Ok(()));
        assert_eq!(check(rows, &[limit(16 << 30, 1 << 30, false)]), Ok(()));
        let e = check(rows, &[limit(8 << 30, 1 << 30, false)]).unwrap_err();
        assert!(e.contains("need about 9.3 GiB"), "{e}");
        assert!(e.contains("ulimit -v leaves 7.0 GiB"), "{e}");
        assert!(e.contains("8.0 GiB limit, 1.0 GiB in use"), "{e}");
        // What is in use counts: a limit already spent refuses anything.
        assert!(check(1, &[limit(1 << 30, 2 << 30, false)]).is_err());
        // Address space also pays for the reader threads' reservations.
        let small = limit(8 << 20, 0, true);
        assert!(check(1, &[small]).is_err());
        assert_eq!(check(u64::MAX, &[]), Ok(()));
        assert!(check(u64::MAX, &[limit(1 << 62, 0, false)]).is_err());
    }

    #[test]
    fn reads_ulimit_v_from_proc_limits() {
        let unlimited = "Limit                     Soft Limit           Hard Limit           Units     \n\
                         Max address space         unlimited            unlimited            bytes     \n";
        assert_eq!(address_space_limit(unlimited), None);
        let set = "Max cpu time              unlimited            unlimited            seconds   \n\
                   Max address space         1073741824           unlimited            bytes     \n";
        assert_eq!(address_space_limit(set), Some(1 << 30));
        assert_eq!(
            status_bytes("VmPeak:\t  9 kB\nVmSize:\t  2048 kB\n", "VmSize:"),
            Some(2 << 20)
        );
    }

    #[test]
    fn finds_cgroup_limit_files_v2_and_v1() {
        let root = Path::new("/sys/fs/cgroup");
        assert_eq!(
            cgroup_limit_files("0::/user.slice/job\n", root),
            vec![
                root.join("user.slice/job/memory.max"),
                root.join("user.slice/memory.max"),
                root.join("memory.max"),
            ]
        );
        assert_eq!(
            cgroup_limit_files("5:devices:/\n4:memory:/batch/7\n0::/\n", root),
            vec![
                root.join("memory/batch/7/memory.limit_in_bytes"),
                root.join("memory/batch/memory.limit_in_bytes"),
                root.join("memory/memory.limit_in_bytes"),
                root.join("memory.max"),
            ]
        );
        assert_eq!(limit_value("max\n"), None);
        assert_eq!(limit_value("9223372036854771712\n"), None);
        assert_eq!(limit_value("4294967296\n"), Some(4 << 30));
    }
}
