-- 0030_gddr_ecc_memory.sql - the memory a data-center Ada part shows with ECC
-- on, its shipping default (hostile review, 2026-11-26). GDDR6 keeps ECC in
-- the same chips, so 1/16 of them holds check bits: nvidia-smi reports the
-- L4 at 23,034 MiB (22.49 GiB) and the L40S at 46,068 MiB (44.99 GiB), not
-- the datasheet's 24 and 48 GiB. HBM parts keep the datasheet capacity
-- (their ECC is out of band; docs/CATALOG.md). A plan the engine marked as
-- fitting in 23.9 of "24" GiB ran out of memory on a real L4.
-- Only rows still at the seeded capacity are changed: an admin's edit stays.
UPDATE gpus
   SET memory_gib = 22.5,
       notes = notes || ' Memory 22.5 GiB: ECC (on by default) takes 1/16 of the GDDR6; nvidia-smi shows 23034 MiB of the datasheet 24 GB.'
 WHERE name = 'l4-24gb' AND memory_gib = 24;

UPDATE gpus
   SET memory_gib = 45,
       notes = notes || ' Memory 45 GiB: ECC (on by default) takes 1/16 of the GDDR6; nvidia-smi shows 46068 MiB of the datasheet 48 GB.'
 WHERE name = 'l40s-48gb' AND memory_gib = 48;
