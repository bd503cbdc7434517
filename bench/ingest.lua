-- ingest.lua: POST a probe report with a fresh run_id per request, so each
-- request is a real ingestion (not an idempotent replay). Reports come
-- from a pool of NODES (default 1000) distinct nodes, each with its own
-- hostname and GPU uuids, as a fleet's nodes would report: hammering one
-- node would measure row-lock waits on that node's inventory instead.
--
-- The body is cut once, in init(), at the places a request changes (the
-- run_id, the hostname, the first 8 hex digits of every GPU uuid); each
-- request then only joins the pieces. Rewriting the ~240 KB body with
-- gsub per request cost wrk ~1 ms of CPU a request, taken from the two
-- cores the daemon and PostgreSQL share with it.
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

-- pieces: literal text and slot markers ("run_id", "host", "gpu") in order
local pieces, slots = {}, {}
local hostname

local function cut()
  local pos = 1
  local marks = {}
  local s, e = body:find('"run_id"%s*:%s*"[^"]*"')
  marks[#marks + 1] = {s, e, "run_id"}
  local hs, he, h = body:find('"hostname"%s*:%s*"([^"]*)"')
  hostname = h
  marks[#marks + 1] = {hs, he, "host"}
  local from = 1
  while true do
    local gs, ge = body:find("GPU%-%x%x%x%x%x%x%x%x", from)
    if not gs then break end
    marks[#marks + 1] = {gs, ge, "gpu"}
    from = ge + 1
  end
  table.sort(marks, function(a, b) return a[1] < b[1] end)
  for _, m in ipairs(marks) do
    pieces[#pieces + 1] = body:sub(pos, m[1] - 1)
    pieces[#pieces + 1] = ""
    slots[#slots + 1] = {#pieces, m[3]}
    pos = m[2] + 1
  end
  pieces[#pieces + 1] = body:sub(pos)
end

function init(args)
  local r = assert(io.open("/dev/urandom", "rb"))
  local b = r:read(4)
  r:close()
  salt = string.format("%02x%02x%02x%02x", b:byte(1, 4))
  cut()
end

function request()
  counter = counter + 1
  local id = string.format("%s-%04x-4000-8000-%012x", salt, thread_id,
    counter)
  local node = (thread_id * 7919 + counter) % nodes
  local v = {
    run_id = '"run_id":"' .. id .. '"',
    host = '"hostname":"' .. hostname .. "-" .. node .. '"',
    gpu = string.format("GPU-%08x", node),
  }
  for _, s in ipairs(slots) do
    pieces[s[1]] = v[s[2]]
  end
  return wrk.format("POST", nil, {
    ["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer " .. token,
  }, table.concat(pieces))
end
