//! A wall-clock time typed at `g` while the ruler shows UTC: a time of
//! day (`07:59:50.25`, UTC as the ruler), with a zone (`Z`, `+02:00`,
//! `-0500`) when it comes from a log in another zone, or a full ISO
//! timestamp (`2026-05-26T07:59:50.25Z`, a space for the `T`).

use super::wallclock::civil;

const DAY_NS: i64 = 86_400_000_000_000;

/// Days from 1970-01-01 to a civil date (H. Hinnant's algorithm, the
/// inverse of [`civil`]).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `HH:MM[:SS[.frac]]` → ns since midnight.
fn time_of_day(s: &str) -> Option<i64> {
    let mut parts = s.split(':');
    let h: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next()?.parse().ok()?;
    let sec = parts.next().unwrap_or("0");
    if parts.next().is_some() || !(0..24).contains(&h) || !(0..60).contains(&m) {
        return None;
    }
    let (whole, frac) = sec.split_once('.').unwrap_or((sec, ""));
    let whole: i64 = whole.parse().ok()?;
    if !(0..61).contains(&whole) || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let frac_ns: i64 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<9}").parse().ok()?
    };
    Some(((h * 60 + m) * 60 + whole) * 1_000_000_000 + frac_ns)
}

/// Splits a trailing zone off: `Z` (0), `+02:00` / `-0500` / `+02`
/// (its offset east of UTC, ns); no zone is UTC, the ruler's.
fn zone(s: &str) -> Option<(&str, i64)> {
    if let Some(rest) = s.strip_suffix(['Z', 'z']) {
        return Some((rest, 0));
    }
    let at = s.rfind(['+', '-']);
    // A `-` inside the date (2026-05-26) is not a zone.
    match at {
        Some(i) if s[..i].contains(':') || !s[..i].contains('-') && i > 0 => {
            let (rest, z) = s.split_at(i);
            let sign = if z.starts_with('-') { -1 } else { 1 };
            let digits: String = z[1..].chars().filter(|c| *c != ':').collect();
            if !(digits.len() == 2 || digits.len() == 4)
                || !digits.bytes().all(|b| b.is_ascii_digit())
            {
                return None;
            }
            let h: i64 = digits[..2].parse().ok()?;
            let m: i64 = if digits.len() == 4 {
                digits[2..].parse().ok()?
            } else {
                0
            };
            if h > 23 || m > 59 {
                return None;
            }
            Some((rest, sign * (h * 60 + m) * 60_000_000_000))
        }
        _ => Some((s, 0)),
    }
}

/// UTC ns since the epoch of `input`; a time of day alone falls on the
/// day (of the capture's date, or the days either side) nearest `near`
/// (a capture may cross midnight).
pub fn parse_wall_clock(input: &str, near: i64) -> Result<i64, String> {
    let bad = || {
        format!(
            "not a wall-clock time: {input} (07:59:50.5, 07:59:50+02:00 or 2026-05-26T07:59:50Z)"
        )
    };
    let s = input.trim();
    let (s, offset) = zone(s).ok_or_else(bad)?;
    let (date, time) = match s.split_once(['T', 't', ' ']) {
        Some((d, t)) => (Some(d), t),
        None => (None, s),
    };
    let tod = time_of_day(time).ok_or_else(bad)?;
    let utc = |midnight: i64| midnight + tod - offset;
    match date {
        Some(d) => {
            let mut it = d.split('-');
            let (Some(y), Some(m), Some(dd), None) = (it.next(), it.next(), it.next(), it.next())
            else {
                return Err(bad());
            };
            let (y, m, dd): (i64, u32, u32) = (
                y.parse().map_err(|_| bad())?,
                m.parse().map_err(|_| bad())?,
                dd.parse().map_err(|_| bad())?,
            );
            if !(1..=12).contains(&m) || !(1..=31).contains(&dd) || !(1..=9999).contains(&y) {
                return Err(bad());
            }
            Ok(utc(days_from_civil(y, m, dd) * DAY_NS))
        }
        None => {
            let c = civil(near);
            let day = days_from_civil(c.year, c.month, c.day) * DAY_NS;
            Ok([day - DAY_NS, day, day + DAY_NS]
                .into_iter()
                .map(utc)
                .min_by_key(|t| (t - near).unsigned_abs())
                .unwrap_or(utc(day)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // 2026-05-26 07:59:50.2882 UTC.
    const T: i64 = 1_779_782_390_288_200_000;

    #[test]
    fn a_time_of_day_lands_on_the_captures_day_in_utc() {
        assert_eq!(parse_wall_clock("07:59:50.2882", T), Ok(T));
        assert_eq!(parse_wall_clock("07:59:50.2882Z", T), Ok(T));
        assert_eq!(parse_wall_clock(" 07:59:50.2882 ", T), Ok(T));
        assert_eq!(parse_wall_clock("07:59", T), Ok(T - 50_288_200_000));
    }

    #[test]
    fn a_zone_from_a_log_converts_to_utc() {
        assert_eq!(parse_wall_clock("09:59:50.2882+02:00", T), Ok(T));
        assert_eq!(parse_wall_clock("09:59:50.2882+0200", T), Ok(T));
        assert_eq!(parse_wall_clock("02:59:50.2882-05:00", T), Ok(T));
        assert_eq!(parse_wall_clock("2026-05-26T07:59:50.2882Z", T), Ok(T));
        assert_eq!(parse_wall_clock("2026-05-26 09:59:50.2882+02:00", T), Ok(T));
        assert_eq!(parse_wall_clock("2026-05-26T07:59:50.2882", T), Ok(T));
        // A full timestamp means its own day, wherever the capture is.
        assert_eq!(
            parse_wall_clock("2026-05-27T07:59:50.2882Z", T),
            Ok(T + DAY_NS)
        );
    }

    #[test]
    fn just_after_midnight_is_the_next_day_for_a_capture_just_before_it() {
        let late = T + (16 * 3600) * 1_000_000_000; // 23:59:50 UTC
        let t = parse_wall_clock("00:00:10", late).unwrap();
        assert_eq!(t - late, 20_000_000_000 - 288_200_000);
    }

    #[test]
    fn anything_else_is_refused_with_the_forms_it_takes() {
        for bad in [
            "",
            "7",
            "25:00",
            "07:60",
            "07:59:50.1234567890",
            "07:59+2",
            "2026-13-01T00:00",
            "x:y",
            "07:59:50+02:00:00",
        ] {
            let e = parse_wall_clock(bad, T).unwrap_err();
            assert!(e.contains("07:59:50+02:00"), "{bad}: {e}");
        }
    }
}
