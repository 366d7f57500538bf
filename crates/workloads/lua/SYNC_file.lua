-- SYNC_file: bmk's start barrier for workload scripts (`--sync-file`, `--sync-wait`).
--
-- Protocol (BMK-kit compatible file names; F = the --sync-file path, absolute):
--   * `clean_stale()` (main state, before workers start): removes F, F.0 and F.<tid>
--     left by a crashed run, so no worker can see a stale gate.
--   * worker tid >= 1: creates F.<tid> ("checked in"), waits for F.0, then waits until
--     F is gone.
--   * worker 0: prints "=> SYNC-file : synchronization via F", waits for every
--     F.<tid> (1 .. threads-1, polling every 5 ms) and deletes it, creates F then F.0,
--     prints "=> SYNC-file : ready to start..", waits until F is gone and prints
--     "=> SYNC-file : started <date> !!!".
--   * F.0 is removed by `finish()` (worker 0's thread_done) and by the main state's
--     done(), not at release time: a slow worker may still be about to look for F.0
--     when F disappears (the race of the reference protocol), and no worker can still
--     be waiting once the measured run has ended.
-- Only an outside controller deletes F. Waiting at the gate counts as thread
-- initialisation: give --thread-init-timeout a large value.

local ffi = require("ffi")
pcall(ffi.cdef, "int usleep(unsigned int usec);")

local M = {}

local function exists(path)
  local f = io.open(path, "r")
  if f then
    f:close()
    return true
  end
  return false
end

local function touch(path)
  local f, err = io.open(path, "w")
  if not f then
    error(string.format("SYNC-file: cannot create '%s': %s", path, tostring(err)), 0)
  end
  f:close()
end

local function sleep_ms(ms)
  ffi.C.usleep(math.floor(ms * 1000))
end

M.exists = exists
M.touch = touch
M.sleep_ms = sleep_ms

-- Removes the files a crashed run may have left. Call once, before workers start.
function M.clean_stale(file, threads)
  if file == nil or file == "" then
    return
  end
  os.remove(file)
  os.remove(file .. ".0")
  for t = 1, (threads or 1) - 1 do
    os.remove(file .. "." .. t)
  end
end

-- Holds the calling worker until the gate file is removed.
function M.wait(file, wait_ms, tid, threads)
  if file == nil or file == "" then
    return
  end
  wait_ms = tonumber(wait_ms) or 10
  if wait_ms < 1 then
    wait_ms = 1
  end
  local gate0 = file .. ".0"
  if tid ~= 0 then
    touch(file .. "." .. tid)
    while not exists(gate0) do
      sleep_ms(wait_ms)
    end
    while exists(file) do
      sleep_ms(wait_ms)
    end
    return
  end
  print("=> SYNC-file : synchronization via " .. file)
  for t = 1, threads - 1 do
    local mine = file .. "." .. t
    while not exists(mine) do
      sleep_ms(5)
    end
    os.remove(mine)
  end
  touch(file)
  touch(gate0)
  print("=> SYNC-file : ready to start..")
  while exists(file) do
    sleep_ms(wait_ms)
  end
  print("=> SYNC-file : started " .. os.date("%Y-%m-%d %H:%M:%S") .. " !!!")
end

-- Removes the check-in marker F.0 once the run is over.
function M.finish(file)
  if file == nil or file == "" then
    return
  end
  os.remove(file .. ".0")
end

return M
