-- 0011_catalog_public_sources.sql - catalog texts cite public documents.
--
-- The seeded GPU rows (0002) said where each figure was checked in the
-- maintainers' own files: "(gpu_specs.csv, trust A)", "SIZING.md section
-- 5", "not in gpu_specs.csv". A user of GET /v1/gpus has none of these
-- (issue 16). Each such fragment is rewritten in place: the public
-- document the row already names stays the citation, the trust grade says
-- in words what it means (docs/CATALOG.md: A = the vendor's document,
-- B = a transcription, a derived per-GPU value or a third-party table),
-- and the pointers into SIZING.md become what they pointed at. Only these
-- fragments change, so a source or note an operator rewrote with PUT
-- /v1/gpus keeps its own words; updated_at is left alone (the facts did
-- not change).

CREATE FUNCTION pg_temp.public_cites(t text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
SELECT
  replace(replace(replace(replace(replace(replace(replace(replace(replace(
  replace(replace(replace(replace(t,
    -- how a figure was read: the document it cites stays
    ', read via verbatim public transcriptions (gpu_specs.csv, trust A)',
    ' (trust A: the vendor''s own document)'),
    ', via verbatim public transcriptions (gpu_specs.csv, trust A)',
    ' (trust A: the vendor''s own document)'),
    '(gpu_specs.csv, trust A)',
    '(trust A: the vendor''s own document)'),
    '(gpu_specs.csv, trust B)',
    '(trust B: a transcription, a derived per-GPU value or a third-party table)'),
    ', via public transcriptions (trust',
    ' (trust'),
    ', via a public transcription (trust',
    ' (trust'),
    ', via a sourced public report (trust',
    ' (trust'),
    ', via public quotes (trust',
    ' (trust'),
    -- notes: figures the maintainers' table lacked
    ' (not in gpu_specs.csv, trust B-)',
    ' (trust B-: a transcription of the vendor''s document)'),
    ', which is not in gpu_specs.csv (trust B-)',
    ' (trust B-: a transcription of the whitepaper)'),
    ', not in gpu_specs.csv (trust B-)',
    ' (trust B-: a transcription of the whitepaper)'),
    -- notes: pointers into SIZING.md, replaced by what they said
    ' (SIZING.md section 5: t_max ~ 11.2 for h = 8192)',
    ' (the largest tensor-parallel degree that link sustains is ~11.2 for hidden size 8192: checks.tensor_parallel of a training answer)'),
    ', the figure SIZING.md section 7 uses as the source''s input',
    '')
$$;

UPDATE gpus
   SET source = pg_temp.public_cites(source),
       notes = pg_temp.public_cites(notes)
 WHERE source <> pg_temp.public_cites(source)
    OR notes <> pg_temp.public_cites(notes);

UPDATE models
   SET source = pg_temp.public_cites(source),
       notes = pg_temp.public_cites(notes)
 WHERE source <> pg_temp.public_cites(source)
    OR notes <> pg_temp.public_cites(notes);

DROP FUNCTION pg_temp.public_cites(text);
