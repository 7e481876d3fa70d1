//! Opening an export strictly read-only and discovering its schema.

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Why a file could not be loaded: one line, naming the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    pub path: String,
    pub problem: String,
    /// The problem continues a sentence that starts with the path
    /// ("x.nsys-rep is an nsys report; …"), rather than following a colon.
    pub sentence: bool,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Paths and SQLite messages (table names) can hold control characters.
        use crate::text_safe::escape_controls as safe;
        let gap = if self.sentence { " " } else { ": " };
        write!(f, "{}{gap}{}", safe(&self.path), safe(&self.problem))
    }
}

impl std::error::Error for LoadError {}

impl LoadError {
    pub fn new(path: &Path, problem: impl Into<String>) -> Self {
        LoadError {
            path: crate::text_safe::path_text(path),
            problem: problem.into(),
            sentence: false,
        }
    }

    /// An error said as one sentence that starts with the path.
    pub fn sentence(path: &Path, rest: impl Into<String>) -> Self {
        LoadError {
            sentence: true,
            ..LoadError::new(path, rest)
        }
    }

    /// Turns an SQLite error met while reading `path` into a plain sentence.
    pub fn from_sqlite(path: &Path, err: &rusqlite::Error) -> Self {
        use rusqlite::ErrorCode as C;
        let problem = match err.sqlite_error_code() {
            Some(C::NotADatabase) => "not an SQLite database".to_string(),
            Some(C::DatabaseCorrupt) => {
                format!("corrupted or truncated SQLite database ({})", one_line(err))
            }
            Some(C::SystemIoFailure) => format!("read error ({})", one_line(err)),
            Some(C::CannotOpen) => "cannot open the file".to_string(),
            _ => format!("SQLite error: {}", one_line(err)),
        };
        LoadError::new(path, problem)
    }
}

fn one_line(err: &rusqlite::Error) -> String {
    err.to_string().replace('\n', " ")
}

/// An identifier quoted for SQL: any name, `"` included, is safe.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The `file:` URI that opens `path` read-only and immutable, as the loader
/// does (the benchmark's `sqlite3` baseline uses it too).
pub fn readonly_uri(path: &Path) -> String {
    format!("file:{}?mode=ro&immutable=1", uri_path(path))
}

/// Escapes a path for an SQLite `file:` URI, byte for byte: a name that is
/// not UTF-8 (or not ASCII) opens as the file it names.
fn uri_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for &b in path.as_os_str().as_bytes() {
        match b {
            b'%' | b'?' | b'#' => out.push_str(&format!("%{b:02X}")),
            0x21..=0x7E => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Opens a database embedded in the binary (the demo profile), read-only.
pub fn open_embedded(name: &Path, bytes: &'static [u8]) -> Result<Connection, LoadError> {
    let mut conn = Connection::open_in_memory().map_err(|e| LoadError::from_sqlite(name, &e))?;
    conn.deserialize_bytes(rusqlite::MAIN_DB, bytes)
        .map_err(|e| LoadError::from_sqlite(name, &e))?;
    conn.execute_batch("PRAGMA query_only = 1;")
        .map_err(|e| LoadError::from_sqlite(name, &e))?;
    Ok(conn)
}

/// `path`'s metadata when it is a regular file; else one line saying what
/// it is instead (`what`: what it was taken for), a broken symlink and a
/// FIFO included: a rank's file moved away, or one that would block.
pub fn stat_input(path: &Path, what: &str) -> Result<std::fs::Metadata, LoadError> {
    let meta = std::fs::metadata(path).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => match std::fs::read_link(path) {
                Ok(to) => format!(
                    "a broken symlink (to {}, which does not exist)",
                    to.display()
                ),
                Err(_) => "no such file".to_string(),
            },
            std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
            _ => format!("cannot read ({e})"),
        };
        LoadError::new(path, why)
    })?;
    if meta.is_dir() {
        return Err(LoadError::new(path, format!("is a directory, not {what}")));
    }
    if !meta.is_file() {
        // A FIFO or device would block the open, or read forever.
        return Err(LoadError::new(
            path,
            format!("not a regular file, not {what}"),
        ));
    }
    Ok(meta)
}

/// Opens `path` read-only and immutable: SQLite takes no locks and writes
/// no journal, WAL or shm file beside it (clusters' network file systems
/// hang on locks, and the input must never change). The file is read with
/// plain reads, never memory-mapped: a file truncated while it is read
/// (`cp` or `nsys export -f` over it) must give an error, not SIGBUS.
pub fn open_readonly(path: &Path) -> Result<Connection, LoadError> {
    stat_input(path, "an nsys SQLite export")?;
    let meta =
        std::fs::metadata(path).map_err(|e| LoadError::new(path, format!("cannot read ({e})")))?;
    if meta.len() == 0 {
        return Err(LoadError::new(path, "empty file, not an SQLite database"));
    }
    // Read the header ourselves: SQLite would treat some non-database files
    // as empty databases rather than refuse them.
    let mut header = [0u8; 16];
    {
        use std::io::Read;
        let mut f = std::fs::File::open(path)
            .map_err(|e| LoadError::new(path, format!("cannot read ({e})")))?;
        if f.read_exact(&mut header).is_err() || &header != b"SQLite format 3\0" {
            return Err(LoadError::new(path, "not an SQLite database"));
        }
    }
    let uri = readonly_uri(path);
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn =
        Connection::open_with_flags(uri, flags).map_err(|e| LoadError::from_sqlite(path, &e))?;
    conn.execute_batch("PRAGMA query_only = 1; PRAGMA mmap_size = 0;")
        .map_err(|e| LoadError::from_sqlite(path, &e))?;
    Ok(conn)
}

/// What identifies one state of a file: a file rewritten, truncated or
/// replaced while it was read differs in at least one of these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStamp {
    pub len: u64,
    pub modified: Option<std::time::SystemTime>,
    /// Device and inode: another file now at the same path.
    pub identity: (u64, u64),
    /// Change time (seconds, nanoseconds): set by every write, and not
    /// settable by `touch`.
    pub changed: (i64, i64),
}

impl FileStamp {
    pub fn of(path: &Path) -> std::io::Result<FileStamp> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path)?;
        Ok(FileStamp {
            len: m.len(),
            modified: m.modified().ok(),
            identity: (m.dev(), m.ino()),
            changed: (m.ctime(), m.ctime_nsec()),
        })
    }

    /// How `now` differs from this stamp, in words; `None` when it does not.
    pub fn difference(&self, now: &FileStamp) -> Option<String> {
        if self.identity != now.identity {
            Some("replaced by another file".to_string())
        } else if self.len != now.len {
            Some(format!("size {} -> {} bytes", self.len, now.len))
        } else if self.modified != now.modified || self.changed != now.changed {
            Some("modified".to_string())
        } else {
            None
        }
    }
}

/// The tables of an export and their columns.
pub struct Schema {
    tables: HashSet<String>,
    /// Per table, its column names, or why they could not be read (a view
    /// over a dropped table): that matters only if rankline reads it.
    columns: HashMap<String, Result<Vec<String>, String>>,
}

impl Schema {
    pub fn read(conn: &Connection, path: &Path) -> Result<Schema, LoadError> {
        let err = |e: rusqlite::Error| LoadError::from_sqlite(path, &e);
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_master WHERE type IN ('table','view')")
            .map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        let mut tables = HashSet::new();
        while let Some(row) = rows.next().map_err(err)? {
            // A name that is not UTF-8 is none of the tables rankline reads.
            if let ValueRef::Text(name) = row.get_ref(0).map_err(err)?
                && let Ok(name) = std::str::from_utf8(name)
            {
                tables.insert(name.to_string());
            }
        }
        let columns = tables
            .iter()
            .map(|t| (t.clone(), table_columns(conn, t).map_err(|e| one_line(&e))))
            .collect();
        Ok(Schema { tables, columns })
    }

    pub fn has_table(&self, t: &str) -> bool {
        self.tables.contains(t)
    }

    pub fn has_column(&self, t: &str, c: &str) -> bool {
        self.columns
            .get(t)
            .is_some_and(|cols| cols.as_ref().is_ok_and(|cols| cols.iter().any(|x| x == c)))
    }

    pub fn table_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.tables.iter().cloned().collect();
        v.sort();
        v
    }

    /// `SELECT` of the wanted columns by name, `NULL` for the optional ones
    /// this export lacks; `Err` when a required column is missing.
    pub fn select(
        &self,
        table: &str,
        wanted: &[(&str, bool)],
        tail: &str,
    ) -> Result<String, String> {
        let mut parts = Vec::with_capacity(wanted.len());
        for &(col, required) in wanted {
            parts.push(match self.has_wanted(table, col, required)? {
                true => quote_ident(col),
                false => "NULL".to_string(),
            });
        }
        Ok(format!(
            "SELECT {} FROM {} {tail}",
            parts.join(", "),
            quote_ident(table)
        ))
    }

    /// Whether `table` has the column `col`; `Err` when it lacks it and it
    /// is `required`, or when the table's columns could not be read.
    pub fn has_wanted(&self, table: &str, col: &str, required: bool) -> Result<bool, String> {
        if let Some(Err(why)) = self.columns.get(table) {
            return Err(format!("cannot read the columns of table {table} ({why})"));
        }
        match self.has_column(table, col) {
            false if required => Err(format!("table {table} lacks its column {col}")),
            has => Ok(has),
        }
    }

    /// Whether this looks like an nsys export at all.
    pub fn is_nsys_export(&self) -> bool {
        let marker = [
            "StringIds",
            "META_DATA_EXPORT",
            "EXPORT_META_DATA",
            "TARGET_INFO_SESSION_START_TIME",
        ];
        marker.iter().any(|t| self.has_table(t))
            || self
                .tables
                .iter()
                .any(|t| t.starts_with("CUPTI_ACTIVITY_KIND_"))
    }
}

/// The column names of table `t`; the name is bound, never spliced into
/// the SQL.
pub(crate) fn table_columns(conn: &Connection, t: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
    stmt.query_map([t], |r| r.get::<_, String>(0))?.collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_tells_how_a_file_changed() {
        let at = |s| Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(s));
        let a = FileStamp {
            len: 100,
            modified: at(5),
            identity: (1, 2),
            changed: (5, 0),
        };
        assert_eq!(a.difference(&a.clone()), None);
        let shorter = FileStamp {
            len: 40,
            ..a.clone()
        };
        assert_eq!(
            a.difference(&shorter).as_deref(),
            Some("size 100 -> 40 bytes")
        );
        let touched = FileStamp {
            changed: (6, 1),
            ..a.clone()
        };
        assert_eq!(a.difference(&touched).as_deref(), Some("modified"));
        let rewritten = FileStamp {
            modified: at(6),
            ..a.clone()
        };
        assert_eq!(a.difference(&rewritten).as_deref(), Some("modified"));
        let moved = FileStamp {
            identity: (1, 3),
            ..a.clone()
        };
        assert_eq!(
            a.difference(&moved).as_deref(),
            Some("replaced by another file")
        );
    }

    #[test]
    fn quotes_identifiers() {
        assert_eq!(quote_ident("plain"), "\"plain\"");
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
    }

    #[test]
    fn escapes_uri_specials() {
        assert_eq!(
            uri_path(Path::new("/a/b?c#d%e.sqlite")),
            "/a/b%3Fc%23d%25e.sqlite"
        );
    }
}
