//! The same capture as `nsys export --dynamic-tables=all` writes it instead of
//! `--include-blobs=true`: each NCCL payload's fields in the table of its schema, not in
//! `binaryData`. Laid out as the 3.28.1 schema reference describes: NVTX_EVENTS gains its
//! `eventId` (last, the primary key); `DYNAMIC_NVTXPAYLOAD_DATATYPE_<globalPid>_<domainId>_
//! <schemaId>` holds one row per payload (its `eventId`, then one column per scalar field,
//! unsigned fields widened to signed INTEGER); NVTX_EVENTS_PAYLOAD_SCHEMAS links each event
//! to its table; NVTX_EXPORT_TRANSLATION gives each renamed field's original name.
//!
//! Converted from the blobs already written, so the two exports of one scenario hold the
//! same payloads by construction. Field names are sanitised by a rule of this generator's
//! own (every character outside `[A-Za-z0-9_]` becomes `_`); a reader finds them through
//! the translation table, never by knowing the rule.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::{Transaction, params};

use crate::writer::Strings;

const TABLES_SQL: &str = include_str!("payload_tables.sql");

/// NVTX_EVENTS as schema 3.28.1 declares it: the 2024 columns, then `eventId`.
fn nvtx_events_3_28() -> String {
    let (_, ddl) = crate::ddl::TABLES
        .iter()
        .find(|(name, _)| *name == "NVTX_EVENTS")
        .expect("NVTX_EVENTS is declared");
    let last = "binaryData                  TEXT                                   -- Binary payload. See docs for format.\n)";
    assert!(
        ddl.ends_with(last),
        "the 2024 NVTX_EVENTS ends with binaryData"
    );
    format!(
        "{}binaryData                  TEXT,                                  -- Binary payload. See docs for format.\n    eventId                     INTEGER   NOT NULL   PRIMARY KEY       -- Unique NVTX event row identifier.\n)",
        &ddl[..ddl.len() - last.len()]
    )
}

/// One entry of a payload schema: its name, its width in bytes and where it lies.
struct Entry {
    name: String,
    width: usize,
    offset: usize,
}

/// Bytes of the entry types NCCL's schemas use (nvToolsExtPayload.h): 5 int32, 18 uint64,
/// 22 size_t; a schema id (≥ 2^24) is an enum, 4 bytes.
fn width(kind: i64) -> usize {
    match kind {
        5 => 4,
        18 | 22 => 8,
        k if k >= 1 << 24 => 4,
        other => panic!("no width for payload entry type {other}"),
    }
}

/// The sanitised spelling of a field name (this generator's rule, see the module doc).
fn sanitised(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Rewrites the export in `tx` (written with payload blobs) as a dynamic-tables export.
pub fn convert(tx: &Transaction, strings: &Strings) -> rusqlite::Result<()> {
    // The blob export declares NCCL's schemas already; only their entries are read here.
    let mut schemas: BTreeMap<(i64, i64), Vec<Entry>> = BTreeMap::new();
    {
        let mut st = tx.prepare(
            "SELECT domainId, schemaId, type, name, offset FROM NVTX_PAYLOAD_SCHEMA_ENTRIES ORDER BY domainId, schemaId, idx",
        )?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let entries = schemas.entry((r.get(0)?, r.get(1)?)).or_default();
            let w = width(r.get(2)?);
            let next = entries
                .last()
                .map_or(0, |e| e.offset + e.width)
                .next_multiple_of(w);
            entries.push(Entry {
                name: r.get(3)?,
                width: w,
                offset: r.get::<_, Option<i64>>(4)?.map_or(next, |o| o as usize),
            });
        }
    }
    tx.execute_batch(&format!(
        "ALTER TABLE NVTX_EVENTS RENAME TO NVTX_EVENTS_BLOBS;
         {};
         INSERT INTO NVTX_EVENTS SELECT *, NULL FROM NVTX_EVENTS_BLOBS ORDER BY rowid;
         DROP TABLE NVTX_EVENTS_BLOBS;
         {TABLES_SQL}",
        nvtx_events_3_28()
    ))?;
    // (eventId, globalTid, domain, call name, blob) of every payload.
    let mut payloads = Vec::new();
    {
        let mut st = tx.prepare(
            "SELECT eventId, globalTid, domainId, text, textId, binaryData FROM NVTX_EVENTS
             WHERE binaryData IS NOT NULL ORDER BY eventId",
        )?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            payloads.push((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                // StringIds is written after this: a registered name is the writer's.
                match r.get::<_, Option<String>>(3)? {
                    Some(text) => text,
                    None => strings.rows[r.get::<_, i64>(4)? as usize - 1].1.clone(),
                },
                r.get::<_, Vec<u8>>(5)?,
            ));
        }
    }
    let mut created = BTreeSet::new();
    let mut renamed = BTreeSet::new();
    for (event, tid, domain, name, blob) in payloads {
        let (schema, body) = split(domain, &name, &blob, &schemas);
        let entries = &schemas[&(domain, schema)];
        let pid = tid - tid % 0x100_0000;
        let table = format!("DYNAMIC_NVTXPAYLOAD_DATATYPE_{pid}_{domain}_{schema}");
        let columns: Vec<String> = entries.iter().map(|e| sanitised(&e.name)).collect();
        if created.insert(table.clone()) {
            let cols: Vec<String> = columns.iter().map(|c| format!("\"{c}\" INTEGER")).collect();
            tx.execute_batch(&format!(
                "CREATE TABLE \"{table}\" (eventId INTEGER NOT NULL, {});",
                cols.join(", ")
            ))?;
        }
        for (e, c) in entries.iter().zip(&columns) {
            if *c != e.name {
                renamed.insert((e.name.clone(), c.clone()));
            }
        }
        let values: Vec<i64> = entries
            .iter()
            .map(|e| {
                let b = &body[e.offset..e.offset + e.width];
                match e.width {
                    4 => i32::from_le_bytes(b.try_into().unwrap()) as i64,
                    _ => i64::from_le_bytes(b.try_into().unwrap()),
                }
            })
            .collect();
        let marks = vec!["?"; values.len() + 1].join(", ");
        let mut args: Vec<i64> = vec![event];
        args.extend(values);
        tx.execute(
            &format!("INSERT INTO \"{table}\" VALUES ({marks})"),
            rusqlite::params_from_iter(args),
        )?;
        tx.execute(
            "INSERT INTO NVTX_EVENTS_PAYLOAD_SCHEMAS VALUES (?1, ?2, ?3, ?4)",
            params![event, pid, domain, schema],
        )?;
    }
    for (original, sanitised) in renamed {
        tx.execute(
            "INSERT INTO NVTX_EXPORT_TRANSLATION VALUES (?1, ?2)",
            params![original, sanitised],
        )?;
    }
    // `--include-blobs` is off in such an export.
    tx.execute_batch("UPDATE NVTX_EVENTS SET binaryData = NULL")?;
    Ok(())
}

/// A blob's schema and payload: nsys's record names its schema in a 32-byte header (domain,
/// schema, payload size, total size); a bare payload is the schema NCCL registers for the
/// call.
fn split<'a>(
    domain: i64,
    name: &str,
    blob: &'a [u8],
    schemas: &BTreeMap<(i64, i64), Vec<Entry>>,
) -> (i64, &'a [u8]) {
    let word = |at: usize| u32::from_le_bytes(blob[at..at + 4].try_into().unwrap()) as i64;
    if blob.len() >= 32 && word(0) == domain && schemas.contains_key(&(domain, word(8))) {
        let total = u64::from_le_bytes(blob[24..32].try_into().unwrap());
        assert_eq!(total as usize, blob.len(), "a whole record");
        return (word(8), &blob[32..]);
    }
    (crate::payloads::static_schema(name).into(), blob)
}
