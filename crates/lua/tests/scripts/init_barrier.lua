-- Every worker checks in (a file named after it in the current directory) in
-- thread_init and polls, sleeping through ffi.C.usleep, until all have: a start
-- barrier like --sync-file's. Workers that share an event loop pass it only if the
-- sleep lets the others of the loop run.
local ffi = require("ffi")
pcall(ffi.cdef, "int usleep(unsigned int usec);")

local function exists(path)
  local f = io.open(path, "r")
  if f then
    f:close()
  end
  return f ~= nil
end

function thread_init(tid)
  local f = assert(io.open("checked-in." .. tid, "w"))
  f:close()
  for other = 0, sysbench.opt.threads - 1 do
    while not exists("checked-in." .. other) do
      ffi.C.usleep(5000)
    end
  end
  print("worker " .. tid .. " passed")
end

function event()
  return true
end
