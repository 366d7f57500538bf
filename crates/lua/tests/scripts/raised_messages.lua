-- Raises in the function --where names: with --level=0 a message without position (for
-- the user), with --level=1 a positioned error (for the script's author).
sysbench.cmdline.options = {
  where = {"thread_init or event", "event"},
  level = {"level passed to error()", 0},
}

local function fail()
  error("the table is missing; run prepare first", sysbench.opt.level)
end

function thread_init()
  if sysbench.opt.where == "thread_init" then
    fail()
  end
end

function event()
  fail()
end
