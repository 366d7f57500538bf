-- Under --rate, one event stalls for 500 ms (FFI usleep): the arrivals behind it queue
-- up and their latency, measured from their scheduled arrival, shows the stall.
local ffi = require("ffi")
ffi.cdef[[int usleep(unsigned int usec);]]

local n = 0
function event()
  n = n + 1
  if n == 100 then
    ffi.C.usleep(500000)
  end
end
