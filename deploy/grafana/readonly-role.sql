-- readonly-role.sql - the PostgreSQL role Grafana reads gpusizer with.
-- Run once as the database owner (psql -v pw="'...'" -f readonly-role.sql):
-- it can SELECT what the dashboard shows, nothing else (not api_tokens).
CREATE ROLE gpusizer_grafana LOGIN PASSWORD :pw;
GRANT CONNECT ON DATABASE gpusizer TO gpusizer_grafana;
GRANT USAGE ON SCHEMA public TO gpusizer_grafana;
GRANT SELECT ON gpus, nodes, node_gpus, benchmark_runs, benchmark_results,
    rollup_gpu_values, recommendations TO gpusizer_grafana;
-- Dashboard queries are cheap, but never let one hold the database.
ALTER ROLE gpusizer_grafana SET statement_timeout = '10s';
ALTER ROLE gpusizer_grafana SET default_transaction_read_only = on;
