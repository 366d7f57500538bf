-- bmk_shared: process-wide memory shared by the Lua states of one bmk process (the
-- main state and every worker state), for the built-in TPC-C and dbSTRESS workloads.
--
-- Each Lua state is private, so per-worker results (TPC-C transaction counts, the
-- tpmC time span) and the loader phase barrier of `prepare` live in plain C memory.
-- The block is allocated by the FIRST state that loads the calling script — the main
-- state, before any worker exists — and published through an environment variable
-- named after the block and the process id; the worker states find it there. Scripts
-- must therefore call block() at the top level (load time), never first inside a
-- parallel command or thread_init, where two workers could race to create it. Every
-- worker writes only its own slots, so no atomics are needed; readers see the values
-- a little late at worst.
--
--   local shm = require("bmk_shared")
--   local blk = shm.block("tpcc_run", shm.MAX_THREADS * 16)   -- doubles
--   blk[tid * 16 + 3] = blk[tid * 16 + 3] + 1

local ffi = require("ffi")
pcall(ffi.cdef, [[
int usleep(unsigned int usec);
int getpid(void);
void *calloc(size_t nmemb, size_t size);
int setenv(const char *name, const char *value, int overwrite);
struct bmk_shared_timespec { long tv_sec; long tv_nsec; };
int clock_gettime(int clk_id, struct bmk_shared_timespec *tp);
]])
local C = ffi.C

local M = {}

-- Workers beyond this many get no shared slots (their counters are not aggregated).
M.MAX_THREADS = 8192

local blocks = {}

-- An array of `n` doubles shared by every state of this process (zeroed at creation).
function M.block(name, n)
  if blocks[name] then
    return blocks[name]
  end
  local key = "BMK_SHARED_" .. name .. "_" .. C.getpid()
  local v = os.getenv(key)
  local p
  if v and v ~= "" then
    p = ffi.cast("double *", ffi.cast("uintptr_t", tonumber(v)))
  else
    p = ffi.cast("double *", C.calloc(n, 8))
    if p == nil then
      error("bmk_shared: out of memory", 0)
    end
    local addr = tonumber(ffi.cast("uintptr_t", p))
    C.setenv(key, string.format("%.0f", addr), 1)
  end
  blocks[name] = p
  return p
end

-- Monotonic clock, seconds.
local ts = ffi.new("struct bmk_shared_timespec")
function M.now()
  C.clock_gettime(1, ts)
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end

function M.sleep_ms(ms)
  C.usleep(math.floor(ms * 1000))
end

-- The seconds from the earliest start to the latest end that `threads` workers wrote
-- in `blk` (worker w's slots from w * slots; 0 is "not yet"): the span a workload's
-- own rates are over. 0 when no worker has both.
function M.span(blk, threads, slots, start_slot, end_slot)
  local t0, t1 = nil, nil
  for w = 0, threads - 1 do
    local s0, s1 = blk[w * slots + start_slot], blk[w * slots + end_slot]
    if s0 > 0 and (t0 == nil or s0 < t0) then
      t0 = s0
    end
    if s1 > 0 and (t1 == nil or s1 > t1) then
      t1 = s1
    end
  end
  return (t0 and t1 and t1 > t0) and (t1 - t0) or 0
end

-- A phase barrier over `threads` workers in block `blk` (one slot per worker, plus an
-- abort slot at index MAX_THREADS). wait(phase) returns once every worker reached
-- `phase`; if a worker called abort(), every waiter raises an error instead of
-- hanging.
function M.barrier(name, threads)
  local blk = M.block(name, M.MAX_THREADS + 1)
  local b = {}
  function b.wait(tid, phase)
    blk[tid] = phase
    for t = 0, threads - 1 do
      while blk[t] < phase do
        if blk[M.MAX_THREADS] ~= 0 then
          error("another worker failed; giving up", 0)
        end
        M.sleep_ms(2)
      end
    end
  end
  function b.abort()
    blk[M.MAX_THREADS] = 1
  end
  return b
end

return M
