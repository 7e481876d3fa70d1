//! Numbers as text for people: never `NaN` or `inf` (a figure with
//! nothing behind it, such as a share of zero, is `-`, as JSON's `null`),
//! and never hundreds of digits (a percentage given as `1e308` is said in
//! a form a reader can take in). Depends on no layer, so the report and
//! the UI say figures alike.

/// `v` with `decimals` decimals, or `-` when it is not a finite number.
pub fn fixed(v: f64, decimals: usize) -> String {
    if v.is_finite() {
        format!("{v:.decimals$}")
    } else {
        "-".to_string()
    }
}

/// A threshold the user gave, as short as it was meant: up to 4
/// significant decimals, scientific notation once it has more than 12
/// digits before the point.
pub fn given(v: f64) -> String {
    if !v.is_finite() {
        "-".to_string()
    } else if v.abs() >= 1e12 {
        format!("{v:.3e}")
    } else {
        let s = format!("{v:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Bytes as MiB with one decimal, for a column headed `MiB`.
pub fn mib(bytes: f64) -> String {
    fixed(bytes / (1024.0 * 1024.0), 1)
}

/// Bytes in binary units (GiB, MiB, KiB), as buffer sizes are given.
pub fn bytes(b: u64) -> String {
    const K: f64 = 1024.0;
    let v = b as f64;
    if v >= K * K * K {
        format!("{} GiB", fixed(v / (K * K * K), 2))
    } else if v >= K * K {
        format!("{} MiB", fixed(v / (K * K), 1))
    } else if v >= K {
        format!("{} KiB", fixed(v / K, 1))
    } else {
        format!("{b} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_figure_is_nan_or_inf_or_hundreds_of_digits() {
        assert_eq!(fixed(f64::NAN, 1), "-");
        assert_eq!(fixed(f64::INFINITY, 3), "-");
        assert_eq!(fixed(f64::NEG_INFINITY, 3), "-");
        assert_eq!(fixed(12.345_67, 3), "12.346");
        assert_eq!(given(1e308), "1.000e308");
        assert_eq!(given(5.0), "5");
        assert_eq!(given(2.5), "2.5");
        assert_eq!(given(0.125), "0.125");
        assert_eq!(given(f64::NAN), "-");
    }

    #[test]
    fn bytes_read_in_binary_units() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(4 << 10), "4.0 KiB");
        assert_eq!(bytes(64 << 20), "64.0 MiB");
        assert_eq!(bytes(3 << 30), "3.00 GiB");
        assert_eq!(bytes(u64::MAX), "17179869184.00 GiB");
        assert_eq!(mib((3 << 19) as f64), "1.5");
    }
}
