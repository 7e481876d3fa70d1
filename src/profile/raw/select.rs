//! The SELECT of some of a declared table's columns, and where each
//! column landed in its rows: resolved once per statement, so that reading
//! code names a column, never a position.

use super::query::Row;
use crate::profile::open::{Schema, quote_ident};
use crate::profile::spec::{ColumnSet, Columns, MAX_COLUMNS, TableSpec};
use rusqlite::types::ValueRef;

/// The largest timestamp (either sign) a row may carry, 73 years in ns:
/// beyond it a time cannot be right, and below it the sum of two times
/// plus a UTC shift stays within i64. Rows past it are left out: counted
/// for every table load/suspect.rs judges, skipped for NVTX.
pub const TIME_LIMIT_NS: i64 = 1 << 61;

/// What a read of a declared table selects: some of its columns' values,
/// and of others only whether they hold one.
pub struct Selection<C: 'static> {
    pub spec: &'static TableSpec<C>,
    pub values: ColumnSet<C>,
    /// Selected as `col IS NOT NULL`: SQLite then looks at the column's
    /// type only, and never reads a blob's bytes.
    pub presence: ColumnSet<C>,
}

impl<C: Columns> Selection<C> {
    /// Every column of the table.
    pub fn all(spec: &'static TableSpec<C>) -> Selection<C> {
        Selection::only(spec, spec.columns)
    }

    /// The table's columns among `values`.
    pub fn only(spec: &'static TableSpec<C>, values: ColumnSet<C>) -> Selection<C> {
        Selection {
            spec,
            values,
            presence: ColumnSet::EMPTY,
        }
    }

    /// Also whether each of `columns` holds a value.
    pub fn with_presence(self, columns: ColumnSet<C>) -> Selection<C> {
        Selection {
            presence: columns,
            ..self
        }
    }

    /// `SELECT … FROM table <tail>` of the selected columns this export
    /// has, and where each is in the row. Every required column of the
    /// table is looked for, selected or not: an export without one is
    /// refused whatever part of it is read.
    ///
    /// With `function`, the values are its arguments, one call per row:
    /// `SELECT function(…) FROM table <tail>`.
    pub fn sql(
        &self,
        schema: &Schema,
        tail: &str,
        function: Option<&str>,
    ) -> Result<(String, At<C>), String> {
        let table = self.spec.table;
        let mut at = At::NOWHERE;
        let mut exprs = Vec::new();
        for (i, c) in self.spec.columns.declared() {
            if !schema.has_wanted(table, c.name, c.required)? {
                continue;
            }
            let expr = if self.values.has_index(i) {
                quote_ident(c.name)
            } else if self.presence.has_index(i) {
                at.presence |= 1 << i;
                format!("{} IS NOT NULL", quote_ident(c.name))
            } else {
                continue;
            };
            at.slot[i] = exprs.len() as u8;
            exprs.push(expr);
        }
        if exprs.is_empty() {
            // Nothing selected is here (all optional): rows still count.
            exprs.push("NULL".to_string());
        }
        let values = exprs.join(", ");
        let values = match function {
            Some(f) => format!("{f}({values})"),
            None => values,
        };
        let sql = format!("SELECT {values} FROM {} {tail}", quote_ident(table));
        Ok((sql, at))
    }
}

/// Where each declared column is in a SELECT's row.
pub struct At<C> {
    /// Per declared column; [`NOT_SELECTED`] for one not selected or
    /// missing from the export: past the row's end, it reads as NULL.
    slot: [u8; MAX_COLUMNS],
    /// Columns selected as `IS NOT NULL`.
    presence: u32,
    _columns: std::marker::PhantomData<C>,
}

/// A position no row reaches (a SELECT here has at most [`MAX_COLUMNS`]).
const NOT_SELECTED: u8 = u8::MAX;
const _: () = assert!(MAX_COLUMNS < NOT_SELECTED as usize);

impl<C> At<C> {
    const NOWHERE: At<C> = At {
        slot: [NOT_SELECTED; MAX_COLUMNS],
        presence: 0,
        _columns: std::marker::PhantomData,
    };
}

impl<C: Columns> At<C> {
    #[inline(always)]
    fn of(&self, c: C) -> usize {
        self.slot[c.index()] as usize
    }
}

/// A row read by declared column.
pub struct NamedRow<'r, 'q, C> {
    row: &'r Row<'q>,
    at: &'r At<C>,
}

impl<'r, 'q, C: Columns> NamedRow<'r, 'q, C> {
    #[inline(always)]
    pub fn new(row: &'r Row<'q>, at: &'r At<C>) -> Self {
        NamedRow { row, at }
    }

    /// The column's value; NULL when it was not selected.
    #[inline]
    pub fn value(&self, c: C) -> ValueRef<'r> {
        self.row.get(self.at.of(c))
    }

    /// The column as an integer (see [`Row::int`]); `None` when it was
    /// not selected.
    #[inline(always)]
    pub fn int(&self, c: C) -> Option<i64> {
        self.row.int(self.at.of(c))
    }

    /// Column `c` as a timestamp: `None` past [`TIME_LIMIT_NS`] too.
    #[inline]
    pub fn time(&self, c: C) -> Option<i64> {
        self.int(c)
            .filter(|t| (-TIME_LIMIT_NS..=TIME_LIMIT_NS).contains(t))
    }

    /// Whether the column holds a value (NULL does not), selected for its
    /// value or only for this.
    #[inline]
    pub fn present(&self, c: C) -> bool {
        if self.at.presence & (1 << c.index()) != 0 {
            self.int(c) == Some(1)
        } else {
            !matches!(self.value(c), ValueRef::Null)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::progress::LoadStage;
    use crate::profile::raw::{Rows, scan};
    use crate::profile::spec::columns;
    use rusqlite::Connection;
    use std::path::Path;

    columns! {
        pub enum Col {
            A = "a" (required),
            B = "b",
            C = "c" (text),
            D = "d",
        }
    }

    const T: TableSpec<Col> = TableSpec {
        table: "t",
        columns: Col::ALL,
        filter: "WHERE a > 0",
    };

    /// A table `t` of the given columns, with rows (1, 2, 'x', NULL) and
    /// (3, NULL, NULL, 4) in as many of them as it has.
    fn table(columns: &str) -> (Connection, Schema) {
        let conn = Connection::open_in_memory().unwrap();
        let n = columns.split(',').count();
        let rows = ["1, 2, 'x', NULL", "3, NULL, NULL, 4"]
            .map(|r| r.split(", ").take(n).collect::<Vec<_>>().join(", "));
        conn.execute_batch(&format!(
            "CREATE TABLE t ({columns}); INSERT INTO t VALUES ({}), ({});",
            rows[0], rows[1]
        ))
        .unwrap();
        let schema = Schema::read(&conn, Path::new("t.sqlite")).unwrap();
        (conn, schema)
    }

    /// The SELECT of `read` that [`rows`] runs.
    fn sql(read: &Selection<Col>, schema: &Schema) -> String {
        read.sql(schema, T.filter, None).unwrap().0
    }

    /// Each row's `f`, read through `read`.
    fn rows<T>(
        conn: &Connection,
        schema: &Schema,
        read: &Selection<Col>,
        mut f: impl FnMut(&NamedRow<Col>) -> T,
    ) -> Vec<T> {
        let mut out = Vec::new();
        scan(
            conn,
            schema,
            Path::new("t.sqlite"),
            read,
            Rows::All,
            LoadStage::Kernels,
            &mut |_, _| {},
            |r| {
                out.push(f(&r));
                Ok(())
            },
        )
        .unwrap();
        out
    }

    #[test]
    fn a_part_of_a_table_is_selected_in_declared_order_and_the_rest_reads_null() {
        let (conn, schema) = table("d, c, b, a");
        let read = Selection::only(&T, Col::set(&[Col::D, Col::A]));
        assert_eq!(
            sql(&read, &schema),
            r#"SELECT "a", "d" FROM "t" WHERE a > 0"#
        );
        let got = rows(&conn, &schema, &read, |r| {
            (
                r.int(Col::A),
                r.int(Col::B),
                r.present(Col::C),
                r.int(Col::D),
            )
        });
        // The table's columns are in another order (d, c, b, a), and the
        // filter leaves the second row (a = 4, d = 3).
        assert_eq!(got, [(Some(4), None, false, Some(3))]);
    }

    #[test]
    fn an_optional_column_an_export_lacks_is_not_selected_and_reads_null() {
        let (conn, schema) = table("a, c");
        let read = Selection::all(&T);
        assert_eq!(
            sql(&read, &schema),
            r#"SELECT "a", "c" FROM "t" WHERE a > 0"#
        );
        let got = rows(&conn, &schema, &read, |r| {
            (
                r.int(Col::A),
                r.int(Col::B),
                r.int(Col::C),
                r.present(Col::D),
            )
        });
        assert_eq!(
            got,
            [
                (Some(1), None, Some(2), false),
                (Some(3), None, None, false)
            ]
        );
    }

    #[test]
    fn a_required_column_is_looked_for_even_when_not_selected() {
        let (_conn, schema) = table("b, c");
        let read = Selection::only(&T, Col::set(&[Col::B]));
        let err = read.sql(&schema, T.filter, None).err();
        assert_eq!(err.as_deref(), Some("table t lacks its column a"));
    }

    #[test]
    fn a_presence_column_says_whether_it_holds_a_value_without_its_value() {
        let (conn, schema) = table("a, b, c, d");
        let read =
            Selection::only(&T, Col::set(&[Col::A, Col::B])).with_presence(Col::set(&[Col::C]));
        assert_eq!(
            sql(&read, &schema),
            r#"SELECT "a", "b", "c" IS NOT NULL FROM "t" WHERE a > 0"#
        );
        let got = rows(&conn, &schema, &read, |r| {
            (r.present(Col::B), r.present(Col::C), r.present(Col::D))
        });
        assert_eq!(got, [(true, true, false), (false, false, false)]);
    }

    #[test]
    fn a_selection_of_columns_the_export_lacks_still_reads_its_rows() {
        let (conn, schema) = table("a, c");
        let read = Selection::only(&T, Col::set(&[Col::B, Col::D]));
        assert_eq!(sql(&read, &schema), r#"SELECT NULL FROM "t" WHERE a > 0"#);
        assert_eq!(rows(&conn, &schema, &read, |r| r.int(Col::B)), [None, None]);
    }
}
