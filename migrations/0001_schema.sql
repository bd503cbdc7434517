-- 0001_schema.sql - the tables behind every endpoint of DESIGN.md.
-- Applied once, in one transaction, by gpusizerd's migration runner
-- (storage/migrate.c), which records this file's SHA-256 in schema_migrations.

SET lock_timeout = '5s';

-- GPU catalog: datasheet facts per GPU type (dense tensor peaks, no sparsity).
-- Seeded by 0002_gpu_catalog.sql; editable with PUT /v1/gpus/{name}.
CREATE TABLE gpus (
    name                  text PRIMARY KEY
                          CHECK (name ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
    display_name          text NOT NULL,
    vendor                text NOT NULL,
    architecture          text NOT NULL,
    compute_capability    text,              -- '9.0'; NULL for non-NVIDIA
    memory_gib            double precision NOT NULL CHECK (memory_gib > 0),
    memory_type           text,
    memory_bandwidth_gbps double precision NOT NULL
                          CHECK (memory_bandwidth_gbps > 0),  -- GB/s, 1e9
    fp64_tflops           double precision CHECK (fp64_tflops > 0),
    fp32_tflops           double precision CHECK (fp32_tflops > 0),
    tf32_tflops           double precision CHECK (tf32_tflops > 0),
    fp16_tflops           double precision CHECK (fp16_tflops > 0),
    bf16_tflops           double precision CHECK (bf16_tflops > 0),
    fp8_tflops            double precision CHECK (fp8_tflops > 0),
    int8_tops             double precision CHECK (int8_tops > 0),
    intra_node_link       text NOT NULL
                          CHECK (intra_node_link IN
                                 ('nvlink', 'pcie', 'infinity_fabric')),
    intra_node_gbps       double precision NOT NULL
                          CHECK (intra_node_gbps > 0),  -- one direction
    max_gpus_per_node     integer NOT NULL DEFAULT 8
                          CHECK (max_gpus_per_node BETWEEN 1 AND 1024),
    inter_node_gbps       double precision NOT NULL DEFAULT 50
                          CHECK (inter_node_gbps > 0),  -- per node, one dir
    pcie_gen              integer CHECK (pcie_gen BETWEEN 1 AND 7),
    pcie_width            integer CHECK (pcie_width IN (1, 2, 4, 8, 16)),
    power_w               integer CHECK (power_w > 0),
    price_per_gpu_hour    double precision CHECK (price_per_gpu_hour >= 0),
    source                text NOT NULL,
    notes                 text NOT NULL DEFAULT '',
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now()
);

-- Model presets. arch holds the same object a sizing request may send
-- inline (see openapi.yaml ModelArchitecture), so one parser serves both.
CREATE TABLE models (
    name         text PRIMARY KEY
                 CHECK (name ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
    display_name text NOT NULL,
    family       text NOT NULL,
    arch         jsonb NOT NULL CHECK (jsonb_typeof(arch) = 'object'),
    source       text NOT NULL,
    notes        text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now()
);

-- API tokens: only the SHA-256 of the token is stored.
CREATE TABLE api_tokens (
    id          bigserial PRIMARY KEY,
    name        text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 64),
    token_sha256 bytea NOT NULL UNIQUE CHECK (length(token_sha256) = 32),
    scopes      text[] NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);

-- Sizing answers. json (not jsonb) keeps the text byte for byte, so
-- GET /v1/recommendations/{id} returns exactly what the POST answered.
CREATE TABLE recommendations (
    id         uuid PRIMARY KEY,
    kind       text NOT NULL CHECK (kind IN ('training', 'inference', 'compare')),
    model      text NOT NULL,
    gpu        text NOT NULL,
    request    json NOT NULL,
    response   json NOT NULL,
    summary    json NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX recommendations_created ON recommendations (created_at DESC, id DESC);
CREATE INDEX recommendations_kind ON recommendations (kind, created_at DESC);
CREATE INDEX recommendations_model ON recommendations (model, created_at DESC);
CREATE INDEX recommendations_gpu ON recommendations (gpu, created_at DESC);

-- Probe inventory and measurements (POST /v1/benchmarks).
CREATE TABLE nodes (
    hostname      text PRIMARY KEY,
    cpu_model     text,
    driver_version text,
    cuda_version  text,
    inventory     jsonb NOT NULL DEFAULT '{}'::jsonb,
    first_seen    timestamptz NOT NULL DEFAULT now(),
    last_seen     timestamptz NOT NULL DEFAULT now(),
    last_run_id   uuid
);

CREATE TABLE benchmark_runs (
    run_id      uuid PRIMARY KEY,
    hostname    text NOT NULL REFERENCES nodes (hostname),
    status      text NOT NULL,
    mode        text,
    started_at  timestamptz,
    finished_at timestamptz,
    received_at timestamptz NOT NULL DEFAULT now(),
    report      jsonb NOT NULL,
    report_sha256 text NOT NULL
);
CREATE INDEX benchmark_runs_host ON benchmark_runs (hostname, received_at DESC);
CREATE INDEX benchmark_runs_received ON benchmark_runs (received_at DESC, run_id);

CREATE TABLE node_gpus (
    uuid        text PRIMARY KEY,
    hostname    text NOT NULL REFERENCES nodes (hostname),
    gpu_index   integer NOT NULL,
    name        text NOT NULL,
    gpu_type    text,          -- catalog name when recognised
    pci_bus_id  text,
    info        jsonb NOT NULL DEFAULT '{}'::jsonb,
    last_seen   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX node_gpus_host ON node_gpus (hostname);

CREATE TABLE benchmark_results (
    id          bigserial PRIMARY KEY,
    run_id      uuid NOT NULL REFERENCES benchmark_runs (run_id) ON DELETE CASCADE,
    hostname    text NOT NULL,
    gpu_uuid    text,          -- NULL for node-wide results (e.g. NCCL)
    gpu_type    text,
    metric      text NOT NULL,
    dtype       text,
    method      text,          -- e.g. cublaslt, sm, ce, nccl
    peer_index  integer,       -- P2P results: the other GPU
    size_bytes  bigint,        -- transfer or message size of sweeps
    unit        text NOT NULL,
    status      text NOT NULL DEFAULT 'ok',
    median      double precision,
    max         double precision,
    mean        double precision,
    p10         double precision,
    p90         double precision,
    cv          double precision,
    n           integer,
    limit_value double precision,
    efficiency  double precision,
    detail      jsonb NOT NULL DEFAULT '{}'::jsonb,
    measured_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX benchmark_results_type_metric
    ON benchmark_results (gpu_type, metric, dtype, measured_at DESC);
CREATE INDEX benchmark_results_run ON benchmark_results (run_id);
