-- wrk script: POST /v1/operations/batch with ITEMS transfers of the load driver's uniform
-- workload (as bench/http_submit.lua), each item under its own key, so every item is a
-- first commit. Prints how many answers were not a 200 with every item 201
-- (non_all_201) and how many items were committed (committed_items).
--
--   wrk -t2 -c32 -d8s -s bench/http_batch_submit.lua http://127.0.0.1:8080 -- ACCOUNTS RUN_ID ITEMS
--
-- ACCOUNTS: how many bench-user-NNNNNN accounts exist (ledger_load --accounts); RUN_ID
-- keeps keys of separate runs apart; ITEMS: items per batch (default 10).

local accounts = 1000
local run_id = "run"
local items_per_batch = 10
local counter = 0
local threads = {}
function setup(thread)
  thread:set("thread_id", #threads + 1)
  table.insert(threads, thread)
end
function init(args)
  accounts = tonumber(args[1] or "1000")
  run_id = args[2] or "run"
  items_per_batch = tonumber(args[3] or "10")
  math.randomseed(os.time() * 1000 + thread_id * 7919)
  failures = 0
  committed = 0
end
function request()
  local items = {}
  for i = 1, items_per_batch do
    counter = counter + 1
    local from = math.random(0, accounts - 1)
    local to = math.random(0, accounts - 2)
    if to >= from then to = to + 1 end
    items[i] = string.format(
      '{"idempotency_key":"%s-%d-%d","operation":{"kind":"transfer","asset":"BENCH","from":"bench-user-%06d","to":"bench-user-%06d","amount":"%d"}}',
      run_id, thread_id, counter, from, to, math.random(1, 100))
  end
  return wrk.format("POST", "/v1/operations/batch", {["Content-Type"] = "application/json"},
                    '{"items":[' .. table.concat(items, ",") .. ']}')
end
function response(status, headers, body)
  if status ~= 200 then failures = failures + 1 return end
  local _, n = string.gsub(body, '"status":201', "")
  committed = committed + n
  if n ~= items_per_batch then failures = failures + 1 end
end
function done(summary, latency, requests)
  local total, items = 0, 0
  for _, thread in ipairs(threads) do
    total = total + thread:get("failures")
    items = items + thread:get("committed")
  end
  io.write(string.format("non_all_201 %d\ncommitted_items %d\n", total, items))
end
