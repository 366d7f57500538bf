-- Workers that share their event loop's Lua state keep what sysbench gives each thread:
-- globals, sysbench.opt values, required modules and hooks of their own. Their top
-- level declares a named FFI struct and gives it a metatable, which a state allows
-- once; each worker sleeps through ffi.C.usleep, which lets the others run.
local ffi = require("ffi")
ffi.cdef [[
struct shared_state_probe { int n; };
int usleep(unsigned int usec);
]]
local probe_t = ffi.metatype("struct shared_state_probe", {
  __index = { twice = function(self) return self.n * 2 end },
})
local tally = require("shared_state_module")
local events = 0

function thread_init()
  mine = sysbench.tid
  sysbench.opt.marker = sysbench.tid * 10
  sysbench.hooks.sql_error_ignorable = function() return sysbench.tid end
end

function event()
  assert(mine == sysbench.tid, "a global of another worker")
  assert(sysbench.opt.marker == sysbench.tid * 10, "sysbench.opt of another worker")
  assert(sysbench.hooks.sql_error_ignorable() == sysbench.tid, "a hook of another worker")
  tally.add(sysbench.tid)
  events = events + 1
  ffi.C.usleep(100)
end

function thread_done()
  assert(tally.total() == sysbench.tid * events, "a module's locals of another worker")
  assert(probe_t(sysbench.tid):twice() == 2 * sysbench.tid, "the struct's metatable")
  print(string.format("worker %d kept its own", sysbench.tid))
end
