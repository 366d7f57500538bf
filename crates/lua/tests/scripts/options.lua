-- Declares one option of every type; `check` asserts the values sysbench.opt holds.
sysbench.cmdline.options = {
  flag = {"A boolean flag", false},
  count = {"An inferred number", 10},
  ratio = {"An explicit double", 0.5, sysbench.cmdline.ARG_DOUBLE},
  rows = {"An explicit integer", 100, sysbench.cmdline.ARG_INT},
  block = {"A size", "16K", sysbench.cmdline.ARG_SIZE},
  name = {"A string", "sbtest"},
  hosts = {"A list", {"a", "b"}},
  path = {"A file", "data.txt", sysbench.cmdline.ARG_FILE},
  even = {"An even number", 2, sysbench.cmdline.ARG_INT,
          function(v) return v % 2 == 0 end},
}

local function check_types()
  local o = sysbench.opt
  assert(type(o.flag) == "boolean", "flag is " .. type(o.flag))
  assert(type(o.count) == "number")
  assert(type(o.ratio) == "number")
  assert(type(o.rows) == "number")
  assert(type(o.block) == "number")
  assert(type(o.name) == "string")
  assert(type(o.hosts) == "table")
  assert(type(o.path) == "string")
end

sysbench.cmdline.commands = {
  check = {function()
    check_types()
    local o = sysbench.opt
    print(string.format("flag=%s count=%s ratio=%s rows=%s block=%s name=%s hosts=%s path=%s even=%s",
      tostring(o.flag), o.count, o.ratio, o.rows, o.block, o.name,
      table.concat(o.hosts, "|"), o.path, o.even))
    print("threads=" .. tostring(sysbench.opt.threads) .. " " .. type(sysbench.opt.threads))
    print("command=" .. sysbench.cmdline.command)
    print("version=" .. sysbench.version)
    print("script=" .. sysbench.cmdline.script_path)
    print("argc=" .. #sysbench.cmdline.argv)
    print("defined=" .. tostring(sysbench.cmdline.command_defined("check"))
      .. " parallel=" .. tostring(sysbench.cmdline.command_parallel("check")))
  end},
  print_options = {function() sysbench.cmdline.print_test_options() end},
}
