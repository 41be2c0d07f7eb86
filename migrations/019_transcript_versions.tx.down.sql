-- SRTs rebuilt from an edited transcript become ordinary edits.
UPDATE subtitle_versions SET source = 'edit' WHERE source = 'transcript';

--bun:split

ALTER TABLE subtitle_versions DROP CONSTRAINT subtitle_versions_source_check,
    ADD CONSTRAINT subtitle_versions_source_check CHECK (source IN ('generated', 'edit'));

--bun:split

DROP TABLE transcript_versions;

--bun:split

ALTER TABLE jobs DROP COLUMN transcript_version;
