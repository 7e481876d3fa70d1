//! Tolerant readers for SQLite values: exports from different nsys versions
//! (and tools that rewrote them) differ in types and nullability.

use super::intern::{Interner, Sym};
use rusqlite::Row;
use rusqlite::types::ValueRef;
use std::collections::HashMap;

/// An integer column; NULL, blobs and unparsable text read as `None`.
pub fn int(row: &Row, i: usize) -> rusqlite::Result<Option<i64>> {
    Ok(match row.get_ref(i)? {
        ValueRef::Integer(v) => Some(v),
        ValueRef::Real(f) => Some(f as i64),
        ValueRef::Text(t) => std::str::from_utf8(t)
            .ok()
            .and_then(|s| s.trim().parse().ok()),
        _ => None,
    })
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

/// The `StringIds` table of one export, as interned symbols.
pub struct StringIds {
    map: HashMap<i64, Sym>,
}

impl StringIds {
    pub fn new(map: HashMap<i64, Sym>) -> Self {
        StringIds { map }
    }

    /// A name column that holds a StringIds id (or, in some rewritten
    /// exports, the text itself).
    pub fn name(
        &self,
        row: &Row,
        i: usize,
        strings: &mut Interner,
    ) -> rusqlite::Result<Option<Sym>> {
        Ok(match row.get_ref(i)? {
            ValueRef::Integer(id) => self.map.get(&id).copied(),
            ValueRef::Text(t) => Some(strings.intern(&String::from_utf8_lossy(t))),
            _ => None,
        })
    }

    pub fn get(&self, id: i64) -> Option<Sym> {
        self.map.get(&id).copied()
    }
}
