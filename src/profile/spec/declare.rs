//! How a table's columns are declared: the [`columns!`] macro names each
//! column once, as a variant of an enum, and the enum is what reading code
//! names a column by; sets of those columns say which a table has and
//! which a read selects.

use std::marker::PhantomData;

/// One declared column of an export table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    /// Its name in the export.
    pub name: &'static str,
    /// A table without it is not read (the load fails).
    pub required: bool,
    /// Holds text: the `sqlite3` baseline scans it through `length()`.
    pub text: bool,
}

/// The flags a declaration may give a column (see [`columns!`]).
#[allow(non_upper_case_globals)]
pub mod flag {
    pub const required: u8 = 1;
    pub const text: u8 = 2;
}

impl Column {
    pub const fn declared(name: &'static str, flags: u8) -> Column {
        Column {
            name,
            required: flags & flag::required != 0,
            text: flags & flag::text != 0,
        }
    }
}

/// Columns a [`ColumnSet`] can hold: a set is a `u32`.
pub const MAX_COLUMNS: usize = 32;

/// The columns of one declaration, as an enum whose discriminants are
/// their places in [`Columns::DECLARED`] (made by [`columns!`]).
pub trait Columns: Copy + 'static {
    /// Every declared column, in declared order.
    const DECLARED: &'static [Column];

    /// This column's place in [`Columns::DECLARED`].
    fn index(self) -> usize;
}

/// Some of a declaration's columns (kept in declared order whatever the
/// order they were named in).
pub struct ColumnSet<C> {
    bits: u32,
    _columns: PhantomData<C>,
}

// By hand: derived, they would ask `C` to be `Clone` and `Copy` too.
impl<C> Clone for ColumnSet<C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C> Copy for ColumnSet<C> {}

impl<C> PartialEq for ColumnSet<C> {
    fn eq(&self, other: &Self) -> bool {
        self.bits == other.bits
    }
}

impl<C> std::fmt::Debug for ColumnSet<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ColumnSet({:#b})", self.bits)
    }
}

impl<C> ColumnSet<C> {
    pub const EMPTY: ColumnSet<C> = ColumnSet::from_bits(0);

    /// The set of the columns whose declared places are the bits set.
    pub const fn from_bits(bits: u32) -> ColumnSet<C> {
        ColumnSet {
            bits,
            _columns: PhantomData,
        }
    }

    /// The declared places of its columns, as bits.
    pub const fn bits(self) -> u32 {
        self.bits
    }

    pub const fn union(self, other: ColumnSet<C>) -> ColumnSet<C> {
        ColumnSet::from_bits(self.bits | other.bits)
    }

    pub const fn without(self, other: ColumnSet<C>) -> ColumnSet<C> {
        ColumnSet::from_bits(self.bits & !other.bits)
    }

    pub const fn intersects(self, other: ColumnSet<C>) -> bool {
        self.bits & other.bits != 0
    }

    pub const fn includes(self, other: ColumnSet<C>) -> bool {
        self.bits & other.bits == other.bits
    }

    /// Whether the column declared at place `i` is in the set.
    pub const fn has_index(self, i: usize) -> bool {
        i < MAX_COLUMNS && self.bits & (1 << i) != 0
    }
}

impl<C: Columns> ColumnSet<C> {
    pub fn contains(self, c: C) -> bool {
        self.has_index(c.index())
    }

    /// The set's columns in declared order, each with its declared place.
    pub fn declared(self) -> impl Iterator<Item = (usize, &'static Column)> {
        C::DECLARED
            .iter()
            .enumerate()
            .filter(move |&(i, _)| self.has_index(i))
    }
}

/// Declares the columns of one or more export tables once:
///
/// ```text
/// columns! {
///     /// Doc of the enum.
///     pub enum RuntimeColumn {
///         Start = "start" (required),
///         EventClass = "eventClass",
///         Text = "text" (text),
///     }
/// }
/// ```
///
/// makes the enum (each variant a column, named in reading code as
/// `RuntimeColumn::Start`), its [`Columns`] implementation (the variant's
/// discriminant is its place in the declaration), `RuntimeColumn::ALL` and
/// the `const fn RuntimeColumn::set(&[…])` that builds a [`ColumnSet`].
macro_rules! columns {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $(
                $(#[$column_meta:meta])*
                $column:ident = $export:literal $(($($flag:ident),+))?
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name {
            $($(#[$column_meta])* $column),+
        }

        impl $crate::profile::spec::Columns for $name {
            const DECLARED: &'static [$crate::profile::spec::Column] = &[$(
                $crate::profile::spec::Column::declared(
                    $export,
                    0 $($(| $crate::profile::spec::flag::$flag)+)?,
                )
            ),+];

            #[inline(always)]
            fn index(self) -> usize {
                self as usize
            }
        }

        const _: () = assert!(
            <$name as $crate::profile::spec::Columns>::DECLARED.len()
                <= $crate::profile::spec::MAX_COLUMNS
        );

        impl $name {
            /// Every declared column.
            #[allow(dead_code)]
            pub const ALL: $crate::profile::spec::ColumnSet<$name> =
                $crate::profile::spec::ColumnSet::from_bits(
                    ((1u64 << <$name as $crate::profile::spec::Columns>::DECLARED.len()) - 1)
                        as u32,
                );

            /// The set of `columns`.
            #[allow(dead_code)]
            pub const fn set(columns: &[$name]) -> $crate::profile::spec::ColumnSet<$name> {
                let mut bits = 0u32;
                let mut i = 0;
                while i < columns.len() {
                    bits |= 1 << columns[i] as u32;
                    i += 1;
                }
                $crate::profile::spec::ColumnSet::from_bits(bits)
            }
        }
    };
}

pub(crate) use columns;
