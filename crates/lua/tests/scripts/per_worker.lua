-- Prints from every part of a worker's life: its id, what sysbench.opt says, draws from
-- its random generator, and a global of its own state. With --rand-seed the lines are
-- the same whether the workers have a thread each or share event loops.
local ffi = require("ffi")

local events = 0

local function draws()
  return sysbench.rand.uniform(1, 1000000) .. " " .. sysbench.rand.default(1, 1000000)
end

function thread_init(tid)
  print(string.format("init %d of %d: %s", tid, sysbench.opt.threads, draws()))
end

-- Exactly 5 events per worker, so that which worker runs which event never varies.
function thread_run(tid)
  for i = 1, 5 do
    if not ffi.C.sb_more_events(tid) then
      break
    end
    ffi.C.sb_event_start(tid)
    events = events + 1
    print(string.format("event %d.%d: %s", tid, i, draws()))
    ffi.C.sb_counter_inc(tid, ffi.C.SB_CNT_OTHER)
    ffi.C.sb_event_stop(tid)
  end
end

function event()
  error("event() must not be called when thread_run is defined")
end

function thread_done(tid)
  print(string.format("done %d after %d events: %s", tid, events, draws()))
end
