//! A string interner: every distinct string is stored once and named by a
//! small integer, so the columnar tables hold `Sym`s instead of strings.

use rustc_hash::FxHashMap;
use std::sync::Arc;

/// The id of an interned string.
pub type Sym = u32;

/// Interned strings; `Sym` 0 is always the empty string.
#[derive(Debug, Clone)]
pub struct Interner {
    strings: Vec<Arc<str>>,
    index: FxHashMap<Arc<str>, Sym>,
}

impl Default for Interner {
    fn default() -> Self {
        let mut interner = Interner {
            strings: Vec::new(),
            index: FxHashMap::default(),
        };
        interner.intern("");
        interner
    }
}

impl Interner {
    /// The id of `s`, adding it when new.
    pub fn intern(&mut self, s: &str) -> Sym {
        if let Some(&sym) = self.index.get(s) {
            return sym;
        }
        let sym = self.strings.len() as Sym;
        let shared: Arc<str> = Arc::from(s);
        self.strings.push(shared.clone());
        self.index.insert(shared, sym);
        sym
    }

    /// The id of `s` if it was interned.
    pub fn lookup(&self, s: &str) -> Option<Sym> {
        self.index.get(s).copied()
    }

    /// The string behind `sym` (empty for an unknown id).
    pub fn get(&self, sym: Sym) -> &str {
        self.strings.get(sym as usize).map_or("", |s| s)
    }

    /// Number of distinct strings.
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// Always false: the empty string is interned at creation.
    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interns_once() {
        let mut i = Interner::default();
        let a = i.intern("ncclDevKernel_SendRecv");
        let b = i.intern("gemm");
        assert_ne!(a, b);
        assert_eq!(i.intern("ncclDevKernel_SendRecv"), a);
        assert_eq!(i.get(a), "ncclDevKernel_SendRecv");
        assert_eq!(i.get(0), "");
        assert_eq!(i.lookup("gemm"), Some(b));
        assert_eq!(i.lookup("nope"), None);
        assert_eq!(i.len(), 3);
    }
}
