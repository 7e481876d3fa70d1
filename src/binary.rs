//! The binary form of the analyses stored in the cache: postcard (serde,
//! compact, not self-describing), floats as their bits so a value read back
//! is the value written, bit for bit; large numeric columns as one byte
//! string each ([`packed`]). Decoding treats its input as untrusted:
//! postcard checks every length against the bytes left, and serde's
//! collections never reserve more than a small cautious bound up front.

pub mod packed;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Why a value could not be encoded or decoded: one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

pub fn to_bytes<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, Error> {
    postcard::to_stdvec(value).map_err(|e| Error(e.to_string()))
}

/// The value `bytes` hold, all of them: bytes left over are an error too
/// (a stored section is exactly one value).
pub fn from_bytes<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Error> {
    let (v, rest) = postcard::take_from_bytes(bytes).map_err(|e| Error(e.to_string()))?;
    if !rest.is_empty() {
        return Err(Error(format!("{} bytes after the value", rest.len())));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};
    use std::collections::BTreeMap;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    enum Shape {
        Unit,
        Newtype(i64),
        Tuple(u8, String),
        Struct { a: f64, b: Option<bool> },
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Everything {
        small: (u8, i8, u16, i16, u32, i32),
        big: (u64, i64, usize),
        float: (f32, f64),
        text: String,
        shapes: Vec<Shape>,
        map: BTreeMap<String, Vec<u32>>,
        nothing: Option<()>,
        range: std::ops::Range<usize>,
        #[serde(with = "crate::binary::packed")]
        column: Vec<i64>,
        #[serde(skip)]
        skipped: u32,
    }

    fn sample() -> Everything {
        Everything {
            small: (1, -2, 3, -4, 5, -6),
            big: (u64::MAX, i64::MIN, 42),
            float: (1.5, -0.1 + 0.2),
            text: "ünïcode \u{1b} text".into(),
            shapes: vec![
                Shape::Unit,
                Shape::Newtype(-7),
                Shape::Tuple(9, "x".into()),
                Shape::Struct {
                    a: f64::NAN,
                    b: Some(true),
                },
            ],
            map: [("k".to_string(), vec![1, 2, 3])].into_iter().collect(),
            nothing: None,
            range: 3..9,
            column: vec![i64::MIN, -1, 0, 7, i64::MAX],
            skipped: 0,
        }
    }

    #[test]
    fn a_value_reads_back_bit_for_bit() {
        let v = sample();
        let bytes = to_bytes(&v).unwrap();
        let back: Everything = from_bytes(&bytes).unwrap();
        // NaN != NaN: compare that one by its bits, the rest as values.
        let bits = |e: &Everything| match &e.shapes[3] {
            Shape::Struct { a, .. } => a.to_bits(),
            _ => 0,
        };
        assert_eq!(bits(&back), bits(&v));
        assert_eq!(back.float.1.to_bits(), v.float.1.to_bits());
        assert_eq!(to_bytes(&back).unwrap(), bytes);
        assert_eq!(back.text, v.text);
        assert_eq!(back.map, v.map);
        assert_eq!(back.range, v.range);
        assert_eq!(back.column, v.column);
    }

    #[test]
    fn every_cut_or_extension_is_an_error_not_a_panic() {
        let bytes = to_bytes(&sample()).unwrap();
        for n in 0..bytes.len() {
            assert!(from_bytes::<Everything>(&bytes[..n]).is_err(), "cut at {n}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(from_bytes::<Everything>(&longer).is_err());
    }

    /// `n` as postcard writes a length (LEB128).
    fn varint(mut n: u64) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                return out;
            }
            out.push(byte | 0x80);
        }
    }

    #[test]
    fn a_forged_length_is_refused_before_allocating() {
        // A Vec<u64> claiming u64::MAX / 2 elements in 8 bytes of data:
        // refused when the bytes run out, having reserved only a little.
        let mut forged = varint(u64::MAX / 2);
        forged.extend_from_slice(&[0; 8]);
        assert!(from_bytes::<Vec<u64>>(&forged).is_err());
        let mut forged = varint(1 << 40);
        forged.extend_from_slice(b"abc");
        assert!(from_bytes::<String>(&forged).is_err());
        // A packed column of 7 bytes is no whole number of i64s.
        #[derive(Debug, Deserialize)]
        struct Column(#[serde(with = "crate::binary::packed")] Vec<i64>);
        let mut partial = varint(7);
        partial.extend_from_slice(&[1; 7]);
        assert!(from_bytes::<Column>(&partial).is_err());
        let whole = from_bytes::<Column>(&[varint(8), 5i64.to_le_bytes().to_vec()].concat());
        assert_eq!(whole.unwrap().0, vec![5]);
    }

    #[test]
    fn flipped_bytes_never_panic() {
        let bytes = to_bytes(&sample()).unwrap();
        for i in 0..bytes.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut b = bytes.clone();
                b[i] ^= flip;
                // Either an error or some value: never a panic or a hang.
                let _ = from_bytes::<Everything>(&b);
            }
        }
    }
}
