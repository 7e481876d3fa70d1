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
/// No NCCL message is this large (256 TiB): a size above it is damage.
pub const MAX_MESSAGE_BYTES: u64 = 1 << 48;

/// Where a schema keeps the two fields rankline reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Layout {
    /// The static payload size the schema declares (0: not declared).
    pub size: u64,
    pub comm: Option<usize>,
    pub bytes: Option<usize>,
    /// ncclSend / ncclRecv's "Peer rank" (a 4-byte int).
    pub peer: Option<usize>,
    /// A communicator init's "Rank" and "No. of ranks" (4-byte ints).
    pub rank: Option<usize>,
    pub nranks: Option<usize>,
    /// Its entries overlap or lie outside its payload size: nothing it
    /// places can be trusted.
    pub unusable: bool,
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
    /// The entry names that hold each field rankline reads: what a
    /// dynamic payload table's columns are named after.
    named: HashMap<(i64, u64), Vec<(Field, String)>>,
}

/// A field rankline reads from NCCL's payloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Comm,
    Bytes,
    Peer,
    Rank,
    NRanks,
}

/// What one NCCL call's payload says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fields {
    pub comm: Option<u64>,
    pub bytes: Option<u64>,
    /// The peer's rank in the communicator (ncclSend, ncclRecv).
    pub peer: Option<u32>,
    /// The caller's rank and the communicator's size (its init).
    pub rank: Option<u32>,
    pub nranks: Option<u32>,
}

/// The payloads a dynamic-tables export holds (`load/payload_tables.rs`):
/// each linked event's fields, or why its payload gives none.
#[derive(Debug, Default)]
pub struct PayloadTables {
    by_event: HashMap<i64, Result<Fields, Undecodable>>,
}

impl PayloadTables {
    pub fn new(by_event: HashMap<i64, Result<Fields, Undecodable>>) -> PayloadTables {
        PayloadTables { by_event }
    }

    pub fn is_empty(&self) -> bool {
        self.by_event.is_empty()
    }

    /// What the payload of event `event` gives (None: it has none here).
    pub fn of(&self, event: i64) -> Option<Result<Fields, Undecodable>> {
        self.by_event.get(&event).copied()
    }
}

/// No communicator has more ranks: a rank or size beyond is damage.
pub const MAX_RANKS: u32 = 1 << 20;

impl Fields {
    /// These fields, unless one is impossible or none was found: what a
    /// payload gives, whichever way the export holds it.
    pub fn checked(self) -> Result<Fields, Undecodable> {
        let within = |r: Option<u32>| r.is_none_or(|r| r < MAX_RANKS);
        if !(within(self.peer) && within(self.rank) && within(self.nranks))
            || self.nranks == Some(0)
            || self.rank.zip(self.nranks).is_some_and(|(r, n)| r >= n)
        {
            return Err(Undecodable::ImpossibleRank);
        }
        if self.bytes.is_some_and(|b| b > MAX_MESSAGE_BYTES) {
            return Err(Undecodable::ImpossibleSize);
        }
        if self == Fields::default() {
            return Err(Undecodable::NoFields);
        }
        Ok(self)
    }
}

/// Why a payload gives nothing: it is never re-read another way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Undecodable {
    /// No schema the export declares is the call's.
    NoSchema,
    /// Its schema's entries overlap or lie outside the payload size.
    UnusableSchema,
    /// nsys's record header declares another length than the blob has.
    Truncated,
    /// A message size above [`MAX_MESSAGE_BYTES`].
    ImpossibleSize,
    /// Too short to hold any field its schema places.
    NoFields,
    /// A rank or communicator size no communicator can have.
    ImpossibleRank,
    /// Not bytes rankline can read: empty, over 256 bytes, or text that is
    /// not hex.
    Unreadable,
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
        // A negative size is no declared size; it cannot bound anything.
        let sizes: HashMap<(i64, u64), u64> = schemas
            .iter()
            .filter_map(|&(d, s, n)| Some(((d, s), u64::try_from(n?).ok()?)))
            .collect();
        let mut layouts = HashMap::with_capacity(by_schema.len());
        let mut named = HashMap::with_capacity(by_schema.len());
        for (key, mut list) in by_schema {
            list.sort_by_key(|e| e.idx);
            let size = sizes.get(&key).copied().unwrap_or(0);
            layouts.insert(key, layout_of(&list, size));
            let names = fields_of(&list)
                .into_iter()
                .map(|(f, i)| (f, list[i].name.clone()))
                .collect();
            named.insert(key, names);
        }
        Schemas { layouts, named }
    }

    /// The names of the entries that hold each field of schema `schema`
    /// of `domain` (None: a schema the export does not declare).
    pub fn field_names(&self, domain: i64, schema: u64) -> Option<&[(Field, String)]> {
        self.named.get(&(domain, schema)).map(Vec::as_slice)
    }

    /// How many schemas the export declares.
    pub fn count(&self) -> usize {
        self.layouts.len()
    }

    /// The fields of the payload `blob` of the call `name` in `domain`,
    /// or why it gives none.
    pub fn decode(&self, domain: i64, name: &str, blob: &[u8]) -> Result<Fields, Undecodable> {
        if blob.is_empty() {
            return Err(Undecodable::Unreadable);
        }
        let (schema, payload) = match self.header(domain, blob)? {
            Some(h) => h,
            None => (nccl_schema(name).ok_or(Undecodable::NoSchema)?, blob),
        };
        let layout = self
            .layouts
            .get(&(domain, schema))
            .ok_or(Undecodable::NoSchema)?;
        if layout.unusable {
            return Err(Undecodable::UnusableSchema);
        }
        let read = |at: Option<usize>| {
            let at = at?;
            let b: [u8; 8] = payload.get(at..at.checked_add(8)?)?.try_into().ok()?;
            Some(u64::from_le_bytes(b))
        };
        let int = |at: Option<usize>| {
            let at = at?;
            let b: [u8; 4] = payload.get(at..at.checked_add(4)?)?.try_into().ok()?;
            u32::try_from(i32::from_le_bytes(b)).ok()
        };
        Fields {
            comm: read(layout.comm),
            bytes: read(layout.bytes),
            peer: int(layout.peer),
            rank: int(layout.rank),
            nranks: int(layout.nranks),
        }
        .checked()
    }

    /// nsys's record header, when `blob` starts with one: (schema id,
    /// payload). A blob that starts like a record (this domain, a schema
    /// it declares) but whose length is not the one its header declares
    /// is cut or padded: `Err`, never read as a bare payload, where the
    /// header's words would pass for a communicator and a size.
    fn header<'a>(
        &self,
        domain: i64,
        blob: &'a [u8],
    ) -> Result<Option<(u64, &'a [u8])>, Undecodable> {
        let half = |at: usize| -> Option<u64> {
            Some(u32::from_le_bytes(blob.get(at..at + 4)?.try_into().ok()?) as u64)
        };
        let word = |at: usize| -> Option<u64> {
            Some(u64::from_le_bytes(blob.get(at..at + 8)?.try_into().ok()?))
        };
        // Its first words: this domain, zero, a schema id, zero (cut
        // inside the header, the last may be missing).
        let (Some(d), Some(0), Some(schema)) = (half(0), half(4), half(8)) else {
            return Ok(None);
        };
        if half(12).is_some_and(|w| w != 0) {
            return Ok(None);
        }
        if i64::try_from(d).ok() != Some(domain) || !self.layouts.contains_key(&(domain, schema)) {
            return Ok(None);
        }
        let whole = word(16)
            .and_then(|size| usize::try_from(size).ok())
            .and_then(|size| HEADER.checked_add(size))
            .filter(|&whole| word(24) == Some(whole as u64) && blob.len() == whole);
        match whole {
            Some(_) => Ok(Some((schema, &blob[HEADER..]))),
            None => Err(Undecodable::Truncated),
        }
    }
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

/// Which of `entries` holds each field, by NCCL's names and the widths
/// they have: the communicator (the 8-byte entry NCCL names so), the
/// message size (the first `size_t` entry: older NCCL names it "Bytes"),
/// the peer, the rank and the rank count (4-byte entries); the first such
/// entry wins.
fn fields_of(entries: &[Entry]) -> Vec<(Field, usize)> {
    let mut found: Vec<(Field, usize)> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let width = type_width(e.kind).unwrap_or(1);
        let int4 = width == 4;
        let holds = [
            (Field::Comm, e.name == "NCCL communicator ID" && width == 8),
            (Field::Bytes, e.kind == TYPE_SIZE),
            (
                Field::Peer,
                int4 && matches!(e.name.as_str(), "Peer rank" | "Peer"),
            ),
            (Field::Rank, int4 && e.name == "Rank"),
            (Field::NRanks, int4 && e.name == "No. of ranks"),
        ];
        for (f, yes) in holds {
            if yes && !found.iter().any(|x| x.0 == f) {
                found.push((f, i));
            }
        }
    }
    found
}

/// Where each field lies in a payload of `size` bytes (0: not declared).
/// Entries that overlap, or reach past a declared size, make the schema
/// unusable: a field read there would be another field's bytes.
fn layout_of(entries: &[Entry], size: u64) -> Layout {
    let mut layout = Layout {
        size,
        ..Layout::default()
    };
    let mut next = 0usize;
    // (offset, width) of each entry; an unknown type counts one byte,
    // so that only what is surely wrong makes a schema unusable.
    let mut placed: Vec<(usize, usize)> = Vec::with_capacity(entries.len());
    // Each entry's offset (None: one that cannot be placed).
    let mut at_of: Vec<Option<usize>> = Vec::with_capacity(entries.len());
    for e in entries {
        let width = type_width(e.kind);
        let at = match e.offset {
            None => next.next_multiple_of(width.unwrap_or(1).clamp(1, 8)),
            Some(o) => match usize::try_from(o) {
                Ok(o) => o,
                Err(_) => {
                    layout.unusable = true;
                    at_of.push(None);
                    continue;
                }
            },
        };
        let width = width.unwrap_or(1);
        next = at.saturating_add(width);
        placed.push((at, width));
        at_of.push(Some(at));
    }
    for (f, i) in fields_of(entries) {
        let at = at_of[i];
        match f {
            Field::Comm => layout.comm = at,
            Field::Bytes => layout.bytes = at,
            Field::Peer => layout.peer = at,
            Field::Rank => layout.rank = at,
            Field::NRanks => layout.nranks = at,
        }
    }
    placed.sort_unstable();
    let overlap = placed
        .windows(2)
        .any(|w| w[1].0 < w[0].0.saturating_add(w[0].1));
    let outside = size > 0
        && placed
            .iter()
            .any(|&(at, width)| at.saturating_add(width) as u64 > size);
    layout.unusable |= overlap || outside;
    layout
}

/// Bytes of an NVTX payload entry type on a 64-bit host
/// (`nvToolsExtPayload.h`); a schema or enum id (≥ 2^24) is taken as an
/// enum (4 bytes), which is what NCCL's reduction operation is. `None`:
/// a type this list does not know.
fn type_width(kind: i64) -> Option<usize> {
    Some(match kind {
        1 | 2 | 11 | 12 | 25 | 32 => 1,
        3 | 4 | 13 | 14 | 26 | 42 | 50 => 2,
        5 | 6 | 15 | 16 | 19 | 24 | 27 | 43 | 52 | 68 | 69 | 71 | 72 => 4,
        7 | 8 | 9 | 10 | 17 | 18 | 20 | 22 | 23 | 44 => 8,
        21 | 33 | 34 | 45 => 16,
        k if k >= STATIC_START as i64 => 4,
        _ => return None,
    })
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

    /// nsys's record of `body` under schema `schema`: domain 1.
    fn record(schema: u64, body: &[u8]) -> Vec<u8> {
        let mut blob = Vec::new();
        blob.extend(1u32.to_le_bytes());
        blob.extend(0u32.to_le_bytes());
        blob.extend((schema as u32).to_le_bytes());
        blob.extend(0u32.to_le_bytes());
        blob.extend((body.len() as u64).to_le_bytes());
        blob.extend(((HEADER + body.len()) as u64).to_le_bytes());
        blob.extend(body);
        blob
    }

    #[test]
    fn a_bare_payload_is_read_by_the_calls_schema() {
        let f = schemas().decode(1, "ncclAllReduce", &payload(0xabc, 1 << 20));
        assert_eq!(
            f,
            Ok(Fields {
                comm: Some(0xabc),
                bytes: Some(1 << 20),
                ..Fields::default()
            })
        );
        // Another domain, an unknown call, a short blob: nothing, and why.
        let no = |d, name, blob: &[u8]| schemas().decode(d, name, blob).unwrap_err();
        assert_eq!(
            no(2, "ncclAllReduce", &payload(1, 2)),
            Undecodable::NoSchema
        );
        assert_eq!(no(1, "ncclFoo", &payload(1, 2)), Undecodable::NoSchema);
        assert_eq!(no(1, "ncclAllReduce", &[1, 2, 3]), Undecodable::NoFields);
    }

    #[test]
    fn an_nsys_record_names_its_schema_in_its_header() {
        let blob = record(STATIC_START + 5, &payload(7, 4096));
        // The header names the schema whatever the call's name says.
        let f = schemas().decode(1, "ncclSomethingElse", &blob).unwrap();
        assert_eq!((f.comm, f.bytes), (Some(7), Some(4096)));
    }

    #[test]
    fn a_record_cut_short_is_never_read_as_a_bare_payload() {
        let blob = record(STATIC_START + 5, &payload(7, 4096));
        for cut in [12, 20, 31, 32, 40, blob.len() - 1] {
            assert_eq!(
                schemas().decode(1, "ncclAllReduce", &blob[..cut]),
                Err(Undecodable::Truncated),
                "cut at {cut}"
            );
        }
        let mut padded = blob.clone();
        padded.push(0);
        assert_eq!(
            schemas().decode(1, "ncclAllReduce", &padded),
            Err(Undecodable::Truncated)
        );
    }

    #[test]
    fn sizes_no_message_can_have_are_refused() {
        let s = schemas();
        let at = |b: u64| s.decode(1, "ncclAllReduce", &payload(1, b));
        assert_eq!(
            at(MAX_MESSAGE_BYTES).unwrap().bytes,
            Some(MAX_MESSAGE_BYTES)
        );
        assert_eq!(at(MAX_MESSAGE_BYTES + 1), Err(Undecodable::ImpossibleSize));
        assert_eq!(at(u64::MAX), Err(Undecodable::ImpossibleSize));
    }

    #[test]
    fn a_schema_whose_entries_overlap_or_overflow_is_unusable() {
        let s = STATIC_START + 5;
        let with = |size_at: i64, payload_size: i64| {
            let rows = vec![
                (1, s, entry(0, 18, "NCCL communicator ID", None)),
                (1, s, entry(1, 22, "Message size [bytes]", Some(size_at))),
            ];
            Schemas::new(&[(1, s, Some(payload_size))], rows).decode(
                1,
                "ncclAllReduce",
                &payload(1, 2),
            )
        };
        assert!(with(8, 16).is_ok());
        // The size inside the communicator id: its bytes would be read as a size.
        assert_eq!(with(0, 16), Err(Undecodable::UnusableSchema));
        assert_eq!(with(4, 16), Err(Undecodable::UnusableSchema));
        // Past the payload size the schema declares.
        assert_eq!(with(12, 16), Err(Undecodable::UnusableSchema));
        assert_eq!(with(-8, 16), Err(Undecodable::UnusableSchema));
        // An entry of a type not known here counts one byte: not a reason.
        let rows = vec![
            (1, s, entry(0, 18, "NCCL communicator ID", None)),
            (1, s, entry(1, 22, "Message size [bytes]", Some(8))),
            (1, s, entry(2, 99, "Something new", Some(16))),
            (1, s, entry(3, 5, "Root", Some(17))),
        ];
        let ok = Schemas::new(&[(1, s, Some(24))], rows);
        assert!(ok.decode(1, "ncclAllReduce", &payload(1, 2)).is_ok());
    }

    #[test]
    fn peers_ranks_and_sizes_are_read_and_impossible_ones_refused() {
        let send = STATIC_START + 9;
        let init = STATIC_START + 11;
        let rows = vec![
            (1, send, entry(0, 18, "NCCL communicator ID", None)),
            (1, send, entry(1, 22, "Message size [bytes]", Some(8))),
            (1, send, entry(2, 5, "Peer rank", Some(16))),
            (1, init, entry(0, 18, "NCCL communicator ID", None)),
            (1, init, entry(1, 5, "No. of ranks", Some(8))),
            (1, init, entry(2, 5, "Rank", Some(12))),
        ];
        let s = Schemas::new(&[(1, send, Some(24)), (1, init, Some(24))], rows);
        let mut blob = 9u64.to_le_bytes().to_vec();
        blob.extend(64u64.to_le_bytes());
        blob.extend(3i32.to_le_bytes());
        blob.extend([0u8; 4]);
        let f = s.decode(1, "ncclSend", &blob).unwrap();
        assert_eq!((f.comm, f.bytes, f.peer), (Some(9), Some(64), Some(3)));
        let mut blob = 9u64.to_le_bytes().to_vec();
        blob.extend(4i32.to_le_bytes());
        blob.extend(2i32.to_le_bytes());
        blob.extend([0u8; 8]);
        let f = s.decode(1, "x", &record(init, &blob)).unwrap();
        assert_eq!((f.rank, f.nranks), (Some(2), Some(4)));
        // A rank at or past the size: damage.
        let mut bad = 9u64.to_le_bytes().to_vec();
        bad.extend(4i32.to_le_bytes());
        bad.extend(4i32.to_le_bytes());
        bad.extend([0u8; 8]);
        assert_eq!(
            s.decode(1, "x", &record(init, &bad)),
            Err(Undecodable::ImpossibleRank)
        );
    }

    #[test]
    fn unset_offsets_follow_natural_alignment() {
        let l = layout_of(
            &[
                entry(0, 5, "Root", None),
                entry(1, 18, "NCCL communicator ID", None),
                entry(2, 22, "Bytes", None),
            ],
            24,
        );
        assert_eq!((l.comm, l.bytes, l.unusable), (Some(8), Some(16), false));
    }
}
