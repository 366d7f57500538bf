-- Endless recursion on line 8, in the function --where names: the error handler then
-- has almost no stack left to work with.
sysbench.cmdline.options = {
  where = {"thread_init or event", "event"},
}

local function deeper(n)
  return 1 + deeper(n + 1)
end

function thread_init()
  if sysbench.opt.where == "thread_init" then
    deeper(1)
  end
end

function event()
  deeper(1)
end
