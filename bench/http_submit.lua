-- wrk script: POST /v1/operations with the load driver's uniform workload (a transfer of
-- 1..100 BENCH between two random distinct users of ledger_load's data set), each
-- request under its own Idempotency-Key, so every request is a first commit.
--
--   wrk -t2 -c32 -d5s -s bench/http_submit.lua http://127.0.0.1:8080 -- ACCOUNTS RUN_ID
--
-- ACCOUNTS: how many bench-user-NNNNNN accounts exist (ledger_load --accounts); RUN_ID
-- keeps keys of separate runs apart. Answers other than a first
-- commit (non-201, or a replay) are counted and printed at the end.

local accounts = 1000
local run_id = "run"
local counter = 0
local threads = {}
-- thread_id and failures are globals: setup() sets thread_id in each thread's own Lua
-- state, and done() reads failures from there.

function setup(thread)
  thread:set("thread_id", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  accounts = tonumber(args[1] or "1000")
  run_id = args[2] or "run"
  math.randomseed(os.time() * 1000 + thread_id * 7919)
  failures = 0
end

function request()
  counter = counter + 1
  local from = math.random(0, accounts - 1)
  local to = math.random(0, accounts - 2)
  if to >= from then to = to + 1 end
  local body = string.format(
    '{"kind":"transfer","asset":"BENCH","from":"bench-user-%06d","to":"bench-user-%06d","amount":"%d"}',
    from, to, math.random(1, 100))
  return wrk.format("POST", "/v1/operations", {
    ["Content-Type"] = "application/json",
    ["Idempotency-Key"] = string.format('"%s-%d-%d"', run_id, thread_id, counter),
  }, body)
end

function response(status, headers, body)
  if status ~= 201 or headers["Idempotent-Replayed"] then failures = failures + 1 end
end

function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do total = total + thread:get("failures") end
  io.write(string.format("non_201 %d\n", total))
end
