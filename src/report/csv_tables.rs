//! The CSV form of a report, read off its JSON: every array of objects in
//! it is a table, named by its path (`skew.groups`, `nccl.devices.streams.ops`).
//! The JSON is the one place a report's figures and units are decided, so
//! the CSV can never say something the JSON does not: ms as decimals, ns
//! where the JSON has ns.
//!
//! A table nested in another one's rows (a device's streams) repeats the
//! fields of the rows it sits in, so that every table stands alone in a
//! spreadsheet. Nested objects become `a.b` columns, lists of plain values
//! one field joined by `;`, null an empty field.

use super::{csv, csv_columns};
use serde_json::{Map, Value};

/// One table: its name, its columns (in the order the JSON first has
/// them) and its rows, cells already as text.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub name: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// The table as RFC 4180 CSV: one header row (a table without rows
    /// too), then a record per row.
    pub fn to_csv(&self) -> String {
        let mut out = csv::record(&self.columns);
        for r in &self.rows {
            out += &csv::record(r);
        }
        out
    }
}

/// Every table of `value`, the JSON of the section `section`, in the
/// order they first appear (a parent before the tables in its rows); the
/// rows of a nested table are those of every row it sits in. An empty
/// list is a table with the header [`csv_columns`] gives it, or none.
pub fn tables(section: &str, value: &Value) -> Vec<Table> {
    let mut found = Vec::new();
    collect(section, value, &[], &mut found);
    let names: Vec<String> = found.iter().map(|(n, _)| n.clone()).collect();
    found
        .into_iter()
        .filter_map(|(name, rows)| {
            if rows.is_empty() {
                let columns = csv_columns::when_empty(&name)?;
                return Some(Table {
                    columns: columns.iter().map(|c| c.to_string()).collect(),
                    name,
                    rows: Vec::new(),
                });
            }
            // An empty list where other rows hold a table is that table.
            let nested = |c: &str| names.contains(&format!("{name}.{c}"));
            let mut columns: Vec<String> = Vec::new();
            for row in &rows {
                for (c, _) in row {
                    if !columns.contains(c) && !nested(c) {
                        columns.push(c.clone());
                    }
                }
            }
            // A field null in some rows and an object in others is the
            // object's columns, empty where it was null.
            let parts = |c: &String| columns.iter().any(|o| o.starts_with(&format!("{c}.")));
            let columns: Vec<String> = columns.iter().filter(|c| !parts(c)).cloned().collect();
            let rows = rows
                .into_iter()
                .map(|row| {
                    columns
                        .iter()
                        .map(|c| {
                            row.iter()
                                .find(|(k, _)| k == c)
                                .map_or_else(String::new, |(_, v)| v.clone())
                        })
                        .collect()
                })
                .collect();
            Some(Table {
                name,
                columns,
                rows,
            })
        })
        .collect()
}

/// A row as (column, cell) pairs, its inherited fields first.
type Row = Vec<(String, String)>;

/// The tables found so far, by name, in the order first seen.
type Found = Vec<(String, Vec<Row>)>;

fn collect(path: &str, value: &Value, inherited: &[(String, String)], found: &mut Found) {
    match value {
        Value::Object(m) => {
            for (k, v) in m {
                collect(&format!("{path}.{k}"), v, inherited, found);
            }
        }
        Value::Array(items) if is_table(items) => {
            let at = match found.iter().position(|(n, _)| n == path) {
                Some(at) => at,
                None => {
                    found.push((path.to_string(), Vec::new()));
                    found.len() - 1
                }
            };
            for item in items {
                let Value::Object(m) = item else { continue };
                let mut row = inherited.to_vec();
                flatten("", m, &mut row);
                found[at].1.push(row.clone());
                // The tables in this row, after this one.
                for (k, v) in m {
                    if holds_table(v) {
                        collect(&format!("{path}.{k}"), v, &row, found);
                    }
                }
            }
        }
        _ => {}
    }
}

/// An array that is a table: empty (a table without rows), or objects.
fn is_table(items: &[Value]) -> bool {
    items.first().is_none_or(Value::is_object)
}

/// Whether a field holds a table, directly or in an object.
fn holds_table(v: &Value) -> bool {
    match v {
        Value::Array(items) => !items.is_empty() && is_table(items),
        Value::Object(m) => m.values().any(holds_table),
        _ => false,
    }
}

/// A row's own cells: every field but the tables in it, nested objects as
/// `a.b`. An inherited column the row has too is the row's own (the
/// nearest row says what its field is).
fn flatten(prefix: &str, m: &Map<String, Value>, row: &mut Row) {
    for (k, v) in m {
        let name = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        let cell = match v {
            Value::Object(inner) => {
                flatten(&name, inner, row);
                continue;
            }
            Value::Array(items) if !items.is_empty() && is_table(items) => continue,
            Value::Array(items) => items.iter().map(scalar).collect::<Vec<_>>().join(";"),
            other => scalar(other),
        };
        match row.iter_mut().find(|(c, _)| *c == name) {
            Some(slot) => slot.1 = cell,
            None => row.push((name, cell)),
        }
    }
}

/// A plain value as a field: numbers as JSON writes them (no separators),
/// strings as they are, null empty.
fn scalar(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        // Lists in lists and objects in lists of plain values: as JSON.
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_tables_repeat_their_rows_fields_and_lists_join() {
        // A list of numbers is no table; a list of nothing may be one.
        let v = json!({
            "span_ns": [1, 2],
            "devices": [
                {"device": 0, "total_ms": 1.5, "ids": [3, 4], "streams": [
                    {"stream": 7, "ops": [{"op": "AllReduce", "count": 2}]},
                    {"stream": 9, "ops": []}
                ]},
                {"device": "node1:0", "total_ms": null, "clock": {"offset_ms": 0.25}, "streams": []},
                {"device": 2, "clock": null}
            ]
        });
        let t = tables("nccl", &v);
        let names: Vec<&str> = t.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "nccl.devices",
                "nccl.devices.streams",
                "nccl.devices.streams.ops"
            ]
        );
        assert_eq!(
            t[0].to_csv(),
            "device,total_ms,ids,clock.offset_ms\n0,1.5,3;4,\nnode1:0,,,0.25\n2,,,\n"
        );
        assert_eq!(
            t[1].to_csv(),
            "device,total_ms,ids,stream\n0,1.5,3;4,7\n0,1.5,3;4,9\n"
        );
        assert_eq!(
            t[2].to_csv(),
            "device,total_ms,ids,stream,op,count\n0,1.5,3;4,7,AllReduce,2\n"
        );
    }
}
