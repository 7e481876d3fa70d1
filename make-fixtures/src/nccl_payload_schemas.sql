-- NCCL's NVTX payload schemas as nsys 2026.2.1 exports them (copied from
-- ../shared/real-profiles/nsys2026_2gpu_nccl_sendrecv.sqlite, deduplicated:
-- the export repeats them per process). The AllReduce (2^24 + 5) and
-- Reduce (2^24 + 8) schemas are not in that capture; their rows below follow
-- ReduceScatter's and Broadcast's, as NCCL's nvtx_payload_schemas.h declares
-- them. Read by the fixture generator and by tests that add payloads.
CREATE TABLE NVTX_PAYLOAD_SCHEMA_ENTRIES (
    -- NVTX payload schema entries.

    domainId                    INTEGER   NOT NULL,                    -- User-controlled ID that can be used to group events.
    schemaId                    INTEGER   NOT NULL,                    -- Identifier of the payload schema.
    idx                         INTEGER   NOT NULL,                    -- Index of the entry in the payload schema.
    flags                       INTEGER,                               -- Payload entry flags.
    type                        INTEGER,                               -- Payload entry type.
    name                        TEXT,                                  -- Label of the payload entry.
    description                 TEXT,                                  -- Description of the payload entry.
    arrayOrUnionDetail          INTEGER,                               -- Array length (index) or selected union member.
    offset                      INTEGER                                -- Entry offset in the binary data in bytes.
);
CREATE TABLE NVTX_PAYLOAD_SCHEMAS (
    -- NVTX payload schema attributes.

    domainId                    INTEGER,                               -- User-controlled ID that can be used to group events.
    schemaId                    INTEGER,                               -- Identifier of the payload schema.
    name                        TEXT,                                  -- Schema name.
    type                        INTEGER,                               -- Schema type.
    flags                       INTEGER,                               -- Schema flags.
    numEntries                  INTEGER,                               -- Number of payload schema entries.
    payloadSize                 INTEGER,                               -- Size of the static payload.
    alignTo                     INTEGER                                -- Field alignment in bytes.
);
INSERT INTO NVTX_PAYLOAD_SCHEMAS VALUES (1, 16777218, NULL, 1, NULL, 4, 24, NULL);
INSERT INTO NVTX_PAYLOAD_SCHEMAS VALUES (1, 16777220, NULL, 1, NULL, 2, 16, NULL);
INSERT INTO NVTX_PAYLOAD_SCHEMAS VALUES (1, 16777222, NULL, 1, NULL, 3, 24, NULL);
INSERT INTO NVTX_PAYLOAD_SCHEMAS VALUES (1, 16777223, NULL, 1, NULL, 3, 24, NULL);
INSERT INTO NVTX_PAYLOAD_SCHEMAS VALUES (1, 16777225, NULL, 1, NULL, 3, 24, NULL);
INSERT INTO NVTX_PAYLOAD_SCHEMAS VALUES (1, 16777226, NULL, 1, NULL, 3, 24, NULL);
INSERT INTO NVTX_PAYLOAD_SCHEMAS VALUES (1, 16777227, NULL, 1, NULL, 4, 24, NULL);
INSERT INTO NVTX_PAYLOAD_SCHEMAS VALUES (1, 16777230, NULL, 1, NULL, 1, 8, NULL);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777218, 0, NULL, 18, 'NCCL communicator ID', NULL, NULL, NULL);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777218, 1, NULL, 5, 'No. of ranks', NULL, NULL, 8);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777218, 2, NULL, 5, 'Rank', NULL, NULL, 12);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777218, 3, NULL, 5, 'CUDA device', NULL, NULL, 16);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777220, 0, NULL, 18, 'NCCL communicator ID', NULL, NULL, NULL);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777220, 1, NULL, 22, 'Message size [bytes]', NULL, NULL, 8);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777222, 0, NULL, 18, 'NCCL communicator ID', NULL, NULL, NULL);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777222, 1, NULL, 22, 'Message size [bytes]', NULL, NULL, 8);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777222, 2, NULL, 5, 'Root', NULL, NULL, 16);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777223, 0, NULL, 18, 'NCCL communicator ID', NULL, NULL, NULL);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777223, 1, NULL, 22, 'Message size [bytes]', NULL, NULL, 8);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777223, 2, NULL, 16777232, 'Reduction operation', NULL, NULL, 16);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777225, 0, NULL, 18, 'NCCL communicator ID', NULL, NULL, NULL);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777225, 1, NULL, 22, 'Message size [bytes]', NULL, NULL, 8);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777225, 2, NULL, 5, 'Peer rank', NULL, NULL, 16);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777226, 0, NULL, 18, 'NCCL communicator ID', NULL, NULL, NULL);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777226, 1, NULL, 22, 'Message size [bytes]', NULL, NULL, 8);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777226, 2, NULL, 5, 'Peer rank', NULL, NULL, 16);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777227, 0, NULL, 18, 'NCCL communicator ID', NULL, NULL, NULL);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777227, 1, NULL, 5, 'No. of ranks', NULL, NULL, 8);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777227, 2, NULL, 5, 'Rank', NULL, NULL, 12);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777227, 3, NULL, 5, 'CUDA device', NULL, NULL, 16);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777230, 0, NULL, 18, 'NCCL communicator ID', NULL, NULL, NULL);
-- Derived: AllReduce (comm, size, reduction op) and Reduce (comm, size, root, op).
INSERT INTO NVTX_PAYLOAD_SCHEMAS VALUES (1, 16777221, NULL, 1, NULL, 3, 24, NULL);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777221, 0, NULL, 18, 'NCCL communicator ID', NULL, NULL, NULL);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777221, 1, NULL, 22, 'Message size [bytes]', NULL, NULL, 8);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777221, 2, NULL, 16777232, 'Reduction operation', NULL, NULL, 16);
INSERT INTO NVTX_PAYLOAD_SCHEMAS VALUES (1, 16777224, NULL, 1, NULL, 4, 24, NULL);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777224, 0, NULL, 18, 'NCCL communicator ID', NULL, NULL, NULL);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777224, 1, NULL, 22, 'Message size [bytes]', NULL, NULL, 8);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777224, 2, NULL, 5, 'Root', NULL, NULL, 16);
INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777224, 3, NULL, 16777232, 'Reduction operation', NULL, NULL, 20);
