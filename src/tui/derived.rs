//! Values derived from a capture, kept with the key they were derived
//! for: asked again for the same key they are not derived again, and they
//! live in the capture they came from, so `B` never shows them under the
//! other's name. [`Derived`] derives on the caller's thread, [`Latest`]
//! keeps what jobs off it derive.

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

/// A value derived off the UI thread for the newest key asked (gitui's
/// `AsyncSingleJob`): one job at a time. A key asked while one runs is
/// not queued: when the job ends, the caller asks again for the key its
/// state wants then, so the requests in between are never computed. The
/// newest result is kept; the frame shows it only for the key it wants
/// and says "computing…" otherwise.
#[derive(Debug, Clone)]
pub struct Latest<K, V> {
    kept: Option<(K, V)>,
    running: Option<K>,
}

impl<K, V> Default for Latest<K, V> {
    fn default() -> Self {
        Latest {
            kept: None,
            running: None,
        }
    }
}

impl<K: PartialEq + Clone, V> Latest<K, V> {
    /// Whether a job for `key` is to start now: its value is not kept and
    /// no job runs. True marks it running.
    pub fn start(&mut self, key: &K) -> bool {
        if self.running.is_some() || self.get(key).is_some() {
            return false;
        }
        self.running = Some(key.clone());
        true
    }

    /// Whether the job running is for `key`.
    pub fn runs(&self, key: &K) -> bool {
        self.running.as_ref() == Some(key)
    }

    /// The running job's result (for `key`): kept when `keep` (it may be
    /// of data the capture no longer holds).
    pub fn done(&mut self, key: K, value: V, keep: bool) {
        if self.runs(&key) {
            self.running = None;
        }
        if keep {
            self.kept = Some((key, value));
        }
    }

    /// The value for `key`, when it is the one kept.
    pub fn get(&self, key: &K) -> Option<&V> {
        self.kept.as_ref().filter(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The newest value kept, whatever its key.
    pub fn kept(&self) -> Option<(&K, &V)> {
        self.kept.as_ref().map(|(k, v)| (k, v))
    }

    /// Whether a job runs.
    pub fn running(&self) -> bool {
        self.running.is_some()
    }

    /// Forgets what is kept; a job running still ends with [`Self::done`].
    pub fn forget(&mut self) {
        self.kept = None;
    }
}

#[cfg(test)]
mod tests {
    use super::{Derived, Latest};

    #[test]
    fn one_job_runs_and_the_key_wanted_when_it_ends_is_the_next() {
        let mut l: Latest<u32, &str> = Latest::default();
        assert!(l.start(&1));
        // Asked while 1 runs: nothing starts (2 and 3 are never computed
        // if 4 is wanted by the time 1 ends).
        assert!(!l.start(&2));
        assert!(!l.start(&3));
        assert!(l.runs(&1));
        l.done(1, "one", true);
        assert_eq!(l.get(&1), Some(&"one"));
        assert_eq!(l.get(&4), None, "computing…");
        assert!(l.start(&4));
        assert!(l.running());
        l.done(4, "four", true);
        assert!(!l.running());
        assert!(!l.start(&4), "kept: not derived again");
        assert_eq!(l.get(&1), None, "only the newest is kept");
        // A result of data no longer held ends its job, and is not kept.
        assert!(l.start(&5));
        l.done(5, "stale", false);
        assert!(!l.running());
        assert_eq!(l.get(&5), None);
        l.forget();
        assert_eq!(l.get(&4), None);
    }

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
