-- The tables `nsys export --dynamic-tables=all` adds (schema 3.28.1, nsys 2026.4, as
-- AnalysisGuide/topics/sqlite-schema-reference.rst declares them), besides one
-- DYNAMIC_NVTXPAYLOAD_DATATYPE_<globalPid>_<domainId>_<schemaId> table per payload schema.
CREATE TABLE NVTX_EVENTS_PAYLOAD_SCHEMAS (
    -- Links an NVTX event to a dynamic payload schema. Emitted only when dynamic NVTX payload export is enabled.

    eventId                     INTEGER   NOT NULL,                    -- REFERENCES NVTX_EVENTS(eventId)
    globalPid                   INTEGER   NOT NULL,                    -- Serialized GlobalId.
    domainId                    INTEGER   NOT NULL,                    -- User-controlled ID that can be used to group events.
    payloadSchemaID             INTEGER   NOT NULL                     -- REFERENCES NVTX_PAYLOAD_SCHEMAS(schemaId)
);
CREATE TABLE NVTX_EXPORT_TRANSLATION (
    -- Sanitized names used by the dynamic payload export. Emitted only when dynamic NVTX payload export is enabled.

    originalName                TEXT      NOT NULL,                    -- Original user-provided NVTX schema or field name.
    sanitizedName               TEXT      NOT NULL                     -- Sanitized identifier used by the dynamic payload export.
);
CREATE TABLE NVTX_PAYLOAD_SCHEMA_RELATIONS (
    -- Nested-schema and array field relations. Emitted only when dynamic NVTX payload export is enabled.

    globalPid                   INTEGER   NOT NULL,                    -- Serialized GlobalId.
    domainId                    INTEGER   NOT NULL,                    -- User-controlled ID that can be used to group events.
    parentSchemaId              INTEGER   NOT NULL,                    -- Schema containing the nested-schema or array field.
    fieldName                   TEXT      NOT NULL,                    -- Sanitized name of the field within the parent schema.
    nestedSchemaId              INTEGER                                -- Nested field schema id, or NULL for an array field.
);
