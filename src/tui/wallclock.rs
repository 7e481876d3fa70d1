//! Wall-clock UTC times for the ruler: the capture clock counts ns from
//! the session start, whose UTC time the export records
//! (`TARGET_INFO_SESSION_START_TIME.utcEpochNs`).

use crate::analysis::clock::Alignment;
use crate::profile::Profile;

/// UTC (ns since the Unix epoch) of capture-clock time 0, from the first
/// file that records it, on its timebase as the clock read it (a boot
/// reading under a minute can leave that to the other files).
pub fn utc_start(p: &Profile, a: &Alignment) -> Option<i64> {
    (0..p.files.len()).find_map(|i| a.utc_shift_ns(p, i))
}

/// A UTC instant split into calendar date and time of day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Civil {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub nanos: u32,
}

/// The calendar date and time of `epoch_ns` (proleptic Gregorian, UTC).
pub fn civil(epoch_ns: i64) -> Civil {
    let secs = epoch_ns.div_euclid(1_000_000_000);
    let nanos = epoch_ns.rem_euclid(1_000_000_000) as u32;
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400) as u32;
    // Days to civil date (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    Civil {
        year,
        month,
        day,
        hour: sod / 3600,
        minute: sod / 60 % 60,
        second: sod % 60,
        nanos,
    }
}

/// Now, in ns since the epoch.
fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// Now as ISO 8601 UTC: `2026-12-04T22:15:00Z`.
pub fn iso_now() -> String {
    let c = civil(now_ns());
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        c.year, c.month, c.day, c.hour, c.minute, c.second
    )
}

/// Now for a file name: `20261204T221500Z`.
pub fn compact_now() -> String {
    iso_now().replace(['-', ':'], "")
}

/// "2026-05-26 07:59 UTC": the title's part, the ruler gives the rest.
pub fn date_and_minute(epoch_ns: i64) -> String {
    let c = civil(epoch_ns);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02} UTC",
        c.year, c.month, c.day, c.hour, c.minute
    )
}

/// A ruler tick: "07:59:50.25" with the decimals `step` (ns between
/// ticks) needs; below 10 µs, ":50.123456" (hours and minutes are in the
/// title) so the label stays within 13 cells.
pub fn tick_label(epoch_ns: i64, step: f64) -> String {
    let c = civil(epoch_ns);
    let decimals = ((1e9 / step).log10().ceil()).clamp(0.0, 9.0) as usize;
    let frac = if decimals == 0 {
        String::new()
    } else {
        let digits = format!("{:09}", c.nanos);
        format!(".{}", &digits[..decimals])
    };
    if decimals > 4 {
        format!(":{:02}{frac}", c.second)
    } else {
        format!("{:02}:{:02}:{:02}{frac}", c.hour, c.minute, c.second)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_match_the_exports_own_utc_text() {
        // From real exports: utcEpochNs and the utcTime text beside it.
        for (ns, text) in [
            (1_779_782_330_176_752_435, "2026-05-26T07:58:50"),
            (1_674_691_657_396_551_185, "2023-01-26T00:07:37"),
            (1_705_446_034_890_745_579, "2024-01-16T23:00:34"),
        ] {
            let c = civil(ns);
            let got = format!(
                "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
                c.year, c.month, c.day, c.hour, c.minute, c.second
            );
            assert_eq!(got, text);
        }
        assert_eq!(civil(0).year, 1970);
        assert_eq!(
            civil(-1),
            Civil {
                year: 1969,
                month: 12,
                day: 31,
                hour: 23,
                minute: 59,
                second: 59,
                nanos: 999_999_999
            }
        );
        // A leap day.
        let c = civil(951_782_400 * 1_000_000_000);
        assert_eq!((c.year, c.month, c.day), (2000, 2, 29));
    }

    #[test]
    fn tick_labels_carry_the_decimals_the_step_needs() {
        let t = 1_779_782_390_288_200_000; // 2026-05-26 07:59:50.2882
        assert_eq!(tick_label(t, 1e9), "07:59:50");
        assert_eq!(tick_label(t, 1e8), "07:59:50.2");
        assert_eq!(tick_label(t, 1e6), "07:59:50.288");
        assert_eq!(tick_label(t, 1e5), "07:59:50.2882");
        assert_eq!(tick_label(t, 1e3), ":50.288200");
        assert!(tick_label(t, 1.0).len() <= 13);
        assert_eq!(date_and_minute(t), "2026-05-26 07:59 UTC");
    }
}
