-- Every event fails twice with a restartable error (sleeping 20 ms on the first
-- attempt) and then succeeds: restarts are not new events, and latency covers them.
local ffi = require("ffi")
ffi.cdef[[int usleep(unsigned int usec);]]

local attempts, restarts, events = 0, 0, 0

sysbench.hooks.before_restart_event = function(err)
  assert(err.errcode == sysbench.error.RESTART_EVENT)
  restarts = restarts + 1
end

function event()
  attempts = attempts + 1
  if attempts % 3 == 1 then
    ffi.C.usleep(20000)
    error({errcode = sysbench.error.RESTART_EVENT, sql_errmsg = "deadlock"})
  elseif attempts % 3 == 2 then
    error({errcode = sysbench.error.RESTART_EVENT})
  end
  events = events + 1
end

function thread_done(tid)
  print(string.format("thread %d events=%d restarts=%d attempts=%d", tid, events, restarts, attempts))
end
