-- A custom thread_run replacing the event loop: exactly 7 events per thread, counted
-- through the FFI entry points, plus one read counter per event.
local ffi = require("ffi")

function event()
  error("event() must not be called when thread_run is defined")
end

function thread_run(tid)
  for _ = 1, 7 do
    if not ffi.C.sb_more_events(tid) then break end
    ffi.C.sb_event_start(tid)
    ffi.C.sb_counter_inc(tid, ffi.C.SB_CNT_READ)
    ffi.C.sb_event_stop(tid)
  end
end
