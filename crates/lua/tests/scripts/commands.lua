-- A parallel command, a plain command and a classic global prepare().
local ffi = require("ffi")
ffi.cdef[[int usleep(unsigned int usec);]]

sysbench.cmdline.commands = {
  fanout = {function()
    -- Stay alive long enough that all threads overlap.
    ffi.C.usleep(100000)
    print("fanout tid=" .. sysbench.tid)
  end, sysbench.cmdline.PARALLEL_COMMAND},
  single = {function()
    print("single tid=" .. sysbench.tid .. " parallel=" ..
      tostring(sysbench.cmdline.command_parallel("single")))
  end},
}

function prepare()
  print("prepare called")
end

function help()
  print("custom help text")
end

-- Other global functions are not commands.
function helper() end
function run() end
