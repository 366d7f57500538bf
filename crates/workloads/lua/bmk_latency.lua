-- bmk_latency: latency histograms kept per worker in process-shared memory
-- (bmk_shared), for a workload that times its own units of work (TPC-C: each
-- transaction by type) and prints them after the run.
--
-- The buckets are logarithmic: bucket i holds the latencies above bound(i - 1) and up
-- to bound(i) = LOW_MS * RATIO^i (bucket 0 everything up to LOW_MS, the last one also
-- everything above its bound). Each bound is 10 % above the one before, so a percentile
-- read from the buckets (the bound of the bucket it falls in) is at most 10 % high;
-- bucket counts of several workers, or of several processes, add up exactly.
--
-- A histogram set holds `series` histograms per worker (one per transaction type). Each
-- (worker, series) owns a run of SLOTS doubles: the bucket counts, then the sum, the
-- smallest and the largest latency in ms. Every worker writes only its own slots, as
-- bmk_shared's counters do. Like every bmk_shared block, a set must be created at load
-- time (the top level of a script).
--
--   local latency = require("bmk_latency")
--   local hist = latency.set("tpcc_latency", 6)   -- at load time
--   hist:record(sysbench.tid, 2, elapsed_ms)       -- in the worker
--   local s = hist:summary(threads, 2)             -- in done(): summed over workers

local shm = require("bmk_shared")

local M = {}

M.LOW_MS = 0.01
M.RATIO = 1.1
-- Up to 0.01 ms * 1.1^170, about 109 s.
M.BUCKETS = 171

local SUM = M.BUCKETS
local MIN = M.BUCKETS + 1
local MAX = M.BUCKETS + 2
local SLOTS = M.BUCKETS + 3
local LOG_RATIO = math.log(M.RATIO)

-- The upper bound of bucket i, ms.
function M.bound(i)
  return M.LOW_MS * M.RATIO ^ i
end

-- The bucket of a latency of `ms`.
function M.bucket(ms)
  if ms <= M.LOW_MS then
    return 0
  end
  local i = math.ceil(math.log(ms / M.LOW_MS) / LOG_RATIO)
  -- The logarithm may round across a bound.
  if i > 0 and M.bound(i - 1) >= ms then
    i = i - 1
  elseif M.bound(i) < ms then
    i = i + 1
  end
  return math.min(i, M.BUCKETS - 1)
end

local Set = {}
Set.__index = Set

-- The histogram set `name` with `series` histograms per worker, for workers 0 to
-- bmk_shared.MAX_THREADS - 1 (others are not recorded).
function M.set(name, series)
  local blk = shm.block(name, shm.MAX_THREADS * series * SLOTS)
  return setmetatable({ blk = blk, series = series }, Set)
end

local function base(set, tid, s)
  return (tid * set.series + (s - 1)) * SLOTS
end

-- Records a latency of `ms` in worker `tid`'s histogram `s` (1-based).
function Set:record(tid, s, ms)
  if tid >= shm.MAX_THREADS then
    return
  end
  local blk, b = self.blk, base(self, tid, s)
  local i = b + M.bucket(ms)
  blk[i] = blk[i] + 1
  blk[b + SUM] = blk[b + SUM] + ms
  if blk[b + MIN] == 0 or ms < blk[b + MIN] then
    blk[b + MIN] = ms
  end
  if ms > blk[b + MAX] then
    blk[b + MAX] = ms
  end
end

-- Histogram `s` summed over workers 0 to threads - 1: `count`, `sum`, `min`, `max`
-- (ms) and `buckets` (bucket index → count, non-empty buckets only).
function Set:summary(threads, s)
  local out = { count = 0, sum = 0, min = 0, max = 0, buckets = {} }
  for tid = 0, math.min(threads, shm.MAX_THREADS) - 1 do
    local blk, b = self.blk, base(self, tid, s)
    for i = 0, M.BUCKETS - 1 do
      local n = blk[b + i]
      if n > 0 then
        out.buckets[i] = (out.buckets[i] or 0) + n
        out.count = out.count + n
      end
    end
    out.sum = out.sum + blk[b + SUM]
    local lo = blk[b + MIN]
    if lo > 0 and (out.min == 0 or lo < out.min) then
      out.min = lo
    end
    out.max = math.max(out.max, blk[b + MAX])
  end
  return out
end

-- The `p`th percentile (0 < p <= 100) of a summary, ms: the bound of the bucket that
-- holds the sample of that rank, kept within [min, max]. 0 without samples.
function M.percentile(summary, p)
  if summary.count == 0 then
    return 0
  end
  local rank = math.max(1, math.ceil(summary.count * p / 100))
  local seen = 0
  for i = 0, M.BUCKETS - 1 do
    seen = seen + (summary.buckets[i] or 0)
    if seen >= rank then
      return math.min(math.max(M.bound(i), summary.min), summary.max)
    end
  end
  return summary.max
end

return M
