//! NCCL's payloads as `nsys export --dynamic-tables=all` writes them
//! (schema 3.28.1, nsys 2026.4+): not in `binaryData` but one table per
//! payload schema, `DYNAMIC_NVTXPAYLOAD_DATATYPE_<globalPid>_<domainId>_
//! <schemaId>`, one row per payload (its event's `eventId`, then one
//! column per scalar field), each linked to its event through
//! `NVTX_EVENTS_PAYLOAD_SCHEMAS`. A column is named after its field, made
//! an identifier; `NVTX_EXPORT_TRANSLATION` gives the original name of
//! each one renamed. The fields are found by the names NCCL's schema gives
//! them (`payload.rs`), through that table, never by guessing the rule.
//!
//! UNVERIFIED against a real capture: no export here was made with
//! dynamic tables; the layout is the schema reference's.

use std::collections::{BTreeSet, HashMap};

use rusqlite::types::ValueRef;

use super::{Db, LoadError, State};
use crate::profile::payload::{Field, Fields, PayloadTables, Undecodable};

use crate::profile::spec::PAYLOAD_LINK as LINK;
const TRANSLATION: &str = "NVTX_EXPORT_TRANSLATION";

impl State<'_> {
    /// Reads the dynamic payload tables, when the export has them (after
    /// the schemas: their entries name the fields).
    pub(super) fn read_payload_tables(&mut self, db: &Db) -> Result<(), LoadError> {
        if !db.schema.has_table(LINK) {
            return Ok(());
        }
        let mut renamed: HashMap<String, Vec<String>> = HashMap::new();
        let wanted = [("originalName", true), ("sanitizedName", true)];
        db.each_row(self, TRANSLATION, &wanted, "", None, |_, r| {
            if let (ValueRef::Text(o), ValueRef::Text(s)) = (r.get_ref(0)?, r.get_ref(1)?) {
                let (o, s) = (String::from_utf8_lossy(o), String::from_utf8_lossy(s));
                renamed
                    .entry(o.into_owned())
                    .or_default()
                    .push(s.into_owned());
            }
            Ok(())
        })?;
        // The tables the links name (each read once, whatever its rows).
        let mut tables = BTreeSet::new();
        let wanted = [
            ("globalPid", true),
            ("domainId", true),
            ("payloadSchemaID", true),
        ];
        let tail = "GROUP BY globalPid, domainId, payloadSchemaID";
        db.each_row(self, LINK, &wanted, tail, None, |_, r| {
            if let (ValueRef::Integer(g), ValueRef::Integer(d), ValueRef::Integer(s)) =
                (r.get_ref(0)?, r.get_ref(1)?, r.get_ref(2)?)
            {
                tables.insert((g, d, s));
            }
            Ok(())
        })?;
        let mut by_event = HashMap::new();
        for (g, domain, schema) in tables {
            let table = format!("DYNAMIC_NVTXPAYLOAD_DATATYPE_{g}_{domain}_{schema}");
            if !db.schema.has_table(&table) {
                continue;
            }
            let declared = u64::try_from(schema)
                .ok()
                .and_then(|s| self.payload_schemas.field_names(domain, s))
                .map(<[_]>::to_vec);
            // A schema holding none of the fields read (a user's own
            // payloads): its rows are not kept.
            if declared.as_ref().is_some_and(Vec::is_empty) {
                continue;
            }
            // The fields the table has a column for, and those columns.
            let (read, columns): (Vec<Field>, Vec<String>) = declared
                .as_deref()
                .unwrap_or_default()
                .iter()
                .filter_map(|(f, name)| Some((*f, column(db, &table, name, &renamed)?)))
                .unzip();
            let mut wanted = vec![("eventId", true)];
            wanted.extend(columns.iter().map(|c| (c.as_str(), true)));
            db.each_row(self, &table, &wanted, "", None, |_, r| {
                let ValueRef::Integer(event) = r.get_ref(0)? else {
                    return Ok(());
                };
                let fields = match &declared {
                    None => Err(Undecodable::NoSchema),
                    Some(_) => {
                        let mut f = Fields::default();
                        for (k, field) in read.iter().enumerate() {
                            set(&mut f, *field, r.get_ref(k + 1)?);
                        }
                        f.checked()
                    }
                };
                by_event.entry(event).or_insert(fields);
                Ok(())
            })?;
        }
        self.payload_tables = PayloadTables::new(by_event);
        Ok(())
    }
}

/// The column of `table` that holds the field NCCL names `name`: its
/// sanitised name from the translation, or the name itself when it
/// needed none; None when the table has neither.
fn column(
    db: &Db,
    table: &str,
    name: &str,
    renamed: &HashMap<String, Vec<String>>,
) -> Option<String> {
    renamed
        .get(name)
        .into_iter()
        .flatten()
        .map(String::as_str)
        .chain([name])
        .find(|c| *c != "eventId" && db.schema.has_column(table, c))
        .map(str::to_string)
}

/// Sets `field` from a column's value as the payload's bytes would give
/// it: unsigned 64-bit fields come widened to signed INTEGER (their bits
/// are the value); a rank is a 32-bit int, negative meaning none.
fn set(f: &mut Fields, field: Field, v: ValueRef) {
    let int = match v {
        ValueRef::Integer(i) => Some(i),
        ValueRef::Real(x) if x.fract() == 0.0 && x.abs() < 9.0e18 => Some(x as i64),
        _ => None,
    };
    let Some(i) = int else { return };
    let rank = || i32::try_from(i).ok().and_then(|i| u32::try_from(i).ok());
    match field {
        Field::Comm => f.comm = Some(i as u64),
        Field::Bytes => f.bytes = Some(i as u64),
        Field::Peer => f.peer = rank(),
        Field::Rank => f.rank = rank(),
        Field::NRanks => f.nranks = rank(),
    }
}
