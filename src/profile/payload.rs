//! NCCL's NVTX payloads: the layouts the export declares in
//! `NVTX_PAYLOAD_SCHEMAS` / `NVTX_PAYLOAD_SCHEMA_ENTRIES`, and the two
//! fields rankline reads from a call's `binaryData` with them — the
//! communicator id and the message size.
//!
//! UNVERIFIED against a real capture: the real exports here declare the
//! schemas but were exported without payload data. What is assumed, and
//! where it comes from:
//! - a blob is either nsys's record (a 32-byte header — domain id, schema
//!   id, payload size, total size — then the payload) or the bare payload;
//!   the header is taken only when its sizes agree with the blob's length;
//! - a bare payload's schema is the one NCCL registers for the call's name
//!   (`nvtx_payload_schemas.h`: static schema ids from 2^24, AllGather + 4 …);
//! - offsets are the entries' own; an entry without one follows the one
//!   before it at its natural alignment (the NVTX rule for unset offsets).

use std::collections::HashMap;

/// NVTX's first static schema id (`NVTX_PAYLOAD_ENTRY_TYPE_SCHEMA_ID_STATIC_START`).
const STATIC_START: u64 = 1 << 24;
/// `NVTX_PAYLOAD_ENTRY_TYPE_SIZE`: a `size_t`.
const TYPE_SIZE: i64 = 22;
const HEADER: usize = 32;

/// Where a schema keeps the two fields rankline reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Layout {
    /// The static payload size the schema declares (0: not declared).
    pub size: u64,
    pub comm: Option<usize>,
    pub bytes: Option<usize>,
}

/// One schema entry as the export lists it.
#[derive(Debug, Clone)]
pub struct Entry {
    pub idx: i64,
    pub kind: i64,
    pub name: String,
    pub offset: Option<i64>,
}

/// The payload layouts of one export, by (domain id, schema id).
#[derive(Debug, Default, Clone)]
pub struct Schemas {
    layouts: HashMap<(i64, u64), Layout>,
}

/// What one NCCL call's payload says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fields {
    pub comm: Option<u64>,
    pub bytes: Option<u64>,
}

impl Schemas {
    /// From the schema rows (`(domain, schema, payload size)`) and the
    /// entry rows (`(domain, schema, entry)`); rows repeat once per
    /// process in real exports, and the first of each wins.
    pub fn new(schemas: &[(i64, u64, Option<i64>)], entries: Vec<(i64, u64, Entry)>) -> Schemas {
        let mut by_schema: HashMap<(i64, u64), Vec<Entry>> = HashMap::new();
        for (d, s, e) in entries {
            let list = by_schema.entry((d, s)).or_default();
            if !list.iter().any(|x| x.idx == e.idx) {
                list.push(e);
            }
        }
        let sizes: HashMap<(i64, u64), u64> = schemas
            .iter()
            .filter_map(|&(d, s, n)| Some(((d, s), u64::try_from(n?).ok()?)))
            .collect();
        let layouts = by_schema
            .into_iter()
            .map(|(key, mut list)| {
                list.sort_by_key(|e| e.idx);
                let mut layout = layout_of(&list);
                layout.size = sizes.get(&key).copied().unwrap_or(0);
                (key, layout)
            })
            .collect();
        Schemas { layouts }
    }

    /// How many schemas the export declares.
    pub fn count(&self) -> usize {
        self.layouts.len()
    }

    /// The fields of the payload `blob` of the call `name` in `domain`.
    pub fn decode(&self, domain: i64, name: &str, blob: &[u8]) -> Option<Fields> {
        let (schema, payload) = match header(blob) {
            Some(h) => h,
            None => (nccl_schema(name)?, blob),
        };
        let layout = self.layouts.get(&(domain, schema))?;
        let read = |at: Option<usize>| {
            let at = at?;
            let b: [u8; 8] = payload.get(at..at.checked_add(8)?)?.try_into().ok()?;
            Some(u64::from_le_bytes(b))
        };
        let fields = Fields {
            comm: read(layout.comm),
            bytes: read(layout.bytes),
        };
        (fields != Fields::default()).then_some(fields)
    }
}

/// nsys's record header, when `blob` holds one: (schema id, payload).
fn header(blob: &[u8]) -> Option<(u64, &[u8])> {
    let word = |at: usize| -> Option<u64> {
        Some(u64::from_le_bytes(blob.get(at..at + 8)?.try_into().ok()?))
    };
    let half = |at: usize| -> Option<u64> {
        Some(u32::from_le_bytes(blob.get(at..at + 4)?.try_into().ok()?) as u64)
    };
    let size = usize::try_from(word(16)?).ok()?;
    let total = usize::try_from(word(24)?).ok()?;
    let whole = HEADER.checked_add(size)?;
    (total == whole && blob.len() == whole).then_some((half(8)?, &blob[HEADER..]))
}

/// The static schema NCCL registers for its API call `name`.
fn nccl_schema(name: &str) -> Option<u64> {
    let sid = match name.strip_prefix("nccl")? {
        "AllGather" => 4,
        "AllReduce" => 5,
        "Broadcast" => 6,
        "ReduceScatter" => 7,
        "Reduce" => 8,
        "Send" => 9,
        "Recv" => 10,
        "AlltoAll" | "AllToAll" => 16,
        "Gather" => 17,
        "Scatter" => 18,
        _ => return None,
    };
    Some(STATIC_START + sid)
}

/// The offsets of the communicator (the entry NCCL names so) and of the
/// message size (the first `size_t` entry: older NCCL names it "Bytes").
fn layout_of(entries: &[Entry]) -> Layout {
    let mut layout = Layout::default();
    let mut next = 0usize;
    for e in entries {
        let width = type_width(e.kind);
        let at = match e.offset.and_then(|o| usize::try_from(o).ok()) {
            Some(o) => o,
            None => next.next_multiple_of(width.clamp(1, 8)),
        };
        next = at.saturating_add(width);
        if e.name == "NCCL communicator ID" && layout.comm.is_none() && width == 8 {
            layout.comm = Some(at);
        }
        if e.kind == TYPE_SIZE && layout.bytes.is_none() {
            layout.bytes = Some(at);
        }
    }
    layout
}

/// Bytes of an NVTX payload entry type on a 64-bit host
/// (`nvToolsExtPayload.h`); a schema or enum id (≥ 2^24) is taken as an
/// enum (4 bytes), which is what NCCL's reduction operation is.
fn type_width(kind: i64) -> usize {
    match kind {
        1 | 2 | 11 | 12 | 25 | 32 => 1,
        3 | 4 | 13 | 14 | 26 | 42 | 50 => 2,
        5 | 6 | 15 | 16 | 19 | 24 | 27 | 43 | 52 | 68 | 69 | 71 | 72 => 4,
        21 | 33 | 34 | 45 => 16,
        k if k >= STATIC_START as i64 => 4,
        _ => 8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(idx: i64, kind: i64, name: &str, offset: Option<i64>) -> Entry {
        Entry {
            idx,
            kind,
            name: name.into(),
            offset,
        }
    }

    /// The AllReduce-shaped schema as the 2026.2 exports list it: the
    /// communicator's offset NULL, the rest given.
    fn schemas() -> Schemas {
        let s = STATIC_START + 5;
        let rows = vec![
            (1, s, entry(0, 18, "NCCL communicator ID", None)),
            (1, s, entry(1, 22, "Message size [bytes]", Some(8))),
            (1, s, entry(2, 16777232, "Reduction operation", Some(16))),
            // The same rows again, as for a second process.
            (1, s, entry(0, 18, "NCCL communicator ID", None)),
        ];
        Schemas::new(&[(1, s, Some(24))], rows)
    }

    fn payload(comm: u64, bytes: u64) -> Vec<u8> {
        let mut v = comm.to_le_bytes().to_vec();
        v.extend(bytes.to_le_bytes());
        v.extend(0u64.to_le_bytes());
        v
    }

    #[test]
    fn a_bare_payload_is_read_by_the_calls_schema() {
        let f = schemas().decode(1, "ncclAllReduce", &payload(0xabc, 1 << 20));
        assert_eq!(
            f,
            Some(Fields {
                comm: Some(0xabc),
                bytes: Some(1 << 20)
            })
        );
        // Another domain, an unknown call, a short blob: nothing.
        assert_eq!(schemas().decode(2, "ncclAllReduce", &payload(1, 2)), None);
        assert_eq!(schemas().decode(1, "ncclFoo", &payload(1, 2)), None);
        assert_eq!(schemas().decode(1, "ncclAllReduce", &[1, 2, 3]), None);
    }

    #[test]
    fn an_nsys_record_names_its_schema_in_its_header() {
        let body = payload(7, 4096);
        let mut blob = Vec::new();
        blob.extend(1u32.to_le_bytes());
        blob.extend(0u32.to_le_bytes());
        blob.extend(((STATIC_START + 5) as u32).to_le_bytes());
        blob.extend(0u32.to_le_bytes());
        blob.extend((body.len() as u64).to_le_bytes());
        blob.extend(((HEADER + body.len()) as u64).to_le_bytes());
        blob.extend(&body);
        // The header names the schema whatever the call's name says.
        let f = schemas().decode(1, "ncclSomethingElse", &blob).unwrap();
        assert_eq!((f.comm, f.bytes), (Some(7), Some(4096)));
    }

    #[test]
    fn unset_offsets_follow_natural_alignment() {
        let l = layout_of(&[
            entry(0, 5, "Root", None),
            entry(1, 18, "NCCL communicator ID", None),
            entry(2, 22, "Bytes", None),
        ]);
        assert_eq!((l.comm, l.bytes), (Some(8), Some(16)));
    }
}
