//! Tolerant readers for SQLite values: exports from different nsys versions
//! (and tools that rewrote them) differ in types and nullability.

use super::intern::Sym;
use rusqlite::Row;
use rusqlite::types::ValueRef;
use std::collections::HashMap;

/// An integer column; NULL, blobs and unparsable text read as `None`.
pub fn int(row: &Row, i: usize) -> rusqlite::Result<Option<i64>> {
    Ok(int_value(row.get_ref(i)?))
}

/// A value read as [`int`] reads a column.
#[inline]
pub fn int_value(v: ValueRef) -> Option<i64> {
    match v {
        ValueRef::Integer(v) => Some(v),
        ValueRef::Real(f) => Some(f as i64),
        ValueRef::Text(t) => std::str::from_utf8(t)
            .ok()
            .and_then(|s| s.trim().parse().ok()),
        ValueRef::Null | ValueRef::Blob(_) => None,
    }
}

/// A text column.
pub fn text(row: &Row, i: usize) -> rusqlite::Result<Option<String>> {
    Ok(match row.get_ref(i)? {
        ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Integer(v) => Some(v.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
        _ => None,
    })
}

/// The `StringIds` table of one export, as interned symbols. Ids are
/// usually dense from 0, so they index a vector; sparse ids use a map.
pub enum StringIds {
    Dense(Vec<Sym>),
    Sparse(HashMap<i64, Sym>),
}

const MISSING: Sym = Sym::MAX;

impl StringIds {
    pub fn new(pairs: Vec<(i64, Sym)>) -> Self {
        let max = pairs.iter().map(|p| p.0).max().unwrap_or(-1);
        let dense = pairs.iter().all(|p| p.0 >= 0) && max < 2 * pairs.len() as i64 + 1024;
        if dense {
            let mut v = vec![MISSING; (max + 1).max(0) as usize];
            for (id, sym) in pairs {
                v[id as usize] = sym;
            }
            StringIds::Dense(v)
        } else {
            StringIds::Sparse(pairs.into_iter().collect())
        }
    }

    pub fn get(&self, id: i64) -> Option<Sym> {
        match self {
            StringIds::Dense(v) => usize::try_from(id)
                .ok()
                .and_then(|i| v.get(i))
                .copied()
                .filter(|&s| s != MISSING),
            StringIds::Sparse(m) => m.get(&id).copied(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_sparse_lookups_agree() {
        let pairs = vec![(0, 5), (2, 7), (3, 9)];
        let d = StringIds::new(pairs.clone());
        assert!(matches!(d, StringIds::Dense(_)));
        assert_eq!(
            (d.get(0), d.get(1), d.get(2), d.get(-1), d.get(99)),
            (Some(5), None, Some(7), None, None)
        );
        let s = StringIds::new(vec![(1 << 40, 1), (-3, 2)]);
        assert!(matches!(s, StringIds::Sparse(_)));
        assert_eq!(
            (s.get(1 << 40), s.get(-3), s.get(0)),
            (Some(1), Some(2), None)
        );
    }
}
