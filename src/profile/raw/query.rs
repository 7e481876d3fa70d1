//! SQLite's C API for the loader's hot loop. rusqlite's typed reads cost
//! a column count, a column type and a column read, each taking and
//! leaving the connection's mutex — about a third of a first open's time
//! went there (perf on 1 M kernels). Here a stepped row's value costs one
//! `sqlite3_column_value` and one type test, and a scan through
//! [`each_through_sink`] costs one type test per value.

use crate::profile::rows;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, ffi};
use std::ffi::{CStr, c_char, c_int};
use std::marker::PhantomData;

/// A prepared statement of one connection, finalized when dropped.
pub struct Query<'c> {
    stmt: *mut ffi::sqlite3_stmt,
    db: *mut ffi::sqlite3,
    columns: usize,
    /// The statement must not outlive its connection.
    _conn: PhantomData<&'c Connection>,
}

/// The current row of a [`Query`], valid until the next step; or the
/// arguments of one call of [`each_through_sink`]'s function.
pub struct Row<'q> {
    stmt: *mut ffi::sqlite3_stmt,
    /// The row's values when SQLite passed them as a function's arguments
    /// (null when they are read from `stmt`).
    args: *mut *mut ffi::sqlite3_value,
    columns: usize,
    _query: PhantomData<&'q mut ()>,
}

/// The connection's last error as rusqlite says it, so that callers map
/// it to a message as they map any other SQLite error.
fn error(db: *mut ffi::sqlite3, code: c_int) -> rusqlite::Error {
    // SAFETY: `db` is an open connection; the message is copied at once.
    let message = unsafe {
        let m = ffi::sqlite3_errmsg(db);
        (!m.is_null()).then(|| CStr::from_ptr(m).to_string_lossy().into_owned())
    };
    rusqlite::Error::SqliteFailure(ffi::Error::new(code), message)
}

impl<'c> Query<'c> {
    pub fn prepare(conn: &'c Connection, sql: &str) -> rusqlite::Result<Query<'c>> {
        let len = c_int::try_from(sql.len()).map_err(|_| rusqlite::Error::InvalidQuery)?;
        // SAFETY: the handle stays valid while `conn` is borrowed, and
        // `Query` borrows it; the SQL is passed with its length, so it
        // needs no terminating NUL.
        unsafe {
            let db = conn.handle();
            let mut stmt = std::ptr::null_mut();
            let rc = ffi::sqlite3_prepare_v2(
                db,
                sql.as_ptr().cast::<c_char>(),
                len,
                &mut stmt,
                std::ptr::null_mut(),
            );
            if rc != ffi::SQLITE_OK {
                ffi::sqlite3_finalize(stmt);
                return Err(error(db, rc));
            }
            if stmt.is_null() {
                return Err(rusqlite::Error::InvalidQuery);
            }
            let columns = ffi::sqlite3_column_count(stmt).max(0) as usize;
            Ok(Query {
                stmt,
                db,
                columns,
                _conn: PhantomData,
            })
        }
    }

    /// The next row, `None` after the last one.
    pub fn next(&mut self) -> rusqlite::Result<Option<Row<'_>>> {
        // SAFETY: `stmt` is a live statement of a connection used only by
        // this thread (rows borrow the query mutably, so no value read
        // from the previous row outlives this step).
        match unsafe { ffi::sqlite3_step(self.stmt) } {
            ffi::SQLITE_ROW => Ok(Some(Row {
                stmt: self.stmt,
                args: std::ptr::null_mut(),
                columns: self.columns,
                _query: PhantomData,
            })),
            ffi::SQLITE_DONE => Ok(None),
            rc => Err(error(self.db, rc)),
        }
    }
}

impl Drop for Query<'_> {
    fn drop(&mut self) {
        // SAFETY: finalized once, here.
        unsafe {
            ffi::sqlite3_finalize(self.stmt);
        }
    }
}

impl Row<'_> {
    /// Column `i`'s value object; `i` is below `columns`.
    ///
    /// # Safety
    /// The row is current (its statement on it, or its function call
    /// running).
    #[inline(always)]
    unsafe fn value_at(&self, i: usize) -> *mut ffi::sqlite3_value {
        // SAFETY: as the caller promises; `args` holds `columns` values.
        unsafe {
            if self.args.is_null() {
                ffi::sqlite3_column_value(self.stmt, i as c_int)
            } else {
                *self.args.add(i)
            }
        }
    }

    /// Column `i` as an integer, read as [`rows::int`] reads one: NULL,
    /// blobs and unparsable text read as `None`.
    #[inline(always)]
    pub fn int(&self, i: usize) -> Option<i64> {
        match self.integer(i) {
            Ok(v) => Some(v),
            // Common too (optional columns, columns not selected): no call.
            Err(ValueRef::Null) => None,
            Err(other) => rows::int_value(other),
        }
    }

    /// Column `i` when it holds an integer, the common case, read without
    /// building a [`ValueRef`]; `Err` with the value otherwise.
    #[inline(always)]
    fn integer(&self, i: usize) -> Result<i64, ValueRef<'_>> {
        if i >= self.columns {
            return Err(ValueRef::Null);
        }
        // SAFETY: as in `get`.
        unsafe {
            let v = self.value_at(i);
            match ffi::sqlite3_value_type(v) {
                ffi::SQLITE_INTEGER => Ok(ffi::sqlite3_value_int64(v)),
                ffi::SQLITE_NULL => Err(ValueRef::Null),
                _ => Err(self.get(i)),
            }
        }
    }

    /// Column `i`'s value; a column the SELECT does not have reads as NULL.
    #[inline]
    pub fn get(&self, i: usize) -> ValueRef<'_> {
        if i >= self.columns {
            return ValueRef::Null;
        }
        // SAFETY: `i` is a column of the statement, which is on a row.
        // The value is the row's own (SQLite calls it "unprotected"), read
        // on the thread that owns the connection; text and blob bytes stay
        // valid until the next step, which needs the query this row
        // borrows. The pointer is read before the length, as SQLite asks.
        unsafe {
            let v = self.value_at(i);
            match ffi::sqlite3_value_type(v) {
                ffi::SQLITE_INTEGER => ValueRef::Integer(ffi::sqlite3_value_int64(v)),
                ffi::SQLITE_FLOAT => ValueRef::Real(ffi::sqlite3_value_double(v)),
                ffi::SQLITE_TEXT => {
                    let p = ffi::sqlite3_value_text(v);
                    let n = ffi::sqlite3_value_bytes(v).max(0) as usize;
                    ValueRef::Text(bytes(p, n))
                }
                ffi::SQLITE_BLOB => {
                    let p = ffi::sqlite3_value_blob(v).cast::<u8>();
                    let n = ffi::sqlite3_value_bytes(v).max(0) as usize;
                    ValueRef::Blob(bytes(p, n))
                }
                _ => ValueRef::Null,
            }
        }
    }
}

/// The aggregate function [`each_through_sink`]'s SELECT passes each
/// row's values to: `SELECT rankline_row(a, b, …) FROM t WHERE …`.
pub const SINK: &str = "rankline_row";

/// What one [`each_through_sink`] call hands its function's steps.
struct Sink<'f> {
    f: &'f mut dyn FnMut(&Row<'_>) -> rusqlite::Result<()>,
    /// Why the scan stopped, when `f` stopped it.
    failed: Option<Stopped>,
}

enum Stopped {
    Error(rusqlite::Error),
    Panic(Box<dyn std::any::Any + Send>),
}

/// One row: `f` on the function's arguments.
unsafe extern "C" fn sink_step(
    ctx: *mut ffi::sqlite3_context,
    n: c_int,
    argv: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: the function's user data is the `Sink` that
    // `each_through_sink` registered it with and keeps alive (and
    // unregisters) around the only statement that calls it; `argv` holds
    // `n` values, valid during this call.
    unsafe {
        let sink = &mut *ffi::sqlite3_user_data(ctx).cast::<Sink>();
        let row = Row {
            stmt: std::ptr::null_mut(),
            args: argv,
            columns: n.max(0) as usize,
            _query: PhantomData,
        };
        let stopped =
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (sink.f)(&row))) {
                Ok(Ok(())) => return,
                Ok(Err(e)) => Stopped::Error(e),
                Err(panic) => Stopped::Panic(panic),
            };
        sink.failed = Some(stopped);
        // Ends the statement with an error at once.
        ffi::sqlite3_result_error(ctx, c"stopped by the reader".as_ptr(), -1);
    }
}

unsafe extern "C" fn sink_final(ctx: *mut ffi::sqlite3_context) {
    // SAFETY: `ctx` is this call's context.
    unsafe { ffi::sqlite3_result_null(ctx) }
}

/// Runs `sql`, a SELECT of one [`SINK`] call over a table, calling `f`
/// with the call's arguments for each row the scan visits, in its order.
///
/// The same rows as a plain SELECT, read at less cost: SQLite's virtual
/// machine runs the whole scan in one step and hands each row's values
/// over as an argument array, where stepping row by row and asking each
/// column's value costs a return from the machine per row and a mutex
/// and range check per value (a fifth of a large load's read).
pub fn each_through_sink(
    conn: &Connection,
    sql: &str,
    f: &mut dyn FnMut(&Row<'_>) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    let mut sink = Sink { f, failed: None };
    let name = std::ffi::CString::new(SINK).expect("no NUL in the name");
    // SAFETY: the handle stays valid while `conn` is borrowed.
    let db = unsafe { conn.handle() };
    // SAFETY: `db` is open; `sink` outlives the statement, which is
    // finalized before the function is unregistered below. DIRECTONLY:
    // nothing in the file (a view, a trigger) may call it.
    let rc = unsafe {
        ffi::sqlite3_create_function_v2(
            db,
            name.as_ptr(),
            -1,
            ffi::SQLITE_UTF8 | ffi::SQLITE_DIRECTONLY,
            (&raw mut sink).cast(),
            None,
            Some(sink_step),
            Some(sink_final),
            None,
        )
    };
    if rc != ffi::SQLITE_OK {
        return Err(error(db, rc));
    }
    let scanned = (|| {
        let mut q = Query::prepare(conn, sql)?;
        while q.next()?.is_some() {}
        Ok(())
    })();
    // SAFETY: no statement of this call is left; a NULL step and final
    // delete the function.
    unsafe {
        ffi::sqlite3_create_function_v2(
            db,
            name.as_ptr(),
            -1,
            ffi::SQLITE_UTF8 | ffi::SQLITE_DIRECTONLY,
            std::ptr::null_mut(),
            None,
            None,
            None,
            None,
        );
    }
    match sink.failed {
        Some(Stopped::Panic(p)) => std::panic::resume_unwind(p),
        Some(Stopped::Error(e)) => Err(e),
        None => scanned,
    }
}

/// `n` bytes at `p`; empty for a null pointer (SQLite's empty blob, or a
/// conversion that ran out of memory).
///
/// # Safety
/// `p` is null or points at `n` readable bytes that outlive `'a`.
unsafe fn bytes<'a>(p: *const u8, n: usize) -> &'a [u8] {
    if p.is_null() || n == 0 {
        return &[];
    }
    // SAFETY: as the caller promises.
    unsafe { std::slice::from_raw_parts(p, n) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(sql: &str) -> Vec<Vec<String>> {
        let conn = Connection::open_in_memory().unwrap();
        let mut q = Query::prepare(&conn, sql).unwrap();
        let mut out = Vec::new();
        while let Some(row) = q.next().unwrap() {
            out.push(
                (0..4)
                    .map(|i| match row.get(i) {
                        ValueRef::Null => "null".to_string(),
                        ValueRef::Integer(v) => format!("int {v}"),
                        ValueRef::Real(v) => format!("real {v}"),
                        ValueRef::Text(t) => format!("text {}", String::from_utf8_lossy(t)),
                        ValueRef::Blob(b) => format!("blob {b:?}"),
                    })
                    .collect(),
            );
        }
        out
    }

    #[test]
    fn every_storage_class_reads_as_rusqlite_reads_it() {
        assert_eq!(
            values(
                "SELECT 9223372036854775807, -1.5, 'é\u{1b}x', x'00ff' UNION ALL SELECT NULL, x'', '', -9223372036854775808"
            ),
            vec![
                vec![
                    "int 9223372036854775807",
                    "real -1.5",
                    "text é\u{1b}x",
                    "blob [0, 255]"
                ],
                vec!["null", "blob []", "text ", "int -9223372036854775808"],
            ]
        );
    }

    #[test]
    fn a_column_past_the_select_reads_as_null_and_an_empty_result_has_no_row() {
        assert_eq!(
            values("SELECT 1, 2"),
            vec![vec!["int 1", "int 2", "null", "null"]]
        );
        assert!(values("SELECT 1 WHERE 0").is_empty());
    }

    /// Each row's values as [`values`] shows them, read through the sink.
    fn through_sink(conn: &Connection, sql: &str) -> rusqlite::Result<Vec<Vec<String>>> {
        let mut out = Vec::new();
        each_through_sink(conn, sql, &mut |row| {
            out.push(
                (0..3)
                    .map(|i| match row.int(i) {
                        Some(v) => format!("int {v}"),
                        None => format!("{:?}", row.get(i)),
                    })
                    .collect(),
            );
            Ok(())
        })?;
        Ok(out)
    }

    fn table_of_three() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE t(a, b); INSERT INTO t VALUES (3, 'x'), (1, NULL), (2, x'01');",
        )
        .unwrap();
        conn
    }

    #[test]
    fn the_sink_hands_over_every_row_in_scan_order_and_then_is_gone() {
        let conn = table_of_three();
        let rows = through_sink(&conn, "SELECT rankline_row(a, b) FROM t").unwrap();
        assert_eq!(
            rows,
            vec![
                vec!["int 3", "Text([120])", "Null"],
                vec!["int 1", "Null", "Null"],
                vec!["int 2", "Blob([1])", "Null"],
            ]
        );
        // No rows: no call, no error.
        assert!(
            through_sink(&conn, "SELECT rankline_row(a) FROM t WHERE 0")
                .unwrap()
                .is_empty()
        );
        // Unregistered once the scan is over.
        let e = conn.prepare("SELECT rankline_row(1)").err().unwrap();
        assert!(e.to_string().contains("no such function"), "{e}");
    }

    #[test]
    fn the_sink_stops_at_the_readers_error_and_nothing_in_the_file_may_call_it() {
        let conn = table_of_three();
        let mut seen = 0;
        let e = each_through_sink(&conn, "SELECT rankline_row(a) FROM t", &mut |_| {
            seen += 1;
            Err(rusqlite::Error::InvalidQuery)
        })
        .err()
        .unwrap();
        assert!(matches!(e, rusqlite::Error::InvalidQuery), "{e}");
        assert_eq!(seen, 1);
        // A view in the file that calls it is refused, not run.
        conn.execute_batch("CREATE VIEW v AS SELECT rankline_row(a) AS r FROM t")
            .unwrap();
        let e = through_sink(&conn, "SELECT rankline_row(r) FROM v")
            .err()
            .unwrap();
        assert!(e.to_string().contains("unsafe use of rankline_row"), "{e}");
    }

    #[test]
    fn a_panic_in_the_reader_reaches_the_caller() {
        let conn = table_of_three();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            each_through_sink(&conn, "SELECT rankline_row(a) FROM t", &mut |_| {
                panic!("reader bug")
            })
        }));
        let message = caught.err().unwrap();
        assert_eq!(message.downcast_ref::<&str>(), Some(&"reader bug"));
        // The connection still works, and the function is gone.
        assert!(conn.prepare("SELECT rankline_row(1)").is_err());
        assert_eq!(
            through_sink(&conn, "SELECT rankline_row(a) FROM t")
                .unwrap()
                .len(),
            3
        );
    }

    #[test]
    fn errors_carry_sqlite_s_message() {
        let conn = Connection::open_in_memory().unwrap();
        let e = Query::prepare(&conn, "SELECT nope FROM nowhere")
            .err()
            .unwrap();
        assert!(e.to_string().contains("no such table: nowhere"), "{e}");
        // A runtime error surfaces from the step, not as the end of rows.
        let mut q = Query::prepare(&conn, "SELECT abs(-9223372036854775808)").unwrap();
        let e = q.next().err().unwrap();
        assert!(e.to_string().contains("integer overflow"), "{e}");
    }
}
