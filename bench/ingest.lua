-- ingest.lua: POST a probe report with a fresh run_id per request, so each
-- request is a real ingestion (not an idempotent replay). Reports come
-- from a pool of NODES (default 1000) distinct nodes, each with its own
-- hostname and GPU uuids, as a fleet's nodes would report: hammering one
-- node would measure row-lock waits on that node's inventory instead.
local f = assert(io.open(os.getenv("BODY_FILE"), "rb"))
local body = f:read("*a")
f:close()
local token = os.getenv("TOKEN")
local nodes = tonumber(os.getenv("NODES") or "1000")
local counter = 0
thread_id = 0 -- global: setup() sets it per thread

-- run_id = <8 hex from /dev/urandom per thread>-<thread no>-4000-8000-
-- <counter>: unique within a thread, across threads and across runs
-- (LuaJIT's math.random gives every thread the same sequence).
local threads = 0

function setup(thread)
  threads = threads + 1
  thread:set("thread_id", threads)
end

function init(args)
  local r = assert(io.open("/dev/urandom", "rb"))
  local b = r:read(4)
  r:close()
  salt = string.format("%02x%02x%02x%02x", b:byte(1, 4))
end

function request()
  counter = counter + 1
  local id = string.format("%s-%04x-4000-8000-%012x", salt, thread_id,
    counter)
  local node = (thread_id * 7919 + counter) % nodes
  local b = body:gsub('"run_id"%s*:%s*"[^"]*"', '"run_id":"' .. id .. '"', 1)
  b = b:gsub('"hostname"%s*:%s*"([^"]*)"', '"hostname":"%1-' .. node .. '"', 1)
  b = b:gsub('GPU%-(%x%x%x%x%x%x%x%x)', string.format("GPU-%08x", node))
  return wrk.format("POST", nil, {
    ["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer " .. token,
  }, b)
end
