-- A script's own event loop over ffi.C.sb_more_events, whose events only compute: on
-- an event loop each worker still gets its turns (time slices), as threads would.
local ffi = require("ffi")
ffi.cdef [[
bool sb_more_events(int thread_id);
void sb_event_start(int thread_id);
void sb_event_stop(int thread_id);
]]
local ran, sum = 0, 0

function thread_run(tid)
  while ffi.C.sb_more_events(tid) do
    ffi.C.sb_event_start(tid)
    for i = 1, 2000 do
      sum = sum + i % 7
    end
    ffi.C.sb_event_stop(tid)
    ran = ran + 1
  end
end

function event() end

function thread_done()
  print(string.format("worker %d ran events: %s", sysbench.tid, tostring(ran > 0)))
end
