//! A value derived from a capture, kept with the key it was derived for:
//! asked again for the same key it is not derived again, and it lives in
//! the capture it came from, so `B` never shows it under the other's name.

/// The latest value derived, and its key.
#[derive(Debug, Clone)]
pub struct Derived<K, V> {
    kept: Option<(K, V)>,
}

impl<K, V> Default for Derived<K, V> {
    fn default() -> Self {
        Derived { kept: None }
    }
}

impl<K: PartialEq, V> Derived<K, V> {
    /// The value for `key`, derived by `derive` only when the one kept is
    /// for another key (or none is).
    pub fn get_or(&mut self, key: K, derive: impl FnOnce() -> V) -> &V {
        if self.kept.as_ref().is_none_or(|(k, _)| *k != key) {
            self.kept = Some((key, derive()));
        }
        &self.kept.as_ref().expect("just kept").1
    }

    /// The value kept for `key`, if it is the one kept.
    pub fn get(&self, key: &K) -> Option<&V> {
        self.kept.as_ref().filter(|(k, _)| k == key).map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::Derived;

    #[test]
    fn derives_once_per_key_and_again_for_a_new_one() {
        let mut d: Derived<&str, usize> = Derived::default();
        let mut calls = 0;
        assert_eq!(
            *d.get_or("a", || {
                calls += 1;
                1
            }),
            1
        );
        assert_eq!(
            *d.get_or("a", || {
                calls += 1;
                2
            }),
            1
        );
        assert_eq!(calls, 1);
        assert_eq!(d.get(&"a"), Some(&1));
        assert_eq!(d.get(&"b"), None);
        assert_eq!(
            *d.get_or("b", || {
                calls += 1;
                3
            }),
            3
        );
        assert_eq!(calls, 2);
        assert_eq!(d.get(&"a"), None);
    }
}
