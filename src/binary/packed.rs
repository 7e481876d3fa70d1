//! Serde for large numeric columns (`#[serde(with = "crate::binary::packed")]`):
//! a `Vec` of numbers stored as one byte string of little-endian values,
//! read back in one pass over the bytes rather than one call per value.
//! Any serde format gets the bytes; rankline stores them with postcard.

use serde::de::{Error, Visitor};
use serde::{Deserializer, Serializer};

/// A number stored as its little-endian bytes.
pub trait Packed: Copy + Sized {
    const SIZE: usize;
    fn put(self, out: &mut Vec<u8>);
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! packed {
    ($($t:ty),*) => {$(
        impl Packed for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(bytes);
                <$t>::from_le_bytes(a)
            }
        }
    )*};
}

packed!(u8, u32, i64);

pub fn serialize<T: Packed, S: Serializer>(v: &[T], s: S) -> Result<S::Ok, S::Error> {
    let mut bytes = Vec::with_capacity(v.len() * T::SIZE);
    for &x in v {
        x.put(&mut bytes);
    }
    s.serialize_bytes(&bytes)
}

pub fn deserialize<'de, T: Packed, D: Deserializer<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    struct Bytes<T>(std::marker::PhantomData<T>);
    impl<T: Packed> Visitor<'_> for Bytes<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(f, "a byte string of {}-byte values", T::SIZE)
        }
        fn visit_bytes<E: Error>(self, b: &[u8]) -> Result<Vec<T>, E> {
            if !b.len().is_multiple_of(T::SIZE) {
                return Err(E::custom(format!(
                    "{} bytes are not whole {}-byte values",
                    b.len(),
                    T::SIZE
                )));
            }
            // The bytes are there already: this allocates no more than them.
            Ok(b.chunks_exact(T::SIZE).map(T::get).collect())
        }
    }
    d.deserialize_bytes(Bytes(std::marker::PhantomData))
}
