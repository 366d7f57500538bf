-- event() returns true on its 10th call in each worker, which stops that worker.
local n = 0
function event(tid)
  n = n + 1
  ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_ERROR)
  ffi.C.sb_counter_inc(tid, ffi.C.SB_CNT_WRITE)
  return n >= 10
end
ffi = require("ffi")
