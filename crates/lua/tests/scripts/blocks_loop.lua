-- Worker 0 blocks outside bmk's API in its first event: --how=execute waits for a
-- 2-second `sleep` through os.execute, --how=busy computes for 1.5 s of CPU time.
local ffi = require("ffi")

sysbench.cmdline.options = {
  how = {"execute or busy", "execute"},
}

local blocked = false

function event(tid)
  if tid == 0 and not blocked then
    blocked = true
    if sysbench.opt.how == "execute" then
      os.execute("sleep 2")
    else
      local start = os.clock()
      while os.clock() - start < 1.5 do
      end
    end
  end
  ffi.C.sb_counter_inc(tid, ffi.C.SB_CNT_READ)
end
