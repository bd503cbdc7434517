-- ingest.lua: POST a probe report with a fresh run_id per request, so each
-- request is a real ingestion (not an idempotent replay).
local f = assert(io.open(os.getenv("BODY_FILE"), "rb"))
local body = f:read("*a")
f:close()
local token = os.getenv("TOKEN")
local counter = 0
local thread_id = 0

function setup(thread)
  thread:set("thread_id", math.random(0, 0xffff))
end

function request()
  counter = counter + 1
  local id = string.format("%08x-%04x-4%03x-8%03x-%012x",
    math.random(0, 0x7fffffff), thread_id, counter % 0xfff,
    math.random(0, 0xfff), counter)
  local b = body:gsub('"run_id"%s*:%s*"[^"]*"', '"run_id":"' .. id .. '"', 1)
  return wrk.format("POST", nil, {
    ["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer " .. token,
  }, b)
end
