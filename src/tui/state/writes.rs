//! The loader's writes as the app sees them (what a quit waits for).

/// Where the loader's writes (stored analyses, the cache entry) are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Writes {
    /// None under way.
    #[default]
    Idle,
    Writing,
    /// Asked to quit while writing: quits when they are done.
    QuitWhenDone,
}
