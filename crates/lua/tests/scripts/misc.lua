-- Odds and ends of the sysbench table.
sysbench.cmdline.options = {
  level = {"A number", 3},
}

sysbench.cmdline.commands = {
  jit = {function()
    print("jit " .. tostring((jit.status())))
  end, sysbench.cmdline.PARALLEL_COMMAND},
  reread = {function()
    sysbench.opt.level = nil
    assert(sysbench.cmdline.read_cmdline_options())
    print("level " .. sysbench.opt.level)
  end},
  nested = {function()
    -- call_command runs another command in this state
    sysbench.cmdline.call_command("reread")
    print("defined " .. tostring(sysbench.cmdline.command_defined("nope")))
  end},
  globals = {function()
    assert(type(bit.bor) == "function", "bit")
    assert(type(unpack) == "function", "unpack")
    assert(type(setfenv) == "function", "setfenv")
    assert(type(require("ffi").C.sb_counter_inc) == "cdata", "ffi.C")
    assert(sysbench.error.RESTART_EVENT ~= sysbench.error.NONE)
    assert(sysbench.sql.type.VARCHAR == 12 and sysbench.sql.error.FATAL == 2)
    assert(sysbench.version_string:match("1%.1%.0"), sysbench.version_string)
    assert(sysbench.tid == 0)
    print("globals ok")
  end},
}
