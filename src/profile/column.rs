//! A column of plain values: owned while loading, or a read-only view into
//! a memory-mapped cache file. Readers see a slice either way; writing to a
//! mapped column first copies it (loading code only ever writes owned ones).

use super::mapped::Mapping;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

/// Types whose bytes can be viewed in place from a cache file: fixed size,
/// no padding, no pointers; `valid` rejects byte patterns that are not a
/// value (enums, bools).
///
/// # Safety
/// Implementors must be `Copy` plain data whose every byte pattern accepted
/// by `valid` is a valid value.
pub unsafe trait Pod: Copy + Default + std::fmt::Debug + Send + Sync + 'static {
    fn valid(_bytes: &[u8]) -> bool {
        true
    }
}

unsafe impl Pod for i64 {}
unsafe impl Pod for u64 {}
unsafe impl Pod for u32 {}
unsafe impl Pod for u16 {}
unsafe impl Pod for u8 {}
unsafe impl Pod for bool {
    fn valid(bytes: &[u8]) -> bool {
        bytes.iter().all(|&b| b <= 1)
    }
}

/// A mapped region holding `len` values of `T` at `offset`.
#[derive(Clone)]
struct Mapped {
    map: Arc<Mapping>,
    offset: usize,
    len: usize,
}

/// A column of `T`.
pub struct Col<T: Pod> {
    owned: Vec<T>,
    mapped: Option<Mapped>,
}

impl<T: Pod> Col<T> {
    pub fn new() -> Self {
        Col {
            owned: Vec::new(),
            mapped: None,
        }
    }

    /// A view of `len` values at byte `offset` of `map`, if the bytes fit,
    /// are aligned for `T` and are valid values.
    pub fn from_map(map: &Arc<Mapping>, offset: usize, len: usize) -> Option<Self> {
        let size = len.checked_mul(std::mem::size_of::<T>())?;
        let bytes = map.get(offset..offset.checked_add(size)?)?;
        if !(bytes.as_ptr() as usize).is_multiple_of(std::mem::align_of::<T>()) || !T::valid(bytes)
        {
            return None;
        }
        Some(Col {
            owned: Vec::new(),
            mapped: Some(Mapped {
                map: map.clone(),
                offset,
                len,
            }),
        })
    }

    /// The values as bytes (for writing a cache file).
    pub fn as_bytes(&self) -> &[u8] {
        let s: &[T] = self;
        // SAFETY: Pod types are plain data without padding.
        unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
    }

    /// Whether the values live in a mapped file.
    pub fn is_mapped(&self) -> bool {
        self.mapped.is_some()
    }

    fn vec(&mut self) -> &mut Vec<T> {
        if let Some(m) = self.mapped.take() {
            // SAFETY: checked by `from_map`.
            let s: &[T] = unsafe {
                std::slice::from_raw_parts(m.map.as_ptr().add(m.offset).cast::<T>(), m.len)
            };
            self.owned = s.to_vec();
        }
        &mut self.owned
    }

    pub fn push(&mut self, v: T) {
        self.vec().push(v);
    }

    pub fn reserve(&mut self, n: usize) {
        self.vec().reserve(n);
    }

    /// Makes `owned` this column's values and leaves in `owned` the
    /// column's old buffer (empty when the column was mapped).
    pub fn swap_owned(&mut self, owned: &mut Vec<T>) {
        self.mapped = None;
        std::mem::swap(&mut self.owned, owned);
    }

    /// Moves all values of `other` to the end of this column.
    pub fn append(&mut self, other: &mut Col<T>) {
        let mut moved = std::mem::take(other.vec());
        let mine = self.vec();
        if mine.is_empty() {
            // Take the other's buffer rather than copying it.
            *mine = moved;
        } else {
            mine.append(&mut moved);
        }
    }
}

impl<T: Pod> Deref for Col<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match &self.mapped {
            // SAFETY: `from_map` checked bounds, alignment and validity; the
            // map is read-only and lives as long as this column.
            Some(m) => unsafe {
                std::slice::from_raw_parts(m.map.as_ptr().add(m.offset).cast::<T>(), m.len)
            },
            None => &self.owned,
        }
    }
}

impl<T: Pod> DerefMut for Col<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.vec()
    }
}

impl<T: Pod> Default for Col<T> {
    fn default() -> Self {
        Col::new()
    }
}

impl<T: Pod> Clone for Col<T> {
    fn clone(&self) -> Self {
        Col {
            owned: self.owned.clone(),
            mapped: self.mapped.clone(),
        }
    }
}

impl<T: Pod> std::fmt::Debug for Col<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Col[{}{}]",
            self.len(),
            if self.is_mapped() { ", mapped" } else { "" }
        )
    }
}

impl<T: Pod> FromIterator<T> for Col<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Col {
            owned: iter.into_iter().collect(),
            mapped: None,
        }
    }
}

impl<T: Pod> From<Vec<T>> for Col<T> {
    fn from(owned: Vec<T>) -> Self {
        Col {
            owned,
            mapped: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_column_behaves_like_a_vec() {
        let mut c: Col<i64> = Col::new();
        c.push(3);
        c.push(1);
        let mut d: Col<i64> = vec![7].into();
        c.append(&mut d);
        assert_eq!(&c[..], &[3, 1, 7]);
        assert!(d.is_empty());
        c.sort_unstable();
        assert_eq!(&c[..], &[1, 3, 7]);
        assert_eq!(c.as_bytes().len(), 24);
    }

    #[test]
    fn mapped_column_reads_in_place_and_copies_on_write() {
        let dir = std::env::temp_dir().join(format!("rankline-col-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("col.bin");
        let vals: Vec<u32> = vec![10, 20, 30];
        let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(&f, [vec![0u8; 8], bytes].concat()).unwrap();
        let map = Arc::new(Mapping::from(unsafe {
            memmap2::Mmap::map(&std::fs::File::open(&f).unwrap()).unwrap()
        }));
        let mut c: Col<u32> = Col::from_map(&map, 8, 3).unwrap();
        assert!(c.is_mapped());
        assert_eq!(&c[..], &[10, 20, 30]);
        assert!(Col::<u32>::from_map(&map, 8, 4).is_none(), "past the end");
        assert!(Col::<u32>::from_map(&map, 2, 1).is_none(), "misaligned");
        assert!(
            Col::<bool>::from_map(&map, 8, 2).is_none(),
            "10 is not a bool"
        );
        c.push(40);
        assert!(!c.is_mapped());
        assert_eq!(&c[..], &[10, 20, 30, 40]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
